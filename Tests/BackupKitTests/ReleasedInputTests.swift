import Foundation
import Testing

@testable import BackupKit

/// `BackupReader.read(consuming:)` gives the day logs' pages back to the system as it reads
/// past them, so they read as zeros afterwards. Whatever the bytes, that read must give
/// exactly what a read that keeps them gives: the same document, the same issues, the same
/// syntax error at the same line and column (which counts the newlines of what is gone).
/// Here pages go back at every page read past, on files of a few dozen pages.
@Suite struct ReleasedInputTests {
    typealias Outcome = TwoCoreReadTests.Outcome

    static func expectSame(_ bytes: [UInt8], _ comment: Comment) {
        for twoCores in [false, true] {
            let kept = TwoCoreReadTests.outcome(bytes, twoCores: twoCores)
            let released = TwoCoreReadTests.outcome(bytes, twoCores: twoCores, releasing: true)
            #expect(released == kept, "\(comment), two cores: \(twoCores)")
        }
    }

    @Test(arguments: 0..<12)
    func aFileReadsTheSameWhenItsBytesGoBack(seed: UInt64) throws {
        let bytes = TwoCoreReadTests.file(seed: seed)
        Self.expectSame(bytes, "seed \(seed)")
        Self.expectSame(
            BackupWriter.write(TwoCoreReadTests.document(seed: seed), pretty: true),
            "pretty, seed \(seed)")
    }

    /// The reader's syntax error for `bytes`, read releasing.
    static func syntaxError(_ bytes: [UInt8], twoCores: Bool) throws
        -> (line: Int, column: Int)
    {
        let outcome = TwoCoreReadTests.outcome(bytes, twoCores: twoCores, releasing: true)
        guard case .refused(.syntax(let line, let column, _)) = outcome else {
            Issue.record("not a syntax error: \(outcome)")
            throw CancellationError()
        }
        return (line, column)
    }

    /// A stray byte after the day logs, in a file whose pages before it went back: counted
    /// from the file's start, on its real line. The pretty file has a line per field, the
    /// compact one a single line; the third has a newline between two day logs two pages
    /// into them (past the first page released), the fourth one inside a day log there
    /// (which sends that log the general way), which only a count of the released bytes'
    /// newlines sees.
    @Test(arguments: [0, 2, 6, 8] as [UInt64])
    func anErrorPastReleasedBytesKeepsItsLineAndColumn(seed: UInt64) throws {
        let document = TwoCoreReadTests.document(seed: seed)
        let compact = BackupWriter.write(document)
        let pretty = BackupWriter.write(document, pretty: true)
        let dayLogs = try #require(compact.firstRange(of: Array(#""dayLogs":{"#.utf8)))
        let twoPagesIn = dayLogs.upperBound + 2 * JSONScanner.pageSize
        let early = try TwoCoreReadTests.edit(compact, #"}},""#, "}},\n  \"", near: twoPagesIn)
        let inside = try TwoCoreReadTests.edit(
            compact, #"{"mood":"#, "{\n\"mood\":", near: twoPagesIn)
        for (name, file, lines) in [
            ("compact", compact, 1), ("pretty", pretty, 0), ("early", early, 2),
            ("inside", inside, 2),
        ] {
            let text = String(decoding: file, as: UTF8.self)
            let end = try #require(text.range(of: #""deviceId""#))
            let offset = text.utf8.distance(from: text.startIndex, to: end.lowerBound)
            var broken = file
            broken.insert(UInt8(ascii: "x"), at: offset)
            let before = broken[..<offset]
            let line = before.count { $0 == 0x0A } + 1
            let column = offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
            if lines > 0 { #expect(line == lines, "\(name)") }
            for twoCores in [false, true] {
                let found = try Self.syntaxError(broken, twoCores: twoCores)
                #expect(found.line == line, "\(name) seed \(seed), two cores: \(twoCores)")
                #expect(found.column == column, "\(name) seed \(seed), two cores: \(twoCores)")
            }
        }
    }

    /// Notes ending in `}},` make the second core's guess wrong: the first half reads on
    /// past it, releasing what the second half had read, whose result is dropped.
    @Test func aWrongGuessStillReadsTheSame() {
        for seed: UInt64 in 0..<30 {
            let text = String(decoding: TwoCoreReadTests.file(seed: seed), as: UTF8.self)
            let bytes = Array(
                text.replacingOccurrences(of: #"","updatedAt""#, with: #"}},","updatedAt""#).utf8)
            Self.expectSame(bytes, "seed \(seed)")
        }
    }

    @Test func mutatedFilesReadTheSameWhenTheirBytesGoBack() {
        let files = MutationTests.mutated(rounds: 300, seed: 2028) {
            TwoCoreReadTests.file(seed: UInt64($0 % 12))
        }
        for (round, bytes) in files.enumerated() {
            Self.expectSame(bytes, "round \(round)")
        }
    }

    /// The scanner's own promise: released pages read as zeros (they went back), bytes past
    /// them are untouched, and a page-aligned range is released whole.
    @Test func releasedPagesReadAsZeros() throws {
        let page = JSONScanner.pageSize
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * page, alignment: page)
        defer { bytes.deallocate() }
        bytes.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "a"))
        bytes[page + 10] = 0x0A
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let scanner = JSONScanner(base: base, count: 4 * page, maxDepth: 8, releaseStep: page)
        scanner.startReleasing(at: 1)
        scanner.release(upTo: 3 * page + 5, newlineFree: false)
        #expect(bytes[0] == UInt8(ascii: "a"))
        #expect(bytes[page..<(3 * page)].allSatisfy { $0 == 0 })
        #expect(bytes[3 * page] == UInt8(ascii: "a"))
        #expect(scanner.releasedUpTo == 3 * page)
        let (line, column) = scanner.lineAndColumn(of: 3 * page + 2)
        #expect(line == 2)
        #expect(column == 3 * page + 2 - (page + 11) + 1)
    }
}
