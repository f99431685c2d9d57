import BackupKit
import BackupSync
import Foundation
import GoogleDrive
import LocalFiles

/// `cloudbackup restore`: the Drive backup into STATE, by merge or replace (FORMAT.md §5.2, §8.2).
/// Shows the counts and the stale-window verdict first; `--dry-run` stops there.
struct RestoreCommand: QuietCommand {
    static let name = "restore"
    static let summary = "merge the Drive backup into a state file (or replace it)"
    static var options: [OptionGroup] {
        OptionSpec.file.required.described("the local state file to restore into")
        OptionGroup.oneOf(
            OptionSpec.merge,
            OptionSpec.replace.described(
                "STATE becomes the backup (premium, app lock and device id stay)"),
            required: true)
        OptionGroup.revision
        OptionSpec.dryRun
        OptionSpec.allowStale
        OptionSpec.yes
        OptionSpec.json.described("print the counts as the FORMAT.md §6.1 report object")
        DriveOptions.options
    }
    static let about = """
        Download the backup from the Google Drive app folder, validate and migrate it, show what
        it would change in STATE, then write STATE atomically, keeping the previous file as
        STATE.bak (replacing an older one; the profile's "previousCopies" keeps more, as
        STATE.bak.1, .2, …). A restore that would change nothing writes nothing and says so.
        A missing STATE is created. A broken one (empty, not JSON, invalid, of a newer schema) is kept as
        STATE.broken-<UTC time> by --replace, and refused by --merge (nothing to merge into).
        With --revision or --as-of, an older version of the backup from Drive's revision
        history ('cloudbackup history' lists them) instead of the latest. A STATE named
        *.gz is written as gzip. When standard input is a terminal it asks before writing
        unless --yes; the question goes to stderr, or to the terminal itself when stderr is
        redirected (2>log).
        """
    static let note: String? = """
        In a replace, day logs "dropped (not in the backup, or under an expired tombstone)"
        are STATE's day logs the backup lacks, also of challenges it keeps, and the backup's
        own kept day logs whose tombstone has expired.

        With --merge, a STATE exported before the 90-day tombstone window keeps the
        challenges the backup no longer has, as the merge rules say; those last edited before
        the window are named in one warning, since each may have been deleted on another
        device: if so, delete them again in the app.
        """
    static let exits = DriveOptions.exits(
        changedWhile: "restoring (nothing written; run again)", noBackup: "nothing written")
    static let exitNote: String? =
        "1 is also a question answered no; 2 also no such revision, or TIME before the oldest."

    let file: String
    let drive: DriveOptions
    let mode: MergeOptions.Mode
    let dryRun: Bool
    let allowStale: Bool
    let yes: Bool
    let json: Bool
    /// An older version of the backup, from its revision history.
    let revision: RevisionChoice?

    var quiet: Bool { drive.quiet }

    init(arguments: inout Arguments) throws(CLIError) {
        file = try arguments.required(.file)
        mode = arguments.one(of: .merge, .replace) == .merge ? .merge : .replace
        dryRun = arguments.flag(.dryRun)
        allowStale = arguments.flag(.allowStale)
        yes = arguments.flag(.yes)
        json = arguments.flag(.json)
        revision = try DriveOptions.revision(&arguments)
        drive = try DriveOptions(&arguments)
        _ = try arguments.positionals(exactly: [])
    }

    var recordedProfile: String? { dryRun ? nil : drive.profile }

