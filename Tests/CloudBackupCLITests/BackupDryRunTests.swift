import Foundation
import LocalFiles
import TestSupport
import Testing

/// `backup --dry-run` (`-n`): downloads and merges as a backup would, prints what the upload
/// would bring in restore's words, and uploads, deletes and writes nothing, not even the
/// profile's own records.
@Suite(.serialized) final class BackupDryRunTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
    }

    private var profileFolder: URL {
        phone.folder.appendingPathComponent("config/cloudbackup/default")
    }

    /// Every file of the profile's folder and its bytes, to show a dry run changed none.
    private func profileFiles() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: profileFolder.path) {
            files[name] = try Data(contentsOf: profileFolder.appendingPathComponent(name))
        }
        return files
    }

    /// Runs a dry run and returns it with the kinds of Drive requests it made.
    private func dryRun(_ flag: String = "--dry-run", _ extra: [String] = []) throws -> (
        result: RunResult, requests: [String]
    ) {
        let start = try emulator.log().count
        let result = try phone.backup([flag] + extra)
        try #require(result.status == 0, "\(result.stderr)")
        return (result, try emulator.log().dropFirst(start).map(\.kind))
    }

    @Test func aFirstDryRunSaysWhatANewBackupWouldHoldAndCreatesNothing() throws {
        try phone.write(
            backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"], logs: 2))
        let run = try dryRun("-n")
        #expect(run.requests == ["list"])
        #expect(try emulator.files().isEmpty)
        let lines = run.result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(phone.state.path) → a new backup (none on Drive yet):")
        #expect(lines.contains("  challenges: 1 added"))
        #expect(lines.contains("  day logs: 2 added"))
        #expect(lines.contains("  settings: \(phone.state.path)'s, as the backup is new"))
        #expect(lines.last?.hasPrefix("dry run: ") == true)
        #expect(
            lines.last?.hasSuffix(" bytes would be uploaded; nothing uploaded or written") == true)
        #expect(lines.filter { $0.contains("dry run") }.count == 1)
        #expect(run.result.stderr.isEmpty)
    }

    /// As the first real backup does, a first dry run warns of items stamped far ahead.
    @Test func aFirstDryRunWarnsOfItemsStampedInTheFuture() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2027-06-01T00:00:00.000Z"]))
        let start = try emulator.log().count
        let result = try phone.backup(["-n"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("is stamped 2027-06-01T00:00:00.000Z, more than 24 h after now"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(try emulator.log().dropFirst(start).map(\.kind) == ["list"])
    }

    @Test func aDryRunCountsWhatStateBringsAndLeavesDriveAndTheProfileAlone() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let before = try remoteBackups(emulator)
        let records = try profileFiles()
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-02T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"]))
        let run = try dryRun()
        #expect(!run.requests.contains { $0.contains("upload") || $0.hasPrefix("DELETE") })
        #expect(run.requests.contains("download"))
        let lines = run.result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("\(phone.state.path) → the backup (exported ") == true)
        #expect(lines.contains("  challenges: 1 added, 1 updated"))
        #expect(lines.contains("  settings: unchanged"))
        #expect(
            lines.last?.hasSuffix(" bytes would be uploaded; nothing uploaded or written") == true)
        let after = try remoteBackups(emulator)
        #expect(after.map(\.file.headRevisionId) == before.map(\.file.headRevisionId))
        #expect(after.first?.document.challenges.count == 1)
        #expect(try profileFiles() == records)
        // The same STATE, backed up for real, brings what the dry run said.
        let real = try phone.backup(["--verbose"])
        #expect(real.status == 0, "\(real.stderr)")
        #expect(real.stderr.contains("cloudbackup:   challenges: 1 added, 1 updated"))
        #expect(try remoteBackups(emulator).first?.document.challenges.count == 2)
    }

    @Test func aDryRunOfAStateTheBackupHoldsSaysNothingWouldGoUp() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let run = try dryRun()
        #expect(
            run.result.stdout.hasSuffix(
                "\ndry run: the backup already holds everything in \(phone.state.path); nothing would be uploaded\n"
            ))
        #expect(run.result.stdout.contains("  challenges: 1 unchanged\n"))
    }

    /// The counts as `restore --dry-run --json` gives them: the merge report object.
    @Test func aJSONDryRunPrintsTheMergeReport() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"]))
        let run = try dryRun("-n", ["--json"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(run.result.stdout.utf8)) as? [String: Any])
        let challenges = try #require(report["challenges"] as? [String: Int])
        #expect(challenges["added"] == 1)
        #expect(challenges["unchanged"] == 1)
        #expect(run.result.stdout.split(separator: "\n").count == 1)
    }

    /// Like a restore's dry run it takes no lock: it writes nothing another run could race.
    @Test func aDryRunGoesAheadWhileAnotherRunHoldsTheLock() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let held = try #require(
            try FileLock(path: profileFolder.appendingPathComponent("lock").path))
        #expect(try phone.backup(["-n"]).status == 0)
        #expect(try phone.backup().status == 6)
        _ = held
    }
}
