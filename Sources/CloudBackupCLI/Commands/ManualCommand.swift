/// `cloudbackup manpage`: the man page, for `make install` and for reading it in place.
struct ManualCommand: Command {
    static let name = "manpage"
    static let summary = "print the manual page cloudbackup(1), in roff"
    static var options: [OptionGroup] {}
    static let about = """
        Prints the manual page cloudbackup(1) for man: every command with its usage,
        description and options (the same as its --help), the exit codes, the environment
        variables and the profile's files. 'make install' installs it; to read it in place,
        cloudbackup manpage > cloudbackup.1 && man -l cloudbackup.1.
        """
    static let exits = Exit.always

    init(arguments: inout Arguments) throws(CLIError) {
        _ = try arguments.positionals(exactly: [])
    }

    func run(in context: Context) throws {
        context.print(Manual.page)
    }
}
