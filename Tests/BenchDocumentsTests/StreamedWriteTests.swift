import BenchDocuments
import Foundation
import Testing

@testable import BackupKit

/// The streamed write hands over the same bytes as the whole-document write, whatever the
/// slicing: its parts start and end inside collections, where a separator or an indent in
/// the wrong place would go unnoticed by a test of small documents alone.
///
/// The oracle is a write in one piece (every collection within one slice, so the caller's
/// thread writes it all into one buffer, as before streaming) and, for whole generated
/// documents, the generator's own canonical bytes, which never pass through BackupWriter.
/// Small slicings put many slice boundaries into documents a debug build writes quickly.
struct StreamedWriteTests {
    /// A generated file and the document read from it.
    static func generated(_ pair: DocumentPair, _ device: Device) -> (
        bytes: [UInt8], document: BackupDocument?
    ) {
        let bytes = pair.document(for: device).bytes
        return (bytes, try? BackupReader.read(bytes).document)
    }

    /// Generated once: about 4,000 day logs, and their challenges; cut to size per case.
    static let source = generated(DocumentPair(seed: 42, challenges: 12), .phone)
    /// About 35,000 day logs: more than two slices of the slicing in use.
    static let large = generated(DocumentPair(seed: 7, dayLogs: 36_000), .laptop)

    static let small = BackupWriter.Slicing(challenges: 3, dayLogs: 100, tombstones: 2)
    static let whole = BackupWriter.Slicing(challenges: .max, dayLogs: .max, tombstones: .max)

    struct Size: Sendable, CustomTestStringConvertible {
        var challenges: Int
        var dayLogs: Int
        var tombstones: Int
        var pretty: Bool
        var testDescription: String {
            "\(challenges) challenges, \(dayLogs) day logs, \(tombstones) tombstones"
                + (pretty ? ", pretty" : "")
        }
    }

    /// With `small`: none, one, on and either side of one, two and three slices (a lone last
    /// slice, a pair, a pair and one), for each collection in turn.
    static let sizes: [Size] = [false, true].flatMap { pretty in
        [
            (0, 0, 0), (1, 1, 1), (2, 99, 1), (3, 100, 2), (4, 101, 3), (5, 199, 4),
            (6, 200, 0), (7, 201, 5), (9, 300, 6), (10, 301, 7), (1, 0, 0), (0, 1, 0), (0, 0, 1),
        ].map { Size(challenges: $0, dayLogs: $1, tombstones: $2, pretty: pretty) }
    }

    /// The source's first members of each kind; tombstones for the first challenges' ids
    /// (the writer does not validate, and the generated tombstones are too few to slice).
    static func document(_ size: Size) throws -> BackupDocument {
        var document = try #require(source.document)
        try #require(document.challenges.count >= size.challenges)
        try #require(document.dayLogs.count >= size.dayLogs)
        document.tombstones = document.challenges.prefix(size.tombstones).map {
            Tombstone(id: $0.id, deletedAt: $0.updatedAt)
        }
        document.challenges = Array(document.challenges.prefix(size.challenges))
        document.dayLogs = DayLogStore(document.dayLogs.prefix(size.dayLogs))
        return document
    }

