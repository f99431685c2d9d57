/// Reads any supported schema version from untrusted bytes into a validated schema-4
/// document.
///
/// One pass over the bytes. The top-level members are read in file order, but how most of
/// them decode depends on `schemaVersion`, which canonical files write late (keys are
/// sorted). So a member met before the version is known is stepped over and its offset
/// kept; once the version is known the scanner jumps back and decodes it. `dayLogs`, by far
/// the largest part, has the same shape in versions 2 to 4 and is decoded on the spot.
///
/// Then, in order: the version's own validator on what decoded, each migration step with
/// the next version's validator before it, and the notes. Versions 3 and 4 differ in one rule
/// only (a version-4 day log may name a tombstone, FORMAT.md §2.4), so 3→4 is the same document.
public enum BackupReader {
    /// The document in `bytes`, migrated to schema 4; throws with every problem found (up to
    /// `options.maxIssues`, each at its JSON Pointer), so a caller never holds an unchecked
    /// document. `options` sets the size, depth and issue limits (FORMAT.md §3).
    public static func read(
        _ bytes: UnsafeRawBufferPointer, options: ReadOptions = ReadOptions()
    ) throws(BackupFileError) -> ReadResult {
        try read(bytes, options: options, releaseStep: nil)
    }

    /// `read(_:options:)` over an array, for callers that hold the file's bytes as one.
    public static func read(
        _ bytes: [UInt8], options: ReadOptions = ReadOptions()
    ) throws(BackupFileError) -> ReadResult {
        // Array.withUnsafeBytes is untyped `rethrows`, so carry the typed error out by hand.
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(BackupFileError) in try read(buffer, options: options) }
        }
        return try result.get()
    }

    /// `read(_:options:)` for a caller that has no more use for the bytes (pass them with
    /// `consume`): the day logs' pages go back to the system as they move into the
    /// document, so a large file is not held twice, once as bytes and once as a document.
    /// Storage the array shares with another copy is copied first (as any mutation is).
    public static func read(
        consuming bytes: consuming [UInt8], options: ReadOptions = ReadOptions()
    ) throws(BackupFileError) -> ReadResult {
        let result = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(BackupFileError) in
                try read(
                    UnsafeRawBufferPointer(buffer), options: options,
                    releaseStep: options.releaseStep)
            }
        }
        return try result.get()
    }

    private static func read(
        _ bytes: UnsafeRawBufferPointer, options: ReadOptions, releaseStep: Int?
    ) throws(BackupFileError) -> ReadResult {
        guard bytes.count <= options.maxBytes else {
            throw .tooLarge(size: bytes.count, limit: options.maxBytes)
        }
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty
        else {
            throw .syntax(line: 1, column: 1, message: "the file is empty")
        }
        if let problem = encodingProblem(UnsafeBufferPointer(start: base, count: bytes.count)) {
            throw .syntax(line: 1, column: 1, message: problem)
        }
        let scanner = JSONScanner(
            base: base, count: bytes.count, maxDepth: options.maxDepth, releaseStep: releaseStep)
        let decoder = DocumentDecoder(
            scanner: scanner, maxIssues: options.maxIssues,
            splitFromBytes: options.twoCoresFromBytes)
        let outcome: TopLevel.Outcome
        var topLevel = TopLevel(decoder: decoder)
        do throws(ScanError) {
            outcome = try topLevel.read()
        } catch {
            let (line, column) = scanner.lineAndColumn(of: error.offset)
            throw .syntax(line: line, column: column, message: error.message)
        }
        switch outcome {
        case .notABackup(let message): throw .notABackup(message)
        case .newerSchema(let version): throw .newerSchema(version)
        case .decoded(let parts, let version):
            var issues = decoder.issues
            // The walk over the day logs goes on two cores for the same files as their
            // decoding may (it splits only where it finds a canonical boundary).
            let twoCoresFrom = bytes.count >= options.twoCoresFromBytes ? 0 : Int.max
            let migrated = migrate(
                parts, version: version, twoCoresFrom: twoCoresFrom,
                collectsNotes: options.collectsNotes,
                ownRulesHeld: decoder.dayLogsHoldOwnRules, issues: &issues)
            guard issues.isEmpty, let migrated else { throw .invalid(issues.issues) }
            return ReadResult(
                document: migrated.document, sourceVersion: version, notes: migrated.notes)
        }
    }

    /// RFC 8259 §8.1: JSON between systems is UTF-8, without a byte order mark.
    static func encodingProblem(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            return "the file starts with a byte order mark (BOM); save it as UTF-8 without one"
        }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            return "the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8"
        }
        if bytes.count >= 2, bytes[0] == 0 || bytes[1] == 0 {
            return "the file looks like UTF-16 or UTF-32 (it has zero bytes); save it as UTF-8"
        }
        return nil
    }

    /// Validates the decoded parts of `version` and migrates them to schema 4, with the notes
    /// when `collectsNotes`; nil when anything was reported (here or while decoding).
    private static func migrate(
        _ parts: TopLevel.Parts, version: Int, twoCoresFrom: Int, collectsNotes: Bool,
        ownRulesHeld: Bool, issues: inout IssueList
    ) -> (document: BackupDocument, notes: [ValidationIssue])? {
        // Old files are small: their notes take a walk of their own.
        func withNotes(_ document: BackupDocument?) -> (BackupDocument, [ValidationIssue])? {
            document.map { ($0, collectsNotes ? BackupValidator.notes($0) : []) }
        }
        switch version {
        case 1:
            let settings = parts.settings.map {
                SchemaV1.Settings(dayStartHour: $0.dayStartHour, theme: $0.theme)
            }
            LegacyValidator.check(
                settings: settings ?? SchemaV1.Settings(dayStartHour: 0, theme: .system),
                challenges: parts.challengesV1 ?? [], logs: parts.logs ?? [],
                deleted: parts.deleted ?? [],
                brokenChallenges: parts.brokenChallenges, into: &issues)
            guard issues.isEmpty, let deviceId = parts.deviceId, let settings,
                let challenges = parts.challengesV1, let logs = parts.logs,
                let deleted = parts.deleted
            else { return nil }
            let document = SchemaV1.Document(
                deviceId: deviceId, settings: settings, challenges: challenges.map(\.challenge),
                logs: logs.map(\.log), deleted: deleted.map(\.tombstone))
            let next = Migration.migrate(document)
            LegacyValidator.check(next, into: &issues)
            return issues.isEmpty
                ? withNotes(checked(Migration.migrate(next), issues: &issues)) : nil
        case 2:
            let placeholder = SchemaV2.Document(
                exportedAt: parts.exportedAt ?? Migration.undatedExport,
                deviceId: parts.deviceId ?? DeviceID(unchecked: "unknown"),
                settings: parts.settings ?? SchemaV2.Settings(dayStartHour: 0, theme: .system),
                challenges: parts.challengesV2 ?? [], dayLogs: parts.dayLogs ?? [],
                tombstones: parts.tombstones ?? [])
            // Validate every part that decoded, even when another part is missing.
            LegacyValidator.check(
                placeholder, brokenChallenges: parts.brokenChallenges, into: &issues)
            guard issues.isEmpty, parts.exportedAt != nil, parts.deviceId != nil,
                parts.settings != nil,
                parts.challengesV2 != nil, parts.dayLogs != nil, parts.tombstones != nil
            else { return nil }
            return withNotes(checked(Migration.migrate(placeholder), issues: &issues))
        default:
            let settings = parts.settings.flatMap(\.current)
            if let settings { BackupValidator.check(settings, into: &issues) }
            let challenges = parts.challenges ?? []
            BackupValidator.check(challenges, into: &issues)
            let lookup = ChallengeLookup(challenges)
            let broken = parts.brokenChallenges
            let isLive = { @Sendable (id: ChallengeID) in
                lookup.find(id) != nil || broken.contains(id)
            }
            // Version 4 keeps day logs under a tombstone; version 3 has none (FORMAT.md §2.4).
            let tombstoned = TombstoneLookup(parts.tombstones ?? [], broken: parts.brokenTombstones)
            let exists =
                version >= 4
                ? { @Sendable (id: ChallengeID) in isLive(id) || tombstoned.contains(id) }
                : isLive
            // The day logs' rules and notes in one walk: a million logs are read once.
            var notes: [ValidationIssue] = []
            if let dayLogs = parts.dayLogs {
                var passes = BackupValidator.DayLogPasses(
                    exists: exists, notesAgainst: collectsNotes ? lookup : nil, sorted: true,
                    ownRulesHeld: ownRulesHeld)
                if version < 4 {
                    passes.missingRule = .version3
                    passes.missing = { id in
                        tombstoned.contains(id)
                            ? "challenge \(id) is deleted in this file (a tombstone), and schema 3 keeps no day logs of a deleted challenge; drop the log, or make the file schemaVersion 4, which keeps them"
                            : BackupValidator.DayLogPasses.missingChallenge(id)
                    }
                }
                let found = BackupValidator.walk(
                    dayLogs, passes, limit: issues.limit, twoCoresFrom: twoCoresFrom)
                for issue in found.issues { issues.add(issue) }
                notes = found.notes
            }
            if let tombstones = parts.tombstones {
                BackupValidator.check(tombstones, isLive: isLive, into: &issues)
            }
            guard issues.isEmpty, let exportedAt = parts.exportedAt, let deviceId = parts.deviceId,
                let settings,
                let challenges = parts.challenges, let dayLogs = parts.dayLogs,
                let tombstones = parts.tombstones
            else { return nil }
            let document = BackupDocument(
                exportedAt: exportedAt, deviceId: deviceId, settings: settings,
                challenges: challenges,
                dayLogs: dayLogs, tombstones: tombstones)
            return (document, notes)
        }
    }

    /// A migrated document must pass the schema-4 rules; if a step ever produced one that
    /// does not, say so rather than hand it on.
    private static func checked(_ document: BackupDocument, issues: inout IssueList)
        -> BackupDocument?
    {
        BackupValidator.check(document, into: &issues)
        return issues.isEmpty ? document : nil
    }
}

