import BackupKit
import BackupSync
import Digests
import GoogleDrive
import Gzip
import Networking
import TestSupport
import Testing

/// The sync engine and its driver over a scripted Drive: the requests a backup sends, in
/// order, for create, compare-and-swap, the revision check, duplicates and side files. A toy
/// document (a set of lines) keeps these independent of BackupKit's merge.
struct Lines: Equatable {
    var items: Set<String>
}

struct NotABackup: Error {}

var lineCodec: SyncCodec<Lines> {
    SyncCodec<Lines>(
        decode: { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            guard !text.hasPrefix("!") else { throw NotABackup() }
            return Lines(items: Set(text.split(separator: "\n").map(String.init)))
        },
        encode: { Array($0.items.sorted().joined(separator: "\n").utf8) },
        merge: { base, local, _ in Lines(items: base.items.union(local.items)) },
        stamp: { document, _ in document })
}

func lines(_ items: String...) -> Lines { Lines(items: Set(items)) }

func md5(_ text: String) -> String { Digest.hex(Digest.md5(Array(text.utf8))) }

func listing(_ ids: String...) -> ScriptedTransport.Step {
    let files = ids.enumerated().map { index, id in
        #"{"id":"\#(id)","name":"habit-backup.json","createdTime":"2026-01-0\#(index + 1)T00:00:00.000Z"}"#
    }
    return answer(200, #"{"files":[\#(files.joined(separator: ","))]}"#)
}

/// The two answers of `DriveClient.read`: v2 metadata with the etag and head revision, then
/// the bytes.
func remote(_ id: String, etag: String, revision: String = "r1", _ text: String)
    -> [ScriptedTransport.Step]
{
    [
        answer(
            200,
            #"{"id":"\#(id)","title":"habit-backup.json","etag":"\#(etag)","headRevisionId":"\#(revision)","md5Checksum":"\#(md5(text))"}"#
        ),
        answer(200, bytes: Array(text.utf8)),
    ]
}

/// The answer to an upload of `text`, which became revision `revision`.
func updated(_ text: String, revision: String = "r2", etag: String = "e9")
    -> ScriptedTransport.Step
{
    answer(
        200,
        #"{"id":"F1","title":"habit-backup.json","etag":"\#(etag)","headRevisionId":"\#(revision)","md5Checksum":"\#(md5(text))"}"#
    )
}

/// The answer to marking the file's proved revision (`DriveClient.markChecked`): v2 metadata
/// with the new etag and the private property.
func marked(_ revision: String, text: String, etag: String = "m1", version: Int = 9)
    -> ScriptedTransport.Step
{
    answer(
        200,
        #"{"id":"F1","title":"habit-backup.json","etag":"\#(etag)","version":"\#(version)","headRevisionId":"\#(revision)","md5Checksum":"\#(md5(text))","properties":[{"key":"checkedRevision","value":"\#(revision)","visibility":"PRIVATE"}]}"#
    )
}

/// A revision listing: (id, content) oldest first.
private func history(_ revisions: (String, String)...) -> ScriptedTransport.Step {
    let items = revisions.map { #"{"id":"\#($0.0)","md5Checksum":"\#(md5($0.1))"}"# }
    return answer(200, #"{"revisions":[\#(items.joined(separator: ","))]}"#)
}

final class Recorded: @unchecked Sendable {
    var notices: [SyncNotice] = []
    var records: [PendingVerification?] = []
}

func run(
    _ transport: ScriptedTransport, _ local: Lines?, kept: KeptCopy? = nil,
    pending: PendingVerification? = nil, maxRounds: Int = 8, recorded: Recorded = Recorded(),
    codec: SyncCodec<Lines> = lineCodec, retention: RetentionPolicy? = nil
) throws(SyncError) -> BackupOutcome<Lines> {
    var machine = BackupRun(
        name: "habit-backup.json", codec: codec, local: local, kept: kept, pending: pending)
    machine.maxRounds = maxRounds
    machine.retention = retention
    machine.timeZone = .gmt
    var driver = SyncDriver(
        drive: fakeDrive(transport), now: { Timestamp(millisecondsSince1970: 1_764_504_000_000) })
    driver.record = { recorded.records.append($0) }
    driver.notify = { recorded.notices.append($0) }
    return try driver.run(machine)
}

// MARK: - A local document read on request

private struct Unreadable: Error {}

/// A run whose local document is read only if `unchanged` is false, through a reader that
/// counts its calls and fails when `failing`.
private func runReading(
    _ transport: ScriptedTransport, unchanged: Bool, failing: Bool = false,
    keptWithIt: KeptCopy? = nil, reads: inout Int
) throws -> BackupOutcome<Lines> {
    let machine = BackupRun(
        name: "habit-backup.json", codec: lineCodec,
        unlessUnchanged: { files, _ in unchanged ? files.first : nil })
    let driver = SyncDriver(
        drive: fakeDrive(transport), now: { Timestamp(millisecondsSince1970: 1_764_504_000_000) })
    return try driver.run(
        machine,
        readLocal: {
            reads += 1
            if failing { throw Unreadable() }
            return (lines("b"), keptWithIt)
        })
}

@Test func aRunWhoseCheckNamesTheFileSendsOnlyTheListingAndReadsNothing() throws {
    let transport = ScriptedTransport([listing("F1")])
    var reads = 0
    let outcome = try runReading(transport, unchanged: true, reads: &reads)
    #expect(outcome.quiet && outcome.file?.id == "F1" && outcome.document == nil)
    #expect(reads == 0 && transport.sent.count == 1)
}

@Test func aRunWhoseCheckNamesNoFileReadsTheLocalDocumentOnceAndMerges() throws {
    let transport = ScriptedTransport([listing("F1")] + remote("F1", etag: "e1", "a\nb"))
    var reads = 0
    let outcome = try runReading(transport, unchanged: false, reads: &reads)
    #expect(!outcome.quiet && !outcome.uploaded && outcome.document == lines("a", "b"))
    #expect(reads == 1)
}

/// The kept copy comes with the local document (a quiet night reads neither): it stands in
/// for the download as the copy a run is made with does.
@Test func aKeptCopyReadWithTheLocalDocumentSparesTheDownload() throws {
    let transport = ScriptedTransport([listed("F1", version: 1, holding: "a\nb")])
    var reads = 0
    let outcome = try runReading(
        transport, unchanged: false, keptWithIt: kept("a\nb", version: 1, etag: "e1"),
        reads: &reads)
    #expect(!outcome.quiet && outcome.fromKeptCopy && outcome.document == lines("a", "b"))
    #expect(reads == 1 && transport.sent.count == 1)
}

@Test func aLocalDocumentThatCannotBeReadEndsTheRunWithItsOwnError() throws {
    let transport = ScriptedTransport([listing("F1")])
    var reads = 0
    #expect(throws: Unreadable.self) {
        try runReading(transport, unchanged: false, failing: true, reads: &reads)
    }
    #expect(transport.sent.count == 1)
}

func body(_ request: HTTPRequest) -> String {
    String(decoding: request.body, as: UTF8.self)
}

@Test func theFirstBackupCreatesTheFile() throws {
    let transport = ScriptedTransport([
        listing(), answer(200, #"{"ids":["NEW1"]}"#),
        answer(200, #"{"id":"NEW1","name":"habit-backup.json"}"#),
    ])
    let outcome = try run(transport, lines("a", "b"))
    #expect(outcome.created && outcome.uploaded)
    #expect(outcome.file?.id == "NEW1")
    let create = try #require(transport.sent.last)
    #expect(create.method == "POST")
    #expect(body(create).contains("\r\na\nb\r\n"))
}

@Test func anUnchangedBackupUploadsNothing() throws {
    let transport = ScriptedTransport([listing("F1")] + remote("F1", etag: "e1", "a\nb"))
    let outcome = try run(transport, lines("b"))
    #expect(!outcome.uploaded)
    #expect(transport.sent.allSatisfy { $0.method == "GET" })
    #expect(transport.remaining == 0)
}

@Test func anUploadIsCheckedAgainstTheRevisionHistory() throws {
    let recorded = Recorded()
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [
                updated("a\nb"), history(("r1", "a"), ("r2", "a\nb")),
                marked("r2", text: "a\nb", etag: "m1"),
            ])
    let outcome = try run(transport, lines("b"), recorded: recorded)
    #expect(outcome.uploaded && outcome.mergedRevisions == 0)
    #expect(
        transport.sent.suffix(2).map(\.path) == [
            "/drive/v3/files/F1/revisions", "/drive/v2/files/F1",
        ])
    // Proved, then marked on the file while the etag is still our upload's; the kept copy
    // takes the mark's etag, so the next upload needs no fresh one.
    let mark = try #require(transport.sent.last)
    #expect(mark.method == "PATCH" && mark.header("If-Match") == "e9")
    #expect(body(mark).contains(#""key":"checkedRevision","value":"r2","visibility":"PRIVATE""#))
    #expect(outcome.kept?.etag == "m1" && outcome.kept?.version == 9)
    // Recorded before the upload, cleared once checked.
    #expect(
        recorded.records == [
            PendingVerification(fileId: "F1", baseRevisionId: "r1", uploadedMd5: md5("a\nb")), nil,
        ])
    #expect(transport.remaining == 0)
}

/// A backup of "b" over "a" that meets another device's write ("c") between its read and its
/// upload (412), reads again and uploads "a b c" in a second round.
private func twoRounds() -> ScriptedTransport {
    ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a") + [googleError(412, "conditionNotMet")]
            // Not our own write: the history does not hold our bytes.
            + [history(("r1", "a"), ("r2", "a\nc"))]
            + remote("F1", etag: "e2", revision: "r2", "a\nc")
            + [
                updated("a\nb\nc", revision: "r3"),
                history(("r1", "a"), ("r2", "a\nc"), ("r3", "a\nb\nc")),
            ])
}

