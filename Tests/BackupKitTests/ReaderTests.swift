import BackupKit
import Foundation
import TestSupport
import Testing

@Suite struct ReaderTests {
    @Test func readsTheSpecExample() throws {
        let result = try BackupReader.read(try fixture("v3-example.json"))
        let document = result.document
        #expect(result.sourceVersion == 3)
        #expect(document.exportedAt == Timestamp("2026-11-29T22:14:03.120Z"))
        #expect(document.deviceId.rawValue == "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a")
        #expect(document.settings.dayStartHour == 2)
        #expect(document.settings.reminderTime == ReminderTime(hour: 20, minute: 30))
        #expect(document.settings.premium?.plan == "yearly")
        #expect(document.settings.appLock == AppLock(enabled: true, method: "pin"))
        let challenge = try #require(document.challenges.first)
        #expect(challenge.title == "30 days of water")
        #expect(challenge.durationDays == 30)
        let task = try #require(challenge.tasks.first)
        #expect(task.rules.map(\.target) == [6, 8])
        #expect(task.rules.last?.unit == "glasses")
        #expect(challenge.pausedDays == [DayKey("2026-03-05")].compactMap { $0 })
        let log = try #require(document.dayLogs.first)
        #expect(log.key.description == "0193a5b2-0001-7000-8000-000000000001/2026-03-08")
        #expect(log.values == [TaskValue(taskID: TaskID(unchecked: "water"), value: 8)])
        #expect(log.mood == 4)
        #expect(document.tombstones.map(\.id.rawValue) == ["0193a5b2-0001-7000-8000-0000000000ff"])
        #expect(result.notes.isEmpty)
    }

    /// A day log past the challenge's 30 days is kept with a note; a reader that did not ask
    /// for notes (the default) gets the same document and none.
    @Test func notesAreCollectedOnlyWhenAskedFor() throws {
        let text = String(decoding: try fixture("v3-example.json"), as: UTF8.self)
        let bytes = Array(
            text.replacingOccurrences(of: "0001/2026-03-08", with: "0001/2026-05-08").utf8)
        let withNotes = try BackupReader.read(bytes, options: ReadOptions(collectsNotes: true))
        let withoutNotes = try BackupReader.read(bytes)
        #expect(
            withNotes.notes.map(\.pointer) == [
                "/dayLogs/0193a5b2-0001-7000-8000-000000000001~12026-05-08"
            ])
        #expect(withoutNotes.notes.isEmpty)
        #expect(withoutNotes.document == withNotes.document)
    }

    /// A count above 1 is noted only on days a `check` rule is in force: the task was
    /// counted until 03-10 and is a check from then on; another task never is a check.
    @Test func aCountIsNotedOnlyWhileACheckRuleIsInForce() {
        let start = DayKey(year: 2026, month: 3, day: 1)!
        let stamp = Timestamp(millisecondsSince1970: 1_772_000_000_000)
        let stretch = HabitTask(
            id: TaskID(unchecked: "stretch"), title: "Stretch",
            rules: [
                GoalRule(from: start, type: .count, target: 3, unit: "sets"),
                GoalRule(from: start.adding(days: 9), type: .check, target: 1, unit: nil),
            ])
        let read = HabitTask(
            id: TaskID(unchecked: "read"), title: "Read",
            rules: [GoalRule(from: start, type: .count, target: 9, unit: "pages")])
        let id = ChallengeID(unchecked: "c")
        let logs = [(8, 3), (9, 1), (9, 2), (12, 5)].map { offset, value in
            DayLog(
                key: DayLogKey(challengeID: id, day: start.adding(days: offset)),
                values: [
                    TaskValue(taskID: read.id, value: 7),
                    TaskValue(taskID: stretch.id, value: value),
                ], updatedAt: stamp)
        }
        // Two logs on one day would not be a valid document; only the notes are looked at.
        let document = BackupDocument(
            exportedAt: stamp, deviceId: DeviceID(unchecked: "phone"),
            challenges: [
                Challenge(
                    id: id, title: "Move", startDate: start, durationDays: 30,
                    tasks: [read, stretch], createdAt: stamp, updatedAt: stamp)
            ], dayLogs: logs)
        #expect(
            BackupValidator.notes(document).map(\.pointer) == [
                "/dayLogs/c~12026-03-10/values/stretch", "/dayLogs/c~12026-03-13/values/stretch",
            ])
    }
}

