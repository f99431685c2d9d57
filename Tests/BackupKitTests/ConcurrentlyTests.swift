import BackupKit
import Dispatch
import Testing

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
}
