import BackupKit
import BackupSync
import Foundation
import TestSupport
import Testing

/// What `backup` does when the profile's records of a finished backup cannot be saved.
extension BackupCommandTests {
    /// FORMAT.md §8.1: exit 1 is an unexpected failure. Once Drive holds the new content, a profile
    /// record that cannot be saved is a warning, and the run succeeded.
    @Test(arguments: ["kept-copy.json", "last-backup.json", "synced-settings.json"])
    func aBackupThatCannotSaveItsProfileRecordStillSucceeds(record: String) throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        // A directory where the file goes: no rename can replace it, as root too.
        let path = phone.keptCopy.deletingLastPathComponent().appendingPathComponent(record)
        try? FileManager.default.removeItem(at: path)
        try FileManager.default.createDirectory(
            at: path.appendingPathComponent("in-the-way"), withIntermediateDirectories: true)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("cloudbackup: warning: ") == true)
        #expect(result.stderr.contains(path.path))
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A", "B"]])
    }

    @Test func theKeptCopyWarningSaysTheNextBackupDownloadsAgain() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try FileManager.default.createDirectory(
            at: phone.keptCopy.appendingPathComponent("in-the-way"),
            withIntermediateDirectories: true)
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("the next backup will download the file again"))
    }
}
