import Foundation
import Parallel

/// Decoding of the document's parts, for every schema version. Each function starts at the
/// part's value and returns nil when the part is broken (its problems already reported).
extension DocumentDecoder {
    // MARK: Settings (all versions)

    /// Version 1 knows the first two fields, version 2 all six with the first two required,
    /// versions 3 and 4 require the first four.
    enum SettingsField: Int, ObjectField {
        case dayStartHour, theme, weekStartsOn, reminderTime, premium, appLock
        static let names: [StaticString] = [
            "dayStartHour", "theme", "weekStartsOn", "reminderTime", "premium", "appLock",
        ]

        static func known(version: Int) -> FieldSet<Self> {
            version == 1 ? [.dayStartHour, .theme] : .all
        }

        static func required(version: Int) -> FieldSet<Self> {
            version >= 3
                ? [.dayStartHour, .theme, .weekStartsOn, .reminderTime] : [.dayStartHour, .theme]
        }
    }

    func settings(version: Int) throws(ScanError) -> SchemaV2.Settings? {
        var dayStartHour: Int?
        var theme: Settings.Theme?
        var weekStartsOn: Settings.WeekStart?
        var reminderTime: ReminderTime?
        var premium: Premium?
        var appLock: AppLock?
        var broken = false
        let complete = try object(
            SettingsField.known(version: version),
            required: SettingsField.required(version: version)
        ) { field throws(ScanError) in
            switch field {
            case .dayStartHour: dayStartHour = try integer()
            case .theme: theme = try choice(Settings.Theme.self)
            case .weekStartsOn:
                weekStartsOn = try choice(Settings.WeekStart.self)
                broken = broken || weekStartsOn == nil
            case .reminderTime:
                if try null() { return }
                guard let token = try stringToken("null or a time HH:MM (24-hour)") else {
                    broken = true
                    return
                }
                reminderTime = scanner.withBytes(token) {
                    ReminderTime(String(decoding: $0, as: UTF8.self))
                }
                if reminderTime == nil {
                    report(.fields, "must be null or a time HH:MM (24-hour)")
                    broken = true
                }
            case .premium:
                premium = try self.premium()
                broken = broken || premium == nil
            case .appLock:
                appLock = try self.appLock()
                broken = broken || appLock == nil
            }
        }
        guard complete, !broken, let dayStartHour, let theme else { return nil }
        return SchemaV2.Settings(
            dayStartHour: dayStartHour, theme: theme, weekStartsOn: weekStartsOn,
            reminderTime: reminderTime, premium: premium, appLock: appLock)
    }

    enum PremiumField: Int, ObjectField {
        case plan, validatedAt, expiresAt
        static let names: [StaticString] = ["plan", "validatedAt", "expiresAt"]
        static let required: FieldSet<Self> = .all
    }

    private func premium() throws(ScanError) -> Premium? {
        var plan: String?
        var validatedAt: Timestamp?
        var expiresAt: Timestamp?
        var expiresValid = true
        let complete = try object(required: PremiumField.required) { field throws(ScanError) in
            switch field {
            case .plan: plan = try string()
            case .validatedAt: validatedAt = try timestamp()
            case .expiresAt:
                if try null() { return }
                expiresAt = try timestamp()
                expiresValid = expiresAt != nil
            }
        }
        guard complete, expiresValid, let plan, let validatedAt else { return nil }
        return Premium(plan: plan, validatedAt: validatedAt, expiresAt: expiresAt)
    }

    enum AppLockField: Int, ObjectField {
        case enabled, method
        static let names: [StaticString] = ["enabled", "method"]
        static let required: FieldSet<Self> = .all
    }

