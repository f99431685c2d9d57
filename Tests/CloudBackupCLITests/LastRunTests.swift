import Foundation
import LocalFiles
import TestSupport
import Testing

/// Issue 35, item 4: every backup and restore that tried leaves its outcome in the profile,
/// and `status` shows it and exits by it, so `status --max-age 36h` is a monitoring check.
@Suite(.serialized) final class LastRunTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
    }

    var lastRunPath: String {
        phone.folder.appendingPathComponent("config/cloudbackup/default/last-run.json").path
    }

    /// A backup whose Drive is unreachable: exit 5 after the retries.
    func failingBackup() throws -> RunResult {
        var environment = phone.environment
        environment["CLOUDBACKUP_DRIVE_URL"] = "http://127.0.0.1:1"
        let result = try cloudbackup(
            ["backup", "--file", phone.state.path, "--now", BackupMachine.now],
            environment: environment)
        try #require(result.status == 5, "\(result.stderr)")
        return result
    }

    func json(_ result: RunResult) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// The last run's `status` line, found by its label.
    func lastRunLine(_ result: RunResult) -> String? {
        result.stdout.split(separator: "\n").first { $0.hasPrefix("last run") }.map(String.init)
    }

    @Test func statusAfterAFailedBackupShowsItAndExits8() throws {
        #expect(try phone.backup().status == 0)
        let failed = try failingBackup()
        let reason = String(
            try #require(failed.stderr.split(separator: "\n").first).dropFirst(
                "cloudbackup: ".count))

        let text = try phone.run(["status"])
        #expect(text.status == 8, "\(text.stderr)")
        let line = try #require(lastRunLine(text))
        #expect(line.contains("backup failed "), "\(line)")
        #expect(line.hasSuffix(", exit 5: " + reason), "\(line)")
        // The success before it stays beside it.
        #expect(text.stdout.contains("last backup"))
        #expect(!text.stdout.contains("never from this profile"))
        #expect(text.stderr.split(separator: "\n").count == 1)
        #expect(text.stderr.contains("the last backup failed (exit 5"))

        let object = try json(try phone.run(["status", "--json"]))
        let run = try #require(object["lastRun"] as? [String: Any])
        #expect(run["outcome"] as? String == "failed")
        #expect(run["exitCode"] as? Int == 5)
        #expect(run["reason"] as? String == reason)
        #expect(run["command"] as? String == "backup")
        let at = try #require(run["at"] as? String)
        #expect(at.hasSuffix("Z"))
        let when = try #require(ISO8601DateFormatter.withFractions.date(from: at))
        #expect(abs(when.timeIntervalSinceNow) < 120)

        var info = stat()
        #expect(stat(lastRunPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }

    @Test func aSuccessAfterAFailureIsOkAndExits0() throws {
        _ = try failingBackup()
        #expect(try phone.backup().status == 0)
        let text = try phone.run(["status"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(try #require(lastRunLine(text)).contains("backup ok "))
        let json = try phone.run(["status", "--json"])
        #expect(json.status == 0)
        let run = try #require(try self.json(json)["lastRun"] as? [String: Any])
        #expect(run["outcome"] as? String == "ok")
        #expect(run["exitCode"] as? Int == 0)
        #expect(run["reason"] is NSNull)
    }

    @Test func aRestoreIsRecordedToo() throws {
        #expect(try phone.backup().status == 0)
        let restored = try phone.run(["restore", "--file", phone.state.path, "--merge", "--yes"])
        #expect(restored.status == 0, "\(restored.stderr)")
        let run = try #require(
            try json(try phone.run(["status", "--json"]))["lastRun"] as? [String: Any])
        #expect(run["command"] as? String == "restore")
        #expect(run["outcome"] as? String == "ok")
    }

    /// Runs that never tried leave the record as it was: a usage error, a dry run, a run
    /// whose profile cannot be loaded.
    @Test func onlyRunsThatTriedAreRecorded() throws {
        #expect(try phone.run(["backup", "--file", phone.state.path, "--bogus"]).status == 2)
        #expect(try phone.backup(["--dry-run"]).status == 0)
        _ = try emulator.seedBackup(
            backupJSON(device: "tablet", challenges: ["B": "2026-11-02T00:00:00.000Z"]))
        let noSuchRevision = try phone.run([
            "restore", "--file", phone.state.path, "--merge", "--yes", "--revision", "nosuch",
        ])
        #expect(noSuchRevision.status == 2, "\(noSuchRevision.stderr)")
        #expect(
            try phone.run(["restore", "--file", phone.state.path, "--merge", "--dry-run"]).status
                == 0)
        #expect(!LocalFile.exists(lastRunPath))
        #expect(try phone.run(["status"]).stdout.contains("none recorded"))
        // A profile that cannot be loaded has nowhere trustworthy to record it.
        let config = phone.folder.appendingPathComponent("config/cloudbackup/default/config.json")
        try Data("{".utf8).write(to: config)
        #expect(try phone.backup().status == 3)
        #expect(!LocalFile.exists(lastRunPath))
    }

    /// A restore answered no to did not fail: the record still shows the run before it.
    @Test func aRestoreAnsweredNoIsNotRecorded() throws {
        #expect(try phone.backup().status == 0)
        try phone.write(backupJSON(device: "phone", challenges: ["B": "2026-11-02T00:00:00.000Z"]))
        let cancelled = try phone.runOnATerminal(
            ["restore", "--file", phone.state.path, "--replace", "--now", BackupMachine.now],
            answering: "n")
        #expect(cancelled.status == 1)
        #expect(cancelled.stderr.contains("restore cancelled"))
        let run = try #require(
            try json(try phone.run(["status", "--json"]))["lastRun"] as? [String: Any])
        #expect(run["command"] as? String == "backup")
        #expect(run["outcome"] as? String == "ok")
    }

    /// A record that cannot be written is worth a warning after a success (status would show
    /// the run before it), and nothing more after a failure, which is said already.
    @Test func aRecordThatCannotBeWrittenWarnsOnlyAfterASuccess() throws {
        try FileManager.default.createDirectory(
            atPath: lastRunPath, withIntermediateDirectories: false)
        let backedUp = try phone.backup()
        #expect(backedUp.status == 0)
        #expect(backedUp.stderr.split(separator: "\n").count == 1, "\(backedUp.stderr)")
        #expect(backedUp.stderr.contains("'cloudbackup status' will show the run before this one"))
        let failed = try failingBackup()
        #expect(failed.stderr.split(separator: "\n").count == 1, "\(failed.stderr)")
    }

    /// Another run holding the lock means this one did not back up: a failed attempt.
    @Test func aLockHeldRunIsAFailedAttempt() throws {
        #expect(try phone.backup().status == 0)
        let lock = try FileLock(
            path: phone.folder.appendingPathComponent("config/cloudbackup/default/lock").path)
        #expect(try phone.backup().status == 6)
        _ = lock
        let status = try phone.run(["status", "--json"])
        #expect(status.status == 8)
        #expect((try json(status)["lastRun"] as? [String: Any])?["exitCode"] as? Int == 6)
    }

    @Test func maxAgeIsFreshWithinItAndExits9Past() throws {
        // No success yet counts as too old.
        let never = try phone.run(["status", "--max-age", "36h"])
        #expect(never.status == 9, "\(never.stderr)")
        #expect(never.stderr.contains("no successful backup from this profile yet"))

        #expect(try phone.backup().status == 0)
        let day = 86_400.0
        let fresh = try phone.run(["status", "--max-age", "36h", "--now", Self.stamp(day)])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stderr.isEmpty)
        let old = try phone.run(["status", "--max-age", "36h", "--now", Self.stamp(2 * day)])
        #expect(old.status == 9)
        #expect(old.stderr.split(separator: "\n").count == 1)
        #expect(old.stderr.contains("is older than --max-age 36h"))
        #expect(
            try phone.run(["status", "--max-age", "1d12h", "--now", Self.stamp(day)]).status == 0)
    }

    @Test(arguments: ["soon", "36x", "400d", ""])
    func aBadMaxAgeIsAUsageErrorNamingTheOption(text: String) throws {
        let result = try phone.run(["status", "--max-age", text])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--max-age expects a duration such as 36h"))
    }

    /// A login Google refused is no login: the report never says "logged in", and the problem
    /// is said once, on stderr.
    @Test func aRevokedLoginIsNeverLoggedInAndSaidOnce() throws {
        #expect(try phone.backup().status == 0)
        try emulator.revokeAll()
        try emulator.expireAccessTokens()
        let text = try phone.run(["status", "--remote"])
        #expect(text.status == 4)
        let login = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("login") })
        #expect(login.contains("not logged in"), "\(login)")
        #expect(!text.stdout.contains("logged in (\(phone.tokenPath))"), "\(text.stdout)")
        #expect(!text.stdout.contains("access token"))
        let all = text.stdout + text.stderr
        #expect(all.components(separatedBy: "revoked or expired").count == 2, "\(all)")
        #expect(text.stderr.split(separator: "\n").count == 1)

        let json = try phone.run(["status", "--remote", "--json"])
        #expect(json.status == 4)
        #expect((try self.json(json)["login"] as? [String: Any])?["loggedIn"] as? Bool == false)

        // The backup that meets the refusal records it, its reason naming no token.
        let saved = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: phone.tokenPath)))
                as? [String: Any])
        let tokens = saved.filter { $0.key.lowercased().contains("token") }.compactMap {
            $0.value as? String
        }
        try #require(tokens.count >= 2, "\(saved.keys)")
        #expect(try phone.backup().status == 4)
        let record = try String(contentsOfFile: lastRunPath, encoding: .utf8)
        #expect(record.contains("revoked or expired"), "\(record)")
        #expect(tokens.allSatisfy { !record.contains($0) })
        #expect(try phone.run(["status"]).status == 8)
    }

    /// RFC 3339 UTC, `seconds` from now.
    static func stamp(_ seconds: Double) -> String {
        ISO8601DateFormatter().string(from: Date().addingTimeInterval(seconds))
    }
}

extension ISO8601DateFormatter {
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
