/// The section of FORMAT.md (Schemas/FORMAT.md) whose rule a problem breaks, named by its
/// number: the raw value is the section as FORMAT.md numbers it (`"3.6"`), which stays put when
/// the text around it changes, so a user can look the rule up and a script can match on it.
public enum FormatRule: String, CaseIterable, Sendable {
    /// §1.1: the document's top level, whose `format` is always `"habit-backup"`.
    case document = "1.1"
    /// §1.2: what each field may hold (ids, day keys, ranges, lengths, a day log's challenge).
    case fields = "1.2"
    /// §2: the schema versions there are (1 to 4).
    case schemaVersions = "2"
    /// §2.1: version 1's own shape and rules (arrays of challenges, logs and deleted ids).
    case version1 = "2.1"
    /// §2.2: version 2's own shape and rules (tasks an array, no `format`).
    case version2 = "2.2"
    /// §2.3: version 3's own rules (every day log names a live challenge).
    case version3 = "2.3"
    /// §2.4: version 4's own rules (a day log may be kept under a tombstone).
    case version4 = "2.4"
    /// §3: unknown fields are errors everywhere.
    case unknownFields = "3"
    /// §3.1: depth and duplicate keys.
    case duplicateKeys = "3.1"
    /// §3.3: characters (no control characters in titles).
    case characters = "3.3"
    /// §3.4: numbers (every number is an integer).
    case numbers = "3.4"
    /// §3.5: timestamps.
    case timestamps = "3.5"
    /// §3.6: required fields and defaults.
    case requiredFields = "3.6"

    /// The section of a schema version's own rules (§2.1…§2.4), or §2 for a version there
    /// is none of.
    public static func version(_ version: Int) -> FormatRule {
        switch version {
        case 1: .version1
        case 2: .version2
        case 3: .version3
        case 4: .version4
        default: .schemaVersions
        }
    }
}