@Test func aWriteBetweenOurReadAndOurUploadIsMergedAgain() throws {
    let transport = twoRounds()
    let outcome = try run(transport, lines("b"))
    #expect(outcome.uploaded)
    let puts = transport.sent.filter { $0.method == "PUT" }
    #expect(puts.map { $0.header("If-Match") } == ["e1", "e2"])
    #expect(puts.map(body) == ["a\nb", "a\nb\nc"])
}

/// Drive ignored `If-Match` (or checked it only when the session opened): another device's
/// revision lies between our base and ours. Its bytes are merged and uploaded again.
@Test func aRevisionBetweenOurBaseAndOursIsMergedAndUploadedAgain() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [
                updated("a\nb", revision: "r3"),
                history(("r1", "a"), ("r2", "a\nc"), ("r3", "a\nb")),
            ]
            + [answer(200, bytes: Array("a\nc".utf8))]
            + remote("F1", etag: "e3", revision: "r3", "a\nb")
            + [
                updated("a\nb\nc", revision: "r4"),
                history(("r1", "a"), ("r2", "a\nc"), ("r3", "a\nb"), ("r4", "a\nb\nc")),
            ])
    let outcome = try run(transport, lines("b"))
    #expect(outcome.uploaded && outcome.mergedRevisions == 1)
    let revision = try #require(transport.sent.first { $0.path.hasSuffix("/revisions/r2") })
    #expect(revision.query("alt") == "media")
    let puts = transport.sent.filter { $0.method == "PUT" }
    #expect(puts.map { $0.header("If-Match") } == ["e1", "e3"])
    #expect(puts.map(body) == ["a\nb", "a\nb\nc"])
    #expect(outcome.document == lines("a", "b", "c"))
    #expect(transport.remaining == 0)
}

