import BackupKit

/// An append-only buffer of canonical JSON (FORMAT.md §4.2): no white space, strings as raw UTF-8
/// escaping only `"`, `\` and controls below U+0020, integers in plain form, stamps with
/// exactly three fraction digits.
///
/// The generator emits keys in sorted order by hand instead of going through BackupWriter:
/// the files are the benchmark's input and the tests' oracle for the writer (reading a file
/// and writing it back must give the same bytes), so they must not come from the code under
/// test.
struct CanonicalBytes {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Structural text and keys, written as given (they are ASCII literals in sorted order).
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case 0..<0x20:
                raw("\\u00")
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0xF))
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func integer(_ value: Int) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
        }
        let magnitude = Int(value.magnitude)
        var width = 1
        var limit = 10
        while magnitude >= limit, width < 18 {
            width += 1
            limit *= 10
        }
        padded(magnitude, width: width)
    }

    /// `"YYYY-MM-DD"`
    mutating func day(_ day: DayKey) {
        bytes.append(UInt8(ascii: "\""))
        date(Int(day.dayNumber))
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"<challengeId>/YYYY-MM-DD"`; ids need no escaping (`A-Z a-z 0-9 - _`).
    mutating func dayLogKey(_ challengeID: String, _ day: DayKey) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: challengeID.utf8)
        bytes.append(UInt8(ascii: "/"))
        date(Int(day.dayNumber))
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"YYYY-MM-DDTHH:MM:SS.mmmZ"`; the generator only makes stamps after 1970.
    mutating func timestamp(_ stamp: Timestamp) {
        let millis = Int(stamp.millisecondsSince1970)
        let perDay = Int(Timestamp.millisecondsPerDay)
        let inDay = millis % perDay
        bytes.append(UInt8(ascii: "\""))
        date(millis / perDay)
        bytes.append(UInt8(ascii: "T"))
        padded(inDay / 3_600_000, width: 2)
        bytes.append(UInt8(ascii: ":"))
        padded(inDay / 60_000 % 60, width: 2)
        bytes.append(UInt8(ascii: ":"))
        padded(inDay / 1000 % 60, width: 2)
        bytes.append(UInt8(ascii: "."))
        padded(inDay % 1000, width: 3)
        raw("Z\"")
    }

    private mutating func date(_ dayNumber: Int) {
        let (year, month, day) = DayKey.civilFromDays(dayNumber)
        padded(year, width: 4)
        bytes.append(UInt8(ascii: "-"))
        padded(month, width: 2)
        bytes.append(UInt8(ascii: "-"))
        padded(day, width: 2)
    }

    private mutating func padded(_ value: Int, width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    private func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
