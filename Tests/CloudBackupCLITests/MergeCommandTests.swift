import BackupKit
import Foundation
import TestSupport
import Testing

@testable import CloudBackupCLI

/// Runs a command line in-process and keeps what it printed.
private func runInProcess(_ arguments: [String]) -> (code: ExitCode, stdout: String, stderr: String)
{
    final class Streams: @unchecked Sendable {
        var out = ""
        var err = ""
    }
    let streams = Streams()
    let context = Context(
        environment: [:], stdout: { streams.out += $0 }, stderr: { streams.err += $0 })
    let code = CloudBackup.run(arguments, in: context)
    return (code, streams.out, streams.err)
}

struct MergeCommandParsingTests {
    struct UsageCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    @Test(arguments: [
        UsageCase(
            arguments: ["merge", "a.json", "b.json"],
            message: "missing -o OUT (or --dry-run to write nothing)"),
        UsageCase(
            arguments: ["merge", "a.json", "-o", "c.json"], message: "missing <LOCAL> <INCOMING>"),
        UsageCase(
            arguments: ["merge", "a.json", "b.json", "--dry-run", "--explain", "--json"],
            message: "--explain and --json do not mix: --json prints only the report"),
        UsageCase(
            arguments: ["merge", "a.json", "b.json", "--dry-run", "--window", "0"],
            message: "--window expects a number of days from 1 to 36500, not '0'"),
        UsageCase(
            arguments: ["merge", "a.json", "b.json", "--dry-run", "--now", "2026-11-29 10:00"],
            message:
                "--now expects an RFC 3339 UTC time such as 2026-11-29T22:14:03Z, not '2026-11-29 10:00'"
        ),
        UsageCase(
            arguments: ["merge", "a.json", "b.json", "-o", "c.json", "--log", "a.json"],
            message: "--log a.json is also a.json, a backup; give the log a file of its own"),
        UsageCase(
            arguments: ["merge", "a.json", "b.json", "-o", "c.json", "--log", "c.json"],
            message: "--log c.json is also c.json, a backup; give the log a file of its own"),
        UsageCase(arguments: ["verify"], message: "missing <FILE>"),
        UsageCase(
            arguments: ["verify", "a.json", "--frobnicate"],
            message: "unknown option '--frobnicate'"),
    ])
    func usageErrorsExitTwoWithTheUsageLine(_ example: UsageCase) throws {
        let result = runInProcess(example.arguments)
        #expect(result.code == .usage)
        #expect(result.stdout.isEmpty)
        let command = try #require(example.arguments.first)
        let usage = command == "merge" ? MergeCommand.usage : VerifyCommand.usage
        #expect(result.stderr == "cloudbackup: \(example.message)\n\(usage)\n")
    }

    @Test func helpIsListedAndPrinted() {
        let list = runInProcess(["--help"])
        let rows = list.stdout.split(separator: "\n").map {
            $0.split(separator: " ").joined(separator: " ")
        }
        #expect(rows.contains("merge merge a backup into a local file: newest edit wins per item"))
        #expect(rows.contains("verify tell whether a backup predates the tombstone window"))
        let help = runInProcess(["merge", "--help"])
        #expect(help.code == .success)
        #expect(help.stdout.hasPrefix("usage: cloudbackup merge LOCAL INCOMING -o OUT [--replace]"))
        #expect(help.stdout.contains("  --allow-stale     let in what the stale guard holds back"))
    }

    /// A warning quoting a file name with a newline or an escape stays one line (FORMAT.md §8.2).
    @Test func aWarningStaysOneLine() {
        final class Captured: @unchecked Sendable { var text = "" }
        let captured = Captured()
        let context = Context(environment: [:], stdout: { _ in }, stderr: { captured.text += $0 })
        context.printWarning("st\nx\u{1B}[31m.json is old")
        #expect(captured.text == "cloudbackup: warning: st\\u000Ax\\u001B[31m.json is old\n")
    }

    @Test func countsInPlainWords() {
        var report = MergeReport()
        report.challenges.added = 1
        report.challenges.updated = 2
        report.challenges.keptDeleted = 1
        report.dayLogs.keptUnderTombstone = 2
        report.dayLogs.droppedOrphans = 3
        #expect(
            MergeCommand.plainWords(report, mode: .merge) == [
                "challenges: 1 added, 2 updated, 1 kept deleted",
                "day logs: 2 kept under a tombstone, 3 dropped with an expired tombstone",
                "tombstones: none",
            ])
    }

    /// A replace also drops the logs of challenges it keeps, when the backup lacks them; the
    /// dry run must not say they went with an expired tombstone.
    @Test func aReplaceSaysItsDroppedLogsAreNotInTheBackup() throws {
        // In the examples the laptop lacks the phone's last two days of a challenge both keep.
        let local = Paths.file("Examples/phone.json")
        let incoming = Paths.file("Examples/laptop.json")
        let result = runInProcess([
            "merge", local.path, incoming.path, "--replace", "--dry-run",
            "--now", "2026-11-30T12:00:00Z",
        ])
        #expect(result.code == .success)
        let line = try #require(
            result.stdout.split(separator: "\n").first { $0.hasPrefix("day logs:") })
        #expect(line.hasSuffix("dropped (not in the backup, or under an expired tombstone)"))
        #expect(!line.contains("dropped with"))
        // The laptop keeps the run's day logs under the run's tombstone, and so does the result.
        #expect(line.contains("8 kept under a tombstone"))
    }
}
