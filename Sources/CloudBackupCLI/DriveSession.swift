import BackupKit
import BackupSync
import Foundation
import GoogleDrive
import LocalFiles
import Synchronization

/// What `backup`, `restore` and `status` share: the profile, its lock, a Drive client over
/// libcurl with the profile's login, and the clock the merge window uses.
///
/// The window uses the server's time when ours is more than five minutes off (FORMAT.md §9.2):
/// Drive's `Date` header is the better clock, and a machine whose clock is wrong by weeks
/// must not expire tombstones early. `--now` overrides both.
struct DriveSession {
    static let skewTolerance: Double = 300

    let profile: Profile
    let drive: DriveClient
    /// Held for the life of the session: one run per profile. nil for a session that writes
    /// nothing (`restore --dry-run`, `status`).
    let lock: FileLock?
    let context: Context
    let fixedNow: Timestamp?
    /// Shown on a terminal only; nil under cron, `--quiet` or `--json`.
    let progress: ProgressLine?
    /// The backup's age envelope on Drive (plain for a session that reads no backup).
    let encryption: RemoteEncryption
    /// The skew warning, said once per run though every answer is measured.
    private let skewSaid = SaidOnce()
    private let resolvedNow = Once<Timestamp>()

    /// Takes the profile's lock when `locking` (exit 6 when another run still holds it after
    /// `waitingForLock` seconds, `--wait-lock`) and connects. Without `savingLogin` a refreshed token is not written to the profile.
    /// `maxBytes`: the largest backup the run may download (`--max-bytes`), which the
    /// transport's own cap must not undercut. `encryption`: the profile's keys, for a
    /// command that reads or writes the backup's bytes (`RemoteEncryption.load`).
    init(
        profile: Profile, context: Context, now: Timestamp?, verbose: Bool, quiet: Bool,
        locking: Bool = true, savingLogin: Bool = true, maxBytes: Int = ReadOptions().maxBytes,
        encryption: RemoteEncryption = .plain, waitingForLock: Double = 0
    ) throws {
        lock =
            locking
            ? try profile.lock(
                in: context, waiting: waitingForLock,
                announce: !quiet && (verbose || context.stderrIsTerminal)) : nil
        let progress = quiet || !context.stderrIsTerminal ? nil : ProgressLine(context: context)
        var transport = context.transport(verbose: verbose)
        transport.maxResponseBytes = max(transport.maxResponseBytes, maxBytes)
        if let progress { transport.progress = { progress.download($0) } }
        let tokens = try profile.tokenProvider(transport: transport, persisting: savingLogin)
        self.profile = profile
        self.encryption = encryption
        self.context = context
        self.fixedNow = now
        self.progress = progress
        self.drive = DriveClient(
            baseURL: profile.driveURL, transport: transport, tokens: tokens,
            retry: try context.retryPolicy())
    }

    /// `--now`, else the server's time when our clock is off by more than five minutes,
    /// else ours. The skew is warned about once, under `--now` too: the clock is still wrong.
    ///
    /// Resolved once, at the first call (after Drive's first answer, so its `Date` is known),
    /// and the same for the rest of the run: every merge of one run uses one clock.
    func now() -> Timestamp {
        resolvedNow.value {
            let local = Date()
            let skew = clockSkew(
                using: fixedNow == nil
                    ? "using Google's time for the tombstone window"
                    : "--now sets the time for this run")
            return fixedNow ?? Self.timestamp(local.addingTimeInterval(skew ?? 0))
        }
    }

    /// Drive's time as best known: ours, corrected by the last answer's `Date`. Not `--now`,
    /// which moves the tombstone window only: revisions carry Drive's own times.
    func driveTime() -> Timestamp {
        Self.timestamp(Date().addingTimeInterval(drive.clockReading?.skew ?? 0))
    }

    /// How far Google's clock (its last answer's `Date`) is ahead of ours, when more than five
    /// minutes; warned about once, with what the run does about it (`using`), if anything.
    @discardableResult
    func clockSkew(using: String? = nil) -> TimeInterval? {
        let skew = drive.clockReading.map(\.skew).flatMap {
            abs($0) > Self.skewTolerance ? $0 : nil
        }
        if let skew, skewSaid.first() {
            let minutes = Int((abs(skew) / 60).rounded())
            context.printError(
                "cloudbackup: warning: this machine's clock is \(minutes) minutes \(skew > 0 ? "behind" : "ahead of") "
                    + "Google's\(using.map { "; " + $0 } ?? "") (fix the clock: timedatectl / NTP)"
            )
        }
        return skew
    }

    /// The codec of backup documents (`BackupCodec`) inside the profile's encryption (its
    /// `open` decrypts any bytes of the backup).
    func codec(
        allowStale: Bool, backingUp: BackupCodec.BackingUp? = nil,
        readOptions: ReadOptions = ReadOptions()
    ) -> SyncCodec<BackupDocument> {
        encryption.sealing(
            BackupCodec.make(
                allowStale: allowStale, backingUp: backingUp, readOptions: readOptions,
                compress: profile.compress))
    }

    /// What a fetch's merges warned of (`notices`, from its result), as warnings; `backingUp`:
    /// it merged STATE in as `backup` does. A `BackupRun` tells its own as it goes.
    func warn(_ notices: RunNotices, backingUp: Bool, _ warn: (String) -> Void) {
        for notice in notices.merges {
            warn(Self.words(notice, backingUp: backingUp, profile: profile.name))
        }
    }

