/// Decoding of the parts whose shape differs in schema versions 1 and 2 (FORMAT.md §4.1).
extension DocumentDecoder {
    // MARK: Version 2

    private static let challengeV2Fields: [StaticString] = [
        "title", "startDate", "durationDays", "tasks", "createdAt", "updatedAt",
    ]

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
            let complete = try object(Self.challengeV2Fields, required: 0b11_1111) {
                field throws(ScanError) in
                switch field {
                case 0: title = try string()
                case 1: startDate = try dayKey()
                case 2: durationDays = try integer()
                case 3: tasks = try tasksV2()
                case 4: createdAt = try timestamp()
                default: updatedAt = try timestamp()
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

    private static let taskV2Fields: [StaticString] = ["id", "title", "type", "target", "unit"]

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
            let complete = try object(Self.taskV2Fields, required: 0b01111) {
                field throws(ScanError) in
                switch field {
                case 0: id = try identifier()
                case 1: title = try string()
                case 2: type = try choice(GoalRule.Kind.self)
                case 3: target = try integer()
                default:
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

    private static let challengeV1Fields: [StaticString] = [
        "id", "title", "startDate", "durationDays", "goal", "updatedAt",
    ]

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
            let complete = try object(Self.challengeV1Fields, required: 0b11_1111) {
                field throws(ScanError) in
                switch field {
                case 0: id = try identifier()
                case 1: title = try string()
                case 2: startDate = try dayKey()
                case 3: durationDays = try integer()
                case 4: goal = try self.goal(withFrom: false)?.goal
                default: updatedAt = try timestamp()
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

    private static let logV1Fields: [StaticString] = [
        "challengeId", "date", "value", "note", "updatedAt",
    ]

    /// Version 1 logs with their index in the file (for pointers), broken ones left out.
    func logsV1() throws(ScanError) -> [(index: Int, log: SchemaV1.Log)]? {
        var logs: [(index: Int, log: SchemaV1.Log)] = []
        let isArray = try array { index throws(ScanError) in
            var challengeId: ChallengeID?
            var date: DayKey?
            var value: Int?
            var note: String?
            var updatedAt: Timestamp?
            let complete = try object(Self.logV1Fields, required: 0b1_1111) {
                field throws(ScanError) in
                switch field {
                case 0: challengeId = try identifier()
                case 1: date = try dayKey()
                case 2: value = try integer()
                case 3: note = try string()
                default: updatedAt = try timestamp()
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

    private static let deletedV1Fields: [StaticString] = ["id", "deletedAt"]

    /// Version 1 `deleted` entries with their index in the file, broken ones left out.
    func deletedV1() throws(ScanError) -> [(index: Int, tombstone: Tombstone)]? {
        var deleted: [(index: Int, tombstone: Tombstone)] = []
        let isArray = try array { index throws(ScanError) in
            var id: ChallengeID?
            var deletedAt: Timestamp?
            let complete = try object(Self.deletedV1Fields, required: 0b11) {
                field throws(ScanError) in
                if field == 0 { id = try identifier() } else { deletedAt = try timestamp() }
            }
            if complete, let id, let deletedAt {
                deleted.append((index, Tombstone(id: id, deletedAt: deletedAt)))
            }
        }
        return isArray ? deleted : nil
    }
}