    func run(in context: Context) throws {
        let session = try drive.session(in: context, json: json, dryRun: dryRun)
        // STATE is read and validated before anything goes over the network; these bytes are
        // the ones merged and kept as STATE.bak, and `write` checks STATE still holds them.
        // A missing STATE is a new one; a broken one (empty, not JSON, invalid, of a newer
        // schema) is what a user restores over most often: replace keeps it aside.
        let loaded = try loadState()
        let previous = loaded.valid?.bytes
        let current = loaded.valid?.result.document
        let warn = { (line: String) in context.printWarning(line) }
        let (codec, driver) = try drive.reader(
            session, allowStale: allowStale, dryRun: dryRun, file: file, warn: warn)
        let fetched: (document: BackupDocument, source: String, revision: DriveRevision?)?
        if let revision {
            fetched = try driver.fetch(revision, name: session.profile.fileName, codec: codec).map {
                ($0.document, Self.words(for: $0.revision), $0.revision)
            }
        } else {
            fetched = try driver.run(FetchRun(name: session.profile.fileName, codec: codec)).map {
                session.warn($0.notices, backingUp: false, warn)
                return (
                    $0.document,
                    $0.files.count == 1 ? "the backup" : "\($0.files.count) backups (merged)",
                    $0.files.first.flatMap { file in
                        file.headRevisionId.map {
                            DriveRevision(id: $0, md5Checksum: file.md5Checksum)
                        }
                    }
                )
            }
        }
        guard let (backup, source, revisionRead) = fetched else {
            throw CLIError.noBackupYet(
                session.profile.fileName,
                then: "nothing to restore; run 'cloudbackup backup' on the device that has the data"
            )
        }
        let now = session.now()
        let local = current ?? Self.emptyDocument(at: now, settingsFrom: backup)
        let options = MergeOptions(now: now, mode: mode, allowStale: allowStale)
        let outcome = BackupKit.merge(local: local, incoming: backup, options: options)
        if let line = DriveSession.futureStamped(outcome, in: "the backup") { warn(line) }
        if let current, mode == .merge {
            let ids = MergeNotice.staleSurvivors(
                of: current, missingFrom: backup, keptIn: outcome.document, now: now)
            if !ids.isEmpty { warn(DriveSession.staleSurvivors(ids, named: file)) }
        }

        // Without a question to ask, STATE is written before anything goes to stdout, so a
        // write that fails prints its error alone, not a report that reads like a success.
        let ask = dryRun || yes ? nil : Confirmation.asker(in: context)
        let unchanged = StateWrite.holds(
            current, outcome.document, windowStart: options.windowStart)
        let brokenAside = loaded.broken.map { ($0, "\(file).broken-\(now.compact)") }
        if let (broken, aside) = brokenAside {
            warn(
                "\(broken.reason.lines.first ?? file); "
                    + (dryRun ? "a restore would keep it" : "keeping it")
                    + " as \(aside.onOneLine) and writing the backup in its place")
        }
        let replacing = StateWrite(
            file: file, command: Self.name, doing: "restoring",
            previous: loaded.broken?.bytes ?? previous,
            keep: brokenAside.map { .aside($0.1) }
                ?? .previousCopies(
                    PreviousCopies(file: file, count: session.profile.previousCopies)))
        if !dryRun, !unchanged, ask == nil {
            try write(
                outcome, from: (backup, revisionRead), replacing: replacing, session: session,
                warn: warn)
        }
        if json {
            // The report's heldBack counts alone do not say why, or that --allow-stale exists.
            if let line = MergeCommand.heldBackAsStale(
                outcome, incoming: backup, named: "the backup", now: now,
                windowDays: options.windowDays)
            {
                context.printError(line)
            }
            context.print(outcome.report.json)
        } else {
            let state =
                loaded.broken != nil
                ? " (replacing a broken file)" : previous == nil ? " (new)" : ""
            context.print(
                "\(source) exported \(WallTime.text(backup.exportedAt)) → \(file.onOneLine)\(state):"
            )
            for line in MergeCommand.plainWords(outcome.report, mode: mode) {
                context.print("  " + line)
            }
            if previous == nil {
                context.print(
                    "  settings: the backup's, as \(file.onOneLine) is new (premium and app lock are never taken)"
                )
            }
            context.print(
                Self.staleVerdict(backup: backup, options: options, report: outcome.report))
        }
        guard !dryRun else {
            if !json {
                context.print(
                    "dry run: nothing written"
                        + (unchanged ? " (\(file.onOneLine) already holds it)" : ""))
            }
            return
        }
        guard !unchanged else {
            if !json { context.print("\(file.onOneLine) already holds it: nothing written") }
            return
        }
        if let ask {
            let kept = replacing.keepAs.map { " (the current file kept as \($0.onOneLine))" }
            guard Confirmation.ask("write \(file.onOneLine)\(kept ?? "")? [y/N] ", with: ask) else {
                throw CLIError.cancelled(Self.name, leaving: "\(file) is unchanged")
            }
            try write(
                outcome, from: (backup, revisionRead), replacing: replacing, session: session,
                warn: warn)
        }
        if !json {
            context.print(
                "restored \(file.onOneLine)"
                    + (replacing.keepAs.map {
                        " (\(loaded.broken == nil ? "previous" : "broken") file kept as \($0.onOneLine))"
                    } ?? ""))
        }
    }

    /// A revision as restore and rollback name it: its id and when Drive says it was written.
    static func words(for revision: DriveRevision) -> String {
        "revision \(revision.id) (written \(revision.modifiedTime.map { WallTime.text(rfc3339: $0) } ?? "?"))"
    }