/// Whether an id has a tombstone in the file, readable or not (binary search).
private struct TombstoneLookup: Sendable {
    let tombstones: [Tombstone]
    let broken: Set<ChallengeID>

    init(_ tombstones: [Tombstone], broken: Set<ChallengeID>) {
        self.tombstones = tombstones
        self.broken = broken
    }

    func contains(_ id: ChallengeID) -> Bool {
        tombstones.sortedIndex(of: id, by: \.id) != nil || broken.contains(id)
    }
}

extension SchemaV2.Settings {
    /// The schema-3 settings, when every field schema 3 requires is present.
    fileprivate var current: Settings? {
        guard let weekStartsOn else { return nil }
        return Settings(
            dayStartHour: dayStartHour, weekStartsOn: weekStartsOn, theme: theme,
            reminderTime: reminderTime, premium: premium, appLock: appLock)
    }
}

/// The top-level object: which version it is and its decoded parts.
private struct TopLevel {
    enum Outcome {
        case notABackup(String)
        case newerSchema(Int)
        case decoded(Parts, version: Int)
    }

    struct Parts {
        var exportedAt: Timestamp?
        var deviceId: DeviceID?
        var settings: SchemaV2.Settings?
        var challenges: [Challenge]?
        var challengesV2: [SchemaV2.Challenge]?
        var challengesV1: [(index: Int, challenge: SchemaV1.Challenge)]?
        var dayLogs: DayLogStore?
        var tombstones: [Tombstone]?
        var logs: [(index: Int, log: SchemaV1.Log)]?
        var deleted: [(index: Int, tombstone: Tombstone)]?
        /// Challenges present in the file but unreadable (already reported).
        var brokenChallenges: Set<ChallengeID> = []
        /// Tombstones present in the file but unreadable (already reported): a day log kept
        /// under one is not reported again.
        var brokenTombstones: Set<ChallengeID> = []
    }

