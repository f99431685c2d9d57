import BackupKit
import BackupSync
import Digests
import Foundation
import GoogleDrive
import LocalFiles

/// `cloudbackup backup`: the cron job (FORMAT.md §8.2). Validates STATE, merges it into the app-folder
/// file and uploads only when the canonical bytes changed. Never writes STATE.
struct BackupCommand: Command {
    static let name = "backup"
    static let summary = "merge a state file into the Drive backup; upload only if it changed"
    static var options: [OptionGroup] {
        OptionSpec.file.required.described(
            "the local state file (required); an invalid file uploads nothing")
        OptionSpec.dryRun.described(
            "download and merge, print what the upload would bring (the counts of restore --dry-run); upload, delete and write nothing"
        )
        OptionSpec.profile
        OptionSpec.now
        OptionGroup.verbosity(
            quiet: "no progress line, only failures and warnings",
            verbose: "say what was done, and trace each HTTP exchange (tokens redacted)")
        OptionSpec.json.described(
            "print a summary: remote id, bytes, result, counts (day logs kept under a tombstone on their own)"
        )
        OptionSpec.waitLock
        OptionSpec.maxBytes
        OptionGroup.keys
    }
    static let about = """
        Back up STATE to the Google Drive app folder: download the backup, merge STATE into it
        (so another device's items are kept) and upload the result only if it changed. STATE's
        settings go up when they changed here since this profile last backed up or restored,
        except premium, app lock and the device id, which stay as the backup has them. The upload is
        conditional, so a device writing at the same moment is merged, not lost. The profile
        keeps a copy of what is on Drive: while Drive's checksum still matches it, nothing is
        downloaded, and a run with nothing new sends one request. STATE is never modified.
        Silent on success unless --verbose. A profile that encrypts uploads an age file, which
        any age tool opens with the profile's passphrase or identity file.
        """
    static let note: String? = """
        --json prints one line: fileId, name, bytes, result ("created", "uploaded" or
        "unchanged"), counts (challenges, dayLogs, keptDayLogs, tombstones), mergedRevisions
        (other devices' revisions found between the one this run merged into and its own
        upload, and merged in), deletedDuplicates (ids of duplicate backups merged and
        deleted) and sideFiles (names of copies kept aside in the app folder). With
        --dry-run it prints the merge report object instead.
        """
    static let exits =
        Exit.always + [
            Exit(
                .invalidFile,
                "STATE is invalid, or STATE or the backup is over --max-bytes (nothing uploaded), or the profile's config.json, token, identity or password file is broken or readable by others, or the backup is encrypted and no key given opens it"
            ),
            Exit(.notLoggedIn, "no saved login, or it was revoked or does not allow Drive access"),
            Exit(
                .network,
                "the remote file is intact; after retries, and at a terminal after 10 s of a network that cannot be reached (CLOUDBACKUP_OFFLINE_WAIT seconds when set)"
            ),
            Exit(.locked, "still after --wait-lock's wait"),
            Exit(.refused, "STATE or the backup is from a newer version"),
        ]

    let file: String
    let dryRun: Bool
    let profile: String
    let now: Timestamp?
    let quiet: Bool
    let verbose: Bool
    let json: Bool
    let readOptions: ReadOptions
    let keys: RemoteEncryption.Options
    let waitLock: Double

    init(arguments: inout Arguments) throws(CLIError) {
        file = try arguments.required(.file)
        dryRun = arguments.flag(.dryRun)
        profile = try arguments.option(.profile) ?? "default"
        now = try ClockOptions.fixedNow(&arguments)
        (quiet, verbose) = (arguments.flag(.quiet), arguments.flag(.verbose))
        json = arguments.flag(.json)
        readOptions = try BackupFile.readOptions(&arguments)
        keys = try RemoteEncryption.Options(&arguments)
        waitLock = try WaitLock.seconds(&arguments)
        _ = try arguments.positionals(exactly: [])
    }

    var recordedProfile: String? { dryRun ? nil : profile }

