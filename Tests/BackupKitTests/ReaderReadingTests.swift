import BackupKit
import Foundation
import SeededRandom
import Testing

private let challenge = "/challenges/0193a5b2-0001-7000-8000-000000000001"
private let task = challenge + "/tasks/water"
private let log = "/dayLogs/0193a5b2-0001-7000-8000-000000000001~12026-03-08"
private let title = #""30 days of water""#
private let note = #""Late one, counted for Saturday""#

private func quoted(_ piece: String, times: Int) -> String {
    "\"" + String(repeating: piece, count: times) + "\""
}

/// FORMAT.md §1.2/§4b exact readings not pinned elsewhere, each as one edit of the §2 example
/// (a second look at the reader against the spec's words).
let readingCases: [Edit] = [
    // Timestamps: upper-case `Z` only, no space for `T`, years to 9999 (day keys stop at 2199).
    Edit("timestamp lower-case z", "22:14:03.120Z", "22:14:03.120z", ["/exportedAt"]),
    Edit("timestamp with a space", "2026-11-29T22", "2026-11-29 22", ["/exportedAt"]),
    Edit("timestamp year 2200", "2026-11-29T22:14:03.120Z", "2200-01-01T00:00:00Z"),
    Edit("timestamp one fraction digit", "22:14:03.120Z", "22:14:03.1Z"),
    Edit(
        "timestamp year 10000", "2026-11-29T22:14:03.120Z", "10000-01-01T00:00:00Z", ["/exportedAt"]
    ),
    Edit(
        "day key year 1999", "001/2026-03-08", "001/1999-12-31",
        [log.replacingOccurrences(of: "2026-03-08", with: "1999-12-31")]),
    // Characters are Unicode scalars: `e` + combining acute is two.
    Edit("title 120 scalars in 60 graphemes", title, quoted("e\u{301}", times: 60)),
    Edit(
        "title 122 scalars in 61 graphemes", title, quoted("e\u{301}", times: 61),
        [challenge + "/title"]),
    Edit("title 120 astral scalars", title, quoted("😀", times: 120)),
    Edit("title 121 astral scalars", title, quoted("😀", times: 121), [challenge + "/title"]),
    Edit("note 2000 astral scalars", note, quoted("😀", times: 2000)),
    Edit("note 2001 astral scalars", note, quoted("😀", times: 2001), [log + "/note"]),
    Edit("unit 24 scalars", #""unit": "glasses" },"#, #""unit": \#(quoted("é", times: 24)) },"#),
    Edit(
        "unit 25 scalars", #""unit": "glasses" },"#, #""unit": \#(quoted("é", times: 25)) },"#,
        [task + "/rules/0/unit"]),
    // Control characters: U+0000–U+001F and U+007F–U+009F, forbidden in titles only.
    Edit("title U+001F", title, #""a\u001f""#, [challenge + "/title"]),
    Edit("title U+007F", title, "\"a\u{7F}\"", [challenge + "/title"]),
    Edit("title U+009F", title, "\"a\u{9F}\"", [challenge + "/title"]),
    Edit("title U+00A0", title, "\"a\u{A0}\""),
    Edit("title U+007E", title, #""a~""#),
    Edit("note with controls", note, #""a\u0000\u001f\u007f""#),
    Edit("unit with a control", #""unit": "glasses" },"#, #""unit": "\u0007" },"#),
    Edit("plan with a control", #""plan": "yearly""#, #""plan": "\u0085""#),
    // Integers: any integral spelling, nothing with a fraction, huge exponents saturate.
    Edit("target 0.6e1", #""target": 6"#, #""target": 0.6e1"#),
    Edit("target 6E+0", #""target": 6"#, #""target": 6E+0"#),
    Edit("target 600e-2", #""target": 6"#, #""target": 600e-2"#),
    Edit("target 6.000", #""target": 6"#, #""target": 6.000"#),
    Edit("target 6.0001", #""target": 6"#, #""target": 6.0001"#, [task + "/rules/0/target"]),
    Edit(
        "target with a 20-digit exponent", #""target": 6"#, #""target": 6e99999999999999999999"#,
        [task + "/rules/0/target"]),
    Edit(
        "target -1e400", #""target": 6"#, #""target": -1e400"#, [task + "/rules/0/target"]),
    Edit("value 0e400", #""water": 8 }"#, #""water": 0e400 }"#),
    Edit("value 1e-400", #""water": 8 }"#, #""water": 1e-400 }"#, [log + "/values/water"]),
    Edit("mood 4.0", #""mood": 4"#, #""mood": 4.0"#),
    Edit("mood -0", #""mood": 4"#, #""mood": -0"#, [log + "/mood"]),
    Edit("dayStartHour 2e0", #""dayStartHour": 2"#, #""dayStartHour": 2e0"#),
    Edit("schemaVersion 3e0", #""schemaVersion": 3"#, #""schemaVersion": 3e0"#),
    Edit("durationDays 3e1", #""durationDays": 30"#, #""durationDays": 3e1"#),
    // A day log key names a challenge of this file; a tombstone names one that is not live.
    Edit(
        "archivedFrom after the first rule, before the second", #""archivedFrom": null"#,
        #""archivedFrom": "2026-03-09""#),
    Edit(
        "archivedFrom before the first rule", #""archivedFrom": null"#,
        #""archivedFrom": "2026-02-28""#, [task + "/archivedFrom"]),
    Edit(
        "unknown field in a tombstone", #""deletedAt": "2026-03-03T14:02:00.000Z""#,
        #""deletedAt": "2026-03-03T14:02:00.000Z", "by": "x""#,
        ["/tombstones/0193a5b2-0001-7000-8000-0000000000ff/by"]),
    Edit(
        "unknown field in a rule", #""target": 8, "unit": "glasses" }"#,
        #""target": 8, "unit": "glasses", "note": "" }"#, [task + "/rules/1/note"]),
    Edit(
        "unknown field in premium", #""plan": "yearly""#, #""plan": "yearly", "trial": false"#,
        ["/settings/premium/trial"]),
]

@Suite struct ReaderReadingTests {
    @Test(arguments: readingCases)
    func reading(_ edit: Edit) throws {
        let text = try edit.apply(to: exampleText())
        #expect(try reportedPointers(text).get() == edit.pointers)
    }

    /// Integral spellings are written back as plain integers (`-0` as `0`), and fractions of
    /// a second are truncated, never rounded (rounding would carry into 2027).
    @Test func integersAndStampsAreWrittenBackInTheirOneSpelling() throws {
        let text = try Edit(
            "spellings",
            [
                (#""water": 8 }"#, #""water": -0 }"#), (#""target": 6"#, #""target": 60e-1"#),
                (#""durationDays": 30"#, #""durationDays": 3.0e1"#),
                (#""mood": 4"#, #""mood": 4.000"#),
                ("2026-11-29T22:14:03.120Z", "2026-12-31T23:59:59.99999Z"),
                ("2026-11-28T08:00:00.000Z", "2026-11-28T08:00:00Z"),
            ]
        ).apply(to: exampleText())
        let written = String(
            decoding: BackupWriter.write(try BackupReader.read(Array(text.utf8)).document),
            as: UTF8.self)
        for expected in [
            #""values":{"water":0}"#, #""target":6,"#, #""durationDays":30,"#, #""mood":4,"#,
            #""exportedAt":"2026-12-31T23:59:59.999Z""#,
            #""validatedAt":"2026-11-28T08:00:00.000Z""#,
        ] {
            #expect(written.contains(expected), "\(expected) in \(written)")
        }
    }

    /// A newer schema is refused as such, whatever else is wrong in the file and wherever
    /// its version stands, and however the version is spelled.
    @Test(arguments: [
        (#"{"format":"habit-backup","schemaVersion":5}"#, 5),
        (#"{"schemaVersion":5.0}"#, 5),
        (
            #"{"x":1,"challenges":{"bad id":5},"dayLogs":{"k":1},"format":"nope","schemaVersion":50e-1}"#,
            5
        ),
        (
            #"{"settings":[],"tombstones":"none","format":"habit-backup","schemaVersion":7,"format":1}"#,
            7
        ),
    ])
    func newerSchemaIsRefusedBeforeValidation(_ text: String, version: Int) {
        do {
            _ = try BackupReader.read(Array(text.utf8))
            Issue.record("read succeeded")
        } catch {
            #expect(error == .newerSchema(version))
        }
    }

    /// Seeded random spellings of integral and non-integral values (FORMAT.md §3.4: any integral
    /// value is an integer). Each spelling is built from the decimal digits of the value,
    /// with the point moved and an exponent that undoes the move, so its value is known.
    @Test func randomSpellingsOfIntegersAndFractions() throws {
        let base = try exampleText()
        var random = SeededRandom(seed: 42)
        for round in 0..<400 {
            let value = Int.random(in: 1...9_999, using: &random)
            // An extra last digit 1…9 makes it a fraction (value.d); none keeps it whole.
            let fraction = round.isMultiple(of: 2) ? Int.random(in: 1...9, using: &random) : nil
            let zeros = Int.random(in: 0...4, using: &random)
            let digits =
                String(value) + (fraction.map(String.init) ?? "")
                + String(repeating: "0", count: zeros)
            // digits × 10^-(extra digits) is the number; `point` digits go after the point.
            let point = Int.random(in: 0..<digits.count, using: &random)
            let exponent = point - zeros - (fraction == nil ? 0 : 1)
            let mantissa =
                point == 0
                ? digits : digits.dropLast(point) + "." + digits.suffix(point)
            let marker = ["e", "E"][Int.random(in: 0...1, using: &random)]
            let spelled =
                exponent == 0 && Bool.random(using: &random)
                ? String(mantissa) : "\(mantissa)\(marker)\(exponent)"
            let text = try Edit("target", #""target": 6"#, "\"target\": \(spelled)").apply(
                to: base)
            let result = reportedPointers(text)
            if fraction != nil {
                #expect(try result.get() == [task + "/rules/0/target"], "\(spelled)")
                continue
            }
            #expect(try result.get() == [], "\(spelled)")
            let written = String(
                decoding: BackupWriter.write(try BackupReader.read(Array(text.utf8)).document),
                as: UTF8.self)
            #expect(written.contains("\"target\":\(value),"), "\(spelled)")
        }
    }

    /// Stamps and days against Foundation's Gregorian calendar (an independent calendar):
    /// the text is built from its components, with 0…9 fraction digits of which only the
    /// first three count (truncated), and must read as the same instant and day.
    @Test func stampsAndDaysAgreeWithFoundationsCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let pad = { (value: Int, width: Int) in
            String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
        }
        var random = SeededRandom(seed: 2026)
        // 2000-01-01T00:00:00Z … 9999-12-31T23:59:59Z in seconds.
        let seconds: ClosedRange<Int64> = 946_684_800...253_402_300_799
        for _ in 0..<5_000 {
            let second = Int64.random(in: seconds, using: &random)
            let millis = Int64.random(in: 0...999, using: &random)
            let parts = calendar.dateComponents(
                [.year, .month, .day, .hour, .minute, .second],
                from: Date(timeIntervalSince1970: TimeInterval(second)))
            let (year, month, day) = (parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
            let date = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
            let time =
                "\(pad(parts.hour ?? 0, 2)):\(pad(parts.minute ?? 0, 2)):\(pad(parts.second ?? 0, 2))"
            let extra = (0..<Int.random(in: 0...6, using: &random)).map { _ in
                String(Int.random(in: 0...9, using: &random))
            }.joined()
            let fraction = "." + pad(Int(millis), 3) + extra
            let text = date + "T" + time + fraction + "Z"
            let stamp = try #require(Timestamp(text), "\(text)")
            #expect(stamp.millisecondsSince1970 == second * 1000 + millis, "\(text)")
            #expect(stamp.description == date + "T" + time + "." + pad(Int(millis), 3) + "Z")
            if millis == 0, extra.isEmpty {
                #expect(Timestamp(date + "T" + time + "Z") == stamp)
            }
            if year <= 2199 {
                let key = try #require(DayKey(date), "\(date)")
                #expect(Int64(key.dayNumber) == second / 86_400, "\(date)")
                #expect(key.description == date)
            } else {
                #expect(DayKey(date) == nil, "\(date)")
            }
        }
    }

    struct SettingsCase: Sendable, CustomTestStringConvertible {
        var name: String
        var settings: String
        var expected: Settings
        var testDescription: String { name }
    }

    /// FORMAT.md §3.6: version 2 settings are version 1's plus optional `weekStartsOn`,
    /// `reminderTime`, `premium` and `appLock`; 2→3 keeps them and fills the defaults.
    @Test(arguments: [
        SettingsCase(
            name: "all optional fields",
            settings: #"""
                "settings": { "dayStartHour": 3, "theme": "dark", "weekStartsOn": "saturday",
                  "reminderTime": "07:05", "appLock": { "enabled": true, "method": "pin" },
                  "premium": { "plan": "monthly", "validatedAt": "2026-03-01T00:00:00Z", "expiresAt": null } },
                """#,
            expected: Settings(
                dayStartHour: 3, weekStartsOn: .saturday, theme: .dark,
                reminderTime: ReminderTime(hour: 7, minute: 5),
                premium: Premium(
                    plan: "monthly",
                    validatedAt: Timestamp(millisecondsSince1970: 1_772_323_200_000),
                    expiresAt: nil),
                appLock: AppLock(enabled: true, method: "pin"))),
        SettingsCase(
            name: "only version 1's fields",
            settings: #""settings": { "dayStartHour": 0, "theme": "system" },"#,
            expected: Settings(
                dayStartHour: 0, weekStartsOn: .monday, theme: .system, reminderTime: nil,
                premium: nil, appLock: nil)),
    ])
    func version2SettingsCarryOverAndDefaultsFill(_ test: SettingsCase) throws {
        let original = #"""
              "settings": {
                "dayStartHour": 1,
                "theme": "light",
                "weekStartsOn": "sunday",
                "appLock": { "enabled": false, "method": "biometric" }
              },
            """#
        let text = try Edit(test.name, original, test.settings).apply(
            to: String(decoding: try fixture("v2.json"), as: UTF8.self))
        let result = try BackupReader.read(Array(text.utf8))
        #expect(result.sourceVersion == 2)
        #expect(result.document.settings == test.expected)
    }
}
