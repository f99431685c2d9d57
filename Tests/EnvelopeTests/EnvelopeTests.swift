import Envelope
import Foundation
import SeededRandom
import Testing

@Suite struct EnvelopeTests {
    /// The example key pair of the C2SP specification (X25519 recipient type).
    static let specIdentity =
        "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
    static let specRecipient = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"

    /// Sizes around the 64 KiB chunk edges: empty, one byte, one chunk less a byte, exactly one
    /// (a full final chunk), one more byte (an extra one-byte chunk), and several; then around
    /// the 16 chunks from which the payload is sealed and opened in two halves at once: 15
    /// full chunks (one thread), 16 full ones (two halves, a full final chunk) and 34 with a
    /// short final one (the halves of an even count, the last half's last chunk short).
    static let sizes = [
        0, 1, 65_535, 65_536, 65_537, 131_072, 200_000, 15 * 65_536, 16 * 65_536, 33 * 65_536 + 5,
    ]

    static func bytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
        // Eight bytes a draw: the sizes above reach megabytes, in a debug build.
        var random = SeededRandom(seed: seed)
        let words = (0..<(count + 7) / 8).map { _ in random.next() }
        return words.withUnsafeBytes { Array($0.prefix(count)) }
    }

    @Test func specExampleKeyHasSpecExampleRecipient() throws {
        let identity = try Identity(parsing: Self.specIdentity)
        #expect(identity.recipient?.encoded == Self.specRecipient)
        #expect(try Recipient(parsing: Self.specRecipient).encoded == Self.specRecipient)
        #expect(
            try Identity(parsing: Self.specIdentity.lowercased()).recipient?.encoded
                == Self.specRecipient)
    }

    @Test(arguments: sizes)
    func roundTripsAcrossChunkEdges(size: Int) throws {
        let identity = try Identity.generate()
        let plaintext = Self.bytes(size)
        let sealed = try Envelope.encrypt(plaintext, to: [try #require(identity.recipient)])
        #expect(Envelope.isEncrypted(sealed))
        #expect(try Envelope.decrypt(sealed, with: [identity]) == plaintext)
        // One 16-byte tag a chunk; an empty plaintext is one empty chunk.
        let chunks = max(1, (size + 65_535) / 65_536)
        let header = try #require(sealed.firstRange(of: Array("\n--- ".utf8))).upperBound + 44
        #expect(sealed.count == header + 16 + size + 16 * chunks)
    }

    @Test func passphraseRoundTripsAndAWrongOneIsNoMatch() throws {
        let plaintext = Self.bytes(1000)
        let sealed = try Envelope.encrypt(
            plaintext, to: [.scrypt(passphrase: Array("correct horse".utf8), workFactor: 10)])
        #expect(String(decoding: sealed.prefix(40), as: UTF8.self).contains("-> scrypt "))
        #expect(
            try Envelope.decrypt(sealed, with: [.passphrase(Array("correct horse".utf8))])
                == plaintext)
        let error = #expect(throws: EnvelopeError.self) {
            try Envelope.decrypt(sealed, with: [.passphrase(Array("wrong".utf8))])
        }
        #expect(error?.kind == .noMatch)
        #expect(error?.description.contains("a passphrase") == true)
        let keyed = #expect(throws: EnvelopeError.self) {
            try Envelope.decrypt(sealed, with: [try Identity.generate()])
        }
        #expect(keyed?.kind == .noMatch)
    }

    /// age's default work factor is written unless asked otherwise; a factor over what the
    /// reader accepts is refused before scrypt runs.
    @Test func workFactorIsEighteenAndCappedWhenDecrypting() throws {
        let sealed = try Envelope.encrypt(
            [1, 2, 3], to: [.scrypt(passphrase: [0x61], workFactor: 12)])
        let error = #expect(throws: EnvelopeError.self) {
            try Envelope.decrypt(sealed, with: [.passphrase([0x61], maxWorkFactor: 11)])
        }
        #expect(error?.kind == .header)
        #expect(error?.description.contains("work factor 2^12") == true)
        #expect(Recipient.defaultWorkFactor == 18)
        #expect(Identity.defaultMaxWorkFactor == 22)
    }

    @Test func aPassphraseIsTheOnlyRecipientOrNone() throws {
        let error = #expect(throws: EnvelopeError.self) {
            try Envelope.encrypt(
                [1],
                to: [
                    .scrypt(passphrase: [0x61], workFactor: 10),
                    try #require(Identity.generate().recipient),
                ])
        }
        #expect(error?.kind == .key)
        #expect(throws: EnvelopeError.self) { try Envelope.encrypt([1], to: []) }
    }

    struct Damage: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var kind: EnvelopeError.Kind
        /// The file (three chunks: 64 KiB, 64 KiB, 100 bytes) with the payload starting at
        /// `payload`, damaged.
        var apply: @Sendable (_ file: [UInt8], _ payload: Int) -> [UInt8]
    }

    static let chunk = 65_536 + 16

    static let damages: [Damage] = [
        Damage(testDescription: "a flipped bit in the first chunk", kind: .payload) {
            file, payload in
            var file = file
            file[payload + 16 + 10] ^= 1
            return file
        },
        Damage(testDescription: "a flipped bit in the last chunk but one", kind: .payload) {
            file, payload in
            var file = file
            let chunks = (file.count - payload - 16 + chunk - 1) / chunk
            file[payload + 16 + (chunks - 2) * chunk + 3] ^= 1
            return file
        },
        Damage(testDescription: "a flipped bit in the last chunk's tag", kind: .payload) {
            file, _ in
            var file = file
            file[file.count - 1] ^= 0x80
            return file
        },
        Damage(testDescription: "the last chunk cut off", kind: .payload) { file, payload in
            let chunks = (file.count - payload - 16 + chunk - 1) / chunk
            return Array(file.prefix(payload + 16 + (chunks - 1) * chunk))
        },
        Damage(testDescription: "truncated inside a chunk", kind: .payload) { file, _ in
            Array(file.dropLast(50))
        },
        Damage(testDescription: "chunks 1 and 2 swapped", kind: .payload) { file, payload in
            let start = payload + 16
            let first = file[start..<(start + chunk)]
            let second = file[(start + chunk)..<(start + 2 * chunk)]
            return Array(file[..<start]) + second + first + file[(start + 2 * chunk)...]
        },
        Damage(testDescription: "bytes after the final chunk", kind: .payload) { file, _ in
            file + [0]
        },
        Damage(testDescription: "the payload nonce altered", kind: .payload) { file, payload in
            var file = file
            file[payload] ^= 1
            return file
        },
        Damage(testDescription: "the MAC altered", kind: .mac) { file, payload in
            // The MAC's first base64 character, which carries no padding bits.
            var file = file
            let at = payload - 44
            file[at] = file[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            return file
        },
        Damage(testDescription: "a grease stanza added", kind: .mac) { file, _ in
            let version = Array("age-encryption.org/v1\n".utf8)
            return version + Array("-> grease x\n\n".utf8) + file.dropFirst(version.count)
        },
        Damage(testDescription: "CRLF after the version line", kind: .header) { file, _ in
            Array("age-encryption.org/v1\r".utf8)
                + file.dropFirst("age-encryption.org/v1".utf8.count)
        },
        Damage(testDescription: "cut inside the header", kind: .header) { file, _ in
            Array(file.prefix(30))
        },
        Damage(testDescription: "an unknown version", kind: .header) { file, _ in
            Array("age-encryption.org/v2".utf8) + file.dropFirst("age-encryption.org/v1".utf8.count)
        },
    ]

    /// Each damage is refused with the kind of check that caught it, in one line, and no
    /// plaintext comes back (a throw is the only outcome): in a file of three chunks, opened
    /// on one thread, and in one of twenty, opened in two halves at once.
    @Test(arguments: damages, [2 * 65_536 + 100, 19 * 65_536 + 100])
    func damagedFilesAreRefused(damage: Damage, size: Int) throws {
        let identity = try Identity.generate()
        let sealed = try Envelope.encrypt(
            Self.bytes(size), to: [try #require(identity.recipient)])
        let payload = try #require(sealed.firstRange(of: Array("\n--- ".utf8))).upperBound + 44
        let error = #expect(throws: EnvelopeError.self) {
            try Envelope.decrypt(damage.apply(sealed, payload), with: [identity])
        }
        #expect(error?.kind == damage.kind, "\(error?.description ?? "")")
        #expect(error?.description.contains("\n") == false)
    }

    @Test func armoredFilesReadBack() throws {
        let identity = try Identity.generate()
        let plaintext = Self.bytes(70_000)
        let armored = Envelope.armor(
            try Envelope.encrypt(plaintext, to: [try #require(identity.recipient)]))
        #expect(armored.hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----\n"))
        #expect(
            armored.split(separator: "\n").dropFirst().dropLast().dropLast().allSatisfy {
                $0.count == 64
            })
        #expect(Envelope.isEncrypted(Array(armored.utf8)))
        #expect(try Envelope.decrypt(Array(armored.utf8), with: [identity]) == plaintext)
    }

    @Test func identityFilesSkipCommentsAndNameTheBadLineOnly() throws {
        let file =
            "# created: 2026-12-01\n# public key: \(Self.specRecipient)\n\n\(Self.specIdentity)\r\n"
        let identities = try Identity.parseFile(file)
        #expect(identities.count == 1)
        #expect(identities.first?.recipient?.encoded == Self.specRecipient)
        let broken = "# comment\n" + Self.specIdentity.dropLast() + "Y\n"
        let error = #expect(throws: EnvelopeError.self) { try Identity.parseFile(broken) }
        #expect(error?.description.hasPrefix("line 2 is not an age X25519 identity") == true)
        #expect(error?.description.contains("GFPYYSJZ") == false)
        #expect(throws: EnvelopeError.self) { try Identity.parseFile("# only a comment\n") }
    }

    @Test func plainBytesAreNotTakenForAgeFiles() {
        #expect(!Envelope.isEncrypted(Array("{\"schemaVersion\":3}".utf8)))
        #expect(!Envelope.isEncrypted([]))
        #expect(Envelope.isEncrypted(Array("age-encryption.org/v1\n".utf8)))
    }
}
