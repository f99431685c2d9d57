import Foundation
import Testing

@testable import BackupKit

private let id = "0193a5b2-0001-7000-8000-000000000001"
private let logKey = "0193a5b2-0001-7000-8000-000000000001/2026-03-08"
private let deletedID = "0193a5b2-0001-7000-8000-0000000000ff"
private let challenge = "/challenges/0193a5b2-0001-7000-8000-000000000001"
private let task = challenge + "/tasks/water"
private let log = "/dayLogs/0193a5b2-0001-7000-8000-000000000001~12026-03-08"
private let tombstone = "/tombstones/0193a5b2-0001-7000-8000-0000000000ff"

/// A fixture with one field of one object removed (or, with `value`, added), and the issues
/// the reader must report: `"pointer: message"`, in order, written by hand.
struct FieldCase: Sendable, CustomTestStringConvertible {
    var file: String
    /// Keys (and array indices) down to the object, then the field.
    var path: [String]
    /// A JSON value to add at `path` instead of removing what is there.
    var value: String?
    var expected: [String]

    var testDescription: String {
        "\(file) \(value == nil ? "without" : "with") \(path.joined(separator: "/"))"
    }

    init(_ fixture: String, _ path: [String], adding value: String? = nil, _ expected: [String]) {
        self.file = fixture
        self.path = path
        self.value = value
        self.expected = expected
    }

