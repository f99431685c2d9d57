/// The text encodings of age: base64 (RFC 4648 §4) without padding in the header, with it in
/// the ASCII armor, both canonical only (§3.5: the unused low bits of the last character are
/// zero), and Bech32 (BIP 173, without its length limit) for keys.
enum Base64 {
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes, padded: Bool = false) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            let characters = second == nil ? 2 : third == nil ? 3 : 4
            for index in 0..<characters {
                text.append(alphabet[Int(group >> UInt32(18 - 6 * index) & 0x3f)])
            }
            if padded {
                text.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 4 - characters))
            }
        }
        return text
    }

    /// The bytes of unpadded canonical base64; nil for any other character (padding
    /// included), an impossible length, or non-zero unused bits.
    static func decode<Text: Collection<UInt8>>(_ text: Text) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text {
            let value = values[Int(character)]
            guard value != 0xff else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Canonical: the bits left over (2 or 4) must be zero.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return bytes
    }

    /// Padded canonical base64 (the armor's): a multiple of four characters, `=` only as the
    /// last one or two.
    static func decodePadded<Text: Collection<UInt8>>(_ text: Text) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        let body = text.prefix { $0 != UInt8(ascii: "=") }
        let padding = text.count - body.count
        guard padding <= 2, text.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") }),
            padding == 0 || body.count % 4 == 4 - padding
        else { return nil }
        return decode(body)
    }
}

enum Bech32 {
    private static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        let generators: [UInt32] = [
            0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3,
        ]
        var check: UInt32 = 1
        for value in values {
            let top = check >> 25
            check = (check & 0x1ff_ffff) << 5 ^ UInt32(value)
            for (bit, generator) in generators.enumerated() where top >> UInt32(bit) & 1 == 1 {
                check ^= generator
            }
        }
        return check
    }

    private static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    /// `hrp` and `data` as Bech32, lowercase (age upper-cases identities itself).
    static func encode(hrp: String, _ data: [UInt8]) -> String {
        let prefix = Array(hrp.lowercased().utf8)
        let values = regroup(data, from: 8, to: 5, pad: true) ?? []
        let check = polymod(expand(prefix) + values + [0, 0, 0, 0, 0, 0]) ^ 1
        let checksum = (0..<6).map { UInt8(check >> UInt32(5 * (5 - $0)) & 31) }
        return String(
            decoding: prefix + [UInt8(ascii: "1")] + (values + checksum).map { charset[Int($0)] },
            as: UTF8.self)
    }

    /// The lowercase human-readable part and the data of a Bech32 string; nil when it mixes
    /// cases, has a character outside the charset, a bad checksum or non-zero padding bits.
    static func decode(_ text: String) -> (hrp: String, data: [UInt8])? {
        let lower = text.lowercased()
        guard text == lower || text == text.uppercased() else { return nil }
        let characters = Array(lower.utf8)
        guard let separator = characters.lastIndex(of: UInt8(ascii: "1")), separator > 0,
            characters.count - separator > 6,
            characters[..<separator].allSatisfy({ (33...126).contains($0) })
        else { return nil }
        let hrp = Array(characters[..<separator])
        var values: [UInt8] = []
        for character in characters[(separator + 1)...] {
            guard let value = charset.firstIndex(of: character) else { return nil }
            values.append(UInt8(value))
        }
        guard polymod(expand(hrp) + values) == 1,
            let data = regroup(Array(values.dropLast(6)), from: 5, to: 8, pad: false)
        else { return nil }
        return (String(decoding: hrp, as: UTF8.self), data)
    }

    /// BIP 173's convertbits: without `pad`, leftover bits must be fewer than `from` and zero.
    private static func regroup(_ values: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0
        var bits = 0
        var output: [UInt8] = []
        let mask = (1 << to) - 1
        for value in values {
            accumulator = accumulator << from | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                output.append(UInt8(accumulator >> bits & mask))
            }
        }
        if pad {
            if bits > 0 { output.append(UInt8(accumulator << (to - bits) & mask)) }
        } else if bits >= from || accumulator << (to - bits) & mask != 0 {
            return nil
        }
        return output
    }
}

/// age's ASCII armor: strict PEM (RFC 7468 §3) labelled "AGE ENCRYPTED FILE", read the way
/// the reference implementation reads it. Whitespace is allowed only before the first and
/// after the last line; lines end in LF or CRLF; every line but the last holds exactly 64
/// characters, the last 1 to 64; the base64 is padded and canonical. Anything else is an
/// armor failure: an armored file is malleable unless it is read this strictly.
enum Armor {
    static let begin = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let end = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    private static let whitespace: Set<UInt8> = [0x20, 0x09, 0x0d, 0x0a]

    /// Whether `bytes` look armored (a PEM begin line after optional whitespace), so that a
    /// reader tries `decode` instead of the binary format.
    static func looksArmored(_ bytes: [UInt8]) -> Bool {
        bytes.drop { whitespace.contains($0) }.starts(with: Array("-----BEGIN".utf8))
    }

    static func decode(_ bytes: [UInt8]) throws(EnvelopeError) -> [UInt8] {
        var lines = bytes.drop { whitespace.contains($0) }
            .split(separator: 0x0a, omittingEmptySubsequences: false)
            .map { $0.last == 0x0d ? $0.dropLast() : $0 }
        // What follows the end line may only be whitespace (as before the begin line).
        while let last = lines.last, last.allSatisfy({ whitespace.contains($0) }) {
            lines.removeLast()
        }
        guard lines.first.map(Array.init) == begin else {
            throw EnvelopeError(
                .armor, "the armor does not start with '\(String(decoding: begin, as: UTF8.self))'")
        }
        guard lines.count >= 2, Array(lines[lines.count - 1]) == end else {
            throw EnvelopeError(
                .armor,
                "the armor does not end with '\(String(decoding: end, as: UTF8.self))' on a line of its own"
            )
        }
        let body = lines[1..<(lines.count - 1)]
        var decoded: [UInt8] = []
        for (index, line) in body.enumerated() {
            let number = index + 2
            let isLast = index == body.count - 1
            guard line.count == 64 || (isLast && !line.isEmpty && line.count < 64) else {
                throw EnvelopeError(
                    .armor,
                    "armor line \(number) has \(line.count) characters; only the last may have fewer than 64, and none more or none"
                )
            }
            guard let chunk = Base64.decodePadded(line), isLast || !line.contains(UInt8(ascii: "="))
            else {
                throw EnvelopeError(.armor, "armor line \(number) is not canonical padded base64")
            }
            decoded += chunk
        }
        return decoded
    }

    /// `bytes` armored, lines of 64 characters, LF endings, a final newline.
    static func encode(_ bytes: [UInt8]) -> String {
        let text = Base64.encode(bytes, padded: true)
        var lines = [begin]
        var start = 0
        while start < text.count {
            lines.append(Array(text[start..<min(start + 64, text.count)]))
            start += 64
        }
        lines.append(end)
        return lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n") + "\n"
    }
}
