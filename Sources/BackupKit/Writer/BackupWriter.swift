import Parallel

/// Writes schema 4, deterministically (FORMAT.md §4.2 canonical bytes); schema 3 on request for
/// an app that cannot read 4 yet (the bytes differ only in the version number).
///
/// Same document → same bytes: every object's keys are emitted in the order of their UTF-8
/// bytes. Field names are hard-coded here already in that order (a test checks it against
/// an independent JSON implementation), and the document's collections are sorted arrays in
/// key order, so writing is one straight walk.
///
/// Design: the walk streams. A collection too long for one slice (a few MB of output) is
/// written two slices at a time, the first on the caller's thread into one buffer and the
/// second on another core into a second one, each buffer starting from the emitter's
/// position at the collection's opening; the two are handed to the sink in document order
/// and reused for the next pair. The fixed parts (the opening, settings, closings) go into
/// the first buffer between collections. So a write holds two slices at most, whatever the
/// document's size, and a document whose collections each fit in one slice is written on
/// the caller's thread alone, into one buffer handed over once. Writing the whole document
/// into one array walks the same way, the first buffer being the result itself.
///
///     try BackupWriter.write(document) { part throws(LocalFileError) in try write(part) }
///
/// `canonicalBytes(of:)` writes a single challenge or day log through the very same
/// functions, so the merge's tie-break compares exactly what the file holds.
public enum BackupWriter {
    /// The versions the writer can produce. Version 3 is version 4 without day logs kept
    /// under a tombstone (FORMAT.md §2.4): a document written as 3 must hold none
    /// (`BackupDocument.droppingKeptDayLogs()` makes it so), or the file will not read.
    public enum WrittenSchema: Int, Sendable {
        /// FORMAT.md §2.3: for `migrate --schema 3`, after dropping the kept day logs.
        case version3 = 3
        /// FORMAT.md §2.4, what every write produces unless asked otherwise.
        case version4 = 4

        /// The version `BackupDocument.currentSchemaVersion` names: 4.
        public static let current = WrittenSchema.version4
    }

    /// The whole document, compact (or 2-space indented when `pretty`), with a trailing
    /// newline. The collections must be sorted as `BackupDocument` documents them.
    public static func write(
        _ document: BackupDocument, pretty: Bool = false, schema: WrittenSchema = .current
    ) -> [UInt8] {
        write(document, pretty: pretty, schema: schema, slicing: Slicing())
    }

    static func write(
        _ document: BackupDocument, pretty: Bool, schema: WrittenSchema = .current,
        slicing: Slicing
    ) -> [UInt8] {
        // A generous size guess so the result never grows for a usual document: growing
        // copies everything written so far and, at a million day logs, doubles a buffer of
        // hundreds of megabytes. Reserving too much costs only address space, as pages are
        // touched when filled. The first slice of each pair is written straight into the
        // result and the second appended to it, so most bytes are written once, not copied.
        var slices = Slices(
            pretty: pretty, capacity: estimatedSize(of: document, pretty: pretty),
            sliceCapacity: sliceCapacity(of: document, pretty: pretty), keepsWhole: true)
        walk(document, schema: schema, slicing: slicing, slices: &slices) {
            (_: UnsafeRawBufferPointer) in
            preconditionFailure("a whole write hands nothing over before it ends")
        }
        return slices.out.bytes
    }

