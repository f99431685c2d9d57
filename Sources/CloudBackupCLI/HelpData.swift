/// What the man page and the shell completions know of a command, from its declarations:
/// the same options, usage and prose as its `--help`, so neither can offer an option the
/// command does not take or miss one it does.
struct HelpData: Sendable {
    var name: String
    var summary: String
    /// The usage on one line, without `usage: `: `cloudbackup validate FILE... [--verbose] …`.
    var synopsis: String
    /// What the command does: its paragraphs, each on one line.
    var description: [String]
    var options: [OptionSpec]
    /// The `exit status:` paragraph's text, on one line.
    var exitStatus: String?
    /// The words the synopsis puts before any option: `FILE...`, `LOCAL INCOMING`, or a
    /// choice such as `bash|zsh|fish`.
    var operands: [String]

    init(_ command: any Command.Type) {
        name = command.name
        summary = command.summary
        synopsis = String(command.usage.dropFirst("usage: ".count))
        description = ([command.about] + [command.note].compactMap { $0 })
            .flatMap { $0.components(separatedBy: "\n\n") }.map(Self.joined)
        options = command.options.options
        exitStatus =
            (command.exits.map(\.text).joined(separator: ", ") + ".")
            + (command.exitNote.map { " " + $0 } ?? "")
        operands = command.operands
    }

    /// Every command's, in `CloudBackup.commands`' order.
    static let all: [HelpData] = CloudBackup.commands.map(HelpData.init)

    /// An operand's choices (`bash|zsh|fish`), or nil for a file (`FILE`, `LOCAL`).
    static func choices(_ operand: String) -> [String]? {
        operand.contains("|") ? operand.split(separator: "|").map(String.init) : nil
    }

    /// A paragraph's lines as one line.
    private static func joined(_ paragraph: String) -> String {
        paragraph.split(separator: "\n").joined(separator: " ")
    }
}

/// The tool's own `--help`, taken apart the same way for the man page's first sections.
extension CloudBackup {
    /// What the tool is, from the first line of `help`: `back up a habit tracker's …`.
    static var purpose: String {
        let first = help.prefix { $0 != "\n" }
        let text = first.firstRange(of: ": ").map { first[$0.upperBound...] } ?? first
        return text.hasSuffix(".") ? String(text.dropLast()) : String(text)
    }

    /// Every exit code and its meaning, from the table; a code only a few commands give
    /// names them (`8 (status) the last backup, restore or rollback failed`).
    static var exitCodes: [(code: String, meaning: String)] {
        var givenBy: [ExitCode: [String]] = [:]
        for command in commands {
            for exit in command.exits { givenBy[exit.code, default: []].append(command.name) }
        }
        return ExitCode.allCases.map { code in
            let giving = givenBy[code] ?? []
            let who = giving.count <= 3 ? "(" + giving.joined(separator: ", ") + ") " : ""
            return (String(code.rawValue), who + code.meaning)
        }
    }
}
