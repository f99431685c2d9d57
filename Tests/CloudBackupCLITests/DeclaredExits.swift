import Foundation
import TestSupport
import Testing

@testable import CloudBackupCLI

/// The built binary, as every test of this target runs it: each run's exit status is checked
/// against the `exit status:` list its command declares (`Command.exits`), so a code a
/// command's help does not list fails the test that saw it. This shadows TestSupport's.
func cloudbackup(
    _ arguments: [String], environment extraEnvironment: [String: String] = [:],
    stdin: Data? = nil, workingDirectory: URL? = nil,
    whenStderrShows: (text: String, action: @Sendable () -> Void)? = nil
) throws -> RunResult {
    let result = try TestSupport.cloudbackup(
        arguments, environment: extraEnvironment, stdin: stdin,
        workingDirectory: workingDirectory, whenStderrShows: whenStderrShows)
    expectDeclared(result.status, arguments)
    return result
}

/// Records an issue when `status` is not among the codes `arguments`' command declares; a
/// run that names no command (`--help`, a typo) is the tool's own, 0 or 2.
func expectDeclared(
    _ status: Int32, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let code = ExitCode(rawValue: status) else { return }
    let name = arguments.first ?? ""
    let declared =
        CloudBackup.commands.first { $0.name == name }.map { $0.exits.map(\.code) }
        ?? [.success, .usage]
    #expect(
        declared.contains(code),
        "\(name) exited \(status), which its exit status list does not give",
        sourceLocation: sourceLocation)
}

@Suite struct DeclaredExitTests {
    /// Every code a command lists is one the error table has a meaning for, each at most once,
    /// in order, and its help shows each.
    @Test func everyCommandListsItsCodesOnceInOrderAndShowsThem() {
        for command in CloudBackup.commands {
            let codes = command.exits.map(\.code.rawValue)
            #expect(codes == codes.sorted() && Set(codes).count == codes.count, "\(command.name)")
            #expect(Array(codes.prefix(3)) == [0, 1, 2], "\(command.name)")
            for exit in command.exits {
                #expect(
                    command.help.contains("\n  \(exit.code.rawValue)  ")
                        || command.help.contains("\n  \(exit.code.rawValue)   "),
                    "\(command.name) \(exit.code)")
            }
        }
    }

    /// A status the list lacks is caught: the check itself can fail.
    @Test func aCodeTheListLacksIsCaught() {
        withKnownIssue {
            expectDeclared(ExitCode.tooOld.rawValue, ["validate", "x"])
        }
        expectDeclared(ExitCode.tooOld.rawValue, ["status", "--max-age", "1d"])
    }
}
