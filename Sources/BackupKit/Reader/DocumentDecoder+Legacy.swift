/// Decoding of the parts whose shape differs in schema versions 1 and 2 (FORMAT.md §4.1).
extension DocumentDecoder {
    // MARK: Version 2

    enum ChallengeV2Field: Int, ObjectField {
        case title, startDate, durationDays, tasks, createdAt, updatedAt
        static let names: [StaticString] = [
            "title", "startDate", "durationDays", "tasks", "createdAt", "updatedAt",
        ]
        static let required: FieldSet<Self> = .all
    }

    func challengesV2(broken: inout Set<ChallengeID>) throws(ScanError) -> [SchemaV2.Challenge]? {
        var challenges: [SchemaV2.Challenge] = []
        let isMap = try map { key throws(ScanError) in
            guard let id = identifier(key) else {
                try scanner.skipValue()
                return
            }
            var title: String?
            var startDate: DayKey?
            var durationDays: Int?
            var tasks: [SchemaV2.Task]?
            var createdAt: Timestamp?
            var updatedAt: Timestamp?
            let complete = try object(required: ChallengeV2Field.required) {
                field throws(ScanError) in
                switch field {
                case .title: title = try string()
                case .startDate: startDate = try dayKey()
                case .durationDays: durationDays = try integer()
                case .tasks: tasks = try tasksV2()
                case .createdAt: createdAt = try timestamp()
                case .updatedAt: updatedAt = try timestamp()
                }
            }
            guard complete, let title, let startDate, let durationDays, let tasks, let createdAt,
                let updatedAt
            else {
                broken.insert(id)
                return
            }
            challenges.append(
                SchemaV2.Challenge(
                    id: id, title: title, startDate: startDate, durationDays: durationDays,
                    tasks: tasks,
                    createdAt: createdAt, updatedAt: updatedAt))
        }
        guard isMap else { return nil }
        sortAndDropDuplicates(
            &challenges, by: { $0.id < $1.id }, pointer: { Pointer.challenge($0.id) })
        return challenges
    }

    enum TaskV2Field: Int, ObjectField {
        case id, title, type, target, unit
        static let names: [StaticString] = ["id", "title", "type", "target", "unit"]
        static let required: FieldSet<Self> = [.id, .title, .type, .target]
    }

    private func tasksV2() throws(ScanError) -> [SchemaV2.Task]? {
        var tasks: [SchemaV2.Task] = []
        var broken = false
        let isArray = try array { _ throws(ScanError) in
            var id: TaskID?
            var title: String?
            var type: GoalRule.Kind?
            var target: Int?
            var unit: String?
            var unitValid = true
            let complete = try object(required: TaskV2Field.required) { field throws(ScanError) in
                switch field {
                case .id: id = try identifier()
                case .title: title = try string()
                case .type: type = try choice(GoalRule.Kind.self)
                case .target: target = try integer()
                case .unit:
                    unit = try string()
                    unitValid = unit != nil
                }
            }
            guard complete, unitValid, let id, let title, let type, let target else {
                broken = true
                return
            }
            tasks.append(
                SchemaV2.Task(
                    id: id, title: title, goal: Goal(type: type, target: target, unit: unit)))
        }
        return isArray && !broken ? tasks : nil
    }

    // MARK: Version 1

    enum ChallengeV1Field: Int, ObjectField {
        case id, title, startDate, durationDays, goal, updatedAt
        static let names: [StaticString] = [
            "id", "title", "startDate", "durationDays", "goal", "updatedAt",
        ]
        static let required: FieldSet<Self> = .all
    }

    /// Version 1 challenges with their index in the file (for pointers); a broken element
    /// is left out.
    func challengesV1(broken: inout Set<ChallengeID>) throws(ScanError) -> [(
        index: Int, challenge: SchemaV1.Challenge
    )]? {
        var challenges: [(index: Int, challenge: SchemaV1.Challenge)] = []
        let isArray = try array { index throws(ScanError) in
            var id: ChallengeID?
            var title: String?
            var startDate: DayKey?
            var durationDays: Int?
            var goal: Goal?
            var updatedAt: Timestamp?
            let complete = try object(required: ChallengeV1Field.required) {
                field throws(ScanError) in
                switch field {
                case .id: id = try identifier()
                case .title: title = try string()
                case .startDate: startDate = try dayKey()
                case .durationDays: durationDays = try integer()
                case .goal: goal = try self.goal(withFrom: false)?.goal
                case .updatedAt: updatedAt = try timestamp()
                }
            }
            guard complete, let id, let title, let startDate, let durationDays, let goal,
                let updatedAt
            else {
                if let id { broken.insert(id) }
                return
            }
            challenges.append(
                (
                    index,
                    SchemaV1.Challenge(
                        id: id, title: title, startDate: startDate, durationDays: durationDays,
                        goal: goal,
                        updatedAt: updatedAt)
                ))
        }
        return isArray ? challenges : nil
    }

    enum LogV1Field: Int, ObjectField {
        case challengeId, date, value, note, updatedAt
        static let names: [StaticString] = ["challengeId", "date", "value", "note", "updatedAt"]
        static let required: FieldSet<Self> = .all
    }

    /// Version 1 logs with their index in the file (for pointers), broken ones left out.
    func logsV1() throws(ScanError) -> [(index: Int, log: SchemaV1.Log)]? {
        var logs: [(index: Int, log: SchemaV1.Log)] = []
        let isArray = try array { index throws(ScanError) in
            var challengeId: ChallengeID?
            var date: DayKey?
            var value: Int?
            var note: String?
            var updatedAt: Timestamp?
            let complete = try object(required: LogV1Field.required) { field throws(ScanError) in
                switch field {
                case .challengeId: challengeId = try identifier()
                case .date: date = try dayKey()
                case .value: value = try integer()
                case .note: note = try string()
                case .updatedAt: updatedAt = try timestamp()
                }
            }
            if complete, let challengeId, let date, let value, let note, let updatedAt {
                logs.append(
                    (
                        index,
                        SchemaV1.Log(
                            challengeId: challengeId, date: date, value: value, note: note,
                            updatedAt: updatedAt)
                    ))
            }
        }
        return isArray ? logs : nil
    }

    enum DeletedV1Field: Int, ObjectField {
        case id, deletedAt
        static let names: [StaticString] = ["id", "deletedAt"]
        static let required: FieldSet<Self> = .all
    }

    /// Version 1 `deleted` entries with their index in the file, broken ones left out.
    func deletedV1() throws(ScanError) -> [(index: Int, tombstone: Tombstone)]? {
        var deleted: [(index: Int, tombstone: Tombstone)] = []
        let isArray = try array { index throws(ScanError) in
            var id: ChallengeID?
            var deletedAt: Timestamp?
            let complete = try object(required: DeletedV1Field.required) {
                field throws(ScanError) in
                switch field {
                case .id: id = try identifier()
                case .deletedAt: deletedAt = try timestamp()
                }
            }
            if complete, let id, let deletedAt {
                deleted.append((index, Tombstone(id: id, deletedAt: deletedAt)))
            }
        }
        return isArray ? deleted : nil
    }
}
