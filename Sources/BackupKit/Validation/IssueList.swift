/// Collects validation issues up to a limit. Pointers and messages are autoclosures, so a
/// valid document builds no strings at all; the rule is a one-byte value beside them.
struct IssueList {
    private(set) var issues: [ValidationIssue] = []
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    var isEmpty: Bool { issues.isEmpty }

    mutating func add(
        _ rule: FormatRule, _ pointer: @autoclosure () -> String,
        _ message: @autoclosure () -> String
    ) {
        guard issues.count < limit else { return }
        issues.append(ValidationIssue(pointer: pointer(), message: message(), rule: rule))
    }

    /// An issue another list found (a walk on another core, a nested decoder).
    mutating func add(_ issue: ValidationIssue) {
        guard issues.count < limit else { return }
        issues.append(issue)
    }
}

/// RFC 6901 pointers to the places of a document (FORMAT.md §3.2: a day-log key's `/` is `~1`).
enum Pointer {
    static func escape(_ component: String) -> String {
        guard component.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") })
        else { return component }
        var escaped = ""
        for character in component {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static func challenge(_ id: ChallengeID) -> String { "/challenges/" + id.rawValue }

    static func task(_ challenge: ChallengeID, _ task: TaskID) -> String {
        "/challenges/" + challenge.rawValue + "/tasks/" + task.rawValue
    }

    static func dayLog(_ key: DayLogKey) -> String {
        "/dayLogs/" + key.challengeID.rawValue + "~1" + key.day.description
    }

    static func tombstone(_ id: ChallengeID) -> String { "/tombstones/" + id.rawValue }
}
