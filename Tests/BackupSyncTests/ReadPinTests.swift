import BackupSync
import GoogleDrive
import Networking
import TestSupport
import Testing

/// Read pins: when Drive serves the bytes of pinned revisions only, a check pins another
/// device's revision to read it. Those pins must not pile up to Drive's cap (200 a file), and a
/// check at the cap must still read what it owes, or say truthfully what Drive lacks.

/// One revision of a listing: its bytes' checksum, whether it is pinned, and when it was written.
struct Listed {
    var id: String
    var text: String
    var pinned = false
    var time = "2026-11-01T10:00:00.000Z"
}

func revisions(_ listed: Listed...) -> ScriptedTransport.Step { revisions(listed) }

func revisions(_ listed: [Listed]) -> ScriptedTransport.Step {
    let items = listed.map {
        #"{"id":"\#($0.id)","md5Checksum":"\#(md5($0.text))","keepForever":\#($0.pinned),"modifiedTime":"\#($0.time)"}"#
    }
    return answer(200, #"{"revisions":[\#(items.joined(separator: ","))]}"#)
}

/// Drive's answer to a revision download it serves only once the revision is pinned.
private let restricted = googleError(403, "download_restricted_for_revision")
/// Drive's answer to one pin too many (undocumented; the emulator's reading).
private let capReached = googleError(400, "badRequest")
private let pinned = answer(200, #"{"id":"r3","keepForever":true}"#)
private let deleted = answer(204)

private func requests(_ transport: ScriptedTransport, _ method: String) -> [String] {
    transport.sent.filter { $0.method == method }.map {
        $0.path.split(separator: "/").last.map(String.init) ?? ""
    }
}

/// Our upload r4 (over base r2, holding "a") replaced the tablet's r3 ("a\nc"): the check
/// lists `before`, reads r3 after `pinning` (Drive's answers about its pin), and a second
/// round uploads r5, proved by `after` and marked; `tail` answers what follows.
private func replacedR3(
    before: [Listed], pinning: [ScriptedTransport.Step], after: [Listed],
    tail: [ScriptedTransport.Step] = [deleted]
) -> ScriptedTransport {
    ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", revision: "r2", "a")
            + [updated("a\nb", revision: "r4"), revisions(before)] + pinning
            + [answer(200, bytes: Array("a\nc".utf8))]
            + remote("F1", etag: "e4", revision: "r4", "a\nb")
            + [
                updated("a\nb\nc", revision: "r5"), revisions(after),
                marked("r5", text: "a\nb\nc"),
            ] + tail)
}

/// The soak's losing round, scripted: the file's pins are at Drive's cap (p1 among them, an
/// old pin no policy names), Drive serves only pinned revisions, and our upload r4 replaced
/// the tablet's r3. The check frees p1, pins r3, reads and merges it, uploads again, and once
/// that upload is proved releases its read pin of r3: no pin is left behind.
@Test func aCheckAtThePinCapFreesAnOldPinReadsTheRevisionAndReleasesItsPin() throws {
    let recorded = Recorded()
    let transport = replacedR3(
        before: [
            Listed(id: "p1", text: "x", pinned: true), Listed(id: "r2", text: "a"),
            Listed(id: "r3", text: "a\nc"), Listed(id: "r4", text: "a\nb"),
        ],
        pinning: [restricted, capReached, deleted, pinned],
        after: [
            Listed(id: "r2", text: "a"), Listed(id: "r3", text: "a\nc", pinned: true),
            Listed(id: "r4", text: "a\nb"), Listed(id: "r5", text: "a\nb\nc"),
        ])
    let outcome = try run(transport, lines("b"), recorded: recorded)
    #expect(outcome.document == lines("a", "b", "c"))
    #expect(outcome.mergedRevisions == 1 && outcome.releasedPins == 1)
    #expect(requests(transport, "PATCH") == ["r3", "r3", "F1"])
    // p1 freed for the pin, then r3 released once r5 holds its items.
    #expect(requests(transport, "DELETE") == ["p1", "r3"])
    // The pin was on disk before it was made, and the record is cleared at the end.
    #expect(recorded.records.compactMap { $0 }.contains { $0.readPins == ["r3"] })
    #expect(recorded.records.last == .some(nil))
    #expect(transport.remaining == 0)
}

/// At the cap with no pin that may go (every pin is newer than the check's base): the run
/// waits and asks again (here twice, its rounds), then fails with `.unmerged`, naming the
/// revision it could not read, and leaves its record (with the pin it tried) for the next run,
/// which merges the revision.
@Test func aRevisionThatCannotBePinnedFailsNamingWhatDriveLacks() throws {
    let recorded = Recorded()
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", revision: "r2", "a")
            + [
                updated("a\nb", revision: "r4"),
                revisions(
                    Listed(id: "r2", text: "a", pinned: true), Listed(id: "r3", text: "a\nc"),
                    Listed(id: "r4", text: "a\nb")),
                restricted, capReached, capReached, capReached,
            ])
    let error = #expect(throws: SyncError.self) {
        try run(transport, lines("b"), maxRounds: 2, recorded: recorded)
    }
    guard case .unmerged(_, let missing) = error else {
        Issue.record("expected .unmerged, got \(String(describing: error))")
        return
    }
    #expect(missing.map(\.id) == ["r3"])
    #expect(requests(transport, "PATCH") == ["r3", "r3", "r3"])
    #expect(requests(transport, "DELETE") == [])
    let record = try #require(recorded.records.last ?? nil)
    #expect(record.baseRevisionId == "r2" && record.readPins == ["r3"])

    // The next run, once Drive has room again: r3 is read, merged, and its pin released.
    let next = finishingRun(r3Pinned: false)
    let outcome = try run(next, lines("b"), pending: record)
    #expect(outcome.document == lines("a", "b", "c"))
    #expect(requests(next, "DELETE") == ["r3"])
    #expect(next.remaining == 0)
}

