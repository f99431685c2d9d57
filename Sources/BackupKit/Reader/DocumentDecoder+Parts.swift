/// Decoding of the document's parts, for every schema version. Each function starts at the
/// part's value and returns nil when the part is broken (its problems already reported).
extension DocumentDecoder {
    // MARK: Settings (all versions)

    private static let settingsFields: [StaticString] = [
        "dayStartHour", "theme", "weekStartsOn", "reminderTime", "premium", "appLock",
    ]

    /// Version 1 knows the first two fields, version 2 all six with the first two required,
    /// version 3 requires the first four.
    func settings(version: Int) throws(ScanError) -> SchemaV2.Settings? {
        let fields = version == 1 ? Array(Self.settingsFields.prefix(2)) : Self.settingsFields
        var dayStartHour: Int?
        var theme: Settings.Theme?
        var weekStartsOn: Settings.WeekStart?
        var reminderTime: ReminderTime?
        var premium: Premium?
        var appLock: AppLock?
        var broken = false
        let complete = try object(fields, required: version == 3 ? 0b1111 : 0b11) {
            field throws(ScanError) in
            switch field {
            case 0: dayStartHour = try integer()
            case 1: theme = try choice(Settings.Theme.self)
            case 2:
                weekStartsOn = try choice(Settings.WeekStart.self)
                broken = broken || weekStartsOn == nil
            case 3:
                if try null() { return }
                guard let token = try stringToken("null or a time HH:MM (24-hour)") else {
                    broken = true
                    return
                }
                reminderTime = scanner.withBytes(token) {
                    ReminderTime(String(decoding: $0, as: UTF8.self))
                }
                if reminderTime == nil {
                    report("must be null or a time HH:MM (24-hour)")
                    broken = true
                }
            case 4:
                premium = try self.premium()
                broken = broken || premium == nil
            default:
                appLock = try self.appLock()
                broken = broken || appLock == nil
            }
        }
        guard complete, !broken, let dayStartHour, let theme else { return nil }
        return SchemaV2.Settings(
            dayStartHour: dayStartHour, theme: theme, weekStartsOn: weekStartsOn,
            reminderTime: reminderTime, premium: premium, appLock: appLock)
    }

    private static let premiumFields: [StaticString] = ["plan", "validatedAt", "expiresAt"]

    private func premium() throws(ScanError) -> Premium? {
        var plan: String?
        var validatedAt: Timestamp?
        var expiresAt: Timestamp?
        var expiresValid = true
        let complete = try object(Self.premiumFields, required: 0b111) { field throws(ScanError) in
            switch field {
            case 0: plan = try string()
            case 1: validatedAt = try timestamp()
            default:
                if try null() { return }
                expiresAt = try timestamp()
                expiresValid = expiresAt != nil
            }
        }
        guard complete, expiresValid, let plan, let validatedAt else { return nil }
        return Premium(plan: plan, validatedAt: validatedAt, expiresAt: expiresAt)
    }

    private static let appLockFields: [StaticString] = ["enabled", "method"]

    private func appLock() throws(ScanError) -> AppLock? {
        var enabled: Bool?
        var method: String?
        let complete = try object(Self.appLockFields, required: 0b11) { field throws(ScanError) in
            if field == 0 { enabled = try bool() } else { method = try string() }
        }
        guard complete, let enabled, let method else { return nil }
        return AppLock(enabled: enabled, method: method)
    }

    // MARK: Challenges (version 3)

    /// The challenges map; `broken` collects the ids of challenges present but unreadable,
    /// so day logs and tombstones naming them are not reported a second time.
    func challenges(broken: inout Set<ChallengeID>) throws(ScanError) -> [Challenge]? {
        var challenges: [Challenge] = []
        let isMap = try map { key throws(ScanError) in
            guard let id = identifier(key) else {
                try scanner.skipValue()
                return
            }
            if let challenge = try challenge(id: id) {
                challenges.append(challenge)
            } else {
                broken.insert(id)
            }
        }
        guard isMap else { return nil }
        sortAndDropDuplicates(
            &challenges, by: { $0.id < $1.id }, pointer: { Pointer.challenge($0.id) })
        return challenges
    }

