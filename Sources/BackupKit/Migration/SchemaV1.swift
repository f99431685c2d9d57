/// Schema version 1, the oldest (FORMAT.md §2.1): arrays instead of maps, one goal per challenge,
/// no `format`, no `exportedAt`, no mood. Read only to be migrated.
public enum SchemaV1 {
    public struct Document: Equatable, Sendable {
        public var deviceId: DeviceID
        public var settings: Settings
        /// In file order.
        public var challenges: [Challenge]
        /// In file order.
        public var logs: [Log]
        /// In file order.
        public var deleted: [Tombstone]

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

    public struct Settings: Equatable, Sendable {
        public var dayStartHour: Int
        public var theme: BackupKit.Settings.Theme

        public init(dayStartHour: Int, theme: BackupKit.Settings.Theme) {
            self.dayStartHour = dayStartHour
            self.theme = theme
        }
    }

    public struct Challenge: Equatable, Sendable {
        public var id: ChallengeID
        public var title: String
        public var startDate: DayKey
        public var durationDays: Int
        public var goal: Goal
        public var updatedAt: Timestamp

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

    public struct Log: Equatable, Sendable {
        public var challengeId: ChallengeID
        public var date: DayKey
        public var value: Int
        public var note: String
        public var updatedAt: Timestamp

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
    public var type: GoalRule.Kind
    public var target: Int
    /// Absent (nil) for `check`, present (possibly empty) for `count` and `minutes`.
    public var unit: String?

    public init(type: GoalRule.Kind, target: Int, unit: String?) {
        self.type = type
        self.target = target
        self.unit = unit
    }
}
