extension Migration {
    /// 2→3 for settings alone: the optional ones take the defaults of FORMAT.md §3.6.
    static func migrate(_ settings: SchemaV2.Settings) -> Settings {
        let defaults = Settings()
        return Settings(
            dayStartHour: settings.dayStartHour,
            weekStartsOn: settings.weekStartsOn ?? defaults.weekStartsOn,
            theme: settings.theme,
            reminderTime: settings.reminderTime ?? defaults.reminderTime,
            premium: settings.premium, appLock: settings.appLock)
    }

    /// 2→3: `tasks` becomes a map, each task's goal becomes one rule starting on the
    /// challenge's `startDate`, nothing archived, no paused days; missing settings take the
    /// defaults of FORMAT.md §3.6.
    public static func migrate(_ document: SchemaV2.Document) -> BackupDocument {
        let settings = migrate(document.settings)
        let challenges = document.challenges.map { challenge in
            Challenge(
                id: challenge.id, title: challenge.title, startDate: challenge.startDate,
                durationDays: challenge.durationDays,
                tasks: challenge.tasks.map { task in
                    HabitTask(
                        id: task.id, title: task.title,
                        rules: [
                            GoalRule(
                                from: challenge.startDate, type: task.goal.type,
                                target: task.goal.target,
                                unit: task.goal.unit)
                        ],
                        archivedFrom: nil)
                }.sorted { $0.id < $1.id },
                pausedDays: [], createdAt: challenge.createdAt, updatedAt: challenge.updatedAt)
        }
        return BackupDocument(
            exportedAt: document.exportedAt, deviceId: document.deviceId, settings: settings,
            challenges: challenges, dayLogs: document.dayLogs, tombstones: document.tombstones)
    }
}
