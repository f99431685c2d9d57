import Foundation

/// The IMF-fixdate of RFC 9110 §5.6.7 (`Sun, 06 Nov 1994 08:49:37 GMT`), the form of `Date`
/// and of a `Retry-After` that is not seconds.
///
/// Read by hand: it is one fixed 29-byte spelling, and every Drive answer's `Date` is read
/// (the clock check), where a Foundation `DateFormatter` cost about 9 million instructions
/// (ICU's calendar parser) per answer, more than the rest of a quiet night's work.
public enum HTTPDate {
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// The instant `text` spells, or nil unless it is an IMF-fixdate naming a real date and
    /// the weekday that date falls on.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 29 else { return nil }
        func word(_ at: Int) -> String { String(decoding: bytes[at..<at + 3], as: UTF8.self) }
        func number(_ at: Int, _ digits: Int) -> Int? {
            var value = 0
            for byte in bytes[at..<at + digits] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, String)] = [
            (3, ", "), (7, " "), (11, " "), (16, " "), (19, ":"), (22, ":"), (25, " GMT"),
        ]
        guard
            separators.allSatisfy({ at, text in bytes[at...].starts(with: text.utf8) }),
            let weekday = weekdays.firstIndex(of: word(0)),
            let day = number(5, 2), let monthIndex = months.firstIndex(of: word(8)),
            let year = number(12, 4), let hour = number(17, 2), let minute = number(20, 2),
            let second = number(23, 2),
            (1...daysIn(month: monthIndex + 1, year: year)).contains(day), hour < 24,
            minute < 60, second < 61
        else { return nil }
        let days = daysFromCivil(year: year, month: monthIndex + 1, day: day)
        // 1970-01-01 was a Thursday (index 3 from Monday).
        guard (days % 7 + 7 + 3) % 7 == weekday else { return nil }
        return Date(
            timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
