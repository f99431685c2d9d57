import BackupKit
import BenchDocuments
import Testing

/// The benchmark's inputs must be the same bytes for the same seed (so runs compare), and
/// hold what their size promises. Timing never happens here.
struct DocumentPairTests {
    @Test(arguments: Device.allCases)
    func sameSeedGivesSameBytes(device: Device) {
        let first = DocumentPair(seed: 11, challenges: 4).document(for: device)
        let second = DocumentPair(seed: 11, challenges: 4).document(for: device)
        #expect(first.bytes == second.bytes)
        #expect(first.bytes.last == UInt8(ascii: "\n"))
    }

    @Test func anotherSeedGivesOtherBytes() {
        let first = DocumentPair(seed: 11, challenges: 4).document(for: .phone)
        let second = DocumentPair(seed: 12, challenges: 4).document(for: .phone)
        #expect(first.bytes != second.bytes)
    }

    @Test func theTwoDevicesDiffer() {
        let pair = DocumentPair(seed: 11, challenges: 4)
        #expect(pair.document(for: .phone).bytes != pair.document(for: .laptop).bytes)
    }

    /// A size asks for day logs per file; challenges come whole (365 days each) and their
    /// fates are random, so the count lands within a few percent at the smallest bench size.
    @Test(arguments: Device.allCases)
    func dayLogCountIsNearTheSize(device: Device) {
        let pair = DocumentPair(seed: 42, dayLogs: 20_000)
        let document = pair.document(for: device)
        #expect(abs(document.dayLogs - 20_000) <= 1_000)
        #expect(document.challenges < pair.challengeCount)
    }
}