    private static let challengeFields: [StaticString] = [
        "title", "startDate", "durationDays", "tasks", "pausedDays", "createdAt", "updatedAt",
    ]

    private func challenge(id: ChallengeID) throws(ScanError) -> Challenge? {
        var title: String?
        var startDate: DayKey?
        var durationDays: Int?
        var tasks: [HabitTask]?
        var pausedDays: [DayKey]?
        var createdAt: Timestamp?
        var updatedAt: Timestamp?
        let complete = try object(Self.challengeFields, required: 0b111_1111) {
            field throws(ScanError) in
            switch field {
            case 0: title = try string()
            case 1: startDate = try dayKey()
            case 2: durationDays = try integer()
            case 3: tasks = try self.tasks()
            case 4: pausedDays = try self.pausedDays()
            case 5: createdAt = try timestamp()
            default: updatedAt = try timestamp()
            }
        }
        guard complete, let title, let startDate, let durationDays, let tasks, let pausedDays,
            let createdAt, let updatedAt
        else { return nil }
        return Challenge(
            id: id, title: title, startDate: startDate, durationDays: durationDays, tasks: tasks,
            pausedDays: pausedDays, createdAt: createdAt, updatedAt: updatedAt)
    }

    private func pausedDays() throws(ScanError) -> [DayKey]? {
        var days: [DayKey] = []
        var broken = false
        let isArray = try array { _ throws(ScanError) in
            if let day = try dayKey() { days.append(day) } else { broken = true }
        }
        return isArray && !broken ? days : nil
    }

    private func tasks() throws(ScanError) -> [HabitTask]? {
        var tasks: [HabitTask] = []
        var broken = false
        let isMap = try map { key throws(ScanError) in
            guard let id = identifier(key) else {
                broken = true
                try scanner.skipValue()
                return
            }
            if let task = try task(id: id) { tasks.append(task) } else { broken = true }
        }
        guard isMap, !broken else { return nil }
        let before = tasks.count
        sortAndDropDuplicates(
            &tasks, by: { $0.id < $1.id }, pointer: { self.pointer + "/" + $0.id.rawValue })
        // A duplicate task makes the challenge ambiguous; it was reported above.
        return tasks.count == before ? tasks : nil
    }

    private static let taskFields: [StaticString] = ["title", "rules", "archivedFrom"]

    private func task(id: TaskID) throws(ScanError) -> HabitTask? {
        var title: String?
        var rules: [GoalRule]?
        var archivedFrom: DayKey?
        var archivedValid = true
        let complete = try object(Self.taskFields, required: 0b111) { field throws(ScanError) in
            switch field {
            case 0: title = try string()
            case 1: rules = try self.rules()
            default:
                if try null() { return }
                archivedFrom = try dayKey()
                archivedValid = archivedFrom != nil
            }
        }
        guard complete, archivedValid, let title, let rules else { return nil }
        return HabitTask(id: id, title: title, rules: rules, archivedFrom: archivedFrom)
    }

    private func rules() throws(ScanError) -> [GoalRule]? {
        var rules: [GoalRule] = []
        var broken = false
        let isArray = try array { _ throws(ScanError) in
            if let (from, goal) = try goal(withFrom: true), let from {
                rules.append(
                    GoalRule(from: from, type: goal.type, target: goal.target, unit: goal.unit))
            } else {
                broken = true
            }
        }
        return isArray && !broken ? rules : nil
    }

    private static let ruleFields: [StaticString] = ["type", "target", "unit", "from"]

    /// A goal (`type`, `target`, optional `unit`), and with `withFrom` a version-3 rule's
    /// required `from`.
    func goal(withFrom: Bool) throws(ScanError) -> (from: DayKey?, goal: Goal)? {
        var type: GoalRule.Kind?
        var target: Int?
        var unit: String?
        var from: DayKey?
        var unitValid = true
        let fields = withFrom ? Self.ruleFields : Array(Self.ruleFields.prefix(3))
        let complete = try object(fields, required: withFrom ? 0b1011 : 0b011) {
            field throws(ScanError) in
            switch field {
            case 0: type = try choice(GoalRule.Kind.self)
            case 1: target = try integer()
            case 2:
                unit = try string()
                unitValid = unit != nil
            default: from = try dayKey()
            }
        }
        guard complete, unitValid, let type, let target, !withFrom || from != nil else {
            return nil
        }
        return (from, Goal(type: type, target: target, unit: unit))
    }

