/// The typed form of a schema-4 backup (FORMAT.md §1.2, §4.1). Older schemas are migrated into it.
///
/// Collections that are JSON objects in the file are sorted arrays here, ordered the way the
/// canonical writer orders their keys (UTF-8 bytes of the key). Sorted arrays make the
/// writer a straight walk and the merge a linear two-way merge, and cost one allocation per
/// collection instead of a hash table, which matters at a million day logs.
public struct BackupDocument: Equatable, Sendable {
    public static let format = "habit-backup"
    public static let currentSchemaVersion = 4

    public var exportedAt: Timestamp
    public var deviceId: DeviceID
    public var settings: Settings
    /// Sorted by `id`, unique.
    public var challenges: [Challenge]
    /// Sorted by `key` (its UTF-8 bytes), unique. Each names a live challenge or, "kept"
    /// (FORMAT.md §2.4), a tombstone: a kept log waits for an edit that revives its challenge.
    public var dayLogs: [DayLog]
    /// Sorted by `id`, unique.
    public var tombstones: [Tombstone]

    public init(
        exportedAt: Timestamp, deviceId: DeviceID, settings: Settings = Settings(),
        challenges: [Challenge] = [], dayLogs: [DayLog] = [], tombstones: [Tombstone] = []
    ) {
        self.exportedAt = exportedAt
        self.deviceId = deviceId
        self.settings = settings
        self.challenges = challenges
        self.dayLogs = dayLogs
        self.tombstones = tombstones
    }
}

public struct Settings: Equatable, Sendable {
    public enum WeekStart: String, Sendable, CaseIterable { case monday, sunday, saturday }
    public enum Theme: String, Sendable, CaseIterable { case system, light, dark }

    public var dayStartHour: Int
    public var weekStartsOn: WeekStart
    public var theme: Theme
    public var reminderTime: ReminderTime?
    public var premium: Premium?
    public var appLock: AppLock?

    /// The defaults of FORMAT.md §3.6, used by migration and by replace.
    public init(
        dayStartHour: Int = 0, weekStartsOn: WeekStart = .monday, theme: Theme = .system,
        reminderTime: ReminderTime? = nil, premium: Premium? = nil, appLock: AppLock? = nil
    ) {
        self.dayStartHour = dayStartHour
        self.weekStartsOn = weekStartsOn
        self.theme = theme
        self.reminderTime = reminderTime
        self.premium = premium
        self.appLock = appLock
    }
}

