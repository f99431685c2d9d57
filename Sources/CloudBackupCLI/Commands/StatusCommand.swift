import BackupKit
import BackupSync
import Foundation
import OAuth

/// `cloudbackup status`: one section per subject, each a list of rows, printed as aligned
/// text or, with `--json`, as one object per section: the login, the last backup and the last
/// run (offline), then the remote file (`--remote`) and local counts (`--file`). Its exit code
/// makes it a monitoring check: 4 not logged in, 8 the last run failed, 9 (`--max-age`) no
/// backup as recent as that.
struct StatusCommand: QuietCommand {
    static let name = "status"
    static let summary =
        "show the login, the last backup and run, the remote file and local counts"
    static var options: [OptionGroup] {
        OptionSpec.profile
        OptionSpec.remote
        OptionGroup.verbosity(
            quiet: "print nothing: the exit status tells (with --max-age, for monitoring)",
            verbose: "with --remote, trace each HTTP exchange (tokens redacted)")
        OptionSpec.file.described(
            "also count the challenges, day logs and tombstones in STATE, and those changed since the last backup or restore (offline); with --remote, also those on Drive that STATE lacks"
        )
        OptionSpec.json
        OptionSpec.maxAge
        OptionSpec.now.described("measure --max-age and the token's expiry from T, RFC 3339")
        OptionSpec.maxBytes
    }
    static let about = """
        Shows the profile's login: whether it is logged in and when the saved access token
        expires (an expired one is refreshed by the next command that needs it), the
        profile's last successful backup, and how its last backup, restore or rollback
        ended. Works offline unless --remote is given.
        """
    static let note: String? = """
        The last run is the profile's last backup, restore or rollback that tried: a dry run,
        a usage error and a question answered no are not recorded, and another run holding
        the lock (exit 6) counts as failed.

        --json prints one object: "profile", then "login" (loggedIn, accessTokenExpiresAt),
        "lastBackup" (time, fileId, uploaded, bytes; time null when there is none), "lastRun"
        (outcome "ok" or "failed", command, exitCode, at, reason: the failure's first line;
        outcome null before the first run); with --remote, "remote" (id, size, modified,
        version, revisions, pinnedRevisions, pinnedBytes; with --file, itemsNotInState; error
        when Drive failed); with --file, "local" (file, challenges, dayLogs, keptDayLogs,
        tombstones, changesNotBackedUp, changesNotBackedUpByKind, settingsNotBackedUp; the
        last three null before the profile's first backup or restore). Times are UTC.
        """
    static let exits =
        Exit.always + [
            Exit(
                .invalidFile,
                "the profile's config.json or token file is broken or readable by others, or STATE is invalid"
            ),
            Exit(.notLoggedIn, "no saved login (with --remote, also one Google refused)"),
            Exit(.network, "only with --remote"),
            Exit(.lastRunFailed),
            Exit(.tooOld, "the last successful backup is older than --max-age, or there is none"),
        ]
    static let exitNote: String? = "The first of these that applies, after the report."

    var profileName: String
    var json: Bool
    var remote: Bool
    var quiet: Bool
    var verbose: Bool
    var file: String?
    var readOptions: ReadOptions
    /// `--max-age` as given, for the message, and in seconds.
    var maxAge: (text: String, seconds: Int)?
    var now: Timestamp?

    init(arguments: inout Arguments) throws(CLIError) {
        profileName = try arguments.option(.profile) ?? "default"
        json = arguments.flag(.json)
        remote = arguments.flag(.remote)
        (quiet, verbose) = (arguments.flag(.quiet), arguments.flag(.verbose))
        file = try arguments.option(.file)
        readOptions = try BackupFile.readOptions(&arguments)
        maxAge = try arguments.option(
            .maxAge, expecting: "a duration such as 36h, 2d or 90m (at most 365d)",
            { text in DurationText.seconds(in: text, atMost: 365 * 86_400).map { (text, $0) } })
        now = try ClockOptions.fixedNow(&arguments)
        _ = try arguments.positionals(exactly: [])
    }

