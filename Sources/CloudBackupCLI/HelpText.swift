/// A command's usage line and `--help`, made from its declarations: the usage from its
/// operands and option groups, the `options:` paragraph from each option's names and
/// description, wrapped to one width with one column for the descriptions; the prose around
/// them (what the command does, a note, the exit status) is the command's own.
enum HelpText {
    /// The width help is wrapped to.
    static let width = 88
    /// Where descriptions start, unless a command's longest option is shorter.
    static let column = 24

    /// `usage: cloudbackup NAME OPERANDS [options…]` on one line, as a usage error shows it.
    static func usage(_ command: any Command.Type) -> String {
        (["usage:"] + usageWords(command)).joined(separator: " ")
    }

    static func help(_ command: any Command.Type) -> String {
        var words = usageWords(command)
        let lead = "usage: " + words.removeFirst() + " " + words.removeFirst()
        let usage = words.isEmpty ? lead : wrapped(words, after: lead + " ", indent: lead.count + 1)
        var paragraphs = [usage]
        paragraphs.append(command.about)
        let options = command.options.options
        if !options.isEmpty {
            paragraphs.append((["options:"] + optionLines(options)).joined(separator: "\n"))
        }
        paragraphs += [command.note].compactMap { $0 }
        paragraphs.append(
            (["exit status:"] + exitLines(command.exits) + [command.exitNote].compactMap { $0 })
                .joined(separator: "\n"))
        return paragraphs.joined(separator: "\n\n")
    }

    /// `cloudbackup`, the name, the operands, each option group: the units a usage line
    /// breaks between.
    private static func usageWords(_ command: any Command.Type) -> [String] {
        ["cloudbackup", command.name] + command.operands + command.options.map(\.usage)
    }

    /// Each option as `  --name VALUE  description`, the descriptions from one column (two
    /// spaces after a name that reaches it) and continued there.
    static func optionLines(_ options: [OptionSpec]) -> [String] {
        let longest = options.map { $0.spelledInHelp.count }.max() ?? 0
        let column = min(column, 2 + longest + 2)
        return options.map { option in
            let head = "  " + option.spelledInHelp
            let first = head + String(repeating: " ", count: max(2, column - head.count))
            let words = option.help.split(separator: " ").map(String.init)
            return wrapped(words, after: first, indent: column)
        }
    }

    /// `items` after `lead`, separated by commas and ended by a full stop, wrapped to the
    /// help's width between items, never inside one.
    static func list(_ lead: String, _ items: [String]) -> String {
        let units = items.enumerated().map {
            $0.element + ($0.offset == items.count - 1 ? "." : ",")
        }
        return wrapped(units, after: lead + " ", indent: 0)
    }

    /// Each code with its meaning and when, descriptions continued under the meaning.
    static func exitLines(_ exits: [Exit]) -> [String] {
        exits.map { exit in
            let code = "  \(exit.code.rawValue)"
            let head = code + String(repeating: " ", count: 6 - code.count)
            let words = exit.description.split(separator: " ").map(String.init)
            return wrapped(words, after: head, indent: head.count)
        }
    }

    /// `words` after `lead` (which ends in the space or padding the first word needs), broken
    /// into lines of at most `width` (a longer word stands alone), later lines indented by
    /// `indent` spaces.
    private static func wrapped(_ words: [String], after lead: String, indent: Int) -> String {
        var lines: [String] = []
        var line = lead
        for (index, word) in words.enumerated() {
            if index == 0 {
                line += word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(repeating: " ", count: indent) + word
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
