/// A device, challenge or task id: 1…64 characters of `A-Z a-z 0-9 - _` (FORMAT.md §1.2).
///
/// Ids are ASCII by construction, so comparing them as Swift strings is the same as
/// comparing their UTF-8 bytes, which is the order the canonical writer sorts keys in.
public struct Identifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The id as the file spells it; valid (ASCII) unless made with `init(unchecked:)` from
    /// unchecked text.
    public let rawValue: String

    /// 64: the most characters (bytes, as ids are ASCII) an id may have.
    public static let maxLength = 64

    /// Nil unless `text` is 1…64 of `A-Z a-z 0-9 - _`.
    public init?(_ text: String) {
        guard Identifier.isValid(text.utf8) else { return nil }
        self.rawValue = text
    }

    /// For values already checked (the reader checks the bytes before making a String).
    public init(unchecked text: String) {
        self.rawValue = text
    }

    /// Whether `bytes` (UTF-8) make a valid id, checked without building a String.
    @inlinable
    public static func isValid<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// The id itself, as the file spells it.
    public var description: String { rawValue }

    /// By UTF-8 bytes, the order the canonical writer sorts keys in (FORMAT.md §4.2).
    public static func < (lhs: Identifier, rhs: Identifier) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

/// A device's id (`deviceId`): which device a document belongs to, kept local by a merge.
public typealias DeviceID = Identifier
/// A challenge's id: its key in `challenges`, the first half of a day log's key, a tombstone's
/// id.
public typealias ChallengeID = Identifier
/// A task's id, unique within its challenge: its key in `tasks` and in a day log's `values`.
public typealias TaskID = Identifier
