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

    func dayLogs() throws(ScanError) -> DayLogStore? {
        guard scanner.peek() == UInt8(ascii: "{") else {
            try wrongType("an object")
            return nil
        }
        // The store is sized once for the most logs the rest of the input can hold: only
        // address space pays for the excess, as pages are touched when filled, and nothing is
        // copied while it grows.
        var run = DayLogRun(reservingFor: scanner.count - scanner.position)
        if try scanner.openObject() {
            scanner.startReleasing(at: scanner.position)
            let input = UnsafeBufferPointer(start: scanner.base, count: scanner.count)
            if let split = Self.splitPoint(
                in: input, after: scanner.position, minimum: splitFromBytes)
            {
                try decodeInHalves(into: &run, split: split)
            } else {
                _ = try dayLogMembers(into: &run, stoppingAt: nil)
            }
            scanner.release(upTo: scanner.position, newlineFree: run.newlineFree)
        }
        var logs = run.store
        if !run.inOrder {
            logs.sortByKey { duplicateKey(at: Pointer.dayLog($0)) }
        }
        dayLogsHoldOwnRules = run.canonical
        return logs
    }

    /// Where a second core may start on the day logs: the key of the first day log past the
    /// middle of what is left after `position`, found by the bytes a writer puts between two
    /// day logs (`boundary(in:at:)`). Only a guess: nothing is trusted until the first half
    /// arrives there (see `decodeInHalves`). Nil below `minimum` bytes, where a thread costs
    /// more than it saves, and when no boundary comes within `splitSearch` bytes of the
    /// middle: a file spelled another way (pretty, say) would otherwise be searched to its
    /// end for nothing, on every read.
    static func splitPoint(in input: UnsafeBufferPointer<UInt8>, after position: Int, minimum: Int)
        -> Int?
    {
        let remaining = input.count - position
        guard remaining >= max(minimum, 8) else { return nil }
        var index = position + remaining / 2
        let end = min(input.count - 4, index + splitSearch)
        while index < end {
            if let length = boundary(in: input, at: index) { return index + length - 1 }
            index += 1
        }
        return nil
    }

    /// Far more than a day log spans but for a note of a book's length; past it the rest
    /// is read on one core, with the same result.
    static let splitSearch = 1 << 20

    /// The length of the bytes a writer puts between two day logs at `index`, through the
    /// next key's quote: `}},"` (the end of a log's values and of the log, the comma, the
    /// quote), or `}}, "` (a space after the comma, as Python's `json.dumps` writes); nil
    /// when `index` holds neither. At most 5 bytes are read, so `index + 4` must be inside.
    @inline(__always)
    static func boundary(in input: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        guard input[index] == UInt8(ascii: "}"), input[index + 1] == UInt8(ascii: "}"),
            input[index + 2] == UInt8(ascii: ",")
        else { return nil }
        if input[index + 3] == UInt8(ascii: "\"") { return 4 }
        return input[index + 3] == UInt8(ascii: " ") && input[index + 4] == UInt8(ascii: "\"")
            ? 5 : nil
    }

    /// The day logs on two cores: this thread decodes from the start and stops when it reaches
    /// `split` as the start of a member; another decodes from `split` to the end of the object,
    /// assuming that. Decoding is a function of the position alone (the remembered ids are
    /// only caches), so once the first half arrives exactly at `split` the second half's
    /// logs, issues and errors are the ones a single pass would have produced, and they are
    /// appended. If the first half never lands on `split` (the guess was inside a string, or
    /// not in the day logs at all), the second half is dropped and this thread reads on.
    private func decodeInHalves(into run: inout DayLogRun, split: Int) throws(ScanError) {
        let second = DayLogsFrom(
            input: SharedInput(base: scanner.base, count: scanner.count),
            maxDepth: scanner.maxDepth, maxIssues: issues.limit, depth: scanner.depth,
            path: path, start: split)
        let (stopped, rest) = concurrently(
            { () -> Result<Bool, ScanError> in
                Result { () throws(ScanError) in
                    try dayLogMembers(into: &run, stoppingAt: split)
                }
            },
            { second.decode() })
        guard try stopped.get() else { return }
        if let error = rest.error { throw error }
        for issue in rest.issues { issues.add(issue) }
        scanner.position = rest.position
        scanner.depth = rest.depth
        run.join(rest.run)
    }

    /// Decodes members of the day-log object into `run` until the object ends (false) or the
    /// next member starts at `split` (true). Behind it, the bytes read are released when the
    /// scanner may (only this thread's scanner: a second half's range waits until the first
    /// half has confirmed it, then `dayLogs()` releases it whole).
    fileprivate func dayLogMembers(into run: inout DayLogRun, stoppingAt split: Int?)
        throws(ScanError) -> Bool
    {
        // Where the previous member ended (one before the first key's quote at the start):
        // the bytes from there to the key's quote are a comma and what whitespace came.
        var end = scanner.position - 1
        repeat {
            let key = try scanner.key()
            if key.start - end > 2,
                (end..<(key.start - 1)).contains(where: { scanner.base[$0] == 0x0A })
            {
                run.newlineBetweenMembers = true
            }
            if let released = scanner.releasedUpTo, let step = scanner.releaseStep,
                key.start - released >= step
            {
                // The previous key's bytes stay: the next key is compared with them.
                scanner.release(
                    upTo: min(key.start, run.lastIDStart), newlineFree: run.newlineFree)
            }
            try within(.key(key)) { () throws(ScanError) in try dayLogMember(key, into: &run) }
            end = scanner.position
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
        if canonicalDayLog(key: key, into: &run) {
            return
        }
        if try dayLog(key: key, into: &run) {
            run.canonical = false
        }
    }

    /// A day log spelled exactly as the canonical writer spells it, or the same with a space
    /// after each colon and comma (as Python's `json.dumps` spells JSON by default, keeping
    /// the keys in the order they came, as a script that edits a file does), read without
    /// the general machinery (no field lookup, no path, no reports): nearly every day log of
    /// a file this library wrote, or `json.dumps` rewrote. Nil, with the position back where
    /// it was, at the first difference of any kind, valid or not; `dayLog(key:)` then reads
    /// it the general way, reporting whatever is wrong exactly as if this had never been
    /// tried. It changes nothing else (the remembered ids and the value scratch are caches).
    private func canonicalDayLog(key: DayLogKey, into run: inout DayLogRun) -> Bool {
        let start = scanner.position
        // A space after the key's colon announces the spaced spelling.
        let spaced = scanner.byte(at: scanner.position) == UInt8(ascii: " ")
        // The log and its values are two levels below here: let the general way report depth.
        guard scanner.depth + 2 <= scanner.maxDepth,
            (try? spaced
                ? canonicalDayLogBody(key: key, into: &run, spelling: Spaced.self)
                : canonicalDayLogBody(key: key, into: &run, spelling: Compact.self)) == true
        else {
            scanner.position = start
            return false
        }
        return true
    }

    /// Generic over the spelling so that each gets a body of its own whose literals are
    /// constants: a literal chosen at run time costs a call to memcmp per part (5% of a
    /// canonical read, callgrind).
    private func canonicalDayLogBody<S: LogSpelling>(
        key: DayLogKey, into run: inout DayLogRun, spelling: S.Type
    ) throws(ScanError) -> Bool {
        scanner.position += S.lead
        guard scanner.consume(S.open) else { return false }
        // Values, the mood and the note are held to their rules here as well, so that a
        // canonical log needs no second look at them (`dayLogsHoldOwnRules`); one that breaks
        // a rule goes the general way and is reported from there.
        var mood: Int?
        if !scanner.consume("null") {
            guard let value = scanner.plainInteger(), Rules.mood.contains(value) else {
                return false
            }
            mood = value
        }
        guard scanner.consume(S.note), scanner.byte(at: scanner.position) == 0x22 else {
            return false
        }
        // The note's bytes stay where they are (the input, or the scratch an escaped string is
        // decoded into, which no later string of a canonical log touches) until the log is
        // stored.
        let note = try scanner.string()
        // Within the bound in bytes is within it in characters; past it, the general way counts.
        guard scanner.withBytes(note, \.count) <= Rules.noteLength.upperBound else { return false }
        // The writer's stamps have exactly three fraction digits: 24 bytes the timestamp
        // parser checks one by one (all ASCII, none a quote or a backslash), then the quote,
        // so the string needs no scan of its own.
        guard scanner.consume(S.updatedAt) else { return false }
        let stamp = scanner.position
        guard stamp + 25 <= scanner.count, scanner.base[stamp + 24] == UInt8(ascii: "\""),
            let updatedAt = Timestamp(
                utf8: UnsafeBufferPointer(start: scanner.base + stamp, count: 24))
        else { return false }
        scanner.position = stamp + 25
        guard scanner.consume(S.values) else { return false }
        valueBuffer.removeAll(keepingCapacity: true)
        var previous: JSONString?
        if !scanner.consume("}") {
            repeat {
                guard scanner.byte(at: scanner.position) == 0x22 else { return false }
                let name: JSONString
                let id: Identifier
                if let recent = recentKey() {
                    (name, id) = recent
                } else {
                    name = try scanner.string()
                    guard !name.escaped, let known = rememberedIdentifier(name) else {
                        return false
                    }
                    id = known
                }
                // Unescaped, valid, in order (so unique), with a plain integer value.
                guard previous.map({ scanner.precedes($0, name) }) ?? true,
                    scanner.consume(S.colon),
                    let value = scanner.plainInteger(), Rules.value.contains(value)
                else { return false }
                previous = name
                valueBuffer.append(TaskValue(taskID: id, value: value))
            } while scanner.consume(S.comma)
            guard scanner.consume("}") else { return false }
        }
        guard scanner.consume("}") else { return false }
        scanner.withBytes(note) { note in
            run.append(key: key, values: valueBuffer, note: note, mood: mood, updatedAt: updatedAt)
        }
        return true
    }

    /// The bytes between a day log's parts on the shortcut: the canonical writer's, or the
    /// same with a space after each colon and comma (`json.dumps`'s default).
    private protocol LogSpelling {
        /// The bytes after the key's colon before the log's `{`.
        static var lead: Int { get }
        static var open: StaticString { get }
        static var note: StaticString { get }
        static var updatedAt: StaticString { get }
        static var values: StaticString { get }
        static var colon: StaticString { get }
        static var comma: StaticString { get }
    }

    private enum Compact: LogSpelling {
        static var lead: Int { 0 }
        static var open: StaticString { #"{"mood":"# }
        static var note: StaticString { #","note":"# }
        static var updatedAt: StaticString { #","updatedAt":""# }
        static var values: StaticString { #","values":{"# }
        static var colon: StaticString { ":" }
        static var comma: StaticString { "," }
    }

    private enum Spaced: LogSpelling {
        static var lead: Int { 1 }
        static var open: StaticString { #"{"mood": "# }
        static var note: StaticString { #", "note": "# }
        static var updatedAt: StaticString { #", "updatedAt": ""# }
        static var values: StaticString { #", "values": {"# }
        static var colon: StaticString { ": " }
        static var comma: StaticString { ", " }
    }

    enum DayLogField: Int, ObjectField {
        case values, note, mood, updatedAt
        static let names: [StaticString] = ["values", "note", "mood", "updatedAt"]
        static let required: FieldSet<Self> = .all
    }

    /// A day log read the general way into `run`, from its parts: false when it did not decode
    /// (what is wrong is reported).
    private func dayLog(key: DayLogKey, into run: inout DayLogRun) throws(ScanError) -> Bool {
        var valuesRead = false
        var note: String?
        var mood: Int?
        var moodValid = true
        var updatedAt: Timestamp?
        let complete = try object(required: DayLogField.required) { field throws(ScanError) in
            switch field {
            case .values: valuesRead = try self.values()
            case .note: note = try string()
            case .mood:
                if try null() { return }
                mood = try integer()
                moodValid = mood != nil
            case .updatedAt: updatedAt = try timestamp()
            }
        }
        guard complete, moodValid, valuesRead, var note, let updatedAt else { return false }
        // The values are in `valueBuffer`, where `values()` left them.
        note.withUTF8 { note in
            run.append(key: key, values: valueBuffer, note: note, mood: mood, updatedAt: updatedAt)
        }
        return true
    }

    /// The log's values into `valueBuffer`, sorted; false when they did not decode.
    private func values() throws(ScanError) -> Bool {
        // Collected in a reused buffer that the store copies from: no allocation per log.
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
        guard isMap, !broken else { return false }
        let before = valueBuffer.count
        if !inOrder {
            sortAndDropDuplicates(
                &valueBuffer, by: { $0.taskID < $1.taskID },
                pointer: { self.pointer + "/" + $0.taskID.rawValue })
        }
        return valueBuffer.count == before
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

/// The day logs decoded so far, and what the next log is checked against.
struct DayLogRun: Sendable {
    private(set) var store = DayLogStore()
    /// Sortedness is tracked on the keys as they come, so the usual sorted file never walks
    /// its (large) logs a second time.
    private(set) var firstKey: DayLogKey?
    private(set) var lastKey: DayLogKey?
    private(set) var inOrder = true
    /// Whether every log so far came the canonical way (see `DocumentDecoder.dayLogsHoldOwnRules`).
    var canonical = true
    /// Whether a newline came between two members so far.
    var newlineBetweenMembers = false
    /// Whether the bytes read so far surely hold no newline: every log on the shortcut (which
    /// admits no whitespace but the spaced spelling's spaces) and none between members.
    /// Releasing such bytes needs no count of their lines.
    var newlineFree: Bool { canonical && !newlineBetweenMembers }
    /// The challenge id of the previous key and where its bytes are in the input (count -1:
    /// nothing to compare with, as for an escaped key).
    var lastID: ChallengeID?
    var lastIDStart = 0
    var lastIDCount = -1

    /// A decoded day log spans at least its key (`"a/2000-01-01"`, 14 bytes), a colon, and
    /// an object with all four fields at their shortest
    /// (`{"values":{},"note":"","mood":0,"updatedAt":"2000-01-01T00:00:00Z"}`, 67 bytes):
    /// 82 bytes; a value at least `"a":0` and a comma, 6. Logs that fail to decode are not
    /// stored.
    static let minimumBytes = 82
    static let minimumValueBytes = 6

    /// A run with room for everything `bytes` of input can hold.
    init(reservingFor bytes: Int) {
        store.reserve(
            logs: bytes / Self.minimumBytes + 1, values: bytes / Self.minimumValueBytes + 1,
            noteBytes: bytes)
    }

    private mutating func follow(_ key: DayLogKey) {
        if let lastKey, !(lastKey < key) { inOrder = false }
        if firstKey == nil { firstKey = key }
        lastKey = key
    }

    mutating func append(
        key: DayLogKey, values: [TaskValue], note: UnsafeBufferPointer<UInt8>, mood: Int?,
        updatedAt: Timestamp
    ) {
        follow(key)
        store.append(key: key, values: values, note: note, mood: mood, updatedAt: updatedAt)
    }

    /// `later`'s logs after these: the second half joining the first.
    mutating func join(_ later: DayLogRun) {
        if let lastKey, let next = later.firstKey, !(lastKey < next) { inOrder = false }
        inOrder = inOrder && later.inOrder
        canonical = canonical && later.canonical
        newlineBetweenMembers = newlineBetweenMembers || later.newlineBetweenMembers
        store.append(contentsOf: later.store)
        if firstKey == nil { firstKey = later.firstKey }
        lastKey = later.lastKey ?? lastKey
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

    struct Decoded: Sendable {
        /// The logs decoded, also when decoding failed.
        var run: DayLogRun
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
        var run = DayLogRun(reservingFor: input.count - start)
        var error: ScanError?
        do throws(ScanError) {
            _ = try decoder.dayLogMembers(into: &run, stoppingAt: nil)
        } catch let failure {
            error = failure
        }
        return Decoded(
            run: run, error: error, issues: decoder.issues.issues,
            position: scanner.position, depth: scanner.depth)
    }
}