    /// The bytes of `write(_:pretty:)`, handed to `sink` part by part in order (each part
    /// valid only during its call), holding at most two slices at once: a few MB for usual
    /// documents (slices count members, so logs with long notes make larger ones). An error
    /// from `sink` stops the write and comes out here.
    public static func write<Failure: Error>(
        _ document: BackupDocument, pretty: Bool = false, schema: WrittenSchema = .current,
        to sink: (UnsafeRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
        try write(document, pretty: pretty, schema: schema, slicing: Slicing(), to: sink)
    }

    /// How many members of each collection one slice holds: about 3 MB of compact output
    /// each, as a usual day log takes 150–200 bytes, a challenge about 1 KB and a tombstone
    /// about 70 bytes (a slice of logs with 2,000-character notes is far larger). A collection
    /// of at most that many is written without a second thread.
    struct Slicing: Sendable {
        var challenges = 2_048
        var dayLogs = 16_384
        var tombstones = 32_768
    }

    static func write<Failure: Error>(
        _ document: BackupDocument, pretty: Bool, schema: WrittenSchema = .current,
        slicing: Slicing, to sink: (UnsafeRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
        let capacity = sliceCapacity(of: document, pretty: pretty)
        var slices = Slices(
            pretty: pretty, capacity: capacity, sliceCapacity: capacity, keepsWhole: false)
        try walk(document, schema: schema, slicing: slicing, slices: &slices, to: sink)
        try slices.hand(slices.out, to: sink)
    }

    /// `bytes`, a compact write of a document exported at `old`, as writing that document
    /// exported at `new` gives them, without walking the document again: the export time is
    /// one fixed-width value after the collections, and only the settings and tombstones come
    /// after it, which hold no key of that name. (Inside a string every quote is escaped, so
    /// the key's bytes cannot occur there.) nil when `bytes` hold no such value (a pretty
    /// write), or when the two stamps are spelled at different widths.
    public static func restamped(_ bytes: [UInt8], from old: Timestamp, to new: Timestamp)
        -> [UInt8]?
    {
        var spelled = JSONOutput(capacity: 64)
        spelled.beginObject()
        spelled.key("exportedAt")
        spelled.timestamp(old)
        let key = spelled.bytes.dropFirst()
        var stamp = JSONOutput(capacity: 32)
        stamp.timestamp(new)
        guard stamp.bytes.count == key.count - "\"exportedAt\":".utf8.count,
            let start = lastIndex(of: key, in: bytes)
        else { return nil }
        var restamped = bytes
        restamped.replaceSubrange(
            (start + key.count - stamp.bytes.count)..<(start + key.count), with: stamp.bytes)
        return restamped
    }

    /// Where `pattern` last starts in `bytes`, searching from the end.
    private static func lastIndex(of pattern: ArraySlice<UInt8>, in bytes: [UInt8]) -> Int? {
        guard let last = pattern.last, pattern.count <= bytes.count else { return nil }
        var end = bytes.count - 1
        while end >= pattern.count - 1 {
            if bytes[end] == last, bytes[(end + 1 - pattern.count)...end].elementsEqual(pattern) {
                return end + 1 - pattern.count
            }
            end -= 1
        }
        return nil
    }

    /// One slice's worth, or the whole document when it is smaller.
    private static func sliceCapacity(of document: BackupDocument, pretty: Bool) -> Int {
        min(estimatedSize(of: document, pretty: pretty), pretty ? 8 << 20 : 4 << 20)
    }

    /// The document from its opening to its last newline, into `slices`, which hands full
    /// pairs of slices to `sink` unless it keeps the whole; the rest stays in `slices.out`.
    private static func walk<Failure: Error>(
        _ document: BackupDocument, schema: WrittenSchema, slicing: Slicing, slices: inout Slices,
        to sink: (UnsafeRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
        slices.out.beginObject()
        slices.out.key("challenges")
        slices.out.beginObject()
        let challenges = document.challenges
        try slices.members(challenges.count, perSlice: slicing.challenges, to: sink) {
            index, out in
            out.key(id: challenges[index].id)
            write(challenges[index], into: &out)
        }
        slices.out.endObject()
        slices.out.key("dayLogs")
        slices.out.beginObject()
        let dayLogs = document.dayLogs
        try slices.members(dayLogs.count, perSlice: slicing.dayLogs, to: sink) { index, out in
            if out.pretty {
                let dayLog = dayLogs[index]
                out.key(dayLog.key)
                write(dayLog, into: &out)
            } else {
                out.compactDayLog(in: dayLogs, at: index, withKey: true)
            }
        }
        slices.out.endObject()
        slices.out.key("deviceId")
        slices.out.string(document.deviceId.rawValue)
        slices.out.key("exportedAt")
        slices.out.timestamp(document.exportedAt)
        slices.out.key("format")
        slices.out.string(BackupDocument.format)
        slices.out.key("schemaVersion")
        slices.out.integer(schema.rawValue)
        slices.out.key("settings")
        write(document.settings, into: &slices.out)
        slices.out.key("tombstones")
        slices.out.beginObject()
        let tombstones = document.tombstones
        try slices.members(tombstones.count, perSlice: slicing.tombstones, to: sink) {
            index, out in
            out.key(id: tombstones[index].id)
            out.beginObject()
            out.key("deletedAt")
            out.timestamp(tombstones[index].deletedAt)
            out.endObject()
        }
        slices.out.endObject()
        slices.out.endObject()
        slices.out.endLine()
    }

    /// A usual day log takes 150–200 bytes, a challenge about 1 KB; indenting doubles that.
    private static func estimatedSize(of document: BackupDocument, pretty: Bool) -> Int {
        let compact =
            4096 + document.challenges.count * 2048 + document.dayLogs.count * 320
            + document.tombstones.count * 128
        return pretty ? compact * 2 : compact
    }

    /// The challenge's own object (without its id key), compact, as it appears in a file.
    public static func canonicalBytes(of challenge: Challenge) -> [UInt8] {
        var out = JSONOutput(capacity: 512)
        write(challenge, into: &out)
        return out.bytes
    }

    /// The day log's own object (without its key), compact, as it appears in a file.
    public static func canonicalBytes(of dayLog: DayLog) -> [UInt8] {
        var out = JSONOutput(capacity: 128)
        write(dayLog, into: &out)
        return out.bytes
    }

    static func write(_ settings: Settings, into out: inout JSONOutput) {
        out.beginObject()
        if let appLock = settings.appLock {
            out.key("appLock")
            out.beginObject()
            out.key("enabled")
            out.bool(appLock.enabled)
            out.key("method")
            out.string(appLock.method)
            out.endObject()
        }
        out.key("dayStartHour")
        out.integer(settings.dayStartHour)
        if let premium = settings.premium {
            out.key("premium")
            out.beginObject()
            out.key("expiresAt")
            out.timestamp(premium.expiresAt)
            out.key("plan")
            out.string(premium.plan)
            out.key("validatedAt")
            out.timestamp(premium.validatedAt)
            out.endObject()
        }
        out.key("reminderTime")
        if let reminder = settings.reminderTime {
            out.string(reminder.description)
        } else {
            out.null()
        }
        out.key("theme")
        out.string(settings.theme.rawValue)
        out.key("weekStartsOn")
        out.string(settings.weekStartsOn.rawValue)
        out.endObject()
    }

    static func write(_ challenge: Challenge, into out: inout JSONOutput) {
        out.beginObject()
        out.key("createdAt")
        out.timestamp(challenge.createdAt)
        out.key("durationDays")
        out.integer(challenge.durationDays)
        out.key("pausedDays")
        out.beginArray()
        for day in challenge.pausedDays { out.dayKey(day) }
        out.endArray()
        out.key("startDate")
        out.dayKey(challenge.startDate)
        out.key("tasks")
        out.beginObject()
        for task in challenge.tasks {
            out.key(id: task.id)
            out.beginObject()
            out.key("archivedFrom")
            out.dayKey(task.archivedFrom)
            out.key("rules")
            out.beginArray()
            for rule in task.rules {
                out.beginObject()
                out.key("from")
                out.dayKey(rule.from)
                out.key("target")
                out.integer(rule.target)
                out.key("type")
                out.string(rule.type.rawValue)
                if let unit = rule.unit {
                    out.key("unit")
                    out.string(unit)
                }
                out.endObject()
            }
            out.endArray()
            out.key("title")
            out.string(task.title)
            out.endObject()
        }
        out.endObject()
        out.key("title")
        out.string(challenge.title)
        out.key("updatedAt")
        out.timestamp(challenge.updatedAt)
        out.endObject()
    }

    static func write(_ dayLog: DayLog, into out: inout JSONOutput) {
        guard out.pretty else {
            out.compactDayLog(dayLog, withKey: false)
            return
        }
        out.beginObject()
        out.key("mood")
        if let mood = dayLog.mood { out.integer(mood) } else { out.null() }
        out.key("note")
        out.string(dayLog.note)
        out.key("updatedAt")
        out.timestamp(dayLog.updatedAt)
        out.key("values")
        out.beginObject()
        for value in dayLog.values {
            out.key(id: value.taskID)
            out.integer(value.value)
        }
        out.endObject()
        out.endObject()
    }
}

/// The two buffers of a streamed write: `out`, written on the caller's thread (the fixed
/// parts and every first slice of a pair), and the second core's, made on first need. When
/// it `keepsWhole`, nothing is handed over: each second slice is appended to `out`, which
/// ends up holding the document.
private struct Slices {
    var out: JSONOutput
    private var second: SecondBuffer?
    private let sliceCapacity: Int
    private let keepsWhole: Bool

    init(pretty: Bool, capacity: Int, sliceCapacity: Int, keepsWhole: Bool) {
        out = JSONOutput(pretty: pretty, capacity: capacity)
        self.sliceCapacity = sliceCapacity
        self.keepsWhole = keepsWhole
    }

    /// Writes members `0..<count` of the container `out` has just opened, `perSlice` at a time, two
    /// slices at once, handing each full pair to `sink` (or keeping it). Afterwards `out`
    /// stands after the last member, holding whatever is not handed over yet.
    mutating func members<Failure: Error>(
        _ count: Int, perSlice: Int,
        to sink: (UnsafeRawBufferPointer) throws(Failure) -> Void,
        _ write: @escaping @Sendable (Int, inout JSONOutput) -> Void
    ) throws(Failure) {
        let members = 0..<count
        precondition(perSlice > 0, "a slice holds at least one member")
        let opening = out.position
        var next = members.startIndex
        // A last lone slice goes on in `out` like the fixed parts around it.
        while members.endIndex - next > perSlice {
            // The last pair is shared out evenly: a full slice beside a short rest would
            // leave one core idle most of the time (20,000 logs: 16,384 beside 3,616).
            let pair = min(members.endIndex - next, 2 * perSlice)
            let mine = next..<(next + (pair + 1) / 2)
            let theirs = mine.upperBound..<(next + pair)
            next = theirs.upperBound
            let buffer = secondBuffer()
            buffer.output.resume(at: opening, afterMembers: true)
            _ = concurrently(
                { for member in mine { write(member, &out) } },
                { for member in theirs { write(member, &buffer.output) } })
            if keepsWhole {
                out.append(buffer.output)
            } else {
                try hand(out, to: sink)
                try hand(buffer.output, to: sink)
                out.resume(at: opening, afterMembers: true)
            }
        }
        for member in next..<members.endIndex { write(member, &out) }
    }

    /// `output`'s bytes to `sink`, as one part.
    func hand<Failure: Error>(
        _ output: JSONOutput, to sink: (UnsafeRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
        try output.bytes.withUnsafeBufferPointer { (part) throws(Failure) in
            try sink(UnsafeRawBufferPointer(part))
        }
    }

    private mutating func secondBuffer() -> SecondBuffer {
        if let second { return second }
        let made = SecondBuffer(JSONOutput(pretty: out.pretty, capacity: sliceCapacity))
        second = made
        return made
    }
}

/// The second core's buffer, in a class so that the job on the other thread writes into it
/// in place (a captured copy of a `JSONOutput` would copy its bytes on the first write).
/// Only one thread touches it at a time: the job while it runs, the caller before it starts
/// and after `concurrently` has joined it.
private final class SecondBuffer: @unchecked Sendable {
    var output: JSONOutput

    init(_ output: JSONOutput) {
        self.output = output
    }
}
