import BackupKit
import BackupSync
import Envelope
import GoogleDrive
import LocalFiles
import Networking
import OAuth

/// What went wrong, by what it is about: the one place where each kind of failure gets its
/// exit code (README "Exit codes", FORMAT.md §8.1). Commands and the mappings of library
/// errors below say which failure they report, never which code.
public enum Failure: CaseIterable, Sendable {
    /// A bad option or argument; the command's usage line follows.
    case arguments
    /// The environment is unusable: no home folder, a bad `CLOUDBACKUP_…` value.
    case environment
    /// No OAuth client configured, or a profile that encrypts without a usable key source
    /// (a password file or command that gives no passphrase).
    case missingSetup
    /// A revision that the backup's history does not hold.
    case unknownRevision
    /// A backup or STATE that is invalid, too large or cannot be decrypted.
    case invalidBackup
    /// A local file that cannot be read (missing, a folder, a FIFO, over --max-bytes).
    case unreadableFile
    /// No backup in the app folder to restore, list or roll back: the account's first device.
    case noBackup
    /// A file of the profile (config.json, the token file, the identity file) that is broken
    /// or readable by others.
    case profileFile
    /// No saved login, a revoked one, or one without Drive access.
    case notLoggedIn
    /// Drive or the network failed, after the retries.
    case remote
    /// Another run of the profile holds its lock, or STATE changed while restore ran.
    case busy
    /// A file of a newer schema, or one that predates the tombstone window.
    case refused
    /// `status`: the profile's last backup, restore or rollback failed.
    case lastRunFailed
    /// `status --max-age`: no successful backup as recent as that.
    case tooOld
    /// A local write that failed (a full disk, a read-only folder).
    case localWrite
    /// A restore the user answered no to; nothing was written.
    case cancelled
    /// Anything else: a bug, reported as "unexpected failure".
    case unexpected

    public var exitCode: ExitCode {
        switch self {
        case .unexpected, .localWrite, .cancelled: .failure
        case .arguments, .environment, .missingSetup, .unknownRevision: .usage
        case .invalidBackup, .unreadableFile, .profileFile: .invalidFile
        case .noBackup: .noBackupYet
        case .notLoggedIn: .notLoggedIn
        case .remote: .network
        case .busy: .locked
        case .refused: .refused
        case .lastRunFailed: .lastRunFailed
        case .tooOld: .tooOld
        }
    }
}

/// An error that already knows what to say and which failure it is. Commands throw these (or
/// library errors the boundary knows); only `CloudBackup.run` turns them into output.
public struct CLIError: Error, Sendable {
    /// One line per problem, each already naming the file/place and the fix.
    public var lines: [String]
    public var failure: Failure
    /// Usage errors are followed by the command's usage line.
    public var usage: String?

    public var exitCode: ExitCode { failure.exitCode }

    public init(_ lines: [String], _ failure: Failure, usage: String? = nil) {
        self.lines = lines
        self.failure = failure
        self.usage = usage
    }

    public init(_ line: String, _ failure: Failure, usage: String? = nil) {
        self.init([line], failure, usage: usage)
    }

    /// Drive holds no backup of `name` yet; `then` says what that means for the command.
    static func noBackupYet(_ name: String, then: String) -> CLIError {
        CLIError(
            "there is no backup on Drive yet (no '\(name)' in this account's app folder); \(then)",
            .noBackup)
    }

    public static func usage(_ line: String, _ usage: String) -> CLIError {
        CLIError(line, .arguments, usage: usage)
    }

    /// A file holding a secret that others may reach (`SecretFile`'s one rule).
    static func tooOpen(_ refusal: SecretFile.TooOpen) -> CLIError {
        CLIError(refusal.description, .profileFile)
    }

    /// A question answered no: `command` stopped, and `unchanged` says what it left as it was.
    static func cancelled(_ command: String, leaving unchanged: String) -> CLIError {
        CLIError("\(command) cancelled; \(unchanged)", .cancelled)
    }

    /// A profile file (config.json, the identity file) that cannot be used: `file` names it
    /// (with what it is, where that helps), `problem` says what is wrong and how to fix it.
    static func badProfile(_ file: String, _ problem: String) -> CLIError {
        CLIError("\(file): \(problem)", .profileFile)
    }

