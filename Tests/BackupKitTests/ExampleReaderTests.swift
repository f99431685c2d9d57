import BackupKit
import Foundation
import TestSupport
import Testing

/// BackupKit's reader on every file of `Examples/`: the examples read (and older versions
/// migrate) with the content the files hold, and each fixture of `Examples/invalid/` is
/// refused the way `Examples/invalid/EXPECTED.tsv` says: exit class 3 or 7, and exactly one
/// issue, at the broken rule's JSON Pointer (a syntax error instead, where the table has `-`).
@Suite struct ExampleReaderTests {
    /// What each example holds, counted with another JSON parser (FORMAT.md §1.1's story for the two
    /// devices; the older versions' arrays and maps become schema 3's maps on the way in).
    struct Expected: Sendable {
        var version: Int
        var challenges: Int
        var dayLogs: Int
        var tombstones: Int
        /// Day logs kept under a tombstone (schema 4, FORMAT.md §2.4).
        var kept = 0
    }

    static let expected: [String: Expected] = [
        "phone.json": Expected(version: 3, challenges: 4, dayLogs: 69, tombstones: 1),
        "laptop.json": Expected(version: 4, challenges: 4, dayLogs: 98, tombstones: 2, kept: 8),
        "old-v1.json": Expected(version: 1, challenges: 3, dayLogs: 13, tombstones: 1),
        "old-v2.json": Expected(version: 2, challenges: 2, dayLogs: 10, tombstones: 1),
    ]

    @Test(arguments: try ExampleFiles.valid())
    func exampleReads(_ file: URL) throws {
        let expected = try #require(
            Self.expected[file.lastPathComponent], "add \(file.lastPathComponent) to the table")
        let bytes = try [UInt8](Data(contentsOf: file))
        let result = try BackupReader.read(bytes)
        #expect(result.sourceVersion == expected.version)
        #expect(result.document.challenges.count == expected.challenges)
        #expect(result.document.dayLogs.count == expected.dayLogs)
        #expect(result.document.tombstones.count == expected.tombstones)
        #expect(result.document.keptDayLogCount == expected.kept)
        // The story files are already in the writer's pretty form, so they round-trip; a
        // schema-3 file migrates to 4 unchanged but for its version (FORMAT.md §4.1).
        let text = String(decoding: bytes, as: UTF8.self)
        switch expected.version {
        case 4:
            #expect(BackupWriter.write(result.document, pretty: true) == bytes)
        case 3:
            #expect(
                BackupWriter.write(result.document, pretty: true, schema: .version3) == bytes)
            let asFour = text.replacingOccurrences(
                of: #""schemaVersion": 3,"#, with: #""schemaVersion": 4,"#)
            #expect(asFour != text)
            #expect(
                String(decoding: BackupWriter.write(result.document, pretty: true), as: UTF8.self)
                    == asFour)
        default:
            break
        }
    }

    @Test(arguments: try ExampleFiles.invalid())
    func fixtureIsRefusedAsTheTableSays(_ example: InvalidExample) throws {
        let bytes = try [UInt8](Data(contentsOf: example.url))
        let error: BackupFileError
        do {
            let result = try BackupReader.read(bytes)
            Issue.record("read without error as schema \(result.sourceVersion)")
            return
        } catch let thrown {
            error = thrown
        }
        let exitCode: Int32
        if case .newerSchema = error { exitCode = 7 } else { exitCode = 3 }
        #expect(exitCode == example.exitCode, "\(error)")

        switch (example.pointer, error) {
        case (nil, .syntax):
            break
        case (let pointer?, .invalid(let issues)):
            // Exactly one: each fixture breaks one rule, and nothing cascades from it.
            #expect(issues.map(\.pointer) == [pointer], "reported \(issues)")
        case ("/schemaVersion", .newerSchema), ("", .notABackup):
            break
        default:
            Issue.record("expected \(example.pointer ?? "a syntax error"), got \(error)")
        }
    }
}
