import COpenSSL

/// The hashes the tool needs, from OpenSSL's libcrypto through one `EVP_Digest` funnel:
/// SHA-256 for PKCE and the merge log, MD5 to check Drive downloads against `md5Checksum`
/// (an integrity check Google chose, not a security one).
public enum Digest {
    public static func sha256<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        digest(bytes, EVP_sha256())
    }

    public static func md5<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        digest(bytes, EVP_md5())
    }

    /// Lower-case hex, the form Drive reports `md5Checksum` in and `sha256sum` prints.
    public static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `EVP_Digest` fails only when OpenSSL cannot allocate its context; no input makes it
    /// fail, so a failure is treated like any other out-of-memory condition.
    private static func digest<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, _ algorithm: OpaquePointer?
    ) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result =
            bytes.withContiguousStorageIfAvailable { input in
                run(UnsafeRawBufferPointer(input), algorithm, &output, &length)
            } ?? Array(bytes).withUnsafeBytes { run($0, algorithm, &output, &length) }
        precondition(result == 1, "EVP_Digest failed: OpenSSL could not allocate")
        return Array(output.prefix(Int(length)))
    }

    private static func run(
        _ input: UnsafeRawBufferPointer, _ algorithm: OpaquePointer?, _ output: inout [UInt8],
        _ length: inout UInt32
    ) -> Int32 {
        output.withUnsafeMutableBufferPointer {
            EVP_Digest(input.baseAddress, input.count, $0.baseAddress, &length, algorithm, nil)
        }
    }
}
