import Parallel

/// A walk over the keys of two stores of day logs, writing at most one log per key, that can
/// also run as two walks over halves of the keys whose records are then joined: the merge's
/// day-log walk.
protocol KeyedWalk: Sendable {
    var local: DayLogStore { get }
    var incoming: DayLogStore { get }

    /// Walks the keys of these ranges of both stores, appending what it keeps to `output`.
    mutating func walk(local: Range<Int>, incoming: Range<Int>, into output: inout DayLogStore)

    /// A walk like this one that has recorded nothing yet, for the second half.
    func fresh() -> Self

    /// Puts what `later`, the walk of the second half, recorded after this walk's records.
    mutating func append(_ later: Self)
}

extension KeyedWalk {
    /// The whole walk: in two halves of the keys on two cores from `twoCoresFrom` logs (both
    /// sides together) on, else in one pass; either way the logs written, in key order, and
    /// the records one pass gives.
    ///
    /// The larger side splits at its middle key, the other side where that key would go, so
    /// every key falls in one half with both its logs (a first sync or a restore has one side
    /// nearly empty, and the other is split). Each half writes a store of its own; the
    /// second's logs are then appended to the first's.
    mutating func walkAll(twoCoresFrom minimum: Int) -> DayLogStore {
        let total = local.count + incoming.count
        guard total >= max(minimum, 2) else {
            var output = DayLogStore()
            output.reserve(like: local, incoming)
            walk(local: local.indices, incoming: incoming.indices, into: &output)
            return output
        }
        let (localMiddle, incomingMiddle) =
            local.count >= incoming.count
            ? (local.count / 2, incoming.lowerBound(of: local.key(at: local.count / 2), by: \.key))
            : (
                local.lowerBound(of: incoming.key(at: incoming.count / 2), by: \.key),
                incoming.count / 2
            )
        let second = fresh()
        let (localCount, incomingCount) = (local.count, incoming.count)
        var (first, (later, laterOutput)) = concurrently(
            {
                var output = DayLogStore()
                walk(local: 0..<localMiddle, incoming: 0..<incomingMiddle, into: &output)
                return output
            },
            {
                var second = second
                var output = DayLogStore()
                second.walk(
                    local: localMiddle..<localCount, incoming: incomingMiddle..<incomingCount,
                    into: &output)
                return (second, output)
            })
        first.append(contentsOf: laterOutput)
        append(later)
        return first
    }
}
