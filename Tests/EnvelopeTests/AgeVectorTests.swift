import Digests
import Envelope
import Foundation
import TestSupport
import Testing

/// C2SP's CCTV vectors for age (`../shared/age-vectors` beside the repository): each file's
/// expected outcome, a success with its payload's SHA-256 or a failure of the named kind.
/// Where CI clones the repository without `shared/` beside it, the suite is skipped and says
/// where it looked.
@Suite(.enabled(if: AgeVector.folderExists, "no age test vectors at \(AgeVector.folder.path)"))
struct AgeVectorTests {
    @Test(arguments: AgeVector.all)
    func vectorGivesItsExpectedOutcome(vector: AgeVector) throws {
        let identities = try vector.identities()
        let file = try vector.file()
        do {
            let plaintext = try Envelope.decrypt(
                vector.armored ? Envelope.dearmor(file) : file, with: identities)
            #expect(
                vector.expect == "success",
                "\(vector.name): decrypted, but \(vector.expect) expected")
            #expect(
                Digest.hex(Digest.sha256(plaintext)) == vector.payload,
                "\(vector.name): payload hash")
        } catch {
            #expect(
                AgeVector.expectations[vector.expect] == error.kind,
                "\(vector.name): \(vector.expect) expected, got \(error.kind): \(error.description)"
            )
            #expect(!error.description.contains("\n"), "\(vector.name): one line")
        }
    }

    /// Every vector is run but those whose outcome needs the hybrid post-quantum recipient
    /// (ML-KEM is not in OpenSSL 3.0): listed by name, so no other vector can fall out
    /// unnoticed, and counted, so a new vector in the folder is noticed.
    @Test func onlyTheHybridVectorsAreLeftOut() {
        let names = Set(AgeVector.loaded.map(\.name))
        let run = Set(AgeVector.all.map(\.name))
        #expect(names.count == 143)
        #expect(
            names.subtracting(run) == [
                "armor_hybrid", "hybrid", "hybrid_and_x25519", "hybrid_extra_argument",
                "hybrid_grease",
                "hybrid_identity", "hybrid_long_file_key", "hybrid_long_share", "hybrid_low_order",
                "hybrid_multiple_recipients", "hybrid_not_canonical_body",
                "hybrid_not_canonical_enc",
                "hybrid_short_share",
            ])
    }
}

struct AgeVector: Sendable, CustomTestStringConvertible {
    var name: String
    var expect: String
    var payload: String?
    var identityLines: [String]
    var passphrases: [String]
    var compressed: Bool
    var armored: Bool
    var body: [UInt8]

    var testDescription: String { name }

    static let folder = Paths.root.deletingLastPathComponent().appendingPathComponent(
        "shared/age-vectors")
    static var folderExists: Bool { FileManager.default.fileExists(atPath: folder.path) }

    /// The vectors' `expect` values, as the kinds of error they mean.
    static let expectations: [String: EnvelopeError.Kind] = [
        "header failure": .header, "HMAC failure": .mac, "no match": .noMatch,
        "payload failure": .payload, "armor failure": .armor,
    ]

    static let loaded: [AgeVector] = {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else {
            return []
        }
        return names.filter { $0 != "README.md" }.sorted().compactMap { name in
            (try? Data(contentsOf: folder.appendingPathComponent(name))).map {
                parse(name, Array($0))
            }
        }
    }()

    /// All but those whose only identities are hybrid (`AGE-SECRET-KEY-PQ-1…`) and that expect
    /// more than "no match", which is what a file only they open gives here.
    static let all: [AgeVector] = loaded.filter { vector in
        vector.expect == "no match"
            || !(vector.passphrases.isEmpty && !vector.identityLines.isEmpty
                && vector.identityLines.allSatisfy { $0.hasPrefix("AGE-SECRET-KEY-PQ-") })
    }

    /// `key: value` lines, an empty line, then the age file.
    static func parse(_ name: String, _ bytes: [UInt8]) -> AgeVector {
        var vector = AgeVector(
            name: name, expect: "", payload: nil, identityLines: [], passphrases: [],
            compressed: false, armored: false,
            body: [])
        var offset = 0
        while let end = bytes[offset...].firstIndex(of: 0x0a), end > offset {
            let line = String(decoding: bytes[offset..<end], as: UTF8.self)
            offset = end + 1
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch line[..<colon] {
            case "expect": vector.expect = value
            case "payload": vector.payload = value
            case "identity": vector.identityLines.append(value)
            case "passphrase": vector.passphrases.append(value)
            case "compressed": vector.compressed = value == "zlib"
            case "armored": vector.armored = value == "yes"
            default: break
            }
        }
        vector.body = Array(bytes[(offset + 1)...])
        return vector
    }

    /// The X25519 identities (hybrid ones left out) and the passphrases.
    func identities() throws -> [Identity] {
        try identityLines.filter { !$0.hasPrefix("AGE-SECRET-KEY-PQ-") }.map {
            try Identity(parsing: $0)
        }
            + passphrases.map { Identity.passphrase(Array($0.utf8)) }
    }

    /// The age file, inflated through Python's zlib when compressed (Foundation on Linux has no
    /// zlib of its own).
    func file() throws -> [UInt8] {
        guard compressed else { return body }
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in")
        let output = folder.appendingPathComponent("out")
        try Data(body).write(to: input)
        let result = try run(
            URL(fileURLWithPath: Paths.python),
            [
                "-c",
                "import sys, zlib; open(sys.argv[2], 'wb').write(zlib.decompress(open(sys.argv[1], 'rb').read()))",
                input.path, output.path,
            ])
        try #require(result.status == 0, "\(name): \(result.stderr)")
        return Array(try Data(contentsOf: output))
    }
}
