import Foundation

struct ScanError: Error {
    var offset: Int
    var message: String
}

/// A string token: the bytes between its quotes. When it held escapes, its decoded bytes
/// are in the scanner's scratch buffer until the next string is read.
struct JSONString {
    var start: Int
    var end: Int
    var escaped: Bool
}

/// The byte-level half of the reader: strict RFC 8259 tokens over a borrowed buffer.
///
/// Design: the scanner never builds a tree. The schema-directed decoder above it asks for
/// "an object", "a key", "a string", "an integer" at the current position, and skips
/// whatever it does not want with `skipValue()`, which still checks every byte. Strings
/// come back as ranges of the input (`JSONString`); only strings with escapes are decoded,
/// into one reused scratch buffer, so a value costs no allocation unless the model keeps it.
///
/// Strictness lives here: UTF-8 checked byte by byte inside strings (structure outside
/// strings is ASCII, so anything else there is a syntax error), no comments, no trailing
/// commas, no leading zeros, no NaN/Infinity, no lone surrogate escapes, and a depth limit
/// (the top-level value is level 1). Errors carry the byte offset; `BackupReader` turns it
/// into line and column only when it reports one.
///
///     {"a":[1,2.0,3e0]}   integers 1, 2, 3 (integral values are integers)
///     {"a":[1,]}          syntax error at the `]`: trailing comma
final class JSONScanner {
    let base: UnsafePointer<UInt8>
    let count: Int
    // Hot fields of a private class: no access to them ever overlaps another, so the
    // dynamic exclusivity checks are skipped.
    @exclusivity(unchecked) var position = 0
    @exclusivity(unchecked) var depth = 0
    let maxDepth: Int
    @exclusivity(unchecked) private var scratch: [UInt8] = []
    /// When the caller handed the input over, how far the reader moves past bytes before it
    /// gives their pages back to the system (`release(upTo:newlineFree:)`); nil: never.
    let releaseStep: Int?
    /// The input's bytes before this were given back, or none when nil; only the day logs'
    /// are, as nothing reads them twice.
    @exclusivity(unchecked) private(set) var releasedUpTo: Int?
    /// What was given back, in order, with what `lineAndColumn` needs of it.
    @exclusivity(unchecked) private var released: [Released] = []

    struct Released {
        var range: Range<Int>
        var newlines: Int
        /// Just past the range's last newline, when it has one.
        var lineStart: Int?
    }