/// The run that finishes a check recorded with base r2 after our r4 replaced the tablet's r3
/// (pinned already, or to be pinned to be read): r3 is merged, r5 proved and marked, and the
/// read pin of r3 released.
private func finishingRun(r3Pinned: Bool) -> ScriptedTransport {
    ScriptedTransport(
        [
            listing("F1"),
            revisions(
                Listed(id: "r2", text: "a"), Listed(id: "r3", text: "a\nc", pinned: r3Pinned),
                Listed(id: "r4", text: "a\nb")),
        ] + (r3Pinned ? [] : [restricted, pinned]) + [answer(200, bytes: Array("a\nc".utf8))]
            + remote("F1", etag: "e4", revision: "r4", "a\nb")
            + [
                updated("a\nb\nc", revision: "r5"),
                revisions(
                    Listed(id: "r3", text: "a\nc", pinned: true), Listed(id: "r4", text: "a\nb"),
                    Listed(id: "r5", text: "a\nb\nc")),
                marked("r5", text: "a\nb\nc"), deleted,
            ])
}

/// A run cut short after pinning leaves the pin in its record; the run that finishes the check
/// reads the revision again (pinned, so served), and releases the pin once its head is proved.
@Test func aReadPinOfACutShortRunIsReleasedByTheRunThatFinishesItsCheck() throws {
    let record = PendingVerification(
        fileId: "F1", baseRevisionId: "r2", uploadedMd5: md5("a\nb"), readPins: ["r3"])
    let transport = finishingRun(r3Pinned: true)
    let outcome = try run(transport, lines("b"), pending: record)
    #expect(outcome.document == lines("a", "b", "c") && outcome.releasedPins == 1)
    #expect(requests(transport, "DELETE") == ["r3"])
    #expect(transport.remaining == 0)
}

/// A read pin the retention policy names (the first upload of its day) is one of the policy's
/// pins: it stays.
@Test func aReadPinThePolicyNamesStays() throws {
    let transport = replacedR3(
        before: [
            Listed(id: "r2", text: "a", time: "2026-11-01T10:00:00.000Z"),
            Listed(id: "r3", text: "a\nc", time: "2026-11-02T09:00:00.000Z"),
            Listed(id: "r4", text: "a\nb", time: "2026-11-02T09:01:00.000Z"),
        ],
        pinning: [restricted, pinned],
        after: [
            Listed(id: "r2", text: "a", time: "2026-11-01T10:00:00.000Z"),
            Listed(id: "r3", text: "a\nc", pinned: true, time: "2026-11-02T09:00:00.000Z"),
            Listed(id: "r4", text: "a\nb", time: "2026-11-02T09:01:00.000Z"),
            Listed(id: "r5", text: "a\nb\nc", time: "2026-11-02T09:02:00.000Z"),
        ], tail: [])
    let outcome = try run(
        transport, lines("b"), retention: RetentionPolicy(daily: 7, weekly: 0, monthly: 0))
    #expect(outcome.document == lines("a", "b", "c") && outcome.releasedPins == 0)
    #expect(requests(transport, "DELETE") == [])
    #expect(transport.remaining == 0)
}

// MARK: - A check owed by one device, finished by any

