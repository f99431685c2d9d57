import BackupKit
import Testing

private func text(_ name: String) throws -> String {
    String(decoding: try fixture(name), as: UTF8.self)
}

private let water = "0193a5b2-0001-7000-8000-000000000001"

/// Schema 1 and 2 rules, each checked by that version's own validator before its step.
struct LegacyCase: Sendable, CustomTestStringConvertible {
    var file: String
    var edit: Edit
    var testDescription: String { edit.name }

    init(_ file: String, _ edit: Edit) {
        self.file = file
        self.edit = edit
    }
}

let legacyCases: [LegacyCase] = [
    LegacyCase(
        "v1.json",
        Edit(
            "v1 duplicate challenge id", #""id": "stretch""#, "\"id\": \"\(water)\"",
            ["/challenges/1/id", "/logs/0/challengeId"])),
    LegacyCase(
        "v1.json",
        Edit(
            "v1 log of a missing challenge", #""challengeId": "stretch""#,
            #""challengeId": "gone""#, ["/logs/0/challengeId"])),
    LegacyCase(
        "v1.json", Edit("v1 value 10000", #""value": 8"#, #""value": 10000"#, ["/logs/1/value"])),
    LegacyCase("v1.json", Edit("v1 value 9999", #""value": 8"#, #""value": 9999"#)),
    LegacyCase(
        "v1.json",
        Edit(
            "v1 deleted is live", #""id": "0193a5b2-0001-7000-8000-0000000000ff""#,
            #""id": "stretch""#, ["/deleted/0/id"])),
    LegacyCase(
        "v1.json",
        Edit("v1 goal target 0", #""target": 8"#, #""target": 0"#, ["/challenges/0/goal/target"])),
    LegacyCase(
        "v1.json",
        Edit(
            "v1 check goal with unit", #""type": "check", "target": 1"#,
            #""type": "check", "target": 1, "unit": "x""#, ["/challenges/1/goal/unit"])),
    LegacyCase(
        "v1.json",
        Edit(
            "v1 has no weekStartsOn", #""theme": "dark""#,
            #""theme": "dark", "weekStartsOn": "monday""#, ["/settings/weekStartsOn"])),
    LegacyCase(
        "v1.json",
        Edit(
            "v1 has no format", #""schemaVersion": 1,"#,
            #""schemaVersion": 1, "format": "habit-backup","#, ["/format"])),
    LegacyCase(
        "v1.json",
        Edit(
            "v1 has no dayLogs", #""schemaVersion": 1,"#, #""dayLogs": {}, "schemaVersion": 1,"#,
            ["/dayLogs"])),
    LegacyCase(
        "v1.json",
        Edit(
            "v1 title 121", #""title": "Stretch every morning""#,
            "\"title\": \"\(String(repeating: "s", count: 121))\"", ["/challenges/1/title"])),
    LegacyCase("v1.json", Edit("v1 missing note", #""note": "","#, "", ["/logs/0/note"])),
    LegacyCase(
        "v2.json",
        Edit(
            "v2 check task with unit", #""target": 1 }"#, #""target": 1, "unit": "" }"#,
            ["/challenges/\(water)/tasks/2/unit"])),
    LegacyCase(
        "v2.json",
        Edit(
            "v2 duplicate task id", #""id": "walk""#, #""id": "water""#,
            ["/challenges/\(water)/tasks/1/id"])),
    LegacyCase(
        "v2.json",
        Edit(
            "v2 nine tasks", #""tasks": ["#,
            "\"tasks\": ["
                + String(
                    repeating: #"{ "id": "t", "title": "T", "type": "check", "target": 1 },"#,
                    count: 6),
            ["/challenges/\(water)/tasks"] + (1...5).map { "/challenges/\(water)/tasks/\($0)/id" })),
    LegacyCase(
        "v2.json",
        Edit(
            "v2 has no pausedDays", #""durationDays": 30,"#,
            #""durationDays": 30, "pausedDays": [],"#, ["/challenges/\(water)/pausedDays"])),
    LegacyCase(
        "v2.json",
        Edit(
            "v2 tasks are an array", #""tasks": ["#, #""tasks": {}, "x": ["#,
            ["/challenges/\(water)/tasks", "/challenges/\(water)/x"])),
    LegacyCase(
        "v2.json",
        Edit(
            "v2 missing exportedAt", #""exportedAt": "2026-03-20T21:00:00.000Z","#, "",
            ["/exportedAt"])),
    LegacyCase(
        "v2.json",
        Edit("v2 mood 6", #""mood": 3"#, #""mood": 6"#, ["/dayLogs/\(water)~12026-03-08/mood"])),
]

@Suite struct MigrationTests {
    @Test(arguments: [("v1.json", "v1-as-v3.json", 1), ("v2.json", "v2-as-v3.json", 2)])
    func olderVersionsMigrateToTheExpectedDocument(source: String, expected: String, version: Int)
        throws
    {
        let migrated = try BackupReader.read(try fixture(source))
        let written = try BackupReader.read(try fixture(expected))
        #expect(migrated.sourceVersion == version)
        #expect(written.sourceVersion == 3)
        #expect(migrated.document == written.document)
        #expect(BackupValidator.validate(migrated.document) == [])
    }

    @Test(arguments: legacyCases)
    func legacyRules(_ test: LegacyCase) throws {
        #expect(
            try reportedPointers(test.edit.apply(to: text(test.file))).get() == test.edit.pointers)
    }

    @Test func aVersion1FileDatesFromItsNewestStamp() throws {
        let newerDelete = try Edit(
            "delete last", "2026-03-03T14:02:00.000Z", "2026-04-01T00:00:00.000Z"
        ).apply(to: text("v1.json"))
        #expect(
            try BackupReader.read(Array(newerDelete.utf8)).document.exportedAt
                == Timestamp("2026-04-01T00:00:00Z"))
        let empty =
            #"{"schemaVersion":1,"deviceId":"d","settings":{"dayStartHour":0,"theme":"system"},"challenges":[],"logs":[],"deleted":[]}"#
        #expect(
            try BackupReader.read(Array(empty.utf8)).document.exportedAt
                == Timestamp("2000-01-01T00:00:00Z"))
    }

    @Test func stepsArePureAndRunInOrder() throws {
        let start = try #require(DayKey(year: 2026, month: 1, day: 5))
        let v1 = SchemaV1.Document(
            deviceId: DeviceID(unchecked: "d"),
            settings: SchemaV1.Settings(dayStartHour: 3, theme: .dark),
            challenges: [
                SchemaV1.Challenge(
                    id: ChallengeID(unchecked: "c"), title: "Read", startDate: start,
                    durationDays: 7, goal: Goal(type: .minutes, target: 30, unit: "min"),
                    updatedAt: Timestamp(millisecondsSince1970: 1_767_600_000_000))
            ], logs: [], deleted: [])
        let v2 = Migration.migrate(v1)
        #expect(
            v2.challenges.first?.tasks == [
                SchemaV2.Task(
                    id: TaskID(unchecked: "goal"), title: "Read",
                    goal: Goal(type: .minutes, target: 30, unit: "min"))
            ])
        #expect(v2.challenges.first?.createdAt == v2.challenges.first?.updatedAt)
        let v3 = Migration.migrate(v2)
        #expect(
            v3.settings
                == Settings(dayStartHour: 3, weekStartsOn: .monday, theme: .dark, reminderTime: nil)
        )
        #expect(
            v3.challenges.first?.tasks.first?.rules == [
                GoalRule(from: start, type: .minutes, target: 30, unit: "min")
            ])
        #expect(v3.challenges.first?.pausedDays == [])
    }
}
