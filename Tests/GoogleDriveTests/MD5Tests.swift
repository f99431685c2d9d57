import GoogleDrive
import TestSupport
import Testing

/// The test suite of RFC 1321 appendix A.5.
@Test(arguments: [
    ("", "d41d8cd98f00b204e9800998ecf8427e"),
    ("a", "0cc175b9c0f1b6a831c399e269772661"),
    ("abc", "900150983cd24fb0d6963f7d28e17f72"),
    ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
    (
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "d174ab98d277d9f5a5611c2c9f419d9f"
    ),
    (
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "57edf4a22be3c955ac49da2e2107b67a"
    ),
])
func md5MatchesRFC1321(input: String, digest: String) {
    #expect(MD5.hex(Array(input.utf8)) == digest)
}

/// Fed in uneven pieces (across block and padding boundaries) the digest is the same.
@Test(arguments: [1, 55, 56, 63, 64, 65, 1000])
func md5InPiecesEqualsWhole(pieceSize: Int) {
    var random = SeededRandom(seed: UInt64(pieceSize))
    let bytes = (0..<4099).map { _ in UInt8.random(in: 0...255, using: &random) }
    var md5 = MD5()
    var start = 0
    while start < bytes.count {
        md5.update(bytes[start..<min(start + pieceSize, bytes.count)])
        start += pieceSize
    }
    let hex = md5.finish().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    #expect(hex == MD5.hex(bytes))
}
