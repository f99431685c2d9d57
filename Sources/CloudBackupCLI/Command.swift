import BackupKit

/// A subcommand: a type that declares its operands and options, carries the prose of its
/// help, parses its own arguments and runs. Its usage line, `--help`, man page section and
/// completions are made from the declarations (`HelpText`, `HelpData`).
protocol Command {
    /// The word after `cloudbackup`.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The words the usage puts before the options: `FILE...`, `LOCAL INCOMING`, or a choice
    /// such as `bash|zsh|fish`.
    static var operands: [String] { get }
    /// Every option, in the order usage and help list them.
    @OptionsBuilder static var options: [OptionGroup] { get }
    /// What the command does: the help's paragraphs between the usage and the options.
    static var about: String { get }
    /// A paragraph after the options, where a command needs one.
    static var note: String? { get }
    /// Every exit code the command can end with, in order: its `exit status:` list. Tests
    /// check every run of the binary against it.
    static var exits: [Exit] { get }
    /// A sentence after the list, where the codes need one.
    static var exitNote: String? { get }

    /// Parses everything after the command name; throws `CLIError.usage` for bad input.
    init(arguments: inout Arguments) throws(CLIError)

    func run(in context: Context) throws

    /// The profile whose `last-run.json` records how this run ended, for the runs a monitoring
    /// check cares about (`backup`, `restore`); nil for every other command and a dry run.
    var recordedProfile: String? { get }
}

extension Command {
    var recordedProfile: String? { nil }

    static var operands: [String] { [] }
    static var note: String? { nil }
    static var exitNote: String? { nil }

    /// `cloudbackup NAME …` on one line, printed after a usage error.
    static var usage: String { HelpText.usage(self) }
    /// The full `--help` text (tested word for word).
    static var help: String { HelpText.help(self) }
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
