import BackupKit
import Foundation
import LocalFiles
import TestSupport
import Testing

/// `history` and the point-in-time restore (`restore --revision`, `--as-of`) against the
/// emulator's own revisions, and the pins a backup makes.
@Suite(.serialized) final class HistoryTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
    }

    /// Three backups a day apart on Drive's clock: {A}, {A, B}, {A, B, C}.
    private func threeDays() throws -> [EmulatorRevision] {
        var challenges: [String: String] = [:]
        for (day, id) in ["A", "B", "C"].enumerated() {
            try emulator.setClockOffset(Double(day - 2) * 86_400)
            challenges[id] = "2026-11-0\(day + 1)T00:00:00.000Z"
            try phone.write(backupJSON(device: "phone", challenges: challenges))
            let result = try phone.backup()
            try #require(result.status == 0, "\(result.stderr)")
        }
        try emulator.setClockOffset(0)
        return try #require(try emulator.files().first).revisions
    }

    private func restored() throws -> [String] {
        challengeIDs(try BackupReader.read(Array(Data(contentsOf: phone.state))).document)
    }

    /// Before any backup, history and rollback say so with exit 10, not as an invalid file
    /// (3), and rollback writes nothing.
    @Test func historyAndRollbackBeforeAnyBackupAreExit10() throws {
        let history = try phone.run(["history"])
        #expect(history.status == 10)
        #expect(
            history.stderr
                == "cloudbackup: there is no backup on Drive yet (no 'habit-backup.json' in this account's app folder); no history; run 'cloudbackup backup' on the device that has the data\n"
        )
        let text = backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"])
        try phone.write(text)
        let rollback = try phone.run([
            "rollback", "--file", phone.state.path, "--revision", "r1", "--yes",
        ])
        #expect(rollback.status == 10, "\(rollback.stderr)")
        #expect(rollback.stderr.contains("there is no backup on Drive yet"))
        #expect(rollback.stderr.contains("nothing to roll back"))
        #expect(try String(contentsOf: phone.state, encoding: .utf8) == text)
        #expect(try emulator.files().isEmpty)
    }

    /// `-q` on the Drive commands that print results: nothing on stdout, the work done.
    @Test func quietDriveCommandsPrintNothingAndStillWork() throws {
        _ = try threeDays()
        for command in [["history", "-q"], ["status", "--quiet"]] {
            let result = try phone.run(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(command): \(result.stdout)")
        }
        try phone.write(backupJSON(device: "phone", challenges: [:]))
        let restore = try phone.run([
            "restore", "--file", phone.state.path, "--merge", "--yes", "-q", "--now",
            BackupMachine.now,
        ])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restore.stdout.isEmpty, "\(restore.stdout)")
        #expect(try restored() == ["A", "B", "C"])
    }

    @Test func historyListsEveryRevisionOldestFirstWithWhatItHolds() throws {
        let revisions = try threeDays()
        let start = try emulator.log().count
        let result = try phone.run(["history", "--contents", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let listed = try #require(object["revisions"] as? [[String: Any]])
        #expect(listed.compactMap { $0["id"] as? String } == revisions.map(\.id))
        #expect(
            listed.compactMap { $0["modifiedTime"] as? String } == revisions.map(\.modifiedTime))
        let counts = listed.compactMap { ($0["contents"] as? [String: Any])?["challenges"] as? Int }
        #expect(counts == [1, 2, 3])
        #expect(
            try emulator.log().dropFirst(start).filter { $0.query["alt"] == "media" }.count == 3)
        // Known by checksum now: a second call downloads nothing.
        let again = try emulator.log().count
        let text = try phone.run(["history", "--contents"])
        #expect(text.status == 0)
        #expect(try emulator.log().dropFirst(again).filter { $0.query["alt"] == "media" }.isEmpty)
        #expect(text.stdout.contains("3 challenge(s)"))
        #expect(text.stdout.contains("(\(revisions[0].modifiedTime))"))
    }

    @Test func aRevisionDriveNoLongerServesIsListedAsSuch() throws {
        let revisions = try threeDays()
        let file = try #require(try emulator.files().first)
        try emulator.inject(
            .status(
                404, count: 1, reason: "notFound",
                paths: ["/drive/v3/files/\(file.id)/revisions/\(revisions[0].id)"]))
        let result = try phone.run(["history", "--contents"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("not readable: Drive no longer keeps its bytes"))
        #expect(result.stdout.contains("2 challenge(s)"))
    }

    @Test func restoreByRevisionTakesThatVersion() throws {
        let revisions = try threeDays()
        let result = try phone.run([
            "restore", "--file", phone.state.path, "--replace", "--yes", "--revision",
            revisions[0].id, "--now", BackupMachine.now,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("revision \(revisions[0].id)"))
        #expect(try restored() == ["A"])
    }

    @Test func restoreAsOfTakesTheNewestRevisionAtOrBeforeTheTime() throws {
        let revisions = try threeDays()
        let second = try #require(Timestamp(revisions[1].modifiedTime))
        let cases: [(time: String, expected: [String])] = [
            // Between the second and the third upload, and exactly on the second.
            (
                Timestamp(millisecondsSince1970: second.millisecondsSince1970 + 3_600_000)
                    .description, ["A", "B"]
            ),
            (second.description, ["A", "B"]),
            (Timestamp(millisecondsSince1970: second.millisecondsSince1970 - 1).description, ["A"]),
        ]
        for (time, expected) in cases {
            try? FileManager.default.removeItem(at: phone.state)
            let result = try phone.run([
                "restore", "--file", phone.state.path, "--replace", "--yes", "--as-of", time,
                "--now", BackupMachine.now,
            ])
            #expect(result.status == 0, "\(time): \(result.stderr)")
            #expect(try restored() == expected, "\(time)")
        }
    }

    @Test func aTimeBeforeTheOldestOrAnUnknownIDIsAUsageErrorNamingTheOldest() throws {
        let revisions = try threeDays()
        let state = try Data(contentsOf: phone.state)
        for option in [["--as-of", "2026-01-01"], ["--revision", "no-such-revision"]] {
            let result = try phone.run(
                ["restore", "--file", phone.state.path, "--merge", "--yes"] + option)
            #expect(result.status == 2, "\(option): \(result.stderr)")
            #expect(result.stderr.contains(revisions[0].modifiedTime), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(try Data(contentsOf: phone.state) == state)
        }
    }

    @Test func aDryRunOfAnOldRevisionWritesNothingAnywhere() throws {
        let revisions = try threeDays()
        let state = try Data(contentsOf: phone.state)
        let before = try emulator.files()
        let result = try phone.run([
            "restore", "--file", phone.state.path, "--merge", "--dry-run", "--revision",
            revisions[0].id, "--now", BackupMachine.now,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("dry run: nothing written"))
        #expect(try Data(contentsOf: phone.state) == state)
        #expect(!LocalFile.exists(phone.state.path + ".bak"))
        let after = try emulator.files()
        #expect(after.map(\.revisions.count) == before.map(\.revisions.count))
        #expect(after.map(\.md5Checksum) == before.map(\.md5Checksum))
        #expect(
            after.flatMap(\.revisions).map(\.keepForever)
                == before.flatMap(\.revisions).map(\.keepForever))
    }

    /// An old revision is likely to predate the tombstone window: its challenges missing here
    /// and last edited before the window are held back unless `--allow-stale`.
    @Test func anOldRevisionIsHeldBackByTheStaleGuard() throws {
        try phone.write(
            backupJSON(
                device: "phone", challenges: ["OLD": "2026-05-01T00:00:00.000Z"],
                exportedAt: "2026-05-02T00:00:00.000Z"))
        try #require(try phone.backup(["--now", "2026-05-02T00:00:00Z"]).status == 0)
        let old = try #require(try emulator.files().first?.revisions.first)
        try phone.write(
            backupJSON(device: "phone", challenges: ["NEW": "2026-11-20T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        let arguments = [
            "restore", "--file", phone.state.path, "--merge", "--yes", "--revision", old.id,
            "--now", BackupMachine.now,
        ]
        let held = try phone.run(arguments)
        #expect(held.status == 0, "\(held.stderr)")
        #expect(held.stdout.contains("were held back"), "\(held.stdout)")
        #expect(try restored() == ["NEW"])
        #expect(try phone.run(arguments + ["--allow-stale"]).status == 0)
        #expect(try restored() == ["NEW", "OLD"])
    }

    @Test func aBackupPinsTheFirstUploadOfTheDayUnlessKeepIsOff() throws {
        _ = try threeDays()
        let pinned = try #require(try emulator.files().first).revisions.map(\.keepForever)
        #expect(pinned == [true, true, true], "each the first of its day")
        // A second upload the same day is not pinned.
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: [
                    "A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z",
                    "C": "2026-11-03T00:00:00.000Z", "D": "2026-11-04T00:00:00.000Z",
                ]))
        #expect(try phone.backup().status == 0)
        #expect(try #require(try emulator.files().first).revisions.last?.keepForever == false)
        let status = try phone.run(["status", "--remote", "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let remote = try #require(object["remote"] as? [String: Any])
        #expect(remote["pinnedRevisions"] as? Int == 3)
        #expect(remote["revisions"] as? Int == 4)
        #expect((remote["pinnedBytes"] as? Int ?? 0) > 0)
    }

    @Test func keepFalsePinsNothingAndABadKeepIsRefused() throws {
        let config = phone.folder.appendingPathComponent("config/cloudbackup/default/config.json")
        try LocalFile.writeAtomically(Array(#"{"keep": false}"#.utf8), to: config.path, mode: 0o600)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        #expect(try #require(try emulator.files().first).revisions.allSatisfy { !$0.keepForever })
        try LocalFile.writeAtomically(
            Array(#"{"keep": {"daily": -1}}"#.utf8), to: config.path, mode: 0o600)
        let refused = try phone.backup()
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("keep.daily"), "\(refused.stderr)")
    }

    /// A pin that fails never fails the backup: one warning, and the next backup, even one
    /// with nothing to upload, tries again.
    @Test func aPinThatFailsIsTriedAgainByTheNextBackup() throws {
        let file = try emulator.seedBackup(
            backupJSON(device: "tablet", challenges: ["T": "2026-11-01T00:00:00.000Z"]))
        try emulator.inject(
            .status(503, count: 100, paths: ["/drive/v3/files/\(file.id)/revisions/"]))
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let failed = try phone.backup()
        #expect(failed.status == 0, "\(failed.stderr)")
        #expect(failed.stderr.contains("could not pin or release"), "\(failed.stderr)")
        #expect(failed.stderr.split(separator: "\n").count == 1)
        #expect(try #require(try emulator.files().first).revisions.allSatisfy { !$0.keepForever })
        try emulator.clearFaults()
        let next = try phone.backup()
        #expect(next.status == 0, "\(next.stderr)")
        // Today's first upload (the tablet's) is the one the policy names.
        #expect(try #require(try emulator.files().first).revisions.first?.keepForever == true)
        #expect(
            !LocalFile.exists(
                phone.folder.appendingPathComponent("config/cloudbackup/default/retention-due.json")
                    .path))
        let again = try emulator.log().count
        #expect(try phone.backup().status == 0)
        #expect(try emulator.log().count == again + 1, "done: no more retention requests")
    }
}
