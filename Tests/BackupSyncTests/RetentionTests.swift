import BackupKit
import BackupSync
import Foundation
import GoogleDrive
import Networking
import TestSupport
import Testing

/// The pin policy (`RetentionPolicy`) as a table, and over a simulated year of daily backups
/// against the emulator, whose clock moves a day at a time.

private func at(_ text: String) -> Timestamp {
    Timestamp(text)!
}

private func revision(_ id: String, _ time: String, pinned: Bool = false) -> DriveRevision {
    DriveRevision(id: id, md5Checksum: id, modifiedTime: time, keepForever: pinned)
}

struct PlanCase: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var policy: RetentionPolicy
    var revisions: [DriveRevision]
    var now: String
    var zone = "UTC"
    var pin: [String]
    var release: [String] = []
}

private let plans: [PlanCase] = [
    PlanCase(
        testDescription: "the first upload of each day, not the later ones",
        policy: RetentionPolicy(daily: 2, weekly: 0, monthly: 0),
        revisions: [
            revision("r1", "2026-11-02T09:00:00.000Z"), revision("r2", "2026-11-02T18:00:00.000Z"),
            revision("r3", "2026-11-03T08:00:00.000Z"),
        ],
        now: "2026-11-03T09:00:00Z", pin: ["r1", "r3"]),
    PlanCase(
        testDescription: "the example: daily 2, weekly 1",
        policy: RetentionPolicy(daily: 2, weekly: 1, monthly: 0),
        revisions: [
            revision("r1", "2026-11-02T09:00:00.000Z"), revision("r2", "2026-11-02T18:00:00.000Z"),
            revision("r3", "2026-11-03T08:00:00.000Z"),
        ],
        now: "2026-11-03T09:00:00Z", pin: ["r1", "r3"]),
    PlanCase(
        testDescription: "days are local: 23:30 in New York is the next UTC day",
        policy: RetentionPolicy(daily: 7, weekly: 0, monthly: 0),
        revisions: [
            revision("r1", "2026-11-03T03:00:00.000Z"),  // Nov 2, 22:00 in New York
            revision("r2", "2026-11-03T04:30:00.000Z"),  // Nov 2, 23:30: the same local day
        ],
        now: "2026-11-03T05:00:00Z", zone: "America/New_York", pin: ["r1"]),
    PlanCase(
        testDescription: "the last N days that have an upload, not the last N calendar days",
        policy: RetentionPolicy(daily: 2, weekly: 0, monthly: 0),
        revisions: [
            revision("r1", "2026-10-01T09:00:00.000Z"), revision("r2", "2026-10-20T09:00:00.000Z"),
            revision("r3", "2026-11-03T09:00:00.000Z"),
        ],
        now: "2026-11-03T10:00:00Z", pin: ["r2", "r3"]),
    PlanCase(
        testDescription: "a pin no longer named is released only past 30 days, never the head",
        policy: RetentionPolicy(daily: 1, weekly: 0, monthly: 0),
        revisions: [
            revision("old", "2026-09-01T09:00:00.000Z", pinned: true),
            revision("recent", "2026-10-20T09:00:00.000Z", pinned: true),
            revision("head", "2026-11-03T09:00:00.000Z"),
        ],
        now: "2026-11-03T10:00:00Z", pin: ["head"], release: ["old"]),
    PlanCase(
        testDescription: "a level at 0 is off; the policy off pins nothing and releases nothing",
        policy: RetentionPolicy(daily: 0, weekly: 0, monthly: 0),
        revisions: [revision("r1", "2026-11-02T09:00:00.000Z")],
        now: "2026-11-03T10:00:00Z", pin: [], release: []),
    PlanCase(
        testDescription: "weeks start on Monday; months are calendar months",
        policy: RetentionPolicy(daily: 0, weekly: 2, monthly: 2),
        revisions: [
            revision("sun", "2026-11-01T09:00:00.000Z"),  // Sunday, first of November
            revision("mon", "2026-11-02T09:00:00.000Z"),  // Monday: a new week
            revision("tue", "2026-11-03T09:00:00.000Z"),
        ],
        now: "2026-11-03T10:00:00Z", pin: ["sun", "mon"]),
]

