import BackupKit
import BackupSync
import Foundation
import GoogleDrive
import LocalFiles
import TestSupport
import Testing

@testable import CloudBackupCLI

/// The profile's kept copy of the remote backup, end to end against the emulator: what each
/// backup costs in requests, and that no doubt about the copy ever loses an item.
@Suite(.serialized) final class KeptCopyTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
    }

    /// What the latest `backUp` said on stderr (it runs with `--verbose`).
    private var stderr = ""

    /// Backs `challenges` up from the phone and returns the kinds of requests it made.
    private func backUp(_ challenges: [String]) throws -> [String] {
        let stamped = Dictionary(
            uniqueKeysWithValues: challenges.map { ($0, "2026-11-01T00:00:00.000Z") })
        try phone.write(backupJSON(device: "phone", challenges: stamped))
        let start = try emulator.log().count
        let result = try phone.backup(["--verbose"])
        try #require(result.status == 0, "\(result.stderr)")
        stderr = result.stderr
        return try emulator.log().dropFirst(start).map(\.kind)
    }

    private func remoteChallenges() throws -> [[String]] {
        try remoteBackups(emulator).map { challengeIDs($0.document) }
    }

    @Test func aBackupWithNothingNewMakesOneRequest() throws {
        #expect(
            try backUp(["A"]) == [
                "list", "GET /drive/v3/files/generateIds", "POST /upload/drive/v3/files", "pin",
            ])
        let version = try remoteBackups(emulator).map(\.file.version)
        #expect(try backUp(["A"]) == ["list"])
        #expect(try remoteBackups(emulator).map(\.file.version) == version)
        #expect(try LocalFile.mode(of: phone.keptCopy.path) == 0o600)
        #expect(stderr.contains("Drive's checksum matched the copy kept in"))
    }

    @Test func logoutForgetsTheKeptCopy() throws {
        _ = try backUp(["A"])
        #expect(LocalFile.exists(phone.keptCopy.path))
        #expect(try phone.run(["logout"]).status == 0)
        #expect(!LocalFile.exists(phone.keptCopy.path))
    }

    @Test func aChangeIsUploadedWithoutADownload() throws {
        _ = try backUp(["A"])
        // A create's answer carries no etag: the first change asks for one; the mark of the
        // proved upload answers with the new one, which the next change reuses.
        #expect(
            try backUp(["A", "B"]) == ["list", "etag", "conditional upload", "revisions", "mark"])
        #expect(
            try backUp(["A", "B", "C"]) == ["list", "conditional upload", "revisions", "mark"])
        #expect(try backUp(["A", "B", "C"]) == ["list"])
        #expect(try remoteChallenges() == [["A", "B", "C"]])
    }

    @Test func afterAnotherDeviceUploadedTheChecksumDiffersAndBothAreKept() throws {
        let laptop = try BackupMachine(emulator)
        try laptop.login()
        _ = try backUp(["A"])
        try laptop.write(
            backupJSON(device: "laptop", challenges: ["L": "2026-11-02T00:00:00.000Z"]))
        #expect(try laptop.backup().status == 0)
        #expect(
            try backUp(["A", "B"]) == [
                "list", "etag", "download", "conditional upload", "revisions", "mark",
            ])
        #expect(try remoteChallenges() == [["A", "B", "L"]])
        #expect(try backUp(["A", "B"]) == ["list"])
    }

    @Test func aWriteBetweenOurListingAndOurUploadIsMergedNotLost() throws {
        _ = try backUp(["A"])
        _ = try backUp(["A", "B"])
        let tablet = backupJSON(
            device: "tablet",
            challenges: ["A": "2026-11-01T00:00:00.000Z", "T": "2026-11-03T00:00:00.000Z"])
        try emulator.interleave(Data(tablet.utf8), name: "habit-backup.json")
        #expect(
            try backUp(["A", "B", "C"]) == [
                "list", "conditional upload → 412", "revisions", "etag", "download",
                "conditional upload", "revisions", "mark",
            ])
        #expect(try remoteChallenges() == [["A", "B", "C", "T"]])
    }

    @Test func aStaleEtagFallsBackToTheFullPath() throws {
        _ = try backUp(["A"])
        _ = try backUp(["A", "B"])
        var kept = try #require(KeptCopy.load(from: phone.keptCopy.path, maxBytes: 1 << 20))
        kept.etag = "\"stale\""
        try kept.save(to: phone.keptCopy.path)
        #expect(
            try backUp(["A", "B", "C"]) == [
                "list", "conditional upload → 412", "revisions", "etag", "download",
                "conditional upload", "revisions", "mark",
            ])
        #expect(try remoteChallenges() == [["A", "B", "C"]])
    }

    struct Damage: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var apply: @Sendable ([UInt8]) -> [UInt8]
    }

    @Test(arguments: [
        Damage(testDescription: "a flipped byte in the document") { bytes in
            var damaged = bytes
            damaged[damaged.count - 3] ^= 0x01
            return damaged
        },
        Damage(testDescription: "a truncated copy") { Array($0.dropLast(40)) },
        Damage(testDescription: "a header that is not JSON") { Array("{oops".utf8) + $0 },
        Damage(testDescription: "an empty file") { _ in [] },
    ])
    func aDamagedCopyFallsBackToTheDownload(_ damage: Damage) throws {
        _ = try backUp(["A"])
        let stored = try LocalFile.read(phone.keptCopy.path)
        try Data(damage.apply(stored)).write(to: phone.keptCopy)
        #expect(
            try backUp(["A", "B"]) == [
                "list", "etag", "download", "conditional upload", "revisions", "mark",
            ])
        #expect(try remoteChallenges() == [["A", "B"]])
        #expect(try backUp(["A", "B"]) == ["list"])
    }

    @Test func aCopyThatDisagreesWithTheServerIsNotTrusted() throws {
        _ = try backUp(["A"])
        let remote = try #require(try remoteBackups(emulator).first)
        // Whole and self-consistent, but not what Drive holds: its checksum cannot match.
        let other = BackupWriter.write(
            try BackupReader.read(
                Array(
                    backupJSON(
                        device: "phone",
                        challenges: [
                            "A": "2026-11-01T00:00:00.000Z", "Z": "2026-11-05T00:00:00.000Z",
                        ]
                    ).utf8)
            ).document)
        try KeptCopy(
            file: DriveFile(
                id: remote.file.id, name: remote.file.name, version: Int(remote.file.version)),
            etag: remote.file.etag, bytes: other
        ).save(to: phone.keptCopy.path)
        #expect(
            try backUp(["A", "B"]) == [
                "list", "etag", "download", "conditional upload", "revisions", "mark",
            ])
        #expect(!stderr.contains("Drive's checksum matched"))
        #expect(try remoteChallenges() == [["A", "B"]])
    }
}

