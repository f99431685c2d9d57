import BackupKit
import BackupSync
import Digests
import Foundation
import GoogleDrive
import Gzip
import LocalFiles
import TestSupport
import Testing

@testable import CloudBackupCLI

/// The quiet night: a backup after one that changed nothing, with STATE and Drive's revision
/// as that one left them, reads neither and makes one listing. Every way the outcome could
/// differ (another STATE, another revision, the clock carrying a tombstone past its window,
/// a warning) must make a full run.
@Suite(.serialized) final class SteadyStateTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
    }

    private var steadyRecord: String {
        phone.folder.appendingPathComponent("config/cloudbackup/default/steady-state.json").path
    }

    private static let quietLine = "nothing read or downloaded"

    /// Runs `backup --verbose` at `now` (plus `extra`) and returns its result and the kinds
    /// of Drive requests it made.
    private func backUp(now: String = BackupMachine.now, _ extra: [String] = []) throws -> (
        result: RunResult, requests: [String]
    ) {
        let start = try emulator.log().count
        let result = try phone.run(
            ["backup", "--file", phone.state.path, "--now", now, "--verbose"] + extra)
        try #require(result.status == 0, "\(result.stderr)")
        return (result, try emulator.log().dropFirst(start).map(\.kind))
    }

    /// STATE with challenge A and, with `tombstone`, challenge B deleted at that instant.
    private func writeState(tombstone: String? = nil, stampA: String = "2026-11-01T00:00:00.000Z")
        throws
    {
        var json = backupJSON(device: "phone", challenges: ["A": stampA])
        if let tombstone {
            json = json.replacingOccurrences(
                of: #""tombstones":{}"#, with: #""tombstones":{"B":{"deletedAt":"\#(tombstone)"}}"#)
        }
        try phone.write(json)
    }

    @Test func aNightAfterANightThatChangedNothingReadsNothingButTheListing() throws {
        try writeState()
        #expect(try backUp().requests.contains("POST /upload/drive/v3/files"))
        let full = try backUp()
        #expect(full.requests == ["list"])
        #expect(!full.result.stderr.contains(Self.quietLine))
        #expect(try LocalFile.mode(of: steadyRecord) == 0o600)
        // Without the kept copy a full run downloads; the quiet night needs neither.
        try FileManager.default.removeItem(at: phone.keptCopy)
        let quiet = try backUp()
        #expect(quiet.requests == ["list"])
        #expect(quiet.result.stderr.contains(Self.quietLine))
        #expect(quiet.result.stderr.contains("already holds everything in \(phone.state.path)"))
    }

    /// Issue 41: the run that uploads proves that merging STATE into its upload changes
    /// nothing, so the first night after it is the quiet one, not the second.
    @Test func theNightAfterAnUploadIsQuiet() throws {
        try writeState()
        _ = try backUp()
        try writeState(stampA: "2026-11-02T00:00:00.000Z")
        #expect(try backUp().requests.contains("conditional upload"))
        let quiet = try backUp()
        #expect(quiet.requests == ["list"])
        #expect(quiet.result.stderr.contains(Self.quietLine))
    }

    /// The record an upload left guards as any other: STATE written since makes a full run,
    /// which uploads the change.
    @Test func aStateWrittenAfterAnUploadIsBackedUp() throws {
        try writeState()
        _ = try backUp()
        try writeState(stampA: "2026-11-02T00:00:00.000Z")
        _ = try backUp()
        try #require(LocalFile.exists(steadyRecord))
        try writeState(stampA: "2026-11-03T00:00:00.000Z")
        let night = try backUp()
        #expect(!night.result.stderr.contains(Self.quietLine))
        #expect(night.requests.contains("conditional upload"))
        #expect(
            try remoteBackups(emulator).first?.document.challenges.first?.updatedAt.description
                == "2026-11-03T00:00:00.000Z")
    }

    /// The proof itself: STATE already in the upload merges to it; STATE holding what the
    /// upload lacks does not, nor STATE that makes the merge say something (an item stamped
    /// days ahead, though the upload holds it too: every night would warn), whether the copy
    /// is known canonical, not known so, or gzipped.
    @Test(arguments: ["canonical", "plain", "gzip"])
    func anUploadIsSteadyOnlyWhenMergingStateIntoItChangesNothing(copy form: String) throws {
        let now = try #require(Timestamp("2026-11-29T12:00:00.000Z"))
        func document(_ challenges: [String: String]) throws -> BackupDocument {
            try BackupReader.read(Array(backupJSON(device: "phone", challenges: challenges).utf8))
                .document
        }
        func steady(_ state: BackupDocument, into uploaded: BackupDocument) -> Bool {
            let bytes = BackupWriter.write(uploaded)
            var kept = KeptCopy(
                file: DriveFile(id: "F1", name: "", headRevisionId: "r2"), etag: nil,
                bytes: form == "gzip" ? Gzip.compress(bytes) : bytes)
            kept.canonical = form == "canonical"
            return BackupCommand.mergesToItself(
                state, into: uploaded, kept: kept, now: now, readOptions: ReadOptions()) != nil
        }
        let uploaded = try document(["A": "2026-11-02T00:00:00.000Z"])
        #expect(steady(uploaded, into: uploaded))
        #expect(steady(try document(["A": "2026-11-01T00:00:00.000Z"]), into: uploaded))
        #expect(!steady(try document(["A": "2026-11-03T00:00:00.000Z"]), into: uploaded))
        #expect(!steady(try document(["B": "2026-11-01T00:00:00.000Z"]), into: uploaded))
        let ahead = try document(["A": "2026-12-05T00:00:00.000Z"])
        #expect(!steady(ahead, into: ahead))
    }

    /// A quiet night while STATE's stamp is within its tick checks STATE by content, and
    /// leaves the record unsettled: the stamp cannot tell a write in the same tick yet. The
    /// tick is held open by a modification time an hour ahead (the stamp counts the later of
    /// it and the inode-change time), so no run can fall past it however slow the machine.
    @Test func aQuietNightWithinTheTickLeavesTheRecordUnsettled() throws {
        try writeState()
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(3600)], ofItemAtPath: phone.state.path)
        _ = try backUp()
        _ = try backUp()
        let quiet = try backUp()
        #expect(quiet.result.stderr.contains(Self.quietLine))
        let record = try #require(SteadyState.load(from: steadyRecord))
        #expect(!record.settled)
        #expect(!record.stamp.isSettled(at: FileStamp.clock()))
    }

    /// The record describes the account logged out of: the next account's first night is a
    /// full one.
    @Test func aLogoutForgetsTheRecord() throws {
        try writeState()
        _ = try backUp()
        _ = try backUp()
        #expect(LocalFile.exists(steadyRecord))
        #expect(try phone.run(["logout", "--quiet"]).status == 0)
        #expect(!LocalFile.exists(steadyRecord))
    }

    @Test func theQuietNightsJSONLineIsTheFullRunsLine() throws {
        try writeState()
        _ = try backUp()
        let full = try backUp(["--json"])
        // `--json` says nothing on stderr: without the kept copy only a quiet night makes
        // the listing alone.
        try FileManager.default.removeItem(at: phone.keptCopy)
        let quiet = try backUp(["--json"])
        #expect(quiet.requests == ["list"])
        #expect(quiet.result.stdout == full.result.stdout)
        #expect(full.result.stdout.contains(#""result":"unchanged""#))
    }

    /// A rewrite of the same size with the old modification time put back still shows in
    /// the inode change time, which no tool sets back.
    @Test func aRewriteThatRestoresTheOldModificationTimeIsBackedUp() throws {
        try writeState()
        _ = try backUp()
        _ = try backUp()
        let before = try FileManager.default.attributesOfItem(atPath: phone.state.path)
        try writeState(stampA: "2026-11-02T00:00:00.000Z")
        try FileManager.default.setAttributes(
            [.modificationDate: before[.modificationDate]!], ofItemAtPath: phone.state.path)
        #expect(
            try FileManager.default.attributesOfItem(atPath: phone.state.path)[.size] as? Int
                == before[.size] as? Int)
        let night = try backUp()
        #expect(night.requests.contains("conditional upload"))
        #expect(
            try remoteBackups(emulator).first?.document.challenges.first?.updatedAt.description
                == "2026-11-02T00:00:00.000Z")
    }

    /// B's tombstone expires 90 days after its deletion: the night before, nothing changes;
    /// the night after, the merge drops it and the backup uploads.
    @Test func theClockCarryingATombstonePastItsWindowEndsTheQuietNights() throws {
        try writeState(tombstone: "2026-11-20T00:00:00.000Z")
        _ = try backUp()
        _ = try backUp()
        let before = try backUp(now: "2027-02-17T12:00:00Z")
        #expect(before.result.stderr.contains(Self.quietLine))
        let after = try backUp(now: "2027-02-18T12:00:00Z")
        #expect(!after.result.stderr.contains(Self.quietLine))
        #expect(after.requests.contains("conditional upload"))
        #expect(try remoteBackups(emulator).first?.document.tombstones.isEmpty == true)
    }

    @Test func anotherDevicesWriteIsDownloadedAfterTheOneListing() throws {
        try writeState()
        _ = try backUp()
        _ = try backUp()
        let laptop = try BackupMachine(emulator)
        try laptop.login()
        try laptop.write(
            backupJSON(device: "laptop", challenges: ["B": "2026-11-02T00:00:00.000Z"]))
        #expect(try laptop.backup().status == 0)
        let night = try backUp()
        #expect(night.requests.first == "list")
        #expect(night.requests.filter { $0 == "list" }.count == 1)
        #expect(night.requests.contains("download"))
        #expect(!night.result.stderr.contains(Self.quietLine))
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A", "B"]])
    }

    /// Another size limit is another condition of the outcome: one full run under it, then
    /// quiet nights again.
    @Test func anotherSizeLimitMakesOneFullRun() throws {
        try writeState()
        _ = try backUp()
        _ = try backUp()
        try FileManager.default.removeItem(at: phone.keptCopy)
        let other = try backUp(["--max-bytes", "1000000"])
        #expect(!other.result.stderr.contains(Self.quietLine))
        #expect(other.requests.contains("download"))
        let again = try backUp(["--max-bytes", "1000000"])
        #expect(again.result.stderr.contains(Self.quietLine))
        #expect(again.requests == ["list"])
    }

    /// A challenge stamped days ahead of the clock is warned about every night, so such a
    /// night is never skipped.
    @Test func aNightThatWarnedIsNeverQuiet() throws {
        try writeState(stampA: "2026-12-09T00:00:00.000Z")
        _ = try backUp()
        for _ in 0..<2 {
            let night = try backUp()
            #expect(night.result.stderr.contains("warning"))
            #expect(!night.result.stderr.contains(Self.quietLine))
            #expect(!LocalFile.exists(steadyRecord))
        }
    }
}

