import BackupKit
import Foundation
import TestSupport
import Testing

/// The reader reads day logs spelled exactly as the writer spells them on a shortcut, and
/// everything else the general way. A space before a log's `{` is meaningless JSON but
/// steers every log off the shortcut, so a file and its spaced twin must read the same:
/// the same document, or the same issues, or the same syntax message (only its column moves).
@Suite struct CanonicalDayLogTests {
    enum Outcome: Equatable {
        case read(ReadResult)
        case syntax(line: Int, message: String)
        case refused(BackupFileError)
    }

    static func outcome(_ bytes: [UInt8]) -> Outcome {
        do {
            return .read(try BackupReader.read(bytes, options: ReadOptions(collectsNotes: true)))
        } catch {
            if case .syntax(let line, _, let message) = error {
                return .syntax(line: line, message: message)
            }
            return .refused(error)
        }
    }

    /// Every `:{"mood":` (where a day log starts) as `: {"mood":`: a space after the colon of
    /// each `start`, byte by byte (a mutated file need not be UTF-8).
    static func spaced(_ bytes: [UInt8], start: String = #":{"mood":"#) -> [UInt8] {
        let start = Array(start.utf8)
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index...].starts(with: start) {
                result += [UInt8(ascii: ":"), UInt8(ascii: " ")] + start.dropFirst()
                index += start.count
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    static func canonicalFile(seed: UInt64) -> [UInt8] {
        var random = RandomDocuments(seed: seed)
        return BackupWriter.write(random.document())
    }

    /// Edits of one canonical day log, each valid or not in its own way.
    static let edits: [(String, String)] = [
        (#""mood":null"#, #""mood":4.0"#),
        (#""mood":null"#, #""mood":-0"#),
        (#""mood":null"#, #""mood":7"#),
        (#""mood":null"#, #""mood":01"#),
        (#""mood":null"#, #""mood":"3""#),
        (#""values":{"#, #""values":{"x":1e0,"#),
        (#""values":{"#, #""values":{"zz":1,"#),
        (#""values":{"#, #""values":{"\u0061":1,"#),
        (#""values":{"#, #""values":{"bad id":1,"#),
        (#""values":{"#, #""values":{"x":1.5,"#),
        (#""values":{"#, #""values":{"x":123456789012345678901,"#),
        (#""note":""#, #""note":"\u00e9 \"quoted\" "#),
        (#""note":""#, #""note":"\ud800"#),
        (#""note":""#, #""extra":1,"note":""#),
        (#""updatedAt":"2"#, #""updatedAt":"1"#),
        (#","updatedAt""#, #","updatedAt":"2026-03-01T00:00:00Z","updatedAt""#),
        (#"}}"#, #"},"more":1}"#),
        (#""values":{"#, #""values":{"a":10000,"#),
        (#""values":{"#, #""values":{"a":-1,"#),
        (#""mood":null"#, #""mood":0"#),
        // Over 2,000 bytes yet 1,500 characters: valid, though the shortcut does not count.
        (#""note":""#, #""note":""# + String(repeating: "é", count: 1_500)),
        (#""note":""#, #""note":""# + String(repeating: "a", count: 2_001)),
    ]

    /// Edits of the last day log, whose stamp and task ids the shortcut reads without
    /// scanning them as strings (the ids because earlier logs used them).
    static let lateEdits: [(String, String)] = [
        (#".120Z","values""#, #".12Z","values""#),
        (#".120Z","values""#, #".1209Z","values""#),
        (#".120Z","values""#, #"Z","values""#),
        (#""updatedAt":"2"#, #""updatedAt":"\u0032"#),
        (#".120Z","values""#, #".120Z ","values""#),
        (#"{"glass":"#, #"{"glas":"#),
        (#"{"glass":"#, #"{"glassy":"#),
        (#"{"glass":"#, #"{"glassA:1,"x":"#),
        (#"{"glass":"#, #"{"glass\u0000":"#),
        (#"{"glass":"#, #"{"glas\u0073":"#),
    ]

    @Test(arguments: edits.indices)
    func anEditedLogReadsTheSameOnBothWays(edit: Int) throws {
        let (old, new) = Self.edits[edit]
        let text = String(decoding: Self.canonicalFile(seed: 3), as: UTF8.self)
        let range = try #require(text.range(of: old), "the seed-3 file has \(old)")
        let bytes = Array(text.replacingCharacters(in: range, with: new).utf8)
        #expect(Self.outcome(bytes) == Self.outcome(Self.spaced(bytes)))
    }

    @Test(arguments: lateEdits.indices)
    func anEditedLastLogReadsTheSameOnBothWays(edit: Int) throws {
        let (old, new) = Self.lateEdits[edit]
        let text = String(decoding: Self.canonicalFile(seed: 3), as: UTF8.self)
        let range = try #require(
            text.range(of: old, options: .backwards), "the seed-3 file has \(old)")
        let bytes = Array(text.replacingCharacters(in: range, with: new).utf8)
        #expect(Self.outcome(bytes) == Self.outcome(Self.spaced(bytes)))
    }

    @Test func mutatedCanonicalFilesReadTheSameOnBothWays() {
        Self.expectMutantsReadAsTheirTwins(
            rounds: 1500, seed: 99, of: { Self.canonicalFile(seed: UInt64($0 % 20)) },
            twin: { Self.spaced($0) }, differing: 1000)
    }

    /// `rounds` mutations of `file(round)` each read as its `twin` does; more than
    /// `differing` of the twins differ from their file, else the comparison means nothing.
    static func expectMutantsReadAsTheirTwins(
        rounds: Int, seed: UInt64, of file: (Int) -> [UInt8], twin: ([UInt8]) -> [UInt8],
        differing: Int
    ) {
        var different = 0
        for (round, bytes) in MutationTests.mutated(rounds: rounds, seed: seed, of: file)
            .enumerated()
        {
            let twin = twin(bytes)
            if twin != bytes { different += 1 }
            #expect(Self.outcome(bytes) == Self.outcome(twin), "round \(round)")
        }
        #expect(different > differing)
    }
}
