import Foundation
import LocalFiles
import TestSupport
import Testing

/// Drive or Google's token endpoints out of reach (issue 37 item 3): every failure is one
/// short line.
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
