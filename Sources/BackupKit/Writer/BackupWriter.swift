/// Writes schema 3, deterministically (SPEC §3, §4b canonical bytes).
///
/// Same document → same bytes: every object's keys are emitted in the order of their UTF-8
/// bytes. Field names are hard-coded here already in that order (a test checks it against
/// an independent JSON implementation), and the document's collections are sorted arrays in
/// key order, so writing is one straight walk into one preallocated buffer.
///
/// `canonicalBytes(of:)` writes a single challenge or day log through the very same
/// functions, so the merge's tie-break compares exactly what the file holds.
public enum BackupWriter {
    /// The whole document, compact (or 2-space indented when `pretty`), with a trailing
    /// newline. The collections must be sorted as `BackupDocument` documents them.
    public static func write(_ document: BackupDocument, pretty: Bool = false) -> [UInt8] {
        // A generous size guess so the buffer never grows for a usual document: growing
        // copies everything written so far and, at a million day logs, doubles a buffer of
        // hundreds of megabytes. Reserving too much costs only address space, as pages are
        // touched when filled. A usual day log takes 150–200 bytes, a challenge about 1 KB.
        let estimate =
            4096 + document.challenges.count * 2048 + document.dayLogs.count * 320
            + document.tombstones.count * 128
        var out = JSONOutput(pretty: pretty, capacity: pretty ? estimate * 2 : estimate)
        write(document, into: &out)
        out.endLine()
        return out.bytes
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

    static func write(_ document: BackupDocument, into out: inout JSONOutput) {
        out.beginObject()
        out.key("challenges")
        out.beginObject()
        for challenge in document.challenges {
            out.key(id: challenge.id)
            write(challenge, into: &out)
        }
        out.endObject()
        out.key("dayLogs")
        out.beginObject()
        for dayLog in document.dayLogs {
            if out.pretty {
                out.key(dayLog.key)
                write(dayLog, into: &out)
            } else {
                out.compactDayLog(dayLog, withKey: true)
            }
        }
        out.endObject()
        out.key("deviceId")
        out.string(document.deviceId.rawValue)
        out.key("exportedAt")
        out.timestamp(document.exportedAt)
        out.key("format")
        out.string(BackupDocument.format)
        out.key("schemaVersion")
        out.integer(BackupDocument.currentSchemaVersion)
        out.key("settings")
        write(document.settings, into: &out)
        out.key("tombstones")
        out.beginObject()
        for tombstone in document.tombstones {
            out.key(id: tombstone.id)
            out.beginObject()
            out.key("deletedAt")
            out.timestamp(tombstone.deletedAt)
            out.endObject()
        }
        out.endObject()
        out.endObject()
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
