import Dispatch
import Foundation

/// Runs two independent jobs at the same time, `first` on the calling thread and `second` on
/// a thread of its own, and returns both results once both have finished. For jobs that
/// share nothing, like reading the two files of a merge: each writes only its own slot.
///
/// A dedicated thread rather than a Dispatch queue, so the second job never waits for a
/// busy pool; it gets the main thread's stack size, as the reader's recursion may need it.
public func concurrently<First: Sendable, Second: Sendable>(
    _ first: @Sendable () -> First, _ second: @escaping @Sendable () -> Second
) -> (First, Second) {
    let slots = Slots<First, Second>()
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        slots.second = second()
        finished.signal()
    }
    thread.stackSize = 8 << 20
    thread.start()
    slots.first = first()
    finished.wait()
    // The semaphore orders the second job's write before this read.
    guard let first = slots.first, let second = slots.second else {
        preconditionFailure("both jobs ran to completion before the wait returned")
    }
    return (first, second)
}

/// Two result slots, each written by exactly one job and read after both joined.
private final class Slots<First, Second>: @unchecked Sendable {
    var first: First?
    var second: Second?
}
