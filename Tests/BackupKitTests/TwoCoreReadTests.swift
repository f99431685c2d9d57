import Foundation
import TestSupport
import Testing

@testable import BackupKit

/// Large files have their day logs decoded in two halves on two cores, the second half from
/// a guessed boundary (`DocumentDecoder.splitPoint`). Whatever the bytes, reading on two
/// cores must give exactly what one core gives: the same document, or the same issues in
/// the same order, or the same syntax error at the same line and column.
@Suite struct TwoCoreReadTests {
    enum Outcome: Equatable {
        case read(ReadResult)
        case refused(BackupFileError)
    }

    /// Reading `bytes`; when `releasing`, as `read(consuming:)` does, giving pages back at
    /// every page read past (so a small file has many released).
    static func outcome(
        _ bytes: [UInt8], twoCores: Bool, maxIssues: Int = 100, releasing: Bool = false
    ) -> Outcome {
        var options = ReadOptions(
            maxIssues: maxIssues, collectsNotes: true, twoCoresFromBytes: twoCores ? 0 : .max)
        options.releaseStep = JSONScanner.pageSize
        do {
            return .read(
                try releasing
                    ? BackupReader.read(consuming: bytes, options: options)
                    : BackupReader.read(bytes, options: options))
        } catch {
            return .refused(error)
        }
    }

    /// A consistent document with `perChallenge` day logs for each live challenge, drawn
    /// from `RandomDocuments`' universe (ids whose byte order differs from their (id, day)
    /// order, notes with escapes and non-ASCII text).
    static func document(seed: UInt64, perChallenge: Int = 40) -> BackupDocument {
        var random = RandomDocuments(seed: seed)
        var document = random.document()
        document.dayLogs = DayLogStore(
            document.challenges.flatMap { challenge in
                (0..<perChallenge).map { offset in
                    random.dayLog(
                        DayLogKey(
                            challengeID: challenge.id,
                            day: RandomDocuments.start.adding(days: offset)))
                }
            })
        document.dayLogs.sort { $0.key < $1.key }
        return document
    }

    static func file(seed: UInt64) -> [UInt8] {
        BackupWriter.write(document(seed: seed))
    }