    func run(in context: Context) throws {
        let profile = try Profile.load(name: profileName, environment: context.environment)
        let now = self.now ?? ClockOptions.systemNow()
        let login = try profile.tokenStore.load()
        let lastBackup = LastBackup.load(from: profile.lastBackupPath)
        let lastRun = LastRun.load(from: profile.lastRunPath)
        var sections = [
            DriveStatus.lastBackupSection(lastBackup),
            DriveStatus.lastRunSection(lastRun, zone: ZoneSetting.local),
        ]
        // STATE first: a broken one fails the command before any network.
        let state = try file.map { try BackupFile.load($0, options: readOptions).document }
        let lastSynced = state == nil ? nil : Self.lastSynced(profile, options: readOptions)
        var remoteFailure: CLIError?
        if remote {
            // status takes no passphrase options: a previous run's check that it finishes (and
            // which may merge and upload) has the keys of the environment and identityFile,
            // and without them is left to the next backup or restore.
            let keys = try? RemoteEncryption.load(
                profile: profile, options: RemoteEncryption.Options(),
                environment: context.environment)
            let session = try DriveSession(
                profile: profile, context: context, now: nil, verbose: verbose, quiet: true,
                locking: false, encryption: keys ?? .plain)
            // A previous run's unfinished check of its upload comes first, under the profile's
            // lock; a run holding it checks by itself.
            var settled: CLIError?
            if session.pendingVerification != nil, keys != nil,
                let lock = try? profile.lock(in: context)
            {
                do {
                    try withExtendedLifetime(lock) {
                        try session.settle(warn: { context.printWarning($0) })
                    }
                } catch {
                    settled = CloudBackup.describe(error)
                }
            }
            var (section, failure, files) = DriveStatus.remoteSection(session)
            if let state, failure == nil {
                let (row, fetchFailure) = DriveStatus.itemsNotInStateRow(
                    session, files: files, state: state, lastSynced: lastSynced, now: now)
                section.rows.append(row)
                failure = fetchFailure
            }
            sections.append(section)
            remoteFailure = settled ?? failure
            // FORMAT.md §9.2: a clock off Google's is warned about whenever Drive answered.
            session.clockSkew()
        }
        if let file, let state {
            // What the next backup sends of STATE's settings (`SharedSettings`).
            let changedSettings =
                SharedSettings.load(from: profile.syncedSettingsPath)?
                .changes(to: SharedSettings(state.settings)) ?? []
            sections.append(
                DriveStatus.localSection(
                    file, document: state, lastSynced: lastSynced?.document,
                    changedSettings: changedSettings, now: now))
        }
        // A login Google refused is no login, whatever the token file says; the failure
        // thrown below says why, once.
        let loggedIn = login != nil && remoteFailure?.failure != .notLoggedIn
        sections.insert(
            Self.loginSection(login, loggedIn: loggedIn, profile: profile, now: now), at: 0)
        if json {
            var out = JSONOutput()
            out.beginObject()
            out.key("profile")
            out.string(profile.name)
            for section in sections {
                out.key(text: section.key)
                out.beginObject()
                for row in section.rows {
                    out.key(text: row.key)
                    row.value.write(into: &out)
                }
                out.endObject()
            }
            out.endObject()
            context.print(String(decoding: out.bytes, as: UTF8.self))
        } else {
            let rows =
                [("profile", "\(profile.name) (\(profile.folder))")]
                + sections.flatMap(\.rows).compactMap { row in row.label.map { ($0, row.text) } }
            let width = rows.map(\.0.count).max() ?? 0
            for (label, text) in rows {
                context.print(
                    label + String(repeating: " ", count: width - label.count + 2)
                        + text.onOneLine)
            }
        }
        if let remoteFailure { throw remoteFailure }
        if login == nil {
            throw CloudBackup.describe(OAuthError.notLoggedIn(tokenFile: profile.tokenPath))
        }
        if let lastRun, lastRun.failed {
            throw CLIError.lastRunFailed(lastRun.command, exitCode: lastRun.exitCode)
        }
        if let maxAge, !Self.isFresh(lastBackup, maxAge: maxAge.seconds, now: now) {
            throw CLIError.tooOld(
                last: lastBackup.map { WallTime.text(rfc3339: $0.time) }, maxAge: maxAge.text)
        }
    }

