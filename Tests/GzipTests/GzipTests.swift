import Foundation
import TestSupport
import Testing

@testable import Gzip

/// Against Python's gzip module as the reference writer: what it writes comes back byte for
/// byte, and every way a stream can go wrong is refused as its own case.
@Suite struct GzipTests {
    let document = try! Array(Data(contentsOf: Paths.file("Examples/phone.json")))

    @Test(arguments: [0, 1, 1000, 300_000])
    func readsWhatPythonWrites(size: Int) throws {
        let plain = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        #expect(try Gzip.decompress(ReferenceTools.gzip(plain), maxBytes: 1 << 20) == plain)
    }

    @Test func theContentDecides() throws {
        let compressed = try ReferenceTools.gzip(document)
        #expect(Gzip.isGzip(compressed))
        #expect(!Gzip.isGzip(document))
        #expect(!Gzip.isGzip(Array(" \n{}".utf8)))
        #expect(!Gzip.isGzip([0x1F]))
        #expect(try Gzip.plain(compressed, maxBytes: 1 << 20) == document)
        #expect(try Gzip.plain(document, maxBytes: 1 << 20) == document)
    }

    /// 10 MB of zeros in about 10 KB: refused at a 1 MB limit, with a buffer of the limit and
    /// one byte, not the 10 MB the trailer claims.
    @Test func aBombIsRefusedWithinTheLimit() throws {
        let bomb = try ReferenceTools.gzip([UInt8](repeating: 0, count: 10_000_000))
        #expect(bomb.count < 20_000)
        #expect(Gzip.firstCapacity(for: bomb, maxBytes: 1 << 20) == (1 << 20) + 1)
        #expect(throws: GzipError.overLimit(limit: 1 << 20)) {
            try Gzip.decompress(bomb, maxBytes: 1 << 20)
        }
    }

    /// The limit is on the content: exactly the limit is read, one byte more is not.
    @Test func theLimitIsExact() throws {
        let plain = [UInt8](repeating: 0x41, count: 5000)
        let compressed = try ReferenceTools.gzip(plain)
        #expect(Gzip.firstCapacity(for: compressed, maxBytes: 1 << 20) == 5000)
        #expect(try Gzip.decompress(compressed, maxBytes: 5000) == plain)
        #expect(throws: GzipError.overLimit(limit: 4999)) {
            try Gzip.decompress(compressed, maxBytes: 4999)
        }
    }

    @Test(arguments: [1, 8, 100])
    func aTruncatedStreamIsRefused(cut: Int) throws {
        let compressed = try ReferenceTools.gzip(document)
        #expect(throws: GzipError.truncatedOrCorrupt) {
            try Gzip.decompress(Array(compressed.dropLast(cut)), maxBytes: 1 << 20)
        }
    }

    /// The trailer's CRC-32 (the 8th to 5th bytes from the end) and its length are checked.
    @Test(arguments: [8, 4])
    func aWrongTrailerIsRefused(fromEnd: Int) throws {
        var compressed = try ReferenceTools.gzip(document)
        compressed[compressed.count - fromEnd] ^= 0x01
        #expect(throws: GzipError.truncatedOrCorrupt) {
            try Gzip.decompress(compressed, maxBytes: 1 << 20)
        }
    }

    @Test func trailingBytesAreRefused() throws {
        let compressed = try ReferenceTools.gzip(document)
        #expect(throws: GzipError.trailingBytes) {
            try Gzip.decompress(compressed + Array("\n".utf8), maxBytes: 1 << 20)
        }
        #expect(throws: GzipError.secondMember) {
            try Gzip.decompress(compressed + compressed, maxBytes: 1 << 20)
        }
    }

    /// What we write, the reference readers read back: Python's module and the command.
    @Test(arguments: [0, 1, 1000, 300_000], ReferenceTools.Gunzip.allCases)
    func theReferenceReadsWhatWeWrite(size: Int, reader: ReferenceTools.Gunzip) throws {
        let plain = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let compressed = Gzip.compress(plain)
        #expect(try ReferenceTools.gunzip(compressed, with: reader) == plain)
        #expect(try Gzip.decompress(compressed, maxBytes: 1 << 20) == plain)
    }

    /// The header holds nothing that changes between runs: no time (MTIME 0), no name (FLG
    /// 0), the OS byte fixed at 255; XFL (byte 8) is the level's hint, 4 (fastest) at level 1.
    /// So one document is one file, and one md5 on Drive.
    @Test func theHeaderHoldsNoTimeAndNoName() throws {
        let compressed = Gzip.compress(document)
        #expect(Array(compressed.prefix(10)) == [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x04, 0xFF])
        #expect(Gzip.compress(document) == compressed)
        #expect(compressed.count < document.count / 2)
    }
}