/// `HH:MM`, 24-hour.
public struct ReminderTime: Hashable, Sendable, CustomStringConvertible {
    public var hour: Int
    public var minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
            bytes.indices.allSatisfy({ $0 == 2 || (48...57).contains(bytes[$0]) })
        else { return nil }
        let digit = { (index: Int) in Int(bytes[index]) - 48 }
        self.init(hour: digit(0) * 10 + digit(1), minute: digit(3) * 10 + digit(4))
    }

    public var description: String {
        (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}

public struct Premium: Equatable, Sendable {
    public var plan: String
    public var validatedAt: Timestamp
    public var expiresAt: Timestamp?

    public init(plan: String, validatedAt: Timestamp, expiresAt: Timestamp?) {
        self.plan = plan
        self.validatedAt = validatedAt
        self.expiresAt = expiresAt
    }
}

public struct AppLock: Equatable, Sendable {
    public var enabled: Bool
    public var method: String

    public init(enabled: Bool, method: String) {
        self.enabled = enabled
        self.method = method
    }
}

public struct Challenge: Equatable, Sendable {
    public var id: ChallengeID
    public var title: String
    public var startDate: DayKey
    public var durationDays: Int
    /// Sorted by `id`, unique.
    public var tasks: [HabitTask]
    /// Sorted, unique, inside the challenge's days.
    public var pausedDays: [DayKey]
    public var createdAt: Timestamp
    public var updatedAt: Timestamp

    public init(
        id: ChallengeID, title: String, startDate: DayKey, durationDays: Int,
        tasks: [HabitTask], pausedDays: [DayKey] = [], createdAt: Timestamp, updatedAt: Timestamp
    ) {
        self.id = id
        self.title = title
        self.startDate = startDate
        self.durationDays = durationDays
        self.tasks = tasks
        self.pausedDays = pausedDays
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The last day of the challenge (inclusive).
    public var endDate: DayKey { startDate.adding(days: durationDays - 1) }
}

/// A task of a challenge. Named `HabitTask`, not `Task`, so that it never shadows Swift's
/// concurrency `Task` in code that imports BackupKit.
public struct HabitTask: Equatable, Sendable {
    public var id: TaskID
    public var title: String
    /// Non-empty, strictly increasing `from`: goal edits add a rule, so the past keeps the
    /// goal that was in force then.
    public var rules: [GoalRule]
    public var archivedFrom: DayKey?

    public init(id: TaskID, title: String, rules: [GoalRule], archivedFrom: DayKey? = nil) {
        self.id = id
        self.title = title
        self.rules = rules
        self.archivedFrom = archivedFrom
    }
}

public struct GoalRule: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable { case check, count, minutes }

    public var from: DayKey
    public var type: Kind
    public var target: Int
    /// Absent (nil) for `check`, present (possibly empty) for `count` and `minutes`.
    public var unit: String?

    public init(from: DayKey, type: Kind, target: Int, unit: String?) {
        self.from = from
        self.type = type
        self.target = target
        self.unit = unit
    }
}

/// The key of a day log: `<challengeId>/<YYYY-MM-DD>`.
public struct DayLogKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var challengeID: ChallengeID
    public var day: DayKey

    public init(challengeID: ChallengeID, day: DayKey) {
        self.challengeID = challengeID
        self.day = day
    }

    public var description: String { "\(challengeID.rawValue)/\(day)" }

    /// The day first: it is one integer, and the ids of neighbouring keys are mostly equal.
    public static func == (lhs: DayLogKey, rhs: DayLogKey) -> Bool {
        lhs.day == rhs.day && lhs.challengeID == rhs.challengeID
    }

    /// Orders by the UTF-8 bytes of the whole key, as the canonical writer does. This is not
    /// the order of (id, day): `a-b/…` sorts before `a/…` because `-` (0x2D) < `/` (0x2F).
    public static func < (lhs: DayLogKey, rhs: DayLogKey) -> Bool {
        if lhs.challengeID == rhs.challengeID { return lhs.day < rhs.day }
        var left = lhs.challengeID.rawValue.utf8.makeIterator()
        var right = rhs.challengeID.rawValue.utf8.makeIterator()
        let slash = UInt8(ascii: "/")
        while true {
            let a = left.next() ?? slash
            let b = right.next() ?? slash
            if a != b { return a < b }
            // Both ids ended together would mean equal ids, handled above.
        }
    }
}

public struct DayLog: Equatable, Sendable {
    public var key: DayLogKey
    /// Task id → value 0…9,999, sorted by task id, unique.
    public var values: [TaskValue]
    public var note: String
    public var mood: Int?
    public var updatedAt: Timestamp

    public init(
        key: DayLogKey, values: [TaskValue], note: String = "", mood: Int? = nil,
        updatedAt: Timestamp
    ) {
        self.key = key
        self.values = values
        self.note = note
        self.mood = mood
        self.updatedAt = updatedAt
    }
}

public struct TaskValue: Equatable, Sendable {
    public var taskID: TaskID
    public var value: Int

    public init(taskID: TaskID, value: Int) {
        self.taskID = taskID
        self.value = value
    }
}

public struct Tombstone: Equatable, Sendable {
    public var id: ChallengeID
    public var deletedAt: Timestamp

    public init(id: ChallengeID, deletedAt: Timestamp) {
        self.id = id
        self.deletedAt = deletedAt
    }
}
