import BackupKit
import BackupSync
import Foundation
import LocalFiles

/// `cloudbackup rollback`: an older revision of the backup made the state on every device
/// (`BackupKit.Rollback`), through the normal verified upload, with STATE given the same
/// document. A restore of that revision changes one STATE only, and the next merge anywhere
/// brings the bad change back.
struct RollbackCommand: QuietCommand {
    static let name = "rollback"
    static let summary = "make an older revision of the backup the state on every device"
    static var options: [OptionGroup] {
        OptionSpec.file.required.described(
            "the local state file, written with the rolled-back document")
        OptionGroup.revision(
            id: "roll back to that revision",
            asOf:
                "to the newest revision written at or before TIME: RFC 3339, or a date YYYY-MM-DD meaning the end of that day in the local time zone",
            required: true)
        OptionSpec.dryRun
        OptionSpec.allowStale.described(
            "roll back to a revision older than the tombstone window (challenges deleted since may have lost their tombstones, and would come back)"
        )
        OptionSpec.yes
        OptionSpec.json.described("print the counts as one JSON object")
        DriveOptions.options
    }
    static let about = """
        Make an older revision of the backup ('cloudbackup history' lists them) the state on
        every device: each item that differs from the backup on Drive now is written again at
        this run's time (changed or deleted since: the revision's version; a challenge added
        since: deleted; a day log added since: emptied), so every device's next merge ends on
        the revision's content. It goes up like a backup (another device's write meanwhile is
        merged, never lost), and STATE gets the same document, its previous file kept as
        STATE.bak. The revision it replaces is kept forever first, so the rollback itself can
        be undone with another rollback to it. The counts are shown before anything is
        written; a rollback that would change nothing writes nothing.
        """
    static let note: String? = """
        The last line names the undo: cloudbackup rollback --revision ID. It works for at
        least 30 days: a pinned revision the "keep" policy does not name is deleted only once
        it is older than that (or when Drive's 200 pins run out and a backup needs one).

        --json prints the counts as one object before anything is written, and nothing else
        on stdout (no undo line): {"revision": ID, "challenges": {"changedBack", "revived",
        "removed"}, "dayLogs": {the same}, "changes": the total}.
        """
    static let exits = DriveOptions.exits(
        changedWhile: "rolling back (Drive is rolled back, STATE is not; run again)",
        noBackup: nil)
    static let exitNote: String? =
        "1 is also a question answered no; 2 also no such revision, TIME before the oldest, or a revision older than the tombstone window without --allow-stale."

    let file: String
    let drive: DriveOptions
    let revision: RevisionChoice
    let dryRun: Bool
    let allowStale: Bool
    let yes: Bool
    let json: Bool

    var quiet: Bool { drive.quiet }

    init(arguments: inout Arguments) throws(CLIError) {
        file = try arguments.required(.file)
        guard let revision = try DriveOptions.revision(&arguments) else {
            preconditionFailure("the revision group is declared required, and check() ran first")
        }
        self.revision = revision
        dryRun = arguments.flag(.dryRun)
        allowStale = arguments.flag(.allowStale)
        yes = arguments.flag(.yes)
        json = arguments.flag(.json)
        drive = try DriveOptions(&arguments)
        _ = try arguments.positionals(exactly: [])
    }

    var recordedProfile: String? { dryRun ? nil : drive.profile }

