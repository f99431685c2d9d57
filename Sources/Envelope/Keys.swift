/// Who a file is encrypted to: an X25519 public key (`age1…`) or a passphrase (scrypt).
public struct Recipient: Sendable {
    enum Kind {
        case x25519(publicKey: [UInt8])
        case scrypt(passphrase: Secret, workFactor: Int)
    }

    let kind: Kind

    /// age's default scrypt work factor, 2^18 (about a second and 256 MiB).
    public static let defaultWorkFactor = 18

    /// An `age1…` recipient as `age-keygen` prints it.
    public init(parsing text: String) throws(EnvelopeError) {
        kind = .x25519(publicKey: try Bech32.key(text, hrp: "age", what: "recipient"))
    }

    /// A passphrase; `workFactor` is log2 of scrypt's N (tests lower it, files keep 18).
    public static func scrypt(passphrase: [UInt8], workFactor: Int = defaultWorkFactor) -> Recipient
    {
        Recipient(kind: .scrypt(passphrase: Secret(copying: passphrase), workFactor: workFactor))
    }

    init(kind: Kind) { self.kind = kind }

    /// The recipient in its `age1…` form; nil for a passphrase.
    public var encoded: String? {
        guard case .x25519(let key) = kind else { return nil }
        return Bech32.encode(hrp: "age", key)
    }

    var isPassphrase: Bool {
        if case .scrypt = kind { return true }
        return false
    }

    func wrap(_ fileKey: Secret) throws(EnvelopeError) -> Header.Stanza {
        switch kind {
        case .x25519(let recipient):
            let ephemeral = try Secret.filled(count: 32) { (bytes) throws(EnvelopeError) in
                try Crypto.random(into: bytes)
            }
            guard let share = Crypto.x25519Public(ephemeral),
                let shared = Crypto.x25519(ephemeral, recipient)
            else { throw EnvelopeError(.key, "the X25519 recipient is not a usable public key") }
            let key = Crypto.hkdf(ikm: shared, salt: share + recipient, info: X25519Stanza.info)
            return Header.Stanza(
                arguments: ["X25519", String(decoding: Base64.encode(share), as: UTF8.self)],
                body: seal(fileKey, key))
        case .scrypt(let passphrase, let workFactor):
            guard (1...ScryptStanza.maxWorkFactor).contains(workFactor) else {
                throw EnvelopeError(
                    .key,
                    "scrypt work factor \(workFactor) is outside 1...\(ScryptStanza.maxWorkFactor)")
            }
            let salt = try Crypto.random(count: 16)
            let key = try Crypto.scrypt(
                passphrase: passphrase, salt: ScryptStanza.label + salt, logN: workFactor)
            return Header.Stanza(
                arguments: [
                    "scrypt", String(decoding: Base64.encode(salt), as: UTF8.self),
                    String(workFactor),
                ],
                body: seal(fileKey, key))
        }
    }

    /// A stanza body: the file key under `key`, nonce all zeros (each key wraps one file key).
    private func seal(_ fileKey: Secret, _ key: Secret) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: 32)
        fileKey.withBytes { fileKey in
            body.withUnsafeMutableBytes {
                ChaChaPoly().seal(
                    key: key, nonce: [UInt8](repeating: 0, count: 12), fileKey, into: $0)
            }
        }
        return body
    }
}

/// What opens a file: an X25519 secret key (`AGE-SECRET-KEY-1…`) or a passphrase.
public struct Identity: Sendable {
    enum Kind {
        case x25519(secret: Secret, publicKey: [UInt8])
        case scrypt(passphrase: Secret, maxWorkFactor: Int)
    }

    let kind: Kind

    /// The highest scrypt work factor decryption accepts, as age's: 2^22 takes seconds and
    /// 4 GiB; a higher one in a file is refused rather than run.
    public static let defaultMaxWorkFactor = 22

    /// An `AGE-SECRET-KEY-1…` line as `age-keygen` writes it.
    public init(parsing text: String) throws(EnvelopeError) {
        let secret = Secret(
            copying: try Bech32.key(text, hrp: "age-secret-key-", what: "identity"))
        guard let publicKey = Crypto.x25519Public(secret) else {
            throw EnvelopeError(.key, "the age identity is not a usable X25519 key")
        }
        kind = .x25519(secret: secret, publicKey: publicKey)
    }

    /// A new random X25519 identity.
    public static func generate() throws(EnvelopeError) -> Identity {
        let secret = try Secret.filled(count: 32) { (bytes) throws(EnvelopeError) in
            try Crypto.random(into: bytes)
        }
        guard let publicKey = Crypto.x25519Public(secret) else {
            throw EnvelopeError(.crypto, "X25519 key generation failed")
        }
        return Identity(kind: .x25519(secret: secret, publicKey: publicKey))
    }

    public static func passphrase(_ passphrase: [UInt8], maxWorkFactor: Int = defaultMaxWorkFactor)
        -> Identity
    {
        Identity(
            kind: .scrypt(passphrase: Secret(copying: passphrase), maxWorkFactor: maxWorkFactor))
    }

    init(kind: Kind) { self.kind = kind }