/// Our upload landed but its answer was lost; the retry met our own new etag (412). The
/// history holding our bytes after our base says the upload went through: it is reported as
/// uploaded, after one more round from the head (which holds it all: nothing more is sent).
@Test func aLostAnswerThenOurOwn412IsOurUpload() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [cut(), googleError(412, "conditionNotMet"), history(("r1", "a"), ("r2", "a\nb"))]
            + remote("F1", etag: "e2", revision: "r2", "a\nb"))
    let recorded = Recorded()
    let outcome = try run(transport, lines("b"), recorded: recorded)
    #expect(outcome.uploaded)
    #expect(transport.sent.filter { $0.method == "PUT" }.count == 2)
    #expect(recorded.records.last == .some(nil))
    #expect(transport.remaining == 0)
}

/// A 412 after our upload landed unanswered, then a third device's write on top of ours: the
/// revision ours replaced is still found and merged (the head's checksum alone would say
/// nothing about it).
@Test func aLandedUploadUnderAThirdWriteStillMergesWhatItReplaced() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [
                cut(), googleError(412, "conditionNotMet"),
                // r2 (the tablet's) was replaced by ours, r3; r4 came after (a third device
                // that read r3).
                history(("r1", "a"), ("r2", "a\nc"), ("r3", "a\nb"), ("r4", "a\nb\nd")),
                answer(200, bytes: Array("a\nc".utf8)),
            ] + remote("F1", etag: "e4", revision: "r4", "a\nb\nd")
            + [
                updated("a\nb\nc\nd", revision: "r5"),
                history(("r3", "a\nb"), ("r4", "a\nb\nd"), ("r5", "a\nb\nc\nd")),
            ])
    let outcome = try run(transport, lines("b"))
    #expect(outcome.uploaded && outcome.mergedRevisions == 1)
    #expect(outcome.document == lines("a", "b", "c", "d"))
    #expect(transport.remaining == 0)
}

/// A clean check whose upload is not the head any more (a device wrote after ours): one more
/// round from the head, so our items never rest on the other device's own check.
@Test func aWriteAfterOursIsReadBackBeforeTheRunEnds() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [updated("a\nb", revision: "r2"), history(("r1", "a"), ("r2", "a\nb"), ("r3", "c"))]
            // Drive ignored If-Match for the other device: r3 lacks our b.
            + remote("F1", etag: "e3", revision: "r3", "c")
            + [updated("a\nb\nc", revision: "r4"), history(("r3", "c"), ("r4", "a\nb\nc"))])
    let outcome = try run(transport, lines("b"))
    #expect(outcome.uploaded)
    #expect(transport.sent.filter { $0.method == "PUT" }.map(body) == ["a\nb", "a\nb\nc"])
    #expect(transport.remaining == 0)
}

/// A run whose second round dies after a check found another device's revision: its record
/// keeps the first base, so the next run still merges that revision, although the second
/// upload never landed.
@Test func aRecordKeepsTheOldestUnprovedBase() throws {
    let recorded = Recorded()
    let first = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [
                updated("a\nb", revision: "r3"),
                history(("r1", "a"), ("r2", "a\nc"), ("r3", "a\nb")),
            ]
            + [answer(200, bytes: Array("a\nc".utf8))]
            + remote("F1", etag: "e3", revision: "r3", "a\nb")
            + [googleError(403, "insufficientPermissions")])
    #expect(throws: SyncError.self) { try run(first, lines("b"), recorded: recorded) }
    let record = try #require(recorded.records.compactMap { $0 }.last)
    #expect(record.baseRevisionId == "r1")
    // The next run: r2 lies after the recorded base; it is merged and uploaded.
    let next = ScriptedTransport(
        [listing("F1"), history(("r1", "a"), ("r2", "a\nc"), ("r3", "a\nb"))]
            + [answer(200, bytes: Array("a\nc".utf8))]
            + remote("F1", etag: "e3", revision: "r3", "a\nb")
            + [updated("a\nb\nc", revision: "r4"), history(("r3", "a\nb"), ("r4", "a\nb\nc"))])
    let outcome = try run(next, lines("b"), pending: record)
    #expect(outcome.document == lines("a", "b", "c"))
    #expect(next.remaining == 0)
}

@Test func aPendingCheckOfAnEarlierRunIsFinishedFirst() throws {
    // The earlier run uploaded r3 from base r1 and died; r2, another device's, lies between.
    let pending = PendingVerification(fileId: "F1", baseRevisionId: "r1", uploadedMd5: md5("a\nb"))
    let recorded = Recorded()
    let transport = ScriptedTransport(
        [listing("F1"), history(("r1", "a"), ("r2", "a\nc"), ("r3", "a\nb"))]
            + [answer(200, bytes: Array("a\nc".utf8))]
            + remote("F1", etag: "e3", revision: "r3", "a\nb")
            + [updated("a\nb\nc", revision: "r4"), history(("r3", "a\nb"), ("r4", "a\nb\nc"))])
    let outcome = try run(transport, lines("b"), pending: pending, recorded: recorded)
    #expect(outcome.uploaded)
    #expect(transport.sent.filter { $0.method == "PUT" }.map(body) == ["a\nb\nc"])
    #expect(recorded.records.last == .some(nil))
    #expect(transport.remaining == 0)
}

@Test func aSettlingRunUploadsOnlyWhatACheckFound() throws {
    let pending = PendingVerification(fileId: "F1", baseRevisionId: "r1", uploadedMd5: md5("a\nb"))
    let clean = ScriptedTransport([listing("F1"), history(("r1", "a"), ("r2", "a\nb"))])
    let recorded = Recorded()
    let outcome = try run(clean, nil, pending: pending, recorded: recorded)
    #expect(!outcome.uploaded)
    #expect(recorded.records == [nil])
    #expect(clean.remaining == 0)
}

