import BackupKit
import BackupSync

/// The options `restore` and `rollback` take alike, parsed once: which profile, the clock of
/// the tombstone window, the read limits, the keys and the lock's wait, and which revision.
struct DriveOptions {
    let profile: String
    let now: Timestamp?
    let quiet: Bool
    let verbose: Bool
    let readOptions: ReadOptions
    let keys: RemoteEncryption.Options
    let waitLock: Double

    /// The options parsed here, as `restore` and `rollback` declare them.
    static var options: [OptionGroup] {
        [
            OptionGroup(.profile), OptionGroup(.now), .verbosity(), OptionGroup(.waitLock),
            OptionGroup(.maxBytes), .keys,
        ]
    }

    /// The exit codes of a command that reads the backup and writes STATE under the
    /// profile's lock; `changedWhile` says what STATE changing meanwhile interrupted.
    static func exits(changedWhile: String, noBackup: String?) -> [Exit] {
        Exit.always + [
            Exit(
                .invalidFile,
                "STATE or the backup is invalid, or it is encrypted and no key given opens it"),
            Exit(.notLoggedIn), Exit(.network),
            Exit(.locked, "still after --wait-lock's wait, or STATE changed while " + changedWhile),
            Exit(.refused, "STATE or the backup is of a newer schema"),
            Exit(.noBackupYet, noBackup),
        ]
    }

    init(_ arguments: inout Arguments) throws(CLIError) {
        (quiet, verbose) = (arguments.flag(.quiet), arguments.flag(.verbose))
        profile = try arguments.option(.profile) ?? "default"
        now = try ClockOptions.fixedNow(&arguments)
        readOptions = try BackupFile.readOptions(&arguments)
        keys = try RemoteEncryption.Options(&arguments)
        waitLock = try WaitLock.seconds(&arguments)
    }

    /// The profile's session with Drive. A dry run takes no lock and saves no refreshed login:
    /// it writes nothing anywhere.
    /// `json`: stdout is for one object, so no progress line either.
    func session(in context: Context, json: Bool, dryRun: Bool) throws -> DriveSession {
        let profile = try Profile.load(name: profile, environment: context.environment)
        return try DriveSession(
            profile: profile, context: context, now: now, verbose: verbose, quiet: quiet || json,
            locking: !dryRun, savingLogin: !dryRun, maxBytes: readOptions.maxBytes,
            encryption: try RemoteEncryption.load(
                profile: profile, options: keys, environment: context.environment),
            waitingForLock: waitLock)
    }

    /// What restore and rollback read the backup with: a previous run's check finished first
    /// (not by a dry run, which writes nothing anywhere and leaves it to the next run), then
    /// the codec and the driver, whose advice names a restore into `file`.
    func reader(
        _ session: DriveSession, allowStale: Bool, dryRun: Bool, file: String,
        warn: @escaping (String) -> Void
    ) throws -> (codec: SyncCodec<BackupDocument>, driver: SyncDriver) {
        if !dryRun { try session.settle(warn: warn) }
        let codec = session.codec(allowStale: allowStale, readOptions: readOptions)
        let driver = session.driver(
            restoreCommand: DriveSession.restoreCommand(into: file, profile: session.profile.name),
            warn: warn)
        return (codec, driver)
    }

    /// `--revision ID` or `--as-of TIME` (an RFC 3339 time, or a date meaning the end of that
    /// local day); nil: neither. `OptionGroup.revision` keeps them from coming together.
    static func revision(_ arguments: inout Arguments) throws(CLIError) -> RevisionChoice? {
        let id = try arguments.option(.revision)
        let asOf = try arguments.option(
            .asOf, expecting: "an RFC 3339 time or a date such as 2026-11-29",
            { RestoreCommand.asOf($0, in: ZoneSetting.local) })
        return id.map(RevisionChoice.id) ?? asOf.map(RevisionChoice.asOf)
    }
}
