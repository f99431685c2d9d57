extension Migration {
    /// Version 1 has no `exportedAt`; with nothing stamped at all it dates from the
    /// earliest instant a document may carry, 2000-01-01T00:00:00.000Z.
    public static let undatedExport = Timestamp(millisecondsSince1970: 946_684_800_000)

    /// The task id each version-1 goal becomes.
    public static let goalTaskID = TaskID(unchecked: "goal")

    /// 1→2: each challenge gets one task `goal` titled like the challenge, `createdAt` =
    /// `updatedAt`; logs become day logs with `values: {"goal": value}` and no mood;
    /// `deleted` becomes `tombstones`; the file dates from its newest `updatedAt`/`deletedAt`.
    public static func migrate(_ document: SchemaV1.Document) -> SchemaV2.Document {
        let stamps =
            document.challenges.map(\.updatedAt) + document.logs.map(\.updatedAt)
            + document.deleted.map(\.deletedAt)
        let challenges = document.challenges.map { challenge in
            SchemaV2.Challenge(
                id: challenge.id, title: challenge.title, startDate: challenge.startDate,
                durationDays: challenge.durationDays,
                tasks: [
                    SchemaV2.Task(id: goalTaskID, title: challenge.title, goal: challenge.goal)
                ],
                createdAt: challenge.updatedAt, updatedAt: challenge.updatedAt)
        }
        let dayLogs = document.logs.map { log in
            DayLog(
                key: DayLogKey(challengeID: log.challengeId, day: log.date),
                values: [TaskValue(taskID: goalTaskID, value: log.value)], note: log.note,
                mood: nil,
                updatedAt: log.updatedAt)
        }
        return SchemaV2.Document(
            exportedAt: stamps.max() ?? undatedExport, deviceId: document.deviceId,
            settings: SchemaV2.Settings(
                dayStartHour: document.settings.dayStartHour, theme: document.settings.theme),
            challenges: challenges.sorted { $0.id < $1.id },
            dayLogs: DayLogStore(dayLogs.sorted { $0.key < $1.key }),
            tombstones: document.deleted.sorted { $0.id < $1.id })
    }
}