@Test func anUploadThatCannotBeCheckedLeavesItsRecord() throws {
    let recorded = Recorded()
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [updated("a\nb"), googleError(403, "insufficientPermissions")])
    let error = #expect(throws: SyncError.self) {
        try run(transport, lines("b"), recorded: recorded)
    }
    guard case .unverified(_, let pending) = error else {
        Issue.record("expected .unverified, got \(String(describing: error))")
        return
    }
    #expect(pending.uploadedRevisionId == "r2")
    #expect(recorded.records.count == 1 && recorded.records.first != .some(nil))
}

@Test func duplicatesAreMergedIntoTheOldestAndDeletedAfterTheCheck() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2")] + remote("F2", etag: "x", "c") + remote("F1", etag: "e1", "a") + [
            updated("a\nb\nc"), history(("r1", "a"), ("r2", "a\nb\nc")),
            marked("r2", text: "a\nb\nc"), remote("F2", etag: "x", "c")[0], answer(204),
        ])
    let outcome = try run(transport, lines("b"))
    #expect(outcome.deletedDuplicates == ["F2"])
    let writes = transport.sent.filter { $0.method != "GET" }
    #expect(writes.map(\.method) == ["PUT", "PATCH", "DELETE"])
    #expect(writes.first?.path == "/upload/drive/v2/files/F1")
    #expect(writes.first.map(body) == "a\nb\nc")
    #expect(writes.last?.path == "/drive/v3/files/F2")
    // The duplicate's metadata is read again right before the delete.
    #expect(transport.sent.dropLast().last?.path == "/drive/v2/files/F2")
    #expect(transport.remaining == 0)
}

/// A device wrote d into the duplicate F2 after we read it (its head moved from r1 to r7):
/// the metadata read before the delete shows it, so another round reads F2 again and merges d
/// into F1 before F2 is deleted. Without that read, d went with F2.
@Test func aDuplicateWrittenAfterItWasReadIsMergedAgainBeforeItIsDeleted() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2")] + remote("F2", etag: "x", "c") + remote("F1", etag: "e1", "a") + [
            updated("a\nb\nc"), history(("r1", "a"), ("r2", "a\nb\nc")),
            marked("r2", text: "a\nb\nc"), remote("F2", etag: "x7", revision: "r7", "c\nd")[0],
            listing("F1", "F2"),
        ] + remote("F2", etag: "x7", revision: "r7", "c\nd")
            + remote("F1", etag: "m1", revision: "r2", "a\nb\nc")
            + [
                updated("a\nb\nc\nd", revision: "r3"),
                history(("r1", "a"), ("r2", "a\nb\nc"), ("r3", "a\nb\nc\nd")),
                marked("r3", text: "a\nb\nc\nd"),
                remote("F2", etag: "x7", revision: "r7", "c\nd")[0],
                answer(204),
            ])
    let outcome = try run(transport, lines("b"))
    #expect(outcome.document == lines("a", "b", "c", "d"))
    #expect(outcome.deletedDuplicates == ["F2"])
    #expect(transport.sent.filter { $0.method == "DELETE" }.count == 1)
    #expect(transport.remaining == 0)
}

@Test func aDuplicateAnotherDeviceDeletedMeanwhileIsSkipped() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2"), googleError(404, "notFound")] + remote("F1", etag: "e1", "a") + [
            updated("a\nb"), history(("r1", "a"), ("r2", "a\nb")),
        ])
    let outcome = try run(transport, lines("b"))
    #expect(outcome.deletedDuplicates.isEmpty)
    #expect(transport.sent.filter { $0.method == "PUT" }.map(body) == ["a\nb"])
    #expect(!transport.sent.contains { $0.method == "DELETE" })
}

@Test func aDuplicateIsNotDeletedWhenTheUploadFails() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2")] + remote("F2", etag: "x", "c") + remote("F1", etag: "e1", "a") + [
            googleError(403, "insufficientPermissions")
        ])
    #expect(throws: SyncError.self) { try run(transport, lines("b")) }
    #expect(!transport.sent.contains { $0.method == "DELETE" })
}

@Test func anInvalidRemoteFileIsKeptAsideBeforeItIsReplaced() throws {
    let recorded = Recorded()
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "!garbage") + [
            answer(200, #"{"ids":["SIDE1"]}"#), answer(200, #"{"id":"SIDE1","name":"side"}"#),
            updated("b"), history(("r1", "!garbage"), ("r2", "b")),
        ])
    let outcome = try run(transport, lines("b"), recorded: recorded)
    #expect(outcome.sideFiles.map(\.id) == ["SIDE1"])
    let sent = transport.sent
    let side = try #require(sent.first { $0.method == "POST" })
    #expect(body(side).contains(#""name":"habit-backup.json.invalid-20251130T120000Z-F1""#))
    #expect(body(side).contains("!garbage"))
    #expect(sent.last(where: { $0.method == "PUT" }).map(body) == "b")
    #expect(recorded.notices.count == 1)
    guard case .keptAside(let copy, let file, .invalid) = recorded.notices.first else {
        Issue.record("expected a kept-aside notice")
        return
    }
    #expect(copy == "F1" && file.id == "SIDE1")
}

@Test func aRemoteThatKeepsChangingGivesUp() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [googleError(412, "conditionNotMet"), history(("r1", "a"))]
            + remote("F1", etag: "e2", "c")
            + [googleError(412, "conditionNotMet"), history(("r1", "a"), ("r2", "c"))])
    let error = #expect(throws: SyncError.self) { try run(transport, lines("b"), maxRounds: 2) }
    guard case .keepsChanging(rounds: 2) = error else {
        Issue.record("expected .keepsChanging, got \(String(describing: error))")
        return
    }
}

@Test func fetchMergesEveryRemoteFile() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2")] + remote("F1", etag: "e1", "a") + remote("F2", etag: "e2", "c"))
    let fetched = try #require(try fetch(transport))
    #expect(fetched.document == lines("a", "c"))
    #expect(fetched.files.map(\.id) == ["F1", "F2"])
}

