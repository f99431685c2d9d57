/// The value rules of FORMAT.md §1.2 that every schema version shares, in one place, so the
/// validators of versions 1 and 2 and of the current version cannot drift apart.
enum Rules {
    static let titleLength = 1...120
    static let durationDays = 1...365
    static let tasksPerChallenge = 1...64
    static let liveTasks = 8
    static let target = 1...9_999
    static let unitLength = 0...24
    static let value = 0...9_999
    static let noteLength = 0...2_000
    static let mood = 1...5
    static let dayStartHour = 0...4
    static let planLength = 1...64
    static let lockMethodLength = 1...32

    /// FORMAT.md §3.3: U+0000–U+001F and U+007F–U+009F.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    static func range(_ range: ClosedRange<Int>) -> String {
        "\(range.lowerBound)…\(range.upperBound)"
    }

    static func checkTitle(
        _ title: String, at pointer: @autoclosure () -> String, into issues: inout IssueList
    ) {
        var length = 0
        for scalar in title.unicodeScalars {
            if isControl(scalar) {
                issues.add(
                    .characters, pointer(),
                    "must not contain control characters (U+\(hex(scalar.value)))")
                return
            }
            length += 1
        }
        if !titleLength.contains(length) {
            issues.add(
                .fields, pointer(), "must be \(range(titleLength)) characters, not \(length)")
        }
    }

    static func checkLength(
        _ text: String, _ allowed: ClosedRange<Int>, at pointer: @autoclosure () -> String,
        into issues: inout IssueList
    ) {
        // Counting scalars is a walk; the byte count bounds it cheaply for the common case.
        let bytes = text.utf8.count
        if bytes <= allowed.upperBound, bytes >= allowed.lowerBound { return }
        let length = text.unicodeScalars.count
        if !allowed.contains(length) {
            issues.add(.fields, pointer(), "must be \(range(allowed)) characters, not \(length)")
        }
    }

    static func checkInteger(
        _ value: Int, _ allowed: ClosedRange<Int>, at pointer: @autoclosure () -> String,
        into issues: inout IssueList
    ) {
        if !allowed.contains(value) {
            issues.add(
                .fields, pointer(), "must be \(range(allowed)), not \(ReadInteger.shown(value))")
        }
    }

    /// A goal: `type`, `target` and `unit`, the same in a v1 goal, a v2 task and a v3 rule.
    static func checkGoal(
        type: GoalRule.Kind, target: Int, unit: String?, at pointer: () -> String,
        into issues: inout IssueList
    ) {
        if type == .check {
            if target != 1 {
                issues.add(
                    .fields, pointer() + "/target",
                    "must be 1 for a check task, not \(ReadInteger.shown(target))")
            }
            if unit != nil {
                issues.add(.requiredFields, pointer() + "/unit", "must be absent for a check task")
            }
        } else {
            checkInteger(target, Rules.target, at: pointer() + "/target", into: &issues)
            if let unit {
                checkLength(unit, unitLength, at: pointer() + "/unit", into: &issues)
            } else {
                issues.add(
                    .requiredFields, pointer() + "/unit",
                    "is required for a \(type.rawValue) task (it may be \"\")")
            }
        }
    }

    static func checkMood(
        _ mood: Int?, at pointer: @autoclosure () -> String, into issues: inout IssueList
    ) {
        if let mood, !Rules.mood.contains(mood) {
            issues.add(
                .fields, pointer(),
                "must be null or \(range(Rules.mood)), not \(ReadInteger.shown(mood))")
        }
    }

    /// Strictly increasing by `key`; anything else is reported at the offending item. The
    /// items are a map's members sorted by key, so whatever breaks the order is a duplicate
    /// key or stands for one (FORMAT.md §3.1).
    static func checkOrder<Item, Key: Comparable>(
        _ items: [Item], key: (Item) -> Key, at pointer: (Item) -> String,
        into issues: inout IssueList
    ) {
        for index in items.indices.dropFirst() where !(key(items[index - 1]) < key(items[index])) {
            issues.add(
                .duplicateKeys, pointer(items[index]),
                "is out of order or a duplicate (keys must be sorted and unique)")
        }
    }

    private static func hex(_ value: UInt32) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