    /// The fixture edited through Foundation's tree: key order and layout do not matter to
    /// the reader, and every other value survives the round trip.
    func text() throws -> String {
        let tree = try JSONSerialization.jsonObject(with: Data(try fixture(file)))
        let added = try value.map {
            try JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed)
        }
        let edited = try Self.edit(tree, at: path[...], setting: added)
        let data = try JSONSerialization.data(
            withJSONObject: edited, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    private static func edit(_ node: Any, at path: ArraySlice<String>, setting value: Any?) throws
        -> Any
    {
        guard let key = path.first else { return node }
        if var array = node as? [Any] {
            let index = try #require(Int(key))
            array[index] = try edit(array[index], at: path.dropFirst(), setting: value)
            return array
        }
        var object = try #require(node as? [String: Any], "\(key) must be in an object")
        if path.count == 1 {
            if let value {
                object[key] = value
            } else {
                try #require(object.removeValue(forKey: key) != nil, "\(key) must be there")
            }
        } else {
            object[key] = try edit(try #require(object[key]), at: path.dropFirst(), setting: value)
        }
        return object
    }
}

private func required(_ pointer: String) -> [String] { [pointer + ": is required"] }

let fieldCases: [FieldCase] = [
    // Version 3: every object kind, every required field.
    FieldCase("v3-example.json", ["format"], required("/format")),
    FieldCase("v3-example.json", ["exportedAt"], required("/exportedAt")),
    FieldCase("v3-example.json", ["deviceId"], required("/deviceId")),
    FieldCase("v3-example.json", ["settings"], required("/settings")),
    FieldCase(
        "v3-example.json", ["challenges"],
        [
            "/challenges: is required",
            log + ": challenge 0193a5b2-0001-7000-8000-000000000001 is not in this file, live or"
                + " deleted (a day log needs its challenge or its tombstone)",
        ]),
    FieldCase("v3-example.json", ["dayLogs"], required("/dayLogs")),
    FieldCase("v3-example.json", ["tombstones"], required("/tombstones")),
    FieldCase("v3-example.json", ["settings", "dayStartHour"], required("/settings/dayStartHour")),
    FieldCase("v3-example.json", ["settings", "theme"], required("/settings/theme")),
    FieldCase("v3-example.json", ["settings", "weekStartsOn"], required("/settings/weekStartsOn")),
    FieldCase("v3-example.json", ["settings", "reminderTime"], required("/settings/reminderTime")),
    FieldCase("v3-example.json", ["settings", "premium"], []),
    FieldCase("v3-example.json", ["settings", "appLock"], []),
    FieldCase(
        "v3-example.json", ["settings", "premium", "plan"], required("/settings/premium/plan")),
    FieldCase(
        "v3-example.json", ["settings", "premium", "validatedAt"],
        required("/settings/premium/validatedAt")),
    FieldCase(
        "v3-example.json", ["settings", "premium", "expiresAt"],
        required("/settings/premium/expiresAt")),
    FieldCase(
        "v3-example.json", ["settings", "appLock", "enabled"],
        required("/settings/appLock/enabled")),
    FieldCase(
        "v3-example.json", ["settings", "appLock", "method"], required("/settings/appLock/method")),
    FieldCase(
        "v3-example.json", ["challenges", id, "title"],
        required(challenge + "/title")),
    FieldCase(
        "v3-example.json", ["challenges", id, "startDate"],
        required(challenge + "/startDate")),
    FieldCase(
        "v3-example.json", ["challenges", id, "durationDays"],
        required(challenge + "/durationDays")),
    FieldCase(
        "v3-example.json", ["challenges", id, "tasks"],
        required(challenge + "/tasks")),
    FieldCase(
        "v3-example.json", ["challenges", id, "pausedDays"],
        required(challenge + "/pausedDays")),
    FieldCase(
        "v3-example.json", ["challenges", id, "createdAt"],
        required(challenge + "/createdAt")),
    FieldCase(
        "v3-example.json", ["challenges", id, "updatedAt"],
        required(challenge + "/updatedAt")),
    FieldCase(
        "v3-example.json",
        ["challenges", id, "tasks", "water", "title"],
        required(task + "/title")),
    FieldCase(
        "v3-example.json",
        ["challenges", id, "tasks", "water", "rules"],
        required(task + "/rules")),
    FieldCase(
        "v3-example.json",
        ["challenges", id, "tasks", "water", "archivedFrom"],
        required(task + "/archivedFrom")),
    FieldCase(
        "v3-example.json",
        [
            "challenges", id, "tasks", "water", "rules", "0",
            "type",
        ], required(task + "/rules/0/type")),
    FieldCase(
        "v3-example.json",
        [
            "challenges", id, "tasks", "water", "rules", "0",
            "target",
        ], required(task + "/rules/0/target")),
    FieldCase(
        "v3-example.json",
        [
            "challenges", id, "tasks", "water", "rules", "0",
            "from",
        ], required(task + "/rules/0/from")),
    FieldCase(
        "v3-example.json",
        ["dayLogs", logKey, "values"],
        required(log + "/values")),
    FieldCase(
        "v3-example.json", ["dayLogs", logKey, "note"],
        required(log + "/note")),
    FieldCase(
        "v3-example.json", ["dayLogs", logKey, "mood"],
        required(log + "/mood")),
    FieldCase(
        "v3-example.json",
        ["dayLogs", logKey, "updatedAt"],
        required(log + "/updatedAt")),
    FieldCase(
        "v3-example.json", ["tombstones", deletedID, "deletedAt"],
        required(tombstone + "/deletedAt")),
    // Version 2: its own challenges and tasks; its settings require only two fields.
    FieldCase("v2.json", ["exportedAt"], required("/exportedAt")),
    FieldCase("v2.json", ["deviceId"], required("/deviceId")),
    FieldCase("v2.json", ["settings"], required("/settings")),
    FieldCase(
        "v2.json", ["challenges"],
        [
            "/challenges: is required",
            log + ": challenge 0193a5b2-0001-7000-8000-000000000001 is not in this file, live or"
                + " deleted (a day log needs its challenge or its tombstone)",
        ]),
    FieldCase("v2.json", ["dayLogs"], required("/dayLogs")),
    FieldCase("v2.json", ["tombstones"], required("/tombstones")),
    FieldCase("v2.json", ["settings", "dayStartHour"], required("/settings/dayStartHour")),
    FieldCase("v2.json", ["settings", "theme"], required("/settings/theme")),
    FieldCase("v2.json", ["settings", "weekStartsOn"], []),
    FieldCase(
        "v2.json", ["challenges", id, "title"],
        required(challenge + "/title")),
    FieldCase(
        "v2.json", ["challenges", id, "startDate"],
        required(challenge + "/startDate")),
    FieldCase(
        "v2.json", ["challenges", id, "durationDays"],
        required(challenge + "/durationDays")),
    FieldCase(
        "v2.json", ["challenges", id, "tasks"],
        required(challenge + "/tasks")),
    FieldCase(
        "v2.json", ["challenges", id, "createdAt"],
        required(challenge + "/createdAt")),
    FieldCase(
        "v2.json", ["challenges", id, "updatedAt"],
        required(challenge + "/updatedAt")),
    FieldCase(
        "v2.json", ["challenges", id, "tasks", "0", "id"],
        required(challenge + "/tasks/0/id")),
    FieldCase(
        "v2.json", ["challenges", id, "tasks", "0", "title"],
        required(challenge + "/tasks/0/title")),
    FieldCase(
        "v2.json", ["challenges", id, "tasks", "0", "type"],
        required(challenge + "/tasks/0/type")),
    FieldCase(
        "v2.json", ["challenges", id, "tasks", "0", "target"],
        required(challenge + "/tasks/0/target")),
    FieldCase(
        "v2.json", ["dayLogs", logKey, "values"],
        required(log + "/values")),
    FieldCase(
        "v2.json", ["dayLogs", logKey, "note"],
        required(log + "/note")),
    FieldCase(
        "v2.json", ["dayLogs", logKey, "mood"],
        required(log + "/mood")),
    FieldCase(
        "v2.json", ["dayLogs", logKey, "updatedAt"],
        required(log + "/updatedAt")),
    // Version 1: its own challenges, goals, logs and deleted entries; its settings have two
    // fields.
    FieldCase("v1.json", ["deviceId"], required("/deviceId")),
    FieldCase("v1.json", ["settings"], required("/settings")),
    FieldCase(
        "v1.json", ["challenges"],
        [
            "/challenges: is required",
            "/logs/0/challengeId: challenge stretch is not in this file",
            "/logs/1/challengeId: challenge 0193a5b2-0001-7000-8000-000000000001 is not in this file",
        ]),
    FieldCase("v1.json", ["logs"], required("/logs")),
    FieldCase("v1.json", ["deleted"], required("/deleted")),
    FieldCase("v1.json", ["settings", "dayStartHour"], required("/settings/dayStartHour")),
    FieldCase("v1.json", ["settings", "theme"], required("/settings/theme")),
    FieldCase(
        "v1.json", ["settings", "weekStartsOn"], adding: #""monday""#,
        ["/settings/weekStartsOn: unknown field"]),
    // Without its id the challenge cannot be told apart, so its logs name no challenge.
    FieldCase(
        "v1.json", ["challenges", "0", "id"],
        [
            "/challenges/0/id: is required",
            "/logs/1/challengeId: challenge 0193a5b2-0001-7000-8000-000000000001 is not in this file",
        ]),
    FieldCase("v1.json", ["challenges", "0", "title"], required("/challenges/0/title")),
    FieldCase("v1.json", ["challenges", "0", "startDate"], required("/challenges/0/startDate")),
    FieldCase(
        "v1.json", ["challenges", "0", "durationDays"], required("/challenges/0/durationDays")),
    FieldCase("v1.json", ["challenges", "0", "goal"], required("/challenges/0/goal")),
    FieldCase("v1.json", ["challenges", "0", "updatedAt"], required("/challenges/0/updatedAt")),
    FieldCase("v1.json", ["challenges", "0", "goal", "type"], required("/challenges/0/goal/type")),
    FieldCase(
        "v1.json", ["challenges", "0", "goal", "target"], required("/challenges/0/goal/target")),
    FieldCase(
        "v1.json", ["challenges", "0", "goal", "from"], adding: #""2026-03-01""#,
        ["/challenges/0/goal/from: unknown field"]),
    FieldCase("v1.json", ["logs", "0", "challengeId"], required("/logs/0/challengeId")),
    FieldCase("v1.json", ["logs", "0", "date"], required("/logs/0/date")),
    FieldCase("v1.json", ["logs", "0", "value"], required("/logs/0/value")),
    FieldCase("v1.json", ["logs", "0", "note"], required("/logs/0/note")),
    FieldCase("v1.json", ["logs", "0", "updatedAt"], required("/logs/0/updatedAt")),
    FieldCase("v1.json", ["deleted", "0", "id"], required("/deleted/0/id")),
    FieldCase("v1.json", ["deleted", "0", "deletedAt"], required("/deleted/0/deletedAt")),
]

@Suite struct ReaderFieldTests {
    /// The names are a list beside the cases: a case out of step would read a field as another.
    @Test func eachFieldIsNamedAsItsCase() {
        func check<Field: ObjectField>(_: Field.Type) {
            #expect(Field.names.map(\.description) == Field.allCases.map { "\($0)" })
        }
        typealias Decoder = DocumentDecoder
        check(Decoder.SettingsField.self)
        check(Decoder.PremiumField.self)
        check(Decoder.AppLockField.self)
        check(Decoder.ChallengeField.self)
        check(Decoder.TaskField.self)
        check(Decoder.RuleField.self)
        check(Decoder.DayLogField.self)
        check(Decoder.TombstoneField.self)
        check(Decoder.ChallengeV2Field.self)
        check(Decoder.TaskV2Field.self)
        check(Decoder.ChallengeV1Field.self)
        check(Decoder.LogV1Field.self)
        check(Decoder.DeletedV1Field.self)
    }

    @Test(arguments: fieldCases)
    func eachRequiredFieldIsReportedByName(_ edit: FieldCase) throws {
        let issues: [String]
        do {
            _ = try BackupReader.read(Array(try edit.text().utf8))
            issues = []
        } catch let error as BackupFileError {
            guard case .invalid(let found) = error else {
                Issue.record("expected a readable file with issues, got \(error)")
                return
            }
            issues = found.map(\.description)
        }
        #expect(issues == edit.expected)
    }
}