@Test func fetchListsAgainWhenACopyGoesMeanwhile() throws {
    // Another device merged F2 into F1 and deleted it between our listing and our download.
    let transport = ScriptedTransport(
        [listing("F1", "F2")] + remote("F1", etag: "e1", "a") + [googleError(404, "notFound")]
            + [listing("F1")] + remote("F1", etag: "e2", "a\nc"))
    let fetched = try #require(try fetch(transport))
    #expect(fetched.document == lines("a", "c"))
    #expect(fetched.files.map(\.id) == ["F1"])
}

@Test func fetchWithNoRemoteFileIsNil() throws {
    #expect(try fetch(ScriptedTransport([listing()])) == nil)
}

private func fetch(_ transport: ScriptedTransport, codec: SyncCodec<Lines> = lineCodec)
    throws(SyncError) -> FetchRun<Lines>.Fetched?
{
    try SyncDriver(drive: fakeDrive(transport), now: { Timestamp(millisecondsSince1970: 0) }).run(
        FetchRun(name: "habit-backup.json", codec: codec))
}

// MARK: - The kept copy

private func listed(_ id: String, version: Int, revision: String = "r1", holding text: String)
    -> ScriptedTransport.Step
{
    answer(
        200,
        #"{"files":[{"id":"\#(id)","name":"habit-backup.json","version":"\#(version)","headRevisionId":"\#(revision)","md5Checksum":"\#(md5(text))"}]}"#
    )
}

/// `sealed`: the copy of a sealed backup, `text` its plaintext.
private func kept(
    _ text: String, version: Int, revision: String = "r1", etag: String?, sealed: Bool = false
) -> KeptCopy {
    KeptCopy(
        file: DriveFile(
            id: "F1", name: "habit-backup.json", version: version, headRevisionId: revision),
        etag: etag, bytes: Array(text.utf8), sealedMd5: sealed ? md5(seal(text)) : nil)
}

@Test func aNightWithNothingNewIsOneRequest() throws {
    let transport = ScriptedTransport([listed("F1", version: 1, holding: "a\nb")])
    let outcome = try run(transport, lines("b"), kept: kept("a\nb", version: 1, etag: "e1"))
    #expect(!outcome.uploaded && outcome.fromKeptCopy)
    #expect(transport.sent.count == 1)
}

@Test func anUploadFromTheKeptCopyCostsOneMoreRequest() throws {
    // The listing, the upload, the revision listing and the mark: no download.
    let transport = ScriptedTransport([
        listed("F1", version: 1, holding: "a"), updated("a\nb"),
        history(("r1", "a"), ("r2", "a\nb")), marked("r2", text: "a\nb", etag: "m1", version: 3),
    ])
    let outcome = try run(transport, lines("b"), kept: kept("a", version: 1, etag: "e1"))
    #expect(outcome.uploaded && outcome.fromKeptCopy)
    #expect(transport.sent.count == 4)
    #expect(
        outcome.kept
            == KeptCopy(
                file: DriveFile(id: "F1", name: "", version: 3, headRevisionId: "r2"), etag: "m1",
                bytes: Array("a\nb".utf8)))
}

/// Counts a codec's encodes.
private final class Encodes {
    var count = 0

    /// `lineCodec`, counted, with its stamp (none) kept on restamped bytes.
    var codec: SyncCodec<Lines> {
        var codec = lineCodec
        codec.encode = { document in
            self.count += 1
            return lineCodec.encode(document)
        }
        codec.restamp = { bytes, _, _ in bytes }
        return codec
    }
}

/// Issue 41: the merge is encoded once, for the comparison and the upload; the kept copy is
/// encoded too only when it is not known to be `encode`'s bytes. Its new copy is.
@Test(arguments: [false, true])
func anUploadEncodesTheMergeOnce(canonicalCopy: Bool) throws {
    let transport = ScriptedTransport([
        listed("F1", version: 1, holding: "a"), updated("a\nb"),
        history(("r1", "a"), ("r2", "a\nb")), marked("r2", text: "a\nb", etag: "m1", version: 3),
    ])
    var copy = kept("a", version: 1, etag: "e1")
    copy.canonical = canonicalCopy
    let encodes = Encodes()
    let outcome = try run(transport, lines("b"), kept: copy, codec: encodes.codec)
    #expect(outcome.uploaded)
    #expect(encodes.count == (canonicalCopy ? 1 : 2))
    #expect(outcome.kept?.canonical == true)
}

/// Bytes of the kept copy that are the merge's encoding need no second encode to say that
/// nothing changed; bytes spelled otherwise (another writer) are encoded and compared as
/// documents, and still nothing is uploaded.
@Test(arguments: [("a\nb", 1), ("b\na", 2)])
func aNightWithNothingNewEncodesTheKeptCopyOnlyWhenSpelledOtherwise(text: String, expected: Int)
    throws
{
    let transport = ScriptedTransport([listed("F1", version: 1, holding: text)])
    let encodes = Encodes()
    let outcome = try run(
        transport, lines("b"), kept: kept(text, version: 1, etag: "e1"), codec: encodes.codec)
    #expect(!outcome.uploaded && outcome.fromKeptCopy)
    #expect(encodes.count == expected)
}

