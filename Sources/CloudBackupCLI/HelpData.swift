/// A command's `--help` taken apart: the one source of the man page and the shell
/// completions, so neither can offer an option the command does not take or miss one it
/// does. The help texts keep one layout for this: a usage paragraph, description
/// paragraphs, an `options:` paragraph of `  --name VALUE  text` lines (text continued on
/// lines indented further) and an `exit status:` paragraph.
struct HelpData: Sendable {
    struct Option: Sendable, Equatable {
        /// As the help shows them, short first (`-o`, `--output`); the one-letter forms of
        /// `Arguments.shortFlags` are added, as the parser accepts them for every command.
        var names: [String]
        /// The value's placeholder (`STATE`, `N`), nil for a flag.
        var value: String?
        /// The description, its lines joined.
        var text: String

        /// The placeholders that name a file, whose values completions offer file names for.
        static let fileValues: Set = ["FILE", "STATE", "OUT", "DIR"]

        var takesFile: Bool { value.map(Self.fileValues.contains) ?? false }
    }

    var name: String
    var summary: String
    /// The usage on one line, without `usage: `: `cloudbackup validate FILE... [--verbose] …`.
    var synopsis: String
    /// What the command does: the paragraphs around the options, each on one line.
    var description: [String]
    var options: [Option]
    /// The `exit status:` paragraph's text, on one line.
    var exitStatus: String?

    init(_ command: any Command.Type) {
        self.init(name: command.name, summary: command.summary, help: command.help)
    }

    init(name: String, summary: String, help: String) {
        self.name = name
        self.summary = summary
        var paragraphs = help.split(separator: "\n", omittingEmptySubsequences: false)
            .split(whereSeparator: \.isEmpty).map { $0.map(String.init) }
        let usage = paragraphs.isEmpty ? [] : paragraphs.removeFirst()
        synopsis = Self.joined(usage)
        if synopsis.hasPrefix("usage: ") { synopsis.removeFirst("usage: ".count) }
        description = []
        options = []
        for lines in paragraphs {
            if lines.first == "options:" {
                options += Self.options(lines.dropFirst())
            } else if lines.first?.hasPrefix("exit status: ") == true {
                exitStatus = String(Self.joined(lines).dropFirst("exit status: ".count))
            } else {
                description.append(Self.joined(lines))
            }
        }
    }

    /// Every command's, in `CloudBackup.commands`' order: parsed once, however many times a
    /// page or script reads it.
    static let all: [HelpData] = CloudBackup.commands.map(HelpData.init)

    /// The words the synopsis puts before any option: `FILE...`, `LOCAL INCOMING`, or a
    /// choice such as `bash|zsh|fish`.
    var operands: [String] {
        synopsis.split(separator: " ").dropFirst(2)
            .prefix { !$0.hasPrefix("-") && !$0.hasPrefix("[") && !$0.hasPrefix("(") }
            .map(String.init)
    }

    /// An operand's choices (`bash|zsh|fish`), or nil for a file (`FILE`, `LOCAL`).
    static func choices(_ operand: String) -> [String]? {
        operand.contains("|") ? operand.split(separator: "|").map(String.init) : nil
    }

    /// Lines as one: each trimmed, joined by a space.
    private static func joined(_ lines: some Sequence<String>) -> String {
        lines.map { $0.trimmingSpaces }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// `  -o, --output OUT  text` starts an option; a line indented further continues it.
    private static func options(_ lines: ArraySlice<String>) -> [Option] {
        var result: [Option] = []
        for line in lines {
            guard line.hasPrefix("  -") else {
                if !result.isEmpty { result[result.count - 1].text += " " + line.trimmingSpaces }
                continue
            }
            let entry = line.dropFirst(2)
            let gap = entry.firstRange(of: "  ")?.lowerBound ?? entry.endIndex
            let spec = entry[..<gap].split(separator: ", ").map(String.init)
            let last = spec.last?.split(separator: " ", maxSplits: 1).map(String.init) ?? []
            var names = Array(spec.dropLast()) + last.prefix(1)
            if let long = names.last, let short = Arguments.shortFlags[long],
                !names.contains(short)
            {
                names.insert(short, at: 0)
            }
            result.append(
                Option(
                    names: names, value: last.count > 1 ? last[1] : nil,
                    text: entry[gap...].trimmingSpaces))
        }
        return result
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
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

    /// The `Exit codes:` sentence of `help`, one (code, meaning) each.
    static var exitCodes: [(code: String, meaning: String)] {
        guard let start = help.firstRange(of: "Exit codes: ") else { return [] }
        var text = help[start.upperBound...].split(separator: "\n").joined(separator: " ")
        if text.hasSuffix(".") { text.removeLast() }
        // "0 done, 1 unexpected failure, …": a comma before a digit starts the next code,
        // one inside a meaning ("newer schema, or a file …") does not.
        var codes: [(code: String, meaning: String)] = []
        for part in text.split(separator: ", ") {
            let words = part.split(separator: " ", maxSplits: 1).map(String.init)
            if let code = words.first, code.allSatisfy(\.isNumber), words.count == 2 {
                codes.append((code, words[1]))
            } else if !codes.isEmpty {
                codes[codes.count - 1].meaning += ", " + part
            }
        }
        return codes
    }
}