    // MARK: Day logs and tombstones (versions 2 and 3)

    func dayLogs() throws(ScanError) -> [DayLog]? {
        var logs: [DayLog] = []
        // Day logs are most of a large file and take at least ~100 bytes each. Reserving
        // for that many up front costs only address space (pages are touched when filled)
        // and saves copying the array as it grows.
        logs.reserveCapacity((scanner.count - scanner.position) / 100)
        // Consecutive logs usually share a challenge: reuse its id string, recognised by
        // the bytes of the previous key (input bytes stay put; escaped keys are not cached).
        var lastID: ChallengeID?
        var lastIDBytes = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        var lastKey: DayLogKey?
        var inOrder = true
        let isMap = try map { key throws(ScanError) in
            let parsed = scanner.withBytes(key) { bytes -> (Identifier?, DayKey?) in
                guard bytes.count > 11, bytes[bytes.count - 11] == UInt8(ascii: "/"),
                    let day = DayKey(utf8: bytes[(bytes.count - 10)...])
                else { return (nil, nil) }
                let idBytes = UnsafeBufferPointer(rebasing: bytes[..<(bytes.count - 11)])
                if let lastID, idBytes.count == lastIDBytes.count,
                    idBytes.indices.allSatisfy({ idBytes[$0] == lastIDBytes[$0] })
                {
                    return (lastID, day)
                }
                guard Identifier.isValid(idBytes) else { return (nil, nil) }
                lastIDBytes = key.escaped ? UnsafeBufferPointer(start: nil, count: 0) : idBytes
                return (Identifier(unchecked: String(decoding: idBytes, as: UTF8.self)), day)
            }
            guard let id = parsed.0, let day = parsed.1 else {
                report(
                    "must be a key <challengeId>/<YYYY-MM-DD> with a real date (years 2000…2199)")
                try scanner.skipValue()
                return
            }
            lastID = id
            let key = DayLogKey(challengeID: id, day: day)
            let decoded: DayLog? =
                if let log = canonicalDayLog(key: key) { log } else { try dayLog(key: key) }
            guard let log = decoded else { return }
            // Sortedness is tracked on the keys as they come, so the usual sorted file never
            // walks its (large) logs a second time.
            if let lastKey, !(lastKey < key) { inOrder = false }
            lastKey = key
            logs.append(log)
        }
        guard isMap else { return nil }
        if !inOrder {
            sortAndDropDuplicates(
                &logs, by: { $0.key < $1.key }, pointer: { Pointer.dayLog($0.key) })
        }
        return logs
    }

    /// A day log spelled exactly as the canonical writer spells it, read without the
    /// general machinery (no field lookup, no path, no reports): nearly every day log of a
    /// file this library wrote. Nil, with the position back where it was, at the first
    /// difference of any kind, valid or not; `dayLog(key:)` then reads it the general way,
    /// reporting whatever is wrong exactly as if this had never been tried. It changes
    /// nothing else (the remembered ids and the value scratch are caches).
    private func canonicalDayLog(key: DayLogKey) -> DayLog? {
        let start = scanner.position
        // The log and its values are two levels below here: let the general way report depth.
        guard scanner.depth + 2 <= scanner.maxDepth,
            let log = try? canonicalDayLogBody(key: key)
        else {
            scanner.position = start
            return nil
        }
        return log
    }