/// A gzip kept copy known to inflate to `encode`'s bytes says "nothing changed" with the merge
/// encoded once, as a plain one does: its inflated bytes are compared, not its document
/// encoded again.
@Test func aNightWithNothingNewOverACanonicalGzipCopyEncodesOnce() throws {
    let gzip = Gzip.compress(Array("a\nb".utf8))
    let transport = ScriptedTransport([
        answer(
            200,
            #"{"files":[{"id":"F1","name":"habit-backup.json","version":"1","headRevisionId":"r1","md5Checksum":"\#(Digest.hex(Digest.md5(gzip)))"}]}"#
        )
    ])
    var copy = KeptCopy(
        file: DriveFile(id: "F1", name: "habit-backup.json", version: 1, headRevisionId: "r1"),
        etag: "e1", bytes: gzip)
    copy.canonical = true
    let encodes = Encodes()
    var codec = encodes.codec
    codec.inflate = { bytes in try Gzip.plain(bytes, maxBytes: 1 << 20) }
    codec.compress = true
    let outcome = try run(transport, lines("b"), kept: copy, codec: codec)
    #expect(!outcome.uploaded && outcome.fromKeptCopy)
    #expect(encodes.count == 1)
    #expect(outcome.kept?.canonical == true && outcome.kept?.bytes == gzip)
}

/// The one comparison of encodings: lengths, then every byte, the last included.
@Test func sameBytesComparesLengthsAndEveryByte() {
    let bytes: [UInt8] = [1, 2, 3]
    #expect(bytes.sameBytes(as: [1, 2, 3]))
    #expect(!bytes.sameBytes(as: [1, 2, 4]))
    #expect(!bytes.sameBytes(as: [1, 2]))
    #expect(!bytes.sameBytes(as: nil))
    #expect([UInt8]().sameBytes(as: []))
}

@Test func aKeptCopyOfAnotherRevisionIsNotUsed() throws {
    // Same bytes, but another device wrote them as a new revision: the copy is not the head.
    let transport = ScriptedTransport(
        [listed("F1", version: 2, revision: "r2", holding: "a")]
            + remote("F1", etag: "e2", revision: "r2", "a")
            + [updated("a\nb", revision: "r3"), history(("r2", "a"), ("r3", "a\nb"))])
    let outcome = try run(transport, lines("b"), kept: kept("a", version: 1, etag: "e1"))
    #expect(!outcome.fromKeptCopy)
    #expect(transport.sent.contains { $0.query("alt") == "media" })
}

@Test func anEtagFromAnOlderVersionIsNotUsed() throws {
    // A rename moved the version (and the etag), not the head revision: the copy stands, with
    // a fresh etag.
    let transport = ScriptedTransport([
        listed("F1", version: 2, holding: "a"),
        answer(
            200,
            #"{"id":"F1","title":"habit-backup.json","etag":"e2","version":"2","headRevisionId":"r1","md5Checksum":"\#(md5("a"))"}"#
        ),
        updated("a\nb", revision: "r2", etag: "e3"), history(("r1", "a"), ("r2", "a\nb")),
    ])
    let outcome = try run(transport, lines("b"), kept: kept("a", version: 1, etag: "e1"))
    let put = try #require(transport.sent.last { $0.method == "PUT" })
    #expect(put.header("If-Match") == "e2")
    #expect(body(put) == "a\nb")
    #expect(!transport.sent.contains { $0.query("alt") == "media" })
    #expect(outcome.kept?.etag == "e3")
}

@Test func aKeptCopyIsNotUsedBesideADuplicate() throws {
    // F1 matches the copy, but F2's items must be merged in and F2 deleted: the full path.
    let files = [
        #"{"id":"F1","name":"habit-backup.json","version":"1","headRevisionId":"r1","md5Checksum":"\#(md5("a"))","createdTime":"2026-01-01T00:00:00.000Z"}"#,
        #"{"id":"F2","name":"habit-backup.json","createdTime":"2026-01-02T00:00:00.000Z"}"#,
    ]
    let transport = ScriptedTransport(
        [answer(200, #"{"files":[\#(files.joined(separator: ","))]}"#)]
            + remote("F2", etag: "x", "c") + remote("F1", etag: "e1", "a")
            + [
                updated("a\nb\nc"), history(("r1", "a"), ("r2", "a\nb\nc")),
                marked("r2", text: "a\nb\nc"), remote("F2", etag: "x", "c")[0], answer(204),
            ])
    let outcome = try run(transport, lines("b"), kept: kept("a", version: 1, etag: "e1"))
    #expect(outcome.deletedDuplicates == ["F2"])
    #expect(transport.sent.filter { $0.query("alt") == "media" }.count == 2)
}

// MARK: - Sealed backups

struct NoKey: Error {}

private let sealPrefix = "sealed:"

private func seal(_ text: String) -> String { sealPrefix + text }

/// The line codec inside a toy envelope: sealed bytes are "sealed:" and the plaintext.
/// `uploads`: what the run's uploads are; `key`: whether sealed bytes open.
private func sealedLineCodec(uploads: Uploads = .sealed, key: Bool = true) -> SyncCodec<Lines> {
    var codec = lineCodec
    let prefix = Array(sealPrefix.utf8)
    codec.isSealed = { $0.starts(with: prefix) }
    codec.open = { bytes in
        guard key else { throw NoKey() }
        return Array(bytes.dropFirst(prefix.count))
    }
    codec.seal = { uploads == .sealed ? prefix + $0 : $0 }
    codec.uploads = uploads
    return codec
}

@Test func aSealedBackupIsOpenedMergedSealedAndCheckedByItsSealedBytes() throws {
    let recorded = Recorded()
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", seal("a"))
            + [updated(seal("a\nb")), history(("r1", seal("a")), ("r2", seal("a\nb")))])
    let outcome = try run(transport, lines("b"), recorded: recorded, codec: sealedLineCodec())
    #expect(transport.sent.filter { $0.method == "PUT" }.map(body) == [seal("a\nb")])
    // What Drive lists: the checksum of the bytes sent.
    #expect(
        recorded.records.first
            == PendingVerification(
                fileId: "F1", baseRevisionId: "r1", uploadedMd5: md5(seal("a\nb"))))
    // The next kept copy: the plaintext, matched to Drive by the sealed bytes' checksum.
    let kept = try #require(outcome.kept)
    #expect(kept.bytes == Array("a\nb".utf8) && kept.md5Checksum == md5(seal("a\nb")))
    #expect(!kept.holdsDriveBytes)
    #expect(outcome.bytes == seal("a\nb").utf8.count)
    #expect(transport.remaining == 0)
}