/// Issue 41: that the kept bytes are this version's canonical bytes survives the file; a copy
/// whose header names another version is not taken for canonical (its writer may differ).
struct KeptCopyFileTests {
    @Test func canonicalHoldsForTheVersionThatWroteIt() throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("kept-copy-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var copy = KeptCopy(
            file: DriveFile(id: "F1", name: "", version: 2, headRevisionId: "r1"), etag: "e1",
            bytes: Array("{}\n".utf8))
        copy.canonical = true
        try copy.save(to: path)
        #expect(KeptCopy.load(from: path, maxBytes: 1 << 20)?.canonical == true)

        let stored = String(decoding: try LocalFile.read(path, maxBytes: 1 << 20), as: UTF8.self)
        let ours = #""canonicalFor":"\#(CloudBackup.version)""#
        try #require(stored.contains(ours))
        try Data(stored.replacingOccurrences(of: ours, with: #""canonicalFor":"0.0.0-other""#).utf8)
            .write(to: URL(fileURLWithPath: path))
        let other = try #require(KeptCopy.load(from: path, maxBytes: 1 << 20))
        #expect(!other.canonical && other == copy)

        copy.canonical = false
        try copy.save(to: path)
        #expect(KeptCopy.load(from: path, maxBytes: 1 << 20)?.canonical == false)
    }
}
