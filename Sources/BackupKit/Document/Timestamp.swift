/// An instant in UTC, kept to the millisecond, as every stamp in a backup is.
///
/// Text form (FORMAT.md §3.5): `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, upper-case `T` and `Z`, years
/// 2000…9999, no leap second, any number of fraction digits truncated to milliseconds,
/// written back with exactly three.
///
///     Timestamp("2026-11-29T22:14:03.1209Z")!.description == "2026-11-29T22:14:03.120Z"
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z: the whole value, so windows and guards are
    /// plain arithmetic with no rounding to days (FORMAT.md §5.3).
    public var millisecondsSince1970: Int64

    /// 2000…9999: the years a stamp in a document may carry (FORMAT.md §1.2).
    public static let years: ClosedRange<Int> = 2000...9999
    /// 86,400,000: a day as a fixed length, for windows and durations; a calendar day is a
    /// `DayKey`.
    public static let millisecondsPerDay: Int64 = 86_400_000

    /// Any instant, unchecked: `years` bounds only what parsing accepts.
    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Parses the text form above; nil for anything else, such as a lower-case `z`, an offset
    /// or a year outside `years`.
    public init?(_ text: some StringProtocol) {
        self.init(utf8: text.utf8)
    }

    /// Parses the text form from UTF-8 bytes, the reader's path, with no String made.
    @inlinable
    public init?<Bytes: Collection<UInt8>>(utf8 bytes: Bytes) {
        // Fixed part: YYYY-MM-DDTHH:MM:SS (19 bytes), then optional .digits, then Z.
        guard bytes.count >= 20 else { return nil }
        var index = bytes.startIndex
        // 0 past the end: a text cut short after its fixed part (`…:00.`) must fail, not trap.
        func next() -> UInt8 {
            guard index != bytes.endIndex else { return 0 }
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            return byte
        }
        func number(_ width: Int) -> Int? {
            var value = 0
            for _ in 0..<width {
                let byte = next()
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte &- UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(4), next() == UInt8(ascii: "-"),
            let month = number(2), next() == UInt8(ascii: "-"),
            let day = number(2), next() == UInt8(ascii: "T"),
            let hour = number(2), next() == UInt8(ascii: ":"),
            let minute = number(2), next() == UInt8(ascii: ":"),
            let second = number(2)
        else { return nil }
        guard Timestamp.years.contains(year), (1...12).contains(month),
            day >= 1, day <= DayKey.daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var millis = 0
        var byte = next()
        if byte == UInt8(ascii: ".") {
            var digits = 0
            byte = next()
            while byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if digits < 3 { millis = millis * 10 + Int(byte &- UInt8(ascii: "0")) }
                digits += 1
                guard index != bytes.endIndex else { return nil }
                byte = next()
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        guard byte == UInt8(ascii: "Z"), index == bytes.endIndex else { return nil }
        let days = Int64(DayKey.daysFromCivil(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        self.millisecondsSince1970 = seconds * 1000 + Int64(millis)
    }

    /// The canonical form, always with three fraction digits.
    public var description: String { JSONOutput.text(of: self) }

    /// The earlier instant first.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// The instant `milliseconds` later (earlier when negative).
    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: millisecondsSince1970 + milliseconds)
    }

    /// The instant `days` times 24 hours later: a fixed length, not a calendar day (for those,
    /// `DayKey.adding(days:)`).
    public func adding(days: Int) -> Timestamp {
        adding(milliseconds: Int64(days) * Timestamp.millisecondsPerDay)
    }
}
