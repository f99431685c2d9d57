import BackupKit
import Testing

private typealias F = StreakFixture

@Suite struct HLCTests {
    @Test("stamps never go backwards, even when the device clock jumps back")
    func monotonicUnderClockJumps() throws {
        let clockReadings = try [
            "2026-03-10T10:00:00.000Z", "2026-03-10T10:00:00.000Z", "2026-03-10T10:01:00.000Z",
            "2026-03-10T09:00:00.000Z",  // set back an hour
            "2026-03-10T09:00:00.000Z", "2026-03-10T09:30:00.000Z",
            "2026-03-10T10:05:00.000Z",  // past everything stamped so far again
        ].map(F.instant)
        var clock = HybridLogicalClock()
        let stamps = clockReadings.map { clock.stampLocalEdit(now: $0) }
        for (earlier, later) in zip(stamps, stamps.dropFirst()) {
            #expect(earlier < later, "\(earlier) then \(later)")
        }
        #expect(stamps.first == clockReadings.first)
        // While the clock is behind, each edit is one millisecond after the last.
        #expect(stamps[3] == stamps[2].adding(milliseconds: 1))
        #expect(stamps[5] == stamps[2].adding(milliseconds: 3))
        // Once the clock is ahead again, stamps are the clock's own reading.
        #expect(stamps.last == clockReadings.last)
        #expect(clock.latest == stamps.last)
    }

    /// The other device runs a day fast; after importing its file, an edit made here must
    /// still beat its items in the merge (newer `updatedAt` wins).
    @Test("after importing a file stamped a day ahead, the next local edit wins")
    func localEditAfterImportWins() throws {
        let now = try F.instant("2026-03-09T12:00:00.000Z")
        let dayAhead = now.adding(days: 1)
        let walk = try F.task("walk", rules: [("2026-03-01", .check, 1)])
        var imported = try F.challenge(start: "2026-03-01", days: 30, tasks: [walk])
        imported.updatedAt = dayAhead
        var log = try F.log(imported, F.day("2026-03-09"), ["walk": 1])
        log.updatedAt = dayAhead.adding(milliseconds: -5)
        let document = BackupDocument(
            exportedAt: dayAhead, deviceId: try F.id("fast-phone"), challenges: [imported],
            dayLogs: [log])

        var clock = HybridLogicalClock(latest: now.adding(milliseconds: -60_000))
        #expect(clock.receive(stampsOf: document, now: now).isEmpty)
        let edit = clock.stampLocalEdit(now: now.adding(milliseconds: 1000))
        #expect(edit > imported.updatedAt)
        #expect(edit > log.updatedAt)
        #expect(edit == dayAhead.adding(milliseconds: 1))
    }

    @Test("a remote stamp further ahead than the bound is reported and not adopted")
    func farFutureStampReported() throws {
        let now = try F.instant("2026-03-09T12:00:00.000Z")
        let walk = try F.task("walk", rules: [("2026-03-01", .check, 1)])
        var challenge = try F.challenge(start: "2026-03-01", days: 30, tasks: [walk])
        challenge.updatedAt = now.adding(days: 1).adding(milliseconds: 1)
        var log = try F.log(challenge, F.day("2026-03-08"), ["walk": 1])
        log.updatedAt = now.adding(days: 400)
        let document = BackupDocument(
            exportedAt: now, deviceId: try F.id("broken-clock"), challenges: [challenge],
            dayLogs: [log], tombstones: [Tombstone(id: try F.id("gone"), deletedAt: now)])

        var clock = HybridLogicalClock()
        let reported = clock.receive(stampsOf: document, now: now)
        #expect(
            reported.map(\.pointer) == [
                "/challenges/challenge-1/updatedAt",
                "/dayLogs/challenge-1~12026-03-08/updatedAt",
            ])
        #expect(
            reported.map(\.ahead) == [
                Timestamp.millisecondsPerDay + 1, 400 * Timestamp.millisecondsPerDay,
            ])
        #expect(reported.first?.description.contains("24.0 h ahead") == true)
        // The in-bound stamps were taken in; the far ones were not.
        #expect(clock.latest == now)
        #expect(
            clock.stampLocalEdit(now: now.adding(milliseconds: 10)) == now.adding(milliseconds: 10))
    }

    @Test("a stamp exactly at the bound is accepted, one millisecond more is not")
    func boundIsInclusive() throws {
        let now = try F.instant("2026-03-09T12:00:00.000Z")
        var clock = HybridLogicalClock(maximumDrift: 60_000)
        #expect(clock.receive(now.adding(milliseconds: 60_001), now: now) == 60_001)
        #expect(clock.latest == nil)
        #expect(clock.receive(now.adding(milliseconds: 60_000), now: now) == nil)
        #expect(clock.latest == now.adding(milliseconds: 60_000))
        // An older stamp never moves the clock back.
        #expect(clock.receive(now, now: now) == nil)
        #expect(clock.latest == now.adding(milliseconds: 60_000))
    }

    @Test("a clock restored from its persisted latest stamp continues after it")
    func restoredClock() throws {
        let persisted = try F.instant("2026-03-10T08:00:00.000Z")
        var clock = HybridLogicalClock(latest: persisted)
        #expect(
            clock.stampLocalEdit(now: persisted.adding(days: -2))
                == persisted.adding(milliseconds: 1))
    }
}
