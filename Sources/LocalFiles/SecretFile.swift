#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file that holds a secret: the token file, an identity file, a password file,
/// `config.json` (it may hold the OAuth client secret), the decision log. One rule holds for
/// all of them, ssh's for a private key: refused while its group or others may read or write
/// it, so that a secret another user has seen is not used as if it were still private.
public struct SecretFile: Sendable {
    public let path: String
    /// What the file is and what it holds, worded for the refusal: "a token file", "your login".
    public let kind: String
    public let holding: String

    public init(_ path: String, kind: String, holding: String) {
        self.path = path
        self.kind = kind
        self.holding = holding
    }

    /// The refusal, with the `chmod` that fixes it.
    public struct TooOpen: Error, Equatable, Sendable, CustomStringConvertible {
        public let path: String
        public let mode: UInt32
        public let kind: String
        public let holding: String

        public init(path: String, mode: UInt32, kind: String, holding: String) {
            self.path = path
            self.mode = mode
            self.kind = kind
            self.holding = holding
        }

        public var description: String {
            let octal = String(mode & 0o7777, radix: 8)
            let padded = String(repeating: "0", count: max(0, 4 - octal.count)) + octal
            return
                "\(path): permissions \(padded) are too open for \(kind) (it holds \(holding)); run `chmod 600 \(path)` and try again"
        }
    }

    /// Whether the file exists, refused when it is open to others. `checking: false` is for
    /// the one caller that must reach an exposed file: logout, which deletes it.
    public func exists(checking: Bool = true) throws -> Bool {
        guard let mode = try LocalFile.mode(of: path) else { return false }
        if checking, mode & 0o077 != 0 {
            throw TooOpen(path: path, mode: UInt32(mode), kind: kind, holding: holding)
        }
        return true
    }

    /// The file's bytes, nil when it does not exist; refused when it is open to others.
    public func read(maxBytes: Int, checking: Bool = true) throws -> [UInt8]? {
        guard try exists(checking: checking) else { return nil }
        do {
            return try LocalFile.read(path, maxBytes: maxBytes)
        } catch  where error.isMissing {
            // Deleted between the check and the read (a logout won the race): not there.
            return nil
        }
    }
}