/// Issue 41: the upload's checksums are computed once and carried to the next kept copy: the
/// sealed bytes' for Drive, the plaintext's for the copy itself, each of its own bytes.
@Test func aSealedUploadsKeptCopyCarriesTheChecksumOfEachForm() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", seal("a"))
            + [updated(seal("a\nb")), history(("r1", seal("a")), ("r2", seal("a\nb")))])
    let outcome = try run(transport, lines("b"), codec: sealedLineCodec())
    let kept = try #require(outcome.kept)
    #expect(kept.md5Checksum == md5(seal("a\nb")))
    #expect(kept.plainChecksum == md5("a\nb"))
    #expect(!kept.holdsDriveBytes)
}

@Test func ourOwn412IsFoundByTheSealedBytesChecksum() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", seal("a"))
            + [
                cut(), googleError(412, "conditionNotMet"),
                history(("r1", seal("a")), ("r2", seal("a\nb"))),
            ]
            + remote("F1", etag: "e2", revision: "r2", seal("a\nb")))
    let outcome = try run(transport, lines("b"), codec: sealedLineCodec())
    #expect(outcome.uploaded)
    #expect(transport.sent.filter { $0.method == "PUT" }.count == 2)
    #expect(transport.remaining == 0)
}

@Test func anotherDevicesSealedRevisionIsOpenedBeforeItIsMerged() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", seal("a"))
            + [
                updated(seal("a\nb"), revision: "r3"),
                history(("r1", seal("a")), ("r2", seal("a\nc")), ("r3", seal("a\nb"))),
                answer(200, bytes: Array(seal("a\nc").utf8)),
            ]
            + remote("F1", etag: "e3", revision: "r3", seal("a\nb"))
            + [
                updated(seal("a\nb\nc"), revision: "r4"),
                history(("r3", seal("a\nb")), ("r4", seal("a\nb\nc"))),
            ])
    let outcome = try run(transport, lines("b"), codec: sealedLineCodec())
    #expect(outcome.document == lines("a", "b", "c") && outcome.mergedRevisions == 1)
    #expect(transport.remaining == 0)
}

/// Sealed bytes that do not open, or that a run which does not seal would replace: the run
/// stops with nothing sent but reads (no side file, no upload). A run that does not seal
/// does so from the kept copy of a sealed backup too (one that seals has the key).
@Test(arguments: [false, true])
func aSealedBackupIsNeverReplacedUnread(fromKeptCopy: Bool) throws {
    let unsealing = (sealedLineCodec(uploads: .plain), false)
    for (codec, unopened) in fromKeptCopy
        ? [unsealing] : [(sealedLineCodec(key: false), true), unsealing]
    {
        let transport = ScriptedTransport(
            [fromKeptCopy ? listed("F1", version: 1, holding: seal("a")) : listing("F1")]
                + remote("F1", etag: "e1", seal("a")))
        let copy = fromKeptCopy ? kept("a", version: 1, etag: "e1", sealed: true) : nil
        let error = #expect(throws: SyncError.self) {
            try run(transport, lines("b"), kept: copy, codec: codec)
        }
        switch error {
        case .unopened(let file, nil, _)?: #expect(unopened && file.id == "F1")
        case .unsealing(let file, nil)?: #expect(!unopened && file.id == "F1")
        default: Issue.record("expected .unopened or .unsealing, got \(String(describing: error))")
        }
        #expect(transport.sent.allSatisfy { $0.method == "GET" })
    }
}

/// A plain file of ours is uploaded sealed by a run that seals though nothing is new, and
/// said once; from the kept copy of the plain file too, without a download.
@Test(arguments: [false, true])
func aPlainBackupIsSealedOnceByASealingRun(fromKeptCopy: Bool) throws {
    let recorded = Recorded()
    let read =
        fromKeptCopy
        ? [listed("F1", version: 1, holding: "a\nb")]
        : [listing("F1")] + remote("F1", etag: "e1", "a\nb")
    let transport = ScriptedTransport(
        read + [updated(seal("a\nb")), history(("r1", "a\nb"), ("r2", seal("a\nb")))])
    let outcome = try run(
        transport, lines("b"), kept: fromKeptCopy ? kept("a\nb", version: 1, etag: "e1") : nil,
        recorded: recorded, codec: sealedLineCodec())
    #expect(outcome.uploaded && outcome.fromKeptCopy == fromKeptCopy)
    #expect(transport.sent.filter { $0.method == "PUT" }.map(body) == [seal("a\nb")])
    let said = recorded.notices.filter {
        if case .envelopeChanged("F1", sealed: true) = $0 { return true }
        return false
    }
    #expect(said.count == 1 && recorded.notices.count == 1)
    #expect(transport.remaining == 0)
}

/// The way back: a run told to stop sealing opens a sealed file of ours and uploads it plain
/// though nothing is new, and says so once; from the kept copy (its plaintext) too.
@Test(arguments: [false, true])
func aSealedBackupIsUploadedPlainOnceByARunThatUnseals(fromKeptCopy: Bool) throws {
    let recorded = Recorded()
    let read =
        fromKeptCopy
        ? [listed("F1", version: 1, holding: seal("a\nb"))]
        : [listing("F1")] + remote("F1", etag: "e1", seal("a\nb"))
    let transport = ScriptedTransport(
        read + [updated("a\nb"), history(("r1", seal("a\nb")), ("r2", "a\nb"))])
    let outcome = try run(
        transport, lines("b"),
        kept: fromKeptCopy ? kept("a\nb", version: 1, etag: "e1", sealed: true) : nil,
        recorded: recorded, codec: sealedLineCodec(uploads: .unsealed))
    #expect(outcome.uploaded && outcome.fromKeptCopy == fromKeptCopy)
    #expect(transport.sent.filter { $0.method == "PUT" }.map(body) == ["a\nb"])
    let said = recorded.notices.filter {
        if case .envelopeChanged("F1", sealed: false) = $0 { return true }
        return false
    }
    #expect(said.count == 1 && recorded.notices.count == 1)
    #expect(try #require(outcome.kept).holdsDriveBytes)
    #expect(transport.remaining == 0)
}