    /// A profile file that could not be read, in the OS's words (which name it).
    static func unreadableProfile(_ error: LocalFileError) -> CLIError {
        CLIError(error.description, .profileFile)
    }

    /// An environment variable whose value cannot be used: what it must be, and what it was.
    static func badVariable(_ variable: String, mustBe: String, not value: String) -> CLIError {
        CLIError("\(variable) must be \(mustBe), not '\(value)'", .environment)
    }

    /// The key of an encrypted profile could not be had (none given, two given, or its
    /// passphrase source failed): `why`, with the fix.
    static func noKey(_ why: String) -> CLIError {
        CLIError(why, .missingSetup)
    }
}

/// The commands' own refusals, each worded here once: what the command found, and the fix.
extension CLIError {
    /// A bug: a state the code should never reach, said as such (exit 1).
    static func unexpected(_ what: String) -> CLIError {
        CLIError("unexpected failure: \(what)", .unexpected)
    }

    /// A profile name that could not be a folder's name.
    static func badProfileName(_ name: String) -> CLIError {
        CLIError(
            "profile name '\(name)' may use only letters, digits, '-', '_' and '.'", .arguments)
    }

    /// Neither variable that says where profiles live is usable; `xdg` says what is wrong
    /// with XDG_CONFIG_HOME when it is set.
    static func noConfigHome(xdg: String?) -> CLIError {
        CLIError(
            (xdg.map { "XDG_CONFIG_HOME \($0) and HOME is not set" }
                ?? "neither XDG_CONFIG_HOME nor HOME is set")
                + "; set one to an absolute path to say where the profile lives",
            .environment)
    }

    /// A setting (a variable or a config.json key) whose value cannot be used: `problem`
    /// says why and what it must be.
    static func badSetting(_ setting: String, _ problem: String, _ failure: Failure) -> CLIError {
        CLIError("\(setting): \(problem)", failure)
    }

    /// TZ names no zone this machine knows; `problem` says how it failed.
    static func badZone(_ value: String, _ problem: String) -> CLIError {
        CLIError(
            "TZ '\(value)' \(problem); set TZ to a zone name like America/New_York or "
                + "Europe/Berlin, or unset it for the system's zone", .environment)
    }

    /// OAuth client settings missing for profile `profile`: one line per `(what, variable,
    /// key)`, each saying where to set it; `kind` is the console's name for the client type.
    static func noClient(
        _ missing: [(what: String, variable: String, key: String)], profile: String,
        config: String, kind: String
    ) -> CLIError {
        CLIError(
            missing.map {
                "no OAuth \($0.what) for profile '\(profile)': set \($0.variable) or \"\($0.key)\" in \(config) (from the Google Cloud console's \(kind) client)"
            }, .missingSetup)
    }

    /// Another run of the profile holds its lock; `waited`: how long this one waited for it.
    static func lockHeld(profile: String, lock: String, waited seconds: Double) -> CLIError {
        let fix =
            seconds > 0
            ? "try again when it has finished, or wait longer with --wait-lock"
            : "try again when it has finished, or wait for it with --wait-lock DURATION"
        let waited = seconds > 0 ? " after waiting \(Int(seconds)) s" : ""
        return CLIError(
            "another cloudbackup run holds the lock of profile '\(profile)' (\(lock))\(waited); "
                + fix, .busy)
    }

    /// STATE (`file`) changed between the command's read and its write, so nothing was written.
    static func changedMeanwhile(_ file: String, while doing: String, command: String)
        -> CLIError
    {
        CLIError("\(file) changed while \(doing); nothing was written; run \(command) again", .busy)
    }

    /// A file over `--max-bytes`; `size`, when known (stdin stops reading at the limit).
    static func overLimit(_ file: String, size: Int?, limit: Int) -> CLIError {
        CLIError(
            "\(file): " + (size.map { "\($0) bytes is" } ?? "the file is")
                + " over the \(limit)-byte limit; raise it with --max-bytes if the file is genuine",
            .invalidBackup)
    }

