import BackupKit
import Testing

private let challenge = "/challenges/0193a5b2-0001-7000-8000-000000000001"
private let log = "/dayLogs/0193a5b2-0001-7000-8000-000000000001~12026-03-08"

/// A fixture edited once, and each problem the reader must report with the section of
/// FORMAT.md it breaks, looked up there by hand: `"pointer §rule"`, in order.
struct RuleCase: Sendable, CustomTestStringConvertible {
    var edit: Edit
    var fixture: String
    var expected: [String]
    var testDescription: String { edit.name }

    init(
        _ name: String, in fixture: String = "v3-example.json",
        _ replacements: [(old: String, new: String)], _ expected: [String]
    ) {
        self.edit = Edit(name, replacements)
        self.fixture = fixture
        self.expected = expected
    }
}

let ruleCases: [RuleCase] = [
    RuleCase("§3.6 a required field missing", [(#""mood": 4,"#, "")], [log + "/mood §3.6"]),
    RuleCase(
        "§3 an unknown field", [(#""theme": "system","#, #""theme": "system", "colour": "red","#)],
        ["/settings/colour §3"]),
    RuleCase(
        "§3.1 a duplicate key",
        [(#""durationDays": 30,"#, #""durationDays": 30, "durationDays": 30,"#)],
        [challenge + "/durationDays §3.1"]),
    RuleCase(
        "§3.5 a timestamp with a space for its T",
        [("2026-11-29T22:14:03.120Z", "2026-11-29 22:14:03.120Z")], ["/exportedAt §3.5"]),
    RuleCase(
        "§3.4 a number with a fraction", [(#""dayStartHour": 2"#, #""dayStartHour": 2.5"#)],
        ["/settings/dayStartHour §3.4"]),
    RuleCase(
        "§3.3 a control character in a title",
        [(#""title": "Drink water""#, #""title": "Drink\u0007water""#)],
        [challenge + "/tasks/water/title §3.3"]),
    RuleCase(
        "§1.2 a duration past 365 days", [(#""durationDays": 30"#, #""durationDays": 366"#)],
        [challenge + "/durationDays §1.2"]),
    RuleCase("§1.2 a mood of 6", [(#""mood": 4"#, #""mood": 6"#)], [log + "/mood §1.2"]),
    RuleCase(
        "§1.2 a string where a number goes", [(#""durationDays": 30"#, #""durationDays": "30""#)],
        [challenge + "/durationDays §1.2"]),
    RuleCase(
        "§3.6 a unit on a check task",
        [(#""type": "count", "target": 6, "unit""#, #""type": "check", "target": 1, "unit""#)],
        [challenge + "/tasks/water/rules/0/unit §3.6"]),
    RuleCase(
        "§1.1 another format", [(#""habit-backup""#, #""habit-backups""#)], ["/format §1.1"]),
    RuleCase(
        "§2 no such version", [(#""schemaVersion": 3"#, #""schemaVersion": 0"#)],
        ["/schemaVersion §2"]),
    RuleCase(
        "§2.3 a version 3 day log under a tombstone",
        [
            (
                "0193a5b2-0001-7000-8000-000000000001/2026-03-08",
                "0193a5b2-0001-7000-8000-0000000000ff/2026-03-08"
            )
        ],
        ["/dayLogs/0193a5b2-0001-7000-8000-0000000000ff~12026-03-08 §2.3"]),
    RuleCase(
        "§1.2 a version 4 day log of no challenge",
        [
            (#""schemaVersion": 3"#, #""schemaVersion": 4"#),
            (
                "0193a5b2-0001-7000-8000-000000000001/2026-03-08",
                "0193a5b2-0001-7000-8000-0000000000ee/2026-03-08"
            ),
        ],
        ["/dayLogs/0193a5b2-0001-7000-8000-0000000000ee~12026-03-08 §1.2"]),
    RuleCase(
        "§2.3 a version 1 member in version 3", [(#""tombstones""#, #""logs": [], "tombstones""#)],
        ["/logs §2.3"]),
    RuleCase(
        "§2.1 a version 1 file with a format", in: "v1.json",
        [(#""schemaVersion": 1,"#, #""format": "habit-backup", "schemaVersion": 1,"#)],
        ["/format §2.1"]),
    RuleCase(
        "§2.1 a version 1 deleted id that is live", in: "v1.json",
        [(#"{ "id": "0193a5b2-0001-7000-8000-0000000000ff""#, #"{ "id": "stretch""#)],
        ["/deleted/0/id §2.1"]),
    RuleCase(
        "§2.2 a version 2 task id twice", in: "v2.json",
        [(#"{ "id": "walk""#, #"{ "id": "water""#)], [challenge + "/tasks/1/id §2.2"]),
]

/// Every problem names the section of FORMAT.md whose rule it breaks, so `validate --json`
/// can say where to read why.
@Suite struct IssueRuleTests {
    @Test func everyRuleIsASectionOfTheFormat() throws {
        let anchors = try FormatDocumentTests.anchors()
        for rule in FormatRule.allCases {
            #expect(anchors.contains(rule.rawValue), "§\(rule.rawValue) is not in FORMAT.md")
        }
    }

    @Test(arguments: ruleCases)
    func problemNamesTheRuleItBreaks(_ test: RuleCase) throws {
        let text = try test.edit.apply(
            to: String(decoding: try fixture(test.fixture), as: UTF8.self))
        let error = #expect(throws: BackupFileError.self) {
            try BackupReader.read(Array(text.utf8))
        }
        guard case .invalid(let issues) = error else {
            Issue.record("not a list of problems: \(String(describing: error))")
            return
        }
        #expect(issues.map { "\($0.pointer) §\($0.rule.rawValue)" } == test.expected)
    }

    @Test func notesNameTheRuleThatKeepsTheirLog() throws {
        let text = try Edit("a day log after its challenge", "2026-03-08", "2026-04-08").apply(
            to: exampleText())
        let result = try BackupReader.read(
            Array(text.utf8), options: ReadOptions(collectsNotes: true))
        #expect(result.notes.map(\.rule) == [.fields])
    }
}
