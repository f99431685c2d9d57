import Foundation

/// One file of `Examples/invalid/`, with what every reader of it must say: a row of
/// `Examples/invalid/EXPECTED.tsv` (columns `file`, `exit`, `pointer`, `schema`).
public struct InvalidExample: Sendable, CustomStringConvertible {
    /// The file name inside `Examples/invalid/`.
    public var file: String
    /// 3 (invalid or unreadable) or 7 (a newer schema).
    public var exitCode: Int32
    /// The RFC 6901 pointer of the one broken rule ("" is the root); nil for a syntax error,
    /// which is reported with line and column instead (`-` in the table).
    public var pointer: String?
    /// Whether a JSON Schema can express the broken rule (duplicate keys, depth, sortedness,
    /// cross-field rules and the calendar round trip are beyond it).
    public var schemaCanExpress: Bool

    public var url: URL { Paths.file("Examples/invalid/\(file)") }
    public var description: String { file }
}

/// The example documents and the invalid fixtures, found on disk so a new file is never
/// silently left out of the tests that walk them.
public enum ExampleFiles {
    public struct TableError: Error, CustomStringConvertible {
        public var description: String
    }

    /// `Examples/*.json`: valid documents of every schema version, sorted by name.
    public static func valid() throws -> [URL] {
        try jsonFiles(in: Paths.file("Examples"))
    }

    /// `Examples/invalid/*.json`, sorted by name.
    public static func invalidFiles() throws -> [URL] {
        try jsonFiles(in: Paths.file("Examples/invalid"))
    }

    /// The rows of `Examples/invalid/EXPECTED.tsv`, in table order.
    public static func invalid() throws -> [InvalidExample] {
        let table = try String(
            contentsOf: Paths.file("Examples/invalid/EXPECTED.tsv"), encoding: .utf8)
        var lines = table.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first == "file\texit\tpointer\tschema" else {
            throw TableError(
                description: "EXPECTED.tsv: the header must be file, exit, pointer, schema")
        }
        lines.removeFirst()
        return try lines.map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 4, let exitCode = Int32(fields[1]),
                fields[3] == "yes" || fields[3] == "no"
            else { throw TableError(description: "EXPECTED.tsv: malformed row \"\(line)\"") }
            return InvalidExample(
                file: String(fields[0]), exitCode: exitCode,
                pointer: fields[2] == "-" ? nil : String(fields[2]),
                schemaCanExpress: fields[3] == "yes")
        }
    }

    private static func jsonFiles(in folder: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
