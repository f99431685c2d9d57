/// The typed form of a schema-4 backup (FORMAT.md §1.2, §4.1). Older schemas are migrated into it.
///
/// Collections that are JSON objects in the file are sorted arrays here, ordered the way the
/// canonical writer orders their keys (UTF-8 bytes of the key). Sorted arrays make the
/// writer a straight walk and the merge a linear two-way merge, and cost one allocation per
/// collection instead of a hash table, which matters at a million day logs.
public struct BackupDocument: Equatable, Sendable {
    /// `"habit-backup"`, the `format` of every file from version 3 on: a later file with another
    /// is an error, an older one must have none (FORMAT.md §2).
    public static let format = "habit-backup"
    /// 4 (FORMAT.md §2.4): what the reader migrates every file into and the writer writes by
    /// default. A file above it is refused as written by a newer version (exit 7).
    public static let currentSchemaVersion = 4

    /// When the file was written; the app sets it on writing (FORMAT.md §5.1 rule 6), and the
    /// stale guard compares it with the window (rule 7).
    public var exportedAt: Timestamp
    /// The device this document belongs to; a merge or a replace keeps the local one.
    public var deviceId: DeviceID
    /// The user's preferences: a merge keeps the local ones, a replace takes the backup's but
    /// for `premium` and `appLock` (FORMAT.md §5.1 rule 6).
    public var settings: Settings
    /// Sorted by `id`, unique.
    public var challenges: [Challenge]
    /// Sorted by `key` (its UTF-8 bytes), unique. Each names a live challenge or, "kept"
    /// (FORMAT.md §2.4), a tombstone: a kept log waits for an edit that revives its challenge.
    /// Stored compactly (`DayLogStore`): they are most of a large document.
    public var dayLogs: DayLogStore
    /// Sorted by `id`, unique.
    public var tombstones: [Tombstone]

    /// A document from its parts. The arrays must be sorted and unique as documented above: the
    /// reader and the merge make them so, and the writer and the merge rely on it.
    public init(
        exportedAt: Timestamp, deviceId: DeviceID, settings: Settings = Settings(),
        challenges: [Challenge] = [], dayLogs: some Sequence<DayLog> = DayLogStore(),
        tombstones: [Tombstone] = []
    ) {
        self.exportedAt = exportedAt
        self.deviceId = deviceId
        self.settings = settings
        self.challenges = challenges
        self.dayLogs = dayLogs as? DayLogStore ?? DayLogStore(dayLogs)
        self.tombstones = tombstones
    }
}

/// The user's preferences (FORMAT.md §1.2). They travel in backups but belong to the device:
/// a merge keeps the local ones (FORMAT.md §5.1 rule 6).
public struct Settings: Equatable, Sendable {
    /// The day the app's weeks begin on.
    public enum WeekStart: String, Sendable, CaseIterable { case monday, sunday, saturday }
    /// The app's appearance; `system` follows the device's.
    public enum Theme: String, Sendable, CaseIterable { case system, light, dark }

    /// 0…4: the hour a day begins, so that 01:30 with a start at 2 belongs to the day before
    /// (FORMAT.md §7).
    public var dayStartHour: Int
    /// `monday` unless the user chose otherwise.
    public var weekStartsOn: WeekStart
    /// `system` unless the user chose otherwise.
    public var theme: Theme
    /// The daily reminder's local time; nil (written as null) for no reminder.
    public var reminderTime: ReminderTime?
    /// The last successful premium check, nil if none; `Entitlement` decides from it whether
    /// paid features are on (FORMAT.md §10). Import never changes it.
    public var premium: Premium?
    /// The app lock, nil when the file has none; import never changes it.
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
    /// 0…23.
    public var hour: Int
    /// 0…59.
    public var minute: Int

