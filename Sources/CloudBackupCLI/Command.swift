import BackupKit

/// A subcommand: a type that carries its own help, parses its own arguments and runs.
public protocol Command {
    /// The word after `cloudbackup`.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// `cloudbackup NAME …` synopsis, printed after a usage error.
    static var usage: String { get }
    /// The full `--help` text (tested word for word).
    static var help: String { get }

    /// Parses everything after the command name; throws `CLIError.usage` for bad input.
    init(arguments: inout Arguments) throws(CLIError)

    func run(in context: Context) throws

    /// The profile whose `last-run.json` records how this run ended, for the runs a monitoring
    /// check cares about (`backup`, `restore`); nil for every other command and a dry run.
    var recordedProfile: String? { get }
}

extension Command {
    var recordedProfile: String? { nil }
}

/// A command whose `--quiet` (`-q`) leaves its outcome to the exit status: it runs with
/// `Context.quieted()`, so no line of it reaches stdout, while failures, warnings and a
/// document written to `-o -` still go out.
protocol QuietCommand: Command {
    var quiet: Bool { get }
}

extension String {
    /// A file name (or any text someone else chose) as put on one line of stdout: its control
    /// characters escaped, as on stderr, so a name holding a newline cannot add a line of its
    /// own and one holding an escape sequence cannot drive the terminal.
    var onOneLine: String { ValidationIssue.escapingControls(self) }
}
