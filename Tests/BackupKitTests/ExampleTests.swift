import BackupKit
import Foundation
import TestSupport
import Testing

/// The shipped examples and the invalid fixture table, read by BackupKit.
@Suite struct ExampleTests {
    static func read(_ url: URL) throws -> ReadResult {
        try BackupReader.read(Array(try Data(contentsOf: url)))
    }

    @Test(arguments: try ExampleFiles.valid())
    func examplesAreValidAndRoundTrip(_ url: URL) throws {
        let result = try Self.read(url)
        #expect(BackupValidator.validate(result.document) == [])
        let written = BackupWriter.write(result.document)
        #expect(try BackupReader.read(written).document == result.document)
        #expect(
            try BackupReader.read(BackupWriter.write(result.document, pretty: true)).document
                == result.document)
        // Canonical input comes back byte for byte.
        #expect(BackupWriter.write(try BackupReader.read(written).document) == written)
    }

    @Test func examplesCoverEveryVersion() throws {
        let versions = try ExampleFiles.valid().map { try Self.read($0).sourceVersion }
        #expect(Set(versions) == [1, 2, 3])
    }

    @Test func migratingASchema3FileIsTheIdentity() throws {
        for url in try ExampleFiles.valid() {
            let result = try Self.read(url)
            guard result.sourceVersion == 3 else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            let canonical = BackupWriter.write(result.document, pretty: text.contains("\n  "))
            #expect(
                try BackupReader.read(canonical).document == result.document,
                "\(url.lastPathComponent)")
        }
    }

    @Test(arguments: try ExampleFiles.invalid())
    func invalidFixtureFailsAtItsPointer(_ example: InvalidExample) throws {
        do {
            _ = try Self.read(example.url)
            Issue.record("\(example.file) was accepted")
        } catch let error as BackupFileError {
            switch (error, example.exitCode, example.pointer) {
            case (.newerSchema, 7, _):
                break
            case (.syntax, 3, nil):
                break
            case (.notABackup, 3, ""):
                break
            case (.invalid(let issues), 3, let pointer?):
                #expect(issues.map(\.pointer) == [pointer], "\(example.file): \(issues)")
            default:
                Issue.record("\(example.file): \(error)")
            }
        }
    }
}
