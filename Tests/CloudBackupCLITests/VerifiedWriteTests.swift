import BackupKit
import Foundation
import LocalFiles
import TestSupport
import Testing

/// No device's items are lost, whatever Google does with `If-Match` (it documents none): each
/// race with "another device" runs under every reading the emulator offers (checked always,
/// only when a resumable session opens, never), and Drive must then hold BackupKit's own merge
/// of both devices' documents.
@Suite(.serialized) final class VerifiedWriteTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
    }

    struct Race: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var at: Emulator.InterleavePoint
        /// A state over 5 MiB, so the upload is resumable.
        var large = false
        var count = 1
    }

    static let races = [
        Race(testDescription: "after our listing", at: .list),
        Race(testDescription: "after our download", at: .download),
        Race(testDescription: "just before a simple upload", at: .write),
        Race(testDescription: "between two chunks of a resumable upload", at: .chunk, large: true),
        Race(testDescription: "when a resumable upload completes", at: .write, large: true),
        Race(testDescription: "twice in a row", at: .write, count: 2),
    ]

    static let modes: [Emulator.IfMatchEnforcement] = [.honour, .openOnly, .ignore]

    /// The phone's state: `A` as on Drive, and `P`, new; large enough for a resumable
    /// upload when `large`.
    private func phoneState(large: Bool) -> String {
        large
            ? backupJSON(
                device: "phone",
                // Over 8 MiB: two chunks.
                challenges: challengeStamps(14, prefix: "P").merging([
                    "A": "2026-11-01T00:00:00.000Z"
                ]) { a, _ in a },
                logs: 365, note: String(repeating: "p", count: 1_900))
            : backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "P": "2026-11-02T00:00:00.000Z"],
                logs: 3)
    }

    private let tablet = backupJSON(
        device: "tablet",
        challenges: ["A": "2026-11-01T00:00:00.000Z", "T": "2026-11-03T00:00:00.000Z"], logs: 2)

    /// What Drive must hold after both devices' writes: BackupKit's merge of the two.
    private func expectDriveHolds(_ documents: [String]) throws {
        let decoded = try documents.map { try BackupReader.read(Array($0.utf8)).document }
        let options = MergeOptions(now: try #require(Timestamp(BackupMachine.now)))
        let expected = decoded.dropFirst().reduce(decoded[0]) {
            BackupKit.merge(local: $0, incoming: $1, options: options).document
        }
        let remote = try #require(try remoteBackups(emulator).first).document
        #expect(try remoteBackups(emulator).count == 1)
        // Compared as sets, so a failure names only what differs.
        let challenges = { (document: BackupDocument) in
            Set(document.challenges.map { "\($0.id)@\($0.updatedAt)" })
        }
        let logs = { (document: BackupDocument) in Set(document.dayLogs.map(\.key.description)) }
        #expect(challenges(expected).subtracting(challenges(remote)) == [], "challenges lost")
        #expect(challenges(remote).subtracting(challenges(expected)) == [], "challenges added")
        #expect(logs(expected).subtracting(logs(remote)) == [], "day logs lost")
        #expect(logs(remote).count == logs(expected).count)
        #expect(remote.tombstones.map(\.id) == expected.tombstones.map(\.id))
    }

    /// One race: the phone backs up `{A}`, then `{A, P}` while the tablet writes `{A, T}` at
    /// the race's moment; Drive must then hold the merge of both.
    private func run(_ race: Race) throws {
        let first = backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"])
        try phone.write(first)
        try #require(try phone.backup().status == 0)
        if race.at == .download {
            // Without its kept copy the phone downloads the backup, as after another device's upload.
            try FileManager.default.removeItem(at: phone.keptCopy)
        }
        let state = phoneState(large: race.large)
        try phone.write(state)
        try emulator.interleave(
            Data(tablet.utf8), name: "habit-backup.json", count: race.count, at: race.at)
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().contains { $0.interleaved == true }, "the race did not happen")
        try expectDriveHolds([tablet, state])
    }

    /// Two files of our name: the phone merges the newer (a duplicate) into the oldest, then
    /// deletes it. The tablet writes into the duplicate after the phone read it, while the
    /// phone checks its upload: the phone reads the duplicate's head again before deleting it,
    /// sees it moved and merges it again, so the tablet's T reaches the file that stays.
    @Test(arguments: modes)
    func aWriteIntoADuplicateBeforeItIsDeletedIsMergedFirst(mode: Emulator.IfMatchEnforcement)
        throws
    {
        try emulator.configure(ifMatch: mode)
        let oldest = backupJSON(device: "laptop", challenges: ["A": "2026-11-01T00:00:00.000Z"])
        let kept = try emulator.seedBackup(oldest)
        let copy = backupJSON(device: "desk", challenges: ["D": "2026-11-04T00:00:00.000Z"])
        let duplicate = try emulator.seedBackup(copy)
        let state = phoneState(large: false)
        try phone.write(state)
        try emulator.interleave(Data(tablet.utf8), id: duplicate.id, at: .revisions)
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().contains { $0.interleaved == true }, "the race did not happen")
        #expect(try emulator.files().map(\.id) == [kept.id])
        try expectDriveHolds([oldest, copy, tablet, state])
    }

    @Test(arguments: modes, races)
    func anotherDevicesWriteIsNeverLost(mode: Emulator.IfMatchEnforcement, race: Race) throws {
        try emulator.configure(ifMatch: mode)
        try run(race)
    }

    /// Google's guide can be read as serving only pinned revisions: the other device's
    /// revision is then pinned to be read, and still merged, whatever If-Match does.
    @Test(arguments: races)
    func anotherDevicesWriteIsMergedWhenOnlyPinnedRevisionsCanBeRead(race: Race) throws {
        try emulator.configure(ifMatch: .ignore, pinnedRevisionDownloadsOnly: true)
        try run(race)
        let refused = try emulator.log().filter { $0.status == 403 }
        let revisions = try #require(try emulator.files().first).revisions
        // Where our upload replaced the other device's (every race but the one after our
        // listing, which the kept copy's checksum catches first), its revision was refused,
        // then pinned and read.
        if race.at != .list {
            #expect(!refused.isEmpty, "no revision download was refused")
            #expect(revisions.contains { $0.keepForever })
        }
    }

    /// Another device writes something new before every one of our uploads: we give up
    /// (exit 5) saying that nothing was lost. Every revision stays in Drive's history, so the
    /// next run, the other device quiet, brings Drive to the merge of everything.
    @Test(arguments: modes)
    func aDeviceWritingOnEveryRoundMakesUsGiveUpCleanly(mode: Emulator.IfMatchEnforcement) throws {
        try emulator.configure(ifMatch: mode)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        try phone.write(phoneState(large: false))
        // The tablet adds one challenge each time, and each write holds all it added so far.
        var added = ["A": "2026-11-01T00:00:00.000Z"]
        let writes = (0..<12).map { round in
            added[String(format: "T%02d", round)] = "2026-11-03T00:00:00.000Z"
            return backupJSON(device: "tablet", challenges: added, logs: 1)
        }
        try emulator.interleave(each: writes.map { Data($0.utf8) }, name: "habit-backup.json")
        let result = try phone.backup()
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stderr.contains("another device keeps writing"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was lost"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        let written = try emulator.log().filter { $0.interleaved == true }.count
        try #require(written > 0 && written < writes.count)
        try emulator.clearInterleave()
        #expect(try phone.backup().status == 0)
        try expectDriveHolds([writes[written - 1], phoneState(large: false)])
    }

    /// The network goes away right after the upload, before its check: exit 5, the check is
    /// recorded in the profile, and the next run finishes it, merging what the other device
    /// wrote between our base and our upload.
    @Test(arguments: modes)
    func aCheckCutShortIsFinishedByTheNextRun(mode: Emulator.IfMatchEnforcement) throws {
        try emulator.configure(ifMatch: .ignore)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        try phone.write(phoneState(large: false))
        try emulator.interleave(Data(tablet.utf8), name: "habit-backup.json")
        try emulator.inject(.status(503, count: 100, paths: ["/drive/v3/files/"]))
        let cut = try phone.backup()
        #expect(cut.status == 5, "\(cut.stderr)")
        #expect(cut.stderr.contains("could not be checked"), "\(cut.stderr)")
        #expect(LocalFile.exists(phone.pendingVerification.path))
        try emulator.clearFaults()
        try emulator.configure(ifMatch: mode)
        let next = try phone.run(["status", "--remote"])
        // It finishes the check; it still exits 8, as the last backup failed (exit 5).
        #expect(next.status == 8, "\(next.stderr)")
        #expect(!LocalFile.exists(phone.pendingVerification.path))
        try expectDriveHolds([tablet, phoneState(large: false)])
    }

    /// The phone's upload replaced the tablet's write (Drive ignoring `If-Match`), its check
    /// was cut short, and the phone never runs again: the laptop's next backup finds the
    /// file's mark behind its head, merges the tablet's write back, and marks its own upload.
    @Test(arguments: modes)
    func aCheckTheOwingDeviceNeverFinishesIsFinishedByAnotherDevice(
        mode: Emulator.IfMatchEnforcement
    ) throws {
        try emulator.configure(ifMatch: .ignore)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        // A proved upload (a create is not checked): the file is marked.
        try phone.write(phoneState(large: false))
        try #require(try phone.backup().status == 0)
        let marked = try #require(try remoteBackups(emulator).first).file
        let phoneLast = backupJSON(
            device: "phone",
            challenges: [
                "A": "2026-11-01T00:00:00.000Z", "P": "2026-11-02T00:00:00.000Z",
                "Q": "2026-11-04T00:00:00.000Z",
            ], logs: 3)
        try phone.write(phoneLast)
        try emulator.interleave(Data(tablet.utf8), name: "habit-backup.json")
        try emulator.inject(.status(503, count: 100, paths: ["/drive/v3/files/"]))
        let cut = try phone.backup()
        #expect(cut.status == 5, "\(cut.stderr)")
        try emulator.clearFaults()
        try emulator.configure(ifMatch: mode)
        let head = try #require(try remoteBackups(emulator).first).file
        #expect(head.appProperties["checkedRevision"] == marked.headRevisionId)
        #expect(head.headRevisionId != marked.headRevisionId)
        let laptop = try BackupMachine(emulator)
        try laptop.login()
        let laptopState = backupJSON(
            device: "laptop", challenges: ["L": "2026-11-05T00:00:00.000Z"], logs: 1)
        try laptop.write(laptopState)
        let result = try laptop.backup()
        #expect(result.status == 0, "\(result.stderr)")
        try expectDriveHolds([tablet, phoneLast, laptopState])
        let now = try #require(try remoteBackups(emulator).first).file
        #expect(now.appProperties["checkedRevision"] == now.headRevisionId)
    }

    /// `kill -9` right after the upload landed: the pending check, recorded before the upload,
    /// survives, and the next backup finishes it first.
    @Test func aPendingCheckSurvivesAKillRightAfterTheUpload() throws {
        try emulator.configure(ifMatch: .ignore)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        try phone.write(phoneState(large: false))
        try emulator.interleave(Data(tablet.utf8), name: "habit-backup.json")
        // The revision listing waits; the run is killed while it does.
        try emulator.inject(.delay(seconds: 30, count: 1, paths: ["/drive/v3/files/"]))
        let process = Process()
        process.executableURL = Paths.binary
        process.arguments = ["backup", "--file", phone.state.path, "--now", BackupMachine.now]
        process.environment = phone.environment.merging([
            "PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": "/nonexistent",
        ]) { own, _ in own }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Until the upload is in the emulator's log (it logs a request once answered).
        let deadline = Date().addingTimeInterval(20)
        while try !emulator.log().contains(where: {
            $0.method == "PUT" && $0.path.hasPrefix("/upload/drive/v2/files/") && $0.status == 200
        }) {
            try #require(Date() < deadline, "the upload never happened")
            usleep(20_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(LocalFile.exists(phone.pendingVerification.path))
        try emulator.clearFaults()
        try phone.write(phoneState(large: false))
        let next = try phone.backup()
        #expect(next.status == 0, "\(next.stderr)")
        #expect(!LocalFile.exists(phone.pendingVerification.path))
        try expectDriveHolds([tablet, phoneState(large: false)])
    }

    /// An upload that went through but whose answer was lost: the retry meets our own new
    /// etag (412), and the history shows the head is ours. It is reported and recorded as the
    /// upload it was, not as "nothing uploaded".
    @Test(arguments: modes)
    func anUploadWhoseAnswerWasLostIsReportedAsUploaded(mode: Emulator.IfMatchEnforcement) throws {
        try emulator.configure(ifMatch: mode)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        try phone.write(phoneState(large: false))
        try emulator.inject(.cut(count: 1, paths: ["/upload/drive/v2/files/"]))
        let result = try phone.backup(["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""result":"uploaded""#), "\(result.stdout)")
        let last = try String(contentsOf: phone.lastBackup, encoding: .utf8)
        #expect(last.contains(#""uploaded":true"#), "\(last)")
        try expectDriveHolds([phoneState(large: false)])
    }

    /// Another device merged a second copy away and deleted it between restore's listing and
    /// its download: restore lists again and goes on, as backup does.
    @Test func aRestoreWhoseCopyGoesMeanwhileListsAgain() throws {
        try emulator.seedBackup(tablet)
        try emulator.seedBackup(
            backupJSON(device: "laptop", challenges: ["L": "2026-11-04T00:00:00.000Z"]))
        try emulator.inject(.status(404, count: 1, reason: "notFound", paths: ["/drive/v2/files/"]))
        let result = try phone.run([
            "restore", "--file", phone.state.path, "--merge", "--yes", "--now", BackupMachine.now,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().filter { $0.path == "/drive/v3/files" }.count == 2)
        let restored = try BackupReader.read(Array(Data(contentsOf: phone.state))).document
        #expect(challengeIDs(restored) == ["A", "L", "T"])
    }
}
