/// The completion scripts of `cloudbackup completion`, built from the commands' declarations
/// (`HelpData`), so a new option completes as soon as it is declared.
enum ShellCompletion {
    enum Shell: String, Sendable {
        case bash, zsh, fish
    }

    static func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bash
        case .zsh: zsh
        case .fish: fish
        }
    }

    /// What `help` and `--help` are described as, beside the commands' own options.
    private static let helpCommand = (
        name: "help", summary: "show a command's options (or, alone, the command list)"
    )
    private static let helpOption = OptionSpec.help

    private static func options(of command: HelpData) -> [OptionSpec] {
        command.options + [helpOption]
    }

    /// Whether the operands are files (`FILE`, `LOCAL INCOMING`) rather than choices.
    private static func choices(of command: HelpData) -> [String]? {
        command.operands.compactMap(HelpData.choices).first
    }

    private static func heading(_ shell: Shell) -> String {
        "# \(shell.rawValue) completion for cloudbackup, generated from each command's --help\n"
            + "# by 'cloudbackup completion \(shell.rawValue)'."
    }

    // MARK: bash

    private static var bash: String {
        let names = HelpData.all.map(\.name) + [helpCommand.name]
        var lines = [
            heading(.bash),
            "_cloudbackup() {",
            "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
            "    local commands='\(names.joined(separator: " "))'",
            "    local options='' valued='' files='' operands='' file_operands=''",
            "    if ((COMP_CWORD == 1)); then",
            "        mapfile -t COMPREPLY < <(compgen -W \"$commands --help --version\" -- \"$cur\")",
            "        return",
            "    fi",
            // bash splits `--file=st` at the `=`: the option is then the word before it.
            "    if [[ $cur == = ]]; then",
            "        cur=",
            "    elif [[ $prev == = ]]; then",
            "        prev=${COMP_WORDS[COMP_CWORD-2]}",
            "    fi",
            "    case ${COMP_WORDS[1]} in",
            "    help) operands=$commands ;;",
        ]
        for command in HelpData.all {
            let all = options(of: command)
            let valued = all.filter { $0.value != nil }.flatMap(\.names)
            let files = all.filter(\.takesFile).flatMap(\.names)
            lines += [
                "    \(command.name))",
                "        options='\(all.flatMap(\.names).joined(separator: " "))'",
                "        valued='\(valued.joined(separator: " "))'",
                "        files='\(files.joined(separator: " "))'",
            ]
            if let choices = choices(of: command) {
                lines.append("        operands='\(choices.joined(separator: " "))'")
            } else if !command.operands.isEmpty {
                lines.append("        file_operands=1")
            }
            lines.append("        ;;")
        }
        lines += [
            "    *) return ;;",
            "    esac",
            // An option's value first: a file name, or nothing to offer for a number or a name.
            "    if [[ \" $files \" == *\" $prev \"* ]]; then",
            "        compopt -o filenames 2>/dev/null",
            "        mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")",
            "    elif [[ \" $valued \" == *\" $prev \"* ]]; then",
            "        COMPREPLY=()",
            "    elif [[ $cur == -* || -z $operands$file_operands ]]; then",
            "        mapfile -t COMPREPLY < <(compgen -W \"$options\" -- \"$cur\")",
            "    elif [[ -n $file_operands ]]; then",
            "        compopt -o filenames 2>/dev/null",
            "        mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")",
            "    else",
            "        mapfile -t COMPREPLY < <(compgen -W \"$operands\" -- \"$cur\")",
            "    fi",
            "}",
            "complete -F _cloudbackup cloudbackup",
        ]
        return lines.joined(separator: "\n")
    }

    // MARK: zsh

    private static var zsh: String {
        let described = HelpData.all.map { ($0.name, $0.summary) } + [helpCommand]
        var lines = [
            "#compdef cloudbackup",
            heading(.zsh),
            "",
            "_cloudbackup() {",
            "    local -a commands",
            "    commands=(",
        ]
        lines += described.map { "        " + zshQuoted($0 + ":" + $1) }
        lines += [
            "    )",
            "    if ((CURRENT == 2)); then",
            "        _describe -t commands 'cloudbackup command' commands",
            "        return",
            "    fi",
            "    local command=$words[2]",
            // The command's own arguments start after its name, as _arguments expects.
            "    shift words",
            "    ((CURRENT--))",
            "    curcontext=\"${curcontext%:*:*}:cloudbackup-$command:\"",
            "    case $command in",
            "    (help) _describe -t commands 'cloudbackup command' commands ;;",
        ]
        for command in HelpData.all {
            var specs = options(of: command).map(zshSpec)
            if let choices = choices(of: command) {
                specs.append(zshQuoted(":SHELL:(\(choices.joined(separator: " ")))"))
            } else {
                specs += command.operands.map { operand in
                    operand.hasSuffix("...")
                        ? zshQuoted("*:\(operand.dropLast(3)):_files")
                        : zshQuoted(":\(operand):_files")
                }
            }
            lines.append("    (\(command.name))")
            lines.append("        _arguments -s -S \\")
            lines += specs.dropLast().map { "            \($0) \\" }
            lines += ["            \(specs.last ?? "")", "        ;;"]
        }
        lines += [
            "    esac",
            "}",
            "",
            // Autoloaded from fpath, the file is the function's body; sourced, it registers.
            "if [[ $funcstack[1] == _cloudbackup ]]; then",
            "    _cloudbackup \"$@\"",
            "else",
            "    compdef _cloudbackup cloudbackup",
            "fi",
        ]
        return lines.joined(separator: "\n")
    }

    /// `'(-o --output)'{-o+,--output=}'[text]:OUT:_files'`: both names exclude each other,
    /// and a value may follow in the same word or the next.
    private static func zshSpec(_ option: OptionSpec) -> String {
        let forms = option.names.map { name in
            guard option.value != nil else { return name }
            return name.hasPrefix("--") ? name + "=" : name + "+"
        }
        let names =
            forms.count == 1
            ? forms[0]
            : zshQuoted("(\(option.names.joined(separator: " ")))")
                + "{\(forms.joined(separator: ","))}"
        let text = option.help.reduce(into: "") { result, character in
            if "[]:\\".contains(character) { result.append("\\") }
            result.append(character)
        }
        let value = option.value.map { ":\($0):" + (option.takesFile ? "_files" : " ") } ?? ""
        return names + zshQuoted("[\(text)]" + value)
    }

    private static func zshQuoted(_ text: String) -> String {
        "'" + text.replacing("'", with: #"'\''"#) + "'"
    }

    // MARK: fish

    private static var fish: String {
        let command = "complete -c cloudbackup"
        let first = "\(command) -n __fish_use_subcommand"
        var lines = [
            heading(.fish),
            // File names only where an option or argument is a file.
            "\(command) -f",
            "\(first) -s h -l help -d \(fishQuoted("list the commands"))",
            "\(first) -l version -d \(fishQuoted("print the version"))",
        ]
        let described = HelpData.all.map { ($0.name, $0.summary) } + [helpCommand]
        lines += described.map { "\(first) -a \($0) -d \(fishQuoted($1))" }
        let names = HelpData.all.map(\.name).joined(separator: " ")
        lines.append("\(command) -n '__fish_seen_subcommand_from help' -a \(fishQuoted(names))")
        for help in HelpData.all {
            let after = "\(command) -n '__fish_seen_subcommand_from \(help.name)'"
            for option in options(of: help) {
                let names = option.names.map {
                    $0.hasPrefix("--") ? "-l " + $0.dropFirst(2) : "-s " + $0.dropFirst()
                }
                let value = option.value == nil ? "" : option.takesFile ? " -r -F" : " -x"
                lines.append(
                    "\(after) \(names.joined(separator: " "))\(value) -d \(fishQuoted(option.help))"
                )
            }
            if let choices = choices(of: help) {
                lines.append("\(after) -a \(fishQuoted(choices.joined(separator: " ")))")
            } else if !help.operands.isEmpty {
                lines.append("\(after) -F")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func fishQuoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: #"\\"#).replacing("'", with: #"\'"#) + "'"
    }
}
