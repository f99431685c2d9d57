/// Schema version 1, the oldest (FORMAT.md §2.1): arrays instead of maps, one goal per challenge,
/// no `format`, no `exportedAt`, no mood. Read only to be migrated.
public enum SchemaV1 {
    /// A version-1 file as read, for `Migration.migrate(_:)` to turn into version 2. It has no
    /// `exportedAt`: the step dates it from its newest stamp.
    public struct Document: Equatable, Sendable {
        /// The device that wrote the file; every later version keeps it as `deviceId`.
        public var deviceId: DeviceID
        /// Only `dayStartHour` and `theme` existed; migration gives the rest their defaults
        /// (FORMAT.md §3.6).
        public var settings: Settings
        /// In file order.
        public var challenges: [Challenge]
        /// In file order.
        public var logs: [Log]
        /// In file order.
        public var deleted: [Tombstone]

        /// A document as the reader decodes it, each array in file order.
        public init(
            deviceId: DeviceID, settings: Settings, challenges: [Challenge], logs: [Log],
            deleted: [Tombstone]
        ) {
            self.deviceId = deviceId
            self.settings = settings
            self.challenges = challenges
            self.logs = logs
            self.deleted = deleted
        }
    }

    /// Version 1's settings: `dayStartHour` and `theme`, the only two there were.
    public struct Settings: Equatable, Sendable {
        /// 0…4: the hour a day begins (FORMAT.md §1.2), kept by migration.
        public var dayStartHour: Int
        /// The same three themes as every later version.
        public var theme: BackupKit.Settings.Theme

        /// Settings as the file holds them; the legacy validator checks the hour's range.
        public init(dayStartHour: Int, theme: BackupKit.Settings.Theme) {
            self.dayStartHour = dayStartHour
            self.theme = theme
        }
    }

    /// A version-1 challenge: one goal and no tasks, no `createdAt`. 1→2 makes the goal a task
    /// `goal` (FORMAT.md §4.1).
    public struct Challenge: Equatable, Sendable {
        /// Unique among the file's challenges; the challenge's id in every later version.
        public var id: ChallengeID
        /// 1…120 characters without control characters; also the title of the task that
        /// migration makes.
        public var title: String
        /// The challenge's first day; after 2→3 also the `from` of its task's one rule.
        public var startDate: DayKey
        /// 1…365 days, `startDate` included.
        public var durationDays: Int
        /// The one goal, which becomes the task `Migration.goalTaskID`.
        public var goal: Goal
        /// The last edit; 1→2 also makes it the `createdAt` version 1 lacks.
        public var updatedAt: Timestamp

        /// A challenge as the file holds it.
        public init(
            id: ChallengeID, title: String, startDate: DayKey, durationDays: Int, goal: Goal,
            updatedAt: Timestamp
        ) {
            self.id = id
            self.title = title
            self.startDate = startDate
            self.durationDays = durationDays
            self.goal = goal
            self.updatedAt = updatedAt
        }
    }

    /// A version-1 log: one value per challenge and day, no mood. 1→2 makes it the day log
    /// `<challengeId>/<date>`.
    public struct Log: Equatable, Sendable {
        /// A live challenge of the same file (version 1 keeps no logs of deleted challenges).
        public var challengeId: ChallengeID
        /// The day logged; with `challengeId`, unique in the file.
        public var date: DayKey
        /// 0…9,999 for the goal (1 or more ticks a `check`); becomes `values: {"goal": value}`.
        public var value: Int
        /// Up to 2,000 characters, kept as the day log's note.
        public var note: String
        /// The last edit, kept as the day log's `updatedAt`, the stamp the merge compares.
        public var updatedAt: Timestamp

        /// A log as the file holds it.
        public init(
            challengeId: ChallengeID, date: DayKey, value: Int, note: String, updatedAt: Timestamp
        ) {
            self.challengeId = challengeId
            self.date = date
            self.value = value
            self.note = note
            self.updatedAt = updatedAt
        }
    }
}

/// A goal of versions 1 and 2: what became one `GoalRule` in version 3.
public struct Goal: Equatable, Sendable {
    /// `check`, `count` or `minutes`, as a rule's type today.
    public var type: GoalRule.Kind
    /// 1…9,999, exactly 1 for `check` (FORMAT.md §1.2).
    public var target: Int
    /// Absent (nil) for `check`, present (possibly empty) for `count` and `minutes`.
    public var unit: String?

    /// A goal as the file holds it; the legacy validator checks its ranges.
    public init(type: GoalRule.Kind, target: Int, unit: String?) {
        self.type = type
        self.target = target
        self.unit = unit
    }
}