    /// Where the second half would start, as the reader computes it (after `"dayLogs":{`).
    static func split(of bytes: [UInt8]) throws -> Int {
        let text = String(decoding: bytes, as: UTF8.self)
        let dayLogs = try #require(text.range(of: #""dayLogs":{"#))
        let after = text.utf8.distance(from: text.startIndex, to: dayLogs.upperBound)
        return try #require(
            bytes.withUnsafeBufferPointer {
                DocumentDecoder.splitPoint(in: $0, after: after, minimum: 0)
            })
    }

    /// Replaces the first `old` at or after `offset` (before it when `before`).
    static func edit(
        _ bytes: [UInt8], _ old: String, _ new: String, near offset: Int, before: Bool = false
    ) throws -> [UInt8] {
        let old = Array(old.utf8)
        let candidates = bytes.indices.filter { bytes[$0...].starts(with: old) }
        let at = try #require(
            before ? candidates.last { $0 < offset } : candidates.first { $0 >= offset },
            "\(String(decoding: old, as: UTF8.self)) near \(offset)")
        var result = bytes
        result.replaceSubrange(at..<(at + old.count), with: Array(new.utf8))
        return result
    }

    @Test(arguments: 0..<20)
    func theGuessIsTheKeyOfADayLogPastTheMiddle(seed: UInt64) throws {
        let bytes = Self.file(seed: seed)
        guard Self.document(seed: seed).dayLogs.count > 2 else { return }
        let split = try Self.split(of: bytes)
        #expect(split > bytes.count / 2 - 300)
        let rest = String(decoding: bytes[split...], as: UTF8.self)
        let key = try #require(rest.split(separator: "\"", maxSplits: 2).first)
        #expect(Self.document(seed: seed).dayLogs.contains { $0.key.description == key })
        #expect(rest.hasPrefix("\"\(key)\":{\"mood\":"))
    }

    /// The boundary is looked for within `splitSearch` bytes of the middle, not to the end
    /// of a file spelled another way (where it never comes).
    @Test func theGuessIsLookedForNearTheMiddleOnly() {
        let size = 4 * DocumentDecoder.splitSearch
        func split(boundaryAt offset: Int) -> Int? {
            var bytes = [UInt8](repeating: UInt8(ascii: " "), count: size)
            bytes.replaceSubrange(offset..<(offset + 4), with: Array(#"}},""#.utf8))
            return bytes.withUnsafeBufferPointer {
                DocumentDecoder.splitPoint(in: $0, after: 0, minimum: 0)
            }
        }
        let middle = size / 2
        #expect(split(boundaryAt: middle + 1000) == middle + 1003)
        #expect(split(boundaryAt: middle + DocumentDecoder.splitSearch - 1) != nil)
        #expect(split(boundaryAt: middle + DocumentDecoder.splitSearch + 10) == nil)
    }

    @Test(arguments: 0..<20)
    func aValidFileReadsTheSameOnTwoCores(seed: UInt64) throws {
        let bytes = Self.file(seed: seed)
        let two = Self.outcome(bytes, twoCores: true)
        #expect(two == Self.outcome(bytes, twoCores: false))
        guard case .read(let result) = two else {
            Issue.record("a file the writer wrote must read")
            return
        }
        #expect(result.document == Self.document(seed: seed))
    }

    /// Notes (logs that do not fit their challenge) come from both halves, in order.
    @Test func notesFromBothHalvesInOrder() throws {
        var withNotes = 0
        for seed: UInt64 in 0..<20 {
            let bytes = Self.file(seed: seed)
            let two = try BackupReader.read(
                bytes, options: ReadOptions(collectsNotes: true, twoCoresFromBytes: 0))
            let one = try BackupReader.read(
                bytes, options: ReadOptions(collectsNotes: true, twoCoresFromBytes: .max))
            #expect(two.notes == one.notes, "seed \(seed)")
            if Set(two.notes.map(\.pointer)).count > 1 { withNotes += 1 }
        }
        #expect(withNotes > 3)
    }

    /// Edits right at the boundary of the halves, where the two decoders' results meet.
    static let boundaryEdits:
        [(name: String, old: String, new: String, before: Bool, refused: Bool)] = [
            ("a bad key just after the split", "/2026-", "/2026-13-", false, true),
            ("a bad key just before the split", "/2026-", "/2026-13-", true, true),
            ("a bad value after the split", #""values":{"#, #""values":{"x":1.5,"#, false, true),
            ("an unknown field after the split", #"{"mood":"#, #"{"extra":1,"mood":"#, false, true),
            ("a syntax error after the split", #","updatedAt""#, #",,"updatedAt""#, false, true),
            ("a syntax error before the split", #","updatedAt""#, #",,"updatedAt""#, true, true),
            ("the file cut short after the split", #""values":"#, #""values""#, false, true),
            // The logs before the split are all canonical: the rule is checked after the split.
            ("a mood out of range after the split", #"{"mood":null,"#, #"{"mood":9,"#, false, true),
            (
                "a log too deep after the split", #""values":{"#,
                #""values":{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"#,
                false, true
            ),
        ]

    @Test(arguments: boundaryEdits.indices, 0..<6)
    func anEditAtTheBoundaryReadsTheSameOnTwoCores(edit: Int, seed: UInt64) throws {
        let (name, old, new, before, refused) = Self.boundaryEdits[edit]
        let bytes = Self.file(seed: seed)
        guard Self.document(seed: seed).dayLogs.count > 2 else { return }
        let edited = try Self.edit(bytes, old, new, near: try Self.split(of: bytes), before: before)
        let two = Self.outcome(edited, twoCores: true)
        #expect(two == Self.outcome(edited, twoCores: false), "\(name)")
        if case .refused = two {
            #expect(refused, "\(name)")
        } else {
            #expect(!refused, "\(name)")
        }
    }

    /// The two logs either side of the boundary swapped, or the second one repeated before
    /// it: the order and duplicate checks must see across the halves.
    @Test(arguments: 0..<10)
    func orderAndDuplicatesAcrossTheBoundary(seed: UInt64) throws {
        let document = Self.document(seed: seed)
        guard document.dayLogs.count > 2 else { return }
        let bytes = BackupWriter.write(document)
        let split = try Self.split(of: bytes)
        let key = String(
            decoding: bytes[(split + 1)...].prefix { $0 != UInt8(ascii: "\"") }, as: UTF8.self)
        let index = try #require(document.dayLogs.firstIndex { $0.key.description == key })
        #expect(index > 0)
        // The log just after the split, spelled again just before it.
        let member = try #require(
            String(decoding: bytes[split...], as: UTF8.self).components(separatedBy: "}},").first)
        var repeated = bytes
        repeated.insert(contentsOf: Array((member + "}},").utf8), at: split)
        let twoRepeated = Self.outcome(repeated, twoCores: true)
        #expect(twoRepeated == Self.outcome(repeated, twoCores: false))
        #expect(twoRepeated != Self.outcome(bytes, twoCores: false))
        // Swapped: a file out of order is sorted and still reads as the same document.
        let swapped = try swapAcross(bytes, split: split)
        #expect(swapped != bytes)
        #expect(Self.outcome(swapped, twoCores: true) == Self.outcome(swapped, twoCores: false))
        #expect(Self.outcome(swapped, twoCores: true) == Self.outcome(bytes, twoCores: false))
    }

    /// `bytes` with the day log before `split` and the one starting there exchanged.
    func swapAcross(_ bytes: [UInt8], split: Int) throws -> [UInt8] {
        let previousStart =
            try #require(
                (0..<(split - 3)).last { bytes[$0...].starts(with: Array(#"}},""#.utf8)) }) + 3
        let nextEnd =
            try #require(
                (split..<bytes.count).first { bytes[$0...].starts(with: Array(#"}}"#.utf8)) }) + 2
        let previous = bytes[previousStart..<(split - 1)]
        let next = bytes[split..<nextEnd]
        return Array(bytes[..<previousStart]) + next + [UInt8(ascii: ",")] + previous
            + bytes[nextEnd...]
    }

    /// Every note ending in `}},`, so the bytes after a note look like a boundary: when the
    /// guess lands there the first half never stops at it, and the second half is dropped.
    @Test func aWrongGuessFallsBackToOneCore() throws {
        var wrongGuesses = 0
        for seed: UInt64 in 0..<30 {
            let text = String(decoding: Self.file(seed: seed), as: UTF8.self)
            let bytes = Array(
                text.replacingOccurrences(of: #"","updatedAt""#, with: #"}},","updatedAt""#).utf8)
            guard Self.document(seed: seed).dayLogs.count > 2 else { continue }
            let split = try Self.split(of: bytes)
            if bytes[split...].starts(with: Array(#"","updatedAt""#.utf8)) { wrongGuesses += 1 }
            let two = Self.outcome(bytes, twoCores: true)
            #expect(two == Self.outcome(bytes, twoCores: false), "seed \(seed)")
            guard case .read(let result) = two else {
                Issue.record("seed \(seed): notes ending in }}, are valid")
                continue
            }
            #expect(result.document.dayLogs.allSatisfy { $0.note.hasSuffix("}},") })
        }
        #expect(wrongGuesses > 0)
    }

    /// A long note in the first log puts far more bytes before the split than logs: the
    /// halves' stores are of very different sizes, and the result is still one pass's, also
    /// with an error just before or just after the split.
    @Test(arguments: 0..<10)
    func aLopsidedSplitReadsAsOnePass(seed: UInt64) throws {
        var document = Self.document(seed: seed, perChallenge: 300)
        guard document.dayLogs.count > 10 else { return }
        document.dayLogs[0].note = String(repeating: "long day ", count: 200)
        let bytes = BackupWriter.write(document)
        let split = try Self.split(of: bytes)
        #expect(Self.outcome(bytes, twoCores: true) == Self.outcome(bytes, twoCores: false))
        for before in [false, true] {
            let broken = try Self.edit(
                bytes, #","updatedAt""#, #",,"updatedAt""#, near: split, before: before)
            #expect(
                Self.outcome(broken, twoCores: true) == Self.outcome(broken, twoCores: false))
        }
    }

    /// Logs at the fewest bytes a decoded log can take (the bound the storage is sized by):
    /// every one must fit, on one core and on two.
    @Test func logsAtTheSmallestSizeAllFit() throws {
        let count = 3_000
        let members = (0..<count).map { index in
            let day = DayKey(dayNumber: Int32(10_957 + index))
            return "\"a/\(day)\":"
                + #"{"mood":1,"note":"","updatedAt":"2000-01-01T00:00:00Z","values":{}}"#
        }
        let text =
            #"{"challenges":{"a":{"createdAt":"2000-01-01T00:00:00.000Z","durationDays":365,"#
            + #""pausedDays":[],"startDate":"2000-01-01","tasks":{"t":{"archivedFrom":null,"#
            + #""rules":[{"from":"2000-01-01","target":1,"type":"check"}],"title":"T"}},"#
            + #""title":"A","updatedAt":"2000-01-01T00:00:00.000Z"}},"dayLogs":{"#
            + members.joined(separator: ",")
            + #"},"deviceId":"d","exportedAt":"2000-01-02T00:00:00.000Z","format":"habit-backup","#
            + #""schemaVersion":3,"settings":{"dayStartHour":0,"reminderTime":null,"#
            + #""theme":"system","weekStartsOn":"monday"},"tombstones":{}}"#
        let bytes = Array(text.utf8)
        #expect(members.allSatisfy { $0.utf8.count == 82 })
        let two = Self.outcome(bytes, twoCores: true)
        #expect(two == Self.outcome(bytes, twoCores: false))
        guard case .read(let result) = two else {
            Issue.record("\(two)")
            return
        }
        #expect(result.document.dayLogs.count == count)
    }

    @Test func theIssueLimitCountsBothHalvesInOrder() throws {
        let text = String(decoding: Self.file(seed: 0), as: UTF8.self)
        // Every mood out of range: an issue per log, on both sides of the boundary.
        let broken = Array(
            text.replacingOccurrences(of: #""mood":1,"#, with: #""mood":9,"#)
                .replacingOccurrences(of: #""mood":5,"#, with: #""mood":9,"#)
                .replacingOccurrences(of: #""mood":null,"#, with: #""mood":9,"#).utf8)
        for limit in [1, 5, 100, 1000] {
            let two = Self.outcome(broken, twoCores: true, maxIssues: limit)
            #expect(two == Self.outcome(broken, twoCores: false, maxIssues: limit))
            guard case .refused(.invalid(let issues)) = two else {
                Issue.record("nine is out of the mood range")
                continue
            }
            #expect(issues.count == min(limit, Self.document(seed: 0).dayLogs.count))
        }
    }

    @Test func mutatedFilesReadTheSameOnTwoCores() {
        var refused = 0
        let files = MutationTests.mutated(rounds: 600, seed: 2027) {
            Self.file(seed: UInt64($0 % 12))
        }
        for (round, bytes) in files.enumerated() {
            let two = Self.outcome(bytes, twoCores: true)
            if case .refused = two { refused += 1 }
            #expect(two == Self.outcome(bytes, twoCores: false), "round \(round)")
        }
        // Both kinds of outcome were compared.
        #expect(refused > 100 && refused < 600)
    }
}