    func run(in context: Context) throws {
        let session = try drive.session(in: context, json: json, dryRun: dryRun)
        // STATE before the network, as for restore: its bytes are the ones kept as STATE.bak.
        let loaded: (result: ReadResult, bytes: [UInt8])? =
            LocalFile.exists(file)
            ? try BackupFile.loadWithBytes(file, options: drive.readOptions) : nil
        let current = loaded?.result.document
        let warn = { (line: String) in context.printWarning(line) }
        let (codec, driver) = try drive.reader(
            session, allowStale: allowStale, dryRun: dryRun, file: file, warn: warn)
        let name = session.profile.fileName
        guard let (old, remote, chosen) = try driver.fetch(revision, name: name, codec: codec),
            let fetched = try driver.run(FetchRun(name: name, codec: codec))
        else {
            throw CLIError.noBackupYet(name, then: "nothing to roll back")
        }
        session.warn(fetched.notices, backingUp: false, warn)
        let head = fetched.document
        let now = session.now()
        let options = MergeOptions(now: now)
        guard allowStale || old.exportedAt >= options.windowStart else {
            throw CLIError.staleRollback(
                chosen.id, exported: "\(old.exportedAt)", windowDays: options.windowDays)
        }
        var rollback = Rollback.document(backTo: old, from: head, now: now)
        rollback.document.deviceId = current?.deviceId ?? head.deviceId
        let source = RestoreCommand.words(for: chosen)
        if json {
            context.print(Self.report(rollback, revision: chosen.id))
        } else {
            context.print("\(source) → the backup on Drive and \(file.onOneLine):")
            context.print("  challenges: " + Self.words(rollback.challenges, removed: "deleted"))
            context.print("  day logs: " + Self.words(rollback.dayLogs, removed: "emptied"))
        }
        guard !rollback.isEmpty else {
            if !json {
                context.print(
                    "the backup on Drive holds that revision's content: nothing to roll back")
            }
            return
        }
        guard !dryRun else {
            if !json { context.print("dry run: nothing written") }
            return
        }
        if !yes, let ask = Confirmation.asker(in: context) {
            guard
                Confirmation.ask(
                    "roll back the backup on Drive and \(file.onOneLine)? [y/N] ", with: ask)
            else {
                throw CLIError.cancelled(Self.name, leaving: "nothing was written")
            }
        }
        // The head it replaces is kept forever first: a rollback to it undoes this one.
        let replaced = remote.headRevisionId
        if let replaced { try driver.keep(fileID: remote.id, revision: replaced) }
        var machine = BackupRun(
            name: name, codec: codec, local: rollback.document,
            kept: KeptCopy.load(
                from: session.profile.keptCopyPath, maxBytes: drive.readOptions.maxBytes),
            pending: session.pendingVerification)
        machine.maxBytes = drive.readOptions.maxBytes
        machine.retention = session.profile.retention
        machine.timeZone = ZoneSetting.local
        let outcome = try driver.run(machine)
        if let kept = outcome.kept {
            do {
                try kept.save(to: session.profile.keptCopyPath)
            } catch {
                warn(
                    error.lines.joined(separator: "; ")
                        + "; the backup on Drive is rolled back, but the next backup will download it again"
                )
            }
        }
        // STATE takes what Drive holds now (another device's write merged in), as a replace.
        let uploaded = outcome.document ?? rollback.document
        let state = BackupKit.merge(
            local: current ?? RestoreCommand.emptyDocument(at: now, settingsFrom: uploaded),
            incoming: uploaded, options: MergeOptions(now: now, mode: .replace, allowStale: true)
        ).document
        let undo = replaced.map { " (undo: cloudbackup rollback --revision \($0))" } ?? ""
        guard !StateWrite.holds(current, state, windowStart: options.windowStart) else {
            if !json {
                context.print(
                    "rolled back the backup on Drive\(undo); \(file.onOneLine) already holds it")
            }
            return
        }
        let write = StateWrite(
            file: file, command: Self.name, doing: "rolling back", previous: loaded?.bytes,
            keep: .previousCopies(
                PreviousCopies(file: file, count: session.profile.previousCopies)))
        try write.write(state, warn: warn)
        write.recordSettings(
            of: state, replaced: true, at: session.profile.syncedSettingsPath, warn: warn)
        if !json {
            let kept = write.keepAs.map { " (previous file kept as \($0.onOneLine))" } ?? ""
            context.print("rolled back the backup on Drive\(undo) and \(file.onOneLine)\(kept)")
        }
    }

    /// "1 changed back, 1 revived, 1 deleted", or "none".
    static func words(_ counts: Rollback.Counts, removed: String) -> String {
        let parts = [
            (counts.changedBack, "changed back"), (counts.revived, "revived"),
            (counts.removed, removed),
        ].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }

    /// `--json`: the revision and the counts, by kind and in all.
    static func report(_ rollback: Rollback.Result, revision: String) -> String {
        struct Counts: Encodable {
            var changedBack, revived, removed: Int
            init(_ counts: Rollback.Counts) {
                (changedBack, revived, removed) = (
                    counts.changedBack, counts.revived, counts.removed
                )
            }
        }
        struct Report: Encodable {
            var revision: String
            var challenges, dayLogs: Counts
            var changes: Int
        }
        return JSONLine.encode(
            Report(
                revision: revision, challenges: Counts(rollback.challenges),
                dayLogs: Counts(rollback.dayLogs),
                changes: rollback.challenges.total + rollback.dayLogs.total))
    }
}
