import BackupSync
import Envelope
import Foundation
import LocalFiles

/// The profile's age envelope around the backup's bytes on Drive, so neither Google nor
/// anyone with the account reads the data, and any age tool opens it with the user's key.
///
/// Design: the sync engine (`BackupSync`) sees only the codec's closures (`sealing`): `open`
/// on every encrypted byte it downloads and `seal` on every byte it uploads (encrypted when
/// the profile encrypts); comparisons ("did the merge change anything?") stay on plaintext,
/// and the rules for switching (a plain backup is rewritten encrypted once; an encrypted one
/// is never replaced by a profile that does not encrypt) are the engine's. Keys come in restic's way: a passphrase from `--password-file FILE`,
/// `--password-command CMD` or `CLOUDBACKUP_PASSWORD_FILE` / `CLOUDBACKUP_PASSWORD_COMMAND`
/// (never an argument's value, never printed), and/or an age identity file (`identityFile`).
/// `encrypt` turns encryption of uploads on; a key is then required.
struct RemoteEncryption {
    /// Where uploads are encrypted to; nil when the profile does not encrypt.
    let recipients: [Recipient]?
    /// What opens an encrypted download.
    let identities: [Identity]
    /// The profile says `"encrypt": false` (not merely nothing) and has a key: an encrypted
    /// backup that key opens is rewritten plain once (`SyncCodec.Uploads.unsealed`). Without a key it
    /// is refused, even where a plaintext kept copy would let the run go on: one rule.
    var decrypts = false

    static let plain = RemoteEncryption(recipients: nil, identities: [])

    var encrypts: Bool { recipients != nil }

    /// What the user configures, for the messages that say what is missing.
    static let keySources =
        "--password-file FILE, --password-command CMD, CLOUDBACKUP_PASSWORD_FILE, CLOUDBACKUP_PASSWORD_COMMAND, or identityFile in config.json"

    /// The passphrase options of `backup` and `restore`.
    struct Options: Sendable {
        var passwordFile: String?
        var passwordCommand: String?

        init(_ arguments: inout Arguments) throws(CLIError) {
            passwordFile = try arguments.option(.passwordFile)
            // `OptionGroup.keys` keeps the two from coming together.
            passwordCommand = try arguments.option(.passwordCommand)
        }

        init() {}
    }

