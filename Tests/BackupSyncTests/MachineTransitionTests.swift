import BackupKit
import GoogleDrive
import Testing

@testable import BackupSync

/// The machines' transitions as tables, in the style of `RevisionCheckTests`: what a refusal
/// from Drive answers (the decisions `SyncDriver` used to make), and `RevisionFetch` from
/// start to finish. Rows written from Drive's documented answers, not from the code.

private let file = DriveFile(id: "F1", name: "habit-backup.json")
private let unpinned = DriveRevision(id: "r2")
private let pinned = DriveRevision(id: "r2", keepForever: true)

private func refused(_ status: Int, _ reason: String? = nil) -> DriveError {
    .rejected(
        operation: .download(fileID: "F1"),
        GoogleAPIError(status: status, message: "refused", reason: reason))
}

/// A refusal of one action → the event it answers with (nil: the run fails with it). A row is a
/// constant of this file, never mutated: unchecked, as the machine's actions carry a document.
struct RefusalRow: CustomTestStringConvertible, @unchecked Sendable {
    var name: String
    var action: BackupRun<Lines>.Action
    var error: DriveError
    var answer: String?
    var testDescription: String { name }
}

private let refusals: [RefusalRow] = [
    .init(
        name: "a download of a file gone: 404", action: .download(file), error: refused(404),
        answer: "gone"),
    .init(
        name: "a download of a file gone: 410", action: .download(file), error: refused(410),
        answer: "gone"),
    .init(
        name: "a download refused otherwise fails", action: .download(file), error: refused(403),
        answer: nil),
    .init(
        name: "an etag of a file gone", action: .readTag(file), error: refused(404), answer: "gone"),
    .init(
        name: "a 403 on a revision not pinned asks for a pin",
        action: .downloadRevision(fileID: "F1", unpinned), error: refused(403), answer: "restricted"
    ),
    .init(
        name: "a 403 on a pinned revision is no request for a pin",
        action: .downloadRevision(fileID: "F1", pinned), error: refused(403), answer: nil),
    .init(
        name: "a pinned revision Drive will not serve is gone",
        action: .downloadRevision(fileID: "F1", pinned),
        error: refused(403, "download_restricted_for_revision"), answer: "gone"),
    .init(
        name: "a login without the Drive scope is no request for a pin",
        action: .downloadRevision(fileID: "F1", unpinned),
        error: refused(403, "insufficientScopes"),
        answer: nil),
    .init(
        name: "a purged revision is gone", action: .downloadRevision(fileID: "F1", unpinned),
        error: refused(404), answer: "gone"),
    .init(
        name: "a pin refused with 400 is the cap", action: .pin(fileID: "F1", revision: "r2"),
        error: refused(400), answer: "pinRefused"),
    .init(
        name: "a pin refused with 403 is the cap", action: .pin(fileID: "F1", revision: "r2"),
        error: refused(403), answer: "pinRefused"),
    .init(
        name: "a pin without the Drive scope fails", action: .pin(fileID: "F1", revision: "r2"),
        error: refused(403, "insufficientPermissions"), answer: nil),
    .init(
        name: "a pin Drive is unavailable for fails", action: .pin(fileID: "F1", revision: "r2"),
        error: .unavailable(operation: .pinRevision("r2", fileID: "F1"), attempts: 8, last: "503"),
        answer: nil),
    .init(
        name: "a mark that fails is a mark someone else's write came before",
        action: .markChecked(file, revision: "r2", ifMatch: "e1"), error: refused(500),
        answer: "changedSinceRead"),
    .init(
        name: "a release that fails costs only its pin",
        action: .release(fileID: "F1", revisions: ["r1"]), error: refused(500), answer: "done"),
    .init(name: "a listing refused fails", action: .list, error: refused(404), answer: nil),
    .init(
        name: "an upload whose file is gone fails",
        action: .update(file, bytes: [], ifMatch: "e1"), error: refused(404), answer: nil),
    .init(
        name: "a delete refused fails", action: .delete(fileID: "F1"), error: refused(403),
        answer: nil),
]

@Test(arguments: refusals)
func whatARefusalAnswers(_ row: RefusalRow) {
    let event = BackupRun<Lines>.answer(row.error, to: row.action)
    #expect(event.map(name(of:)) == row.answer)
}