    func run(in context: Context) throws {
        // STATE first: a cron job with a broken file hears about the file (exit 3), whatever
        // else is wrong, and an invalid file never takes the lock or touches the network. A
        // STATE the last backup proved steady is not read here (`SteadyState`): it was valid
        // then and is unchanged since, and the run reads it only if Drive's file moved.
        let stamp = FileStamp.of(file)
        let readAt = FileStamp.clock()
        let steady =
            dryRun
            ? nil
            : (try? Profile.folder(for: profile, environment: context.environment))
                .flatMap { SteadyState.load(from: Profile.steadyStatePath(in: $0)) }.flatMap {
                    $0.describes(file, stamp: stamp, maxBytes: readOptions.maxBytes) ? $0 : nil
                }
        let read = try steady == nil ? readState() : nil
        let profile = try Profile.load(name: profile, environment: context.environment)
        let session = try DriveSession(
            profile: profile, context: context, now: now, verbose: verbose, quiet: quiet || json,
            locking: !dryRun, savingLogin: !dryRun, maxBytes: readOptions.maxBytes,
            encryption: try RemoteEncryption.load(
                profile: profile, options: keys, environment: context.environment),
            waitingForLock: waitLock)
        let warn = { (line: String) in context.printWarning(line) }
        let driver = session.driver(
            restoreCommand: DriveSession.restoreCommand(into: file, profile: session.profile.name),
            backingUp: true, warn: warn)
        // A steady state that may still hold leaves STATE to the run, read only when the
        // listing shows Drive's file moved (a pending check or pins still due make a full run).
        let quiet =
            steady?.conditions == conditions(session)
                && !LocalFile.exists(session.profile.retentionDuePath) ? steady : nil
        var state = try read ?? (quiet == nil ? readState() : nil)
        let backingUp = BackupCodec.BackingUp(
            path: file, synced: SharedSettings.load(from: session.profile.syncedSettingsPath))
        let codec = session.codec(
            allowStale: false, backingUp: backingUp, readOptions: readOptions)
        if dryRun {
            return try showDryRun(
                (state ?? readState()).document, codec: codec, driver: driver, session: session,
                context: context, warn: warn)
        }
        // A quiet night reads neither STATE nor the kept copy (hashing it costs more than the
        // rest of the night): a run that may be one gets it with STATE, if it asks.
        let loadKept = {
            KeptCopy.load(from: session.profile.keptCopyPath, maxBytes: readOptions.maxBytes)
        }
        var kept = state == nil ? nil : loadKept()
        let name = session.profile.fileName
        let pending = session.pendingVerification
        var machine =
            if let state {
                BackupRun(
                    name: name, codec: codec, local: state.document, kept: kept, pending: pending)
            } else {
                BackupRun(
                    name: name, codec: codec,
                    unlessUnchanged: { quiet?.unchangedFile(in: $0, now: $1) }, pending: pending)
            }
        machine.maxBytes = readOptions.maxBytes
        machine.retention = session.profile.retention
        machine.timeZone = ZoneSetting.local
        let ran = try driver.run(
            machine,
            readLocal: {
                let read = try readState()
                state = read
                kept = loadKept()
                return (read.document, kept)
            })
        if ran.quiet, let remote = ran.file, let steady = quiet {
            return quietNight(
                remote, steady: steady, readAt: readAt, session: session, context: context)
        }
        guard let (local, sha256) = state, let remoteFile = ran.file, let document = ran.document,
            let keptNow = ran.kept
        else {
            throw CLIError.unexpected("the backup run ended with no file")
        }
        let outcome = Outcome(ran: ran, file: remoteFile, document: document, kept: keptNow)
        let merge = ran.notices.localMerge
        let settings = SharedSettings(local.settings)
        if outcome.created { _ = firstBackup(of: local, now: session.now(), warn: warn) }
        // Drive holds the backup now, so the run succeeded (cron reads the exit code; FORMAT.md §8.1
        // keeps exit 1 for unexpected failures). A profile record that cannot be saved (a
        // full disk) costs what its warning says, no more.
        var recordsKept = true
        func keep(_ save: () throws(CLIError) -> Void, orElse cost: String) {
            do {
                try save()
            } catch {
                recordsKept = false
                warn(
                    error.lines.joined(separator: "; ")
                        + "; the backup on Drive is complete, but " + cost)
            }
        }
        if outcome.kept != kept {
            keep(
                { () throws(CLIError) in try outcome.kept.save(to: session.profile.keptCopyPath) },
                orElse: "the next backup will download the file again")
        }
        // When it really ran, even under --now (which only moves the tombstone window).
        keep(
            { () throws(CLIError) in
                try LastBackup(outcome: outcome, at: ClockOptions.systemNow())
                    .save(to: session.profile.lastBackupPath)
            }, orElse: "'cloudbackup status' will show an older last backup")
        keep(
            { () throws(CLIError) in try settings.save(to: session.profile.syncedSettingsPath) },
            orElse: "a settings change made here before the next backup may not reach Drive")
        keep(
            { () throws(CLIError) in
                try DecisionLog(
                    path: session.profile.decisionLogPath, bounds: session.profile.decisionLog
                ).append(
                    command: Self.name, at: ClockOptions.systemNow(),
                    local: .init(
                        role: "backup", deviceId: merge?.baseDevice ?? local.deviceId,
                        revision: ran.baseRevision, md5: ran.baseMd5),
                    incoming: .init(role: "state", deviceId: local.deviceId, path: file),
                    decisions: merge?.decisions ?? [],
                    titles: session.encryption.encrypts ? nil : [local, document])
            }, orElse: "this backup's merge decisions are not in the decision log")
        // Only a night that said nothing is steady: one that warned (of a merge, a step of the
        // run, a record not kept) warns again tomorrow. One
        // that changed nothing is; one that uploaded is when merging STATE into its upload is
        // shown to change nothing, so the night after it is the quiet one, not the one after
        // that. A created file is left to a full run, as its upload had no revision check.
        if let stamp, outcome.deletedDuplicates.isEmpty,
            outcome.sideFiles.isEmpty, outcome.mergedRevisions == 0, ran.notices.isEmpty,
            recordsKept,
            session.clockSkew() == nil, FileStamp.of(file) == stamp,
            let revision = remoteFile.headRevisionId, let md5 = remoteFile.md5Checksum,
            let words = !outcome.uploaded
                ? mergeWords(merge)
                : outcome.created
                    ? nil
                    : Self.mergesToItself(
                        local, into: document, kept: outcome.kept, now: session.now(),
                        readOptions: readOptions
                    ).map(mergeWords)
        {
            let proved = SteadyState(
                stamp: stamp, settled: stamp.isSettled(at: readAt), sha256: sha256,
                fileId: remoteFile.id, headRevisionId: revision, md5Checksum: md5.lowercased(),
                until: MergeOptions(now: session.now())
                    .unchangedUntil(local: document, incoming: local)?.millisecondsSince1970,
                conditions: conditions(session), bytes: outcome.bytes,
                counts: DocumentCounts(document), mergeWords: words)
            // Without it the next backup is a full one, as before: nothing to warn about.
            try? proved.save(to: session.profile.steadyStatePath)
        } else {
            try? LocalFile.remove(session.profile.steadyStatePath)
        }
        let pins = retain(
            outcome, revisions: ran.revisions, driver: driver, session: session, warn: warn)
        let result = outcome.created ? "created" : outcome.uploaded ? "uploaded" : "unchanged"
        if json {
            context.print(Self.summary(outcome, result: result))
        } else if verbose {
            let what =
                outcome.uploaded
                ? "\(result) \(outcome.file.name) (id \(outcome.file.id), \(outcome.bytes) bytes)"
                : holdsEverything(outcome.file)
            context.printError("cloudbackup: " + what)
            if outcome.fromKeptCopy {
                context.printError(
                    "cloudbackup: Drive's checksum matched the copy kept in \(session.profile.keptCopyPath); nothing downloaded"
                )
            }
            for line in mergeWords(merge) {
                context.printError("cloudbackup: " + line)
            }
            for id in outcome.deletedDuplicates {
                context.printError("cloudbackup: merged and deleted the duplicate backup \(id)")
            }
            if let pins, !pins.isEmpty {
                context.printError(
                    "cloudbackup: kept \(pins.pin.count) revision(s) forever and released "
                        + "\(pins.release.count) (the \"keep\" policy)")
            }
            if outcome.mergedRevisions > 0 {
                context.printError(
                    "cloudbackup: another device wrote while this backup ran; merged its "
                        + "\(outcome.mergedRevisions) revision(s) from Drive's history and uploaded again"
                )
            }
        }
    }

