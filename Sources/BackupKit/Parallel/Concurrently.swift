import Foundation

/// Runs two independent jobs at the same time, `first` on the calling thread and `second` on
/// a thread of its own, and returns both results once both have finished. For jobs that
/// share nothing, like reading the two files of a merge or the two halves of a file's day
/// logs: only `second` and its result cross to another thread, so only they must be Sendable.
///
/// A dedicated thread rather than a Dispatch queue, so the second job never waits for a
/// busy pool; it gets the main thread's stack size, as the reader's recursion may need it.
public func concurrently<First, Second: Sendable>(
    _ first: () -> First, _ second: @escaping @Sendable () -> Second
) -> (First, Second) {
    let slot = Slot<Second>()
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        slot.value = second()
        finished.signal()
    }
    thread.stackSize = 8 << 20
    thread.start()
    let firstResult = first()
    finished.wait()
    // The semaphore orders the second job's write before this read.
    guard let secondResult = slot.value else {
        preconditionFailure("the second job ran to completion before the wait returned")
    }
    return (firstResult, secondResult)
}

/// The second job's result slot, written by that job and read after it joined.
private final class Slot<Value>: @unchecked Sendable {
    var value: Value?
}

/// `body` on the two halves of `range` at once, or on the whole of it when it is shorter
/// than `minimum`; the results in the order of their ranges. For passes over the day logs
/// whose results only need to be put one after the other (issues, notes).
func inHalves<Result: Sendable>(
    _ range: Range<Int>, minimum: Int, _ body: @escaping @Sendable (Range<Int>) -> Result
) -> [Result] {
    guard range.count >= max(minimum, 2) else { return [body(range)] }
    let middle = range.lowerBound + range.count / 2
    let (first, second) = concurrently(
        { body(range.lowerBound..<middle) }, { body(middle..<range.upperBound) })
    return [first, second]
}
