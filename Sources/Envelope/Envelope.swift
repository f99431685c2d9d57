import COpenSSL
import Parallel

/// age v1 (`age-encryption.org/v1`, specified at C2SP) over bytes in memory: any age tool
/// (age, rage, typage, pyrage) reads what `encrypt` writes, and `decrypt` reads theirs.
///
/// Design: a file key of 16 random bytes is wrapped once per recipient in the header (X25519
/// or scrypt stanzas), the header is authenticated with HMAC-SHA-256 under a key derived from
/// the file key, and the payload is ChaCha20-Poly1305 in 64 KiB chunks (STREAM: nonce = 11-byte
/// big-endian chunk counter || 0x01 for the final chunk, else 0x00) under a key derived from
/// the file key and a random 16-byte nonce. Decryption verifies every chunk before anything is
/// returned: a failure anywhere returns no plaintext at all, and says which check failed.
///
/// Example: `encrypt(Array("hi".utf8), to: [.scrypt(passphrase: pass)])` is
/// `age-encryption.org/v1\n-> scrypt <salt> 18\n<wrapped key>\n--- <mac>\n` followed by the
/// 16-byte nonce and one final chunk of 2 + 16 bytes.
public enum Envelope {
    static let chunkSize = 64 * 1024
    /// From this many chunks (1 MiB) on, a payload is sealed and opened in two halves at
    /// once: STREAM's chunks are independent (each has its own nonce), and on two cores this
    /// halves what encryption adds to a large backup; below it a thread costs more than it
    /// saves.
    static let chunksForTwoHalves = 16

    /// Whether `bytes` are an age file (binary, any version, or ASCII-armored): the test that
    /// tells an encrypted backup from a plain one.
    public static func isEncrypted(_ bytes: [UInt8]) -> Bool {
        Header.looksLikeAge(bytes) || Armor.looksArmored(bytes)
    }

    public static func encrypt(_ plaintext: [UInt8], to recipients: [Recipient])
        throws(EnvelopeError)
        -> [UInt8]
    {
        guard !recipients.isEmpty else { throw EnvelopeError(.key, "no recipient to encrypt to") }
        let passphrases = recipients.filter(\.isPassphrase).count
        guard passphrases == 0 || recipients.count == 1 else {
            throw EnvelopeError(
                .key, "a passphrase must be the only recipient of a file (age's rule)")
        }
        let fileKey = try Secret.filled(count: 16) { (key) throws(EnvelopeError) in
            try Crypto.random(into: key)
        }
        var stanzas: [Header.Stanza] = []
        for recipient in recipients { stanzas.append(try recipient.wrap(fileKey)) }
        let header = Header.encode(stanzas)
        let mac = Self.mac(header, fileKey: fileKey)
        let nonce = try Crypto.random(count: 16)
        let prefix = header + [UInt8(ascii: " ")] + Base64.encode(mac) + [0x0a] + nonce
        return seal(
            plaintext, after: prefix, key: Crypto.hkdf(ikm: fileKey, salt: nonce, info: "payload"))
    }

    /// The plaintext of an age file (binary or armored) for the first identity that opens it;
    /// nothing when any check fails.
    public static func decrypt(_ bytes: [UInt8], with identities: [Identity]) throws(EnvelopeError)
        -> [UInt8]
    {
        let binary = Armor.looksArmored(bytes) ? try Armor.decode(bytes) : bytes
        let header = try Header.parse(binary)
        if header.stanzas.contains(where: { $0.arguments.first == "scrypt" }),
            header.stanzas.count > 1
        {
            throw EnvelopeError(.header, "an scrypt stanza must be the only one in the header")
        }
        var fileKey: Secret?
        search: for identity in identities {
            for stanza in header.stanzas {
                if let key = try identity.unwrap(stanza) {
                    fileKey = key
                    break search
                }
            }
        }
        guard let fileKey else { throw noMatch(header, identities) }
        guard constantTimeEqual(mac(Array(header.authenticated), fileKey: fileKey), header.mac)
        else {
            throw EnvelopeError(.mac, "the age header's MAC does not match: the header was altered")
        }
        return try open(binary[header.payloadStart...], fileKey: fileKey)
    }

    /// `bytes` in age's ASCII armor (PEM, "AGE ENCRYPTED FILE").
    public static func armor(_ bytes: [UInt8]) -> String { Armor.encode(bytes) }

    /// The binary age file inside an armored one, for a reader that knows the file is armored
    /// (`decrypt` recognizes armor only by a leading `-----BEGIN`).
    public static func dearmor(_ bytes: [UInt8]) throws(EnvelopeError) -> [UInt8] {
        try Armor.decode(bytes)
    }

