import COpenSSL

/// Randomness for PKCE and `state`, from OpenSSL's CSPRNG.
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