    /// A decision log (`merge --log`, the profile's) that could not be written, in the OS's
    /// words where there are some; `after` says what the run did before it failed.
    static func logNotWritten(_ error: any Error, path: String, after: String? = nil)
        -> CLIError
    {
        let said = (error as? LocalFileError)?.description ?? "\(path): \(error)"
        return CLIError(said + (after.map { " (\($0))" } ?? ""), .localWrite)
    }

    /// Line `line` of the decision log `path` is not one of its lines.
    static func badLogLine(_ path: String, line: Int) -> CLIError {
        CLIError(
            "\(path):\(line): not a line of the decision log; delete the file to start a new log",
            .invalidBackup)
    }

    /// `restore --merge` over a STATE that cannot be read as a backup: `problem` is the
    /// reader's first line, and the way on is `--replace`, which keeps the file aside.
    static func nothingToMergeInto(_ file: String, _ problem: CLIError) -> CLIError {
        CLIError(
            "\(problem.lines.first ?? file); there is nothing to merge the backup into: "
                + "restore with --replace instead, which keeps this file as "
                + "\(file.onOneLine).broken-<time> and writes the backup in its place",
            problem.failure)
    }

    /// `verify`: `file` predates the tombstone window, which merge's stale guard answers.
    static func predatesWindow(_ file: String, windowDays: Int) -> CLIError {
        CLIError(
            MergeWarning.predates(file, windowDays: windowDays)
                + "; merge holds its old, unknown items back unless --allow-stale",
            .refused)
    }

    /// `rollback` to `revision`, exported `when`, before the tombstone window.
    static func staleRollback(_ revision: String, exported when: String, windowDays: Int)
        -> CLIError
    {
        CLIError(
            MergeWarning.exportedBefore("revision \(revision)", when: when, windowDays: windowDays)
                + ": challenges deleted since may have lost their tombstones and would come "
                + "back; pass --allow-stale to roll back to it anyway",
            .arguments)
    }

    /// `status`: the profile's last `command` failed with `exitCode`.
    static func lastRunFailed(_ command: String, exitCode: Int32) -> CLIError {
        CLIError(
            "the last \(command) failed (exit \(exitCode), the report says why); run it again once that is fixed",
            .lastRunFailed)
    }

    /// `status --max-age`: the last successful backup was at `last` (nil: none yet), longer
    /// ago than `maxAge`.
    static func tooOld(last: String?, maxAge: String) -> CLIError {
        CLIError(
            (last.map { "the last successful backup, \($0), is older than --max-age \(maxAge)" }
                ?? "no successful backup from this profile yet, so none is within --max-age \(maxAge)")
                + "; check that the scheduled backup runs (its last run is in the report)",
            .tooOld)
    }

    /// Several files' problems at once (`validate A B`): every line, and the worst failure.
    static func all(_ lines: [String], worst: Failure) -> CLIError {
        CLIError(lines, worst)
    }
}

extension CloudBackup {
    /// Maps any error to its lines on stderr and its exit code.
    static func report(_ error: any Error, in context: Context) -> ExitCode {
        let cliError = describe(error)
        // A line may name a file whose name holds a newline or an escape sequence.
        for line in cliError.lines {
            context.printError("cloudbackup: " + ValidationIssue.escapingControls(line))
        }
        if let usage = cliError.usage { context.printError(usage) }
        return cliError.exitCode
    }

    /// A local file that could not be read is a bad file (exit 3); one that could not be
    /// written (a token file on a full disk, a profile folder gone read-only) is a failed
    /// write (exit 1), with what to do about it.
    static func describe(_ error: LocalFileError) -> CLIError {
        guard !error.isRead else { return CLIError(error.description, .unreadableFile) }
        return CLIError(
            error.description + (error.writeFix.map { "; \($0), then run again" } ?? ""),
            .localWrite)
    }

