import SeededRandom
import Testing

@testable import BackupKit

/// The one binary search behind challenge lookups, the merge's split and paused days,
/// against a walk from the start, on seeded sorted arrays of every small size.
@Suite struct SortedSearchTests {
    @Test func lowerBoundAndSortedIndexAgreeWithAWalk() {
        var random = SeededRandom(seed: 11)
        for size in 0..<40 {
            let values = Set((0..<size).map { _ in Int.random(in: 0..<60, using: &random) })
                .sorted()
            for target in -1...61 {
                let walked = values.firstIndex { $0 >= target } ?? values.count
                #expect(values.lowerBound(of: target, by: { $0 }) == walked)
                #expect(
                    values.sortedIndex(of: target, by: { $0 })
                        == (values.contains(target) ? walked : nil))
            }
        }
    }
}