@Test(arguments: plans)
func aPolicyPinsTheFirstUploadOfEachPeriod(_ test: PlanCase) throws {
    let plan = test.policy.plan(
        test.revisions, now: at(test.now), timeZone: try #require(TimeZone(identifier: test.zone)))
    #expect(plan.pin == test.pin)
    #expect(plan.release == test.release)
}

@Test func pinsNeverPassDrivesLimitLessTheEnginesReserve() {
    // 250 days, one upload each, a policy naming every one of them: 180 at most, the newest,
    // so the last 20 of Drive's 200 stay for the reads a revision check pins.
    let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    let revisions = (0..<250).map { day in
        revision(
            "r\(day)",
            Timestamp(millisecondsSince1970: start + Int64(day) * 86_400_000).description)
    }
    let policy = RetentionPolicy(daily: 250, weekly: 0, monthly: 0)
    let plan = policy.plan(
        revisions, now: Timestamp(millisecondsSince1970: start + 250 * 86_400_000),
        timeZone: .gmt)
    #expect(policy.reservedPins == 20)
    #expect(plan.pin.count == RetentionPolicy.maxPins - 20)
    #expect(plan.pin.last == "r249" && plan.pin.first == "r70")
    // A lower cap (an emulator's) keeps its reserve too: 5 of 12.
    var small = policy
    small.pinLimit = 12
    #expect(small.reservedPins == 5)
    let capped = small.plan(
        revisions, now: Timestamp(millisecondsSince1970: start + 250 * 86_400_000),
        timeZone: .gmt)
    #expect(capped.pin == (243..<250).map { "r\($0)" })
}

/// Tokens minted by the emulator on demand: its clock moves a year, past any token's life.
private struct MintedTokens: AccessTokenSource {
    let emulator: Emulator
    func accessToken(refreshing: Bool) throws -> String { try emulator.issueTokens().accessToken }
}

/// A year of nightly backups (two on Saturdays), each followed by the policy, in several
/// zones: Drive ends up holding pins for exactly what the policy names, plus pins younger than
/// 30 days that it named earlier; never more than 200.
@Test(arguments: ["UTC", "Pacific/Apia", "Australia/Lord_Howe"])
func aYearOfDailyBackupsKeepsWhatThePolicyNames(zoneName: String) throws {
    let zone = try #require(TimeZone(identifier: zoneName))
    let emulator = try Emulator()
    defer { emulator.stop() }
    let drive = DriveClient(
        baseURL: emulator.baseURL, transport: CurlTransport(),
        tokens: MintedTokens(emulator: emulator), retry: RetryPolicy())
    let codec = SyncCodec<Lines>(
        decode: lineCodec.decode, encode: lineCodec.encode, merging: lineCodec.merge,
        stamp: lineCodec.stamp)
    let policy = RetentionPolicy.standard
    let start = Date().addingTimeInterval(-365 * 86_400)
    var local = Lines(items: [])
    var kept: KeptCopy?
    var maxPinned = 0
    var lastNow = Timestamp(millisecondsSince1970: 0)
    for day in 0..<365 {
        let uploads =
            Calendar(identifier: .iso8601).component(
                .weekday, from: start.addingTimeInterval(Double(day) * 86_400)) == 7 ? 2 : 1
        for upload in 0..<uploads {
            let offset = -Double(365 - day) * 86_400 + Double(upload) * 3_600
            try emulator.setClockOffset(offset)
            let now = Timestamp(
                millisecondsSince1970: Int64((Date().timeIntervalSince1970 + offset) * 1000))
            lastNow = now
            local.items.insert("day \(day) upload \(upload)")
            let driver = SyncDriver(drive: drive, now: { now })
            let outcome = try driver.run(
                BackupRun(name: "habit-backup.json", codec: codec, local: local, kept: kept))
            kept = outcome.kept
            let result = driver.retain(
                fileID: try #require(outcome.file?.id), revisions: outcome.revisions,
                policy: policy, now: now, timeZone: zone)
            #expect(result.failures.isEmpty, "\(result.failures)")
            let pinned = try #require(try emulator.files().first).revisions.filter(\.keepForever)
            maxPinned = max(maxPinned, pinned.count)
        }
    }
    let revisions = try #require(try emulator.files().first).revisions
    // The clock of the last backup's policy run, which decided the pins that are there now.
    let now = lastNow
    let named = Set(
        policy.plan(
            revisions.map { DriveRevision(id: $0.id, modifiedTime: $0.modifiedTime) }, now: now,
            timeZone: zone
        ).pin)
    let pinned = revisions.filter(\.keepForever)
    #expect(named.isSubset(of: Set(pinned.map(\.id))), "every revision the policy names is pinned")
    let releasable = now.millisecondsSince1970 - 30 * 86_400_000
    for revision in pinned where !named.contains(revision.id) {
        let time = try #require(Timestamp(revision.modifiedTime))
        #expect(time.millisecondsSince1970 >= releasable, "\(revision.id) should be released")
    }
    #expect(maxPinned <= RetentionPolicy.maxPins)
    // Besides what the policy names, exactly the first upload of each of the last 30 days:
    // each was named (daily) when new, and is released once older than Drive keeps any.
    var calendar = Calendar(identifier: .iso8601)
    calendar.timeZone = zone
    let times = Dictionary(uniqueKeysWithValues: revisions.map { ($0.id, $0.modifiedTime) })
    var firstOfDay: [DateComponents: String] = [:]
    for revision in revisions {
        let time = try #require(Timestamp(revision.modifiedTime))
        let date = Date(timeIntervalSince1970: Double(time.millisecondsSince1970) / 1000)
        let day = calendar.dateComponents([.year, .month, .day], from: date)
        if firstOfDay[day] == nil { firstOfDay[day] = revision.id }
    }
    // A revision within an hour of the 30-day mark may fall either side of it: its upload and
    // the last policy run were stamped by two clocks a few milliseconds apart.
    func recent(_ margin: Int64) -> Set<String> {
        Set(
            firstOfDay.values.filter {
                (times[$0].flatMap { Timestamp($0) }?.millisecondsSince1970 ?? 0)
                    >= releasable + margin
            })
    }
    let pinnedIDs = Set(pinned.map(\.id))
    #expect(
        pinnedIDs.subtracting(named.union(recent(-3_600_000))).map { times[$0] ?? $0 } == [],
        "pinned beyond the policy")
    #expect(
        named.union(recent(3_600_000)).subtracting(pinnedIDs).map { times[$0] ?? $0 } == [],
        "named but not pinned")
    print(
        "\(zoneName): a year of daily backups leaves \(pinned.count) pinned revisions of \(revisions.count)"
    )
}
