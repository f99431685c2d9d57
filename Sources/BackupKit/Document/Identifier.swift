/// A device, challenge or task id: 1…64 characters of `A-Z a-z 0-9 - _` (FORMAT.md §1.2).
///
/// Ids are ASCII by construction, so comparing them as Swift strings is the same as
/// comparing their UTF-8 bytes, which is the order the canonical writer sorts keys in.
public struct Identifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let maxLength = 64

    public init?(_ text: String) {
        guard Identifier.isValid(text.utf8) else { return nil }
        self.rawValue = text
    }

    /// For values already checked (the reader checks the bytes before making a String).
    public init(unchecked text: String) {
        self.rawValue = text
    }

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

    public var description: String { rawValue }

    public static func < (lhs: Identifier, rhs: Identifier) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

public typealias DeviceID = Identifier
public typealias ChallengeID = Identifier
public typealias TaskID = Identifier