    static func describe(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError:
            return error
        case let error as LocalFileError:
            return describe(error)
        case let error as SecretFile.TooOpen:
            return .tooOpen(error)
        case let error as OAuthError:
            return describe(error)
        case let error as TransportError:
            return describe(error, failed: "request")
        case let error as DriveError:
            return describe(error)
        case let error as SyncError:
            return describe(error)
        // A command's own `open` of backup bytes (not through a sync run, which names the file).
        case is RemoteEncryption.MissingKey, is EnvelopeError:
            return RemoteEncryption.describe(unopened: error, file: "the backup")
        default:
            return .unexpected("\(error)")
        }
    }

    /// What to do about an answer from Drive that is final but not understood.
    static let repeatAdvice =
        "the backup on Drive is as it was; run again, and if it repeats, run with --verbose to see the exchange"

    /// Drive failures: a refused login is exit 4, everything else that reached Drive (or
    /// tried to, through all the retries) is exit 5, and the remote file is as it was. A login
    /// without the Drive scope is a refused login too: retrying cannot help, logging in can.
    static func describe(_ error: DriveError) -> CLIError {
        switch error {
        // The one request for a token under a Drive call is the refresh.
        case .token(OAuthError.transport(let inner)):
            return describe(inner, failed: "token refresh")
        case .token(let inner):
            return describe(inner)
        case .unauthorized:
            return CLIError(error.description, .notLoggedIn)
        case .rejected(_, let google) where google.status == 403 && google.isMissingScope:
            return CLIError(
                "\(error.description); the login does not allow access to Google Drive's app folder: run `cloudbackup login` again and tick the box for Google Drive on the consent page",
                .notLoggedIn)
        case .rejected(_, let google)
        where google.status == 403 && google.reason == "storageQuotaExceeded":
            return CLIError(
                "\(error.description); free up space in Google Drive (or get more storage), then back up again",
                .remote)
        case .rejected(_, let google) where google.status == 403 && google.reason == "domainPolicy":
            return CLIError(
                "\(error.description); the account's administrator has turned off Drive apps for it: ask them, or log in with another account",
                .remote)
        case .rejected(let operation, let google) where google.status == 404:
            let advice =
                operation.fileID != nil
                ? "the file changed on Drive meanwhile (another device may have merged it into its copy): run again"
                : "check the Drive URL setting (CLOUDBACKUP_DRIVE_URL or driveUrl in config.json)"
            return CLIError("\(error.description); \(advice)", .remote)
        case .rejected:
            return CLIError("\(error.description); \(Self.repeatAdvice)", .remote)
        case .unavailable, .unreachable:
            return CLIError(error.description, .remote)
        case .malformedResponse:
            return CLIError("\(error.description); \(Self.repeatAdvice)", .remote)
        }
    }
}

extension CloudBackup {
    static func describe(_ error: SyncError) -> CLIError {
        switch error {
        case .drive(let error):
            return describe(error)
        // Both after an upload: never the "as it was" of a Drive failure's advice.
        case .unverified(let error, _):
            return CLIError(
                "\(error.description); the upload went through but could not be checked against "
                    + "Drive's revision history, so what another device wrote meanwhile may be "
                    + "missing from the backup on Drive: the next backup, restore or status --remote "
                    + "of this profile checks it first and puts it back",
                describe(error).failure)
        case .unmerged(let error, let revisions):
            let names = revisions.map { revision in
                revision.id + (revision.modifiedTime.map { " (written \($0))" } ?? "")
            }
            return CLIError(
                "\(error.description); the upload went through, but another device's backup it "
                    + "replaced (revision \(names.joined(separator: ", "))) could not be read, so "
                    + "what only that held is missing from the backup on Drive now; Drive keeps "
                    + "the revision, and the next backup, restore or status --remote of this "
                    + "profile merges it back",
                describe(error).failure)
        case .keepsChanging(let rounds):
            return CLIError(
                "the backup on Drive kept changing while we merged (\(rounds) attempts); another "
                    + "device keeps writing to it; nothing was lost (what this run found is in its "
                    + "record of the check, Drive keeps every version for at least 30 days, and the "
                    + "next run merges again); try again later",
                .remote)
        case .tooLarge(let bytes, let limit):
            return CLIError(
                "the backup would be \(bytes) bytes, over the \(limit)-byte limit devices read it with; "
                    + "nothing was uploaded; raise --max-bytes (on every device) if the data is genuine",
                .invalidBackup)
        case .unopened(let file, let revision, let error):
            return RemoteEncryption.describe(unopened: error, file: name(file, revision: revision))
        case .unsealing(let file, let revision):
            return RemoteEncryption.describe(unsealing: name(file, revision: revision))
        case .unsealed(let error):
            return CLIError(
                "could not encrypt the backup: \(error); nothing was uploaded", .unexpected)
        case .refused(let file, let error), .invalidRemote(let file, let error):
            let name = name(file)
            guard let error = error as? BackupFileError else {
                return CLIError("\(name): \(error)", .invalidBackup)
            }
            return BackupFile.describe(error, file: name)
        case .noSuchRevision(let refusal):
            let oldest = refusal.oldestWords
            switch refusal {
            case .unknownID(let id, _):
                return CLIError(
                    "the backup has no revision '\(id)'\(oldest); 'cloudbackup history' lists them",
                    .unknownRevision)
            case .beforeOldest(let time, _):
                return CLIError(
                    "\(time) is before the oldest revision of the backup\(oldest); "
                        + "'cloudbackup history' lists them", .unknownRevision)
            }
        case .cannotRecord(let why):
            return CLIError(
                "\(why); nothing was uploaded: the record of the upload's check could not be "
                    + "saved in the profile; free some space there and run again",
                .localWrite)
        case .protocolViolation(let what):
            return .unexpected(what)
        }
    }

