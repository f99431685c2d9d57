import BackupKit
import Testing

private let challenge = "/challenges/0193a5b2-0001-7000-8000-000000000001"
private let task = challenge + "/tasks/water"
private let log = "/dayLogs/0193a5b2-0001-7000-8000-000000000001~12026-03-08"
private let firstRule =
    #"{ "from": "2026-03-01", "type": "count", "target": 6, "unit": "glasses" }"#

/// `count` tasks named t00, t01…, the first `live` of them live, the rest archived.
private func tasks(_ count: Int, live: Int) -> String {
    let entries = (0..<count).map { index in
        let name = index < 10 ? "t0\(index)" : "t\(index)"
        let archived = index < live ? "null" : #""2026-03-02""#
        return
            #""\#(name)": { "title": "T", "rules": [\#(firstRule)], "archivedFrom": \#(archived) }"#
    }
    return "\"tasks\": {" + entries.joined(separator: ",") + "}"
}

private let tasksText = """
    "tasks": {
            "water": {
              "title": "Drink water",
              "rules": [
                { "from": "2026-03-01", "type": "count", "target": 6, "unit": "glasses" },
                { "from": "2026-03-10", "type": "count", "target": 8, "unit": "glasses" }
              ],
              "archivedFrom": null
            }
          }
    """