private func name(of event: BackupRun<Lines>.Event) -> String {
    switch event {
    case .gone: "gone"
    case .restricted: "restricted"
    case .pinRefused: "pinRefused"
    case .changedSinceRead: "changedSinceRead"
    case .done: "done"
    default: "\(event)"
    }
}

@Test func fetchRunReadsTheListingAgainWhenADownloadFindsTheFileGone() {
    var machine = FetchRun(name: "habit-backup.json", codec: lineCodec)
    _ = machine.start()
    let download = machine.handle(.listed([file], now: Timestamp(millisecondsSince1970: 0)))
    guard case .download = download else {
        Issue.record("expected a download, got \(download)")
        return
    }
    guard case .list = machine.failed(refused(404), doing: download) else {
        Issue.record("a 404 on the download should read the listing again")
        return
    }
    guard case .fail(.drive) = machine.failed(refused(404), doing: .list) else {
        Issue.record("a 404 on the listing should fail the run")
        return
    }
}

/// `FetchRun`: the events of one run → the action after each, spelled short.
struct FetchRunRow: CustomTestStringConvertible, @unchecked Sendable {
    var name: String
    var events: [FetchRun<Lines>.Event]
    var actions: [String]
    var testDescription: String { name }
}

private let second = DriveFile(id: "F2", name: "habit-backup.json")

private func snapshot(_ of: DriveFile, _ text: String) -> DriveSnapshot {
    DriveSnapshot(file: of, etag: "e-\(of.id)", bytes: Array(text.utf8))
}

private let fetchRuns: [FetchRunRow] = [
    .init(
        name: "every file of the listing in turn, merged",
        events: [
            .listed([file, second], now: .init(millisecondsSince1970: 0)),
            .downloaded(snapshot(file, "a")), .downloaded(snapshot(second, "b")),
        ],
        actions: ["download F1", "download F2", "finish F1,F2 a,b"]),
    .init(
        name: "a file gone meanwhile reads the listing again",
        events: [
            .listed([file, second], now: .init(millisecondsSince1970: 0)),
            .downloaded(snapshot(file, "a")), .gone,
            .listed([file], now: .init(millisecondsSince1970: 0)),
            .downloaded(snapshot(file, "a\nb")),
        ],
        actions: ["download F1", "download F2", "list", "download F1", "finish F1 a,b"]),
    // The files to read are the reading phase's, from the listing: nothing is read before it.
    .init(
        name: "a download's answer before the listing fails loudly",
        events: [.downloaded(snapshot(file, "a"))], actions: ["fail protocolViolation"]),
    .init(
        name: "a file gone before the listing fails loudly", events: [.gone],
        actions: ["fail protocolViolation"]),
    .init(
        name: "a listing while reading fails loudly",
        events: [
            .listed([file], now: .init(millisecondsSince1970: 0)),
            .listed([file], now: .init(millisecondsSince1970: 0)),
        ],
        actions: ["download F1", "fail protocolViolation"]),
]

@Test(arguments: fetchRuns)
func aFetchRun(_ row: FetchRunRow) {
    var machine = FetchRun(name: "habit-backup.json", codec: lineCodec)
    guard case .list = machine.start() else {
        Issue.record("a fetch starts with the listing")
        return
    }
    #expect(row.events.map { spelled(machine.handle($0)) } == row.actions)
}

private func spelled(_ action: FetchRun<Lines>.Action) -> String {
    switch action {
    case .list: "list"
    case .download(let file): "download \(file.id)"
    case .finish(nil): "finish nil"
    case .finish(let fetched?):
        "finish \(fetched.files.map(\.id).joined(separator: ",")) \(fetched.document.items.sorted().joined(separator: ","))"
    case .fail(.protocolViolation): "fail protocolViolation"
    case .fail(let error): "fail \(error)"
    }
}

/// `RevisionFetch`: the events of one run → the action after each, spelled short.
struct FetchRow: CustomTestStringConvertible, @unchecked Sendable {
    var name: String
    var choice: RevisionChoice
    var events: [RevisionFetch<Lines>.Event]
    var actions: [String]
    var testDescription: String { name }
}

private let history = [DriveRevision(id: "r1"), DriveRevision(id: "r2"), DriveRevision(id: "r3")]

