import Dispatch
import Foundation
import Testing

@testable import Parallel

@Suite struct ConcurrentlyTests {
    @Test func returnsEachJobsResultInItsPlace() {
        let (first, second) = concurrently({ "local" }, { 42 })
        #expect(first == "local")
        #expect(second == 42)
    }

    /// Each job waits for the other to have started: run one after the other, the first
    /// would time out waiting.
    @Test func runsBothJobsAtTheSameTime() {
        let firstStarted = DispatchSemaphore(value: 0)
        let secondStarted = DispatchSemaphore(value: 0)
        let (first, second) = concurrently(
            {
                firstStarted.signal()
                return secondStarted.wait(timeout: .now() + 60) == .success
            },
            {
                secondStarted.signal()
                return firstStarted.wait(timeout: .now() + 60) == .success
            })
        #expect(first)
        #expect(second)
    }

    /// The second job's thread is pinned to another core only to start: by the time the job
    /// runs, it may use every core its caller may.
    @Test func theSecondJobMayUseEveryCoreOfItsCaller() throws {
        let callerCores = OtherCore.numbers(of: try #require(OtherCore.cores()))
        let (_, jobCores) = concurrently({ () }, { OtherCore.cores().map(OtherCore.numbers) })
        #expect(jobCores == callerCores)
    }

    /// A caller limited to one core (`taskset -c N`) keeps its second job on that core.
    @Test func aCallerOnOneCoreKeepsTheSecondJobThere() throws {
        let core = try #require(OtherCore.cores().map(OtherCore.numbers)?.last)
        let jobCores = onThread {
            OtherCore.allow(OtherCore.set(of: [core]))
            return concurrently({ () }, { OtherCore.cores().map(OtherCore.numbers) }).1
        }
        #expect(jobCores == [core])
    }

    /// A thread is started away from its caller's core when the caller may use another, and
    /// unpinned (no cores to go back to) when it may not.
    @Test func aStartIsPinnedOnlyWhenThereIsAnotherCore() throws {
        let cores = try #require(OtherCore.cores().map(OtherCore.numbers))
        @Sendable func pin() -> [Int]? {
            var attributes = pthread_attr_t()
            guard pthread_attr_init(&attributes) == 0 else { return nil }
            defer { pthread_attr_destroy(&attributes) }
            return OtherCore.pin(&attributes).map(OtherCore.numbers)
        }
        if cores.count > 1 {
            #expect(onThread(pin) == cores)
        }
        let last = try #require(cores.last)
        let pinnedOnOneCore = onThread {
            OtherCore.allow(OtherCore.set(of: [last]))
            return pin()
        }
        #expect(pinnedOnOneCore == nil)
    }

    /// When pthread_create refuses the start pin (in life, a core that went offline after the
    /// caller looked; here, one the machine does not have), the thread starts unpinned
    /// instead of not at all.
    @Test func aRefusedStartPinStillStartsTheThread() throws {
        let cores = try #require(OtherCore.cores())
        let absent = MemoryLayout<cpu_set_t>.size * 8 - 1
        try #require(!OtherCore.numbers(of: cores).contains(absent))
        let pinToAbsentCore = { (attributes: inout pthread_attr_t) -> cpu_set_t? in
            OtherCore.start(on: OtherCore.set(of: [absent]), &attributes) ? cores : nil
        }
        let ran = CoresBox()
        let record: @Sendable () -> Void = { ran.value = OtherCore.cores().map(OtherCore.numbers) }
        // The pinned start alone is refused, so what follows tests the retry.
        try #require(startThread(record, pinnedBy: pinToAbsentCore) == nil)
        let thread = try #require(startThread(record, pin: pinToAbsentCore))
        pthread_join(thread, nil)
        #expect(ran.value == OtherCore.numbers(of: cores))
    }

    /// `body`'s result, run on a thread of its own, so that limiting that thread's cores
    /// leaves the test runner's threads alone.
    private func onThread(_ body: @escaping @Sendable () -> [Int]?) -> [Int]? {
        let box = CoresBox()
        let done = DispatchSemaphore(value: 0)
        Thread {
            box.value = body()
            done.signal()
        }.start()
        done.wait()
        return box.value
    }
}

/// A result handed from a test's own thread to the test, after a semaphore.
private final class CoresBox: @unchecked Sendable {
    var value: [Int]?
}