/// A listing of F1 whose head is `head` (holding `text`) and whose mark is `mark`.
private func listed(head: String, holding text: String, mark: String) -> ScriptedTransport.Step {
    answer(
        200,
        #"{"files":[{"id":"F1","name":"habit-backup.json","version":"5","headRevisionId":"\#(head)","md5Checksum":"\#(md5(text))","appProperties":{"checkedRevision":"\#(mark)"}}]}"#
    )
}

/// The tablet's backup r2 (promised: it exited 0) was replaced by the phone's r3, uploaded
/// while Drive ignored If-Match; the phone's check never finished and the phone never runs
/// again. The file's mark still names r1, so the laptop's next backup lists the revisions,
/// merges r1 and r2 into its upload, proves it, and marks it: the tablet's c is back on Drive.
@Test func aCheckAnotherDeviceOwesIsFinishedByTheNextBackupOfAnyDevice() throws {
    let transport = ScriptedTransport(
        [
            listed(head: "r3", holding: "a\nb", mark: "r1"),
            revisions(
                Listed(id: "r1", text: "a"), Listed(id: "r2", text: "a\nc"),
                Listed(id: "r3", text: "a\nb")),
            answer(200, bytes: Array("a".utf8)), answer(200, bytes: Array("a\nc".utf8)),
        ] + remote("F1", etag: "e3", revision: "r3", "a\nb")
            + [
                updated("a\nb\nc\nd", revision: "r4"),
                revisions(
                    Listed(id: "r1", text: "a"), Listed(id: "r2", text: "a\nc"),
                    Listed(id: "r3", text: "a\nb"), Listed(id: "r4", text: "a\nb\nc\nd")),
                marked("r4", text: "a\nb\nc\nd"),
            ])
    let outcome = try run(transport, lines("d"))
    #expect(outcome.document == lines("a", "b", "c", "d") && outcome.mergedRevisions == 2)
    let mark = try #require(transport.sent.last)
    #expect(mark.method == "PATCH" && body(mark).contains(#""value":"r4""#))
    #expect(transport.remaining == 0)
}

/// The same owed check when the laptop has nothing new and the head already holds every item
/// since the mark: nothing is uploaded, and the head is marked as it is.
@Test func aHeadThatHoldsEverythingSinceTheMarkIsMarkedAsItIs() throws {
    let transport = ScriptedTransport(
        [
            listed(head: "r3", holding: "a\nb\nc", mark: "r1"),
            revisions(
                Listed(id: "r1", text: "a"), Listed(id: "r2", text: "a\nc"),
                Listed(id: "r3", text: "a\nb\nc")),
            answer(200, bytes: Array("a".utf8)), answer(200, bytes: Array("a\nc".utf8)),
        ] + remote("F1", etag: "e3", revision: "r3", "a\nb\nc") + [marked("r3", text: "a\nb\nc")])
    let outcome = try run(transport, lines("b"))
    #expect(!outcome.uploaded)
    let mark = try #require(transport.sent.last)
    #expect(mark.method == "PATCH" && mark.header("If-Match") == "e3")
    #expect(body(mark).contains(#""value":"r3""#))
    #expect(transport.remaining == 0)
}

/// A proved upload over a revision the run never read (an unmarked file whose history holds a
/// write between the mark and the run's base that no check merged) is not marked: the mark
/// claims only what the run proved.
@Test func aMarkClaimsOnlyWhatTheRunProved() throws {
    // Listed with mark r1 and head r1: no check owed, as far as the listing shows; then r2 and
    // r3 land before the download (a third device replaced the tablet's r2 unmerged).
    let transport = ScriptedTransport(
        [listed(head: "r1", holding: "a", mark: "r1")]
            + remote("F1", etag: "e3", revision: "r3", "a\nb")
            + [
                updated("a\nb\nd", revision: "r4"),
                revisions(
                    Listed(id: "r1", text: "a"), Listed(id: "r2", text: "a\nc"),
                    Listed(id: "r3", text: "a\nb"), Listed(id: "r4", text: "a\nb\nd")),
            ])
    let outcome = try run(transport, lines("d"))
    #expect(outcome.uploaded)
    #expect(!transport.sent.contains { $0.method == "PATCH" })
    #expect(transport.remaining == 0)
}

