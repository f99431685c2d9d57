/// Schema version 2 (FORMAT.md §2.2): maps keyed by id like version 3, but `tasks` is an array of
/// single-goal tasks, there are no paused days, no `format`, and settings past
/// `dayStartHour` and `theme` are optional. Day logs and tombstones already have their
/// version-3 shape, so they use the version-3 types.
public enum SchemaV2 {
    public struct Document: Equatable, Sendable {
        public var exportedAt: Timestamp
        public var deviceId: DeviceID
        public var settings: Settings
        /// Sorted by `id`, unique.
        public var challenges: [Challenge]
        /// Sorted by `key`, unique.
        public var dayLogs: [DayLog]
        /// Sorted by `id`, unique.
        public var tombstones: [Tombstone]

        public init(
            exportedAt: Timestamp, deviceId: DeviceID, settings: Settings, challenges: [Challenge],
            dayLogs: [DayLog], tombstones: [Tombstone]
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
        public var dayStartHour: Int
        public var theme: BackupKit.Settings.Theme
        public var weekStartsOn: BackupKit.Settings.WeekStart?
        public var reminderTime: ReminderTime?
        public var premium: Premium?
        public var appLock: AppLock?

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

    public struct Challenge: Equatable, Sendable {
        public var id: ChallengeID
        public var title: String
        public var startDate: DayKey
        public var durationDays: Int
        /// In file order.
        public var tasks: [Task]
        public var createdAt: Timestamp
        public var updatedAt: Timestamp

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

    public struct Task: Equatable, Sendable {
        public var id: TaskID
        public var title: String
        public var goal: Goal

        public init(id: TaskID, title: String, goal: Goal) {
            self.id = id
            self.title = title
            self.goal = goal
        }
    }
}