    /// HMAC-SHA-256 over the header through `---`, keyed HKDF(file key, "", "header").
    private static func mac(_ header: [UInt8], fileKey: Secret) -> [UInt8] {
        let key = Crypto.hkdf(ikm: fileKey, salt: [], info: "header")
        var mac = [UInt8](repeating: 0, count: 32)
        key.withBytes { key in
            header.withUnsafeBytes { header in
                mac.withUnsafeMutableBytes { Crypto.hmac(key: key, header, into: $0) }
            }
        }
        return mac
    }

    private static func noMatch(_ header: Header, _ identities: [Identity]) -> EnvelopeError {
        let types = header.stanzas.compactMap(\.arguments.first)
        let kind =
            types == ["scrypt"]
            ? "a passphrase"
            : Set(types).sorted().map { $0 == "X25519" ? "an X25519 key" : "'\($0)'" }.joined(
                separator: ", ")
        let tried =
            identities.isEmpty
            ? "no key was given" : "none of the \(identities.count) key(s) given opens it"
        return EnvelopeError(
            .noMatch, "no identity matched: the file is encrypted to \(kind), and \(tried)")
    }

    private static func nonce(_ counter: UInt64, last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 {
            nonce[3 + index] = UInt8(truncatingIfNeeded: counter >> UInt64(8 * (7 - index)))
        }
        nonce[11] = last ? 1 : 0
        return nonce
    }