extension ReaderTests {
    /// "Counted as done" is said only of a value that counts: not on a day after the
    /// challenge (that log has its own note), a paused day, or once the task is archived.
    @Test func aCountIsNotedAsDoneOnlyWhereItCounts() {
        let start = DayKey(year: 2026, month: 3, day: 1)!
        let stamp = Timestamp(millisecondsSince1970: 1_772_000_000_000)
        let water = HabitTask(
            id: TaskID(unchecked: "water"), title: "Water",
            rules: [GoalRule(from: start, type: .check, target: 1, unit: nil)])
        let stretch = HabitTask(
            id: TaskID(unchecked: "stretch"), title: "Stretch",
            rules: [GoalRule(from: start, type: .check, target: 1, unit: nil)],
            archivedFrom: start.adding(days: 3))
        let id = ChallengeID(unchecked: "c")
        // Day 1 counts; day 4 is paused; day 5 is past archivedFrom for stretch only; day 8 is
        // after the seven days.
        let logs = [1, 4, 5, 8].map { offset in
            DayLog(
                key: DayLogKey(challengeID: id, day: start.adding(days: offset)),
                values: [
                    TaskValue(taskID: stretch.id, value: 3), TaskValue(taskID: water.id, value: 8),
                ], updatedAt: stamp)
        }
        let document = BackupDocument(
            exportedAt: stamp, deviceId: DeviceID(unchecked: "phone"),
            challenges: [
                Challenge(
                    id: id, title: "Week", startDate: start, durationDays: 7,
                    tasks: [stretch, water], pausedDays: [start.adding(days: 4)],
                    createdAt: stamp, updatedAt: stamp)
            ], dayLogs: logs)
        #expect(
            BackupValidator.notes(document).map(\.pointer) == [
                "/dayLogs/c~12026-03-02/values/stretch", "/dayLogs/c~12026-03-02/values/water",
                "/dayLogs/c~12026-03-06/values/water", "/dayLogs/c~12026-03-09",
            ])
    }
}

@Suite struct ReaderOrderTests {
    /// Maps come out as sorted arrays whatever order the file wrote them in.
    @Test func unsortedMapsAreSorted() throws {
        let id = "0193a5b2-0001-7000-8000-000000000001"
        let log =
            #"{ "values": {"water": 1, "a": 2}, "note": "", "mood": null, "updatedAt": "2026-03-09T06:40:00.000Z" }"#
        let text = try Edit(
            "unsorted",
            [
                (
                    #""tombstones": {"#,
                    #""tombstones": { "z": { "deletedAt": "2026-03-03T14:02:00.000Z" }, "#
                ),
                (
                    #""dayLogs": {"#,
                    "\"dayLogs\": {\"\(id)/2026-03-09\": \(log), \"\(id)/2026-03-02\": \(log),"
                ),
            ]
        ).apply(to: exampleText())
        let document = try BackupReader.read(Array(text.utf8)).document
        #expect(
            document.dayLogs.map(\.key.description) == [
                "\(id)/2026-03-02", "\(id)/2026-03-08", "\(id)/2026-03-09",
            ])
        #expect(document.dayLogs.first?.values.map(\.taskID.rawValue) == ["a", "water"])
        #expect(
            document.tombstones.map(\.id.rawValue) == ["0193a5b2-0001-7000-8000-0000000000ff", "z"])
    }
}
