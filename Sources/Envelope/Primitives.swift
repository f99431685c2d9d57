import COpenSSL

/// Key material that is wiped when the last value holding it goes away: the bytes live in a
/// buffer of our own (never in an `Array`, which Swift may copy and free without wiping),
/// cleared with `OPENSSL_cleanse` in `deinit` (a wipe the compiler may not elide).
///
/// Written only while it is made (`init`), read-only after, hence Sendable.
final class Secret: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// `count` bytes filled by `fill` (a KDF's output, a MAC, bytes copied in).
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        storage = .allocate(byteCount: count, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        fill(storage)
    }

    convenience init<Bytes: Collection<UInt8>>(copying bytes: Bytes) {
        self.init(count: bytes.count) { $0.copyBytes(from: bytes) }
    }

    /// The same for a filler that may fail; what it wrote is wiped with the buffer.
    static func filled(
        count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws(EnvelopeError) -> Void
    ) throws(EnvelopeError) -> Secret {
        var failure: EnvelopeError?
        let secret = Secret(count: count) { buffer in
            do throws(EnvelopeError) { try fill(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
        return secret
    }

    var count: Int { storage.count }

    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    deinit {
        OPENSSL_cleanse(storage.baseAddress, storage.count)
        storage.deallocate()
    }
}

/// The primitives age v1 is made of, each from libcrypto: random bytes (`RAND_bytes`),
/// HKDF-SHA-256 (RFC 5869 over `HMAC`), ChaCha20-Poly1305 (`EVP_chacha20_poly1305`), X25519
/// (`EVP_PKEY_derive`) and scrypt (`EVP_PBE_scrypt`).
enum Crypto {
    static func random(into buffer: UnsafeMutableRawBufferPointer) throws(EnvelopeError) {
        guard
            RAND_bytes(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(buffer.count))
                == 1
        else { throw EnvelopeError(.crypto, "the system's random generator failed (RAND_bytes)") }
    }

    static func random(count: Int) throws(EnvelopeError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        // withUnsafeMutableBytes rethrows untyped errors: the failure is carried out instead.
        let failure = bytes.withUnsafeMutableBytes { buffer -> EnvelopeError? in
            do throws(EnvelopeError) { try random(into: buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
        return bytes
    }

    /// HMAC-SHA-256 of `data` under `key`, into `output` (32 bytes).
    static func hmac(
        key: UnsafeRawBufferPointer, _ data: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) {
        var length: UInt32 = 0
        let result = HMAC(
            EVP_sha256(), key.baseAddress, Int32(key.count),
            data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count,
            output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
        // HMAC fails only when OpenSSL cannot allocate its context: like any out-of-memory.
        precondition(
            result != nil && length == 32, "HMAC-SHA-256 failed: OpenSSL could not allocate")
    }

    /// HKDF-SHA-256 with a 32-byte output, the only length age uses: Extract
    /// (PRK = HMAC(salt, ikm), an empty salt being 32 zero bytes) then one block of Expand
    /// (T(1) = HMAC(PRK, info || 0x01)).
    static func hkdf(ikm: Secret, salt: [UInt8], info: String) -> Secret {
        let zeroSalt = [UInt8](repeating: 0, count: 32)
        let extracted = Secret(count: 32) { prk in
            (salt.isEmpty ? zeroSalt : salt).withUnsafeBytes { salt in
                ikm.withBytes { ikm in hmac(key: salt, ikm, into: prk) }
            }
        }
        return Secret(count: 32) { okm in
            extracted.withBytes { prk in
                (Array(info.utf8) + [1]).withUnsafeBytes { hmac(key: prk, $0, into: okm) }
            }
        }
    }

    /// X25519(scalar, point), RFC 7748; nil when the result is all zeros (a low-order point,
    /// which age refuses) or the point is not 32 bytes. OpenSSL clamps the scalar.
    static func x25519(_ scalar: Secret, _ point: [UInt8]) -> Secret? {
        guard point.count == 32,
            let peer = point.withUnsafeBufferPointer({
                EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, $0.baseAddress, 32)
            })
        else { return nil }
        defer { EVP_PKEY_free(peer) }
        guard let own = privateKey(scalar) else { return nil }
        defer { EVP_PKEY_free(own) }
        guard let context = EVP_PKEY_CTX_new(own, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        let shared = try? Secret.filled(count: 32) { (output) throws(EnvelopeError) in
            var length = 32
            // OpenSSL's X25519 derive itself fails on an all-zero result; checked again below.
            guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer) == 1,
                EVP_PKEY_derive(
                    context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length) == 1,
                length == 32
            else { throw EnvelopeError(.crypto, "X25519 failed") }
        }
        guard let shared, shared.withBytes({ $0.contains { $0 != 0 } }) else { return nil }
        return shared
    }

    /// X25519(scalar, basepoint): the public half of an identity.
    static func x25519Public(_ scalar: Secret) -> [UInt8]? {
        guard let key = privateKey(scalar) else { return nil }
        defer { EVP_PKEY_free(key) }
        var point = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(key, &point, &length) == 1, length == 32 else {
            return nil
        }
        return point
    }

    private static func privateKey(_ scalar: Secret) -> OpaquePointer? {
        scalar.withBytes {
            EVP_PKEY_new_raw_private_key(
                EVP_PKEY_X25519, nil, $0.baseAddress?.assumingMemoryBound(to: UInt8.self),
                $0.count)
        }
    }

    /// scrypt(N = 2^logN, r = 8, p = 1, dkLen = 32) as age's scrypt stanza uses it. OpenSSL
    /// refuses to use more than `maxmem` bytes, so the exact need (128·r·(N+2) for V and the
    /// work area, 128·r·p for B) is passed: the caller has already bounded logN.
    static func scrypt(passphrase: Secret, salt: [UInt8], logN: Int) throws(EnvelopeError) -> Secret
    {
        let n = UInt64(1) << UInt64(logN)
        let r: UInt64 = 8
        let maxmem = 128 * r * (n + 2) + 128 * r
        return try Secret.filled(count: 32) { (key) throws(EnvelopeError) in
            let result = passphrase.withBytes { pass in
                salt.withUnsafeBufferPointer { salt in
                    EVP_PBE_scrypt(
                        pass.baseAddress?.assumingMemoryBound(to: CChar.self), pass.count,
                        salt.baseAddress, salt.count, n, r, 1, maxmem,
                        key.baseAddress?.assumingMemoryBound(to: UInt8.self), 32)
                }
            }
            guard result == 1 else {
                throw EnvelopeError(
                    .crypto,
                    "scrypt with work factor 2^\(logN) failed (OpenSSL could not allocate its memory)"
                )
            }
        }
    }
}

/// ChaCha20-Poly1305 (RFC 7539) with a 12-byte nonce and a 16-byte tag after the ciphertext;
/// one `EVP_CIPHER_CTX`, owned here, serves every chunk of a file.
final class ChaChaPoly {
    static let tagSize = 16
    private let context: OpaquePointer

    init() {
        // EVP_CIPHER_CTX_new fails only when OpenSSL cannot allocate.
        guard let context = EVP_CIPHER_CTX_new() else {
            preconditionFailure("EVP_CIPHER_CTX_new failed: OpenSSL could not allocate")
        }
        self.context = context
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// `EVP_CipherInit_ex` with this chunk's key and nonce, for either direction.
    private func start(key: Secret, nonce: [UInt8], encrypting: Bool) -> Bool {
        key.withBytes { key in
            nonce.withUnsafeBufferPointer { nonce in
                EVP_CipherInit_ex(
                    context, EVP_chacha20_poly1305(), nil,
                    key.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce.baseAddress,
                    encrypting ? 1 : 0) == 1
            }
        }
    }

    /// Encrypts `input` into `output` (input.count + 16 bytes: ciphertext, then tag).
    func seal(
        key: Secret, nonce: [UInt8], _ input: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) {
        let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var length: Int32 = 0
        var final: Int32 = 0
        let ok = start(key: key, nonce: nonce, encrypting: true)
        // Encryption of a buffer in memory fails only when OpenSSL cannot allocate.
        precondition(
            ok
                && EVP_EncryptUpdate(
                    context, out, &length, input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    Int32(input.count)) == 1
                && EVP_EncryptFinal_ex(context, out.map { $0 + Int(length) }, &final) == 1
                && cloudbackup_aead_get_tag(context, out.map { $0 + input.count }, 16) == 1,
            "ChaCha20-Poly1305 encryption failed: OpenSSL could not allocate")
    }

    /// Decrypts `input` (ciphertext, then tag) into `output` (input.count - 16 bytes); false
    /// when the tag does not verify, in which case `output` is zeroed (nothing unverified
    /// is left to read).
    func open(
        key: Secret, nonce: [UInt8], _ input: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        let size = input.count - Self.tagSize
        precondition(size >= 0 && output.count >= size)
        let source = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var length: Int32 = 0
        var final: Int32 = 0
        let ok = start(key: key, nonce: nonce, encrypting: false)
        let verified =
            ok && EVP_DecryptUpdate(context, out, &length, source, Int32(size)) == 1
            && cloudbackup_aead_set_tag(context, source.map { $0 + size }, 16) == 1
            && EVP_DecryptFinal_ex(context, out.map { $0 + Int(length) }, &final) == 1
        if !verified, size > 0 { OPENSSL_cleanse(output.baseAddress, size) }
        return verified
    }
}