    /// STREAM encryption: full chunks, then a final one (empty only for an empty plaintext),
    /// written after `prefix` (the header and nonce) into one buffer: a backup's bytes are
    /// copied once, by the cipher.
    private static func seal(_ plaintext: [UInt8], after prefix: [UInt8], key: Secret) -> [UInt8] {
        let chunks = max(1, (plaintext.count + chunkSize - 1) / chunkSize)
        let count = prefix.count + plaintext.count + chunks * ChaChaPoly.tagSize
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let output = UnsafeMutableRawBufferPointer(buffer)
            output.copyBytes(from: prefix)
            let size = plaintext.count
            plaintext.withUnsafeBytes { plaintext in
                _ = inHalves(chunks, from: plaintext, into: output) {
                    cipher, chunk, input, output in
                    let start = chunk * chunkSize
                    let end = min(start + chunkSize, size)
                    let at = prefix.count + start + chunk * ChaChaPoly.tagSize
                    cipher.seal(
                        key: key, nonce: nonce(UInt64(chunk), last: chunk == chunks - 1),
                        UnsafeRawBufferPointer(rebasing: input[start..<end]),
                        into: UnsafeMutableRawBufferPointer(
                            rebasing: output[at..<(at + end - start + ChaChaPoly.tagSize)]))
                    return true
                }
            }
            initialized = count
        }
    }

    /// The payload (nonce, then chunks) opened as its length lays it out: every chunk full but
    /// the last, which is shorter or full and is opened as final, in two halves at once. When
    /// that fails anywhere, `openInOrder` reads it again chunk by chunk, to say exactly what
    /// is wrong (it accepts nothing this refuses: a chunk that fails under its nonce here
    /// fails there too).
    private static func open(_ payload: ArraySlice<UInt8>, fileKey: Secret) throws(EnvelopeError)
        -> [UInt8]
    {
        guard payload.count >= 16 else {
            // The reference implementation reads the nonce with the header, and fails it so.
            throw EnvelopeError(
                .header, "the age file is cut short: the payload's 16-byte nonce is incomplete")
        }
        let key = Crypto.hkdf(ikm: fileKey, salt: Array(payload.prefix(16)), info: "payload")
        let sealed = payload.dropFirst(16)
        let full = chunkSize + ChaChaPoly.tagSize
        let chunks = (sealed.count + full - 1) / full
        let last = sealed.count - (chunks - 1) * full
        let laidOut =
            chunks > 0 && (last > ChaChaPoly.tagSize || (chunks == 1 && last == ChaChaPoly.tagSize))
        let size = laidOut ? sealed.count - chunks * ChaChaPoly.tagSize : 0
        var opened = false
        // Not zeroed first: on a large file that alone would fault in every page on one core,
        // where the two halves fault in their own while they decrypt.
        let plaintext = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let output = UnsafeMutableRawBufferPointer(buffer)
            opened =
                laidOut
                && sealed.withUnsafeBytes { input in
                    inHalves(chunks, from: input, into: output) { cipher, chunk, input, output in
                        let start = chunk * full
                        let end = min(start + full, input.count)
                        let at = chunk * chunkSize
                        return cipher.open(
                            key: key, nonce: nonce(UInt64(chunk), last: chunk == chunks - 1),
                            UnsafeRawBufferPointer(rebasing: input[start..<end]),
                            into: UnsafeMutableRawBufferPointer(
                                rebasing: output[at..<(at + end - start - ChaChaPoly.tagSize)]))
                    }
                }
            // What the chunks that did verify wrote is wiped with the buffer.
            if !opened { OPENSSL_cleanse(output.baseAddress, output.count) }
            initialized = opened ? size : 0
        }
        guard opened else { return try openInOrder(sealed, key: key) }
        return plaintext
    }

    /// `body` for every chunk number below `chunks`, with a cipher of its own in each half,
    /// the two halves at once from `chunksForTwoHalves` chunks on (`Parallel.inHalves`);
    /// whether every call returned true (a half stops at its first false).
    private static func inHalves(
        _ chunks: Int, from input: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer,
        _ body:
            @escaping @Sendable (
                ChaChaPoly, Int, UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer
            ) -> Bool
    ) -> Bool {
        let buffers = Buffers(input: input, output: output)
        return Parallel.inHalves(0..<chunks, minimum: chunksForTwoHalves) { range in
            let cipher = ChaChaPoly()
            return range.allSatisfy { body(cipher, $0, buffers.input, buffers.output) }
        }.allSatisfy { $0 }
    }

    /// The buffers both halves of `inHalves` use: both read the input, each writes only its
    /// own chunks' bytes of the output, and `Parallel.inHalves` returns only once both are
    /// done. Hence sound to hand across threads.
    private struct Buffers: @unchecked Sendable {
        let input: UnsafeRawBufferPointer
        let output: UnsafeMutableRawBufferPointer
    }

    /// STREAM decryption of the chunks after the payload's nonce, one after the other: a
    /// chunk shorter than a full one must be final; a full one is tried as not final, then as
    /// final. After the final chunk nothing may follow; it may be empty only as the only
    /// chunk. Any failure wipes what was decrypted so far.
    private static func openInOrder(_ sealed: ArraySlice<UInt8>, key: Secret)
        throws(EnvelopeError) -> [UInt8]
    {
        let full = chunkSize + ChaChaPoly.tagSize
        // Room for the worst case (a malformed file may not add up); trimmed to what is read.
        var plaintext = [UInt8](repeating: 0, count: sealed.count)
        var written = 0
        let cipher = ChaChaPoly()
        let failure: EnvelopeError? = sealed.withUnsafeBytes { input in
            plaintext.withUnsafeMutableBytes { output in
                var offset = 0
                var counter: UInt64 = 0
                while true {
                    let number = counter + 1
                    let size = min(input.count - offset, full)
                    guard size > 0 else {
                        return EnvelopeError(
                            .payload,
                            "the age payload ends without its final chunk (truncated after chunk \(counter))"
                        )
                    }
                    guard size > ChaChaPoly.tagSize || (size == ChaChaPoly.tagSize && counter == 0)
                    else {
                        return EnvelopeError(
                            .payload,
                            size < ChaChaPoly.tagSize
                                ? "age payload chunk \(number) is shorter than its 16-byte tag (truncated)"
                                : "age payload chunk \(number) is empty: only a file's only chunk may be"
                        )
                    }
                    let chunk = UnsafeRawBufferPointer(rebasing: input[offset..<(offset + size)])
                    let at = offset - Int(counter) * ChaChaPoly.tagSize
                    let into = UnsafeMutableRawBufferPointer(
                        rebasing: output[at..<(at + size - ChaChaPoly.tagSize)])
                    var last = size < full
                    var opened = cipher.open(
                        key: key, nonce: nonce(counter, last: last), chunk, into: into)
                    if !opened, !last {
                        last = true
                        opened = cipher.open(
                            key: key, nonce: nonce(counter, last: true), chunk, into: into)
                    }
                    guard opened else {
                        return EnvelopeError(
                            .payload,
                            "age payload chunk \(number) fails authentication (corrupted, reordered or truncated)"
                        )
                    }
                    offset += size
                    counter += 1
                    written = at + size - ChaChaPoly.tagSize
                    if last {
                        guard offset == input.count else {
                            return EnvelopeError(
                                .payload, "the age payload has data after its final chunk \(number)"
                            )
                        }
                        return nil
                    }
                }
            }
        }
        if let failure {
            plaintext.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
            throw failure
        }
        plaintext.removeSubrange(written...)
        return plaintext
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// Why an age file could not be read or written; `description` is one line for a person,
/// saying which check failed (never a key or a passphrase).
public struct EnvelopeError: Error, Equatable, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The header is malformed, of another version, or a stanza for us is invalid.
        case header
        /// The header's MAC does not verify under the file key.
        case mac
        /// No identity given opens any stanza.
        case noMatch
        /// A payload chunk is missing, truncated, reordered, altered or in excess.
        case payload
        /// The ASCII armor is not strict PEM.
        case armor
        /// A key, recipient or passphrase given to us is unusable.
        case key
        /// The system's crypto failed (random bytes, memory for scrypt).
        case crypto
    }

    public var kind: Kind
    public var description: String

    init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
