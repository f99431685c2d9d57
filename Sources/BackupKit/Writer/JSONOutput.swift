/// A forward-only JSON emitter into one growing byte buffer: the single place that decides
/// how a value is spelled, used by the backup writer, the merge report and the CLI's
/// machine-readable output.
///
/// Design: callers emit members in the order they want them (the backup writer hard-codes
/// its keys already sorted by UTF-8 bytes), and the emitter only handles separators,
/// indentation and escaping. Nothing is built as a `String` on the way: keys are
/// `StaticString`s copied from static storage, numbers and stamps are written digit by digit.
///
///     var out = JSONOutput(pretty: false)
///     out.beginObject(); out.key("a"); out.string("x/\"y\""); out.endObject()
///     // out.bytes == Array(#"{"a":"x/\"y\""}"#.utf8)
public struct JSONOutput: Sendable {
    public private(set) var bytes: [UInt8]
    public let pretty: Bool
    /// Open containers; the top bit of each level says whether it already has a member.
    private var depth = 0
    private var hasMembers: UInt64 = 0
    /// After `key`, the value follows without a separator.
    private var afterKey = false

    public init(pretty: Bool = false, capacity: Int = 256) {
        self.pretty = pretty
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its storage (for comparing many small objects).
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        depth = 0
        hasMembers = 0
        afterKey = false
    }