    private func appLock() throws(ScanError) -> AppLock? {
        var enabled: Bool?
        var method: String?
        let complete = try object(required: AppLockField.required) { field throws(ScanError) in
            switch field {
            case .enabled: enabled = try bool()
            case .method: method = try string()
            }
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

    enum ChallengeField: Int, ObjectField {
        case title, startDate, durationDays, tasks, pausedDays, createdAt, updatedAt
        static let names: [StaticString] = [
            "title", "startDate", "durationDays", "tasks", "pausedDays", "createdAt", "updatedAt",
        ]
        static let required: FieldSet<Self> = .all
    }

    private func challenge(id: ChallengeID) throws(ScanError) -> Challenge? {
        var title: String?
        var startDate: DayKey?
        var durationDays: Int?
        var tasks: [HabitTask]?
        var pausedDays: [DayKey]?
        var createdAt: Timestamp?
        var updatedAt: Timestamp?
        let complete = try object(required: ChallengeField.required) { field throws(ScanError) in
            switch field {
            case .title: title = try string()
            case .startDate: startDate = try dayKey()
            case .durationDays: durationDays = try integer()
            case .tasks: tasks = try self.tasks()
            case .pausedDays: pausedDays = try self.pausedDays()
            case .createdAt: createdAt = try timestamp()
            case .updatedAt: updatedAt = try timestamp()
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

    enum TaskField: Int, ObjectField {
        case title, rules, archivedFrom
        static let names: [StaticString] = ["title", "rules", "archivedFrom"]
        static let required: FieldSet<Self> = .all
    }

    private func task(id: TaskID) throws(ScanError) -> HabitTask? {
        var title: String?
        var rules: [GoalRule]?
        var archivedFrom: DayKey?
        var archivedValid = true
        let complete = try object(required: TaskField.required) { field throws(ScanError) in
            switch field {
            case .title: title = try string()
            case .rules: rules = try self.rules()
            case .archivedFrom:
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

    /// A goal's fields, and a version-3 rule's `from`.
    enum RuleField: Int, ObjectField {
        case type, target, unit, from
        static let names: [StaticString] = ["type", "target", "unit", "from"]

        static func known(withFrom: Bool) -> FieldSet<Self> {
            withFrom ? .all : [.type, .target, .unit]
        }

        static func required(withFrom: Bool) -> FieldSet<Self> {
            withFrom ? [.type, .target, .from] : [.type, .target]
        }
    }

    /// A goal (`type`, `target`, optional `unit`), and with `withFrom` a version-3 rule's
    /// required `from`.
    func goal(withFrom: Bool) throws(ScanError) -> (from: DayKey?, goal: Goal)? {
        var type: GoalRule.Kind?
        var target: Int?
        var unit: String?
        var from: DayKey?
        var unitValid = true
        var unitIsNull = false
        let complete = try object(
            RuleField.known(withFrom: withFrom), required: RuleField.required(withFrom: withFrom)
        ) { field throws(ScanError) in
            switch field {
            case .type: type = try choice(GoalRule.Kind.self)
            case .target: target = try integer()
            case .unit where scanner.peek() == UInt8(ascii: "n"):
                // A null unit is fixed by removing it for a check task and by a string for
                // the others; which one, the type says, and it may come later.
                try scanner.skipValue()
                unitIsNull = true
                unitValid = false
            case .unit:
                unit = try string()
                unitValid = unit != nil
            case .from: from = try dayKey()
            }
        }
        if unitIsNull {
            report(
                .requiredFields,
                type == .check
                    ? "must be absent for a check task (remove \"unit\")"
                    : "must be a string (it may be empty), not null",
                at: .name("unit"))
        }
        guard complete, unitValid, let type, let target, !withFrom || from != nil else {
            return nil
        }
        return (from, Goal(type: type, target: target, unit: unit))
    }

    // MARK: Day logs and tombstones (versions 2 and 3)

    func dayLogs() throws(ScanError) -> [DayLog]? {
        guard scanner.peek() == UInt8(ascii: "{") else {
            try wrongType("an object")
            return nil
        }
        // The logs are decoded straight into the array's storage, sized once for the most
        // logs the rest of the input can hold: only address space pays for the excess, as
        // pages are touched when filled, and the array is never copied while it grows.
        var inOrder = true
        var canonical = true
        var failure: ScanError?
        var logs = [DayLog](
            unsafeUninitializedCapacity: DayLogRun.capacity(
                forBytes: scanner.count - scanner.position)
        ) { buffer, initialized in
            guard let storage = buffer.baseAddress else {
                preconditionFailure("room for at least one day log was asked for")
            }
            do throws(ScanError) {
                guard try scanner.openObject() else { return }
                let input = UnsafeBufferPointer(start: scanner.base, count: scanner.count)
                if let split = Self.splitPoint(
                    in: input, after: scanner.position, minimum: splitFromBytes)
                {
                    (inOrder, canonical) = try decodeInHalves(
                        into: storage, capacity: buffer.count, split: split,
                        initialized: &initialized)
                } else {
                    var run = DayLogRun(storage: storage, capacity: buffer.count)
                    defer {
                        initialized = run.count
                        inOrder = run.inOrder
                        canonical = run.canonical
                    }
                    _ = try dayLogMembers(into: &run, stoppingAt: nil)
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        if !inOrder {
            sortAndDropDuplicates(
                &logs, by: { $0.key < $1.key }, pointer: { Pointer.dayLog($0.key) })
        }
        dayLogsHoldOwnRules = canonical
        return logs
    }

    /// Where a second core may start on the day logs: the key of the first day log past the
    /// middle of what is left after `position`, found by the bytes the canonical writer puts
    /// between two day logs (`}},"`). Only a guess: nothing is trusted until the first half
    /// arrives there (see `decodeInHalves`). Nil below `minimum` bytes, where a thread costs
    /// more than it saves.
    static func splitPoint(in input: UnsafeBufferPointer<UInt8>, after position: Int, minimum: Int)
        -> Int?
    {
        let remaining = input.count - position
        guard remaining >= max(minimum, 8) else { return nil }
        var index = position + remaining / 2
        while index + 3 < input.count {
            if isBoundary(in: input, at: index) { return index + 3 }
            index += 1
        }
        return nil
    }

    /// Whether `input` holds, at `index`, the bytes the canonical writer puts between two day
    /// logs: `}},"` (the end of a log's values and of the log, the comma, the next key's quote).
    @inline(__always)
    static func isBoundary(in input: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        input[index] == UInt8(ascii: "}") && input[index + 1] == UInt8(ascii: "}")
            && input[index + 2] == UInt8(ascii: ",") && input[index + 3] == UInt8(ascii: "\"")
    }

    /// The day logs on two cores: this thread decodes from the start and stops when it reaches
    /// `split` as the start of a member; another decodes from `split` to the end of the object,
    /// assuming that. Decoding is a function of the position alone (the remembered ids are
    /// only caches), so once the first half arrives exactly at `split` the second half's
    /// logs, issues and errors are the ones a single pass would have produced, and they are
    /// appended. If the first half never lands on `split` (the guess was inside a string, or
    /// not in the day logs at all), the second half is dropped and this thread reads on.
    ///
    /// Both halves write into `storage`: the first from the start, the second after room for
    /// the logs the first is expected to hold (`expectedLogs`). At the join the second half's
    /// logs move to follow the first's, a short way when the guess was good; logs the first
    /// half had no room for wait in an overflow run and fill the gap after that move. Only
    /// address space pays for a guess too large, so the guess is generous. Returns whether
    /// the logs are in key order and all came the canonical way; `initialized` always counts
    /// the logs at the start of `storage`, and nothing is left elsewhere, error or not.
    private func decodeInHalves(
        into storage: UnsafeMutablePointer<DayLog>, capacity: Int, split: Int,
        initialized: inout Int
    ) throws(ScanError) -> (inOrder: Bool, canonical: Bool) {
        let input = UnsafeBufferPointer(start: scanner.base, count: scanner.count)
        let start = scanner.position
        let secondBound = DayLogRun.capacity(forBytes: scanner.count - split)
        let room = max(
            0,
            min(
                capacity - secondBound,
                Self.expectedLogs(in: input, from: start, to: split, sample: densitySampleBytes)))
        var first = DayLogRun(storage: storage, capacity: room, overflowCapacity: capacity - room)
        let second = DayLogsFrom(
            input: SharedInput(base: scanner.base, count: scanner.count),
            maxDepth: scanner.maxDepth, maxIssues: issues.limit, depth: scanner.depth,
            path: path, start: split, output: SharedOutput(start: storage + room),
            capacity: capacity - room)
        let (stopped, rest) = concurrently(
            { () -> Result<Bool, ScanError> in
                Result { () throws(ScanError) in
                    try dayLogMembers(into: &first, stoppingAt: split)
                }
            },
            { second.decode() })
        let firstCount = first.total
        let kept = (try? stopped.get()) == true && rest.error == nil
        if kept {
            (storage + firstCount).moveInitialize(from: storage + room, count: rest.count)
        } else {
            (storage + room).deinitialize(count: rest.count)
        }
        first.moveOverflow(to: storage + first.count)
        initialized = firstCount + (kept ? rest.count : 0)
        guard try stopped.get() else { return (first.inOrder, first.canonical) }
        if let error = rest.error { throw error }
        for issue in rest.issues { issues.add(issue) }
        scanner.position = rest.position
        scanner.depth = rest.depth
        let joinInOrder =
            firstCount == 0 || rest.count == 0
            || storage[firstCount - 1].key < storage[firstCount].key
        return (first.inOrder && rest.inOrder && joinInOrder, first.canonical && rest.canonical)
    }

    /// How many day logs `start..<split` likely holds, from the density of its first `sample`
    /// bytes, with 5% and a few more to spare; without a sample to go by, as many as those
    /// bytes can hold.
    static func expectedLogs(
        in input: UnsafeBufferPointer<UInt8>, from start: Int, to split: Int, sample: Int
    ) -> Int {
        let end = min(split, start + sample)
        var logs = 0
        var index = start
        while index + 3 < end {
            if isBoundary(in: input, at: index) { logs += 1 }
            index += 1
        }
        guard logs > 0 else { return DayLogRun.capacity(forBytes: split - start) }
        let expected = (split - start) * logs / (end - start)
        return min(expected + expected / 20 + 64, DayLogRun.capacity(forBytes: split - start))
    }

    /// Decodes members of the day-log object into `run` until the object ends (false) or the
    /// next member starts at `split` (true).
    fileprivate func dayLogMembers(into run: inout DayLogRun, stoppingAt split: Int?)
        throws(ScanError) -> Bool
    {
        repeat {
            let key = try scanner.key()
            try within(.key(key)) { () throws(ScanError) in try dayLogMember(key, into: &run) }
            guard try scanner.nextMember() else { return false }
        } while scanner.position != split
        return true
    }

    private func dayLogMember(_ key: JSONString, into run: inout DayLogRun) throws(ScanError) {
        let parsed = scanner.withBytes(key) { bytes -> (Identifier?, DayKey?) in
            guard let start = bytes.baseAddress, bytes.count > 11,
                bytes[bytes.count - 11] == UInt8(ascii: "/"),
                let day = DayKey(utf8: bytes[(bytes.count - 10)...])
            else { return (nil, nil) }
            let idCount = bytes.count - 11
            // Consecutive logs usually share a challenge: reuse its id string, recognised by
            // the bytes of the previous key (escaped keys are not remembered).
            if let lastID = run.lastID, idCount == run.lastIDCount,
                memcmp(scanner.base + run.lastIDStart, start, idCount) == 0
            {
                return (lastID, day)
            }
            let idBytes = UnsafeBufferPointer(rebasing: bytes[..<idCount])
            guard Identifier.isValid(idBytes) else { return (nil, nil) }
            run.lastIDStart = key.start
            run.lastIDCount = key.escaped ? -1 : idCount
            return (Identifier(unchecked: String(decoding: idBytes, as: UTF8.self)), day)
        }
        guard let id = parsed.0, let day = parsed.1 else {
            report(
                .fields,
                "must be a key <challengeId>/<YYYY-MM-DD> with a real date (years 2000…2199)")
            try scanner.skipValue()
            return
        }
        run.lastID = id
        let key = DayLogKey(challengeID: id, day: day)
        if let log = canonicalDayLog(key: key) {
            run.append(log)
        } else if let log = try dayLog(key: key) {
            run.canonical = false
            run.append(log)
        }
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
        // Values, the mood and the note are held to their rules here as well, so that a
        // canonical log needs no second look at them (`dayLogsHoldOwnRules`); one that breaks
        // a rule goes the general way and is reported from there.
        var mood: Int?
        if !scanner.consume("null") {
            guard let value = scanner.plainInteger(), Rules.mood.contains(value) else {
                return nil
            }
            mood = value
        }
        guard scanner.consume(#","note":"#), scanner.byte(at: scanner.position) == 0x22 else {
            return nil
        }
        let note = scanner.makeString(try scanner.string())
        // Within the bound in bytes is within it in characters; past it, the general way counts.
        guard note.utf8.count <= Rules.noteLength.upperBound else { return nil }
        // The writer's stamps have exactly three fraction digits: 24 bytes the timestamp
        // parser checks one by one (all ASCII, none a quote or a backslash), then the quote,
        // so the string needs no scan of its own.
        guard scanner.consume(#","updatedAt":""#) else { return nil }
        let stamp = scanner.position
        guard stamp + 25 <= scanner.count, scanner.base[stamp + 24] == UInt8(ascii: "\""),
            let updatedAt = Timestamp(
                utf8: UnsafeBufferPointer(start: scanner.base + stamp, count: 24))
        else { return nil }
        scanner.position = stamp + 25
        guard scanner.consume(#","values":{"#) else { return nil }
        valueBuffer.removeAll(keepingCapacity: true)
        var previous: JSONString?
        if !scanner.consume("}") {
            repeat {
                guard scanner.byte(at: scanner.position) == 0x22 else { return nil }
                let name: JSONString
                let id: Identifier
                if let recent = recentKey() {
                    (name, id) = recent
                } else {
                    name = try scanner.string()
                    guard !name.escaped, let known = rememberedIdentifier(name) else { return nil }
                    id = known
                }
                // Unescaped, valid, in order (so unique), with a plain integer value.
                guard previous.map({ scanner.precedes($0, name) }) ?? true, scanner.consume(":"),
                    let value = scanner.plainInteger(), Rules.value.contains(value)
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

    enum DayLogField: Int, ObjectField {
        case values, note, mood, updatedAt
        static let names: [StaticString] = ["values", "note", "mood", "updatedAt"]
        static let required: FieldSet<Self> = .all
    }

    private func dayLog(key: DayLogKey) throws(ScanError) -> DayLog? {
        var values: [TaskValue]?
        var note: String?
        var mood: Int?
        var moodValid = true
        var updatedAt: Timestamp?
        let complete = try object(required: DayLogField.required) { field throws(ScanError) in
            switch field {
            case .values: values = try self.values()
            case .note: note = try string()
            case .mood:
                if try null() { return }
                mood = try integer()
                moodValid = mood != nil
            case .updatedAt: updatedAt = try timestamp()
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

    enum TombstoneField: Int, ObjectField {
        case deletedAt
        static let names: [StaticString] = ["deletedAt"]
        static let required: FieldSet<Self> = .all
    }

    /// `broken` gains the ids of tombstones that did not decode.
    func tombstones(broken: inout Set<ChallengeID>) throws(ScanError) -> [Tombstone]? {
        var tombstones: [Tombstone] = []
        let isMap = try map { key throws(ScanError) in
            guard let id = identifier(key) else {
                try scanner.skipValue()
                return
            }
            var deletedAt: Timestamp?
            let complete = try object(required: TombstoneField.required) {
                field throws(ScanError) in
                switch field {
                case .deletedAt: deletedAt = try timestamp()
                }
            }
            if complete, let deletedAt {
                tombstones.append(Tombstone(id: id, deletedAt: deletedAt))
            } else {
                broken.insert(id)
            }
        }
        guard isMap else { return nil }
        sortAndDropDuplicates(
            &tombstones, by: { $0.id < $1.id }, pointer: { Pointer.tombstone($0.id) })
        return tombstones
    }
}

/// The day logs decoded so far, in storage sized in advance (`capacity(forBytes:)`) or, for
/// the first half of a split, by a guess with an overflow run behind it; and what the next
/// log is checked against.
struct DayLogRun {
    let storage: UnsafeMutablePointer<DayLog>
    let capacity: Int
    /// Logs in `storage`.
    private(set) var count = 0
    /// Where logs go once `storage` is full; made on first need, for at most
    /// `overflowCapacity` logs (0: a full storage is a broken bound).
    private(set) var overflow: OwnedDayLogs?
    let overflowCapacity: Int
    /// Sortedness is tracked on the keys as they come, so the usual sorted file never walks
    /// its (large) logs a second time.
    private(set) var lastKey: DayLogKey?
    private(set) var inOrder = true
    /// Whether every log so far came the canonical way (see `DocumentDecoder.dayLogsHoldOwnRules`).
    var canonical = true
    /// The challenge id of the previous key and where its bytes are in the input (count -1:
    /// nothing to compare with, as for an escaped key).
    var lastID: ChallengeID?
    var lastIDStart = 0
    var lastIDCount = -1

    /// A decoded day log spans at least its key (`"a/2000-01-01"`, 14 bytes), a colon, and
    /// an object with all four fields at their shortest
    /// (`{"values":{},"note":"","mood":0,"updatedAt":"2000-01-01T00:00:00Z"}`, 67 bytes):
    /// 82 bytes. Logs that fail to decode are not stored.
    static let minimumBytes = 82

    /// Room for every day log `bytes` of input can hold.
    static func capacity(forBytes bytes: Int) -> Int { bytes / minimumBytes + 1 }

    init(storage: UnsafeMutablePointer<DayLog>, capacity: Int, overflowCapacity: Int = 0) {
        self.storage = storage
        self.capacity = capacity
        self.overflowCapacity = overflowCapacity
    }

    /// Logs in `storage` and in the overflow.
    var total: Int { count + (overflow?.run.count ?? 0) }

    mutating func append(_ log: consuming DayLog) {
        if let lastKey, !(lastKey < log.key) { inOrder = false }
        lastKey = log.key
        if count < capacity {
            (storage + count).initialize(to: log)
            count += 1
            return
        }
        precondition(overflowCapacity > 0, "a day log took fewer than \(Self.minimumBytes) bytes")
        let spill = overflow ?? OwnedDayLogs(capacity: overflowCapacity)
        overflow = spill
        spill.run.append(log)
    }

    /// Moves the overflow's logs to `destination` (no copies, no reference counting).
    mutating func moveOverflow(to destination: UnsafeMutablePointer<DayLog>) {
        guard let spill = overflow else { return }
        destination.moveInitialize(from: spill.run.storage, count: spill.run.count)
        spill.run.count = 0
        overflow = nil
    }
}

/// Storage of an overflow run: whatever is still in it when the last reference goes (an
/// error) is released with it.
final class OwnedDayLogs {
    var run: DayLogRun

    init(capacity: Int) {
        run = DayLogRun(storage: .allocate(capacity: capacity), capacity: capacity)
    }

    deinit {
        run.storage.deinitialize(count: run.count)
        run.storage.deallocate()
    }
}

/// The input, lent to the thread that decodes the second half of the day logs. The caller
/// keeps it alive and unchanged until that thread has been joined (`concurrently` joins it).
struct SharedInput: @unchecked Sendable {
    let base: UnsafePointer<UInt8>
    let count: Int
}

/// The second half of the day logs: a decoder of its own, placed where the first half's
/// would be at `start` (same depth, same path), decoding to the end of the object into
/// `output`.
private struct DayLogsFrom: Sendable {
    let input: SharedInput
    let maxDepth: Int
    let maxIssues: Int
    let depth: Int
    let path: [DocumentDecoder.Component]
    let start: Int
    let output: SharedOutput<DayLog>
    let capacity: Int

    struct Decoded: Sendable {
        /// Logs written at `output`, also when decoding failed.
        var count: Int
        var inOrder: Bool
        var canonical: Bool
        var error: ScanError?
        var issues: [ValidationIssue]
        /// Where the scanner is after the object's `}`, and its depth there.
        var position: Int
        var depth: Int
    }

    func decode() -> Decoded {
        let scanner = JSONScanner(base: input.base, count: input.count, maxDepth: maxDepth)
        scanner.position = start
        scanner.depth = depth
        let decoder = DocumentDecoder(scanner: scanner, maxIssues: maxIssues, path: path)
        var run = DayLogRun(storage: output.start, capacity: capacity)
        var error: ScanError?
        do throws(ScanError) {
            _ = try decoder.dayLogMembers(into: &run, stoppingAt: nil)
        } catch let failure {
            error = failure
        }
        return Decoded(
            count: run.count, inOrder: run.inOrder, canonical: run.canonical, error: error,
            issues: decoder.issues.issues,
            position: scanner.position, depth: scanner.depth)
    }
}