    /// "Drive file habit-backup.json (id F1)", or "revision R of" it.
    private static func name(_ file: DriveFile, revision: String? = nil) -> String {
        (revision.map { "revision \($0) of " } ?? "") + "Drive file \(file.name) (id \(file.id))"
    }
}

extension CloudBackup {
    /// Login, token and network failures: what happened and what to do, never a secret.
    static func describe(_ error: OAuthError) -> CLIError {
        let login = "run `cloudbackup login`"
        switch error {
        case .notLoggedIn(let file):
            return CLIError(
                "not logged in (no token file \(file)); \(login)", .notLoggedIn)
        case .revoked(let file):
            return CLIError(
                "the saved login was revoked or expired; \(login) (the token file is \(file)). A likely cause: Google expires refresh tokens after 7 days for OAuth apps whose consent screen is left in Testing mode; publishing the app avoids it",
                .notLoggedIn)
        case .denied:
            return CLIError(
                "access was not granted in the browser, so this profile is not logged in; \(login) to try again",
                .notLoggedIn)
        case .scopeNotGranted(let missing):
            return CLIError(
                "the login did not grant access to Google Drive's app folder (\(missing.joined(separator: " "))), so nothing was saved; run `cloudbackup login` again and tick the box for Google Drive on the consent page",
                .notLoggedIn)
        case .authorizationFailed(let code):
            return CLIError(
                "the authorization server refused the login (error=\(code)); check the OAuth client settings and \(login) again",
                .notLoggedIn)
        case .timedOut(let seconds):
            return CLIError(
                "no answer within \(seconds) s; \(login) again (--timeout S waits longer; on a machine without a browser, --paste or --device)",
                .notLoggedIn)
        case .pasteRefused(let reason):
            return CLIError(
                "\(LoginFlow.pasteTries) pasted lines were refused, so this profile is not logged in (the last: \(reason)); run `cloudbackup login --paste` again",
                .notLoggedIn)
        case .deviceCodeExpired:
            return CLIError(
                "the code was not entered in time and has expired; run `cloudbackup login --device` again for a new one",
                .notLoggedIn)
        case .deviceScopeRefused:
            return CLIError(
                "Google refused access to Drive's app folder for a device-code login (invalid_scope); use `cloudbackup login --paste` instead",
                .notLoggedIn)
        case .server(let endpoint, let status, let code, let description, _):
            let shown = Redaction.url(endpoint)
            let detail = [code, description].compactMap { $0 }.joined(separator: ": ")
            let said = detail.isEmpty ? "\(status)" : "\(status) (\(detail))"
            switch code {
            case "invalid_client", "unauthorized_client":
                return CLIError(
                    "\(shown) refused the OAuth client: \(said); check CLOUDBACKUP_CLIENT_ID and CLOUDBACKUP_CLIENT_SECRET (or clientId and clientSecret in config.json)",
                    .missingSetup)
            case "invalid_grant":
                return CLIError(
                    "\(shown) refused the authorization code: \(said); \(login) again",
                    .notLoggedIn)
            default:
                return CLIError("\(shown) answered \(said); try again later", .remote)
            }
        case .malformedAnswer(let endpoint, let problem):
            return CLIError(
                "\(Redaction.url(endpoint)) gave an unexpected answer: \(problem); try again later, and if it repeats, run with --verbose to see the exchange",
                .remote)
        // Outside a Drive call, a token request without an answer is the login's.
        case .transport(let error):
            return describe(error, failed: "login")
        case .tooOpen(let refusal):
            return .tooOpen(refusal)
        case .corruptTokenFile(let path, let problem):
            return CLIError("\(path): \(problem); delete it and \(login)", .profileFile)
        case .file(let error):
            return CloudBackup.describe(error)
        case .listener(let message):
            return CLIError(message, .unexpected)
        case .crypto(let message):
            return CLIError(message, .unexpected)
        }
    }

