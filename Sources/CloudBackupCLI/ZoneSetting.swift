import Foundation

// Design note: `TZ` as people write it, read the way the C library reads it.
//
// Foundation reads a zone string its own way: `TimeZone(identifier: "GMT+5")` is five hours
// AHEAD of UTC, while POSIX, glibc and `date` read `TZ=GMT+5` as five hours behind (the offset
// is what to add to local time to get UTC); and `TimeZone.current` silently falls back to the
// system's zone for a string it does not know (`EST5`, `Mars/Olympus`). A day key a zone off
// is a streak quietly broken, so every form is either read as glibc reads it or refused:
//
//     Europe/Berlin, :Europe/Berlin, EST5EDT   a zone of the database (glibc looks for the
//                                              file first, so EST5EDT is New York's rules)
//     :/etc/localtime                           the database zone that file links to
//     EST5, GMT+5, UTC-3, <+0330>-3:30          a fixed offset: UTC−5, UTC−5, UTC+3, UTC+3:30
//     EST5EDT,M3.2.0,M11.1.0, AAA3BBB           refused: daylight-saving rules are not read
//     Mars/Olympus                              refused: no such zone
//
// Unset or empty, `TZ` means the system's zone (/etc/localtime), as for every other program.

/// The zone a `TZ` value names, read as POSIX and glibc read it (design note above).
enum ZoneSetting {
    /// The process's local zone: its `TZ`, read once as the process starts
    /// (`CloudBackup.exit`), like the variable itself one per process. Until then, and in a
    /// test's in-process run, the system's zone.
    nonisolated(unsafe) static var local: TimeZone = .current

    /// Where the zone database keeps one file per zone name.
    static let databaseFolder = "/usr/share/zoneinfo/"

    /// The zone `text` names, or a one-line `Failure.environment` error saying what to write
    /// instead.
    static func zone(_ text: String) throws(CLIError) -> TimeZone {
        guard !text.isEmpty else { return .current }
        // A leading colon says "not a POSIX string": a database name or a file.
        let named = text.hasPrefix(":")
        var name = named ? String(text.dropFirst()) : text
        if name.hasPrefix("/") {
            let target = URL(fileURLWithPath: name).resolvingSymlinksInPath().path
            guard let range = target.range(of: "/zoneinfo/") else {
                throw .badZone(text, "names a file outside the zone database")
            }
            name = String(target[range.upperBound...])
        }
        // The file first: one stat, where Foundation's list of names costs a third of a
        // `cloudbackup --version` (every run reads TZ as it starts).
        if hasDatabaseFile(name) || TimeZone.knownTimeZoneIdentifiers.contains(name) {
            guard let zone = TimeZone(identifier: name) else {
                throw .badZone(text, "is a file of the zone database that Foundation cannot read")
            }
            return zone
        }
        switch named ? nil : PosixZone(text) {
        case .fixed(let secondsFromGMT)?:
            guard let zone = TimeZone(secondsFromGMT: secondsFromGMT) else {
                throw .badZone(text, "is an offset no zone has")
            }
            return zone
        case .withDaylightSaving?:
            throw .badZone(text, "has daylight-saving rules, which cloudbackup does not read")
        case nil:
            throw .badZone(text, "is not a time zone this system knows")
        }
    }

    /// Whether the zone database has a file called `name` (a relative path that stays inside
    /// the database folder).
    private static func hasDatabaseFile(_ name: String) -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.hasPrefix("/"), !parts.contains(where: { $0.isEmpty || $0 == ".." }) else {
            return false
        }
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: databaseFolder + name, isDirectory: &isFolder)
            && !isFolder.boolValue
    }

}

/// A POSIX `TZ` string: `std offset [dst [offset] [,rule]]`, where `std` and `dst` are three or
/// more letters or `<…>` quoted, and `offset` is `[+|-]hh[:mm[:ss]]`, the time to ADD to local
/// time to get UTC (so `EST5` and `GMT+5` are five hours behind UTC).
enum PosixZone: Equatable {
    /// No `dst` part: the zone is always `secondsFromGMT` from UTC (POSIX's sign flipped).
    case fixed(secondsFromGMT: Int)
    /// A `dst` part, with or without rules for when it applies.
    case withDaylightSaving

    /// Nil when `text` is not a POSIX `TZ` string.
    init?(_ text: String) {
        var rest = Substring(text)
        guard Self.name(&rest), let offset = Self.offset(&rest) else { return nil }
        if rest.isEmpty {
            self = .fixed(secondsFromGMT: -offset)
        } else if Self.name(&rest) {
            self = .withDaylightSaving
        } else {
            return nil
        }
    }

    /// Consumes a zone abbreviation: three or more letters, or `<…>` of letters, digits, + and -.
    private static func name(_ rest: inout Substring) -> Bool {
        if rest.first == "<" {
            guard let close = rest.firstIndex(of: ">") else { return false }
            let inner = rest[rest.index(after: rest.startIndex)..<close]
            guard inner.count >= 3,
                inner.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-".contains($0)) }
                )
            else { return false }
            rest = rest[rest.index(after: close)...]
            return true
        }
        let letters = rest.prefix { $0.isASCII && $0.isLetter }
        guard letters.count >= 3 else { return false }
        rest = rest.dropFirst(letters.count)
        return true
    }

    /// Consumes `[+|-]hh[:mm[:ss]]` (hours up to 24) and returns it in seconds.
    private static func offset(_ rest: inout Substring) -> Int? {
        var sign = 1
        if let first = rest.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        var seconds = 0
        for (index, (limit, unit)) in [(24, 3600), (59, 60), (59, 1)].enumerated() {
            if index > 0 {
                guard rest.first == ":" else { break }
                rest = rest.dropFirst()
            }
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard (1...2).contains(digits.count), let value = Int(digits), value <= limit else {
                return nil
            }
            rest = rest.dropFirst(digits.count)
            seconds += value * unit
        }
        return sign * seconds
    }
}