private let fetches: [FetchRow] = [
    .init(
        name: "no file of the name", choice: .id("r2"), events: [.listed([])],
        actions: ["finish nil"]),
    .init(
        name: "the chosen revision of the oldest file", choice: .id("r2"),
        events: [
            .listed([file, DriveFile(id: "F2", name: "habit-backup.json")]), .revisions(history),
            .revisionBytes(Array("a\nb".utf8)),
        ],
        actions: ["listRevisions F1", "download F1 r2", "finish F1 r2 a,b"]),
    .init(
        name: "an id the history does not hold", choice: .id("r9"),
        events: [.listed([file]), .revisions(history)],
        actions: ["listRevisions F1", "fail noSuchRevision"]),
    .init(
        name: "bytes that are not a backup", choice: .id("r1"),
        events: [.listed([file]), .revisions(history), .revisionBytes(Array("!".utf8))],
        actions: ["listRevisions F1", "download F1 r1", "fail invalidRemote"]),
    .init(
        name: "an answer out of turn", choice: .id("r1"), events: [.revisions(history)],
        actions: ["fail protocolViolation"]),
]

@Test(arguments: fetches)
func aRevisionFetch(_ row: FetchRow) {
    var machine = RevisionFetch(row.choice, name: "habit-backup.json", codec: lineCodec)
    guard case .list = machine.start() else {
        Issue.record("a fetch starts with the listing")
        return
    }
    #expect(row.events.map { spelled(machine.handle($0)) } == row.actions)
}

@Test func aRevisionFetchEndsWithDrivesFailure() {
    var machine = RevisionFetch(.id("r1"), name: "habit-backup.json", codec: lineCodec)
    _ = machine.start()
    #expect(spelled(machine.failed(refused(404))) == "fail drive")
}

private func spelled(_ action: RevisionFetch<Lines>.Action) -> String {
    switch action {
    case .list: "list"
    case .listRevisions(let file): "listRevisions \(file.id)"
    case .download(let file, let revision): "download \(file.id) \(revision.id)"
    case .finish(nil): "finish nil"
    case .finish(let found?):
        "finish \(found.file.id) \(found.revision.id) \(found.document.items.sorted().joined(separator: ","))"
    case .fail(let error):
        switch error {
        case .noSuchRevision: "fail noSuchRevision"
        case .invalidRemote: "fail invalidRemote"
        case .protocolViolation: "fail protocolViolation"
        case .drive: "fail drive"
        default: "fail \(error)"
        }
    }
}

/// `BackupRun` up to its first step after the listing: whether its local document is read,
/// and whether a check that names Drive's file unchanged ends the run there (the quiet night).
struct ListedRow: CustomTestStringConvertible, @unchecked Sendable {
    var name: String
    /// The local document given at start (nil: read on request, with `unchanged` as check).
    var local: Lines?
    /// What the check names: the listing's first file while `now` is at most this, else none.
    var unchangedUntil: Int64 = 0
    var pending: PendingVerification?
    var events: [BackupRun<Lines>.Event]
    var actions: [String]
    var testDescription: String { name }
}

private func listedAt(_ millis: Int64) -> BackupRun<Lines>.Event {
    .listed([file], now: Timestamp(millisecondsSince1970: millis))
}

