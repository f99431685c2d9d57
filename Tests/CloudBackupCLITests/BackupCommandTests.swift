import BackupKit
import Foundation
import LocalFiles
import TestSupport
import Testing

/// `cloudbackup backup` end to end: the built binary against the Google emulator.
@Suite(.serialized) final class BackupCommandTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
    }

    @Test func theFirstBackupCreatesExactlyOneFileAndLeavesStateAlone() throws {
        let text = backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"])
        try phone.write(text)
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.isEmpty)
        let remote = try remoteBackups(emulator)
        #expect(remote.count == 1)
        #expect(remote.first.map { challengeIDs($0.document) } == ["A"])
        #expect(try String(contentsOf: phone.state, encoding: .utf8) == text)
    }

    @Test func anIdenticalSecondBackupUploadsNothing() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let before = try remoteBackups(emulator)
        let logBefore = try emulator.log().count
        let second = try phone.backup(["--json"])
        #expect(second.status == 0)
        #expect(second.stdout.contains(#""result":"unchanged""#))
        let writes = try emulator.log().dropFirst(logBefore).filter { $0.method != "GET" }
        #expect(writes.isEmpty, "\(writes.map { "\($0.method) \($0.path)" })")
        #expect(try remoteBackups(emulator).map(\.file.version) == before.map(\.file.version))
    }

    @Test func aBackupAfterAnotherDevicesUploadKeepsBoth() throws {
        let laptop = try BackupMachine(emulator)
        try laptop.login()
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try laptop.write(
            backupJSON(device: "laptop", challenges: ["B": "2026-11-02T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        #expect(try laptop.backup().status == 0)
        let remote = try remoteBackups(emulator)
        #expect(remote.count == 1)
        #expect(remote.first.map { challengeIDs($0.document) } == ["A", "B"])
    }

    @Test func aWriteBetweenOurReadAndOurUploadIsMergedNotLost() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let other = backupJSON(
            device: "tablet",
            challenges: ["A": "2026-11-01T00:00:00.000Z", "C": "2026-11-03T00:00:00.000Z"])
        try emulator.interleave(Data(other.utf8), name: "habit-backup.json")
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"]))
        let result = try phone.backup(["--verbose"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().contains { $0.status == 412 })
        // Counted against the remote copy of the final round, which already had A and C.
        #expect(result.stderr.contains("cloudbackup:   challenges: 1 added, 2 unchanged"))
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A", "B", "C"]])
    }

    @Test func aWriteDuringALargeResumableUploadIsMergedNotLost() throws {
        let note = String(repeating: "m", count: 1_900)
        var challenges = challengeStamps(9, prefix: "L")
        try phone.write(backupJSON(device: "phone", challenges: challenges, logs: 365, note: note))
        #expect(try phone.backup().status == 0)
        try emulator.interleave(
            Data(backupJSON(device: "tablet", challenges: ["C": "2026-11-03T00:00:00.000Z"]).utf8),
            name: "habit-backup.json")
        challenges["B"] = "2026-11-02T00:00:00.000Z"
        try phone.write(backupJSON(device: "phone", challenges: challenges, logs: 365, note: note))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let log = try emulator.log()
        #expect(log.contains { $0.query["uploadType"] == "resumable" && $0.method == "PUT" })
        #expect(log.contains { $0.status == 412 })
        let ids = try remoteBackups(emulator).map { challengeIDs($0.document) }
        #expect(ids == [(challenges.keys + ["C"]).sorted()])
    }

    @Test func onATerminalALargeUploadShowsAProgressLine() throws {
        let challenges = challengeStamps(3, prefix: "P")
        try phone.write(
            backupJSON(
                device: "phone", challenges: challenges, logs: 365,
                note: String(repeating: "p", count: 1_000)))
        let result = try phone.runOnATerminal([
            "backup", "--file", phone.state.path, "--now", BackupMachine.now,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("\ruploading 1."))
        #expect(result.stderr.contains("MiB: 100%"))

        let quiet = try phone.runOnATerminal([
            "backup", "--file", phone.state.path, "--now", BackupMachine.now, "--quiet",
        ])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(!quiet.stderr.contains("MiB:"))
    }

    @Test func twoRemoteFilesAreMergedIntoOne() throws {
        try emulator.seedBackup(
            backupJSON(device: "old1", challenges: ["X": "2026-10-01T00:00:00.000Z"]))
        try emulator.seedBackup(
            backupJSON(device: "old2", challenges: ["Y": "2026-10-02T00:00:00.000Z"]))
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let remote = try remoteBackups(emulator)
        #expect(remote.count == 1)
        #expect(remote.first.map { challengeIDs($0.document) } == ["A", "X", "Y"])
    }

    @Test func anInvalidRemoteFileIsKeptAsADatedSideFile() throws {
        try emulator.seedBackup("{not json")
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("habit-backup.json.invalid-"))
        let side = try emulator.files().filter { $0.name.hasPrefix("habit-backup.json.invalid-") }
        #expect(side.map { String(decoding: $0.content, as: UTF8.self) } == ["{not json"])
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A"]])
    }

    /// A remote file over the size limit may be a genuine backup: refused (exit 3, saying how
    /// to raise the limit), not set aside and replaced; `--max-bytes` lets it in.
    @Test func aRemoteFileOverTheLimitIsRefusedUntilTheLimitIsRaised() throws {
        let big = try Data(contentsOf: Paths.file("Examples/phone.json"))
        _ = try emulator.seedFile(name: "habit-backup.json", content: big)
        let state = backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"])
        try #require(state.utf8.count < 4_000 && big.count > 4_000)
        try phone.write(state)
        let refused = try phone.backup(["--max-bytes", "4000"])
        #expect(refused.status == 3)
        #expect(
            refused.stderr.contains("bytes is over the 4000-byte limit; raise it with --max-bytes"))
        #expect(try emulator.files().map(\.content) == [big])

        let raised = try phone.backup(["--max-bytes", "\(big.count + 4_000)"])
        #expect(raised.status == 0, "\(raised.stderr)")
        #expect(
            try remoteBackups(emulator).first.map { challengeIDs($0.document) }?.contains("A")
                == true)
    }

    /// A merge that would grow the backup past the limit devices read it with is not
    /// uploaded: every device would refuse the backup from then on.
    @Test func aBackupThatWouldGrowPastTheLimitIsNotUploaded() throws {
        let remote = backupJSON(
            device: "laptop", challenges: ["A": "2026-11-01T00:00:00.000Z"], logs: 30)
        let state = backupJSON(
            device: "phone", challenges: ["B": "2026-11-01T00:00:00.000Z"], logs: 30)
        let limit = max(remote.utf8.count, state.utf8.count) + 200
        try #require(remote.utf8.count + state.utf8.count > limit + 1_000)
        try emulator.seedBackup(remote)
        try phone.write(state)
        let result = try phone.backup(["--max-bytes", "\(limit)"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("-byte limit devices read it with; nothing was uploaded"))
        #expect(try emulator.files().map(\.content) == [Data(remote.utf8)])
    }

    @Test func aRemoteFileFromANewerVersionIsRefusedNotReplaced() throws {
        let newer = Data(
            try String(
                contentsOf: Paths.file("Examples/invalid/schema-version-5-newer.json"),
                encoding: .utf8
            ).utf8)
        _ = try emulator.seedFile(name: "habit-backup.json", content: newer)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 7)
        #expect(result.stderr.contains("written by a newer version (schema 5); update cloudbackup"))
        let files = try emulator.files()
        #expect(files.map(\.content) == [newer])
    }

    struct FaultCase: Sendable, CustomTestStringConvertible {
        var name: String
        var fault: Emulator.Fault
        var testDescription: String { name }
    }

    @Test(arguments: [
        FaultCase(name: "429 storm with Retry-After", fault: .status(429, count: 3, retryAfter: 1)),
        FaultCase(name: "503s", fault: .status(503, count: 3)),
        FaultCase(
            name: "rate-limit 403s", fault: .status(403, count: 3, reason: "rateLimitExceeded")),
        FaultCase(name: "a cut connection", fault: .cut(count: 1)),
        FaultCase(name: "a cut before handling", fault: .cut(count: 2, beforeHandling: true)),
        FaultCase(name: "a truncated download", fault: .truncate(count: 1)),
    ])
    func transientFaultsEndInSuccess(_ faultCase: FaultCase) throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        // Without the kept copy the next run takes every kind of request: list, etag, download, upload.
        try FileManager.default.removeItem(at: phone.keptCopy)
        try emulator.inject(faultCase.fault)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().contains { $0.fault != nil })
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A", "B"]])
    }

    /// FORMAT.md §9.1: the retries cover the token endpoint too, or one 503 there fails the cron job.
    @Test func aTokenEndpointHiccupIsRetried() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try emulator.expireAccessTokens()
        try emulator.inject(.status(503, count: 2, paths: ["/token"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A"]])
    }

    @Test func aServerThatStaysDownEndsInExit5WithTheRemoteIntact() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let before = try remoteBackups(emulator).map(\.file.md5Checksum)
        try emulator.inject(.status(503, count: 1000))
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 5)
        #expect(result.stderr.contains("503"))
        try emulator.clearFaults()
        #expect(try remoteBackups(emulator).map(\.file.md5Checksum) == before)
    }

    @Test func aSecondRunExits6AtOnce() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let lockPath = phone.folder.appendingPathComponent("config/cloudbackup/default/lock").path
        let held = try #require(try FileLock(path: lockPath))
        let result = try phone.backup()
        #expect(result.status == 6)
        #expect(result.stderr.contains("lock"))
        #expect(try emulator.files().isEmpty)
        _ = held
    }

    @Test func anInvalidStateUploadsNothing() throws {
        try phone.write(#"{"format":"habit-backup","schemaVersion":3}"#)
        let logBefore = try emulator.log().count
        let result = try phone.backup()
        #expect(result.status == 3)
        #expect(result.stderr.contains(phone.state.path))
        #expect(try emulator.log().dropFirst(logBefore).isEmpty)
        #expect(try emulator.files().isEmpty)
    }

    @Test func anInvalidStateIsReportedBeforeAnyProfileProblem() throws {
        let home = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: home) }
        let invalid = Paths.file("Examples/invalid/mood-6.json").path
        let result = try cloudbackup(
            ["backup", "--file", invalid], environment: ["XDG_CONFIG_HOME": home.path])
        #expect(result.status == 3)
        #expect(result.stderr.contains("\(invalid): /dayLogs/"))
        #expect(!result.stderr.contains("client id"))
    }

    @Test func anExpiredAccessTokenIsRefreshedOnce() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try emulator.expireAccessTokens()
        let logBefore = try emulator.log().count
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let refreshes = try emulator.log().dropFirst(logBefore).filter {
            $0.grantType == "refresh_token"
        }
        #expect(refreshes.count == 1)
        #expect(try remoteBackups(emulator).count == 1)
    }

    @Test func aMachineThatNeverLoggedInExits4() throws {
        let stranger = try BackupMachine(emulator)
        try stranger.write(
            backupJSON(device: "stranger", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let result = try stranger.backup()
        #expect(result.status == 4)
        #expect(result.stderr.contains("cloudbackup login"))
        #expect(try emulator.files().isEmpty)
    }

    @Test func aRevokedLoginExits4() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try emulator.revokeAll()
        let result = try phone.backup()
        #expect(result.status == 4)
        #expect(result.stderr.contains("cloudbackup login"))
    }

    @Test func aTwentyMebibyteDocumentGoesThroughTheResumablePathAndComesBackIdentical() throws {
        let note = String(repeating: "n", count: 1_900)
        let challenges = challengeStamps(30, prefix: "C")
        let text = backupJSON(
            device: "phone", challenges: challenges, exportedAt: "2026-11-30T12:00:00.000Z",
            logs: 365, note: note)
        // Canonical bytes, so a byte-for-byte comparison after the round trip is meaningful.
        let canonical = BackupWriter.write(try BackupReader.read(Array(text.utf8)).document)
        try #require(canonical.count > 20 << 20)
        try Data(canonical).write(to: phone.state)
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().contains { $0.query["uploadType"] == "resumable" })
        #expect(try remoteBackups(emulator).map { Array($0.file.content) } == [canonical])

        let restored = try phone.run([
            "restore", "--file", phone.state.path, "--replace", "--yes", "--now", BackupMachine.now,
        ])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try Array(Data(contentsOf: phone.state)) == canonical)
    }

    @Test func statusShowsTheRemoteFileTheLastBackupAndLocalCounts() throws {
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let uploaded = try #require(try remoteBackups(emulator).first?.file)
        let fileID = uploaded.id
        let remote = uploaded.content
        let result = try phone.run(["status", "--remote", "--file", phone.state.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((object["remote"] as? [String: Any])?["id"] as? String == fileID)
        #expect((object["lastBackup"] as? [String: Any])?["fileId"] as? String == fileID)
        let last = try #require(object["lastBackup"] as? [String: Any])
        #expect(last["uploaded"] as? Bool == true)
        #expect(last["bytes"] as? Int == remote.count)
        #expect((object["local"] as? [String: Any])?["challenges"] as? Int == 2)

        let text = try phone.run(["status"])
        #expect(text.stdout.contains("last backup"))
        #expect(!text.stdout.contains("remote file"))
    }

    @Test func statusOfTwoRemoteFilesNamesEachOnceInJSON() throws {
        let first = try emulator.seedBackup(
            backupJSON(device: "old1", challenges: ["X": "2026-10-01T00:00:00.000Z"]))
        let second = try emulator.seedBackup(
            backupJSON(device: "old2", challenges: ["Y": "2026-10-02T00:00:00.000Z"]))
        let result = try phone.run(["status", "--remote", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        // Foundation keeps one of two equal keys silently; count them in the raw text too.
        #expect(result.stdout.components(separatedBy: #""id":"#).count == 2)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let remote = try #require(object["remote"] as? [String: Any])
        #expect(Set([remote["id"] as? String, remote["id2"] as? String]) == [first.id, second.id])
    }

    /// FORMAT.md §8.1 exit codes hold for status too: the report is printed, then the failure.
    @Test func statusRemoteExitsWithTheFailuresCode() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        try emulator.revokeAll()
        try emulator.expireAccessTokens()
        let revoked = try phone.run(["status", "--remote"])
        #expect(revoked.status == 4)
        #expect(revoked.stdout.contains("last backup"))
        #expect(revoked.stderr.split(separator: "\n").count == 1)
        #expect(revoked.stderr.contains("run `cloudbackup login`"))
    }

    /// The warning names what it held back and a way to let it in that exists: a restore
    /// merge brings STATE up to date (a fresh export time), and the next backup takes it.
    @Test func aStaleStateDoesNotReviveWhatTheBackupForgotAndSaysHowToKeepIt() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "OLD": "2026-06-01T00:00:00.000Z"],
                exportedAt: "2026-07-01T00:00:00.000Z"))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("warning: held back challenge OLD"))
        #expect(!result.stderr.contains("verify --against"))
        let advice = "cloudbackup restore --file \(phone.state.path) --merge"
        #expect(result.stderr.contains(advice))
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A"]])

        let restored = try phone.run([
            "restore", "--file", phone.state.path, "--merge", "--yes", "--now", BackupMachine.now,
        ])
        #expect(restored.status == 0, "\(restored.stderr)")
        let again = try phone.backup()
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.stderr.contains("held back"))
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A", "OLD"]])
    }

    /// What the stale guard holds back from a second copy of the backup on Drive is said as
    /// that copy's, not blamed on STATE with advice about STATE that would not help.
    @Test func aStaleSecondCopyOnDriveIsNamedAsSuch() throws {
        try emulator.seedBackup(
            backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let tabletCopy = try emulator.seedBackup(
            backupJSON(
                device: "tablet", challenges: ["OLD": "2026-06-01T00:00:00.000Z"],
                exportedAt: "2026-07-01T00:00:00.000Z"
            ))
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        try #require(lines.count == 2, "\(result.stderr)")
        #expect(
            lines[0].hasPrefix(
                "cloudbackup: warning: held back challenge OLD: another copy of the backup on Drive was exported before"
            ))
        #expect(!lines[0].contains(phone.state.path))
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A"]])

        // Deleting the copy loses nothing: it waits in a side file, and the line's command
        // takes its items in.
        let sides = try emulator.files().filter {
            $0.name.hasPrefix("habit-backup.json.held-back-")
        }
        let side = try #require(sides.first)
        #expect(sides.count == 1)
        #expect(challengeIDs(try BackupReader.read(Array(side.content)).document) == ["OLD"])
        #expect(
            lines[1]
                == "cloudbackup: warning: kept that copy (id \(tabletCopy.id)) as '\(side.name)' in the app folder; to take its held-back items in, run 'CLOUDBACKUP_FILE_NAME=\(side.name) cloudbackup restore --file \(phone.state.path) --merge --allow-stale', then back up again"
        )
        var environment = phone.environment
        environment["CLOUDBACKUP_FILE_NAME"] = side.name
        let restored = try cloudbackup(
            [
                "restore", "--file", phone.state.path, "--merge", "--allow-stale", "--yes", "--now",
                BackupMachine.now,
            ], environment: environment)
        #expect(restored.status == 0, "\(restored.stderr)")
        let state = try BackupReader.read(Array(try Data(contentsOf: phone.state))).document
        #expect(challengeIDs(state) == ["A", "OLD"])
    }

    /// Restore deletes no copy: it holds back a stale copy's items as it would the backup's,
    /// and --allow-stale lets them in (FORMAT.md §5.3 rule 7).
    @Test func restoreHoldsBackAStaleCopyUnlessAllowed() throws {
        try emulator.seedBackup(
            backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try emulator.seedBackup(
            backupJSON(
                device: "tablet", challenges: ["OLD": "2026-06-01T00:00:00.000Z"],
                exportedAt: "2026-07-01T00:00:00.000Z"))
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let restore = [
            "restore", "--file", phone.state.path, "--merge", "--dry-run", "--now",
            BackupMachine.now,
        ]
        let held = try phone.run(restore)
        #expect(held.status == 0, "\(held.stderr)")
        #expect(
            held.stderr.contains("held back challenge OLD: another copy of the backup on Drive"))
        #expect(held.stderr.contains("; to let them in, run again with --allow-stale\n"))
        #expect(held.stdout.contains("  challenges: 1 unchanged\n"))
        let allowed = try phone.run(restore + ["--allow-stale"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.stdout.contains("  challenges: 1 added, 1 unchanged\n"))
    }

    /// An old STATE restored by merge keeps what the backup no longer has; those may be
    /// deletions whose tombstones expired, so the restore says so (the guard covers only the
    /// backup's side).
    @Test func restoringAStaleStateSaysWhatItKeepsThatTheBackupLacks() throws {
        try emulator.seedBackup(
            backupJSON(device: "tablet", challenges: ["Y": "2026-11-01T00:00:00.000Z"]))
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["X": "2026-06-01T00:00:00.000Z", "Y": "2026-06-01T00:00:00.000Z"],
                exportedAt: "2026-07-01T00:00:00.000Z"))
        let result = try phone.run([
            "restore", "--file", phone.state.path, "--merge", "--dry-run", "--now",
            BackupMachine.now,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "warning: \(phone.state.path) was exported before the tombstone window and keeps challenge X, last edited before it, that the backup does not have"
            ))
        #expect(!result.stderr.contains("challenges X, Y"))
    }

    /// A backup with nothing left in it takes an old STATE's challenges without the stale
    /// guard (FORMAT.md §5.3 rule 7's empty-local case); the run says what came back.
    @Test func anOldStateBackedUpIntoAnEmptyBackupSaysWhatItBroughtBack() throws {
        try emulator.seedBackup(backupJSON(device: "tablet", challenges: [:]))
        try phone.write(
            backupJSON(
                device: "phone", challenges: ["X": "2026-06-01T00:00:00.000Z"],
                exportedAt: "2026-07-01T00:00:00.000Z"))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["X"]])
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("keeps challenge X, last edited before it") == true)
    }

    @Test func manyHeldBackChallengesAreNamedAFewAndCounted() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        var challenges = ["A": "2026-11-01T00:00:00.000Z"]
        for id in ["OLD1", "OLD2", "OLD3", "OLD4", "OLD5"] {
            challenges[id] = "2026-06-01T00:00:00.000Z"
        }
        try phone.write(
            backupJSON(
                device: "phone", challenges: challenges, exportedAt: "2026-07-01T00:00:00.000Z"))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("held back challenges OLD1, OLD2, OLD3 and 2 more"))
        #expect(!result.stderr.contains("OLD4"))
    }

    @Test func aFutureStampedItemIsWarnedAboutOnce() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "F": "2026-12-02T12:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter {
            $0.contains("more than 24 h after now")
        }
        #expect(warnings.count == 1)
    }

    /// The first backup creates the file without a merge; its far-ahead stamps are still
    /// reported, as every later backup's are.
    @Test func theFirstBackupAlsoReportsFutureStamps() throws {
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "F": "2026-12-02T12:00:00.000Z"]))
        let result = try phone.backup(["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""result":"created""#))
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(
            lines.first?.hasPrefix(
                "cloudbackup: warning: challenge F in \(phone.state.path) is stamped 2026-12-02T12:00:00.000Z, more than 24 h after now"
            ) == true)
    }

    @Test func aCreateRetriedAfterACutConnectionLeavesOneFile() throws {
        try emulator.inject(.cut(count: 1, paths: ["/upload/drive/v3/files"]))
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().contains { $0.status == 409 })
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A"]])
    }

    @Test func threeDevicesBackingUpConcurrentlyLoseNothing() throws {
        let devices = try [phone, BackupMachine(emulator), BackupMachine(emulator)]
        for device in devices.dropFirst() { try device.login() }
        let rounds = 3
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: devices.count) { index in
            var challenges: [String: String] = [:]
            for round in 0..<rounds {
                challenges["D\(index)R\(round)"] = "2026-11-0\(round + 1)T00:00:00.000Z"
                do {
                    try devices[index].write(
                        backupJSON(device: "device\(index)", challenges: challenges))
                    let result = try devices[index].backup()
                    if result.status != 0 { failures.add("device \(index): \(result.stderr)") }
                } catch {
                    failures.add("device \(index): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all)")
        let expected = (0..<devices.count).flatMap { index in (0..<rounds).map { "D\(index)R\($0)" }
        }.sorted()
        let remote = try remoteBackups(emulator)
        #expect(remote.map { challengeIDs($0.document) } == [expected])
        // Item for item, the remote document is the merge of the three final local files.
        let locals = try devices.map {
            try BackupReader.read(Array(Data(contentsOf: $0.state))).document
        }
        let now = try #require(Timestamp(BackupMachine.now))
        let merged = locals.dropFirst().reduce(locals[0]) { result, next in
            merge(local: result, incoming: next, options: MergeOptions(now: now)).document
        }
        #expect(remote.first?.document.challenges == merged.challenges)
        #expect(remote.first?.document.dayLogs == merged.dayLogs)
        #expect(remote.first?.document.tombstones == merged.tombstones)
    }

    @Test func nothingSecretIsPrintedEvenWhenVerbose() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try emulator.inject(.status(401, count: 1, reason: "authError"))
        let result = try phone.backup(["--verbose"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("http: "))
        let leaked = try emulator.leakedSecrets(in: [result.stdout, result.stderr]).map(
            emulatorSecretKind)
        #expect(leaked.isEmpty, "leaked: \(leaked)")
    }

    /// Under --now too: the window then uses --now, but the clock is still wrong (FORMAT.md §9.2).
    @Test(arguments: [[], ["--now", BackupMachine.now]])
    func aServerClockAnHourAheadIsWarnedAbout(now: [String]) throws {
        try emulator.setClockOffset(3_600)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.run(["backup", "--file", phone.state.path] + now)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("warning: this machine's clock is 60 minutes behind Google's"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func statusRemoteWarnsAboutAClockOffGooglesToo() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        try emulator.setClockOffset(-3_600)
        let result = try phone.run(["status", "--remote"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr
                == "cloudbackup: warning: this machine's clock is 60 minutes ahead of Google's (fix the clock: timedatectl / NTP)\n"
        )
    }
}

/// Failures collected from concurrent work.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