    enum Field: Int, ObjectField {
        case format, schemaVersion, exportedAt, deviceId, settings, challenges, dayLogs
        case tombstones, logs, deleted
        static let names: [StaticString] = [
            "format", "schemaVersion", "exportedAt", "deviceId", "settings", "challenges",
            "dayLogs", "tombstones", "logs", "deleted",
        ]
    }

    /// The members each version has, all required.
    static func members(of version: Int) -> FieldSet<Field> {
        switch version {
        case 1: [.schemaVersion, .deviceId, .settings, .challenges, .logs, .deleted]
        case 2:
            [.schemaVersion, .exportedAt, .deviceId, .settings, .challenges, .dayLogs, .tombstones]
        default: .all.subtracting([.logs, .deleted])
        }
    }

    let decoder: DocumentDecoder
    var scanner: JSONScanner { decoder.scanner }
    var parts = Parts()

    init(decoder: DocumentDecoder) {
        self.decoder = decoder
    }

    mutating func read() throws(ScanError) -> Outcome {
        let first = scanner.peek()
        guard first == UInt8(ascii: "{") else {
            try scanner.skipValue()
            try scanner.finish()
            let kind =
                first == UInt8(ascii: "[")
                ? "an array" : first == UInt8(ascii: "\"") ? "a string" : "a single value"
            return .notABackup(
                "not a habit backup: the file holds \(kind), not an object with \"format\": \"habit-backup\""
            )
        }
        var seen = FieldSet<Field>()
        var deferred: [(field: Field, key: JSONString, offset: Int)] = []
        var version: Int?
        var versionPresent = false
        var format: String?
        var dayLogsBeforeVersion = false
        if try scanner.openObject() {
            repeat {
                let key = try scanner.key()
                guard let field = Field.named(key, in: scanner) else {
                    try decoder.within(.key(key)) { () throws(ScanError) in
                        decoder.report(.unknownFields, "unknown field")
                        try scanner.skipValue()
                    }
                    continue
                }
                if !seen.insert(field) {
                    try decoder.within(.key(key)) { () throws(ScanError) in
                        decoder.report(.duplicateKeys, "duplicate key")
                        try scanner.skipValue()
                    }
                    continue
                }
                switch field {
                case .format:
                    format = try decoder.within(.key(key)) { () throws(ScanError) in
                        try decoder.string()
                    }
                case .schemaVersion:
                    versionPresent = true
                    let number = try decoder.within(.key(key)) { () throws(ScanError) in
                        try decoder.integer()
                    }
                    if let number, number > BackupDocument.currentSchemaVersion {
                        return .newerSchema(number)
                    }
                    if let number, number >= 1 {
                        version = number
                    } else if number != nil {
                        decoder.report(.schemaVersions, "must be 1, 2, 3 or 4", at: .key(key))
                    }
                case .dayLogs where version == nil:
                    dayLogsBeforeVersion = true
                    parts.dayLogs = try decoder.within(.key(key)) { () throws(ScanError) in
                        try decoder.dayLogs()
                    }
                default:
                    if let version {
                        try decoder.within(.key(key)) { () throws(ScanError) in
                            try member(field, version: version)
                        }
                    } else {
                        deferred.append((field, key, scanner.position))
                        try scanner.skipValue()
                    }
                }
            } while try scanner.nextMember()
        }
        try scanner.finish()

        let isBackup = format == BackupDocument.format
        if version == nil {
            guard versionPresent || isBackup else {
                return .notABackup(
                    "not a habit backup: it has no \"format\": \"habit-backup\" and no \"schemaVersion\""
                )
            }
            if !versionPresent {
                decoder.report(.requiredFields, "is required", at: .name("schemaVersion"))
            }
            // A broken version number: read it as the version its members suggest.
            version =
                isBackup
                ? BackupDocument.currentSchemaVersion
                : seen.isDisjoint(with: [.logs, .deleted]) ? 2 : 1
        }
        let known = version ?? BackupDocument.currentSchemaVersion
        if known >= 3, let format, !isBackup {
            decoder.report(
                .document, "must be \"habit-backup\", not \"\(format)\"", at: .name("format"))
        }
        if known < 3, format != nil {
            decoder.report(
                .version(known), "unknown field (schema \(known) has no format)",
                at: .name("format"))
        }
        if known == 1, dayLogsBeforeVersion {
            decoder.report(
                .version1, "unknown field (schema 1 has logs, not dayLogs)", at: .name("dayLogs"))
            parts.dayLogs = nil
        }
        for (field, key, offset) in deferred {
            scanner.position = offset
            scanner.depth = 1
            try decoder.within(.key(key)) { () throws(ScanError) in
                try member(field, version: known)
            }
        }
        let missing = Self.members(of: known).subtracting(seen)
        for field in Field.allCases where missing.contains(field) && field != .schemaVersion {
            decoder.report(.requiredFields, "is required", at: .name(field.name))
        }
        return .decoded(parts, version: known)
    }

