/// Schema version 2 (FORMAT.md §2.2): maps keyed by id like version 3, but `tasks` is an array of
/// single-goal tasks, there are no paused days, no `format`, and settings past
/// `dayStartHour` and `theme` are optional. Day logs and tombstones already have their
/// version-3 shape, so they use the version-3 types.
public enum SchemaV2 {
    /// A version-2 file as read, for `Migration.migrate(_:)` to turn into a `BackupDocument`.
    public struct Document: Equatable, Sendable {
        /// When the file was written; version 2 is the first to say.
        public var exportedAt: Timestamp
        /// The device that wrote the file, kept as `deviceId` by migration.
        public var deviceId: DeviceID
        /// Version 1's settings plus optional ones that 2→3 fills in.
        public var settings: Settings
        /// Sorted by `id`, unique.
        public var challenges: [Challenge]
        /// Sorted by `key`, unique.
        public var dayLogs: DayLogStore
        /// Sorted by `id`, unique.
        public var tombstones: [Tombstone]

        /// A document as the reader decodes it, its arrays sorted as documented above.
        public init(
            exportedAt: Timestamp, deviceId: DeviceID, settings: Settings, challenges: [Challenge],
            dayLogs: DayLogStore, tombstones: [Tombstone]
        ) {
            self.exportedAt = exportedAt
            self.deviceId = deviceId
            self.settings = settings
            self.challenges = challenges
            self.dayLogs = dayLogs
            self.tombstones = tombstones
        }
    }

    /// Version 2's settings: 2→3 gives a missing `weekStartsOn` or `reminderTime` its default
    /// (FORMAT.md §3.6); `premium` and `appLock` stay optional.
    public struct Settings: Equatable, Sendable {
        /// 0…4: the hour a day begins (FORMAT.md §1.2).
        public var dayStartHour: Int
        /// The same three themes as every version.
        public var theme: BackupKit.Settings.Theme
        /// Nil when the file has none; 2→3 makes that `monday`.
        public var weekStartsOn: BackupKit.Settings.WeekStart?
        /// Nil when absent or null; version 3 writes it as null either way.
        public var reminderTime: ReminderTime?
        /// The last successful premium check, if any; import never changes it (FORMAT.md §5.1
        /// rule 6).
        public var premium: Premium?
        /// The app lock, if set; import never changes it (FORMAT.md §5.1 rule 6).
        public var appLock: AppLock?

        /// Settings as the file holds them; the optional ones default to absent.
        public init(
            dayStartHour: Int, theme: BackupKit.Settings.Theme,
            weekStartsOn: BackupKit.Settings.WeekStart? = nil, reminderTime: ReminderTime? = nil,
            premium: Premium? = nil, appLock: AppLock? = nil
        ) {
            self.dayStartHour = dayStartHour
            self.theme = theme
            self.weekStartsOn = weekStartsOn
            self.reminderTime = reminderTime
            self.premium = premium
            self.appLock = appLock
        }
    }

    /// A version-2 challenge: an array of single-goal tasks, no paused days, nothing archived.
    public struct Challenge: Equatable, Sendable {
        /// The challenge's key in the file's `challenges` map, kept by migration.
        public var id: ChallengeID
        /// 1…120 characters without control characters.
        public var title: String
        /// The challenge's first day; 2→3 starts each task's one rule on it.
        public var startDate: DayKey
        /// 1…365 days, `startDate` included.
        public var durationDays: Int
        /// In file order.
        public var tasks: [Task]
        /// When the challenge was made; `updatedAt` is not before it.
        public var createdAt: Timestamp
        /// The last edit, the stamp the merge compares (FORMAT.md §5.1 rule 2).
        public var updatedAt: Timestamp

        /// A challenge as the file holds it.
        public init(
            id: ChallengeID, title: String, startDate: DayKey, durationDays: Int, tasks: [Task],
            createdAt: Timestamp, updatedAt: Timestamp
        ) {
            self.id = id
            self.title = title
            self.startDate = startDate
            self.durationDays = durationDays
            self.tasks = tasks
            self.createdAt = createdAt
            self.updatedAt = updatedAt
        }
    }

    /// A version-2 task: one goal, not yet a list of dated rules, and never archived.
    public struct Task: Equatable, Sendable {
        /// Unique within its challenge; the key of its values in day logs.
        public var id: TaskID
        /// 1…120 characters without control characters.
        public var title: String
        /// Becomes the task's one rule, from the challenge's `startDate` (FORMAT.md §4.1).
        public var goal: Goal

        /// A task as the file holds it.
        public init(id: TaskID, title: String, goal: Goal) {
            self.id = id
            self.title = title
            self.goal = goal
        }
    }
}
