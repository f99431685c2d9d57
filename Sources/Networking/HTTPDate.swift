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
            let day = number(5, 2), let month = months.firstIndex(of: word(8)),
            let year = number(12, 4), let hour = number(17, 2), let minute = number(20, 2),
            let second = number(23, 2), hour < 24, minute < 60, second < 61
        else { return nil }
        var fields = tm()
        (fields.tm_year, fields.tm_mon, fields.tm_mday) = (
            Int32(year - 1900), Int32(month), Int32(day)
        )
        (fields.tm_hour, fields.tm_min, fields.tm_sec) = (Int32(hour), Int32(minute), Int32(second))
        var time = timegm(&fields)
        // `timegm` carries a day past its month's end into the next: a real date comes back as
        // it went in, and with the weekday it was spelled with (`tm_wday` counts from Sunday).
        var back = tm()
        guard gmtime_r(&time, &back) != nil, back.tm_mday == Int32(day),
            back.tm_mon == Int32(month),
            back.tm_wday == Int32((weekday + 1) % 7)
        else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(time))
    }
}
