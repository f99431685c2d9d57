import Foundation
import Testing

@testable import BackupKit

/// Python's `json.dumps` rewrites a file with a space after each colon and comma and the
/// keys in the order they came: the reader's shortcut reads such day logs too. A file and
/// its twin steered off the shortcut (a second space before each log's `{`) must read the
/// same, as `CanonicalDayLogTests` holds for the canonical spelling.
@Suite struct SpacedDayLogTests {
    typealias Outcome = CanonicalDayLogTests.Outcome

    /// `bytes` as `json.dumps` spells them: a space after every `:` and `,` outside strings.
    static func pythonSpaced(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + bytes.count / 8)
        var inString = false
        var escaped = false
        for byte in bytes {
            result.append(byte)
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: ":") || byte == UInt8(ascii: ",") {
                result.append(UInt8(ascii: " "))
            }
        }
        return result
    }

    /// Every `: {"mood": ` (where a spaced day log starts) as `:  {"mood": `.
    static func steeredOff(_ bytes: [UInt8]) -> [UInt8] {
        CanonicalDayLogTests.spaced(bytes, start: #": {"mood": "#)
    }

    static func spacedFile(seed: UInt64) -> [UInt8] {
        pythonSpaced(CanonicalDayLogTests.canonicalFile(seed: seed))
    }

    /// Whether every day log of `bytes` came the shortcut's way (the decoder's own flag).
    static func tookTheShortcut(_ bytes: [UInt8]) throws -> Bool {
        let start = try #require(bytes.firstRange(of: Array(#""dayLogs": "#.utf8))).upperBound
        return try bytes.withUnsafeBufferPointer { buffer in
            let scanner = JSONScanner(base: buffer.baseAddress!, count: buffer.count, maxDepth: 32)
            scanner.position = start
            let decoder = DocumentDecoder(scanner: scanner, maxIssues: 100)
            _ = try decoder.dayLogs()
            return decoder.dayLogsHoldOwnRules
        }
    }

    @Test(arguments: 0..<10)
    func aSpacedFileReadsAsItsCanonicalOne(seed: UInt64) throws {
        let canonical = CanonicalDayLogTests.canonicalFile(seed: seed)
        let spaced = Self.pythonSpaced(canonical)
        #expect(spaced.count > canonical.count)
        #expect(CanonicalDayLogTests.outcome(spaced) == CanonicalDayLogTests.outcome(canonical))
        #expect(try Self.tookTheShortcut(spaced))
        #expect(try !Self.tookTheShortcut(Self.steeredOff(spaced)))
    }

    /// On two cores: the second half starts at a `}}, "` boundary, and reads the same.
    @Test(arguments: 0..<10)
    func aSpacedFileSplitsAtALogAndReadsTheSame(seed: UInt64) throws {
        let canonical = TwoCoreReadTests.file(seed: seed)
        guard TwoCoreReadTests.document(seed: seed).dayLogs.count > 2 else { return }
        let spaced = Self.pythonSpaced(canonical)
        let start = try #require(spaced.firstRange(of: Array(#""dayLogs": {"#.utf8)))
        let split = try #require(
            spaced.withUnsafeBufferPointer {
                DocumentDecoder.splitPoint(in: $0, after: start.upperBound, minimum: 0)
            })
        #expect(spaced[(split - 4)..<split].elementsEqual(#"}}, "#.utf8))
        #expect(
            TwoCoreReadTests.outcome(spaced, twoCores: true)
                == TwoCoreReadTests.outcome(canonical, twoCores: false))
    }

    @Test(arguments: CanonicalDayLogTests.edits.indices)
    func anEditedSpacedLogReadsTheSameOnBothWays(edit: Int) throws {
        let (old, new) = CanonicalDayLogTests.edits[edit]
        let text = String(decoding: CanonicalDayLogTests.canonicalFile(seed: 3), as: UTF8.self)
        let range = try #require(text.range(of: old), "the seed-3 file has \(old)")
        let bytes = Self.pythonSpaced(Array(text.replacingCharacters(in: range, with: new).utf8))
        #expect(
            CanonicalDayLogTests.outcome(bytes)
                == CanonicalDayLogTests.outcome(Self.steeredOff(bytes)))
    }

    @Test func mutatedSpacedFilesReadTheSameOnBothWays() {
        CanonicalDayLogTests.expectMutantsReadAsTheirTwins(
            rounds: 800, seed: 41, of: { Self.spacedFile(seed: UInt64($0 % 20)) },
            twin: { Self.steeredOff($0) }, differing: 500)
    }
}
