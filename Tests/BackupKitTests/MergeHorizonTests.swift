import BackupKit
import Testing

/// `MergeOptions.unchangedUntil`: merging the same two documents at any instant from `now` to
/// the horizon gives what it gives at `now`. Over seeded documents whose stamps lie around
/// every threshold the merge reads the clock through: tombstones at the window's edge on both
/// sides, incoming files exported just inside the window (the stale guard), and incoming
/// items stamped beyond the clock guard's tolerance.
struct MergeHorizonTests {
    typealias Content = MergePropertyTests.Content

    /// Everything a merge outcome says, with the result's export time (always `now`) left out.
    struct Said: Equatable {
        var content: Content
        var settings: Settings
        var report: MergeReport
        var decisions: [MergeDecision]
        var futureStamped: [FutureStampedItem]

        init(_ outcome: MergeOutcome) {
            content = Content(outcome.document)
            settings = outcome.document.settings
            report = outcome.report
            decisions = outcome.decisions
            futureStamped = outcome.futureStamped
        }
    }

    /// An incoming document of the generator with some stamps moved beyond the clock guard
    /// and, for some seeds, an export time just inside the window.
    static func incoming(_ random: inout RandomDocuments) -> BackupDocument {
        var document = random.document()
        let now = random.now
        let ahead = { (hours: Int) in
            now.adding(milliseconds: MergeOptions.clockTolerance + Int64(hours) * 3_600_000)
        }
        for index in document.challenges.indices where random.pick([false, false, true]) {
            document.challenges[index].updatedAt = ahead(random.pick([1, 5]))
        }
        for index in document.dayLogs.indices where random.pick([false, false, true]) {
            document.dayLogs[index].updatedAt = ahead(random.pick([2, 7]))
        }
        for index in document.tombstones.indices where random.pick([false, false, true]) {
            document.tombstones[index].deletedAt = ahead(3)
        }
        if random.pick([false, true]) {
            document.exportedAt = now.adding(days: -MergeOptions.defaultWindowDays)
                .adding(milliseconds: Int64(random.pick([1, 6])) * 3_600_000)
        }
        return document
    }

    @Test func theOutcomeHoldsFromNowToTheHorizon() throws {
        var changedJustAfter = 0
        for seed in 0..<UInt64(1500) {
            var random = RandomDocuments(seed: seed, aged: true)
            let local = random.document()
            let incoming = Self.incoming(&random)
            for clockGuard in [false, true] {
                let options = MergeOptions(now: random.now, clockGuard: clockGuard)
                let said = Said(merge(local: local, incoming: incoming, options: options))
                guard let until = options.unchangedUntil(local: local, incoming: incoming) else {
                    continue
                }
                #expect(until >= random.now, "seed \(seed)")
                let span = until.millisecondsSince1970 - random.now.millisecondsSince1970
                let between = random.now.adding(milliseconds: span / 2)
                for later in [between, until] {
                    var moved = options
                    moved.now = later
                    #expect(
                        Said(merge(local: local, incoming: incoming, options: moved)) == said,
                        "seed \(seed), clock guard \(clockGuard), at \(later) (horizon \(until))")
                }
                var past = options
                past.now = until.adding(milliseconds: 1)
                if Said(merge(local: local, incoming: incoming, options: past)) != said {
                    changedJustAfter += 1
                }
            }
        }
        // The horizon is not merely safe but where the outcome really turns, for most inputs:
        // a horizon set too early would pass the loop above and fail here.
        #expect(changedJustAfter > 1500)
    }

    @Test func documentsWithNothingAheadHaveTheStaleGuardAsTheirHorizon() {
        let now = Timestamp(millisecondsSince1970: 1_795_990_443_120)
        let exported = now.adding(days: -1)
        let plain = BackupDocument(exportedAt: exported, deviceId: DeviceID(unchecked: "phone"))
        let options = MergeOptions(now: now)
        #expect(
            options.unchangedUntil(local: plain, incoming: plain)
                == exported.adding(days: MergeOptions.defaultWindowDays))
        var stale = plain
        stale.exportedAt = now.adding(days: -200)
        #expect(options.unchangedUntil(local: plain, incoming: stale) == nil)
    }
}