/// Every FORMAT.md §1.2 rule at its boundary, on both sides: the example edited once, and the
/// pointers the reader must report (none for the passing side).
let boundaryCases: [Edit] = [
    Edit("format exact", #""habit-backup""#, #""habit-backups""#, ["/format"]),
    Edit("schemaVersion 3.0 is 3", #""schemaVersion": 3"#, #""schemaVersion": 3.0"#),
    Edit("schemaVersion 0", #""schemaVersion": 3"#, #""schemaVersion": 0"#, ["/schemaVersion"]),
    Edit("timestamp without fraction", "22:14:03.120Z", "22:14:03Z"),
    Edit("timestamp long fraction", "22:14:03.120Z", "22:14:03.1209999Z"),
    Edit("timestamp offset", "22:14:03.120Z", "22:14:03.120+00:00", ["/exportedAt"]),
    Edit("timestamp lower-case t", "2026-11-29T22", "2026-11-29t22", ["/exportedAt"]),
    Edit("timestamp year 2000", "2026-11-29T22:14:03.120Z", "2000-01-01T00:00:00Z"),
    Edit(
        "timestamp year 1999", "2026-11-29T22:14:03.120Z", "1999-12-31T23:59:59Z", ["/exportedAt"]),
    Edit("timestamp year 9999", "2026-11-29T22:14:03.120Z", "9999-12-31T23:59:59.999Z"),
    Edit("timestamp hour 24", "2026-11-29T22:14:03.120Z", "2026-11-29T24:00:00Z", ["/exportedAt"]),
    Edit(
        "timestamp leap second", "2026-11-29T22:14:03.120Z", "2026-12-31T23:59:60Z", ["/exportedAt"]
    ),
    Edit("timestamp empty fraction", "22:14:03.120Z", "22:14:03.Z", ["/exportedAt"]),
    Edit("timestamp ending at its point", "22:14:03.120Z", "22:14:03.", ["/exportedAt"]),
    Edit("timestamp ending in a digit", "22:14:03.120Z", "22:14:03.120", ["/exportedAt"]),
    Edit("device id 64", "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a", String(repeating: "a", count: 64)),
    Edit(
        "device id 65", "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a", String(repeating: "a", count: 65),
        ["/deviceId"]),
    Edit("device id space", "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a", "a b", ["/deviceId"]),
    Edit("device id empty", "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a", "", ["/deviceId"]),
    Edit("dayStartHour 4", #""dayStartHour": 2"#, #""dayStartHour": 4"#),
    Edit(
        "dayStartHour 5", #""dayStartHour": 2"#, #""dayStartHour": 5"#, ["/settings/dayStartHour"]),
    Edit(
        "dayStartHour -1", #""dayStartHour": 2"#, #""dayStartHour": -1"#, ["/settings/dayStartHour"]
    ),
    Edit("weekStartsOn saturday", #""monday""#, #""saturday""#),
    Edit("weekStartsOn friday", #""monday""#, #""friday""#, ["/settings/weekStartsOn"]),
    Edit("theme dark", #""system""#, #""dark""#),
    Edit("theme blue", #""system""#, #""blue""#, ["/settings/theme"]),
    Edit("reminderTime 23:59", #""20:30""#, #""23:59""#),
    Edit("reminderTime null", #""20:30""#, "null"),
    Edit("reminderTime 24:00", #""20:30""#, #""24:00""#, ["/settings/reminderTime"]),
    Edit("reminderTime 8:30", #""20:30""#, #""8:30""#, ["/settings/reminderTime"]),
    Edit("reminderTime missing", #""reminderTime": "20:30","#, "", ["/settings/reminderTime"]),
    Edit(
        "premium optional",
        #""premium": { "plan": "yearly", "validatedAt": "2026-11-28T08:00:00.000Z", "expiresAt": "2027-05-01T00:00:00.000Z" },"#,
        ""),
    Edit(
        "premium expiresAt null", #""expiresAt": "2027-05-01T00:00:00.000Z""#, #""expiresAt": null"#
    ),
    Edit("premium plan empty", #""plan": "yearly""#, #""plan": """#, ["/settings/premium/plan"]),
    Edit(
        "premium plan 64", #""plan": "yearly""#,
        "\"plan\": \"\(String(repeating: "p", count: 64))\""),
    Edit(
        "premium plan 65", #""plan": "yearly""#,
        "\"plan\": \"\(String(repeating: "p", count: 65))\"", ["/settings/premium/plan"]),
    Edit(
        "appLock optional", #"000Z" },\#n    "appLock": { "enabled": true, "method": "pin" }"#,
        #"000Z" }"#),
    Edit(
        "appLock method 32", #""method": "pin""#,
        "\"method\": \"\(String(repeating: "m", count: 32))\""),
    Edit(
        "appLock method 33", #""method": "pin""#,
        "\"method\": \"\(String(repeating: "m", count: 33))\"", ["/settings/appLock/method"]),
    Edit(
        "appLock enabled not bool", #""enabled": true"#, #""enabled": 1"#,
        ["/settings/appLock/enabled"]),
    Edit("title 120", #""30 days of water""#, "\"\(String(repeating: "é", count: 120))\""),
    Edit(
        "title 121", #""30 days of water""#, "\"\(String(repeating: "é", count: 121))\"",
        [challenge + "/title"]),
    Edit("title empty", #""30 days of water""#, #""""#, [challenge + "/title"]),
    Edit("title bell", #""30 days of water""#, #""30 days\u0007""#, [challenge + "/title"]),
    Edit("title C1 control", #""30 days of water""#, #""30 days\u0085""#, [challenge + "/title"]),
    Edit("title newline", #""Drink water""#, #""Drink\nwater""#, [task + "/title"]),
    Edit("durationDays 365", #""durationDays": 30"#, #""durationDays": 365"#),
    Edit(
        "durationDays 366", #""durationDays": 30"#, #""durationDays": 366"#,
        [challenge + "/durationDays"]),
    Edit(
        "durationDays 0", #""durationDays": 30"#, #""durationDays": 0"#,
        [challenge + "/durationDays"]),
    Edit(
        "durationDays 30.5", #""durationDays": 30"#, #""durationDays": 30.5"#,
        [challenge + "/durationDays"]),
    Edit("8 live tasks", tasksText, tasks(8, live: 8)),
    Edit("9 live tasks", tasksText, tasks(9, live: 9), [challenge + "/tasks"]),
    Edit("64 tasks", tasksText, tasks(64, live: 8)),
    Edit("65 tasks", tasksText, tasks(65, live: 8), [challenge + "/tasks"]),
    Edit("no tasks", tasksText, #""tasks": {}"#, [challenge + "/tasks"]),
    Edit("pausedDays last day", #"["2026-03-05"]"#, #"["2026-03-30"]"#),
    Edit(
        "pausedDays after last day", #"["2026-03-05"]"#, #"["2026-03-31"]"#,
        [challenge + "/pausedDays/0"]),
    Edit(
        "pausedDays before start", #"["2026-03-05"]"#, #"["2026-02-28"]"#,
        [challenge + "/pausedDays/0"]),
    Edit(
        "pausedDays repeated", #"["2026-03-05"]"#, #"["2026-03-05", "2026-03-05"]"#,
        [challenge + "/pausedDays/1"]),
    Edit(
        "pausedDays unsorted", #"["2026-03-05"]"#, #"["2026-03-06", "2026-03-05"]"#,
        [challenge + "/pausedDays/1"]),
    Edit("updatedAt equal createdAt", "2026-03-10T07:12:44.512Z", "2026-02-28T19:00:00.000Z"),
    Edit(
        "updatedAt before createdAt", "2026-03-10T07:12:44.512Z", "2026-02-28T18:59:59.999Z",
        [challenge + "/updatedAt"]),
    Edit("day key 2028-02-29", "001/2026-03-08", "001/2028-02-29"),
    Edit(
        "day key 2026-02-29", "001/2026-03-08", "001/2026-02-29",
        [log.replacingOccurrences(of: "2026-03-08", with: "2026-02-29")]),
    Edit(
        "day key month 13", "001/2026-03-08", "001/2026-13-01",
        [log.replacingOccurrences(of: "2026-03-08", with: "2026-13-01")]),
    Edit("day key 2199", "001/2026-03-08", "001/2199-12-31"),
    Edit(
        "day key 2200", "001/2026-03-08", "001/2200-01-01",
        [log.replacingOccurrences(of: "2026-03-08", with: "2200-01-01")]),
    Edit(
        "rules empty",
        [
            (firstRule + ",", ""),
            (#"{ "from": "2026-03-10", "type": "count", "target": 8, "unit": "glasses" }"#, ""),
        ], [task + "/rules"]),
    Edit(
        "rules same from", #""from": "2026-03-10""#, #""from": "2026-03-01""#,
        [task + "/rules/1/from"]),
    Edit(
        "rules decreasing", #""from": "2026-03-10""#, #""from": "2026-02-28""#,
        [task + "/rules/1/from"]),
    Edit(
        "first rule before start", #""from": "2026-03-01""#, #""from": "2026-02-28""#,
        [task + "/rules/0/from"]),
    Edit("check target 1", firstRule, #"{ "from": "2026-03-01", "type": "check", "target": 1 }"#),
    Edit(
        "check target 2", firstRule, #"{ "from": "2026-03-01", "type": "check", "target": 2 }"#,
        [task + "/rules/0/target"]),
    Edit(
        "check with unit", firstRule,
        #"{ "from": "2026-03-01", "type": "check", "target": 1, "unit": "" }"#,
        [task + "/rules/0/unit"]),
    Edit(
        "count without unit", firstRule,
        #"{ "from": "2026-03-01", "type": "minutes", "target": 6 }"#, [task + "/rules/0/unit"]),
    Edit(
        "type weekly", #""type": "count", "target": 6"#, #""type": "weekly", "target": 6"#,
        [task + "/rules/0/type"]),
    Edit("target 9999", #""target": 6"#, #""target": 9999"#),
    Edit("target 10000", #""target": 6"#, #""target": 10000"#, [task + "/rules/0/target"]),
    Edit("target 0", #""target": 6"#, #""target": 0"#, [task + "/rules/0/target"]),
    Edit("target 6.0", #""target": 6"#, #""target": 6.0"#),
    Edit("target 6e0", #""target": 6"#, #""target": 6e0"#),
    Edit("target 60e-1", #""target": 6"#, #""target": 60e-1"#),
    Edit("target 6.5", #""target": 6"#, #""target": 6.5"#, [task + "/rules/0/target"]),
    Edit("target 1e400", #""target": 6"#, #""target": 1e400"#, [task + "/rules/0/target"]),
    Edit("target string", #""target": 6"#, #""target": "6""#, [task + "/rules/0/target"]),
    Edit("unit empty", #""target": 6, "unit": "glasses""#, #""target": 6, "unit": """#),
    Edit(
        "unit 24", #""target": 6, "unit": "glasses""#,
        "\"target\": 6, \"unit\": \"\(String(repeating: "u", count: 24))\""),
    Edit(
        "unit 25", #""target": 6, "unit": "glasses""#,
        "\"target\": 6, \"unit\": \"\(String(repeating: "u", count: 25))\"",
        [task + "/rules/0/unit"]),
    Edit(
        "archivedFrom after first from", #""archivedFrom": null"#, #""archivedFrom": "2026-03-02""#),
    Edit(
        "archivedFrom on first from", #""archivedFrom": null"#, #""archivedFrom": "2026-03-01""#,
        [task + "/archivedFrom"]),
    Edit(
        "archivedFrom missing", #"],\#n          "archivedFrom": null"#, "]",
        [task + "/archivedFrom"]),
    Edit("value 9999", #""water": 8 }"#, #""water": 9999 }"#),
    Edit("value 0", #""water": 8 }"#, #""water": 0 }"#),
    Edit("value -0", #""water": 8 }"#, #""water": -0 }"#),
    Edit("value 10000", #""water": 8 }"#, #""water": 10000 }"#, [log + "/values/water"]),
    Edit("value -1", #""water": 8 }"#, #""water": -1 }"#, [log + "/values/water"]),
    Edit("value key not an id", #""water": 8 }"#, #""wa ter": 8 }"#, [log + "/values/wa ter"]),
    Edit(
        "note 2000", #""Late one, counted for Saturday""#,
        "\"\(String(repeating: "n", count: 2000))\""),
    Edit(
        "note 2001", #""Late one, counted for Saturday""#,
        "\"\(String(repeating: "n", count: 2001))\"", [log + "/note"]),
    Edit(
        "note with newline and tab", #""Late one, counted for Saturday""#, #""Late\none,\tcounted""#
    ),
    Edit("mood 5", #""mood": 4"#, #""mood": 5"#),
    Edit("mood null", #""mood": 4"#, #""mood": null"#),
    Edit("mood 6", #""mood": 4"#, #""mood": 6"#, [log + "/mood"]),
    Edit("mood 0", #""mood": 4"#, #""mood": 0"#, [log + "/mood"]),
    Edit(
        "day log of a missing challenge", "001/2026-03-08", "002/2026-03-08",
        [log.replacingOccurrences(of: "001~1", with: "002~1")]),
    Edit(
        "day log key without a day", "001/2026-03-08", "001",
        ["/dayLogs/0193a5b2-0001-7000-8000-000000000001"]),
    Edit(
        "tombstone of a live challenge", "0000000000ff", "000000000001",
        ["/tombstones/0193a5b2-0001-7000-8000-000000000001"]),
    Edit(
        "unknown field", #""durationDays": 30,"#, #""durationDays": 30, "color": "blue","#,
        [challenge + "/color"]),
    Edit("missing field", #""note": "Late one, counted for Saturday","#, "", [log + "/note"]),
    Edit(
        "duplicate field", #""theme": "system","#, #""theme": "system", "theme": "dark","#,
        ["/settings/theme"]),
    Edit(
        "duplicate value key", #""water": 8 }"#, #""water": 8, "water": 7 }"#,
        [log + "/values/water"]),
    Edit(
        "slash in an unknown key", #""durationDays": 30,"#, #""durationDays": 30, "a/b~c": 1,"#,
        [challenge + "/a~1b~0c"]),
]

@Suite struct ValidationRuleTests {
    @Test(arguments: boundaryCases)
    func boundary(_ edit: Edit) throws {
        let text = try edit.apply(to: exampleText())
        #expect(try reportedPointers(text).get() == edit.pointers)
    }

    @Test func everyFailureIsReportedNotOnlyTheFirst() throws {
        let edits = Edit(
            "three problems",
            [
                (#""dayStartHour": 2"#, #""dayStartHour": 9"#), (#""target": 6"#, #""target": 0"#),
                (#""mood": 4"#, #""mood": 7"#),
            ])
        #expect(
            try reportedPointers(edits.apply(to: exampleText())).get().sorted()
                == [task + "/rules/0/target", log + "/mood", "/settings/dayStartHour"])
    }

    @Test func issuesStopAtTheLimit() throws {
        let text = try Edit(
            "9 live tasks with bad targets", tasksText,
            tasks(9, live: 9).replacingOccurrences(of: #""target": 6"#, with: #""target": 0"#)
        ).apply(to: exampleText())
        do {
            _ = try BackupReader.read(Array(text.utf8), options: ReadOptions(maxIssues: 4))
            Issue.record("expected invalid")
        } catch {
            guard case .invalid(let issues) = error else { throw error }
            #expect(issues.count == 4)
        }
    }

    /// A null unit says the fix its rule's type needs: a check rule has no unit, the others a
    /// string; the type may come after the unit in the file.
    @Test(arguments: [
        (
            #"{ "from": "2026-03-01", "type": "count", "target": 6, "unit": "glasses" }"#,
            #"{ "unit": null, "from": "2026-03-01", "type": "check", "target": 1 }"#,
            #"must be absent for a check task (remove "unit")"#
        ),
        (
            #""target": 8, "unit": "glasses" }"#, #""target": 8, "unit": null }"#,
            "must be a string (it may be empty), not null"
        ),
    ])
    func aNullUnitIsToldItsFix(_ old: String, _ new: String, _ message: String) throws {
        let text = try Edit("null unit", old, new).apply(to: exampleText())
        do {
            _ = try BackupReader.read(Array(text.utf8))
            Issue.record("expected invalid")
        } catch {
            guard case .invalid(let issues) = error else { throw error }
            #expect(issues.map(\.message) == [message])
            #expect(issues.allSatisfy { $0.pointer.hasSuffix("/unit") })
        }
    }

    @Test func messagesArePlain() throws {
        let text = try Edit("target", #""target": 6"#, #""target": 10000"#).apply(to: exampleText())
        do {
            _ = try BackupReader.read(Array(text.utf8))
            Issue.record("expected invalid")
        } catch {
            #expect(
                error
                    == .invalid([
                        ValidationIssue(
                            pointer: task + "/rules/0/target", message: "must be 1…9999, not 10000",
                            rule: .fields)
                    ]))
        }
    }
}
