import Envelope
import Foundation
import TestSupport
import Testing

/// The envelope against the reference tools, run as subprocesses: Debian's `age` (X25519,
/// `age-keygen`, `age -r`, `age -d -i`) and PyPI's `pyrage` (passphrase), both installed by
/// `make test`. Each direction, at sizes across the chunk edges.
@Suite struct InteropTests {
    static let age = ReferenceTools.age
    /// Across the chunk edges, and 17 chunks: sealed and opened in two halves at once.
    static let sizes = [0, 65_536, 200_000, 16 * 65_536 + 1]

    /// A temporary folder with a fresh `age-keygen` key, and its public line.
    struct Keyed {
        var folder: URL
        var keyFile: URL
        var publicKey: String

        init() throws {
            folder = try Paths.temporaryFolder()
            keyFile = folder.appendingPathComponent("key.txt")
            publicKey = try ReferenceTools.generateKey(at: keyFile)
        }
    }

    @Test func ageKeygenKeysParseToTheirPublicKey() throws {
        let keyed = try Keyed()
        defer { try? FileManager.default.removeItem(at: keyed.folder) }
        let identities = try Identity.parseFile(String(contentsOf: keyed.keyFile, encoding: .utf8))
        #expect(identities.count == 1)
        #expect(identities.first?.recipient?.encoded == keyed.publicKey)
    }

    @Test(arguments: sizes)
    func ageDecryptsOursAndWeDecryptAges(size: Int) throws {
        let keyed = try Keyed()
        defer { try? FileManager.default.removeItem(at: keyed.folder) }
        let plaintext = EnvelopeTests.bytes(size, seed: UInt64(size))
        let plainFile = keyed.folder.appendingPathComponent("plain")
        try Data(plaintext).write(to: plainFile)

        let ours = keyed.folder.appendingPathComponent("ours.age")
        try Data(try Envelope.encrypt(plaintext, to: [try Recipient(parsing: keyed.publicKey)]))
            .write(to: ours)
        let opened = keyed.folder.appendingPathComponent("opened")
        let decrypted = try run(
            Self.age, ["-d", "-i", keyed.keyFile.path, "-o", opened.path, ours.path])
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        // age creates its output at the first byte written: none for an empty file.
        #expect(((try? Data(contentsOf: opened)) ?? Data()) == Data(plaintext))

        let identities = try Identity.parseFile(String(contentsOf: keyed.keyFile, encoding: .utf8))
        for armor in [false, true] {
            let theirs = keyed.folder.appendingPathComponent("theirs.age")
            let made = try run(
                Self.age,
                ["-r", keyed.publicKey] + (armor ? ["-a"] : []) + [
                    "-o", theirs.path, plainFile.path,
                ])
            try #require(made.status == 0, "\(made.stderr)")
            #expect(
                try Envelope.decrypt(Array(Data(contentsOf: theirs)), with: identities)
                    == plaintext, "armor \(armor)")
        }
    }

    /// Our armor too reads back with age.
    @Test func ageReadsOurArmor() throws {
        let keyed = try Keyed()
        defer { try? FileManager.default.removeItem(at: keyed.folder) }
        let file = keyed.folder.appendingPathComponent("ours.age")
        let sealed = try Envelope.encrypt(
            Array("armored".utf8), to: [try Recipient(parsing: keyed.publicKey)])
        try Data(Envelope.armor(sealed).utf8).write(to: file)
        let result = try run(Self.age, ["-d", "-i", keyed.keyFile.path, file.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "armored")
    }

    /// pyrage (rage's library) with a passphrase, both ways; the passphrase reaches Python
    /// through its environment, and our side writes age's default work factor, 2^18.
    @Test func pyrageAndWeReadEachOthersPassphraseFiles() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let passphrase = "interop passphrase ✓"
        let plaintext = EnvelopeTests.bytes(100_000, seed: 3)
        let plainFile = folder.appendingPathComponent("plain")
        let theirs = folder.appendingPathComponent("theirs.age")
        try Data(plaintext).write(to: plainFile)
        let made = try ReferenceTools.pyrage("encrypt", plainFile, theirs, passphrase: passphrase)
        try #require(made.status == 0, "\(made.stderr)")
        let sealed = Array(try Data(contentsOf: theirs))
        #expect(
            try Envelope.decrypt(sealed, with: [.passphrase(Array(passphrase.utf8))]) == plaintext)

        let ours = folder.appendingPathComponent("ours.age")
        let opened = folder.appendingPathComponent("opened")
        try Data(try Envelope.encrypt(plaintext, to: [.scrypt(passphrase: Array(passphrase.utf8))]))
            .write(to: ours)
        #expect(
            String(decoding: try Data(contentsOf: ours).prefix(80), as: UTF8.self).contains(" 18\n")
        )
        let decrypted = try ReferenceTools.pyrage("decrypt", ours, opened, passphrase: passphrase)
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(try Data(contentsOf: opened) == Data(plaintext))
        let wrong = try ReferenceTools.pyrage("decrypt", ours, opened, passphrase: "not it")
        #expect(wrong.status != 0)
    }
}