    // MARK: Containers

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        beforeValue()
        bytes.append(bracket)
        depth += 1
        hasMembers &= ~(1 << UInt64(depth))
    }

    private mutating func close(_ bracket: UInt8) {
        if pretty, hasMembers & (1 << UInt64(depth)) != 0 {
            depth -= 1
            newline()
        } else {
            depth -= 1
        }
        bytes.append(bracket)
    }

    /// The separator (and, when pretty, the line break) before a member or element.
    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
            return
        }
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth)
        if hasMembers & bit != 0 { bytes.append(UInt8(ascii: ",")) }
        hasMembers |= bit
        if pretty { newline() }
    }

    private mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        for _ in 0..<depth {
            bytes.append(UInt8(ascii: " "))
            bytes.append(UInt8(ascii: " "))
        }
    }

    /// The newline that ends a file, written into the buffer so that the caller can take
    /// `bytes` as they are (appending to a copy of them would copy the whole buffer).
    mutating func endLine() {
        bytes.append(UInt8(ascii: "\n"))
    }

    // MARK: Keys

    /// A key known at compile time; it must need no escaping.
    public mutating func key(_ name: StaticString) {
        beforeValue()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        endKey()
    }

    public mutating func key(text name: String) {
        beforeValue()
        appendQuoted(name)
        endKey()
    }

    /// An id as a key: ids are checked to need no escaping, so they are copied as they are.
    mutating func key(id: Identifier) {
        beforeValue()
        bytes.append(UInt8(ascii: "\""))
        appendRaw(id.rawValue)
        bytes.append(UInt8(ascii: "\""))
        endKey()
    }

    /// A day-log key, `<challengeId>/<day>`, without building the String.
    public mutating func key(_ name: DayLogKey) {
        beforeValue()
        bytes.append(UInt8(ascii: "\""))
        appendRaw(name.challengeID.rawValue)
        bytes.append(UInt8(ascii: "/"))
        appendDigits(of: name.day)
        bytes.append(UInt8(ascii: "\""))
        endKey()
    }

    private mutating func endKey() {
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
        afterKey = true
    }

    // MARK: Scalars

    public mutating func string(_ value: String) {
        beforeValue()
        appendQuoted(value)
    }

    public mutating func null() {
        beforeValue()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
    }

    public mutating func bool(_ value: Bool) {
        beforeValue()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        }
    }

    public mutating func integer(_ value: Int) {
        beforeValue()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, width: 1)
    }

    /// `"YYYY-MM-DDTHH:MM:SS.mmmZ"`, the form `Timestamp.description` gives.
    public mutating func timestamp(_ value: Timestamp) {
        beforeValue()
        bytes.append(UInt8(ascii: "\""))
        appendDigits(of: value)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func timestamp(_ value: Timestamp?) {
        if let value { timestamp(value) } else { null() }
    }

    /// `"YYYY-MM-DD"`.
    public mutating func dayKey(_ value: DayKey) {
        beforeValue()
        bytes.append(UInt8(ascii: "\""))
        appendDigits(of: value)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func dayKey(_ value: DayKey?) {
        if let value { dayKey(value) } else { null() }
    }

    /// Bytes already known to be one complete JSON value (e.g. a nested report).
    public mutating func raw(_ value: [UInt8]) {
        beforeValue()
        bytes.append(contentsOf: value)
    }

    // MARK: Spelling

    /// Raw UTF-8, escaping only `"`, `\` and controls below U+0020 (SPEC §4b).
    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    // Below 0x20: the high nibble is 0 or 1, the low one lower-case hex.
                    let low = byte & 0xF
                    bytes.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        UInt8(ascii: "0") + (byte >> 4),
                        low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10,
                    ])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Ids are checked to need no escaping, so they are copied as they are.
    private mutating func appendRaw(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// `value` in decimal, zero-padded to at least `width` digits.
    private mutating func appendDigits(_ value: UInt, width: Int) {
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: enough for 20 digits
        withUnsafeMutableBytes(of: &scratch) { buffer in
            var remaining = value
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0 || buffer.count - start < width
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    private mutating func appendDigits(of day: DayKey) {
        appendCalendar(day: day, millisecondsInDay: nil)
    }

    private mutating func appendDigits(of stamp: Timestamp) {
        // Floor division, so an instant before 1970 still lands on its own day.
        let millis = stamp.millisecondsSince1970
        let perDay = Timestamp.millisecondsPerDay
        let days = millis >= 0 ? millis / perDay : (millis - perDay + 1) / perDay
        appendCalendar(
            day: DayKey(dayNumber: Int32(days)), millisecondsInDay: Int(millis - days * perDay))
    }

    /// `YYYY-MM-DD`, or with a time `YYYY-MM-DDTHH:MM:SS.mmmZ`, built in a stack buffer and
    /// appended at once: stamps and days are the most frequent values in a backup.
    private mutating func appendCalendar(day: DayKey, millisecondsInDay: Int?) {
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes, the stamp's length
        withUnsafeMutableBytes(of: &scratch) { buffer in
            // Fixed widths, so each digit's place is known: no loops, no stride.
            func two(_ value: Int, at index: Int) {
                buffer[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10)
                buffer[index + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
            }
            let (year, month, dayOfMonth) = day.parts
            // Four digits, as before: the low four of a year past 9999.
            two(year % 10_000 / 100, at: 0)
            two(year % 100, at: 2)
            buffer[4] = UInt8(ascii: "-")
            two(month, at: 5)
            buffer[7] = UInt8(ascii: "-")
            two(dayOfMonth, at: 8)
            guard let time = millisecondsInDay else {
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<10]))
                return
            }
            let seconds = time / 1000
            buffer[10] = UInt8(ascii: "T")
            two(seconds / 3600, at: 11)
            buffer[13] = UInt8(ascii: ":")
            two(seconds / 60 % 60, at: 14)
            buffer[16] = UInt8(ascii: ":")
            two(seconds % 60, at: 17)
            buffer[19] = UInt8(ascii: ".")
            let millis = time % 1000
            buffer[20] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millis / 100)
            two(millis % 100, at: 21)
            buffer[23] = UInt8(ascii: "Z")
            bytes.append(contentsOf: UnsafeRawBufferPointer(buffer))
        }
    }

    /// The text form of a stamp or day, for `description` (one spelling, here).
    static func text(of stamp: Timestamp) -> String {
        var out = JSONOutput(capacity: 24)
        out.appendDigits(of: stamp)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    static func text(of day: DayKey) -> String {
        var out = JSONOutput(capacity: 10)
        out.appendDigits(of: day)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
