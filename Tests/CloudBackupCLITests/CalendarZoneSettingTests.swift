import BackupKit
import Foundation
import TestSupport
import Testing

@testable import CloudBackupCLI

// `TZ` as users write it (FORMAT.md §7). Every expected offset is POSIX's reading, worked out
// by hand: a POSIX offset is what to ADD to local time to get UTC, so GMT+5 is UTC−5.

struct ZoneSettingCase: CustomTestStringConvertible, Sendable {
    var text: String
    /// Seconds east of UTC in mid-January and mid-July 2026.
    var january: Int
    var july: Int

    var testDescription: String { "TZ=\(text)" }
}

private let readCases: [ZoneSettingCase] = [
    .init(text: "Europe/Berlin", january: 3600, july: 7200),
    .init(text: ":Europe/Berlin", january: 3600, july: 7200),
    // A database file glibc finds before it tries the POSIX reading: New York's rules.
    .init(text: "EST5EDT", january: -18_000, july: -14_400),
    // The database's Etc zones use POSIX's sign too.
    .init(text: "Etc/GMT+5", january: -18_000, july: -18_000),
    .init(text: "EST5", january: -18_000, july: -18_000),
    .init(text: "GMT+5", january: -18_000, july: -18_000),
    .init(text: "UTC-3", january: 10_800, july: 10_800),
    .init(text: "JST-9", january: 32_400, july: 32_400),
    .init(text: "<+0330>-3:30", january: 12_600, july: 12_600),
    .init(text: "<-0245>+02:45:00", january: -9_900, july: -9_900),
]

private let refusedCases: [String] = [
    "EST5EDT,M3.2.0,M11.1.0",
    "AAA3BBB",
    "<+03>-3<+04>,J60/2,J300",
    "Mars/Olympus",
    // A colon rules out the POSIX reading, and EST5 is no file of the database.
    ":EST5",
    // Hours are at most two digits: Foundation would read this as UTC+5, glibc as nothing.
    "GMT+0500",
    "GMT+25",
    "ABC",
    "../etc/passwd",
    "/dev/null",
]

@Suite struct CalendarZoneSettingTests {
    @Test("a TZ value is read as POSIX and glibc read it", arguments: readCases)
    func readAsPOSIX(_ testCase: ZoneSettingCase) throws {
        let zone = try ZoneSetting.zone(testCase.text)
        let january = try #require(Timestamp("2026-01-15T12:00:00Z")).date
        let july = try #require(Timestamp("2026-07-15T12:00:00Z")).date
        #expect(zone.secondsFromGMT(for: january) == testCase.january)
        #expect(zone.secondsFromGMT(for: july) == testCase.july)
    }

    @Test(
        "a TZ value that names no zone, or one with rules, is refused in one line",
        arguments: refusedCases)
    func refused(_ text: String) throws {
        let error = try #require(throws: CLIError.self) { try ZoneSetting.zone(text) }
        #expect(error.lines.count == 1)
        #expect(error.lines.first?.hasPrefix("TZ '\(text)' ") == true)
        #expect(error.lines.first?.contains("America/New_York") == true)
        #expect(error.exitCode == .usage)
    }

    /// `TZ=:/etc/localtime` and the like: the database zone the file links to.
    @Test func aPathIntoTheDatabase() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("localtime").path
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: "/usr/share/zoneinfo/Asia/Kathmandu")
        let zone = try ZoneSetting.zone(":" + link)
        #expect(zone.identifier == "Asia/Kathmandu")
    }

    @Test func unsetOrEmptyIsTheSystemZone() throws {
        #expect(try ZoneSetting.zone("") == TimeZone.current)
    }
}

/// Every command's local times follow `TZ` as POSIX reads it, not only `inspect`'s streaks;
/// and a `TZ` no reading fits is refused by every command before it does anything.
@Suite struct ProcessZoneTests {
    let file = Paths.file("Tests/BackupKitTests/Fixtures/v3-example.json").path

    /// The fixture was exported at 2026-11-29T22:14:03Z.
    @Test(arguments: [
        ("GMT+5", "2026-11-29 17:14:03 -0500"), ("EST5", "2026-11-29 17:14:03 -0500"),
        ("UTC-3", "2026-11-30 01:14:03 +0300"), ("Asia/Kathmandu", "2026-11-30 03:59:03 +0545"),
    ])
    func wallTimesFollowThePosixReadingOfTZ(zone: String, shown: String) throws {
        let result = try cloudbackup(["inspect", file], environment: ["TZ": zone])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("exported:    \(shown) ("), "\(result.stdout)")
    }

    @Test func aTZThatNamesNoZoneIsRefusedByEveryCommand() throws {
        let result = try cloudbackup(["validate", file], environment: ["TZ": "Mars/Olympus"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "cloudbackup: TZ 'Mars/Olympus' is not a time zone this system knows; set TZ to a zone name like America/New_York or Europe/Berlin, or unset it for the system's zone\n"
        )
    }
}
