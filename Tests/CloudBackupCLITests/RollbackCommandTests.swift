import BackupKit
import Foundation
import TestSupport
import Testing

/// `cloudbackup rollback` end to end: a bad change undone on every device, not only on the
/// device that ran it.
@Suite(.serialized) final class RollbackCommandTests {
    let emulator: Emulator
    let phone: BackupMachine
    let laptop: BackupMachine
    /// The good revision ({A}) and the head after the bad change ({A, BAD}).
    var good = ""
    var bad = ""

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        laptop = try BackupMachine(emulator)
        try phone.login()
        try laptop.login()
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "BAD": "2026-11-20T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        let revisions = try #require(try emulator.files().first).revisions
        try #require(revisions.count == 2)
        (good, bad) = (revisions[0].id, revisions[1].id)
        // The laptop has the bad change too.
        try laptop.write(backupJSON(device: "laptop", challenges: [:]))
        try #require(try restore(laptop).status == 0)
        try #require(try ids(laptop) == ["A", "BAD"])
    }

    private func rollback(_ arguments: String...) throws -> RunResult {
        try phone.run(
            ["rollback", "--file", phone.state.path, "--now", BackupMachine.now] + arguments)
    }

    private func restore(_ machine: BackupMachine) throws -> RunResult {
        try machine.run([
            "restore", "--file", machine.state.path, "--merge", "--yes", "--now", BackupMachine.now,
        ])
    }

    private func ids(_ machine: BackupMachine) throws -> [String] {
        challengeIDs(try BackupReader.read(Array(Data(contentsOf: machine.state))).document)
    }

    private func driveIDs() throws -> [String] {
        challengeIDs(try #require(try remoteBackups(emulator).first).document)
    }

    /// The story of the issue: after the rollback, Drive lacks BAD, the laptop's next
    /// `restore --merge` drops it, and the laptop's next backup does not bring it back. The
    /// replaced head is kept forever, and a rollback to it undoes the rollback.
    @Test func aRollbackUndoesTheBadChangeOnEveryDevice() throws {
        let phoneBefore = try Data(contentsOf: phone.state)
        let result = try rollback("--revision", good, "--yes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\n  challenges: 1 deleted\n"))
        // When Drive wrote it, as people read times: local (TZ=UTC here), with the offset.
        let written = try #require(try emulator.files().first).revisions[0].modifiedTime
        let local = "\(written.prefix(10)) \(written.dropFirst(11).prefix(8)) +0000"
        #expect(
            result.stdout.hasPrefix("revision \(good) (written \(local)) → the backup on Drive"))
        #expect(
            result.stdout.hasSuffix(
                "rolled back the backup on Drive (undo: cloudbackup rollback --revision \(bad)) and \(phone.state.path) (previous file kept as \(phone.state.path).bak)\n"
            ))
        #expect(try driveIDs() == ["A"])
        #expect(try ids(phone) == ["A"])
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: phone.state.path + ".bak")) == phoneBefore)
        let file = try #require(try emulator.files().first)
        #expect(file.revisions.first { $0.id == bad }?.keepForever == true)

        #expect(try restore(laptop).status == 0)
        #expect(try ids(laptop) == ["A"])
        #expect(try laptop.backup().status == 0)
        #expect(try driveIDs() == ["A"])

        let undo = try rollback("--revision", bad, "--yes")
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(try driveIDs() == ["A", "BAD"])
    }

    @Test func aDryRunShowsTheCountsAndWritesNothing() throws {
        let before = try Data(contentsOf: phone.state)
        let result = try rollback("--revision", good, "--dry-run", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == #"{"challenges":{"changedBack":0,"removed":1,"revived":0},"changes":1,"dayLogs":{"changedBack":0,"removed":0,"revived":0},"revision":"\#(good)"}"#
                + "\n")
        #expect(try Data(contentsOf: phone.state) == before)
        #expect(try #require(try emulator.files().first).revisions.count == 2)
        #expect(!FileManager.default.fileExists(atPath: phone.state.path + ".bak"))
    }

    /// Another device writes T while the rollback uploads, under every reading of If-Match:
    /// Drive ends with T kept and BAD gone.
    @Test(arguments: [Emulator.IfMatchEnforcement.honour, .openOnly, .ignore])
    func aRollbackRacingAnotherDevicesWriteLosesNeither(mode: Emulator.IfMatchEnforcement) throws {
        try emulator.configure(ifMatch: mode)
        let tablet = backupJSON(
            device: "tablet",
            challenges: [
                "A": "2026-11-01T00:00:00.000Z", "BAD": "2026-11-20T00:00:00.000Z",
                "T": "2026-11-25T00:00:00.000Z",
            ])
        try emulator.interleave(Data(tablet.utf8), name: "habit-backup.json", at: .write)
        let result = try rollback("--revision", good, "--yes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().contains { $0.interleaved == true }, "the race did not happen")
        #expect(try driveIDs() == ["A", "T"])
        #expect(try ids(phone) == ["A", "T"])
    }

    @Test func aRollbackToTheHeadChangesNothing() throws {
        let before = try Data(contentsOf: phone.state)
        let result = try rollback("--revision", bad, "--yes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.hasSuffix(
                "the backup on Drive holds that revision's content: nothing to roll back\n"))
        #expect(try #require(try emulator.files().first).revisions.count == 2)
        #expect(try Data(contentsOf: phone.state) == before)
    }

    /// A revision exported before the tombstone window needs --allow-stale: challenges
    /// deleted since may have lost their tombstones.
    @Test func aRevisionOlderThanTheWindowNeedsAllowStale() throws {
        let later = ["--now", "2027-06-01T00:00:00Z"]
        let refused = try phone.run(
            ["rollback", "--file", phone.state.path, "--revision", good, "--yes"] + later)
        #expect(refused.status == 2)
        #expect(refused.stderr.hasSuffix("pass --allow-stale to roll back to it anyway\n"))
        #expect(try driveIDs() == ["A", "BAD"])
        let allowed = try phone.run(
            ["rollback", "--file", phone.state.path, "--revision", good, "--yes", "--allow-stale"]
                + later)
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try driveIDs() == ["A"])
    }
}
