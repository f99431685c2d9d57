import BackupKit
import Foundation

/// Times as people read them, in every command's text output: `2026-11-29 23:14:03 +0100`,
/// the local wall clock with its offset, so the time is the one on the reader's clock and
/// still unambiguous across zones and DST changes. `--json` keeps UTC RFC 3339 for scripts.
enum WallTime {
    static func text(_ time: Timestamp, zone: TimeZone = ZoneSetting.local) -> String {
        text(Date(timeIntervalSince1970: Double(time.millisecondsSince1970) / 1000), zone: zone)
    }

    static func text(_ date: Date, zone: TimeZone = ZoneSetting.local) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss xx"
        return formatter.string(from: date)
    }

    /// A stored RFC 3339 time (a record's, or Drive's); as it is when it does not parse.
    static func text(rfc3339 stored: String, zone: TimeZone = ZoneSetting.local) -> String {
        Timestamp(stored).map { text($0, zone: zone) } ?? stored
    }
}
