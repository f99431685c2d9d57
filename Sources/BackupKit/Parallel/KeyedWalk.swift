import Parallel

/// A walk over the keys of two arrays sorted by the same key, writing at most one element
/// per key, that can also run as two walks over halves of the keys whose records are then
/// joined: the merge's day-log walk.
protocol KeyedWalk: Sendable {
    associatedtype Element
    associatedtype Key: Comparable

    var local: [Element] { get }
    var incoming: [Element] { get }
    /// The key both arrays are sorted by.
    static func key(_ element: Element) -> Key

    /// Walks the keys of these ranges of both arrays, writing what it keeps from `output` on;
    /// returns how many it wrote.
    mutating func walk(
        local: Range<Int>, incoming: Range<Int>, into output: UnsafeMutablePointer<Element>
    )
        -> Int

    /// A walk like this one that has recorded nothing yet, for the second half.
    func fresh() -> Self

    /// Puts what `later`, the walk of the second half, recorded after this walk's records.
    mutating func append(_ later: Self)
}

extension KeyedWalk {
    /// The whole walk: in two halves of the keys on two cores from `twoCoresFrom` elements
    /// (both sides together) on, else in one pass; either way the elements written, in key
    /// order, and the records one pass gives.
    ///
    /// The larger side splits at its middle key, the other side where that key would go, so
    /// every key falls in one half with both its elements (a first sync or a restore has one
    /// side nearly empty, and the other is split). Both halves write into the result's
    /// storage, the second at an offset the first cannot reach (it writes at most one element
    /// per key it was given), and the second's are then moved down behind the first's.
    mutating func walkAll(twoCoresFrom minimum: Int) -> [Element] {
        // Both sides' count bounds the result: reserving that much costs only address space,
        // while growing a million-log array would copy it and briefly hold it twice.
        let capacity = local.count + incoming.count
        return [Element](unsafeUninitializedCapacity: capacity) { buffer, count in
            guard let output = buffer.baseAddress else { return }
            guard capacity >= max(minimum, 2) else {
                count = walk(local: local.indices, incoming: incoming.indices, into: output)
                return
            }
            let (localMiddle, incomingMiddle) =
                local.count >= incoming.count
                ? (
                    local.count / 2,
                    incoming.lowerBound(of: Self.key(local[local.count / 2]), by: Self.key)
                )
                : (
                    local.lowerBound(of: Self.key(incoming[incoming.count / 2]), by: Self.key),
                    incoming.count / 2
                )
            let secondStart = localMiddle + incomingMiddle
            let shared = SharedOutput(start: output + secondStart)
            let second = fresh()
            let (localCount, incomingCount) = (local.count, incoming.count)
            let (firstCount, (later, laterCount)) = concurrently(
                { walk(local: 0..<localMiddle, incoming: 0..<incomingMiddle, into: output) },
                {
                    var second = second
                    let written = second.walk(
                        local: localMiddle..<localCount, incoming: incomingMiddle..<incomingCount,
                        into: shared.start)
                    return (second, written)
                })
            (output + firstCount).moveInitialize(from: output + secondStart, count: laterCount)
            count = firstCount + laterCount
            append(later)
        }
    }
}