    /// One short line: what failed, the host and why; the URL's path and query are for
    /// `--verbose`, whose trace shows each exchange.
    static func describe(_ error: TransportError, failed what: String) -> CLIError {
        CLIError("\(what) failed: \(error.summary); check the network and run again", .remote)
    }
}

extension BackupFile {
    /// What `BackupReader.read(plainOrGzip:)` threw, as `FILE: …` lines.
    static func describe(
        reading error: any Error, file: String, limit: Int = ReadOptions().maxIssues
    ) -> CLIError {
        switch error {
        case let error as BackupFileError: describe(error, file: file, limit: limit)
        default: CLIError("\(file): \(error)", .invalidBackup)
        }
    }

    /// `limit`: the most problems shown; a list longer than that (the reader was asked for
    /// one more) is cut there, and says so.
    static func describe(
        _ error: BackupFileError, file: String, limit: Int = ReadOptions().maxIssues
    ) -> CLIError {
        switch error {
        case .tooLarge(let size, let limit):
            return .overLimit(file, size: size, limit: limit)
        case .syntax(let line, let column, let message):
            return CLIError("\(file):\(line):\(column): \(message)", .invalidBackup)
        case .notABackup(let message):
            return CLIError("\(file): \(message)", .invalidBackup)
        case .newerSchema(let version):
            return CLIError(
                "\(file): written by a newer version (schema \(ReadInteger.shown(version))); update cloudbackup",
                .refused)
        case .invalid(let issues):
            var lines = issues.prefix(limit).map { "\(file): \($0)" }
            if issues.count > limit {
                lines.append(
                    "\(file): stopped after the first \(limit) problems; fix these and run again for the rest"
                )
            }
            return CLIError(lines, .invalidBackup)
        }
    }

    /// A write that failed: the OS's words, what was left as it was, and what to do about it
    /// when errno says.
    static func failedWrite(_ error: LocalFileError, leaving what: String) -> CLIError {
        CLIError(
            "\(error.description); \(what)" + (error.writeFix.map { "; \($0)" } ?? ""),
            .localWrite)
    }
}

extension RemoteEncryption {
    /// Why `open` refused the encrypted bytes of `file` (a Drive file, or a revision of one),
    /// as one line: which case, and what to configure. Exit 3, nothing written.
    static func describe(unopened error: any Error, file: String) -> CLIError {
        let line =
            switch error {
            case is MissingKey:
                "\(file) is encrypted (age) and this profile has no key to open it; give one: \(keySources)"
            case let error as EnvelopeError where error.kind == .noMatch:
                "\(file): \(error.description) (wrong passphrase or identity file?)"
            case let error as EnvelopeError:
                "\(file) is not a readable age file: \(error.description)"
            default:
                "\(file) could not be decrypted: \(error)"
            }
        return CLIError(line + "; nothing was written", .invalidBackup)
    }

    /// A profile that does not encrypt met an encrypted backup it would replace.
    static func describe(unsealing file: String) -> CLIError {
        CLIError(
            "\(file) is encrypted (age) but this profile does not encrypt, and would upload it in plain; set \"encrypt\": true in config.json or CLOUDBACKUP_ENCRYPT=1 with its key (or \"encrypt\": false with its key to decrypt it for good); nothing was written",
            .invalidBackup)
    }
}