    /// A merge notice as one line for a person.
    static func words(_ notice: MergeNotice, backingUp: Bool, profile: String) -> String {
        switch notice {
        case .heldBack(let outcome, .copy):
            return heldBack(outcome, inCopy: copyName, backingUp: backingUp)
        case .heldBack(let outcome, .state(let path)):
            let source = path ?? stateName
            return heldBack(
                outcome, from: source, restore: restoreCommand(into: source, profile: profile))
        case .futureStamped(let outcome, let source):
            return futureStamped(outcome, in: name(of: source)) ?? ""
        case .staleSurvivors(let ids, let source):
            return staleSurvivors(ids, named: name(of: source))
        }
    }

    private static let copyName = "another copy of the backup on Drive"
    private static let stateName = "the state file"

    private static func name(of source: MergeNotice.Source) -> String {
        switch source {
        case .copy: copyName
        case .state(let path): path ?? stateName
        }
    }

    static func timestamp(_ date: Date) -> Timestamp {
        Timestamp(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// The stale guard's line (FORMAT.md §5.1 rule 7): the challenges by id (a few), and a way to
    /// let them in that exists. A restore merge writes `source` with a fresh export time, so
    /// the next backup no longer holds them back; it also brings in what the backup has, so
    /// nothing else is lost on the way.
    static func heldBack(_ outcome: MergeOutcome, from source: String, restore: String) -> String {
        MergeWarning.heldBack(
            heldBackItems(outcome), reason: lacking(outcome, in: source),
            advice: "to keep them, run '\(restore)', then back up again")
    }

    /// `cloudbackup restore --file STATE --merge` as the user must type it for this run: with
    /// `--profile` unless it is the default, the path quoted when the shell would split it.
    static func restoreCommand(into state: String, profile: String) -> String {
        "cloudbackup restore --file \(shellQuoted(state)) --merge"
            + (profile == "default" ? "" : " --profile \(profile)")
    }

    /// `text` as one shell word: as it is when made of safe characters only, else in single
    /// quotes (a quote inside written '\\'').
    static func shellQuoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy {
            $0.isASCII
                && (CharacterSet.alphanumerics.contains($0)
                    || "/._-+,:=@%".unicodeScalars.contains($0))
        }
        return safe && !text.isEmpty
            ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The same for another copy of the backup on Drive. A backup keeps that copy aside
    /// before deleting it, and says so on the next line; a restore deletes nothing, and
    /// `--allow-stale` lets the items in.
    static func heldBack(_ outcome: MergeOutcome, inCopy copy: String, backingUp: Bool) -> String {
        MergeWarning.heldBack(
            heldBackItems(outcome), reason: lacking(outcome, in: copy),
            advice: backingUp ? nil : MergeWarning.allowStale)
    }

    /// Why the stale guard held back items of `source`, as Drive's commands tell it.
    private static func lacking(_ outcome: MergeOutcome, in source: String) -> String {
        MergeWarning.staleReason(
            source, missing: "missing from the backup", count: staleIDs(outcome).count)
    }

    /// The challenges the stale guard held back, by id.
    private static func staleIDs(_ outcome: MergeOutcome) -> [String] {
        outcome.decisions.compactMap { decision -> String? in
            guard decision.reason == .stale, case .challenge(let id) = decision.item else {
                return nil
            }
            return id.rawValue
        }
    }

    /// "challenges a, b, c and 2 more (with 9 day log(s))".
    private static func heldBackItems(_ outcome: MergeOutcome) -> String {
        let logs = outcome.report.dayLogs.heldBack
        return challenges(staleIDs(outcome)) + (logs > 0 ? " (with \(logs) day log(s))" : "")
    }

    /// "challenges a, b, c and 2 more": a few ids, then how many others.
    private static func challenges(_ ids: [String]) -> String {
        let shown = 3
        return "challenge\(ids.count == 1 ? "" : "s") " + ids.prefix(shown).joined(separator: ", ")
            + (MergeWarning.andMore(shown, of: ids.count) ?? "")
    }

    /// The stale guard's case seen from the side it does not cover (see
    /// `MergeNotice.staleSurvivors`), as one line.
    static func staleSurvivors(_ ids: [String], named source: String) -> String {
        MergeWarning.exportedBefore(source) + " and keeps \(challenges(ids)), last edited "
            + "before it, that the backup does not have: \(MergeWarning.forgottenDeletes(ids.count)) "
            + "made on another device; if so, delete them again in the app"
    }

    /// One line for items stamped more than 24 h ahead (FORMAT.md §5.1 rule 8 reports them always).
    static func futureStamped(_ outcome: MergeOutcome, in source: String) -> String? {
        guard let first = outcome.futureStamped.first else { return nil }
        return MergeWarning.futureStamped(first, in: source)
            + (MergeWarning.andMore(1, of: outcome.futureStamped.count, "such item(s)")
                .map { "," + $0 } ?? "") + "; check that device's clock"
    }
}

/// A flag shared by copies of a session (a `Mutex` cannot be copied, a reference to it can).
private final class SaidOnce: Sendable {
    private let said = Mutex(false)
    func first() -> Bool {
        said.withLock { said in
            defer { said = true }
            return !said
        }
    }
}

/// A value worked out at its first use and kept, shared by copies of a session.
private final class Once<Value: Sendable>: Sendable {
    private let stored = Mutex<Value?>(nil)
    func value(_ make: () -> Value) -> Value {
        if let known = stored.withLock({ $0 }) { return known }
        let made = make()
        return stored.withLock { stored in
            if stored == nil { stored = made }
            return stored ?? made
        }
    }
}
