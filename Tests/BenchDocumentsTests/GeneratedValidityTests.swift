import BackupKit
import BenchDocuments
import Testing

/// Every generated document is a valid backup by BackupKit's own reader, holds what the
/// generator says it holds, and is already canonical: writing it back gives the same bytes.
struct GeneratedValidityTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var seed: UInt64
        var challenges: Int
        var device: Device
        var testDescription: String { "seed \(seed), \(challenges) challenges, \(device)" }
    }

    static let cases = [(1, 2), (42, 2), (42, 30)].flatMap { seed, challenges in
        Device.allCases.map { Case(seed: UInt64(seed), challenges: challenges, device: $0) }
    }

    @Test(arguments: cases)
    func readerAcceptsAndWriterReproduces(_ example: Case) throws {
        let generated = DocumentPair(seed: example.seed, challenges: example.challenges)
            .document(for: example.device)
        let result = try BackupReader.read(generated.bytes)
        #expect(result.sourceVersion == 4)
        #expect(result.document.challenges.count == generated.challenges)
        #expect(result.document.dayLogs.count == generated.dayLogs)
        #expect(result.document.tombstones.count == generated.tombstones)
        #expect(BackupWriter.write(result.document) == generated.bytes)
    }

    /// The pair is built to exercise every merge rule; the result must be valid too.
    @Test func mergedPairReadsBack() throws {
        let pair = DocumentPair(seed: 42, challenges: 30)
        let phone = try BackupReader.read(pair.document(for: .phone).bytes).document
        let laptop = try BackupReader.read(pair.document(for: .laptop).bytes).document
        let outcome = merge(
            local: phone, incoming: laptop, options: MergeOptions(now: phone.exportedAt))
        let reread = try BackupReader.read(BackupWriter.write(outcome.document)).document
        #expect(reread == outcome.document)
        #expect(outcome.report.challenges.keptDeleted > 0)
        #expect(outcome.report.dayLogs.updated > 0)
        #expect(outcome.report.tombstones.expired > 0)
    }
}