    /// The keys `profile` and `options` give (options first, then the environment); exit 2
    /// when the profile encrypts without any, or a passphrase source fails; exit 3 for a
    /// broken or exposed identity file.
    static func load(profile: Profile, options: Options, environment: [String: String])
        throws(CLIError) -> RemoteEncryption
    {
        func setting(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        let file =
            options.passwordFile
            ?? (options.passwordCommand == nil ? setting("CLOUDBACKUP_PASSWORD_FILE") : nil)
        let command =
            options.passwordCommand ?? (file == nil ? setting("CLOUDBACKUP_PASSWORD_COMMAND") : nil)
        var passphrase: [UInt8]?
        if let file { passphrase = try Self.passphrase(fromFile: file) }
        if let command { passphrase = try Self.passphrase(fromCommand: command) }
        // The envelope keeps its own wiped copies; this one is cleared as far as Swift lets.
        defer {
            passphrase?.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        }
        let keyed = try profile.identityFile.map(identities(inFile:)) ?? []
        var identities = keyed
        if let passphrase { identities.append(.passphrase(passphrase)) }
        guard profile.encrypt == true else {
            return RemoteEncryption(
                recipients: nil, identities: identities,
                decrypts: profile.encrypt == false && !identities.isEmpty)
        }
        switch (passphrase, keyed.isEmpty) {
        case (nil, true):
            throw CLIError.noKey(
                "profile '\(profile.name)' encrypts its backup but has no key; give one: \(keySources)"
            )
        case (let passphrase?, true):
            return RemoteEncryption(
                recipients: [.scrypt(passphrase: passphrase)], identities: identities)
        case (nil, false):
            return RemoteEncryption(
                recipients: keyed.compactMap(\.recipient), identities: identities)
        case (.some, false):
            throw CLIError.noKey(
                "profile '\(profile.name)' has both a passphrase and identityFile; age encrypts to a passphrase only alone, so give one of them"
            )
        }
    }

    /// `codec` with this envelope around its bytes: the one place where the sync engine's
    /// bytes meet encryption.
    func sealing<Document>(_ codec: SyncCodec<Document>) -> SyncCodec<Document> {
        var codec = codec
        codec.isSealed = Envelope.isEncrypted
        codec.open = { try open($0) }
        codec.seal = { try seal($0) }
        codec.uploads = encrypts ? .sealed : decrypts ? .unsealed : .plain
        return codec
    }

    /// The profile has no key at all for an encrypted backup.
    struct MissingKey: Error {}

    /// Drive's bytes as the document's: an age file decrypted (`MissingKey`, or the
    /// envelope's `EnvelopeError` when no key given opens it), plain bytes as they are.
    func open(_ bytes: [UInt8]) throws -> [UInt8] {
        guard Envelope.isEncrypted(bytes) else { return bytes }
        guard !identities.isEmpty else { throw MissingKey() }
        return try Envelope.decrypt(bytes, with: identities)
    }

    /// The document's bytes as they go to Drive: encrypted when the profile encrypts.
    func seal(_ bytes: [UInt8]) throws(EnvelopeError) -> [UInt8] {
        guard let recipients else { return bytes }
        return try Envelope.encrypt(bytes, to: recipients)
    }

    /// Said once, after the upload that encrypted a plain backup.
    static let encryptedNow =
        "the backup on Drive was not encrypted; this profile encrypts, so it was uploaded encrypted"

    /// Said once, after the upload that turned an encrypted backup plain.
    static let decryptedNow =
        "the backup on Drive was encrypted; this profile sets encrypt to false, so it was uploaded in plain"

    private static let maxPassphraseBytes = 4096

    /// The first line of `path` (restic's convention: one trailing newline is not part of it).
    private static func passphrase(fromFile path: String) throws(CLIError) -> [UInt8] {
        let bytes: [UInt8]?
        do {
            bytes = try SecretFile(path, kind: "a password file", holding: "your passphrase")
                .read(maxBytes: maxPassphraseBytes)
        } catch let error as SecretFile.TooOpen {
            throw .tooOpen(error)
        } catch {
            throw CLIError.noKey("--password-file: \(CloudBackup.describe(error).lines[0])")
        }
        guard let bytes else {
            throw CLIError.noKey(
                "--password-file: \(LocalFileError(path: path, operation: .open, errno: ENOENT))")
        }
        return try firstLine(bytes, from: "\(path) (the password file)")
    }

    /// What `/bin/sh -c command` prints, its first line; its stderr goes to ours.
    private static func passphrase(fromCommand command: String) throws(CLIError) -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw CLIError.noKey(
                "--password-command could not start /bin/sh: \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIError.noKey(
                "the password command exited with status \(process.terminationStatus); fix it (run it by hand to see)"
            )
        }
        guard data.count <= maxPassphraseBytes else {
            throw CLIError.noKey(
                "the password command printed over \(maxPassphraseBytes) bytes; print the passphrase alone"
            )
        }
        return try firstLine(Array(data), from: "the password command's output")
    }

    private static func firstLine(_ bytes: [UInt8], from source: String) throws(CLIError) -> [UInt8]
    {
        var line = Array(bytes.prefix { $0 != 0x0a })
        if line.last == 0x0d { line.removeLast() }
        guard !line.isEmpty else {
            throw CLIError.noKey("\(source) holds no passphrase (its first line is empty)")
        }
        return line
    }

    /// The identities of the file `identityFile` names, refused when others may read it.
    private static func identities(inFile path: String) throws(CLIError) -> [Identity] {
        do {
            let secret = SecretFile(path, kind: "an identity file", holding: "your key")
            guard let bytes = try secret.read(maxBytes: 1 << 16) else {
                throw CLIError.badProfile(
                    "\(path) (identityFile)",
                    "no such file; create it with 'age-keygen -o \(path)' or fix the setting")
            }
            return try Identity.parseFile(String(decoding: bytes, as: UTF8.self))
        } catch let error as CLIError {
            throw error
        } catch let error as SecretFile.TooOpen {
            throw .tooOpen(error)
        } catch let error as LocalFileError {
            throw CLIError.unreadableProfile(error)
        } catch let error as EnvelopeError {
            throw CLIError.badProfile("\(path) (identityFile)", error.description)
        } catch {
            throw CLIError.badProfile(path, "\(error)")
        }
    }
}