    /// The identities of an identity file as `age-keygen` writes it: one `AGE-SECRET-KEY-1…`
    /// a line; empty lines and `#` comments ignored. The error names the line, never its text.
    public static func parseFile(_ text: String) throws(EnvelopeError) -> [Identity] {
        var identities: [Identity] = []
        // "\r\n" is one Character in Swift: both endings split lines.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (index, line) in lines.enumerated() {
            if line.isEmpty || line.hasPrefix("#") { continue }
            do {
                identities.append(try Identity(parsing: String(line)))
            } catch {
                throw EnvelopeError(
                    .key,
                    "line \(index + 1) is \(error.description.prefix(1).lowercased())\(error.description.dropFirst())"
                )
            }
        }
        guard !identities.isEmpty else {
            throw EnvelopeError(.key, "it holds no AGE-SECRET-KEY-1 line")
        }
        return identities
    }

    /// Where files for this identity are encrypted to; nil for a passphrase (encrypting to it
    /// is `Recipient.scrypt`).
    public var recipient: Recipient? {
        guard case .x25519(_, let publicKey) = kind else { return nil }
        return Recipient(kind: .x25519(publicKey: publicKey))
    }

    /// The file key from `stanza` when it is addressed to this identity and opens; nil when
    /// it is not ours (another type, or its tag fails under our key); a header failure when
    /// it is of our type but malformed (C2SP: such a stanza MUST be rejected).
    func unwrap(_ stanza: Header.Stanza) throws(EnvelopeError) -> Secret? {
        switch kind {
        case .x25519(let secret, let publicKey):
            guard
                let share = try stanza.argument(
                    of: "X25519", count: 2, bytes: 32,
                    "an X25519 stanza must have one argument, a 32-byte share in canonical base64")
            else { return nil }
            try stanza.requireWrappedKey()
            guard let shared = Crypto.x25519(secret, share) else {
                throw EnvelopeError(
                    .header,
                    "an X25519 stanza's share is a low-order point (the shared secret is zero)")
            }
            return open(
                stanza.body,
                Crypto.hkdf(ikm: shared, salt: share + publicKey, info: X25519Stanza.info))
        case .scrypt(let passphrase, let maxWorkFactor):
            guard
                let salt = try stanza.argument(
                    of: "scrypt", count: 3, bytes: 16,
                    "an scrypt stanza must have two arguments, the first a 16-byte salt in canonical base64"
                )
            else { return nil }
            let factor = stanza.arguments[2]
            // Decimal without a sign or leading zero (^[1-9][0-9]*$); two digits are enough
            // for any accepted factor, and keep Int from overflowing.
            guard let first = factor.utf8.first,
                (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first),
                factor.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                factor.utf8.count <= 2, let workFactor = Int(factor)
            else {
                throw EnvelopeError(
                    .header,
                    "an scrypt stanza's work factor must be a decimal number without leading zeros")
            }
            guard workFactor <= maxWorkFactor else {
                throw EnvelopeError(
                    .header,
                    "the scrypt work factor 2^\(workFactor) is over the 2^\(maxWorkFactor) this reads (it would take too long)"
                )
            }
            try stanza.requireWrappedKey()
            let key = try Crypto.scrypt(
                passphrase: passphrase, salt: ScryptStanza.label + salt, logN: workFactor)
            return open(stanza.body, key)
        }
    }

    private func open(_ body: [UInt8], _ key: Secret) -> Secret? {
        let fileKey = Secret(count: 16) { _ in }
        let opened = body.withUnsafeBytes { body in
            fileKey.withBytes { fileKey in
                ChaChaPoly().open(
                    key: key, nonce: [UInt8](repeating: 0, count: 12), body,
                    into: UnsafeMutableRawBufferPointer(mutating: fileKey))
            }
        }
        return opened ? fileKey : nil
    }
}

enum X25519Stanza {
    static let info = "age-encryption.org/v1/X25519"
}

extension Header.Stanza {
    /// The stanza's first argument after its type, decoded; nil when it is of another type.
    /// A stanza of `type` must have `count` arguments in all, that one canonical base64 of
    /// `bytes` bytes, else it is refused (`problem`): C2SP says such a stanza MUST be.
    func argument(of type: String, count: Int, bytes: Int, _ problem: String)
        throws(EnvelopeError) -> [UInt8]?
    {
        guard arguments.first == type else { return nil }
        guard arguments.count == count, let value = Base64.decode(arguments[1].utf8),
            value.count == bytes
        else { throw EnvelopeError(.header, problem) }
        return value
    }

    /// The body is checked to be exactly a wrapped 16-byte key (32 bytes) before any
    /// decryption, against partitioning-oracle attacks (C2SP).
    func requireWrappedKey() throws(EnvelopeError) {
        guard body.count == 32 else {
            throw EnvelopeError(
                .header,
                "a \(arguments[0]) stanza's body is \(body.count) bytes, not a wrapped 16-byte file key (32)"
            )
        }
    }
}

enum ScryptStanza {
    static let label = Array("age-encryption.org/v1/scrypt".utf8)
    static let maxWorkFactor = Identity.defaultMaxWorkFactor
}

extension Bech32 {
    /// The 32-byte X25519 key of an age recipient or identity with this `hrp`.
    static func key(_ text: String, hrp: String, what: String) throws(EnvelopeError) -> [UInt8] {
        guard let (found, key) = decode(text), found == hrp, key.count == 32 else {
            let prefix = what == "identity" ? "AGE-SECRET-KEY-1" : "age1"
            throw EnvelopeError(
                .key, "not an age X25519 \(what) (expected '\(prefix)' and 58 more characters)")
        }
        return key
    }
}