    /// `--dry-run`: the backup downloaded and STATE merged into it as `backup` would, and what
    /// that brings, in `restore --dry-run`'s words and counts; nothing uploaded, deleted or
    /// recorded, and no lock taken, as for a restore's dry run.
    private func showDryRun(
        _ local: BackupDocument, codec: SyncCodec<BackupDocument>, driver: SyncDriver,
        session: DriveSession, context: Context, warn: (String) -> Void
    ) throws {
        let fetched = try driver.run(FetchRun(name: session.profile.fileName, codec: codec))
        let now = session.now()
        var notices = fetched?.notices ?? RunNotices()
        let merged =
            fetched.map { notices.add(codec.merge($0.document, local, now)).document } ?? local
        session.warn(notices, backingUp: true, warn)
        let report =
            fetched == nil
            ? firstBackup(of: local, now: now, warn: warn) : notices.localMerge?.report
        let uploads =
            fetched.map {
                codec.changesForm(isGzip: $0.isGzip)
                    || !codec.encode(merged).sameBytes(as: codec.encode($0.document))
            } ?? true
        let bytes = codec.upload(merged, headIsGzip: fetched?.isGzip)
        if json {
            if let report { context.print(report.json) }
            return
        }
        let target =
            fetched.map { "the backup (exported \(WallTime.text($0.document.exportedAt)))" }
            ?? "a new backup (none on Drive yet)"
        context.print("\(file.onOneLine) → \(target):")
        for line in report.map({ MergeCommand.plainWords($0, mode: .merge) }) ?? [] {
            context.print("  " + line)
        }
        if fetched == nil {
            context.print("  settings: \(file.onOneLine)'s, as the backup is new")
        } else if let settings = notices.localMerge?.settings {
            context.print("  " + Self.settingsWords(from: settings.before, to: settings.after))
        }
        context.print(
            uploads
                ? "dry run: \(bytes.count) bytes would be uploaded; nothing uploaded or written"
                : "dry run: the backup already holds everything in \(file.onOneLine); nothing would be uploaded"
        )
    }