    private func canonicalDayLogBody(key: DayLogKey) throws(ScanError) -> DayLog? {
        guard scanner.consume(#"{"mood":"#) else { return nil }
        var mood: Int?
        if !scanner.consume("null") {
            guard let value = scanner.plainInteger() else { return nil }
            mood = value
        }
        guard scanner.consume(#","note":"#), scanner.byte(at: scanner.position) == 0x22 else {
            return nil
        }
        let note = scanner.makeString(try scanner.string())
        guard scanner.consume(#","updatedAt":"#), scanner.byte(at: scanner.position) == 0x22
        else { return nil }
        let stamp = try scanner.string()
        guard let updatedAt = scanner.withBytes(stamp, { Timestamp(utf8: $0) }),
            scanner.consume(#","values":{"#)
        else { return nil }
        valueBuffer.removeAll(keepingCapacity: true)
        var previous: JSONString?
        if !scanner.consume("}") {
            repeat {
                guard scanner.byte(at: scanner.position) == 0x22 else { return nil }
                let name = try scanner.string()
                // Unescaped, valid, in order (so unique), with a plain integer value.
                guard !name.escaped, previous.map({ scanner.precedes($0, name) }) ?? true,
                    scanner.consume(":"), let id = rememberedIdentifier(name),
                    let value = scanner.plainInteger()
                else { return nil }
                previous = name
                valueBuffer.append(TaskValue(taskID: id, value: value))
            } while scanner.consume(",")
            guard scanner.consume("}") else { return nil }
        }
        guard scanner.consume("}") else { return nil }
        return DayLog(
            key: key, values: Array(valueBuffer[...]), note: note, mood: mood,
            updatedAt: updatedAt)
    }

    private static let dayLogFields: [StaticString] = ["values", "note", "mood", "updatedAt"]

    private func dayLog(key: DayLogKey) throws(ScanError) -> DayLog? {
        var values: [TaskValue]?
        var note: String?
        var mood: Int?
        var moodValid = true
        var updatedAt: Timestamp?
        let complete = try object(Self.dayLogFields, required: 0b1111) { field throws(ScanError) in
            switch field {
            case 0: values = try self.values()
            case 1: note = try string()
            case 2:
                if try null() { return }
                mood = try integer()
                moodValid = mood != nil
            default: updatedAt = try timestamp()
            }
        }
        guard complete, moodValid, let values, let note, let updatedAt else { return nil }
        return DayLog(key: key, values: values, note: note, mood: mood, updatedAt: updatedAt)
    }

    private func values() throws(ScanError) -> [TaskValue]? {
        // Collected in a reused buffer and copied out at their exact size: one allocation
        // per day log instead of one per growth step.
        valueBuffer.removeAll(keepingCapacity: true)
        var broken = false
        // Ids are ASCII, so the order of their input bytes is their order: comparing the
        // keys as they come spares the usual sorted file a second walk comparing Strings.
        var inOrder = true
        var previous: JSONString?
        let isMap = try map { key throws(ScanError) in
            if key.escaped {
                inOrder = false
            } else if inOrder, let previous, !scanner.precedes(previous, key) {
                inOrder = false
            }
            previous = key
            guard let id = recentIdentifier(key) else {
                broken = true
                try scanner.skipValue()
                return
            }
            if let value = try integer() {
                valueBuffer.append(TaskValue(taskID: id, value: value))
            } else {
                broken = true
            }
        }
        guard isMap, !broken else { return nil }
        let before = valueBuffer.count
        if !inOrder {
            sortAndDropDuplicates(
                &valueBuffer, by: { $0.taskID < $1.taskID },
                pointer: { self.pointer + "/" + $0.taskID.rawValue })
        }
        return valueBuffer.count == before ? Array(valueBuffer[...]) : nil
    }

    private static let tombstoneFields: [StaticString] = ["deletedAt"]

    func tombstones() throws(ScanError) -> [Tombstone]? {
        var tombstones: [Tombstone] = []
        let isMap = try map { key throws(ScanError) in
            guard let id = identifier(key) else {
                try scanner.skipValue()
                return
            }
            var deletedAt: Timestamp?
            let complete = try object(Self.tombstoneFields, required: 0b1) { _ throws(ScanError) in
                deletedAt = try timestamp()
            }
            if complete, let deletedAt {
                tombstones.append(Tombstone(id: id, deletedAt: deletedAt))
            }
        }
        guard isMap else { return nil }
        sortAndDropDuplicates(
            &tombstones, by: { $0.id < $1.id }, pointer: { Pointer.tombstone($0.id) })
        return tombstones
    }
}
