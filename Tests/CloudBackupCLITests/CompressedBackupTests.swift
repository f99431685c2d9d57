import BackupKit
import Foundation
import LocalFiles
import TestSupport
import Testing

@testable import CloudBackupCLI

/// The profile's `compress` setting end to end: the built binary against the emulator, the
/// reference gunzip and age on the other side. What `backup` uploads gunzips to the document,
/// a night with nothing new costs one request, and a switch on or off rewrites the backup once.
@Suite(.serialized) final class CompressedBackupTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
    }

    /// The one backup file on Drive.
    func remoteFile() throws -> EmulatorFile {
        let files = try emulator.files().filter {
            $0.isInAppFolder && $0.name == "habit-backup.json"
        }
        try #require(files.count == 1)
        return files[0]
    }

    static let gzipMagic = Data([0x1f, 0x8b])

    /// `backup --dry-run`'s byte count is of gzip: well under STATE's plain size.
    func expectADryRunCountsGzipBytes(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let counted = try phone.backup(["--dry-run"])
        let said = try #require(
            counted.stdout.split(separator: "\n").first { $0.hasPrefix("dry run: ") },
            sourceLocation: sourceLocation)
        let count = try #require(
            Int(said.split(separator: " ")[2]), "\(said)", sourceLocation: sourceLocation)
        let stateSize = try Data(contentsOf: phone.state).count
        #expect(
            count < stateSize * 3 / 4, "\(said); STATE is \(stateSize) bytes",
            sourceLocation: sourceLocation)
    }

    @Test func compressComesFromTheFileOrTheEnvironment() throws {
        func profile(_ config: String, _ environment: [String: String] = [:]) throws -> Profile {
            try RemoteEncryptionTests.profile(config, environment: environment)
        }
        #expect(try profile("{}").compress == nil)
        #expect(try profile(#"{"compress": true}"#).compress == true)
        #expect(try profile(#"{"compress": false}"#).compress == false)
        #expect(
            try profile(#"{"compress": true}"#, ["CLOUDBACKUP_COMPRESS": "0"]).compress == false)
        #expect(try profile("{}", ["CLOUDBACKUP_COMPRESS": "1"]).compress == true)
        let file = #expect(throws: CLIError.self) { try profile(#"{"compress": "yes"}"#) }
        #expect(file?.exitCode == .invalidFile)
        #expect(file?.lines.first?.hasSuffix("setting 'compress' must be true or false") == true)
        let variable = #expect(throws: CLIError.self) {
            try profile("{}", ["CLOUDBACKUP_COMPRESS": "yes"])
        }
        #expect(variable?.exitCode == .usage)
        #expect(
            variable?.lines.first
                == "CLOUDBACKUP_COMPRESS must be 1 (compress) or 0 (do not), not 'yes'")
        let unknown = #expect(throws: CLIError.self) { try profile(#"{"zip": true}"#) }
        #expect(unknown?.lines.first?.contains("encrypt, compress, keep") == true)
    }

    @Test func aProfileThatCompressesUploadsGzipAndANightWithNothingNewCostsOneRequest() throws {
        try phone.configure(#"{"compress": true}"#)
        try phone.write(backupJSON(device: "phone", challenges: ["Z": "2026-11-01T00:00:00.000Z"]))
        let first = try phone.backup()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.isEmpty, "\(first.stderr)")
        let remote = try remoteFile()
        #expect(remote.content.starts(with: Self.gzipMagic))
        #expect(remote.mimeType == "application/gzip")
        let plain = try ReferenceTools.gunzip(Array(remote.content), with: .command)
        #expect(challengeIDs(try BackupReader.read(plain).document) == ["Z"])
        // Its kept copy is gzip known to inflate to this version's encoding, so the next run
        // compares a merge's encoding with it instead of encoding Drive's copy again.
        let keptHeader = try Data(contentsOf: phone.keptCopy).prefix { $0 != UInt8(ascii: "\n") }
        #expect(
            String(decoding: keptHeader, as: UTF8.self)
                .contains(#""canonicalFor":"\#(CloudBackup.version)""#))

        let logBefore = try emulator.log().count
        let second = try phone.backup(["--json"])
        #expect(second.stdout.contains(#""result":"unchanged""#), "\(second.stderr)")
        #expect(try emulator.log().count == logBefore + 1)
        #expect(try remoteFile().content == remote.content)
        // A dry run agrees: nothing new is nothing to upload, compressed or not.
        let dry = try phone.backup(["--dry-run"])
        #expect(dry.stdout.contains("nothing would be uploaded"), "\(dry.stdout)")

        // A change uploads gzip again, and restores through cloudbackup; a dry run before it
        // counts the bytes that go up, gzip's.
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["Z": "2026-11-01T00:00:00.000Z", "Y": "2026-11-02T00:00:00.000Z"]))
        try expectADryRunCountsGzipBytes()
        #expect(try phone.backup().status == 0)
        #expect(try remoteFile().content.starts(with: Self.gzipMagic))
        // History reads each gzip revision for what it holds.
        let history = try phone.run(["history", "--contents", "--json"])
        #expect(history.status == 0, "\(history.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any])
        let listed = try #require(object["revisions"] as? [[String: Any]])
        #expect(
            listed.map { ($0["contents"] as? [String: Any])?["challenges"] as? Int } == [1, 2])
        let restored = phone.folder.appendingPathComponent("restored.json")
        let restore = try phone.run([
            "restore", "--file", restored.path, "--replace", "--yes", "--now", BackupMachine.now,
        ])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(
            challengeIDs(try BackupReader.read(Array(Data(contentsOf: restored))).document) == [
                "Y", "Z",
            ])
    }

    /// Compress, then encrypt: age opens the upload, and what it gives gunzips to the document.
    @Test func anEncryptingProfileCompressesFirst() throws {
        let key = try phone.makeKey()
        try phone.configure(#"{"compress": true, "encrypt": true, "identityFile": "\#(key.path)"}"#)
        try phone.write(backupJSON(device: "phone", challenges: ["S": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let remote = try remoteFile()
        #expect(remote.content.starts(with: Data("age-encryption.org/v1\n".utf8)))
        #expect(remote.mimeType == "application/json")
        let sealed = phone.folder.appendingPathComponent("remote.age")
        try remote.content.write(to: sealed)
        let opened = phone.folder.appendingPathComponent("opened.gz")
        let decrypted = try run(
            ReferenceTools.age, ["-d", "-i", key.path, "-o", opened.path, sealed.path])
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        let gzip = try Array(Data(contentsOf: opened))
        #expect(gzip.starts(with: [0x1f, 0x8b]))
        let plain = try ReferenceTools.gunzip(gzip, with: .python)
        #expect(challengeIDs(try BackupReader.read(plain).document) == ["S"])
        // And cloudbackup reads it back: decrypted, then inflated.
        let restored = phone.folder.appendingPathComponent("restored.json")
        let restore = try phone.run([
            "restore", "--file", restored.path, "--replace", "--yes", "--now", BackupMachine.now,
        ])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(
            challengeIDs(try BackupReader.read(Array(Data(contentsOf: restored))).document)
                == ["S"])
    }

    /// Switching: `true` over a plain backup, and `false` over a gzipped one, upload once with
    /// nothing new and say so once; the run after is unchanged. Unset never rewrites, and a change keeps the form on Drive.
    @Test func aSwitchRewritesTheBackupOnceAndUnsetNever() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let plain = try remoteFile().content
        #expect(plain.starts(with: Data("{".utf8)))

        try phone.configure(#"{"compress": true}"#)
        let on = try phone.backup()
        #expect(on.status == 0, "\(on.stderr)")
        #expect(
            on.stderr.contains(
                "the backup on Drive was plain; this profile compresses, so it was uploaded compressed"
            ), "\(on.stderr)")
        let gzipped = try remoteFile().content
        #expect(gzipped.starts(with: Self.gzipMagic))
        let again = try phone.backup(["--json"])
        #expect(again.stdout.contains(#""result":"unchanged""#), "\(again.stderr)")
        #expect(again.stderr.isEmpty, "\(again.stderr)")

        // Unset: the gzipped backup stays as it is.
        try phone.configure("{}")
        let unset = try phone.backup(["--json"])
        #expect(unset.stdout.contains(#""result":"unchanged""#), "\(unset.stderr)")
        #expect(try remoteFile().content == gzipped)
        // ... and a change keeps its form: another device chose it.
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["P": "2026-11-01T00:00:00.000Z", "Q": "2026-11-02T00:00:00.000Z"]))
        // Its dry run counts the bytes of that form, gzip's.
        try expectADryRunCountsGzipBytes()
        let changed = try phone.backup()
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(changed.stderr.isEmpty, "\(changed.stderr)")
        #expect(try remoteFile().content.starts(with: Self.gzipMagic))

        try phone.configure(#"{"compress": false}"#)
        // Nothing new, but the form changes: a dry run says the backup would go up.
        let dry = try phone.backup(["--dry-run"])
        #expect(dry.stdout.contains("bytes would be uploaded"), "\(dry.stdout)")
        let off = try phone.backup()
        #expect(off.status == 0, "\(off.stderr)")
        #expect(
            off.stderr.contains(
                "the backup on Drive was compressed; this profile sets compress to false, so it was uploaded plain"
            ), "\(off.stderr)")
        let back = try remoteFile().content
        #expect(back.starts(with: Data("{".utf8)))
        #expect(String(decoding: back, as: UTF8.self).contains(#""Q""#))
        let last = try phone.backup(["--json"])
        #expect(last.stdout.contains(#""result":"unchanged""#), "\(last.stderr)")
        #expect(last.stderr.isEmpty, "\(last.stderr)")
    }

    /// Encryption and compression turned on together over a plain backup: one upload, and
    /// each change said once.
    @Test func bothSwitchesAtOnceAreEachSaidOnce() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let key = try phone.makeKey()
        try phone.configure(#"{"compress": true, "encrypt": true, "identityFile": "\#(key.path)"}"#)
        let uploadsBefore = try emulator.log().filter { $0.path.hasPrefix("/upload/") }.count
        let both = try phone.backup()
        #expect(both.status == 0, "\(both.stderr)")
        #expect(
            both.stderr.components(separatedBy: "\n").filter { !$0.isEmpty } == [
                "cloudbackup: warning: the backup on Drive was not encrypted; this profile encrypts, so it was uploaded encrypted",
                "cloudbackup: warning: the backup on Drive was plain; this profile compresses, so it was uploaded compressed",
            ], "\(both.stderr)")
        #expect(
            try emulator.log().filter { $0.path.hasPrefix("/upload/") }.count == uploadsBefore + 1)
        #expect(try remoteFile().content.starts(with: Data("age-encryption.org/v1\n".utf8)))
    }
}
