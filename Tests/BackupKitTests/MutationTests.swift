import BackupKit
import Foundation
import SeededRandom
import TestSupport
import Testing

/// Thousands of seeded random mutations of a valid file: the reader must never crash, and
/// whatever it accepts must also pass `BackupValidator` (the reader lets nothing through
/// that the typed-document rules reject) and round-trip through the writer.
@Suite struct MutationTests {
    enum Mutation: CaseIterable {
        case flipByte, deleteByte, deleteRange, duplicateLine, changeNumber, insertByte
    }

    static func mutate(_ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = bytes
        let mutation = Mutation.allCases.randomElement(using: &random) ?? .flipByte
        let index = Int.random(in: 0..<bytes.count, using: &random)
        switch mutation {
        case .flipByte:
            bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
        case .deleteByte:
            bytes.remove(at: index)
        case .deleteRange:
            bytes.removeSubrange(
                index..<min(bytes.count, index + Int.random(in: 1...40, using: &random)))
        case .insertByte:
            let interesting = Array(#"{}[],:"\0-.eE \#u{7F}"#.utf8) + [0xC3, 0xFF, 0xED]
            bytes.insert(interesting.randomElement(using: &random) ?? 0, at: index)
        case .duplicateLine:
            // A whole line again right after itself: duplicate keys, mostly.
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            let line = Int.random(in: 0..<lines.count, using: &random)
            var result: [UInt8] = []
            for (number, text) in lines.enumerated() {
                result += text + [UInt8(ascii: "\n")]
                if number == line { result += text + [UInt8(ascii: "\n")] }
            }
            bytes = result
        case .changeNumber:
            let digits = bytes.indices.filter { (48...57).contains(bytes[$0]) }
            guard let at = digits.randomElement(using: &random) else { break }
            let replacement = [
                "0", "1", "-1", "4", "5", "9999", "10000", "1e3", "2.5", "00", "365", "366",
            ]
            var end = at
            while end < bytes.count, (48...57).contains(bytes[end]) { end += 1 }
            bytes.replaceSubrange(
                at..<end, with: Array((replacement.randomElement(using: &random) ?? "0").utf8))
        }
        return bytes
    }

    /// `rounds` files, `file(round)` each with one to three seeded mutations.
    static func mutated(rounds: Int, seed: UInt64, of file: (Int) -> [UInt8]) -> [[UInt8]] {
        var random = SeededRandom(seed: seed)
        return (0..<rounds).map { round in
            var bytes = file(round)
            for _ in 0...Int.random(in: 0..<2, using: &random) {
                bytes = mutate(bytes, &random)
            }
            return bytes
        }
    }

    /// The format's example and every shipped example, each with its own seed.
    static var files: [URL] {
        [Paths.file("Tests/BackupKitTests/Fixtures/v3-example.json")]
            + ((try? ExampleFiles.valid()) ?? [])
    }

    @Test(arguments: files.enumerated().map { (seed: UInt64($0.offset + 1), file: $0.element) })
    func mutatedFilesNeverCrashAndAcceptedOnesAreValid(seed: UInt64, file: URL) throws {
        let original = Array(try Data(contentsOf: file))
        var random = SeededRandom(seed: seed)
        var accepted = 0
        for round in 0..<2000 {
            var bytes = original
            for _ in 0...Int.random(in: 0..<3, using: &random) {
                bytes = Self.mutate(bytes, &random)
            }
            guard let result = try? BackupReader.read(bytes) else { continue }
            accepted += 1
            #expect(BackupValidator.validate(result.document) == [], "seed \(seed) round \(round)")
            #expect(
                try BackupReader.read(BackupWriter.write(result.document)).document
                    == result.document,
                "seed \(seed) round \(round)")
        }
        // Many mutations (white space, digits within range) leave a valid file.
        #expect(accepted > 0)
    }
}
