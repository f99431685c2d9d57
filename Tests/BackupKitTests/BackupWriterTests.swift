import BackupKit
import Foundation
import SeededRandom
import TestSupport
import Testing

struct BackupWriterTests {
    struct EscapeCase: CustomTestStringConvertible, Sendable {
        var text: String
        var written: String
        var testDescription: String { written }
    }

    /// FORMAT.md §4.2: raw UTF-8, escaping only `"`, `\` and controls below U+0020.
    static let escapes: [EscapeCase] = [
        EscapeCase(text: "plain", written: #""plain""#),
        EscapeCase(text: "say \"hi\"", written: #""say \"hi\"""#),
        EscapeCase(text: #"back\slash"#, written: #""back\\slash""#),
        EscapeCase(text: "a/b", written: #""a/b""#),
        EscapeCase(text: "\n\r\t", written: #""\n\r\t""#),
        EscapeCase(text: "\u{08}\u{0C}", written: #""\b\f""#),
        EscapeCase(text: "\u{00}", written: #""\u0000""#),
        EscapeCase(text: "\u{01}", written: #""\u0001""#),
        EscapeCase(text: "\u{1B}", written: #""\u001b""#),
        EscapeCase(text: "\u{1F}", written: #""\u001f""#),
        EscapeCase(text: "\u{7F}\u{85}", written: "\"\u{7F}\u{85}\""),
        EscapeCase(text: "é 📚 \u{2028}", written: "\"é 📚 \u{2028}\""),
        EscapeCase(text: "", written: #""""#),
    ]

    @Test(arguments: escapes)
    func stringEscaping(_ example: EscapeCase) {
        var out = JSONOutput()
        out.string(example.text)
        #expect(out.bytes == Array(example.written.utf8))
    }

    /// The §2 example, written by hand in canonical form: every object's keys in byte order,
    /// `unit` absent for the check task, nulls written, three fraction digits.
    @Test func specExampleInCanonicalForm() throws {
        let id = ChallengeID(unchecked: "0193a5b2-0001-7000-8000-000000000001")
        let day = { (text: String) in try #require(DayKey(text)) }
        let stamp = { (text: String) in try #require(Timestamp(text)) }
        let document = BackupDocument(
            exportedAt: try stamp("2026-11-29T22:14:03.12Z"),
            deviceId: DeviceID(unchecked: "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a"),
            settings: Settings(
                dayStartHour: 2, weekStartsOn: .monday, theme: .system,
                reminderTime: ReminderTime(hour: 20, minute: 30),
                premium: Premium(
                    plan: "yearly", validatedAt: try stamp("2026-11-28T08:00:00Z"),
                    expiresAt: try stamp("2027-05-01T00:00:00.000Z")),
                appLock: AppLock(enabled: true, method: "pin")),
            challenges: [
                Challenge(
                    id: id, title: "30 days of water", startDate: try day("2026-03-01"),
                    durationDays: 30,
                    tasks: [
                        HabitTask(
                            id: TaskID(unchecked: "done"), title: "Done",
                            rules: [
                                GoalRule(
                                    from: try day("2026-03-01"), type: .check, target: 1, unit: nil)
                            ]),
                        HabitTask(
                            id: TaskID(unchecked: "water"), title: "Drink water",
                            rules: [
                                GoalRule(
                                    from: try day("2026-03-01"), type: .count, target: 6,
                                    unit: "glasses"),
                                GoalRule(
                                    from: try day("2026-03-10"), type: .count, target: 8,
                                    unit: "glasses"),
                            ]),
                    ],
                    pausedDays: [try day("2026-03-05")],
                    createdAt: try stamp("2026-02-28T19:00:00.000Z"),
                    updatedAt: try stamp("2026-03-10T07:12:44.5129Z"))
            ],
            dayLogs: [
                DayLog(
                    key: DayLogKey(challengeID: id, day: try day("2026-03-08")),
                    values: [TaskValue(taskID: TaskID(unchecked: "water"), value: 8)],
                    note: "Late one, counted for Saturday", mood: 4,
                    updatedAt: try stamp("2026-03-09T06:40:00Z"))
            ],
            tombstones: [
                Tombstone(
                    id: ChallengeID(unchecked: "0193a5b2-0001-7000-8000-0000000000ff"),
                    deletedAt: try stamp("2026-03-03T14:02:00.000Z"))
            ])
        let expected =
            #"{"challenges":{"0193a5b2-0001-7000-8000-000000000001":{"createdAt":"2026-02-28T19:00:00.000Z","#
            + #""durationDays":30,"pausedDays":["2026-03-05"],"startDate":"2026-03-01","tasks":{"done":{"#
            + #""archivedFrom":null,"rules":[{"from":"2026-03-01","target":1,"type":"check"}],"title":"Done"},"#
            + #""water":{"archivedFrom":null,"rules":[{"from":"2026-03-01","target":6,"type":"count","unit":"glasses"},"#
            + #"{"from":"2026-03-10","target":8,"type":"count","unit":"glasses"}],"title":"Drink water"}},"#
            + #""title":"30 days of water","updatedAt":"2026-03-10T07:12:44.512Z"}},"#
            + #""dayLogs":{"0193a5b2-0001-7000-8000-000000000001/2026-03-08":{"mood":4,"#
            + #""note":"Late one, counted for Saturday","updatedAt":"2026-03-09T06:40:00.000Z","values":{"water":8}}},"#
            + #""deviceId":"0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a","exportedAt":"2026-11-29T22:14:03.120Z","#
            + #""format":"habit-backup","schemaVersion":4,"settings":{"appLock":{"enabled":true,"method":"pin"},"#
            + #""dayStartHour":2,"premium":{"expiresAt":"2027-05-01T00:00:00.000Z","plan":"yearly","#
            + #""validatedAt":"2026-11-28T08:00:00.000Z"},"reminderTime":"20:30","theme":"system","#
            + #""weekStartsOn":"monday"},"tombstones":{"0193a5b2-0001-7000-8000-0000000000ff":{"#
            + #""deletedAt":"2026-03-03T14:02:00.000Z"}}}"# + "\n"
        #expect(String(decoding: BackupWriter.write(document), as: UTF8.self) == expected)
    }

    @Test func optionalSettingsAreOmittedAndNullsWritten() {
        let document = BackupDocument(
            exportedAt: Timestamp(millisecondsSince1970: 946_684_800_000),
            deviceId: DeviceID(unchecked: "d"),
            settings: Settings(
                premium: Premium(
                    plan: "p", validatedAt: Timestamp(millisecondsSince1970: 946_684_800_001),
                    expiresAt: nil)))
        let expected =
            #"{"challenges":{},"dayLogs":{},"deviceId":"d","exportedAt":"2000-01-01T00:00:00.000Z","#
            + #""format":"habit-backup","schemaVersion":4,"settings":{"dayStartHour":0,"#
            + #""premium":{"expiresAt":null,"plan":"p","validatedAt":"2000-01-01T00:00:00.001Z"},"#
            + #""reminderTime":null,"theme":"system","weekStartsOn":"monday"},"tombstones":{}}"#
            + "\n"
        #expect(String(decoding: BackupWriter.write(document), as: UTF8.self) == expected)
    }

    /// `a-b/…` < `a/…` < `a_b/…` by bytes (`-` 0x2D, `/` 0x2F, `_` 0x5F), whatever the days.
    @Test func dayLogKeysSortByTheirBytes() throws {
        let days = [try #require(DayKey("2026-03-02")), try #require(DayKey("2026-03-01"))]
        var keys: [DayLogKey] = []
        for id in ["a_b", "a", "a-b", "A", "a-", "ab"] {
            for day in days {
                keys.append(DayLogKey(challengeID: ChallengeID(unchecked: id), day: day))
            }
        }
        let written = keys.sorted().map(\.description)
        let byBytes = keys.map(\.description).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(written == byBytes)
        let dashed = try #require(written.firstIndex(of: "a-b/2026-03-02"))
        let plain = try #require(written.firstIndex(of: "a/2026-03-01"))
        #expect(dashed < plain)
    }

    @Test func timestampsAlwaysHaveThreeFractionDigits() throws {
        #expect(
            try #require(Timestamp("2026-11-29T22:14:03Z")).description
                == "2026-11-29T22:14:03.000Z")
        #expect(
            try #require(Timestamp("2026-11-29T22:14:03.1209Z")).description
                == "2026-11-29T22:14:03.120Z")
        #expect(
            try #require(Timestamp("2000-01-01T00:00:00.5Z")).description
                == "2000-01-01T00:00:00.500Z")
        #expect(
            try #require(Timestamp("9999-12-31T23:59:59.999Z")).description
                == "9999-12-31T23:59:59.999Z")
    }

    /// The writer's digits read back through the independent parsers, over the whole range.
    @Test func stampsAndDaysRoundTripThroughTheirParsers() throws {
        var random = SeededRandom(seed: 5)
        let first = try #require(Timestamp("2000-01-01T00:00:00Z")).millisecondsSince1970
        let last = try #require(Timestamp("9999-12-31T23:59:59.999Z")).millisecondsSince1970
        for _ in 0..<20_000 {
            let stamp = Timestamp(
                millisecondsSince1970: Int64.random(in: first...last, using: &random))
            #expect(Timestamp(stamp.description) == stamp)
            // 2000-01-01…2199-12-31, the days a document may hold.
            let day = DayKey(dayNumber: Int32.random(in: 10_957...84_005, using: &random))
            #expect(DayKey(day.description) == day)
        }
    }

    /// A copy's canonical bytes are exactly the bytes after its key inside the document.
    @Test func canonicalBytesAreTheCopyInsideTheDocument() {
        var random = RandomDocuments(seed: 7)
        for _ in 0..<50 {
            let document = random.document()
            let bytes = BackupWriter.write(document)
            for challenge in document.challenges {
                let member =
                    Array("\"\(challenge.id)\":".utf8) + BackupWriter.canonicalBytes(of: challenge)
                #expect(bytes.firstRange(of: member) != nil)
            }
            for dayLog in document.dayLogs {
                let member =
                    Array("\"\(dayLog.key)\":".utf8) + BackupWriter.canonicalBytes(of: dayLog)
                #expect(bytes.firstRange(of: member) != nil)
            }
        }
    }

    /// Issue 41: restamping a compact write gives the bytes of writing the stamped document,
    /// whatever the collections and their strings hold (notes may spell the key itself).
    @Test func restampedIsTheWriteOfTheStampedDocument() throws {
        var random = RandomDocuments(seed: 41)
        let later = Timestamp(millisecondsSince1970: 1_796_000_000_007)
        for round in 0..<100 {
            var document = random.document()
            if round % 2 == 0, let first = document.dayLogs.first {
                var log = first
                log.note = #""exportedAt":"\#(document.exportedAt)""#
                document.dayLogs[0] = log
            }
            let restamped = try #require(
                BackupWriter.restamped(
                    BackupWriter.write(document), from: document.exportedAt, to: later))
            var stamped = document
            stamped.exportedAt = later
            #expect(restamped == BackupWriter.write(stamped))
        }
    }

    /// No compact export time to find (pretty, or not the stamp the document says): nil, so
    /// the caller writes the document again.
    @Test func restampedFindsOnlyTheCompactStampItIsTold() {
        var random = RandomDocuments(seed: 42)
        let document = random.document()
        let later = Timestamp(millisecondsSince1970: 1_796_000_000_007)
        #expect(
            BackupWriter.restamped(
                BackupWriter.write(document, pretty: true), from: document.exportedAt, to: later)
                == nil)
        #expect(
            BackupWriter.restamped(
                BackupWriter.write(document), from: later, to: document.exportedAt) == nil)
    }

    /// Issue 2: `read(write(d)) == d` always, and `write(read(x)) == x` for canonical `x`,
    /// compact and pretty.
    @Test func roundTripsThroughTheReader() throws {
        var random = RandomDocuments(seed: 13)
        for _ in 0..<300 {
            let document = random.document()
            for pretty in [false, true] {
                let bytes = BackupWriter.write(document, pretty: pretty)
                let read = try BackupReader.read(bytes)
                #expect(read.document == document)
                #expect(read.sourceVersion == 4)
                #expect(BackupWriter.write(read.document, pretty: pretty) == bytes)
            }
        }
    }

    /// Python's json module is an independent implementation of the same canonical form:
    /// sort_keys orders by code point (= UTF-8 byte order), ensure_ascii=False keeps raw
    /// UTF-8 and escapes exactly `"`, `\` and controls below U+0020 with lower-case hex.
    @Test(arguments: [false, true])
    func agreesWithPythonJSON(pretty: Bool) throws {
        var random = RandomDocuments(seed: pretty ? 3 : 4)
        let documents = (0..<200).map { _ in random.document() }
        let script = """
            import sys, json
            pretty = sys.argv[1] == "pretty"
            for line in sys.stdin.buffer.read().split(b"\\0"):
                if not line: continue
                value = json.loads(line)
                if pretty:
                    text = json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)
                else:
                    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                sys.stdout.buffer.write(text.encode("utf-8") + b"\\n\\0")
            """
        var input: [UInt8] = []
        var written: [[UInt8]] = []
        for document in documents {
            let bytes = BackupWriter.write(document, pretty: pretty)
            written.append(bytes)
            input += bytes + [0]
        }
        let result = try run(
            URL(fileURLWithPath: Paths.python), ["-c", script, pretty ? "pretty" : "compact"],
            stdin: Data(input))
        try #require(result.status == 0, "\(result.stderr)")
        let expected = result.stdout.split(separator: "\0", omittingEmptySubsequences: true)
        try #require(expected.count == written.count)
        for (python, ours) in zip(expected, written) {
            #expect(Array(python.utf8) == ours)
        }
    }

    @Test func prettyIsIndentedByTwoAndEndsWithNewline() {
        let document = BackupDocument(
            exportedAt: Timestamp(millisecondsSince1970: 946_684_800_000),
            deviceId: DeviceID(unchecked: "d"),
            tombstones: [
                Tombstone(
                    id: ChallengeID(unchecked: "x"),
                    deletedAt: Timestamp(millisecondsSince1970: 946_684_800_000))
            ])
        let expected = """
            {
              "challenges": {},
              "dayLogs": {},
              "deviceId": "d",
              "exportedAt": "2000-01-01T00:00:00.000Z",
              "format": "habit-backup",
              "schemaVersion": 4,
              "settings": {
                "dayStartHour": 0,
                "reminderTime": null,
                "theme": "system",
                "weekStartsOn": "monday"
              },
              "tombstones": {
                "x": {
                  "deletedAt": "2000-01-01T00:00:00.000Z"
                }
              }
            }

            """
        #expect(
            String(decoding: BackupWriter.write(document, pretty: true), as: UTF8.self) == expected)
    }
}
