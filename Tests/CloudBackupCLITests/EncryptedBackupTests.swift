import BackupKit
import Digests
import Foundation
import LocalFiles
import TestSupport
import Testing

/// Encrypted backups end to end: the built binary against the emulator, the reference age
/// tools on the other side. What cloudbackup uploads opens with `age -d` (X25519) and pyrage
/// (passphrase); what they encrypt restores with cloudbackup; a backup that no key here opens
/// is refused with nothing written.
@Suite(.serialized) final class EncryptedBackupTests {
    let emulator: Emulator
    let phone: BackupMachine
    static let passphrase = "tr0ub4dor & 3, not in any output"

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
    }

    func passwordFile(_ passphrase: String = passphrase) throws -> String {
        let file = phone.folder.appendingPathComponent("password")
        try LocalFile.writeAtomically(Array((passphrase + "\n").utf8), to: file.path, mode: 0o600)
        return file.path
    }

    /// The one backup file on Drive, its bytes as stored.
    func remoteBytes() throws -> Data {
        let files = try emulator.files().filter {
            $0.isInAppFolder && $0.name == "habit-backup.json"
        }
        try #require(files.count == 1)
        return files[0].content
    }

    func write(_ bytes: Data, named name: String) throws -> URL {
        let url = phone.folder.appendingPathComponent(name)
        try bytes.write(to: url)
        return url
    }

    func restoreInto(_ state: URL, _ extra: [String] = []) throws -> RunResult {
        try phone.run(
            ["restore", "--file", state.path, "--replace", "--yes", "--now", BackupMachine.now]
                + extra)
    }

    func expectNoSecret(_ results: [RunResult]) {
        for result in results {
            #expect(
                !result.stdout.contains(Self.passphrase) && !result.stderr.contains(Self.passphrase)
            )
            #expect(!result.stderr.contains("AGE-SECRET-KEY"))
        }
    }

    @Test func anX25519BackupOpensWithAgeAndKeepsItsPlaintextLocally() throws {
        let key = try phone.makeKey()
        try phone.configure(#"{"encrypt": true, "identityFile": "\#(key.path)"}"#)
        try phone.write(
            backupJSON(device: "phone", challenges: ["Secretive": "2026-11-01T00:00:00.000Z"]))
        let first = try phone.backup()
        #expect(first.status == 0, "\(first.stderr)")
        let remote = try remoteBytes()
        #expect(remote.starts(with: Data("age-encryption.org/v1\n-> X25519 ".utf8)))
        #expect(remote.range(of: Data("Secretive".utf8)) == nil)

        let sealed = try write(remote, named: "remote.age")
        let opened = try run(ReferenceTools.age, ["-d", "-i", key.path, sealed.path])
        #expect(opened.status == 0, "\(opened.stderr)")
        let document = try BackupReader.read(Array(opened.stdout.utf8)).document
        #expect(challengeIDs(document) == ["Secretive"])

        // The kept copy: plaintext, 0600, matched to Drive by the encrypted bytes' checksum,
        // so the next run with nothing new downloads and uploads nothing.
        let kept = try Data(contentsOf: phone.keptCopy)
        #expect(kept.range(of: Data("Secretive".utf8)) != nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: phone.keptCopy.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let md5 = try emulator.files().first { $0.name == "habit-backup.json" }?.md5Checksum
        #expect(md5 == Digest.hex(Digest.md5(Array(remote))))
        #expect(kept.range(of: Data(#""md5Checksum":"\#(md5 ?? "-")""#.utf8)) != nil)
        let logBefore = try emulator.log().count
        let second = try phone.backup(["--json"])
        #expect(second.stdout.contains(#""result":"unchanged""#), "\(second.stderr)")
        // The size on Drive, not the kept plaintext's.
        #expect(second.stdout.contains(#""bytes":\#(remote.count),"#), "\(second.stdout)")
        let requests = try emulator.log().dropFirst(logBefore)
        #expect(requests.allSatisfy { $0.method == "GET" && !($0.query["alt"] == "media") })

        // A change uploads again, encrypted, and restores through cloudbackup.
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: [
                    "Secretive": "2026-11-01T00:00:00.000Z", "More": "2026-11-02T00:00:00.000Z",
                ]))
        #expect(try phone.backup().status == 0)
        #expect(try remoteBytes().starts(with: Data("age-encryption.org/v1\n".utf8)))
        let restored = phone.folder.appendingPathComponent("restored.json")
        let restore = try restoreInto(restored)
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(
            challengeIDs(try BackupReader.read(Array(Data(contentsOf: restored))).document) == [
                "More", "Secretive",
            ])
        expectNoSecret([first, second, restore])
    }

    @Test func aPassphraseBackupOpensWithPyrage() throws {
        try phone.configure(#"{"encrypt": true}"#)
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.backup(["--password-file", try passwordFile()])
        #expect(result.status == 0, "\(result.stderr)")
        let remote = try remoteBytes()
        #expect(remote.starts(with: Data("age-encryption.org/v1\n-> scrypt ".utf8)))
        let opened = phone.folder.appendingPathComponent("opened.json")
        let decrypted = try ReferenceTools.pyrage(
            "decrypt", try write(remote, named: "remote.age"), opened, passphrase: Self.passphrase)
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(
            challengeIDs(try BackupReader.read(Array(Data(contentsOf: opened))).document) == ["P"])
        expectNoSecret([result])
    }

    /// Files the reference tools encrypted, put on Drive as another device would, restore:
    /// pyrage's with the passphrase from a command (and from the environment), age's with
    /// the identity file.
    @Test func filesEncryptedByPyrageAndAgeRestore() throws {
        let plain = try write(
            Data(backupJSON(device: "tablet", challenges: ["T": "2026-11-01T00:00:00.000Z"]).utf8),
            named: "plain.json")
        let byPyrage = phone.folder.appendingPathComponent("pyrage.age")
        #expect(
            try ReferenceTools.pyrage("encrypt", plain, byPyrage, passphrase: Self.passphrase)
                .status == 0)
        try emulator.seedFile(name: "habit-backup.json", content: try Data(contentsOf: byPyrage))
        let state = phone.folder.appendingPathComponent("state-a.json")
        let password = try passwordFile()
        let viaCommand = try restoreInto(state, ["--password-command", "cat '\(password)'"])
        #expect(viaCommand.status == 0, "\(viaCommand.stderr)")
        #expect(
            challengeIDs(try BackupReader.read(Array(Data(contentsOf: state))).document) == ["T"])
        var environment = phone.environment
        environment["CLOUDBACKUP_PASSWORD_FILE"] = password
        let viaEnvironment = try cloudbackup(
            ["restore", "--file", state.path, "--replace", "--yes", "--dry-run"],
            environment: environment)
        #expect(viaEnvironment.status == 0, "\(viaEnvironment.stderr)")

        try emulator.reset()
        try phone.login()
        let key = try phone.makeKey()
        try phone.configure(#"{"identityFile": "\#(key.path)"}"#)
        let byAge = phone.folder.appendingPathComponent("age.age")
        let made = try run(ReferenceTools.age, ["-r", key.publicKey, "-o", byAge.path, plain.path])
        #expect(made.status == 0, "\(made.stderr)")
        try emulator.seedFile(name: "habit-backup.json", content: try Data(contentsOf: byAge))
        let other = phone.folder.appendingPathComponent("state-b.json")
        let restored = try restoreInto(other)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(
            challengeIDs(try BackupReader.read(Array(Data(contentsOf: other))).document) == ["T"])
        expectNoSecret([viaCommand, viaEnvironment, restored])
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var testDescription: String
        /// config.json of the profile that meets the encrypted backup.
        var config: String
        var options: [String] = []
        var restore = false
        var status: Int32 = 3
        var says: String
    }

    static let refusals: [Refusal] = [
        Refusal(
            testDescription: "no key, restore", config: "{}", restore: true,
            says:
                "is encrypted (age) and this profile has no key to open it; give one: --password-file FILE"
        ),
        Refusal(
            testDescription: "a wrong passphrase, restore", config: "{}",
            options: ["--password-file", "WRONG"],
            restore: true, says: "no identity matched: the file is encrypted to a passphrase"),
        Refusal(
            testDescription: "a wrong passphrase, backup", config: #"{"encrypt": true}"#,
            options: ["--password-file", "WRONG"],
            says: "(wrong passphrase or identity file?); nothing was written"),
        Refusal(
            testDescription: "a profile that does not encrypt, backup", config: "{}",
            options: ["--password-file", "RIGHT"],
            says:
                #"but this profile does not encrypt, and would upload it in plain; set "encrypt": true"#
        ),
        Refusal(
            testDescription: "encrypt without a key", config: #"{"encrypt": true}"#, status: 2,
            says: "profile 'default' encrypts its backup but has no key; give one"),
    ]

    /// A passphrase-encrypted backup on Drive met by a profile that cannot or may not open
    /// it: the exit status, one line saying what to configure, and nothing written anywhere.
    @Test(arguments: refusals)
    func encryptedBackupsWithoutTheKeyAreRefused(refusal: Refusal) throws {
        let plain = try write(
            Data(backupJSON(device: "tablet", challenges: ["T": "2026-11-01T00:00:00.000Z"]).utf8),
            named: "plain.json")
        let sealed = phone.folder.appendingPathComponent("sealed.age")
        #expect(
            try ReferenceTools.pyrage("encrypt", plain, sealed, passphrase: Self.passphrase).status
                == 0)
        try emulator.seedFile(name: "habit-backup.json", content: try Data(contentsOf: sealed))
        try phone.configure(refusal.config)
        let wrong = phone.folder.appendingPathComponent("wrong")
        try LocalFile.writeAtomically(Array("not it\n".utf8), to: wrong.path, mode: 0o600)
        let options = refusal.options.map {
            $0 == "WRONG" ? wrong.path : $0 == "RIGHT" ? (try? passwordFile()) ?? "" : $0
        }
        let state = phone.folder.appendingPathComponent("state.json")
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        let stateBefore = try Data(contentsOf: state)
        let logBefore = try emulator.log().count
        let result =
            refusal.restore
            ? try restoreInto(state, options) : try phone.backup(options)
        #expect(result.status == refusal.status, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains(refusal.says), "\(result.stderr)")
        #expect(try emulator.log().dropFirst(logBefore).allSatisfy { $0.method == "GET" })
        #expect(try Data(contentsOf: state) == stateBefore)
        #expect(!FileManager.default.fileExists(atPath: state.path + ".bak"))
        #expect(try emulator.files().filter(\.isInAppFolder).count == 1)
        expectNoSecret([result])
    }

    /// The kept copy of an encrypted backup does not let a profile that stopped encrypting
    /// upload the backup in plain: the run downloads, refuses (exit 3) and writes nothing.
    @Test func aProfileThatStoppedEncryptingDoesNotUploadPlainFromItsKeptCopy() throws {
        let key = try phone.makeKey()
        try phone.configure(#"{"encrypt": true, "identityFile": "\#(key.path)"}"#)
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let sealed = try remoteBytes()
        try phone.configure(#"{"identityFile": "\#(key.path)"}"#)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["P": "2026-11-01T00:00:00.000Z", "Q": "2026-11-02T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 3)
        #expect(result.stderr.contains("but this profile does not encrypt"), "\(result.stderr)")
        #expect(try remoteBytes() == sealed)
    }

    @Test func anIdentityFileOthersCanReadIsRefused() throws {
        let key = try phone.makeKey()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key.path)
        try phone.configure(#"{"encrypt": true, "identityFile": "\#(key.path)"}"#)
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        let result = try phone.backup()
        #expect(result.status == 3)
        #expect(
            result.stderr.contains("permissions 0644 are too open for an identity file"),
            "\(result.stderr)")
        #expect(try emulator.files().filter(\.isInAppFolder).isEmpty)
    }

    /// Turning encryption on for a profile whose backup is plain: the next backup uploads it
    /// encrypted even with nothing new, says so once, and the one after is unchanged.
    @Test func aPlainBackupIsEncryptedByTheNextRunOfAnEncryptingProfile() throws {
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        #expect(try remoteBytes().starts(with: Data("{".utf8)))
        let key = try phone.makeKey()
        try phone.configure(#"{"encrypt": true, "identityFile": "\#(key.path)"}"#)
        let switched = try phone.backup()
        #expect(switched.status == 0)
        #expect(
            switched.stderr.contains(
                "the backup on Drive was not encrypted; this profile encrypts, so it was uploaded encrypted"
            ))
        #expect(try remoteBytes().starts(with: Data("age-encryption.org/v1\n".utf8)))
        let again = try phone.backup(["--json"])
        #expect(again.stdout.contains(#""result":"unchanged""#), "\(again.stderr)")
        #expect(again.stderr.isEmpty)
    }

    /// The way back: `"encrypt": false` with the key (or `CLOUDBACKUP_ENCRYPT=0`) decrypts the
    /// encrypted backup for good: the next backup uploads it plain even with nothing new, says
    /// so once, and the one after is unchanged. Without the key the same setting is refused.
    @Test(arguments: [false, true])
    func anEncryptedBackupIsDecryptedOnceByAProfileThatTurnedEncryptionOff(
        byEnvironment: Bool
    ) throws {
        let key = try phone.makeKey()
        try phone.configure(#"{"encrypt": true, "identityFile": "\#(key.path)"}"#)
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        #expect(try phone.backup().status == 0)
        let sealed = try remoteBytes()
        #expect(sealed.starts(with: Data("age-encryption.org/v1\n".utf8)))

        try phone.configure(#"{"encrypt": false}"#)
        let keyless = try phone.backup()
        #expect(keyless.status == 3)
        #expect(keyless.stderr.contains(#"or "encrypt": false with its key"#), "\(keyless.stderr)")
        #expect(try remoteBytes() == sealed)

        let environment = phone.environment.merging(
            byEnvironment ? ["CLOUDBACKUP_ENCRYPT": "0"] : [:]
        ) { _, new in new }
        func backup(_ extra: [String] = []) throws -> RunResult {
            try cloudbackup(
                ["backup", "--file", phone.state.path, "--now", BackupMachine.now] + extra,
                environment: environment)
        }
        try phone.configure(
            byEnvironment
                ? #"{"encrypt": true, "identityFile": "\#(key.path)"}"#
                : #"{"encrypt": false, "identityFile": "\#(key.path)"}"#)
        let switched = try backup()
        #expect(switched.status == 0, "\(switched.stderr)")
        #expect(
            switched.stderr.contains(
                "the backup on Drive was encrypted; this profile sets encrypt to false, so it was uploaded in plain"
            ), "\(switched.stderr)")
        let plain = try remoteBytes()
        #expect(plain.starts(with: Data("{".utf8)))
        #expect(String(decoding: plain, as: UTF8.self).contains(#""P""#))
        let again = try backup(["--json"])
        #expect(again.stdout.contains(#""result":"unchanged""#), "\(again.stderr)")
        #expect(again.stderr.isEmpty)
        #expect(try remoteBytes() == plain)
    }

    /// Another device's write, encrypted by age to the same key, that our upload replaced
    /// (Drive ignoring If-Match) and whose check was cut short: `status --remote` finishes the
    /// check with the identity file, decrypting that revision and merging it, encrypted again.
    @Test func anEncryptedRevisionFoundByTheCheckIsDecryptedAndMerged() throws {
        try emulator.configure(ifMatch: .ignore)
        let key = try phone.makeKey()
        try phone.configure(#"{"encrypt": true, "identityFile": "\#(key.path)"}"#)
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        let tablet = try write(
            Data(
                backupJSON(
                    device: "tablet",
                    challenges: ["A": "2026-11-01T00:00:00.000Z", "T": "2026-11-02T00:00:00.000Z"]
                ).utf8), named: "tablet.json")
        let sealed = phone.folder.appendingPathComponent("tablet.age")
        let made = try run(
            ReferenceTools.age, ["-r", key.publicKey, "-o", sealed.path, tablet.path])
        #expect(made.status == 0, "\(made.stderr)")
        try emulator.interleave(try Data(contentsOf: sealed), name: "habit-backup.json")
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "P": "2026-11-03T00:00:00.000Z"]))
        try emulator.inject(.status(503, count: 100, paths: ["/drive/v3/files/"]))
        let cut = try phone.backup()
        #expect(cut.status == 5, "\(cut.stderr)")
        #expect(FileManager.default.fileExists(atPath: phone.pendingVerification.path))
        try emulator.clearFaults()
        let settled = try phone.run(["status", "--remote"])
        // It finishes the check; it still exits 8, as the last backup failed (exit 5).
        #expect(settled.status == 8, "\(settled.stderr)")
        #expect(!FileManager.default.fileExists(atPath: phone.pendingVerification.path))
        let remote = try write(try remoteBytes(), named: "merged.age")
        #expect(try Data(contentsOf: remote).starts(with: Data("age-encryption.org/v1\n".utf8)))
        let opened = try run(ReferenceTools.age, ["-d", "-i", key.path, remote.path])
        #expect(opened.status == 0, "\(opened.stderr)")
        let document = try BackupReader.read(Array(opened.stdout.utf8)).document
        #expect(challengeIDs(document) == ["A", "P", "T"])
        expectNoSecret([cut, settled])
    }

    /// Older versions of an encrypted backup: `history --contents` and `restore --revision`
    /// decrypt each revision with the profile's key; without one, history says so per
    /// revision and the restore stops (exit 3), nothing written.
    @Test func historyAndRestoreRevisionDecryptOlderVersions() throws {
        let key = try phone.makeKey()
        try phone.configure(#"{"encrypt": true, "identityFile": "\#(key.path)"}"#)
        try phone.write(backupJSON(device: "phone", challenges: ["P": "2026-11-01T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["P": "2026-11-01T00:00:00.000Z", "Q": "2026-11-02T00:00:00.000Z"]))
        try #require(try phone.backup().status == 0)
        let history = try phone.run(["history", "--contents", "--json"])
        #expect(history.status == 0, "\(history.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any])
        let revisions = try #require(object["revisions"] as? [[String: Any]])
        let counts = revisions.map { ($0["contents"] as? [String: Any])?["challenges"] as? Int }
        #expect(counts == [1, 2], "\(history.stdout)")
        let first = try #require(revisions.first?["id"] as? String)
        let state = phone.folder.appendingPathComponent("older.json")
        let restored = try restoreInto(state, ["--revision", first])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(
            challengeIDs(try BackupReader.read(Array(Data(contentsOf: state))).document) == ["P"])

        // What history remembered by checksum needs no key; the bytes themselves do.
        try phone.configure("{}")
        try FileManager.default.removeItem(
            at: phone.profileFolder.appendingPathComponent("history-cache.json"))
        let keyless = try phone.run(["history", "--contents", "--json"])
        #expect(keyless.status == 0, "\(keyless.stderr)")
        #expect(keyless.stdout.contains("no key to open it"), "\(keyless.stdout)")
        let before = try Data(contentsOf: state)
        let refused = try restoreInto(state, ["--revision", first])
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("is encrypted (age) and this profile has no key"))
        #expect(try Data(contentsOf: state) == before)
        expectNoSecret([history, restored, keyless, refused])
    }
}