/// Once plain, the next night of a run that unseals with nothing new uploads nothing.
@Test func aPlainBackupIsLeftAloneByARunThatUnseals() throws {
    let transport = ScriptedTransport([listed("F1", version: 1, holding: "a\nb")])
    let outcome = try run(
        transport, lines("b"), kept: kept("a\nb", version: 1, etag: "e1"),
        codec: sealedLineCodec(uploads: .unsealed))
    #expect(!outcome.uploaded && transport.sent.count == 1)
}

/// A run that seals keeps a plain broken file aside sealed: once the backup is sealed, no
/// plain copy of the user's data stays readable on Drive.
@Test func aSealingRunKeepsAPlainFileAsideSealed() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "!garbage") + [
            answer(200, #"{"ids":["SIDE1"]}"#), answer(200, #"{"id":"SIDE1","name":"side"}"#),
            updated(seal("b")), history(("r1", "!garbage"), ("r2", seal("b"))),
        ])
    let outcome = try run(transport, lines("b"), codec: sealedLineCodec())
    #expect(outcome.sideFiles.map(\.id) == ["SIDE1"])
    let side = try #require(transport.sent.first { $0.method == "POST" })
    #expect(body(side).contains(seal("!garbage")))
    #expect(transport.sent.last(where: { $0.method == "PUT" }).map(body) == seal("b"))
}

@Test func aNightWithNothingNewOnASealedBackupIsOneRequest() throws {
    let transport = ScriptedTransport([listed("F1", version: 1, holding: seal("a\nb"))])
    let outcome = try run(
        transport, lines("b"), kept: kept("a\nb", version: 1, etag: "e1", sealed: true),
        codec: sealedLineCodec())
    #expect(!outcome.uploaded && outcome.fromKeptCopy)
    #expect(transport.sent.count == 1)
}

@Test func fetchOpensSealedFilesAndStopsAtOneThatDoesNotOpen() throws {
    let steps =
        [listing("F1", "F2")] + remote("F1", etag: "e1", seal("a")) + remote("F2", etag: "e2", "c")
    let fetched = try #require(try fetch(ScriptedTransport(steps), codec: sealedLineCodec()))
    #expect(fetched.document == lines("a", "c"))
    let error = #expect(throws: SyncError.self) {
        try fetch(ScriptedTransport(steps), codec: sealedLineCodec(key: false))
    }
    guard case .unopened(let file, nil, _)? = error else {
        Issue.record("expected .unopened, got \(String(describing: error))")
        return
    }
    #expect(file.id == "F1")
}

// MARK: - One outcome

/// `lineCodec`, whose merge of the local side warns of `survivor` (any typed notice would do).
private func warningCodec(_ survivor: String) -> SyncCodec<Lines> {
    SyncCodec<Lines>(
        decode: lineCodec.decode, encode: lineCodec.encode,
        merging: { base, local, now in
            var merged = lineCodec.merge(base, local, now)
            merged.notices = [.staleSurvivors([survivor], of: .state(nil))]
            return merged
        }, stamp: lineCodec.stamp)
}

/// Issue 43: what a run's merges warn of comes back in its outcome, each kind once though
/// every round merges again (here two: a 412, then the upload), and is told once as it
/// happens, as the machine's `.notify` action (so it comes before what the merge led to).
@Test func theOutcomeHoldsWhatTheMergesSaidOnce() throws {
    let recorded = Recorded()
    let outcome = try run(
        twoRounds(), lines("b"), recorded: recorded, codec: warningCodec("c9"))
    #expect(outcome.uploaded)
    #expect(outcome.notices.merges.count == 1)
    guard case .staleSurvivors(let ids, .state(nil)) = outcome.notices.merges.first else {
        Issue.record("expected the merge's notice, got \(outcome.notices.merges)")
        return
    }
    #expect(ids == ["c9"])
    #expect(!outcome.notices.isEmpty)
    #expect(recorded.notices.count == 1)
    guard case .merged(.staleSurvivors(["c9"], _)) = recorded.notices.first else {
        Issue.record("expected the merge's notice told once, got \(recorded.notices)")
        return
    }
}

@Test func anUnchangedRunThatSaidNothingHasNoNotices() throws {
    let transport = ScriptedTransport([listing("F1")] + remote("F1", etag: "e1", "a\nb"))
    let outcome = try run(transport, lines("b"))
    #expect(!outcome.uploaded)
    #expect(outcome.notices.isEmpty)
}

/// A revision another device wrote between our base and our upload that Drive no longer
/// serves (404): the run says so once, as it happens and in its outcome, and goes on.
@Test func aRevisionThatCannotBeReadIsToldOnceAndTheRunGoesOn() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a")
            + [
                updated("a\nb", revision: "r3"),
                history(("r1", "a"), ("r2", "a\nc"), ("r3", "a\nb")),
                googleError(404, "notFound"),
            ]
            + remote("F1", etag: "e3", revision: "r3", "a\nb"))
    let recorded = Recorded()
    let outcome = try run(transport, lines("b"), recorded: recorded)
    #expect(outcome.uploaded && outcome.mergedRevisions == 0)
    let told = recorded.notices.compactMap { notice -> String? in
        guard case .unreadableRevision(let file, let revision) = notice else { return nil }
        return "\(file) \(revision)"
    }
    #expect(told == ["F1 r2"])
    #expect(outcome.notices.steps.count == 1)
    #expect(!outcome.notices.isEmpty)
    #expect(transport.remaining == 0)
}
