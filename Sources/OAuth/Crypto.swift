import COpenSSL

/// The little cryptography OAuth needs, from OpenSSL's libcrypto.
enum Crypto {
    /// `count` bytes from OpenSSL's CSPRNG (`RAND_bytes`).
    static func randomBytes(_ count: Int) throws(OAuthError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let result = bytes.withUnsafeMutableBufferPointer {
            RAND_bytes($0.baseAddress, Int32(count))
        }
        guard result == 1 else {
            throw .crypto("RAND_bytes could not produce random bytes")
        }
        return bytes
    }

    /// SHA-256 through the EVP interface (`EVP_Digest` with `EVP_sha256`).
    static func sha256(_ bytes: [UInt8]) throws(OAuthError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(
                    input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        guard result == 1, length == 32 else { throw .crypto("EVP_Digest(SHA-256) failed") }
        return Array(digest.prefix(Int(length)))
    }
}

/// base64url without padding (RFC 4648 §5), the encoding RFC 7636 uses for the verifier
/// and the challenge.
enum Base64URL {
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var group = UInt32(0)
            for (offset, byte) in chunk.enumerated() { group |= UInt32(byte) << (16 - 8 * offset) }
            for position in 0...chunk.count {
                output.append(alphabet[Int((group >> (18 - 6 * position)) & 63)])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
