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
}
