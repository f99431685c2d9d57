import Foundation
import TestSupport
import Testing

@testable import CloudBackupCLI

/// `-` as a FILE (standard input) or an OUT (standard output), end to end on the binary.
@Suite final class StandardStreamTests {
    let folder: URL
    let phone = Paths.file("Examples/phone.json").path
    let laptop = Paths.file("Examples/laptop.json").path
    static let now = "2026-12-01T00:00:00Z"

    init() throws {
        folder = try Paths.temporaryFolder()
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    func bytes(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    @Test func validateReadsStandardInputAndNamesIt() throws {
        let valid = try cloudbackup(["validate", "--verbose", "-"], stdin: bytes(phone))
        #expect(valid.status == 0)
        #expect(valid.stdout == "<stdin>: valid (schema 3, migrates to schema 4)\n")
        let invalid = try cloudbackup(["validate", "-"], stdin: Data("{}".utf8))
        #expect(invalid.status == 3)
        #expect(invalid.stderr.hasPrefix("cloudbackup: <stdin>: "))
    }

    @Test func mergeFromStandardInputToStandardOutputWritesWhatAFileWouldHold() throws {
        let output = folder.appendingPathComponent("out.json").path
        let fromFiles = try cloudbackup(
            ["merge", phone, laptop, "-o", output, "--now", Self.now])
        #expect(fromFiles.status == 0)
        for arguments in [["-", laptop], [phone, "-"]] {
            let piped = arguments[0] == "-" ? phone : laptop
            let result = try cloudbackup(
                ["merge"] + arguments + ["-o", "-", "--now", Self.now], stdin: bytes(piped))
            #expect(result.status == 0)
            #expect(Data(result.stdout.utf8) == (try bytes(output)))
            // The report a file's merge prints on stdout, less the "wrote" line.
            #expect(result.stderr + "wrote \(output)\n" == fromFiles.stdout)
        }
    }

    @Test func migrateFromStandardInputToStandardOutput() throws {
        let output = folder.appendingPathComponent("out.json").path
        #expect(try cloudbackup(["migrate", phone, "-o", output]).status == 0)
        let result = try cloudbackup(["migrate", "-", "-o", "-", "--verbose"], stdin: bytes(phone))
        #expect(result.status == 0)
        #expect(Data(result.stdout.utf8) == (try bytes(output)))
        #expect(result.stderr == "<stdin> (schema 3) → <stdout> (schema 4)\n")
    }

    @Test func inspectAndVerifyNameStandardInput() throws {
        let inspect = try cloudbackup(["inspect", "-", "--now", Self.now], stdin: bytes(phone))
        #expect(inspect.status == 0)
        #expect(inspect.stdout.hasPrefix("file:        <stdin>\n"))
        let verify = try cloudbackup(
            ["verify", phone, "--against", "-", "--now", Self.now], stdin: bytes(laptop))
        #expect(verify.status == 0)
        #expect(verify.stdout.contains("merging it into <stdin> would:\n"))
    }

    @Test func aFileNamedDashIsReachedAsDotSlashDash() throws {
        try bytes(phone).write(to: folder.appendingPathComponent("-"))
        let file = try cloudbackup(["validate", "./-"], workingDirectory: folder)
        #expect(file.status == 0)
        let stdin = try cloudbackup(["validate", "-"], stdin: Data(), workingDirectory: folder)
        #expect(stdin.status == 3)
        #expect(stdin.stderr.hasPrefix("cloudbackup: <stdin>:"))
    }

    @Test(arguments: [
        ["merge", "-", "-", "-o", "out.json"], ["validate", "-", "-"],
        ["verify", "-", "--against", "-"],
    ])
    func onlyOneInputIsStandardInput(_ arguments: [String]) throws {
        let result = try cloudbackup(arguments, stdin: Data())
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("cloudbackup: only one FILE can be - (standard input)\n"))
    }

    @Test func theSizeLimitHoldsForStandardInput() throws {
        let result = try cloudbackup(
            ["validate", "-", "--max-bytes", "100"], stdin: bytes(phone))
        #expect(result.status == 3)
        #expect(
            result.stderr
                == "cloudbackup: <stdin>: the file is over the 100-byte limit; raise it with --max-bytes if the file is genuine\n"
        )
    }

    /// A test's context hands a command its stdin and takes the document it writes to `-`.
    @Test func aContextInjectsStandardInputAndTakesStandardOutput() throws {
        final class Streams: @unchecked Sendable {
            var out = ""
            var err = ""
        }
        func runInProcess(_ arguments: [String]) throws -> (ExitCode, Streams) {
            let streams = Streams()
            let context = Context(
                environment: [:], stdout: { streams.out += $0 }, stderr: { streams.err += $0 },
                stdin: Array(try bytes(phone)))
            return (CloudBackup.run(arguments, in: context), streams)
        }
        let output = folder.appendingPathComponent("out.json").path
        #expect(try cloudbackup(["migrate", phone, "-o", output]).status == 0)
        let (migrated, migrate) = try runInProcess(["migrate", "-", "-o", "-"])
        #expect(migrated == .success)
        #expect(Data(migrate.out.utf8) == (try bytes(output)))
        let (refused, validate) = try runInProcess(["validate", "-", "--max-bytes", "100"])
        #expect(refused == .invalidFile)
        #expect(validate.err.hasPrefix("cloudbackup: <stdin>: the file is over the 100-byte"))
    }

    @Test func aTerminalIsRefusedAsStandardInput() throws {
        // stdin on a pseudo-terminal nobody types into: waiting on it would hang.
        let script = """
            import os, pty, subprocess, sys
            master, slave = pty.openpty()
            sys.exit(subprocess.run(sys.argv[1:], stdin=slave).returncode)
            """
        let result = try run(
            URL(fileURLWithPath: Paths.python),
            ["-c", script, Paths.binary.path, "validate", "-"], environment: testEnvironment)
        #expect(result.status == 3)
        #expect(
            result.stderr
                == "cloudbackup: <stdin>: cannot read: it is a terminal; pipe a file into it (… - < FILE) or give the path of a file\n"
        )
    }
}
