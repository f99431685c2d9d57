import Foundation

/// One file's metadata, from either API version (v3 `name`/`size`/`createdTime`, v2
/// `title`/`fileSize`/`createdDate`). Drive sends `size` and `version` as JSON strings.
/// Only v2 answers carry the `etag` a conditional update needs.
public struct DriveFile: Sendable, Equatable, Decodable {
    public var id: String
    public var name: String
    public var size: Int?
    public var version: Int?
    public var md5Checksum: String?
    public var createdTime: String?
    public var modifiedTime: String?
    public var etag: String?
    /// The id of the file's newest revision (the one its content is now): what a write must
    /// be checked against in the revision history, since `version` also moves on renames.
    public var headRevisionId: String?
    /// Storage the file takes, its pinned revisions included.
    public var quotaBytesUsed: Int?
    /// The last revision whose check finished (`appProperties.checkedRevision`, v2's private
    /// property of that key): every revision up to it is in it. A revision after it that the
    /// head lacks is a check some device still owes, which any device's backup finishes.
    public var checkedRevision: String?

    /// The app property (private to this app, on the file) that holds `checkedRevision`.
    public static let checkedRevisionKey = "checkedRevision"

    public init(
        id: String, name: String, size: Int? = nil, version: Int? = nil, md5Checksum: String? = nil,
        createdTime: String? = nil, modifiedTime: String? = nil, etag: String? = nil,
        headRevisionId: String? = nil, quotaBytesUsed: Int? = nil, checkedRevision: String? = nil
    ) {
        self.id = id
        self.name = name
        self.size = size
        self.version = version
        self.md5Checksum = md5Checksum
        self.createdTime = createdTime
        self.modifiedTime = modifiedTime
        self.etag = etag
        self.headRevisionId = headRevisionId
        self.quotaBytesUsed = quotaBytesUsed
        self.checkedRevision = checkedRevision
    }

    private enum Keys: String, CodingKey {
        case id, name, title, size, fileSize, version, md5Checksum
        case createdTime, createdDate, modifiedTime, modifiedDate, etag, headRevisionId
        case quotaBytesUsed, appProperties, properties
    }

    /// A v2 property: `visibility` PRIVATE is what v3 calls an app property.
    private struct Property: Decodable {
        var key: String
        var value: String?
        var visibility: String?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(String.self, forKey: .id)
        name =
            try container.decodeIfPresent(String.self, forKey: .name)
            ?? container.decodeIfPresent(String.self, forKey: .title) ?? ""
        size = try Self.integer(container, .size) ?? Self.integer(container, .fileSize)
        version = try Self.integer(container, .version)
        md5Checksum = try container.decodeIfPresent(String.self, forKey: .md5Checksum)
        createdTime =
            try container.decodeIfPresent(String.self, forKey: .createdTime)
            ?? container.decodeIfPresent(String.self, forKey: .createdDate)
        modifiedTime =
            try container.decodeIfPresent(String.self, forKey: .modifiedTime)
            ?? container.decodeIfPresent(String.self, forKey: .modifiedDate)
        etag = try container.decodeIfPresent(String.self, forKey: .etag)
        headRevisionId = try container.decodeIfPresent(String.self, forKey: .headRevisionId)
        quotaBytesUsed = try Self.integer(container, .quotaBytesUsed)
        checkedRevision =
            try container.decodeIfPresent([String: String?].self, forKey: .appProperties)?[
                Self.checkedRevisionKey] ?? nil
            ?? container.decodeIfPresent([Property].self, forKey: .properties)?.first {
                $0.key == Self.checkedRevisionKey && $0.visibility == "PRIVATE"
            }?.value
    }

    /// An int64 field: a string in Drive's JSON, accepted as a number too.
    private static func integer(_ container: KeyedDecodingContainer<Keys>, _ key: Keys) throws
        -> Int?
    {
        if let text = try? container.decodeIfPresent(String.self, forKey: key) {
            guard let value = Int(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "'\(text)' is not an integer")
            }
            return value
        }
        return try container.decodeIfPresent(Int.self, forKey: key)
    }
}

/// One revision of a file's content, as `revisions.list` gives it (v3), oldest first. Every
/// upload of a binary file makes one; `keepForever` pins it against Drive's purge.
public struct DriveRevision: Sendable, Equatable, Decodable {
    public var id: String
    public var md5Checksum: String?
    public var modifiedTime: String?
    public var size: Int?
    public var keepForever: Bool?

    public init(
        id: String, md5Checksum: String? = nil, modifiedTime: String? = nil, size: Int? = nil,
        keepForever: Bool? = nil
    ) {
        self.id = id
        self.md5Checksum = md5Checksum
        self.modifiedTime = modifiedTime
        self.size = size
        self.keepForever = keepForever
    }

    private enum Keys: String, CodingKey {
        case id, md5Checksum, modifiedTime, size, keepForever
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(String.self, forKey: .id)
        md5Checksum = try container.decodeIfPresent(String.self, forKey: .md5Checksum)
        modifiedTime = try container.decodeIfPresent(String.self, forKey: .modifiedTime)
        // int64, a string in Drive's JSON like a file's size.
        if let text = try? container.decodeIfPresent(String.self, forKey: .size) {
            size = Int(text)
        } else {
            size = try container.decodeIfPresent(Int.self, forKey: .size)
        }
        keepForever = try container.decodeIfPresent(Bool.self, forKey: .keepForever)
    }
}

/// A file's bytes together with the etag they were read under: the precondition for a
/// conditional update that must fail if anyone wrote since.
public struct DriveSnapshot: Sendable, Equatable {
    public var file: DriveFile
    public var etag: String
    public var bytes: [UInt8]

    public init(file: DriveFile, etag: String, bytes: [UInt8]) {
        self.file = file
        self.etag = etag
        self.bytes = bytes
    }
}

/// The answer to a conditional update.
public enum ConditionalUpdate: Sendable, Equatable {
    case updated(DriveFile)
    /// 412 `conditionNotMet`: someone wrote since our read; read, merge and try again.
    case changedSinceRead
}

/// The server's `Date` set against our clock when it arrived.
public struct ClockReading: Sendable, Equatable {
    public var server: Date
    public var local: Date
    /// Positive when the server is ahead of us.
    public var skew: Double { server.timeIntervalSince(local) }
}
