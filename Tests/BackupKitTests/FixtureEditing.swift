import BackupKit
import Foundation
import TestSupport
import Testing

/// Reads a fixture from `Tests/BackupKitTests/Fixtures`.
func fixture(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: Paths.file("Tests/BackupKitTests/Fixtures/" + name)))
}

/// The FORMAT.md §1.2 example as text, for tests that edit it.
func exampleText() throws -> String {
    String(decoding: try fixture("v3-example.json"), as: UTF8.self)
}

/// One edit of a fixture: every `old` → `new` (each `old` must occur exactly once).
struct Edit: Sendable, CustomTestStringConvertible {
    var name: String
    var replacements: [(old: String, new: String)]
    /// The pointers reported, in order; empty when the edited file is valid.
    var pointers: [String]

    init(_ name: String, _ old: String, _ new: String, _ pointers: [String] = []) {
        self.init(name, [(old, new)], pointers)
    }

    init(_ name: String, _ replacements: [(old: String, new: String)], _ pointers: [String] = []) {
        self.name = name
        self.replacements = replacements
        self.pointers = pointers
    }

    var testDescription: String { name }

    func apply(to text: String) throws -> String {
        var result = text
        for (old, new) in replacements {
            let parts = result.components(separatedBy: old)
            try #require(parts.count == 2, "'\(old)' must occur exactly once in the fixture")
            result = parts.joined(separator: new)
        }
        return result
    }
}

/// The pointers a read reports (empty when it succeeds).
func reportedPointers(_ text: String) -> Result<[String], BackupFileError> {
    do {
        _ = try BackupReader.read(Array(text.utf8))
        return .success([])
    } catch {
        if case .invalid(let issues) = error { return .success(issues.map(\.pointer)) }
        return .failure(error)
    }
}