    /// `base` must stay valid while the scanner is used; an empty input never gets here
    /// (an empty buffer may have no base address). With a `releaseStep`, the caller gives up
    /// the bytes: whole pages of them may read as zeros once released.
    init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int, releaseStep: Int? = nil) {
        self.base = base
        self.count = count
        self.maxDepth = maxDepth
        self.releaseStep = releaseStep
    }

    /// The byte at `index`, or 0 past the end (0 is never valid outside a string).
    @inline(__always)
    func byte(at index: Int) -> UInt8 {
        index < count ? base[index] : 0
    }

    func error(_ message: String, at offset: Int? = nil) -> ScanError {
        ScanError(offset: offset ?? position, message: message)
    }

    /// The error for an unexpected byte at the current position.
    func unexpected(expecting what: String) -> ScanError {
        guard position < count else {
            return error("unexpected end of file; expected \(what) (is the file truncated?)")
        }
        let found = base[position]
        switch found {
        case UInt8(ascii: "/"):
            return error("comments are not allowed in JSON")
        case UInt8(ascii: "N"), UInt8(ascii: "I"):
            return error("NaN and Infinity are not JSON numbers")
        case UInt8(ascii: "'"):
            return error("strings must use double quotes")
        case 0x20..<0x7F:
            return error("expected \(what), found '\(Character(Unicode.Scalar(found)))'")
        default:
            return error("expected \(what), found byte \(Self.hex(found))")
        }
    }

    /// `0x0c`: a byte as it is written in a hex dump, always two digits.
    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return (byte < 0x10 ? "0x0" : "0x") + digits
    }

    // MARK: Structure

    /// Skips white space and returns the next byte (0 at the end).
    @inline(__always)
    func peek() -> UInt8 {
        while position < count {
            switch base[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return base[position]
            }
        }
        return 0
    }

    private func enter() throws(ScanError) {
        depth += 1
        if depth > maxDepth {
            throw error("nesting deeper than \(maxDepth) levels")
        }
    }

    /// At `{`: consumes it; true when a member follows (call `key()`), false for `{}`.
    func openObject() throws(ScanError) -> Bool {
        guard peek() == UInt8(ascii: "{") else { throw unexpected(expecting: "'{'") }
        try enter()
        position += 1
        if peek() == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return false
        }
        return true
    }

    /// A member's key and its colon; leaves the position at the value.
    func key() throws(ScanError) -> JSONString {
        guard peek() == UInt8(ascii: "\"") else {
            throw unexpected(expecting: "a member name in double quotes")
        }
        let name = try string()
        guard peek() == UInt8(ascii: ":") else {
            throw unexpected(expecting: "':' after the member name")
        }
        position += 1
        return name
    }

    /// After a member's value: true at `,` (another member follows), false at `}`.
    func nextMember() throws(ScanError) -> Bool {
        switch peek() {
        case UInt8(ascii: ","):
            position += 1
            if peek() == UInt8(ascii: "}") { throw error("trailing comma before '}'") }
            return true
        case UInt8(ascii: "}"):
            position += 1
            depth -= 1
            return false
        default:
            throw unexpected(expecting: "',' or '}'")
        }
    }

    /// At `[`: consumes it; true when an element follows, false for `[]`.
    func openArray() throws(ScanError) -> Bool {
        guard peek() == UInt8(ascii: "[") else { throw unexpected(expecting: "'['") }
        try enter()
        position += 1
        if peek() == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return false
        }
        return true
    }

    /// After an element: true at `,`, false at `]`.
    func nextElement() throws(ScanError) -> Bool {
        switch peek() {
        case UInt8(ascii: ","):
            position += 1
            if peek() == UInt8(ascii: "]") { throw error("trailing comma before ']'") }
            return true
        case UInt8(ascii: "]"):
            position += 1
            depth -= 1
            return false
        default:
            throw unexpected(expecting: "',' or ']'")
        }
    }

    /// Skips one value of any kind, checking it as strictly as if it were decoded.
    func skipValue() throws(ScanError) {
        switch peek() {
        case UInt8(ascii: "{"):
            guard try openObject() else { return }
            repeat {
                _ = try key()
                try skipValue()
            } while try nextMember()
        case UInt8(ascii: "["):
            guard try openArray() else { return }
            repeat { try skipValue() } while try nextElement()
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            _ = try literal()
        default:
            _ = try number()
        }
    }

    /// Expects nothing but white space up to the end.
    func finish() throws(ScanError) {
        guard peek() == 0, position >= count else {
            throw unexpected(expecting: "the end of the file after the top-level value")
        }
    }

    /// Steps over `text` if the input continues with exactly its bytes; false (the position
    /// untouched) otherwise. For spellings known in advance, like a canonical file's.
    @inline(__always)
    func consume(_ text: StaticString) -> Bool {
        let length = text.utf8CodeUnitCount
        guard position + length <= count, memcmp(base + position, text.utf8Start, length) == 0
        else { return false }
        position += length
        return true
    }

    // MARK: Literals

    enum Literal { case `true`, `false`, null }

    func literal() throws(ScanError) -> Literal {
        _ = peek()
        func matches(_ word: StaticString) -> Bool {
            let length = word.utf8CodeUnitCount
            guard position + length <= count else { return false }
            for index in 0..<length where base[position + index] != word.utf8Start[index] {
                return false
            }
            return true
        }
        let result: Literal
        if matches("true") {
            result = .true
            position += 4
        } else if matches("false") {
            result = .false
            position += 5
        } else if matches("null") {
            result = .null
            position += 4
        } else {
            throw unexpected(expecting: "a value")
        }
        return result
    }

    // MARK: Numbers

    /// A number token as an integer when its value is integral (`8`, `8.0`, `8e0`, `80e-1`,
    /// `-0`), saturated to `Int.min…Int.max`; nil when it has a fraction (`8.5`).
    func number() throws(ScanError) -> Int? {
        _ = peek()
        if let value = plainInteger() { return value }
        let start = position
        var negative = false
        if byte(at: position) == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        // The mantissa without its trailing zeros, which are counted in `pendingZeros` and
        // folded in only when a non-zero digit follows; so `1.50` and `15e-1` both end as
        // mantissa 15 with exponent -1.
        var mantissa: UInt64 = 0
        var overflow = false
        var pendingZeros = 0
        var fractionDigits = 0
        func add(_ digit: UInt8) {
            guard digit != 0 else {
                pendingZeros += 1
                return
            }
            defer { pendingZeros = 0 }
            guard !overflow else { return }
            for _ in 0...pendingZeros {
                let (product, overflowed) = mantissa.multipliedReportingOverflow(by: 10)
                if overflowed {
                    overflow = true
                    return
                }
                mantissa = product
            }
            let (sum, overflowed) = mantissa.addingReportingOverflow(UInt64(digit))
            if overflowed { overflow = true } else { mantissa = sum }
        }
        let first = byte(at: position)
        guard first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw unexpected(expecting: "a value")
        }
        if first == UInt8(ascii: "0") {
            position += 1
            let next = byte(at: position)
            if next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
                throw error("numbers must not have leading zeros", at: start)
            }
        } else {
            while case let digit = byte(at: position), digit >= UInt8(ascii: "0"),
                digit <= UInt8(ascii: "9")
            {
                add(digit &- UInt8(ascii: "0"))
                position += 1
            }
        }
        if byte(at: position) == UInt8(ascii: ".") {
            position += 1
            let digitsStart = position
            while case let digit = byte(at: position), digit >= UInt8(ascii: "0"),
                digit <= UInt8(ascii: "9")
            {
                add(digit &- UInt8(ascii: "0"))
                fractionDigits += 1
                position += 1
            }
            guard position > digitsStart else {
                throw unexpected(expecting: "a digit after the decimal point")
            }
        }
        var exponent = 0
        if byte(at: position) | 0x20 == UInt8(ascii: "e") {
            position += 1
            var exponentNegative = false
            switch byte(at: position) {
            case UInt8(ascii: "-"):
                exponentNegative = true
                position += 1
            case UInt8(ascii: "+"):
                position += 1
            default:
                break
            }
            let digitsStart = position
            while case let digit = byte(at: position), digit >= UInt8(ascii: "0"),
                digit <= UInt8(ascii: "9")
            {
                // Clamped: beyond a million the value saturates (or is a fraction) anyway.
                exponent = min(exponent * 10 + Int(digit &- UInt8(ascii: "0")), 1_000_000)
                position += 1
            }
            guard position > digitsStart else {
                throw unexpected(expecting: "a digit in the exponent")
            }
            if exponentNegative { exponent = -exponent }
        }
        if mantissa == 0 && !overflow { return 0 }
        let scale = exponent - fractionDigits + pendingZeros
        guard scale >= 0 else { return nil }
        let limit = negative ? UInt64(Int.max) + 1 : UInt64(Int.max)
        var magnitude = mantissa
        if !overflow {
            for _ in 0..<min(scale, 20) {
                let (product, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
                if overflowed {
                    overflow = true
                    break
                }
                magnitude = product
            }
            if scale >= 20 { overflow = true }
        }
        if overflow || magnitude > limit { magnitude = limit }
        return negative ? Int(truncatingIfNeeded: 0 &- magnitude) : Int(magnitude)
    }

    /// The common case of `number()` in one tight loop: an optional `-` and 1…18 digits
    /// without a leading zero, then neither a fraction, an exponent nor another digit. Nil
    /// (with the position untouched) for anything else, which `number()` reads the long way.
    @inline(__always)
    func plainInteger() -> Int? {
        var index = position
        let negative = byte(at: index) == UInt8(ascii: "-")
        if negative { index += 1 }
        let first = index
        var value = 0
        while case let digit = byte(at: index), digit >= UInt8(ascii: "0"),
            digit <= UInt8(ascii: "9")
        {
            value = value &* 10 &+ Int(digit &- UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - first
        guard digits >= 1, digits <= 18, digits == 1 || base[first] != UInt8(ascii: "0") else {
            return nil
        }
        switch byte(at: index) {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
        default:
            position = index
            return negative ? -value : value
        }
    }

    // MARK: Strings

    /// At `"`: a string token, its UTF-8 checked and its escapes decoded into scratch.
    func string() throws(ScanError) -> JSONString {
        let open = position
        let start = position + 1
        // The plain-ASCII run, the common case, in a local index: eight bytes at a time
        // while none of them is a quote, a backslash, a control or a non-ASCII byte (the
        // classic "has a zero byte" bit trick; it may stop early, never late), then bytewise.
        var index = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            let special =
                ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
                | ((word &- ones &* 0x20) & ~word) | word
            if special & highs != 0 { break }
            index += 8
        }
        while index < count {
            let byte = base[index]
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\")
            else { break }
            index += 1
        }
        position = index
        while position < count {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return JSONString(start: start, end: position - 1, escaped: false)
            }
            if byte == UInt8(ascii: "\\") {
                scratch.removeAll(keepingCapacity: true)
                scratch.append(
                    contentsOf: UnsafeBufferPointer(start: base + start, count: position - start))
                try decodeEscapes(into: &scratch, open: open)
                return JSONString(start: start, end: position - 1, escaped: true)
            }
            if byte < 0x20 {
                throw error(
                    "control character U+00\(hex2(byte)) in a string; write it as an escape")
            }
            if byte < 0x80 { position += 1 } else { try skipScalar() }
        }
        throw error("unterminated string (is the file truncated?)", at: open)
    }

    /// Continues a string from an escape to its closing quote, appending decoded bytes.
    private func decodeEscapes(into output: inout [UInt8], open: Int) throws(ScanError) {
        while position < count {
            let byte = base[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return
            case UInt8(ascii: "\\"):
                try decodeEscape(into: &output)
            case 0..<0x20:
                throw error(
                    "control character U+00\(hex2(byte)) in a string; write it as an escape")
            case 0x20..<0x80:
                output.append(byte)
                position += 1
            default:
                let start = position
                try skipScalar()
                output.append(
                    contentsOf: UnsafeBufferPointer(start: base + start, count: position - start))
            }
        }
        throw error("unterminated string (is the file truncated?)", at: open)
    }

    private func decodeEscape(into output: inout [UInt8]) throws(ScanError) {
        let escapeStart = position
        position += 1
        let letter = byte(at: position)
        position += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(letter)
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard byte(at: position) == UInt8(ascii: "\\"),
                    byte(at: position + 1) == UInt8(ascii: "u")
                else {
                    throw error(
                        "lone surrogate escape \\u\(String(scalar, radix: 16))", at: escapeStart)
                }
                position += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else {
                    throw error(
                        "lone surrogate escape \\u\(String(scalar, radix: 16))", at: escapeStart)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error(
                    "lone surrogate escape \\u\(String(scalar, radix: 16))", at: escapeStart)
            }
            guard let unicode = Unicode.Scalar(scalar) else {
                throw error("invalid escape", at: escapeStart)
            }
            appendUTF8(unicode.value, to: &output)
        default:
            throw error("invalid escape in a string", at: escapeStart)
        }
    }

    private func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            output.append(UInt8(scalar))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | scalar >> 6))
            output.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | scalar >> 12))
            output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(0x80 | scalar & 0x3F))
        default:
            output.append(UInt8(0xF0 | scalar >> 18))
            output.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    private func hex4() throws(ScanError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let digit = byte(at: position)
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = digit - UInt8(ascii: "A") + 10
            default: throw error("\\u must be followed by four hex digits")
            }
            value = value << 4 | UInt32(nibble)
            position += 1
        }
        return value
    }

    /// Steps over one multi-byte UTF-8 scalar, rejecting overlong forms, surrogates and
    /// anything above U+10FFFF (Unicode Table 3-7).
    private func skipScalar() throws(ScanError) {
        let lead = base[position]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default:
            throw error("invalid UTF-8 (byte \(Self.hex(lead))); the file must be UTF-8")
        }
        for index in 1..<length {
            let next = byte(at: position + index)
            let (min, max) = index == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
            guard next >= min, next <= max else {
                throw error("invalid UTF-8 sequence; the file must be UTF-8")
            }
        }
        position += length
    }

    private func hex2(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
    }

    // MARK: Reading tokens back

    /// The bytes of a string token just read (valid until the next string is read).
    @inline(__always)
    func withBytes<R>(_ token: JSONString, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if token.escaped {
            return scratch.withUnsafeBufferPointer(body)
        }
        return body(UnsafeBufferPointer(start: base + token.start, count: token.end - token.start))
    }

    func makeString(_ token: JSONString) -> String {
        withBytes(token) { String(decoding: $0, as: UTF8.self) }
    }

    /// True when the token's bytes are exactly `name`.
    @inline(__always)
    func equals(_ token: JSONString, _ name: StaticString) -> Bool {
        withBytes(token) { bytes in
            guard bytes.count == name.utf8CodeUnitCount else { return false }
            for index in 0..<bytes.count where bytes[index] != name.utf8Start[index] {
                return false
            }
            return true
        }
    }

    /// True when the bytes of `lhs` sort strictly before those of `rhs`; both must be
    /// unescaped (their bytes in the input).
    func precedes(_ lhs: JSONString, _ rhs: JSONString) -> Bool {
        let left = lhs.end - lhs.start
        let right = rhs.end - rhs.start
        let order = memcmp(base + lhs.start, base + rhs.start, min(left, right))
        return order < 0 || (order == 0 && left < right)
    }

    /// Decodes a string token read earlier (for error pointers), without touching scratch.
    func decodeAgain(_ token: JSONString) -> String {
        guard token.escaped else {
            return String(
                decoding: UnsafeBufferPointer(
                    start: base + token.start, count: token.end - token.start), as: UTF8.self)
        }
        let saved = position
        defer { position = saved }
        position = token.start
        var output: [UInt8] = []
        // The token decoded once already, so this cannot fail.
        try? decodeEscapes(into: &output, open: token.start - 1)
        return String(decoding: output, as: UTF8.self)
    }

    /// 1-based line and byte column of `offset`, which is past every released byte.
    func lineAndColumn(of offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        var index = 0
        func countLines(to end: Int) {
            while index < end {
                if base[index] == 0x0A {
                    line += 1
                    lineStart = index + 1
                }
                index += 1
            }
        }
        for part in released where part.range.upperBound <= offset {
            countLines(to: part.range.lowerBound)
            line += part.newlines
            lineStart = part.lineStart ?? lineStart
            index = part.range.upperBound
        }
        countLines(to: min(offset, count))
        return (line, offset - lineStart + 1)
    }

    // MARK: Giving read bytes back

    /// Starts releasing at `offset`: bytes before it stay.
    func startReleasing(at offset: Int) {
        if releaseStep != nil, releasedUpTo == nil { releasedUpTo = offset }
    }

    /// Gives the whole pages between `releasedUpTo` and `end` back to the system
    /// (`MADV_DONTNEED`: a private anonymous page reads as zeros after it), so that a large
    /// file's memory shrinks as its day logs move into the store instead of being held to
    /// the end. The newlines in it are counted first unless the caller knows there are none
    /// (`newlineFree`), so that an error past them still gets its line right.
    func release(upTo end: Int, newlineFree: Bool) {
        guard let from = releasedUpTo else { return }
        let address = Int(bitPattern: base)
        let mask = Self.pageSize - 1
        let start = ((address + from + mask) & ~mask) - address
        let stop = ((address + min(end, count)) & ~mask) - address
        guard start < stop else { return }
        var part = Released(range: start..<stop, newlines: 0, lineStart: nil)
        var index = start
        while !newlineFree, index < stop, let found = memchr(base + index, 0x0A, stop - index) {
            index = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
            part.newlines += 1
            part.lineStart = index
        }
        // Refused, the pages merely stay: nothing depends on their going.
        _ = madvise(UnsafeMutableRawPointer(mutating: base + start), stop - start, MADV_DONTNEED)
        released.append(part)
        releasedUpTo = stop
    }

    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
}