/// At the cap with nothing to free, another device's check releases its read pin while this
/// run waits: the pin asked again goes through, and nothing is missing.
@Test func aRefusedPinWaitsForAnotherDevicesReleaseAndReads() throws {
    let transport = replacedR3(
        before: [
            Listed(id: "r2", text: "a", pinned: true), Listed(id: "r3", text: "a\nc"),
            Listed(id: "r4", text: "a\nb"),
        ],
        pinning: [restricted, capReached, pinned],
        after: [
            Listed(id: "r3", text: "a\nc", pinned: true), Listed(id: "r4", text: "a\nb"),
            Listed(id: "r5", text: "a\nb\nc"),
        ])
    let outcome = try run(transport, lines("b"))
    #expect(outcome.document == lines("a", "b", "c") && outcome.releasedPins == 1)
    #expect(requests(transport, "PATCH") == ["r3", "r3", "F1"])
    #expect(transport.remaining == 0)
}

/// A read pin the policy names, but beyond its share of the cap (here a cap of 2: one pin for
/// the policy, held already, one for reads), is released: kept, it would eat the reserve.
@Test func aNamedReadPinBeyondThePolicysShareIsReleased() throws {
    var policy = RetentionPolicy(daily: 7, weekly: 0, monthly: 0)
    policy.pinLimit = 2
    let transport = replacedR3(
        before: [
            Listed(id: "r1", text: "x", pinned: true, time: "2026-10-31T10:00:00.000Z"),
            Listed(id: "r2", text: "a", time: "2026-11-01T10:00:00.000Z"),
            Listed(id: "r3", text: "a\nc", time: "2026-11-02T09:00:00.000Z"),
            Listed(id: "r4", text: "a\nb", time: "2026-11-02T09:01:00.000Z"),
        ],
        pinning: [restricted, pinned],
        after: [
            Listed(id: "r1", text: "x", pinned: true, time: "2026-10-31T10:00:00.000Z"),
            Listed(id: "r2", text: "a", time: "2026-11-01T10:00:00.000Z"),
            Listed(id: "r3", text: "a\nc", pinned: true, time: "2026-11-02T09:00:00.000Z"),
            Listed(id: "r4", text: "a\nb", time: "2026-11-02T09:01:00.000Z"),
            Listed(id: "r5", text: "a\nb\nc", time: "2026-11-02T09:02:00.000Z"),
        ])
    let outcome = try run(transport, lines("b"), retention: policy)
    #expect(outcome.releasedPins == 1)
    #expect(requests(transport, "DELETE") == ["r3"])
    #expect(transport.remaining == 0)
}

/// A check owing more revisions than Drive has room to pin (the soak's seed 5 at round 1343:
/// eleven owed, five pins free) reads them in batches. Here the file's mark is r1 and the phone
/// replaced the tablet's r1 and r2 with r3; Drive takes one more pin. The laptop pins and reads
/// r1, is refused r2's pin, so uploads r4 with r1's items, proves it, releases r1's pin, then
/// pins and reads r2, uploads r5 with everything, marks r5 and releases r2's pin.
@Test func aCheckOwingMoreThanThePinsFreeReadsInBatches() throws {
    let transport = ScriptedTransport(
        [
            listed(head: "r3", holding: "a\nb", mark: "r1"),
            revisions(
                Listed(id: "r1", text: "a\nx"), Listed(id: "r2", text: "a\nc"),
                Listed(id: "r3", text: "a\nb")),
            restricted, pinned, answer(200, bytes: Array("a\nx".utf8)),
            restricted, capReached,
        ] + remote("F1", etag: "e3", revision: "r3", "a\nb")
            + [
                updated("a\nb\nd\nx", revision: "r4"),
                revisions(
                    Listed(id: "r1", text: "a\nx", pinned: true), Listed(id: "r2", text: "a\nc"),
                    Listed(id: "r3", text: "a\nb"), Listed(id: "r4", text: "a\nb\nd\nx")),
                deleted, restricted, pinned, answer(200, bytes: Array("a\nc".utf8)),
            ] + remote("F1", etag: "e4", revision: "r4", "a\nb\nd\nx")
            + [
                updated("a\nb\nc\nd\nx", revision: "r5"),
                revisions(
                    Listed(id: "r2", text: "a\nc", pinned: true), Listed(id: "r3", text: "a\nb"),
                    Listed(id: "r4", text: "a\nb\nd\nx"), Listed(id: "r5", text: "a\nb\nc\nd\nx")),
                marked("r5", text: "a\nb\nc\nd\nx"), deleted,
            ])
    let outcome = try run(transport, lines("d"))
    #expect(outcome.document == lines("a", "b", "c", "d", "x"))
    #expect(outcome.releasedPins == 2)
    #expect(requests(transport, "PATCH") == ["r1", "r2", "r2", "F1"])
    // r1's pin goes before r2 is pinned: the room it held is what r2's pin takes.
    #expect(requests(transport, "DELETE") == ["r1", "r2"])
    #expect(transport.remaining == 0)
}