    /// What a first backup brings, which uploads STATE as it is: the report of a merge into an
    /// empty backup, whose items stamped far ahead are warned about here, as every merge's are
    /// (FORMAT.md §5.1 rule 8: always reported).
    private func firstBackup(of local: BackupDocument, now: Timestamp, warn: (String) -> Void)
        -> MergeReport
    {
        let empty = BackupDocument(exportedAt: local.exportedAt, deviceId: local.deviceId)
        let outcome = BackupKit.merge(
            local: empty, incoming: local, options: MergeOptions(now: now))
        if let line = DriveSession.futureStamped(outcome, in: file) { warn(line) }
        return outcome.report
    }

    /// The profile's retention policy applied after an upload, or after a backup whose pins
    /// could not all be made last time (`retention-due.json`). A failure never fails the
    /// backup: one warning, and the next backup tries again. nil when nothing was done.
    private func retain(
        _ outcome: Outcome, revisions: [DriveRevision]?, driver: SyncDriver,
        session: DriveSession, warn: (String) -> Void
    ) -> RetentionPlan? {
        let due = session.profile.retentionDuePath
        guard let policy = session.profile.retention, outcome.uploaded || LocalFile.exists(due)
        else { return nil }
        let (plan, failures) = driver.retain(
            fileID: outcome.file.id, revisions: outcome.uploaded ? revisions : nil,
            policy: policy, now: session.driveTime(), timeZone: ZoneSetting.local)
        if failures.isEmpty {
            try? LocalFile.remove(due)
        } else {
            warn(
                "could not pin or release \(failures.count) revision(s) of the backup "
                    + "(\(failures[0])); the backup itself is complete, and the next backup tries again"
            )
            _ = try? LocalFile.writeAtomically(Array("{}\n".utf8), to: due, mode: 0o600)
        }
        return plan
    }

    /// Which of the backup's settings STATE changed, by their JSON names. `premium` and
    /// `appLock` are not among them: an import never changes those.
    static func settingsWords(from before: Settings, to after: Settings) -> String {
        let changed = SharedSettings(before).changes(to: SharedSettings(after))
        return "settings: "
            + (changed.isEmpty
                ? "unchanged" : "updated (\(changed.map(\.rawValue).joined(separator: ", ")))")
    }

    /// The `--json` line.
    struct Summary: Encodable {
        var fileId: String
        var name: String
        var bytes: Int
        var result: String
        var deletedDuplicates: [String]
        var sideFiles: [String]
        var counts: DocumentCounts
        /// Other devices' revisions found between this run's base and its upload, and merged.
        var mergedRevisions: Int
    }

    /// A finished backup run: the engine's outcome with the file, document and kept copy it
    /// always has when there was a local document to back up; the rest read through.
    @dynamicMemberLookup
    struct Outcome {
        var ran: BackupOutcome<BackupDocument>
        var file: DriveFile
        var document: BackupDocument
        var kept: KeptCopy

        subscript<Value>(dynamicMember path: KeyPath<BackupOutcome<BackupDocument>, Value>)
            -> Value
        { ran[keyPath: path] }
    }

    static func summary(_ outcome: Outcome, result: String) -> String {
        JSONLine.encode(
            Summary(
                fileId: outcome.file.id, name: outcome.file.name, bytes: outcome.bytes,
                result: result, deletedDuplicates: outcome.deletedDuplicates,
                sideFiles: outcome.sideFiles.map(\.name), counts: DocumentCounts(outcome.document),
                mergedRevisions: outcome.mergedRevisions))
    }

