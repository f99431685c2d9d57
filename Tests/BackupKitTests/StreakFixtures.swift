import BackupKit
import Foundation
import Testing

/// Small builders for challenges and day logs, so each streak story reads as its data.
enum StreakFixture {
    static let stamp = Timestamp(millisecondsSince1970: 1_767_225_600_000)  // 2026-01-01

    static func day(_ text: String) throws -> DayKey {
        try #require(DayKey(text), "\(text) is not a day key")
    }

    static func instant(_ text: String) throws -> Timestamp {
        try #require(Timestamp(text), "\(text) is not a timestamp")
    }

    static func zone(_ name: String) throws -> TimeZone {
        try #require(TimeZone(identifier: name), "\(name) is not in the zone database")
    }

    static func id(_ text: String) throws -> Identifier {
        try #require(Identifier(text))
    }

    /// A task whose rules are `(from, type, target)`.
    static func task(
        _ name: String, rules: [(from: String, type: GoalRule.Kind, target: Int)],
        archivedFrom: String? = nil
    ) throws -> HabitTask {
        try HabitTask(
            id: id(name), title: name,
            rules: rules.map { rule in
                try GoalRule(
                    from: day(rule.from), type: rule.type, target: rule.target,
                    unit: rule.type == .check ? nil : "")
            },
            archivedFrom: archivedFrom.map(day))
    }

    static func challenge(
        _ name: String = "challenge-1", start: String, days: Int, tasks: [HabitTask],
        paused: [String] = []
    ) throws -> Challenge {
        try Challenge(
            id: id(name), title: name, startDate: day(start), durationDays: days, tasks: tasks,
            pausedDays: paused.map(day), createdAt: stamp, updatedAt: stamp)
    }

    static func log(_ challenge: Challenge, _ day: DayKey, _ values: [String: Int]) throws -> DayLog
    {
        try DayLog(
            key: DayLogKey(challengeID: challenge.id, day: day),
            values: values.sorted { $0.key < $1.key }.map {
                try TaskValue(taskID: id($0.key), value: $0.value)
            },
            updatedAt: stamp)
    }

    /// Logs `values` on every day from `first` through `last`.
    static func logs(
        _ challenge: Challenge, from first: String, through last: String, _ values: [String: Int]
    ) throws -> [DayLog] {
        let start = try day(first)
        return try (0...start.days(to: day(last))).map { offset in
            try log(challenge, start.adding(days: offset), values)
        }
    }
}
