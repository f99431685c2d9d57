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
            RollbackCommand.self,
            HistoryCommand.self,
            LogCommand.self,
            CompletionCommand.self,
            ManualCommand.self,
        ]
    }

    /// The tool's own usage, in its help and, with a pointer to it, after a usage error.
    static let synopsis = "usage: cloudbackup <command> [options]"
    static let usage = synopsis + "   (cloudbackup --help lists them)"

    static var help: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let rows = commands.map { command in
            "  " + command.name + String(repeating: " ", count: width - command.name.count + 2)
                + command.summary
        }
        return """
            cloudbackup \(version): back up a habit tracker's document to Google Drive's app folder.

            \(synopsis)

            commands:
            \(rows.joined(separator: "\n"))

            Run 'cloudbackup help <command>' (or 'cloudbackup <command> --help') for a
            command's options; -q, -v and -n stand for --quiet, --verbose and --dry-run
            wherever a command takes them. 'cloudbackup version' (or -V, --version) prints
            the version.
            \(HelpText.list("Exit codes:", exitCodes.map { "\($0.code) \($0.meaning)" }))
            """
    }

    public static func exit(withArguments arguments: [String]) -> Never {
        // A reader that went away (`merge … | head -1`) must not kill the run before it has
        // written its log line or kept copy: with SIGPIPE ignored, writes to the closed pipe
        // fail with EPIPE instead, and Context lets those go.
        signal(SIGPIPE, SIG_IGN)
        let context = Context.process()
        // Every time the run shows or reads in local time follows `TZ` as POSIX reads it
        // (ZoneSetting.local): Foundation's `TimeZone.current` reads TZ=GMT+5 as UTC+5 and
        // EST5 as the system's zone. A TZ that can be read neither way is refused, not replaced.
        do {
            ZoneSetting.local = try ZoneSetting.zone(context.environment["TZ"] ?? "")
        } catch {
            Glibc.exit(report(error, in: context).rawValue)
        }
        Glibc.exit(run(arguments, in: context).rawValue)
    }

    /// Runs one command line and returns its exit code, having printed what it had to say.
    public static func run(_ arguments: [String], in context: Context) -> ExitCode {
        guard let first = arguments.first else {
            context.printError(usage)
            return .usage
        }
        switch first {
        case "help" where arguments.count > 1:
            return run([arguments[1], OptionSpec.help.name], in: context)
        case OptionSpec.help.name, OptionSpec.help.short, "help":
            context.print(help)
            return .success
        case OptionSpec.version.name, OptionSpec.version.short, "version":
            context.print("cloudbackup \(version)")
            return .success
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            let what = first.hasPrefix("-") ? "option" : "command"
            context.printError(
                Suggestion.appending(
                    to: "cloudbackup: unknown \(what) '\(first)'", for: first,
                    among: commands.map { $0.name } + [
                        OptionSpec.help.name, OptionSpec.version.name, "help", "version",
                    ]))
            context.printError(usage)
            return .usage
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains(where: { $0 == OptionSpec.help.name || $0 == OptionSpec.help.short }) {
            context.print(command.help)
            return .success
        }
        let instance: any Command
        do {
            var parsed = Arguments(rest, usage: command.usage, groups: command.options)
            try parsed.check()
            instance = try command.init(arguments: &parsed)
        } catch {
            return report(error, in: context)
        }
        var failure: CLIError?
        do {
            let quiet = (instance as? any QuietCommand)?.quiet == true
            try instance.run(in: quiet ? context.quieted() : context)
        } catch {
            failure = describe(error)
        }
        // Here, once, so every way a run ends (a throw from deep in a sync, an early success)
        // is recorded alike.
        if let profile = instance.recordedProfile {
            LastRun.record(command.name, failure: failure, profileName: profile, in: context)
        }
        return failure.map { report($0, in: context) } ?? .success
    }
}