    /// The kept copy of the last backup or restore, read; nil when there is none, or it is
    /// damaged (the next backup then downloads, as it would).
    static func lastSynced(_ profile: Profile, options: ReadOptions) -> (
        copy: KeptCopy, document: BackupDocument
    )? {
        guard let copy = KeptCopy.load(from: profile.keptCopyPath, maxBytes: options.maxBytes),
            let read = try? BackupFile.decode(
                copy.bytes, file: profile.keptCopyPath, options: options)
        else { return nil }
        return (copy, read.document)
    }

    /// Whether the last successful backup was at most `maxAge` seconds before `now`; none
    /// ever counts as too old.
    static func isFresh(_ last: LastBackup?, maxAge: Int, now: Timestamp) -> Bool {
        guard let time = last.flatMap({ Timestamp($0.time) }) else { return false }
        return now.millisecondsSince1970 - time.millisecondsSince1970 <= Int64(maxAge) * 1000
    }

    /// From the token file only (no network, so `status` works offline), unless `--remote`
    /// found Google refusing it: `loggedIn` false with a login saved.
    static func loginSection(
        _ login: StoredLogin?, loggedIn: Bool, profile: Profile, now: Timestamp
    ) -> StatusSection {
        guard let login, loggedIn else {
            return StatusSection(
                key: "login",
                rows: [
                    StatusRow(
                        key: "loggedIn", label: "login",
                        text: login == nil
                            ? "not logged in; run `cloudbackup login`"
                            : "not logged in (Google refused the saved login)",
                        value: .bool(false))
                ])
        }
        let now = Date(timeIntervalSince1970: Double(now.millisecondsSince1970) / 1000)
        var rows = [
            StatusRow(
                key: "loggedIn", label: "login", text: "logged in (\(profile.tokenPath))",
                value: .bool(true))
        ]
        if let expiresAt = login.accessTokenExpiresAt {
            let stamp = expiresAt.formatted(.iso8601)
            let seconds = Int(expiresAt.timeIntervalSince(now).rounded(.down))
            let wall = WallTime.text(expiresAt)
            let text =
                seconds > 0
                ? "expires \(wall) (in \(Self.span(seconds)))"
                : "expired \(wall) (the next command refreshes it)"
            rows.append(
                StatusRow(
                    key: "accessTokenExpiresAt", label: "access token", text: text,
                    value: .string(stamp)))
        } else {
            rows.append(
                StatusRow(
                    key: "accessTokenExpiresAt", label: "access token",
                    text: "none saved (the next command gets one)", value: .null))
        }
        return StatusSection(key: "login", rows: rows)
    }

    static func span(_ seconds: Int) -> String {
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }
}

struct StatusSection: Sendable {
    /// The section's key in `--json` output.
    var key: String
    var rows: [StatusRow]
}

struct StatusRow: Sendable {
    /// The row's key inside its section's JSON object.
    var key: String
    /// The text output's left column; nil for a value only `--json` gives, whose text is
    /// part of another row's.
    var label: String?
    var text: String
    var value: StatusValue

    init(key: String, label: String, text: String, value: StatusValue) {
        self.key = key
        self.label = label
        self.text = text
        self.value = value
    }

    init(key: String, value: StatusValue) {
        self.key = key
        self.label = nil
        self.text = ""
        self.value = value
    }
}

enum StatusValue: Sendable {
    case string(String)
    case integer(Int)
    case bool(Bool)
    case null
    /// Members in this order.
    case object([(key: String, value: StatusValue)])

    func write(into out: inout JSONOutput) {
        switch self {
        case .string(let text): out.string(text)
        case .integer(let value): out.integer(value)
        case .bool(let value): out.bool(value)
        case .null: out.null()
        case .object(let members):
            out.beginObject()
            for (key, value) in members {
                out.key(text: key)
                value.write(into: &out)
            }
            out.endObject()
        }
    }
}

/// The options only `status` takes.
extension OptionSpec {
    fileprivate static let remote = OptionSpec(
        name: "--remote",
        help: "also ask Drive for the backup file: id, size, modified, version")
    fileprivate static let maxAge = OptionSpec(
        name: "--max-age", value: "DURATION",
        help:
            "exit 9 when the last successful backup is older than DURATION (36h, 2d, 90m; at most 365d), or there is none"
    )
}
