/// A calendar date with no time and no zone: the unit every habit is scored in.
///
/// Stored as the number of days since 1970-01-01 in the proleptic Gregorian calendar, so
/// the gap between two days is a subtraction and never depends on how long the days in
/// between were (a 23-hour spring-forward day is still one day). Conversions use Howard
/// Hinnant's `days_from_civil` / `civil_from_days`, which work on year/month/day parts only.
///
///     DayKey("2026-03-08")!.dayNumber == 20520
///     DayKey("2026-02-30") == nil        // does not round-trip through the calendar
public struct DayKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public var dayNumber: Int32

    /// Years a day key in a document may carry (FORMAT.md §1.2).
    public static let documentYears: ClosedRange<Int> = 2000...2199

    /// The day `dayNumber` days after 1970-01-01 (before it when negative), unchecked against
    /// `documentYears`.
    public init(dayNumber: Int32) {
        self.dayNumber = dayNumber
    }

    /// A date from its parts; nil unless the parts name a real Gregorian date.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= DayKey.daysIn(month: month, year: year)
        else { return nil }
        self.dayNumber = Int32(DayKey.daysFromCivil(year: year, month: month, day: day))
    }

    /// Parses `YYYY-MM-DD` with a year in `documentYears`; nil for anything else.
    public init?(_ text: some StringProtocol) {
        self.init(utf8: text.utf8)
    }

    /// Parses `YYYY-MM-DD` from UTF-8 bytes (the reader's path, no String needed).
    @inlinable
    public init?<Bytes: Collection<UInt8>>(utf8 bytes: Bytes) {
        guard bytes.count == 10 else { return nil }
        var digits = (0, 0, 0)
        var index = bytes.startIndex
        for position in 0..<10 {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            if position == 4 || position == 7 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let value = Int(byte &- UInt8(ascii: "0"))
            switch position {
            case 0..<4: digits.0 = digits.0 * 10 + value
            case 5, 6: digits.1 = digits.1 * 10 + value
            default: digits.2 = digits.2 * 10 + value
            }
        }
        guard DayKey.documentYears.contains(digits.0) else { return nil }
        self.init(year: digits.0, month: digits.1, day: digits.2)
    }

    /// The Gregorian year, month (1…12) and day of the month (1…31).
    public var parts: (year: Int, month: Int, day: Int) {
        DayKey.civilFromDays(Int(dayNumber))
    }

    /// `YYYY-MM-DD`, zero-padded.
    public var description: String { JSONOutput.text(of: self) }

    /// Whole days from `self` to `other` (positive when `other` is later).
    public func days(to other: DayKey) -> Int {
        Int(other.dayNumber) - Int(dayNumber)
    }

    /// The day `days` calendar days later (earlier when negative).
    public func adding(days: Int) -> DayKey {
        DayKey(dayNumber: dayNumber + Int32(days))
    }

    /// The earlier day first.
    public static func < (lhs: DayKey, rhs: DayKey) -> Bool {
        lhs.dayNumber < rhs.dayNumber
    }

    /// Whether `year` is a Gregorian leap year: every fourth, but of the centuries only those
    /// divisible by 400.
    public static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// 28…31: the days of `month` (1…12) in `year`.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// The day number (days since 1970-01-01, negative before) of a Gregorian date; the parts are
    /// not checked, so callers check them first (`init(year:month:day:)` does).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian date of day number `days`: the inverse of `daysFromCivil(year:month:day:)`.
    public static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
