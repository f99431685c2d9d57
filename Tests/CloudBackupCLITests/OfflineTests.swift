import Foundation
import GoogleDrive
import LocalFiles
import Networking
import TestSupport
import Testing

@testable import CloudBackupCLI

/// Drive or Google's token endpoints out of reach (issue 37 item 3): a run at a terminal gives
/// up within 15 s, a run under cron keeps today's budget, and every failure is one short line.
@Suite(.serialized) final class OfflineTests {
    let emulator: Emulator
    let phone: BackupMachine
    /// Nobody listens there: every connection is refused at once.
    let closed: String

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        closed = "http://127.0.0.1:\(try LocalServer.closedPort())"
    }

    /// The retry policy a run gets, by whether stderr is a terminal and the environment.
    static func policy(terminal: Bool, _ environment: [String: String] = [:]) throws
        -> RetryPolicy
    {
        try Context(
            environment: environment, stdout: { _ in }, stderr: { _ in },
            stderrIsTerminal: terminal
        ).retryPolicy()
    }

    /// At a terminal the verdict on a network that cannot be reached comes within 15 s (the
    /// backoff plus attempts refused at once); under cron the full budget stays, and so does
    /// `CLOUDBACKUP_OFFLINE_WAIT`'s choice for either.
    @Test func aTerminalGivesUpOnAnUnreachableNetworkWithin15Seconds() throws {
        let terminal = try Self.policy(terminal: true)
        let cron = try Self.policy(terminal: false)
        let refused = TransportError(kind: .couldNotConnect, message: "refused", host: "h")
        #expect(givingUp(terminal, after: refused).waited <= 15)
        #expect(givingUp(cron, after: refused).waited > 90)
        // Only the wait for a connection differs: 429 and 5xx keep today's budget.
        #expect(givingUp(terminal, after: nil) == givingUp(cron, after: nil))
        var same = terminal
        same.unreachableDeadline = nil
        #expect(same == RetryPolicy())
        #expect(cron == RetryPolicy())
        for terminal in [true, false] {
            let set = try Self.policy(terminal: terminal, ["CLOUDBACKUP_OFFLINE_WAIT": "3"])
            #expect(set.unreachableDeadline == 3)
        }
        #expect(throws: CLIError.self) {
            try Self.policy(terminal: true, ["CLOUDBACKUP_OFFLINE_WAIT": "soon"])
        }
    }

    /// Every Drive call's line stays within 160 characters with Google's host and ids as long
    /// as Drive's (33 characters): the line names the call, not the files it names.
    @Test func everyDriveCallFailsInAShortLine() {
        let id = String(repeating: "F", count: 33)
        let operations: [DriveOperation] = [
            .listFolder, .readMetadata(fileID: id), .download(fileID: id), .readETag(fileID: id),
            .reserveID, .create(name: "habit-backup.json"), .upload(fileID: id),
            .delete(fileID: id), .listRevisions(fileID: id), .downloadRevision(id, fileID: id),
            .pinRevision(id, fileID: id), .deleteRevision(id, fileID: id),
            .markChecked(id, fileID: id),
        ]
        let host = "www.googleapis.com"
        for operation in operations {
            let failures: [DriveError] = [
                .unreachable(
                    operation: operation,
                    TransportError(
                        kind: .couldNotConnect, message: "m", host: host,
                        cause: "connection refused")),
                .unavailable(
                    operation: operation, attempts: 8,
                    last: TransportError(
                        kind: .timedOut, message: "m", host: host, cause: "Timeout was reached"
                    ).summary),
            ]
            for failure in failures {
                let line = "cloudbackup: " + CloudBackup.describe(failure).lines.joined()
                #expect(line.count <= 160, "\(line.count): \(line)")
            }
        }
    }

    /// The one line of a network failure: at most 160 characters, naming what failed and the
    /// host, never the URL's path or query.
    func expectOneShortLine(_ result: RunResult, _ prefix: String, status: Int32 = 5) {
        #expect(result.status == status, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "\(result.stderr)")
        let line = String(lines[0])
        #expect(line.count <= 160, "\(line.count): \(line)")
        #expect(
            line.hasPrefix(prefix + "cannot connect to 127.0.0.1 (connection refused); "), "\(line)"
        )
        #expect(!line.contains("/drive") && !line.contains("?") && !line.contains("/token"))
    }

    @Test func aBackupThatCannotReachDriveSaysSoInOneShortLine() throws {
        try phone.login()
        try phone.write(backupJSON(device: "phone", challenges: [:]))
        var environment = phone.environment
        environment["CLOUDBACKUP_DRIVE_URL"] = closed
        let arguments = ["backup", "--file", phone.state.path, "--now", BackupMachine.now]
        let result = try cloudbackup(arguments, environment: environment)
        expectOneShortLine(result, "cloudbackup: list failed: ")
        // --verbose shows each exchange with its URL, and ends with the same line.
        let verbose = try cloudbackup(arguments + ["--verbose"], environment: environment)
        #expect(verbose.status == 5)
        #expect(verbose.stderr.contains(closed + "/drive/v3/files?"), "\(verbose.stderr)")
        #expect(verbose.stderr.hasSuffix(result.stderr))
    }

    @Test func aTokenRefreshThatCannotConnectSaysSoInOneShortLine() throws {
        // The saved access token is expired at once, so the backup must refresh it first.
        try emulator.setAccessTokenLifetime(1)
        try phone.login()
        try phone.write(backupJSON(device: "phone", challenges: [:]))
        var environment = phone.environment
        environment["CLOUDBACKUP_TOKEN_URL"] = closed + "/token"
        let result = try cloudbackup(
            ["backup", "--file", phone.state.path, "--now", BackupMachine.now],
            environment: environment)
        expectOneShortLine(result, "cloudbackup: token refresh failed: ")
    }

    @Test func aLogoutThatCannotReachGoogleWarnsInOneShortLine() throws {
        try phone.login()
        var environment = phone.environment
        environment["CLOUDBACKUP_REVOKE_URL"] = closed + "/revoke"
        let result = try cloudbackup(["logout"], environment: environment)
        expectOneShortLine(result, "cloudbackup: warning: revoke failed: ", status: 0)
        #expect(!LocalFile.exists(phone.tokenPath))
    }
}
