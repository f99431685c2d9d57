/// `cloudbackup completion SHELL`: tab completion of the commands and their options.
struct CompletionCommand: Command {
    static let name = "completion"
    static let summary = "print a completion script for bash, zsh or fish"
    static let operands = ["bash|zsh|fish"]
    static var options: [OptionGroup] {}
    static let about = """
        Prints a script that completes, for that shell, the commands after cloudbackup, each
        command's options after it, and file names where an option or argument is a file.
        'make install' installs all three where the shells look; for one session, run
        source <(cloudbackup completion bash) in bash or zsh, or
        cloudbackup completion fish | source in fish.
        """
    static let exits = Exit.always

    let shell: ShellCompletion.Shell

    init(arguments: inout Arguments) throws(CLIError) {
        let name = try arguments.positionals(exactly: ["SHELL"])[0]
        guard let shell = ShellCompletion.Shell(rawValue: name) else {
            throw .usage("unknown shell '\(name)': say bash, zsh or fish", Self.usage)
        }
        self.shell = shell
    }

    func run(in context: Context) throws {
        context.print(ShellCompletion.script(for: shell))
    }
}
