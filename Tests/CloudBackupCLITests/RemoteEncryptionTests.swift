import BackupSync
import Digests
import Foundation
import GoogleDrive
import LocalFiles
import TestSupport
import Testing

@testable import CloudBackupCLI

/// Where the profile's encryption settings and keys come from, and how each broken source is
/// refused; the envelope's bytes themselves are EnvelopeTests' and EncryptedBackupTests'.
@Suite struct RemoteEncryptionTests {
    /// A profile folder with `config` as its config.json.
    static func profile(_ config: String, environment: [String: String] = [:]) throws -> Profile {
        let base = try Paths.temporaryFolder()
        let folder = base.appendingPathComponent("cloudbackup/default").path
        try LocalFile.makeDirectory(folder)
        try LocalFile.writeAtomically(Array(config.utf8), to: folder + "/config.json", mode: 0o600)
        return try Profile.load(
            name: "default",
            environment: environment.merging(["XDG_CONFIG_HOME": base.path]) { a, _ in a })
    }

    @Test func encryptComesFromTheFileOrTheEnvironment() throws {
        // Unset is not "false": only an explicit false rewrites an encrypted backup plain.
        #expect(try Self.profile("{}").encrypt == nil)
        #expect(try Self.profile(#"{"encrypt": true}"#).encrypt == true)
        #expect(try Self.profile(#"{"encrypt": false}"#).encrypt == false)
        #expect(
            try Self.profile(#"{"encrypt": true}"#, environment: ["CLOUDBACKUP_ENCRYPT": "0"])
                .encrypt == false)
        #expect(try Self.profile("{}", environment: ["CLOUDBACKUP_ENCRYPT": "1"]).encrypt == true)
        #expect(
            try Self.profile("{}", environment: ["CLOUDBACKUP_IDENTITY_FILE": "/k"]).identityFile
                == "/k")
        let file = #expect(throws: CLIError.self) { try Self.profile(#"{"encrypt": "yes"}"#) }
        #expect(file?.exitCode == .invalidFile)
        #expect(file?.lines.first?.hasSuffix("setting 'encrypt' must be true or false") == true)
        let variable = #expect(throws: CLIError.self) {
            try Self.profile("{}", environment: ["CLOUDBACKUP_ENCRYPT": "yes"])
        }
        #expect(variable?.exitCode == .usage)
    }

    struct Source: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var arguments: [String]
        var environment: [String: String] = [:]
        var exitCode: ExitCode = .usage
        var says: String
    }

    static let sources: [Source] = [
        Source(
            testDescription: "both options",
            arguments: ["--password-file", "f", "--password-command", "c"],
            says: "--password-file and --password-command exclude each other"),
        Source(
            testDescription: "a missing password file",
            arguments: ["--password-file", "/nonexistent/pw"],
            says: "--password-file: "),
        Source(
            testDescription: "an empty password file", arguments: ["--password-file", "EMPTY"],
            says: "holds no passphrase"),
        Source(
            testDescription: "a password file others can read",
            arguments: ["--password-file", "OPEN"], exitCode: .invalidFile,
            says:
                "permissions 0644 are too open for a password file (it holds your passphrase); run `chmod 600 "
        ),
        Source(
            testDescription: "a failing password command",
            arguments: ["--password-command", "exit 3"],
            says: "the password command exited with status 3"),
        Source(
            testDescription: "an empty password from the environment's command", arguments: [],
            environment: ["CLOUDBACKUP_PASSWORD_COMMAND": "printf '\\n'"],
            says: "holds no passphrase"),
        Source(
            testDescription: "no key at all", arguments: [],
            says: "encrypts its backup but has no key; give one: --password-file FILE"),
    ]

    @Test(arguments: sources)
    func brokenKeySourcesAreRefused(source: Source) throws {
        let profile = try Self.profile(#"{"encrypt": true}"#)
        let empty = profile.folder + "/empty"
        try LocalFile.writeAtomically([], to: empty, mode: 0o600)
        let open = profile.folder + "/open"
        try LocalFile.writeAtomically(Array("secret\n".utf8), to: open, mode: 0o644)
        let error = #expect(throws: CLIError.self) {
            var arguments = Arguments(
                source.arguments.map { ["EMPTY": empty, "OPEN": open][$0] ?? $0 }, usage: "usage",
                groups: [.keys])
            try arguments.check()
            let options = try RemoteEncryption.Options(&arguments)
            _ = try RemoteEncryption.load(
                profile: profile, options: options, environment: source.environment)
        }
        #expect(error?.exitCode == source.exitCode)
        #expect(error?.lines.first?.contains(source.says) == true, "\(error?.lines ?? [])")
    }

    /// The environment's file is used when no option is given; an option wins over it.
    @Test func aPasswordFileGivesAnScryptRecipient() throws {
        let profile = try Self.profile(#"{"encrypt": true}"#)
        let file = profile.folder + "/pw"
        try LocalFile.writeAtomically(Array("secret\r\nsecond line".utf8), to: file, mode: 0o600)
        let keys = try RemoteEncryption.load(
            profile: profile, options: RemoteEncryption.Options(),
            environment: ["CLOUDBACKUP_PASSWORD_FILE": file])
        #expect(keys.encrypts)
        let sealed = try keys.seal(Array("{}".utf8))
        #expect(
            String(decoding: sealed.prefix(32), as: UTF8.self).hasPrefix(
                "age-encryption.org/v1\n-> scrypt"))
        let same = try RemoteEncryption.load(
            profile: try Self.profile("{}"), options: RemoteEncryption.Options(),
            environment: ["CLOUDBACKUP_PASSWORD_COMMAND": "printf secret"])
        #expect(try same.open(sealed) == Array("{}".utf8))
    }

    /// An encrypted backup's copy keeps the plaintext and Drive's checksum of the encrypted
    /// bytes, and survives a save and a load; a copy whose plaintext was damaged on disk
    /// does not load.
    @Test func aKeptCopyOfAnEncryptedBackupKeepsPlaintextAndDrivesChecksum() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("kept-copy.json").path
        let plain = Array(#"{"plain":true}"#.utf8)
        let onDrive = Array("age-encryption.org/v1 and so on".utf8)
        let copy = KeptCopy(
            file: DriveFile(id: "f1", name: "n", version: 4), etag: "e", bytes: plain,
            sealedMd5: Digest.hex(Digest.md5(onDrive)))
        #expect(copy.md5Checksum == "\(Digest.hex(Digest.md5(onDrive)))")
        #expect(!copy.holdsDriveBytes)
        #expect(copy.matches(DriveFile(id: "f1", name: "n", md5Checksum: copy.md5Checksum)))
        #expect(
            !copy.matches(
                DriveFile(id: "f1", name: "n", md5Checksum: Digest.hex(Digest.md5(plain)))))
        try copy.save(to: path)
        let loaded = try #require(KeptCopy.load(from: path, maxBytes: 1 << 20))
        #expect(loaded == copy)
        var stored = try LocalFile.read(path)
        stored[stored.count - 2] ^= 1
        try LocalFile.writeAtomically(stored, to: path)
        #expect(KeptCopy.load(from: path, maxBytes: 1 << 20) == nil)
        #expect(
            KeptCopy(file: DriveFile(id: "f1", name: "n"), etag: nil, bytes: plain).holdsDriveBytes)
    }
}
