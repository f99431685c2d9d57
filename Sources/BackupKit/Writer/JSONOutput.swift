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
    /// Everything emitted so far; a complete JSON value once every container is closed (no
    /// trailing newline).
    public private(set) var bytes: [UInt8]
    /// Two-space indentation and `": "` after keys; otherwise no white space at all (the
    /// canonical form, FORMAT.md §4.2).
    public let pretty: Bool
    /// Open containers; bit n of `hasMembers` says whether the one at depth n has a member.
    private var depth = 0
    private var hasMembers: UInt64 = 0
    /// After `key`, the value follows without a separator.
    private var afterKey = false

    /// An empty emitter; `capacity` is the byte count to reserve up front.
    public init(pretty: Bool = false, capacity: Int = 256) {
        self.pretty = pretty
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its storage (for comparing many small objects).
    public mutating func reset() {
        resume(at: Position(), afterMembers: false)
    }

    /// Where the emitter stands in a document: enough to go on writing from there in another
    /// buffer, which is how the streaming writer writes two slices of one container at once.
    struct Position: Sendable {
        fileprivate var depth = 0
        fileprivate var hasMembers: UInt64 = 0
        fileprivate var afterKey = false
    }

    var position: Position {
        Position(depth: depth, hasMembers: hasMembers, afterKey: afterKey)
    }

    /// Empties the buffer, keeping its storage, and stands at `position`; with
    /// `afterMembers`, as if the innermost open container already had a member, so that the
    /// next one starts with its separator.
    mutating func resume(at position: Position, afterMembers: Bool) {
        bytes.removeAll(keepingCapacity: true)
        depth = position.depth
        hasMembers = position.hasMembers
        if afterMembers { hasMembers |= 1 << UInt64(depth) }
        afterKey = position.afterKey
    }

    /// Appends what `continuation` holds, which was written from where this output stands
    /// (`resume(at: position, afterMembers: true)`) and ended where this one stands again:
    /// after a member of the same container.
    mutating func append(_ continuation: JSONOutput) {
        bytes.append(contentsOf: continuation.bytes)
    }

    // MARK: Containers

    /// Opens an object as the next value; its members are `key` calls, each followed by a value.
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    /// Closes the innermost open object.
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    /// Opens an array as the next value.
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    /// Closes the innermost open array.
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

    /// A key only known at run time, escaped like any string value.
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

    /// A string, raw UTF-8 with only `"`, `\` and controls below U+0020 escaped (FORMAT.md §4.2).
    public mutating func string(_ value: String) {
        beforeValue()
        appendQuoted(value)
    }

    /// `null`.
    public mutating func null() {
        beforeValue()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
    }

    /// `true` or `false`.
    public mutating func bool(_ value: Bool) {
        beforeValue()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        }
    }

    /// Plain decimal digits, `-` for a negative value: no exponent, no fraction (FORMAT.md §3.4).
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

    /// The stamp, or `null` when nil (an optional field such as `expiresAt`).
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

    /// The day, or `null` when nil (an optional field such as `archivedFrom`).
    public mutating func dayKey(_ value: DayKey?) {
        if let value { dayKey(value) } else { null() }
    }

    /// Bytes already known to be one complete JSON value (e.g. a nested report).
    public mutating func raw(_ value: [UInt8]) {
        beforeValue()
        bytes.append(contentsOf: value)
    }

    // MARK: Spelling

    /// Appends what `body` spells into at most `maxCount` bytes of scratch at once, so the
    /// spelling itself writes through a pointer with no capacity or uniqueness checks.
    private mutating func spell(upTo maxCount: Int, _ body: (inout RawBytes) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxCount) { buffer in
            guard let start = buffer.baseAddress else { return }
            var raw = RawBytes(start: start)
            body(&raw)
            bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: raw.count))
        }
    }

    private mutating func appendQuoted(_ text: String) {
        spell(upTo: RawBytes.quotedBound(text)) { $0.quoted(text) }
    }

    private mutating func appendRaw(_ text: String) {
        spell(upTo: text.utf8.count) { $0.plain(text) }
    }

    private mutating func appendDigits(_ value: UInt, width: Int) {
        spell(upTo: max(20, width)) { $0.digits(value, width: width) }
    }

    private mutating func appendDigits(of day: DayKey) {
        spell(upTo: 10) { $0.day(day) }
    }

    private mutating func appendDigits(of stamp: Timestamp) {
        spell(upTo: 24) { $0.stamp(stamp) }
    }

    /// The log at `position` of `logs`, compact, read from the store's parts without making
    /// it a value: the same bytes as `compactDayLog(logs[position], withKey:)`.
    mutating func compactDayLog(in logs: DayLogStore, at position: Int, withKey key: Bool) {
        let spelled = logs.withParts(at: position) { log in
            compactDayLog(
                key: key ? (log.challengeID, log.day) : nil, mood: log.mood, note: log.note,
                updatedAt: log.updatedAt, values: log.tasks.count
            ) { (log.taskIDs[Int(log.tasks[$0])].rawValue, Int(log.numbers[$0])) }
        }
        if !spelled { compactDayLog(logs[position], withKey: key) }
    }

    mutating func compactDayLog(_ log: DayLog, withKey key: Bool) {
        var note = log.note
        note.withUTF8 { note in
            compactDayLog(
                key: key ? (log.key.challengeID.rawValue, log.key.day) : nil, mood: log.mood,
                note: note, updatedAt: log.updatedAt, values: log.values.count
            ) { (log.values[$0].taskID.rawValue, log.values[$0].value) }
        }
    }

    /// A compact day log's member, `"<id>/<day>":{…}`, or without `key` its object alone,
    /// spelled in one go from its parts: the bulk of a large file, and the one spelling of a
    /// stored log and a log value. Keys in canonical order, as `BackupWriter.write(_:into:)`
    /// has them for the pretty form.
    private mutating func compactDayLog(
        key: (id: String, day: DayKey)?, mood: Int?, note: UnsafeBufferPointer<UInt8>,
        updatedAt: Timestamp, values: Int, value: (Int) -> (task: String, value: Int)
    ) {
        beforeValue()
        // Ids are at most 64 bytes, integers at most 20 digits.
        let bound = 200 + note.count * 6 + values * 90
        spell(upTo: bound) { raw in
            if let key {
                raw.byte(UInt8(ascii: "\""))
                raw.plain(key.id)
                raw.byte(UInt8(ascii: "/"))
                raw.day(key.day)
                raw.plain(#"":"#)
            }
            raw.plain(#"{"mood":"#)
            if let mood { raw.integer(mood) } else { raw.plain("null") }
            raw.plain(#","note":"#)
            raw.quoted(utf8: note)
            raw.plain(#","updatedAt":""#)
            raw.stamp(updatedAt)
            raw.plain(#"","values":{"#)
            for index in 0..<values {
                if index > 0 { raw.byte(UInt8(ascii: ",")) }
                let (task, number) = value(index)
                raw.byte(UInt8(ascii: "\""))
                raw.plain(task)
                raw.plain(#"":"#)
                raw.integer(number)
            }
            raw.plain("}}")
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

/// Spelling into memory already known to be large enough (see `JSONOutput.spell`): the one
/// place that decides how strings, numbers, days and stamps are written.
private struct RawBytes {
    let start: UnsafeMutablePointer<UInt8>
    var count = 0

    init(start: UnsafeMutablePointer<UInt8>) {
        self.start = start
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        start[count] = value
        count += 1
    }

    mutating func plain(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        (start + count).update(from: text.utf8Start, count: length)
        count += length
    }

    /// Ids are checked to need no escaping, so they are copied as they are.
    mutating func plain(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            guard let source = utf8.baseAddress else { return }
            (start + count).update(from: source, count: utf8.count)
            count += utf8.count
        }
    }

    /// The most `quoted` writes: quotes, and every byte at worst a six-byte `\u00XX`.
    static func quotedBound(_ text: String) -> Int { text.utf8.count * 6 + 2 }

    /// Raw UTF-8, escaping only `"`, `\` and controls below U+0020 (FORMAT.md §4.2).
    mutating func quoted(_ text: String) {
        var text = text
        text.withUTF8 { quoted(utf8: $0) }
    }

    /// `quoted` for text already in UTF-8 bytes (a note in the store of day logs).
    mutating func quoted(utf8: UnsafeBufferPointer<UInt8>) {
        byte(UInt8(ascii: "\""))
        for value in utf8 {
            guard value < 0x20 || value == UInt8(ascii: "\"") || value == UInt8(ascii: "\\")
            else {
                byte(value)
                continue
            }
            byte(UInt8(ascii: "\\"))
            switch value {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte(value)
            case 0x0A: byte(UInt8(ascii: "n"))
            case 0x0D: byte(UInt8(ascii: "r"))
            case 0x09: byte(UInt8(ascii: "t"))
            case 0x08: byte(UInt8(ascii: "b"))
            case 0x0C: byte(UInt8(ascii: "f"))
            default:
                // Below 0x20: the high nibble is 0 or 1, the low one lower-case hex.
                let low = value & 0xF
                plain("u00")
                byte(UInt8(ascii: "0") + (value >> 4))
                byte(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
            }
        }
        byte(UInt8(ascii: "\""))
    }

    mutating func integer(_ value: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        digits(value.magnitude, width: 1)
    }

    /// `value` in decimal, zero-padded to at least `width` digits.
    mutating func digits(_ value: UInt, width: Int) {
        var length = 1
        var rest = value / 10
        while rest > 0 {
            length += 1
            rest /= 10
        }
        length = max(length, width)
        var remaining = value
        for index in stride(from: count + length - 1, through: count, by: -1) {
            start[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
            remaining /= 10
        }
        count += length
    }

    /// `YYYY-MM-DD`.
    mutating func day(_ value: DayKey) {
        calendar(day: value, millisecondsInDay: nil)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, the form `Timestamp.description` gives.
    mutating func stamp(_ value: Timestamp) {
        // Floor division, so an instant before 1970 still lands on its own day.
        let millis = value.millisecondsSince1970
        let perDay = Timestamp.millisecondsPerDay
        let days = millis >= 0 ? millis / perDay : (millis - perDay + 1) / perDay
        calendar(
            day: DayKey(dayNumber: Int32(days)), millisecondsInDay: Int(millis - days * perDay))
    }

    /// Fixed widths, so each digit's place is known: no loops.
    private mutating func calendar(day: DayKey, millisecondsInDay: Int?) {
        func two(_ value: Int) {
            byte(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10))
            byte(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10))
        }
        let (year, month, dayOfMonth) = day.parts
        // Four digits: the low four of a year past 9999.
        two(year % 10_000 / 100)
        two(year % 100)
        byte(UInt8(ascii: "-"))
        two(month)
        byte(UInt8(ascii: "-"))
        two(dayOfMonth)
        guard let time = millisecondsInDay else { return }
        let seconds = time / 1000
        byte(UInt8(ascii: "T"))
        two(seconds / 3600)
        byte(UInt8(ascii: ":"))
        two(seconds / 60 % 60)
        byte(UInt8(ascii: ":"))
        two(seconds % 60)
        byte(UInt8(ascii: "."))
        let millis = time % 1000
        byte(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millis / 100))
        two(millis % 100)
        byte(UInt8(ascii: "Z"))
    }
}
