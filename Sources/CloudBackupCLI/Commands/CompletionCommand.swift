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
    static let note: String? = """
        'make install' puts them under PREFIX (default ~/.local; sudo make install
        PREFIX=/usr/local for everyone; DESTDIR stages the tree for a package), and 'make
        uninstall' with the same PREFIX removes them. bash loads its script by itself with
        the bash-completion package; without it, add source <(cloudbackup completion bash)
        to ~/.bashrc. zsh looks in /usr/local/share/zsh/site-functions already; for
        ~/.local, add fpath=(~/.local/share/zsh/site-functions $fpath) to ~/.zshrc before
        compinit, and run rm -f ~/.zcompdump once so it sees the new function. fish reads
        ~/.local/share/fish/vendor_completions.d by itself; with another PREFIX, run
        cloudbackup completion fish > ~/.config/fish/completions/cloudbackup.fish.
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
