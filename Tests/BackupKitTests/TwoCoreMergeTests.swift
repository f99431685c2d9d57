import Testing

@testable import BackupKit

/// Many day logs are merged in two halves of the keys on two cores. Whatever the pair and
/// the options, that must give exactly what one walk gives: the same document, counts,
/// decisions (in the same order) and future-stamped items.
@Suite struct TwoCoreMergeTests {
    static func outcomes(
        _ local: BackupDocument, _ incoming: BackupDocument, _ options: MergeOptions
    ) -> (one: MergeOutcome, two: MergeOutcome) {
        var one = options
        one.twoCoresFromLogs = .max
        var two = options
        two.twoCoresFromLogs = 2
        return (
            merge(local: local, incoming: incoming, options: one),
            merge(local: local, incoming: incoming, options: two)
        )
    }

    static func expectSame(_ one: MergeOutcome, _ two: MergeOutcome, _ label: String) {
        #expect(two.document == one.document, "\(label)")
        #expect(two.report == one.report, "\(label)")
        #expect(two.decisions == one.decisions, "\(label)")
        #expect(two.futureStamped == one.futureStamped, "\(label)")
    }

    /// Small random pairs (shared ids, equal stamps, tombstones, edits after deletes), fresh
    /// and aged, in both modes, with and without the guards.
    @Test(arguments: [false, true])
    func randomPairsMergeTheSameOnTwoCores(aged: Bool) {
        var decided = 0
        for seed: UInt64 in 0..<600 {
            var random = RandomDocuments(seed: seed, aged: aged)
            let local = random.document()
            let incoming = random.document()
            for (mode, guards) in [
                (MergeOptions.Mode.merge, false), (.merge, true), (.replace, false),
            ] {
                let options = MergeOptions(
                    now: random.now, mode: mode, allowStale: !guards, clockGuard: guards)
                let (one, two) = Self.outcomes(local, incoming, options)
                Self.expectSame(one, two, "seed \(seed) \(mode) guards \(guards)")
                decided += one.decisions.count
            }
        }
        #expect(decided > 1000)
    }

    /// Larger pairs where both sides hold the same keys with different copies, so the split
    /// key usually has a copy on both sides, and pairs where one side is empty.
    @Test func largerPairsMergeTheSameOnTwoCores() {
        for seed: UInt64 in 0..<40 {
            let local = TwoCoreReadTests.document(seed: seed)
            let incoming = TwoCoreReadTests.document(seed: seed + 1000, perChallenge: 25)
            let empty = BackupDocument(exportedAt: local.exportedAt, deviceId: local.deviceId)
            let options = MergeOptions(now: RandomDocuments(seed: seed).now)
            for (a, b) in [(local, incoming), (incoming, local), (local, empty), (empty, local)] {
                let (one, two) = Self.outcomes(a, b, options)
                Self.expectSame(one, two, "seed \(seed)")
            }
        }
    }
}
