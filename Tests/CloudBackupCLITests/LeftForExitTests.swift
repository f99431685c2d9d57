import Testing

@testable import CloudBackupCLI

/// What a command leaves for the process's end (`Context.leaveForExit`): the real process
/// keeps it, so its documents are never freed piece by piece just before `exit`; a test's
/// context lets it go, so suites that run commands in-process do not pile documents up.
@Suite struct LeftForExitTests {
    final class Tracked {}

    @Test func theProcessKeepsWhatACommandLeaves() {
        weak var left: Tracked?
        do {
            let value = Tracked()
            left = value
            Context.process().leaveForExit(value)
        }
        #expect(left != nil)
    }

    @Test func aTestsContextLetsItGo() {
        weak var left: Tracked?
        do {
            let value = Tracked()
            left = value
            Context(environment: [:], stdout: { _ in }, stderr: { _ in }).leaveForExit(value)
        }
        #expect(left == nil)
    }
}
