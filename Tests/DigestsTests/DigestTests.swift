import Digests
import Foundation
import TestSupport
import Testing

@Suite struct DigestTests {
    /// FIPS 180-4 example vectors.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func sha256KnownVectors(message: String, digest: String) {
        #expect(Digest.hex(Digest.sha256(Array(message.utf8))) == digest)
    }

    /// The test suite of RFC 1321 appendix A.5.
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        (
            "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
            "57edf4a22be3c955ac49da2e2107b67a"
        ),
    ])
    func md5MatchesRFC1321(input: String, digest: String) {
        #expect(Digest.hex(Digest.md5(Array(input.utf8))) == digest)
    }

    /// Non-contiguous input (a String's UTF-8 view, a slice) hashes like its bytes, and lengths
    /// around the padding edges agree with coreutils.
    @Test func agreesWithCoreutilsAcrossPaddingEdges() throws {
        for length in [55, 56, 57, 63, 64, 65, 1000] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            for (tool, hash) in [
                ("sha256sum", Digest.sha256(message[...])), ("md5sum", Digest.md5(message)),
            ] {
                let result = try run(
                    URL(fileURLWithPath: "/usr/bin/" + tool), [], stdin: Data(message))
                let expected = try #require(result.stdout.split(separator: " ").first)
                #expect(Digest.hex(hash) == String(expected), "\(tool), length \(length)")
            }
        }
        #expect(Digest.sha256("abc".utf8) == Digest.sha256(Array("abc".utf8)))
    }
}