    /// Every part the streamed write hands over, in order.
    static func parts(
        of document: BackupDocument, pretty: Bool, slicing: BackupWriter.Slicing
    ) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        BackupWriter.write(document, pretty: pretty, slicing: slicing) { parts.append(Array($0)) }
        return parts
    }

    /// Where two texts first differ (one ending early counts), nil when they are the same:
    /// a failure names an offset instead of printing megabytes.
    static func firstDifference(_ written: some Sequence<UInt8>, _ expected: [UInt8]) -> Int? {
        var offset = 0
        for byte in written {
            guard offset < expected.count, expected[offset] == byte else { return offset }
            offset += 1
        }
        return offset == expected.count ? nil : offset
    }

    @Test(arguments: sizes)
    func slicedPartsJoinToTheWholeWrite(_ size: Size) throws {
        let document = try Self.document(size)
        let parts = Self.parts(of: document, pretty: size.pretty, slicing: Self.small)
        let whole = Self.parts(of: document, pretty: size.pretty, slicing: Self.whole)
        let oracle = try #require(whole.first)
        #expect(whole.count == 1)
        #expect(Self.firstDifference(parts.joined(), oracle) == nil)
        #expect(
            Self.firstDifference(BackupWriter.write(document, pretty: size.pretty), oracle) == nil)
        // The whole write appends each pair's second slice to the first.
        let kept = BackupWriter.write(document, pretty: size.pretty, slicing: Self.small)
        #expect(Self.firstDifference(kept, oracle) == nil)
        // Indented or not, it is JSON holding what the compact file holds (by an
        // independent parser: the cut documents are not all valid backups).
        let compact = BackupWriter.write(document)
        let parsed = try JSONSerialization.jsonObject(with: Data(parts.joined())) as? NSDictionary
        #expect(parsed == (try JSONSerialization.jsonObject(with: Data(compact)) as? NSDictionary))
    }

    /// The generator's bytes, with slices of one member up to more than the document holds.
    @Test(arguments: [1, 2, 7, 100, 4_096])
    func slicedPartsJoinToTheGeneratedFile(perSlice: Int) throws {
        let document = try #require(Self.source.document)
        let slicing = BackupWriter.Slicing(
            challenges: perSlice, dayLogs: perSlice, tombstones: perSlice)
        let parts = Self.parts(of: document, pretty: false, slicing: slicing)
        #expect(Self.firstDifference(parts.joined(), Self.source.bytes) == nil)
    }

    /// The write streams: no part holds more than one slice and the fixed parts around it.
    @Test func partsStayAsSmallAsTheirSlices() throws {
        let document = try #require(Self.source.document)
        try #require(document.dayLogs.count > 2_000)
        let parts = Self.parts(of: document, pretty: false, slicing: Self.small)
        // 100 day logs of under 400 bytes, or 3 challenges and the fixed parts.
        #expect(parts.allSatisfy { $0.count < 40_000 })
        #expect(parts.count > document.dayLogs.count / 100)
    }

    /// A last pair shorter than two slices is shared out evenly between the two cores, not
    /// as a full slice beside a short rest.
    @Test func theLastPairIsSharedOutEvenly() throws {
        let document = try Self.document(
            Size(challenges: 0, dayLogs: 150, tombstones: 0, pretty: false))
        let parts = Self.parts(of: document, pretty: false, slicing: Self.small)
        // The opening and the first 75 logs, the other 75, the closing.
        try #require(parts.count == 3)
        let (first, second) = (parts[0].count, parts[1].count)
        #expect(Double(max(first, second)) / Double(min(first, second)) < 1.25)
    }

    /// The slicing in use, on and either side of one and two day-log slices.
    @Test(arguments: [16_383, 16_384, 16_385, 32_768, 32_769])
    func defaultSlicingMatchesTheWholeWrite(dayLogs: Int) throws {
        var document = try #require(Self.large.document)
        try #require(document.dayLogs.count >= dayLogs)
        document.dayLogs = DayLogStore(document.dayLogs.prefix(dayLogs))
        for pretty in [false, true] {
            var streamed: [UInt8] = []
            BackupWriter.write(document, pretty: pretty) { streamed.append(contentsOf: $0) }
            let whole = Self.parts(of: document, pretty: pretty, slicing: Self.whole)
            #expect(whole.count == 1)
            #expect(Self.firstDifference(streamed, Array(whole.joined())) == nil)
            let written = BackupWriter.write(document, pretty: pretty)
            #expect(Self.firstDifference(written, Array(whole.joined())) == nil)
        }
    }

    @Test func theLargeDocumentStreamsToTheGeneratedFile() throws {
        let document = try #require(Self.large.document)
        try #require(document.dayLogs.count > 2 * BackupWriter.Slicing().dayLogs)
        var streamed: [UInt8] = []
        BackupWriter.write(document) { streamed.append(contentsOf: $0) }
        #expect(Self.firstDifference(streamed, Self.large.bytes) == nil)
    }

    struct SinkFailure: Error, Equatable {
        var part: Int
    }

    /// The sink's error stops the write at once and comes out of it as it was thrown.
    @Test(arguments: [0, 1, 4])
    func aThrowingSinkStopsTheWrite(failingPart: Int) throws {
        let document = try #require(Self.source.document)
        var calls = 0
        let error = #expect(throws: SinkFailure.self) {
            try BackupWriter.write(document, pretty: false, slicing: Self.small) {
                _ throws(SinkFailure) in
                defer { calls += 1 }
                if calls == failingPart { throw SinkFailure(part: calls) }
            }
        }
        #expect(error == SinkFailure(part: failingPart))
        #expect(calls == failingPart + 1)
    }
}
