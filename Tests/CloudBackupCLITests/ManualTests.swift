import Foundation
import TestSupport
import Testing

@testable import CloudBackupCLI

private let man = "/usr/bin/man"

/// `cloudbackup manpage` as man shows it at 80 columns, and the help texts it comes from.
@Suite struct ManualTests {
    /// The page rendered by man, and what man said on stderr.
    private func rendered() throws -> (page: String, said: String) {
        let result = printed(["manpage"])
        #expect(result.code == .success)
        #expect(result.stderr.isEmpty)
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("cloudbackup.1")
        try Data(result.stdout.utf8).write(to: file)
        let shown = try run(
            URL(fileURLWithPath: man), ["-l", file.path],
            environment: [
                "PATH": "/usr/bin:/bin", "MANWIDTH": "80", "LC_ALL": "C.UTF-8",
                "HOME": folder.path,
            ])
        #expect(shown.status == 0)
        return (shown.stdout, shown.stderr)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: man), "man is not installed"))
    func manRendersThePageWithoutWarnings() throws {
        let (page, said) = try rendered()
        #expect(page.hasPrefix("CLOUDBACKUP(1)"))
        // groff's complaints ("troff: …: warning: can't break line") go to stderr; the page's
        // own text speaks of warnings too, but never as "warning:".
        #expect(said.isEmpty, "\(said)")
        #expect(!page.lowercased().contains("warning:"))
        for heading in [
            "NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES",
            "SEE ALSO",
        ] {
            #expect(page.contains("\n\(heading)\n"), "\(heading)")
        }
        #expect(page.split(separator: "\n").allSatisfy { $0.count <= 80 })
        for variable in Profile.settings.map(\.variable) + [
            "CLOUDBACKUP_ENCRYPT", "CLOUDBACKUP_COMPRESS", "TZ",
        ] {
            #expect(page.contains("\n       \(variable)"), "\(variable)")
        }
        for code in 0...7 { #expect(page.contains("\n       \(code)  ")) }
    }

    /// Each command's part of COMMANDS lists, as option tags, exactly the options its
    /// `--help` lists (with their one-letter forms), whole and copyable.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: man), "man is not installed"))
    func everyCommandAndEveryOptionIsInThePage() throws {
        let lines = try rendered().page.split(separator: "\n", omittingEmptySubsequences: false)
        for command in CloudBackup.commands {
            let start = try #require(
                lines.firstIndex(of: "   \(command.name)"), "no section for \(command.name)")
            let section = lines[(start + 1)...].prefix { $0.isEmpty || $0.hasPrefix("    ") }
            let synopsis = "       cloudbackup \(command.name)"
            #expect(section.contains { $0 == synopsis || $0.hasPrefix(synopsis + " ") })
            let options = section.drop { $0 != "       Options:" }.prefix {
                !$0.hasPrefix("       Exit status:")
            }
            let tags = options.filter { $0.hasPrefix("       -") }.flatMap { line in
                line.split(separator: " ").prefix { $0.hasPrefix("-") }
                    .map { $0.trimmingCharacters(in: [","]) }
            }
            #expect(Set(tags) == expectedOptions(command), "\(command.name)")
            #expect(tags.count == Set(tags).count, "\(command.name): an option twice")
        }
    }

    /// Every name of every option line of `command.help`, read without `HelpData`.
    private func expectedOptions(_ command: any Command.Type) -> Set<String> {
        var names = Set(helpLongOptions(command))
        for line in command.help.split(separator: "\n") where line.hasPrefix("  -") {
            if let short = line.split(separator: " ").first, short.count == 3, short.hasSuffix(",")
            {
                names.insert(String(short.dropLast()))
            }
        }
        return names
    }

    @Test func roffIsEscaped() {
        #expect(Manual.escaped("--max-bytes N") == #"\-\-max\-bytes N"#)
        #expect(Manual.escaped(".bak is kept") == #"\&.bak is kept"#)
        #expect(Manual.escaped("'quoted' first") == #"\&'quoted' first"#)
        #expect(Manual.escaped("a 'quote' inside") == "a 'quote' inside")
        #expect(Manual.escaped(#"C:\path"#) == #"C:\epath"#)
        #expect(Manual.escaped("FORMAT.md §6.1, …") == #"FORMAT.md \[u00A7]6.1, \[u2026]"#)
        // No text line starts a request by accident: each line starting one is the page's own.
        let requests: Set = [#".\""#, ".TH", ".nh", ".ad", ".SH", ".SS", ".PP", ".TP", ".br"]
        for line in Manual.page.split(separator: "\n") where line.hasPrefix(".") {
            #expect(requests.contains(String(line.prefix { $0 != " " })), "\(line)")
        }
    }

    /// Every option a command declares is offered everywhere a user looks, in that command's
    /// own part: its usage line, its help, its man page section and its part of each shell's
    /// completion script.
    @Test func everyDeclaredOptionIsInUsageHelpManPageAndCompletions() throws {
        let page = Manual.page
        let bash = ShellCompletion.script(for: .bash)
        let zsh = ShellCompletion.script(for: .zsh)
        let fishLines = ShellCompletion.script(for: .fish).split(separator: "\n")
        /// The text from the line that is `start` to the first line after it that starts with
        /// `end`.
        func part(of text: String, from start: String, to end: String) -> String {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard let first = lines.firstIndex(where: { $0 == start }) else { return "" }
            let rest = lines[(first + 1)...]
            let last = rest.firstIndex { $0.hasPrefix(end) } ?? lines.endIndex
            return lines[first..<last].joined(separator: "\n")
        }
        for command in CloudBackup.commands {
            let name = command.name
            let section = part(of: page, from: ".SS \(name)", to: ".SS ")
            let bashOptions = part(of: bash, from: "    \(name))", to: "        valued=")
                .split(whereSeparator: { $0 == " " || $0 == "'" || $0 == "\n" })
            let zshPart = part(of: zsh, from: "    (\(name))", to: "        ;;")
            for option in command.options.options {
                let label = "\(name) \(option.name)"
                #expect(command.usage.contains(option.spelledInUsage), "\(label)")
                #expect(command.help.contains("  " + option.spelledInHelp + " "), "\(label)")
                #expect(
                    section.contains(#"\fB"# + Manual.escaped(option.name) + #"\fR"#), "\(label)")
                #expect(bashOptions.contains(Substring(option.name)), "\(label)")
                #expect(
                    [option.name + "=", option.name + "[", option.name + "}", option.name + "'["]
                        .contains { zshPart.contains($0) }, "\(label)")
                #expect(
                    fishLines.contains {
                        $0.contains("__fish_seen_subcommand_from \(name)'")
                            && $0.contains(" -l \(option.name.dropFirst(2)) ")
                    }, "\(label)")
            }
        }
    }

    /// A command made of declarations: its usage wraps between groups under its first option,
    /// descriptions start at one column and wrap there, and the man page and completions read
    /// the same parts.
    @Test func aDeclaredCommandsHelpAndPartsComeFromItsDeclarations() throws {
        #expect(
            TryCommand.help == """
                usage: cloudbackup try FILE -o OUT [--quiet | --verbose] [--log FILE]
                                       [--a-rather-long-option-name VALUE] (--this-one | --that-one)

                Does one thing.
                Over two lines.

                options:
                  -o, --output OUT      where to write
                  -q, --quiet           say less
                  -v, --verbose         say more, and more, and more, and more, and more, and more, and
                                        more
                  --log FILE            append a line
                  --a-rather-long-option-name VALUE  a name longer than the column
                  --this-one            one
                  --that-one            the other

                The client id comes from elsewhere.

                exit status:
                  0   done
                  3   invalid or unreadable file: not done
                A note.
                """)
        #expect(TryCommand.usage.hasPrefix("usage: cloudbackup try FILE -o OUT [--quiet"))
        #expect(!TryCommand.usage.contains("\n"))
        let help = HelpData(TryCommand.self)
        #expect(
            help.synopsis
                == "cloudbackup try FILE -o OUT [--quiet | --verbose] [--log FILE] [--a-rather-long-option-name VALUE] (--this-one | --that-one)"
        )
        #expect(help.operands == ["FILE"])
        #expect(
            help.description == [
                "Does one thing. Over two lines.", "The client id comes from elsewhere.",
            ])
        #expect(help.options.map(\.names).first == ["-o", "--output"])
        #expect(help.options.map(\.takesFile) == [true, false, false, true, false, false, false])
        #expect(
            help.exitStatus
                == "0 done, 3 invalid or unreadable file: not done. A note.")
    }

    private struct TryCommand: Command {
        static let name = "try"
        static let summary = "a try"
        static let operands = ["FILE"]
        static var options: [OptionGroup] {
            OptionSpec.output.described("where to write")
            OptionGroup.verbosity(
                quiet: "say less",
                verbose: "say more, and more, and more, and more, and more, and more, and more")
            OptionSpec(name: "--log", value: "FILE", help: "append a line")
            OptionSpec(
                name: "--a-rather-long-option-name", value: "VALUE",
                help: "a name longer than the column")
            OptionGroup.oneOf(
                OptionSpec(name: "--this-one", help: "one"),
                OptionSpec(name: "--that-one", help: "the other"), required: true)
        }
        static let about = "Does one thing.\nOver two lines."
        static let note: String? = "The client id comes from elsewhere."
        static let exits = [Exit(.success), Exit(.invalidFile, "not done")]
        static let exitNote: String? = "A note."

        init(arguments: inout Arguments) throws(CLIError) {}
        func run(in context: Context) throws {}
    }

    /// Every command's help comes apart: a usage, a description, and options for all but
    /// the two that take none.
    @Test func everyCommandsHelpHasItsParts() {
        for help in HelpData.all {
            #expect(help.synopsis.hasPrefix("cloudbackup \(help.name)"), "\(help.name)")
            #expect(!help.description.isEmpty, "\(help.name)")
            #expect(
                help.options.isEmpty == ["completion", "manpage"].contains(help.name),
                "\(help.name)")
            #expect(help.options.allSatisfy { !$0.help.isEmpty }, "\(help.name)")
        }
        #expect(CloudBackup.exitCodes.map(\.code) == (0...10).map(String.init))
        #expect(CloudBackup.exitCodes.last?.meaning.hasSuffix("no backup on Drive yet") == true)
        #expect(CloudBackup.purpose.hasPrefix("back up a habit tracker"))
    }
}