    /// Nil unless `hour` is 0…23 and `minute` 0…59.
    public init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// Parses exactly `HH:MM`, two digits each; nil for anything else, such as `7:30` or
    /// `24:00`.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
            bytes.indices.allSatisfy({ $0 == 2 || (48...57).contains(bytes[$0]) })
        else { return nil }
        let digit = { (index: Int) in Int(bytes[index]) - 48 }
        self.init(hour: digit(0) * 10 + digit(1), minute: digit(3) * 10 + digit(4))
    }

    /// `HH:MM`, zero-padded, as the file holds it.
    public var description: String {
        (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}

/// The last successful premium check (`settings.premium`, FORMAT.md §3.6), as
/// `Entitlement.recordValidation(at:plan:expiresAt:)` records it.
public struct Premium: Equatable, Sendable {
    /// The plan's name, 1…64 characters.
    public var plan: String
    /// When the check succeeded (the server's time when known); the grace runs from it.
    public var validatedAt: Timestamp
    /// When the plan itself ends; nil while it renews until cancelled.
    public var expiresAt: Timestamp?

    /// A check's result as the file holds it.
    public init(plan: String, validatedAt: Timestamp, expiresAt: Timestamp?) {
        self.plan = plan
        self.validatedAt = validatedAt
        self.expiresAt = expiresAt
    }
}

/// Whether and how the app is locked (`settings.appLock`, FORMAT.md §3.6): local to the
/// device, so import never changes it (FORMAT.md §5.1 rule 6).
public struct AppLock: Equatable, Sendable {
    /// Whether the lock is on.
    public var enabled: Bool
    /// The app's name for how it unlocks, 1…32 characters; BackupKit checks only its length.
    public var method: String

    /// An app lock as the file holds it.
    public init(enabled: Bool, method: String) {
        self.enabled = enabled
        self.method = method
    }
}

/// A challenge: tasks to meet every day for `durationDays` days from `startDate` (FORMAT.md
/// §1.2). Merged whole with its tasks: the copy with the later `updatedAt` wins (FORMAT.md
/// §5.1 rule 2).
public struct Challenge: Equatable, Sendable {
    /// Stable across devices: the key challenges, their day logs and tombstones are merged by.
    public var id: ChallengeID
    /// 1…120 characters without control characters (FORMAT.md §3.3).
    public var title: String
    /// The first day; with `durationDays`, which days count (`endDate`, `contains(_:)`).
    public var startDate: DayKey
    /// 1…365 days, `startDate` included.
    public var durationDays: Int
    /// Sorted by `id`, unique.
    public var tasks: [HabitTask]
    /// Sorted, unique, inside the challenge's days.
    public var pausedDays: [DayKey]
    /// When the challenge was made; `updatedAt` is never before it.
    public var createdAt: Timestamp
    /// The last edit of the challenge or any of its tasks, the stamp the merge compares
    /// (FORMAT.md §5.1 rule 2): every edit must move it forward (`HybridLogicalClock`).
    public var updatedAt: Timestamp

    /// A challenge from its parts; `tasks` and `pausedDays` must be sorted as documented.
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
    /// Unique within its challenge; a day log's `values` name the task by it.
    public var id: TaskID
    /// 1…120 characters without control characters (FORMAT.md §3.3).
    public var title: String
    /// Non-empty, strictly increasing `from`: goal edits add a rule, so the past keeps the
    /// goal that was in force then.
    public var rules: [GoalRule]
    /// The first day the task is no longer live (it asks nothing from then on), after the first
    /// rule's `from`; nil while live. At most 8 tasks of a challenge have nil.
    public var archivedFrom: DayKey?

    /// A task from its parts; `rules` must be non-empty with strictly increasing `from`.
    public init(id: TaskID, title: String, rules: [GoalRule], archivedFrom: DayKey? = nil) {
        self.id = id
        self.title = title
        self.rules = rules
        self.archivedFrom = archivedFrom
    }
}

/// A task's goal from day `from` until the next rule's `from` (FORMAT.md §7), so a goal edit
/// never rescores the past.
public struct GoalRule: Equatable, Sendable {
    /// How a day's value is judged: `check` is met by 1 or more, `count` and `minutes` by at
    /// least `target` (`isMet(by:)`).
    public enum Kind: String, Sendable, CaseIterable { case check, count, minutes }

    /// The first day the rule is in force; the first rule's is on or after the challenge's start.
    public var from: DayKey
    /// Whether the task is ticked off, counted or timed.
    public var type: Kind
    /// 1…9,999, exactly 1 for `check`: the value a day needs to meet the rule.
    public var target: Int
    /// Absent (nil) for `check`, present (possibly empty) for `count` and `minutes`.
    public var unit: String?

    /// A rule from its parts; `unit` must be nil for `check` and only for `check`.
    public init(from: DayKey, type: Kind, target: Int, unit: String?) {
        self.from = from
        self.type = type
        self.target = target
        self.unit = unit
    }
}

/// The key of a day log: `<challengeId>/<YYYY-MM-DD>`.
public struct DayLogKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The challenge logged: live, or tombstoned for a kept log (FORMAT.md §2.4).
    public var challengeID: ChallengeID
    /// The local calendar day logged, not an instant (FORMAT.md §7).
    public var day: DayKey

    /// The key of `challengeID`'s log on `day`.
    public init(challengeID: ChallengeID, day: DayKey) {
        self.challengeID = challengeID
        self.day = day
    }

    /// `<challengeId>/<YYYY-MM-DD>`, the key as the file holds it.
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

/// What was logged for one challenge on one day (FORMAT.md §1.2). Merged on its own, by key,
/// the later `updatedAt` winning whatever became of the challenge (FORMAT.md §5.1 rule 5).
public struct DayLog: Equatable, Sendable {
    /// The challenge and the day; unique in a document.
    public var key: DayLogKey
    /// Task id → value 0…9,999, sorted by task id, unique.
    public var values: [TaskValue]
    /// Up to 2,000 characters; newlines and tabs allowed (FORMAT.md §3.3).
    public var note: String
    /// 1…5, or nil when none was given.
    public var mood: Int?
    /// The last edit of this log, the stamp the merge compares (FORMAT.md §5.1 rule 2).
    public var updatedAt: Timestamp

    /// A day log from its parts; `values` must be sorted by task id, unique.
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

/// One task's value in a day log.
public struct TaskValue: Equatable, Sendable {
    /// A task of the log's challenge, or one it no longer has, which then scores nothing
    /// (FORMAT.md §1.2).
    public var taskID: TaskID
    /// 0…9,999: a count, minutes, or for a check task 1 or more for done.
    public var value: Int

    /// A task's value as the file holds it.
    public init(taskID: TaskID, value: Int) {
        self.taskID = taskID
        self.value = value
    }
}

/// A deleted challenge: keeps it deleted against copies last edited at or before `deletedAt`
/// and keeps its day logs (FORMAT.md §2.4, §5.1 rules 3–5), until it expires out of the
/// merge's window.
public struct Tombstone: Equatable, Sendable {
    /// The deleted challenge's id; never also a live challenge of the same document.
    public var id: ChallengeID
    /// When the challenge was deleted: a later edit revives it (FORMAT.md §5.1 rule 4), and the
    /// tombstone expires once this is older than the window, 90 days by default.
    public var deletedAt: Timestamp

    /// A tombstone as the file holds it.
    public init(id: ChallengeID, deletedAt: Timestamp) {
        self.id = id
        self.deletedAt = deletedAt
    }
}