/// The record's own tests: what the stamp alone decides, and when the bytes are read.
@Suite struct SteadyStateRecordTests {
    private static func record(stamp: FileStamp, settled: Bool, sha256: String) -> SteadyState {
        SteadyState(
            stamp: stamp, settled: settled, sha256: sha256, fileId: "F", headRevisionId: "R",
            md5Checksum: "abc", until: 2_000,
            conditions: .init(
                fileName: "habit-backup.json", encrypts: false, maxBytes: 1 << 20,
                syncedSettings: nil), bytes: 10,
            counts: .init(challenges: 1, dayLogs: 0, keptDayLogs: 0, tombstones: 0))
    }

    @Test func aSettledStampIsTrustedAndAnUnsettledOneIsCheckedByContent() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("state.json").path
        try Data("new".utf8).write(to: URL(fileURLWithPath: path))
        let stamp = try #require(FileStamp.of(path))
        let oldHash = Digest.hex(Digest.sha256(Array("old".utf8)))
        let newHash = Digest.hex(Digest.sha256(Array("new".utf8)))
        #expect(
            Self.record(stamp: stamp, settled: true, sha256: oldHash)
                .describes(path, stamp: stamp, maxBytes: 100))
        #expect(
            !Self.record(stamp: stamp, settled: false, sha256: oldHash)
                .describes(path, stamp: stamp, maxBytes: 100))
        #expect(
            Self.record(stamp: stamp, settled: false, sha256: newHash)
                .describes(path, stamp: stamp, maxBytes: 100))
        var other = stamp
        other.changed += 1
        #expect(
            !Self.record(stamp: stamp, settled: true, sha256: newHash)
                .describes(path, stamp: other, maxBytes: 100))
        #expect(
            !Self.record(stamp: stamp, settled: true, sha256: newHash)
                .describes(path, stamp: nil, maxBytes: 100))
    }

    /// An unsettled record that passed its content check is settled from then on, once the
    /// check read STATE past the stamp's tick, and not before.
    @Test func aContentCheckPastTheTickSettlesTheRecord() throws {
        let stamp = FileStamp(device: 1, inode: 2, size: 3, modified: 10, changed: 5_000_000_000)
        let unsettled = Self.record(stamp: stamp, settled: false, sha256: "h")
        #expect(unsettled.settled(at: 6_999_999_999) == nil)
        var settled = unsettled
        settled.settled = true
        #expect(unsettled.settled(at: 7_000_000_000) == settled)
        #expect(settled.settled(at: 9_000_000_000) == nil)
    }

    @Test func aStampWithinTheClocksTickOfTheReadIsNotSettled() {
        let stamp = FileStamp(device: 1, inode: 2, size: 3, modified: 10, changed: 5_000_000_000)
        #expect(!stamp.isSettled(at: 6_999_999_999))
        #expect(stamp.isSettled(at: 7_000_000_000))
    }

    @Test func onlyTheSameRevisionAloneWithinTheHorizonIsUnchanged() throws {
        let record = Self.record(
            stamp: FileStamp(device: 1, inode: 2, size: 3, modified: 4, changed: 5),
            settled: true, sha256: "")
        func file(_ id: String, revision: String, md5: String) -> DriveFile {
            DriveFile(
                id: id, name: "habit-backup.json", size: 10, md5Checksum: md5,
                headRevisionId: revision)
        }
        let same = file("F", revision: "R", md5: "ABC")
        let at = { (ms: Int64) in Timestamp(millisecondsSince1970: ms) }
        #expect(record.unchangedFile(in: [same], now: at(2_000))?.id == "F")
        #expect(record.unchangedFile(in: [same], now: at(2_001)) == nil)
        #expect(record.unchangedFile(in: [file("F", revision: "S", md5: "abc")], now: at(0)) == nil)
        #expect(record.unchangedFile(in: [file("G", revision: "R", md5: "abc")], now: at(0)) == nil)
        #expect(record.unchangedFile(in: [file("F", revision: "R", md5: "abd")], now: at(0)) == nil)
        #expect(
            record.unchangedFile(in: [same, file("G", revision: "R", md5: "abc")], now: at(0))
                == nil)
        #expect(record.unchangedFile(in: [], now: at(0)) == nil)
        // A head that is not the marked revision owes a check: no quiet night. Marked (or a
        // file never marked), it is.
        var owing = same
        owing.checkedRevision = "Q"
        #expect(record.unchangedFile(in: [owing], now: at(0)) == nil)
        owing.checkedRevision = "R"
        #expect(record.unchangedFile(in: [owing], now: at(0))?.id == "F")
    }
}
