import Foundation

/// MD5 (RFC 1321), only to check downloads against Drive's `md5Checksum`; not for security.
/// Pure Swift so GoogleDrive needs no C library.
public struct MD5: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32) = (
        0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476
    )
    private var pending: [UInt8] = []
    private var length: UInt64 = 0
    /// The current block's sixteen words, kept between blocks to avoid an allocation each.
    private var scratch = [UInt32](repeating: 0, count: 16)

    public init() {}

    /// The lower-case hex digest of `bytes`, the form Drive reports.
    public static func hex<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var md5 = MD5()
        md5.update(bytes)
        return md5.finish().map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xf)]])
        }.joined()
    }

    public mutating func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        length &+= UInt64(bytes.count)
        pending.append(contentsOf: bytes)
        var start = 0
        while pending.count - start >= 64 {
            compress(pending[start..<start + 64])
            start += 64
        }
        pending.removeFirst(start)
    }

    /// The 16-byte digest; pads as RFC 1321 §3.1–3.2 say.
    public mutating func finish() -> [UInt8] {
        let bitLength = length &* 8
        var tail: [UInt8] = [0x80]
        while (pending.count + tail.count) % 64 != 56 { tail.append(0) }
        for shift in stride(from: 0, to: 64, by: 8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        pending.append(contentsOf: tail)
        var start = 0
        while start < pending.count {
            compress(pending[start..<start + 64])
            start += 64
        }
        pending = []
        var digest: [UInt8] = []
        for word in [state.0, state.1, state.2, state.3] {
            for shift in stride(from: 0, to: 32, by: 8) {
                digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
            }
        }
        return digest
    }

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// T[i] = floor(2^32 × |sin(i + 1)|), RFC 1321 §3.4, computed once rather than typed in.
    private static let sines: [UInt32] = (0..<64).map { index in
        UInt32(
            truncatingIfNeeded: Int64((abs(sin(Double(index + 1))) * 4_294_967_296).rounded(.down)))
    }

    private mutating func compress(_ block: ArraySlice<UInt8>) {
        let base = block.startIndex
        for index in 0..<16 {
            let offset = base + index * 4
            scratch[index] =
                UInt32(block[offset]) | UInt32(block[offset + 1]) << 8 | UInt32(block[offset + 2])
                << 16
                | UInt32(block[offset + 3]) << 24
        }
        var (a, b, c, d) = state
        for round in 0..<64 {
            let mixed: UInt32
            let word: Int
            switch round {
            case 0..<16:
                mixed = (b & c) | (~b & d)
                word = round
            case 16..<32:
                mixed = (d & b) | (~d & c)
                word = (5 * round + 1) % 16
            case 32..<48:
                mixed = b ^ c ^ d
                word = (3 * round + 5) % 16
            default:
                mixed = c ^ (b | ~d)
                word = (7 * round) % 16
            }
            let sum = a &+ mixed &+ Self.sines[round] &+ scratch[word]
            let shift = Self.shifts[round]
            (a, d, c) = (d, c, b)
            b = b &+ (sum << shift | sum >> (32 - shift))
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