private let listedRows: [ListedRow] = [
    .init(
        name: "a check that names the file finishes quiet, with no other request",
        unchangedUntil: 1_000, events: [listedAt(1_000)], actions: ["finish quiet F1"]),
    .init(
        name: "a check that names none asks for the local document, then downloads",
        unchangedUntil: 1_000, events: [listedAt(1_001), .localRead(lines("a"))],
        actions: ["readLocal", "download F1"]),
    .init(
        name: "a check that names the file still reads when a previous run's check is owed",
        unchangedUntil: 1_000,
        pending: PendingVerification(fileId: "F1", baseRevisionId: "r1", uploadedMd5: "m"),
        events: [listedAt(0), .localRead(lines("a"))],
        actions: ["readLocal", "listRevisions F1"]),
    .init(
        name: "a run given its local document never asks for it", local: lines("a"),
        unchangedUntil: 1_000, events: [listedAt(0)], actions: ["download F1"]),
    // The first listing's phase carries the quiet check and the previous run's check: the
    // local document, asked for only after it, is out of turn before it.
    .init(
        name: "the local document before the first listing fails loudly",
        unchangedUntil: 1_000, events: [.localRead(lines("a"))],
        actions: ["fail protocolViolation"]),
    // Each answer to an upload step, out of turn: that step's phase carries what it sends (the
    // bytes, the record, the target and its etag), so no phase can hold an upload without
    // them; the answer arriving in another phase is a protocol violation.
    .init(
        name: "a create's answer before any upload fails loudly", local: lines("a"),
        events: [listedAt(0), .created(file)], actions: ["download F1", "fail protocolViolation"]),
    .init(
        name: "a record's answer before any upload fails loudly", local: lines("a"),
        events: [listedAt(0), .done], actions: ["download F1", "fail protocolViolation"]),
    .init(
        name: "an etag before any upload fails loudly", local: lines("a"),
        events: [listedAt(0), .tagged(file, etag: "e1")],
        actions: ["download F1", "fail protocolViolation"]),
    .init(
        name: "an upload's answer before any upload fails loudly", local: lines("a"),
        events: [listedAt(0), .updated(file)], actions: ["download F1", "fail protocolViolation"]),
    .init(
        name: "a revision listing before any upload fails loudly", local: lines("a"),
        events: [listedAt(0), .revisions([])], actions: ["download F1", "fail protocolViolation"]),
    .init(
        name: "the upload steps in turn: record, update, check", local: lines("a"),
        events: [
            listedAt(0), .downloaded(DriveSnapshot(file: file, etag: "e1", bytes: Array("b".utf8))),
            .done, .changedSinceRead,
        ],
        actions: ["download F1", "record F1", "update F1 e1", "listRevisions F1"]),
    .init(
        name: "a first backup creates the file, then finishes", local: lines("a"),
        events: [.listed([], now: Timestamp(millisecondsSince1970: 0)), .created(file)],
        actions: ["create", "finish"]),
    // A merge needs the run's clock, which only the listing gives.
    .init(
        name: "a download before the listing fails loudly", local: lines("a"),
        events: [.downloaded(DriveSnapshot(file: file, etag: "e1", bytes: Array("b".utf8)))],
        actions: ["fail protocolViolation"]),
    // The run proper starts with the first listing's clock and keeps it: a later round's
    // listing (here after the file went) does not move it, so a side file of that round is
    // named by the first listing's time, as every merge of the run is stamped with it.
    .init(
        name: "a later round's listing keeps the first listing's clock", local: lines("a"),
        events: [
            listedAt(0), .gone, listedAt(86_400_000),
            .downloaded(DriveSnapshot(file: file, etag: "e1", bytes: Array("!".utf8))),
        ],
        actions: [
            "download F1", "list", "download F1",
            "keepAside habit-backup.json.invalid-19700101T000000Z-F1",
        ]),
]

@Test(arguments: listedRows)
func aBackupsFirstListing(_ row: ListedRow) {
    let until = row.unchangedUntil
    var machine =
        if let local = row.local {
            BackupRun(
                name: "habit-backup.json", codec: lineCodec, local: local, pending: row.pending)
        } else {
            BackupRun(
                name: "habit-backup.json", codec: lineCodec,
                unlessUnchanged: { files, now in
                    now.millisecondsSince1970 <= until ? files.first : nil
                }, pending: row.pending)
        }
    guard case .list = machine.start() else {
        Issue.record("a backup starts with the listing")
        return
    }
    #expect(row.events.map { spelled(machine.handle($0)) } == row.actions)
}

private func spelled(_ action: BackupRun<Lines>.Action) -> String {
    switch action {
    case .readLocal: "readLocal"
    case .download(let file): "download \(file.id)"
    case .listRevisions(let id): "listRevisions \(id)"
    case .finish(let outcome) where outcome.quiet: "finish quiet \(outcome.file?.id ?? "nil")"
    case .finish: "finish"
    case .record(let record?): "record \(record.fileId)"
    case .create: "create"
    case .update(let file, _, let etag): "update \(file.id) \(etag)"
    case .keepAside(_, _, let name, _): "keepAside \(name)"
    case .fail(.protocolViolation): "fail protocolViolation"
    default: "\(action)"
    }
}
