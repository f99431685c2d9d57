/// One broken rule, at its place in the document.
public struct ValidationIssue: Equatable, Sendable, CustomStringConvertible {
    /// RFC 6901 JSON Pointer; the root is "".
    public var pointer: String
    /// What is wrong there, in words a user can act on.
    public var message: String
    /// The section of FORMAT.md whose rule is broken (for a note, the rule that says why it
    /// is not an error).
    public var rule: FormatRule

    /// An issue at `pointer` (RFC 6901, "" for the root) that breaks `rule`.
    public init(pointer: String, message: String, rule: FormatRule) {
        self.pointer = pointer
        self.message = message
        self.rule = rule
    }

    /// One line, whatever the file held: control characters (FORMAT.md §3.3: U+0000–U+001F and
    /// U+007F–U+009F), which a key or value of an untrusted file may carry into the pointer
    /// or the message, are shown as `\u001B`, so they can neither break the line nor reach
    /// a terminal as an escape sequence.
    public var description: String {
        Self.escapingControls("\(pointer.isEmpty ? "/" : pointer): \(message)")
    }

    /// `text` with its control characters shown as `\u001B`: for anything shown on one line
    /// that an untrusted source chose, such as a key of a file, or the file's own name.
    public static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: Self.isControl) else { return text }
        var shown = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard Self.isControl(scalar) else {
                shown.append(scalar)
                continue
            }
            let digits = String(scalar.value, radix: 16, uppercase: true)
            let escape = "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            shown.append(contentsOf: escape.unicodeScalars)
        }
        return String(shown)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}

/// Why a file could not be read as a backup. The CLI maps `.newerSchema` to exit 7 and
/// everything else to exit 3.
public enum BackupFileError: Error, Equatable, Sendable {
    /// Refused before parsing (FORMAT.md §3: 256 MiB by default).
    case tooLarge(size: Int, limit: Int)
    /// Not well-formed JSON (or not UTF-8); line and column are 1-based, column in bytes.
    case syntax(line: Int, column: Int, message: String)
    /// Well-formed JSON, but clearly not a habit backup (e.g. no `format`/`schemaVersion`).
    case notABackup(String)
    /// `schemaVersion` is newer than this build understands.
    case newerSchema(Int)
    /// Every broken rule found, at most `ReadOptions.maxIssues`: first what the typed model
    /// cannot hold (types, formats, unknown, missing and duplicate keys), then value rules.
    case invalid([ValidationIssue])
}

/// How a file is read: its limits, and whether notes are collected.
public struct ReadOptions: Sendable {
    /// Files larger than this are refused before any parsing (FORMAT.md §3): 256 MiB unless
    /// the caller sets another limit.
    public var maxBytes: Int
    /// How many issues are collected before reading stops (FORMAT.md §3: 100).
    public var maxIssues: Int
    /// The deepest nesting allowed, the top-level value being depth 1 (FORMAT.md §3.1).
    public var maxDepth: Int
    /// Whether to collect `ReadResult.notes`, which look into every day log's values; only a
    /// caller that shows them (`validate --verbose`) should pay for that.
    public var collectsNotes: Bool
    /// From this many bytes on, the day logs are checked on two cores, and decoded on two
    /// where the file is spelled canonically; below it a second thread costs more than it
    /// saves. The result is the same either way.
    public var twoCoresFromBytes: Int
    /// How far `read(consuming:)` moves past day logs before it gives their pages back: a
    /// call per megabyte costs nothing measurable. Tests set a page, to see it on small files.
    var releaseStep = 1 << 20

    /// A read with the format's limits unless told otherwise (FORMAT.md §3).
    public init(
        maxBytes: Int = 256 << 20, maxIssues: Int = 100, maxDepth: Int = 32,
        collectsNotes: Bool = false, twoCoresFromBytes: Int = 1 << 20
    ) {
        self.maxBytes = maxBytes
        self.maxIssues = maxIssues
        self.maxDepth = maxDepth
        self.collectsNotes = collectsNotes
        self.twoCoresFromBytes = twoCoresFromBytes
    }
}

/// A file read, checked and migrated, with where it came from.
public struct ReadResult: Equatable, Sendable {
    /// Always schema 4: older files are migrated on the way in (3→4 changes nothing but
    /// the version number, FORMAT.md §2.4).
    public var document: BackupDocument
    /// The version the file was written in.
    public var sourceVersion: Int
    /// Things `validate --verbose` may mention that are not errors (FORMAT.md §1.2: day logs that do
    /// not fit their challenge's winning copy).
    public var notes: [ValidationIssue]

    /// Wraps what `BackupReader.read` produced.
    public init(document: BackupDocument, sourceVersion: Int, notes: [ValidationIssue] = []) {
        self.document = document
        self.sourceVersion = sourceVersion
        self.notes = notes
    }
}
