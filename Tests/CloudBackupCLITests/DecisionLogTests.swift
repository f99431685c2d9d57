import BackupKit
import Foundation
import LocalFiles
import TestSupport
import Testing

@testable import CloudBackupCLI

/// The profile's decision log: every non-trivial decision of the merges `backup` and
/// `restore --merge` make, and `cloudbackup log`, which prints them.
@Suite(.serialized) final class DecisionLogTests {
    let emulator: Emulator
    let phone: BackupMachine
    let laptop: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        laptop = try BackupMachine(emulator)
        try phone.login()
        try laptop.login()
    }

    private var logPath: String {
        phone.folder.appendingPathComponent("config/cloudbackup/default/decisions.jsonl").path
    }

    private func log(_ arguments: String...) throws -> RunResult {
        try phone.run(["log"] + arguments)
    }

    /// A document with tombstones added to `backupJSON`'s.
    private func withTombstones(_ json: String, _ tombstones: [String: String]) -> String {
        let items = tombstones.map { #""\#($0.key)":{"deletedAt":"\#($0.value)"}"# }
        return json.replacingOccurrences(
            of: #""tombstones":{}"#, with: #""tombstones":{\#(items.joined(separator: ","))}"#)
    }

    /// The laptop edited A at 10:05 and backed up; the phone's older edit of 10:02 loses in the
    /// phone's backup, and a delete of B on Drive is undone by the phone's later edit of B.
    @Test func aBackupLogsWhoseEditWonAndWhy() throws {
        try laptop.write(
            withTombstones(
                backupJSON(device: "laptop", challenges: ["A": "2026-11-20T10:05:00.000Z"]),
                ["B": "2026-11-10T00:00:00.000Z"]))
        #expect(try laptop.backup().status == 0)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-20T10:02:00.000Z", "B": "2026-11-15T00:00:00.000Z"]))
        let backup = try phone.backup()
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(try remoteBackups(emulator).first.map { challengeIDs($0.document) } == ["A", "B"])

        let shown = try log()
        #expect(shown.status == 0, "\(shown.stderr)")
        let lines = shown.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(shown.stdout)")
        let state = "STATE (\(phone.state.path))"
        #expect(
            lines[0].hasSuffix(
                " backup: \(state) merged into the backup on Drive (revision "
                    + "\(try #require(try emulator.files().first).revisions[0].id))"))
        #expect(
            lines[1]
                == "  challenge A 'Challenge A': the backup on Drive (revision \(try #require(try emulator.files().first).revisions[0].id))'s edit of 2026-11-20 10:05:00 +0000 won over \(state)'s edit of 2026-11-20 10:02:00 +0000 (newer updatedAt)"
        )
        #expect(
            lines[2].hasPrefix(
                "  challenge B 'Challenge B': \(state)'s edit of 2026-11-15 00:00:00 +0000 won over"
            ))
        #expect(lines[2].hasSuffix("(edited after the delete, so it returns)"))

        let onlyB = try log("--item", "B")
        #expect(onlyB.stdout.split(separator: "\n").count == 2)
        #expect(!onlyB.stdout.contains("challenge A"))
        let json = try log("--json")
        let stored = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(json.stdout == stored)
        #expect(stored.contains(#""reason":"editedAfterDelete""#))
        // The revision merged into, with its checksum: which bytes the decisions were made on.
        let merged = try #require(try emulator.files().first).revisions[0]
        #expect(
            stored.contains(
                #""revision":"\#(merged.id)","md5Checksum":"\#(merged.md5Checksum)""#))
        let mode =
            try FileManager.default.attributesOfItem(atPath: logPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// A restore whose backup predates the tombstone window holds back what STATE lacks: the
    /// log says so, with the rule.
    @Test func aRestoreLogsWhatTheStaleGuardHeldBack() throws {
        try laptop.write(
            backupJSON(device: "laptop", challenges: ["OLD": "2026-06-01T00:00:00.000Z"]))
        #expect(try laptop.backup().status == 0)
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2027-06-01T00:00:00.000Z"]))
        let restored = try phone.run([
            "restore", "--file", phone.state.path, "--merge", "--yes", "--now",
            "2027-06-02T00:00:00Z",
        ])
        #expect(restored.status == 0, "\(restored.stderr)")
        let shown = try log("--item", "OLD")
        #expect(shown.stdout.contains(" restore: the backup on Drive"), "\(shown.stdout)")
        let revision = try #require(try emulator.files().first).revisions[0].id
        #expect(
            shown.stdout.hasSuffix(
                "  challenge OLD 'Challenge OLD': the backup on Drive (revision \(revision))'s edit of 2026-06-01 00:00:00 +0000 not taken (held back: missing here and older than the window, from a file that predates it)\n"
            ), "\(shown.stdout)")
    }

    /// A log that cannot be written costs one warning; the backup still succeeds.
    @Test func anUnwritableLogWarnsAndTheBackupSucceeds() throws {
        try laptop.write(
            backupJSON(device: "laptop", challenges: ["A": "2026-11-20T10:05:00.000Z"]))
        #expect(try laptop.backup().status == 0)
        try FileManager.default.createDirectory(atPath: logPath, withIntermediateDirectories: true)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-20T10:02:00.000Z"]))
        let backup = try phone.backup()
        #expect(backup.status == 0)
        let warnings = backup.stderr.split(separator: "\n")
        #expect(warnings.count == 1, "\(backup.stderr)")
        #expect(
            warnings.first?.hasSuffix(
                "the backup on Drive is complete, but this backup's merge decisions are not in the decision log"
            ) == true)
    }

    /// A log others can read is refused like every file of the user's data: the backup warns
    /// and adds nothing to it, and `log` exits 3 with the chmod advice.
    @Test func aLogOthersCanReadIsRefused() throws {
        try laptop.write(
            backupJSON(device: "laptop", challenges: ["A": "2026-11-20T10:05:00.000Z"]))
        #expect(try laptop.backup().status == 0)
        try LocalFile.writeAtomically(Array(), to: logPath, mode: 0o644)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-20T10:02:00.000Z"]))
        let backup = try phone.backup()
        #expect(backup.status == 0)
        #expect(backup.stderr.contains("run `chmod 600 \(logPath)`"), "\(backup.stderr)")
        #expect(try LocalFile.read(logPath).isEmpty)
        let shown = try log()
        #expect(shown.status == 3)
        #expect(shown.stderr.contains("permissions 0644 are too open for the decision log"))
    }

    /// `"decisionLog": {"days": 1}` keeps a day: a line from two days ago goes with the next
    /// merge's line (the default 90 days would keep it).
    @Test func theProfileSetsHowLongTheLogKeeps() throws {
        let config = phone.folder.appendingPathComponent("config/cloudbackup/default/config.json")
        try LocalFile.writeAtomically(
            Array(#"{"decisionLog": {"days": 1}}"#.utf8), to: config.path, mode: 0o600)
        let twoDaysAgo = ClockOptions.systemNow().adding(days: -2)
        try LocalFile.writeAtomically(
            Array(#"{"time":"\#(twoDaysAgo)","command":"backup","decisions":[]}"#.utf8 + [10]),
            to: logPath, mode: 0o600)
        try laptop.write(
            backupJSON(device: "laptop", challenges: ["A": "2026-11-20T10:05:00.000Z"]))
        #expect(try laptop.backup().status == 0)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-20T10:02:00.000Z"]))
        let backup = try phone.backup()
        #expect(backup.status == 0, "\(backup.stderr)")
        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains(#""key":"A""#) == true)

        try LocalFile.writeAtomically(
            Array(#"{"decisionLog": {"weeks": 1}}"#.utf8), to: config.path, mode: 0o600)
        let refused = try phone.backup()
        #expect(refused.status == 3)
        #expect(
            refused.stderr.contains("'decisionLog.weeks' must be days (1 to 3650) or megabytes"))
    }

    /// A profile that encrypts keeps keys and stamps only: no title reaches the log.
    @Test func anEncryptingProfilesLogHoldsNoTitles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "decisions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = try BackupReader.read(
            Array(backupJSON(device: "d", challenges: ["A": "2026-11-20T10:05:00.000Z"]).utf8)
        ).document
        let decision = MergeDecision(
            item: .challenge(ChallengeID(unchecked: "A")), winner: .local, reason: .newer,
            local: .init(isTombstone: false, stamp: document.challenges[0].updatedAt),
            incoming: .init(isTombstone: false, stamp: document.exportedAt))
        let side = DecisionLog.Side(role: "state", deviceId: document.deviceId)
        for (titles, expected) in [([document], true), (nil, false)] {
            let path = folder.appendingPathComponent("log-\(expected)").path
            try DecisionLog(path: path).append(
                command: "backup", at: document.exportedAt, local: side, incoming: side,
                decisions: [decision], titles: titles)
            let line = try String(contentsOfFile: path, encoding: .utf8)
            #expect(line.contains(#""title":"Challenge A""#) == expected, "\(line)")
        }
    }

    /// An append that would take the log over its size bound rewrites it with the oldest
    /// lines gone, whole; one under the bound only appends.
    @Test func anAppendOverTheSizeBoundDropsTheOldestLines() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "decisions-\(UUID().uuidString).jsonl"
        ).path
        defer { try? LocalFile.remove(path) }
        let now = try #require(Timestamp("2026-12-01T00:00:00.000Z"))
        let side = DecisionLog.Side(role: "state", deviceId: DeviceID(unchecked: "d"))
        var log = DecisionLog(path: path)
        func append(_ key: String) throws {
            let decision = MergeDecision(
                item: .challenge(ChallengeID(unchecked: key)), winner: .local, reason: .newer,
                local: .init(isTombstone: false, stamp: now), incoming: nil)
            try log.append(
                command: "backup", at: now, local: side, incoming: side, decisions: [decision],
                titles: nil)
        }
        try append("A")
        let one = try LocalFile.read(path).count
        log.bounds.bytes = one * 2
        try append("B")
        try append("C")
        let keys = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            $0.contains(#""key":"B""#) ? "B" : $0.contains(#""key":"C""#) ? "C" : "A"
        }
        #expect(keys == ["B", "C"])
    }

    /// Trimming drops whole lines: those older than the age limit, then the oldest until the
    /// rest and the new line fit the size limit.
    @Test func trimmingKeepsWholeLines() throws {
        var log = DecisionLog(path: "/unused")
        let now = try #require(Timestamp("2026-12-01T00:00:00.000Z"))
        func line(_ time: String, _ pad: Int = 0) -> String {
            #"{"time":"\#(time)","pad":"\#(String(repeating: "x", count: pad))"}"#
        }
        let old = [
            line("2026-08-01T00:00:00.000Z"), line("2026-11-01T00:00:00.000Z", 40),
            line("2026-11-02T00:00:00.000Z"),
        ]
        let new = line("2026-12-01T00:00:00.000Z")
        let trimmed = log.trimmed(
            Array((old.joined(separator: "\n") + "\n").utf8), adding: Array(new.utf8), now: now)
        #expect(
            String(decoding: trimmed, as: UTF8.self) == [old[1], old[2], new].joined(
                separator: "\n") + "\n")
        log.bounds.bytes = old[2].utf8.count + new.utf8.count + 2
        let small = log.trimmed(
            Array((old.joined(separator: "\n") + "\n").utf8), adding: Array(new.utf8), now: now)
        #expect(
            String(decoding: small, as: UTF8.self) == [old[2], new].joined(separator: "\n") + "\n")
    }
}
