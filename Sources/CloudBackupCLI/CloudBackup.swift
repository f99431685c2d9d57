import BackupKit
import BackupSync
import Envelope
import GoogleDrive
import LocalFiles
import Networking
import OAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The entry point and the ONE error boundary: every error any command throws becomes a
/// message on stderr and an exit code here, and nowhere else.
public enum CloudBackup {
    public static let version = "0.1.0"

    /// Every command, in the order `--help` lists them.
    static var commands: [any Command.Type] {
        [
            ValidateCommand.self,
            InspectCommand.self,
            MigrateCommand.self,
            MergeCommand.self,
            VerifyCommand.self,
            LoginCommand.self,
            LogoutCommand.self,
            StatusCommand.self,
            BackupCommand.self,
            RestoreCommand.self,
            HistoryCommand.self,
            CompletionCommand.self,
            ManualCommand.self,
        ]
    }

    static let usage = "usage: cloudbackup <command> [options]   (cloudbackup --help lists them)"

    static var help: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let rows = commands.map { command in
            "  " + command.name + String(repeating: " ", count: width - command.name.count + 2)
                + command.summary
        }
        return """
            cloudbackup \(version): back up a habit tracker's document to Google Drive's app folder.

            usage: cloudbackup <command> [options]

            commands:
            \(rows.joined(separator: "\n"))

            Run 'cloudbackup help <command>' (or 'cloudbackup <command> --help') for a
            command's options; -q, -v and -n stand for --quiet, --verbose and --dry-run
            wherever a command takes them.
            Exit codes: 0 done, 1 unexpected failure, 2 usage, 3 invalid or unreadable file,
            4 not logged in, 5 network or server failure, 6 another run holds the lock,
            7 refused (newer schema, or a file that predates the tombstone window).
            """
    }

    public static func exit(withArguments arguments: [String]) -> Never {
        // A reader that went away (`merge … | head -1`) must not kill the run before it has
        // written its log line or kept copy: with SIGPIPE ignored, writes to the closed pipe
        // fail with EPIPE instead, and Context lets those go.
        signal(SIGPIPE, SIG_IGN)
        Glibc.exit(run(arguments, in: .process()).rawValue)
    }

    /// Runs one command line and returns its exit code, having printed what it had to say.
    public static func run(_ arguments: [String], in context: Context) -> ExitCode {
        guard let first = arguments.first else {
            context.printError(usage)
            return .usage
        }
        switch first {
        case "help" where arguments.count > 1:
            return run([arguments[1], "--help"], in: context)
        case "--help", "-h", "help":
            context.print(help)
            return .success
        case "--version":
            context.print("cloudbackup \(version)")
            return .success
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            context.printError(
                Suggestion.appending(
                    to: "cloudbackup: unknown command '\(first)'", for: first,
                    among: commands.map { $0.name }))
            context.printError(usage)
            return .usage
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains(where: { $0 == "--help" || $0 == "-h" }) {
            context.print(command.help)
            return .success
        }
        do {
            var parsed = Arguments(rest, usage: command.usage)
            let instance = try command.init(arguments: &parsed)
            try instance.run(in: context)
            return .success
        } catch {
            return report(error, in: context)
        }
    }

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
        guard !error.isRead else { return CLIError(error.description, exitCode: .invalidFile) }
        return CLIError(
            error.description + (error.writeFix.map { "; \($0), then run again" } ?? ""),
            exitCode: .failure)
    }

    static func describe(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError:
            return error
        case let error as LocalFileError:
            return describe(error)
        case let error as OAuthError:
            return describe(error)
        case let error as TransportError:
            return describe(error)
        case let error as DriveError:
            return describe(error)
        case let error as SyncError:
            return describe(error)
        // A command's own `open` of backup bytes (not through a sync run, which names the file).
        case is RemoteEncryption.MissingKey, is EnvelopeError:
            return RemoteEncryption.describe(unopened: error, file: "the backup")
        default:
            return CLIError("unexpected failure: \(error)", exitCode: .failure)
        }
    }

    /// Drive failures: a refused login is exit 4, everything else that reached Drive (or
    /// tried to, through all the retries) is exit 5, and the remote file is as it was. A login
    /// without the Drive scope is a refused login too: retrying cannot help, logging in can.
    static func describe(_ error: DriveError) -> CLIError {
        switch error {
        case .token(let inner):
            return describe(inner)
        case .unauthorized:
            return CLIError(error.description, exitCode: .notLoggedIn)
        case .rejected(_, let google) where google.status == 403 && google.isMissingScope:
            return CLIError(
                "\(error.description); the login does not allow access to Google Drive's app folder: run `cloudbackup login` again and tick the box for Google Drive on the consent page",
                exitCode: .notLoggedIn)
        case .rejected(_, let google)
        where google.status == 403 && google.reason == "storageQuotaExceeded":
            return CLIError(
                "\(error.description); free up space in Google Drive (or get more storage), then back up again",
                exitCode: .network)
        case .rejected(_, let google) where google.status == 403 && google.reason == "domainPolicy":
            return CLIError(
                "\(error.description); the account's administrator has turned off Drive apps for it: ask them, or log in with another account",
                exitCode: .network)
        case .rejected(let operation, let google) where google.status == 404:
            let advice =
                DriveClient.addressesAFile(operation)
                ? "the file changed on Drive meanwhile (another device may have merged it into its copy): run again"
                : "check the Drive URL setting (CLOUDBACKUP_DRIVE_URL or driveUrl in config.json)"
            return CLIError("\(error.description); \(advice)", exitCode: .network)
        case .rejected:
            return CLIError(
                "\(error.description); the backup on Drive is as it was; run again, and if it repeats, run with --verbose to see the exchange",
                exitCode: .network)
        case .unavailable, .malformedResponse:
            return CLIError(error.description, exitCode: .network)
        }
    }
}