    /// The verbose line of a backup that uploaded nothing.
    private func holdsEverything(_ remote: DriveFile) -> String {
        "\(remote.name) (id \(remote.id)) already holds everything in \(file); nothing uploaded"
    }

    /// The record of merging `state` into `uploaded` (what a run put on Drive; `kept`, its
    /// copy) when that gives `uploaded` again and says nothing, else nil: what the next night's
    /// full run would find, with the settings STATE changed gone up already (the synced record
    /// says so).
    static func mergesToItself(
        _ state: BackupDocument, into uploaded: BackupDocument, kept: KeptCopy, now: Timestamp,
        readOptions: ReadOptions
    ) -> MergeRecord? {
        let codec = BackupCodec.make(
            allowStale: false, backingUp: BackupCodec.BackingUp(path: "", synced: nil),
            readOptions: readOptions)
        let merged = codec.merge(uploaded, state, now)
        let again = codec.encode(merged.document)
        // The copy's bytes (inflated when gzipped, cheaper than encoding) decode to `uploaded`:
        // equal to `again`, they are its encoding too. Only bytes not known to be that encoding
        // and unequal to `again` are checked against the encoding itself.
        guard merged.notices.isEmpty,
            again.sameBytes(as: try? codec.inflate(kept.bytes))
                || !kept.canonical && again.sameBytes(as: codec.encode(uploaded))
        else { return nil }
        return merged.record
    }

    /// What `--verbose` says of a merge of STATE into the backup, each line after
    /// "cloudbackup: "; kept with the steady state so the quiet night says it too.
    private func mergeWords(_ merge: MergeRecord?) -> [String] {
        var lines: [String] = []
        if let report = merge?.report {
            lines.append("what \(file) brought to the backup:")
            lines += MergeCommand.plainWords(report, mode: .merge).map { "  " + $0 }
        }
        if let settings = merge?.settings {
            lines.append("  " + Self.settingsWords(from: settings.before, to: settings.after))
        }
        return lines
    }

    /// STATE read, validated and migrated, and the SHA-256 of its bytes (for `SteadyState`).
    private func readState() throws(CLIError) -> (document: BackupDocument, sha256: String) {
        let (result, bytes) = try BackupFile.loadWithBytes(file, options: readOptions)
        return (result.document, Digest.hex(Digest.sha256(bytes)))
    }

    /// What else the outcome of this profile's backup depends on, besides STATE and Drive.
    private func conditions(_ session: DriveSession) -> SteadyState.Conditions {
        SteadyState.Conditions(
            fileName: session.profile.fileName, encrypts: session.encryption.encrypts,
            compress: session.profile.compress,
            maxBytes: readOptions.maxBytes,
            syncedSettings: (try? LocalFile.read(
                session.profile.syncedSettingsPath, maxBytes: 1 << 16))
                .map { String(decoding: $0, as: UTF8.self) })
    }

    /// A steady STATE and Drive still holding the revision that proved it: nothing to merge
    /// or upload, and nothing read but the listing.
    private func quietNight(
        _ remote: DriveFile, steady: SteadyState, readAt: Int64, session: DriveSession,
        context: Context
    ) {
        // Under the lock now, the record is settled only if no run replaced or removed it
        // since it was read; one that cannot be saved only costs the next night a read of STATE.
        let path = session.profile.steadyStatePath
        if let settled = steady.settled(at: readAt), SteadyState.load(from: path) == steady {
            try? settled.save(to: path)
        }
        let bytes = remote.size ?? steady.bytes
        try? LastBackup(
            time: ClockOptions.systemNow().description, fileId: remote.id, name: remote.name,
            bytes: bytes, uploaded: false
        ).save(to: session.profile.lastBackupPath)
        if json {
            context.print(
                JSONLine.encode(
                    Summary(
                        fileId: remote.id, name: remote.name, bytes: bytes, result: "unchanged",
                        deletedDuplicates: [], sideFiles: [], counts: steady.counts,
                        mergedRevisions: 0)))
        } else if verbose {
            context.printError("cloudbackup: " + holdsEverything(remote))
            for line in steady.mergeWords ?? [] {
                context.printError("cloudbackup: " + line)
            }
            context.printError(
                "cloudbackup: \(file) is as the last backup left it, and Drive still holds the revision that backup merged it into; nothing read or downloaded"
            )
        }
    }
}
