import Foundation
import TestSupport
import Testing

/// Issue 35, item 6: people read times on their own clock with its offset; `--json` keeps UTC.
@Suite final class WallTimeTests {
    let folder: URL

    init() throws {
        folder = try Paths.temporaryFolder()
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// One instant in winter and one in summer (Lord Howe's DST moves by half an hour).
    static let cases: [(zone: String, exportedAt: String, shown: String)] = [
        ("UTC", "2026-11-29T22:14:03.120Z", "2026-11-29 22:14:03 +0000"),
        ("Europe/Berlin", "2026-11-29T22:14:03.120Z", "2026-11-29 23:14:03 +0100"),
        ("Europe/Berlin", "2026-07-01T12:00:00.000Z", "2026-07-01 14:00:00 +0200"),
        ("America/New_York", "2026-11-29T22:14:03.120Z", "2026-11-29 17:14:03 -0500"),
        ("America/New_York", "2026-07-01T12:00:00.000Z", "2026-07-01 08:00:00 -0400"),
        ("Australia/Lord_Howe", "2026-11-29T22:14:03.120Z", "2026-11-30 09:14:03 +1100"),
        ("Australia/Lord_Howe", "2026-07-01T12:00:00.000Z", "2026-07-01 22:30:00 +1030"),
    ]

    @Test(arguments: cases.indices)
    func inspectAndVerifyShowTheLocalTimeWithItsOffset(index: Int) throws {
        let (zone, exportedAt, shown) = Self.cases[index]
        let file = folder.appendingPathComponent("state.json")
        try Data(
            backupJSON(
                device: "phone", challenges: ["A": "2026-06-01T00:00:00.000Z"],
                exportedAt: exportedAt
            ).utf8
        ).write(to: file)
        let environment = ["TZ": zone]
        let inspect = try cloudbackup(
            ["inspect", file.path, "--now", "2026-12-01T00:00:00Z"], environment: environment)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.contains("exported:    \(shown) ("), "\(inspect.stdout)")
        let verify = try cloudbackup(
            ["verify", file.path, "--now", "2026-12-01T00:00:00Z"], environment: environment)
        #expect(verify.stdout.contains(": exported \(shown) ("), "\(verify.stdout)")
        // Scripts keep UTC.
        let json = try cloudbackup(
            ["verify", file.path, "--now", "2026-12-01T00:00:00Z", "--json"],
            environment: environment)
        #expect(json.stdout.contains(#""exportedAt":"\#(exportedAt)""#), "\(json.stdout)")
    }
}