    /// Decodes the member `field` as `version` has it, at the current position.
    private mutating func member(_ field: Field, version: Int) throws(ScanError) {
        guard Self.members(of: version).contains(field) else {
            decoder.report(.version(version), "unknown field (not part of schema \(version))")
            try scanner.skipValue()
            return
        }
        switch field {
        case .format, .schemaVersion:
            preconditionFailure("read() decodes \(field.name) itself")
        case .exportedAt: parts.exportedAt = try decoder.timestamp()
        case .deviceId: parts.deviceId = try decoder.identifier()
        case .settings: parts.settings = try decoder.settings(version: version)
        case .challenges:
            switch version {
            case 1: parts.challengesV1 = try decoder.challengesV1(broken: &parts.brokenChallenges)
            case 2: parts.challengesV2 = try decoder.challengesV2(broken: &parts.brokenChallenges)
            default: parts.challenges = try decoder.challenges(broken: &parts.brokenChallenges)
            }
        case .dayLogs: parts.dayLogs = try decoder.dayLogs()
        case .tombstones:
            parts.tombstones = try decoder.tombstones(broken: &parts.brokenTombstones)
        case .logs: parts.logs = try decoder.logsV1()
        case .deleted: parts.deleted = try decoder.deletedV1()
        }
    }
}