    /// `--as-of`: an RFC 3339 time, or a date meaning the end of that local day (the last
    /// millisecond before the next day's midnight in `zone`, so a 25-hour day is whole).
    static func asOf(_ text: String, in zone: TimeZone) -> Timestamp? {
        if let time = Timestamp(text) { return time }
        guard let day = DayKey(text) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let next = day.adding(days: 1).parts
        guard
            let midnight = calendar.date(
                from: DateComponents(year: next.year, month: next.month, day: next.day))
        else { return nil }
        return Timestamp(
            millisecondsSince1970: Int64((midnight.timeIntervalSince1970 * 1000).rounded()) - 1)
    }

    /// STATE as the restore found it: valid (with its bytes), broken (a file the reader
    /// refuses: `--replace` keeps it aside, `--merge` has nothing to merge into), or missing
    /// (both nil). A file that cannot be read at all, or is over `--max-bytes`, fails as before:
    /// it may be genuine.
    private func loadState() throws(CLIError) -> (
        valid: (result: ReadResult, bytes: [UInt8])?, broken: (bytes: [UInt8], reason: CLIError)?
    ) {
        guard LocalFile.exists(file) else { return (nil, nil) }
        let bytes = try BackupFile.loadBytes(file, options: drive.readOptions)
        do {
            return (
                (try BackupFile.decode(bytes, file: file, options: drive.readOptions), bytes), nil
            )
        } catch {
            guard mode == .replace else {
                throw .nothingToMergeInto(file, error)
            }
            return (nil, (bytes, error))
        }
    }

    /// STATE written over the bytes it was read with (see `StateWrite`). Once it is, STATE and
    /// the backup are in step, and the profile's record of STATE's shared settings says which
    /// settings are (see `SharedSettings`).
    /// A merge's decisions go to the profile's decision log once STATE holds its result.
    private func write(
        _ outcome: MergeOutcome, from backup: (document: BackupDocument, revision: DriveRevision?),
        replacing: StateWrite, session: DriveSession, warn: (String) -> Void
    ) throws(CLIError) {
        let document = outcome.document
        try replacing.write(document, warn: warn)
        if mode == .merge {
            do {
                try DecisionLog(
                    path: session.profile.decisionLogPath, bounds: session.profile.decisionLog
                ).append(
                    command: Self.name, at: ClockOptions.systemNow(),
                    local: .init(role: "state", deviceId: document.deviceId, path: file),
                    incoming: .init(
                        role: "backup", deviceId: backup.document.deviceId,
                        revision: backup.revision?.id, md5: backup.revision?.md5Checksum),
                    decisions: outcome.decisions,
                    titles: session.encryption.encrypts ? nil : [document, backup.document])
            } catch {
                warn(
                    error.lines.joined(separator: "; ")
                        + "; \(file) is restored, but this merge's decisions are not in the decision log"
                )
            }
        }
        replacing.recordSettings(
            of: document, replaced: mode == .replace, at: session.profile.syncedSettingsPath,
            warn: warn)
    }

    /// What a new machine starts from: no items, a fresh device id, and the backup's settings
    /// as replace takes them (FORMAT.md §5.2 rule 6): a new STATE has no settings of its own for
    /// merge to keep, and premium and app lock never come from a backup.
    static func emptyDocument(at now: Timestamp, settingsFrom backup: BackupDocument)
        -> BackupDocument
    {
        BackupDocument(
            exportedAt: now, deviceId: DeviceID(unchecked: UUID().uuidString.lowercased()),
            settings: Settings().importing(backup.settings))
    }

    static func staleVerdict(backup: BackupDocument, options: MergeOptions, report: MergeReport)
        -> String
    {
        guard backup.exportedAt < options.windowStart else {
            return "the backup is inside the \(options.windowDays)-day tombstone window"
        }
        let held = report.challenges.heldBack
        return MergeWarning.predates("the backup", windowDays: options.windowDays)
            + (held == 0
                ? "; nothing was held back"
                : "; \(held) challenge(s) missing here and last edited before it were held back: "
                    + MergeWarning.forgottenDeletes(held) + "; pass --allow-stale to let them in")
    }
}

/// The options only `restore` takes.
extension OptionSpec {
    fileprivate static let merge = OptionSpec(
        name: "--merge",
        help:
            "newest edit wins per item; STATE's settings stay (a new STATE takes the backup's, without premium and app lock)"
    )
}
