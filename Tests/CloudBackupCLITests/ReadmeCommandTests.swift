import Foundation
import TestSupport
import Testing

/// The README's commands, run as a user would type them: every fenced block marked
/// ```` ```sh test ```` is extracted and its commands run in order, in one bash session, against
/// the emulator, with the built `cloudbackup` first on PATH (in `~/.local/bin`, where
/// `make install` puts it) and a HOME of their own. A command that ends with another exit
/// status than 0 (or than the `# exits N` its line declares) fails the test, naming its README
/// line and block, so the README cannot show a command that does not work.
///
/// The session is a user's fresh machine: the app's state file is
/// `~/.local/share/habits/state.json` (a copy of `Examples/phone.json`), the working folder is
/// a clone's (its `Examples/`), and the emulator's endpoints and stand-in browser come from
/// the environment, which wins over the OAuth client the README writes into `config.json`.
@Suite struct ReadmeCommandTests {
    /// One command of a tested block: its text (continuation lines joined) and where it is.
    struct Command: Equatable {
        var text: String
        /// The README line the command starts on (1-based).
        var line: Int
        /// The line of the block's opening fence.
        var block: Int
        /// The exit status the command must end with: its `# exits N`, else 0.
        var expectedStatus: Int
    }

    static let fence = "```sh test"

    /// The commands of every block opened by exactly ```` ```sh test ```` in `markdown`: one
    /// per line, a line ending in `\` joined with the next; blank lines and comment lines
    /// skipped.
    static func commands(in markdown: String) -> [Command] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        var commands: [Command] = []
        var block: Int?
        var pending: (text: String, line: Int)?
        for (index, raw) in lines.enumerated() {
            let line = String(raw)
            guard let opened = block else {
                if line.trimmingCharacters(in: .whitespaces) == fence { block = index + 1 }
                continue
            }
            if pending == nil && line.hasPrefix("```") {
                block = nil
                continue
            }
            let text = (pending.map { $0.text + "\n" } ?? "") + line
            let start = pending?.line ?? index + 1
            if line.hasSuffix("\\") {
                pending = (text, start)
                continue
            }
            pending = nil
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let expected = text.firstMatch(of: /#\s*exits ([0-9]+)\b/).flatMap { Int($0.output.1) }
            commands.append(
                Command(text: text, line: start, block: opened, expectedStatus: expected ?? 0))
        }
        return commands
    }

    /// `text` as one bash word.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// A bash script that runs `commands` in order, echoing each, and at the first one whose
    /// status is not the expected one prints `README.md:LINE (block at line B): ...` on stderr
    /// and exits 1.
    static func script(_ commands: [Command]) -> String {
        var script = "set -o pipefail\n"
        for command in commands {
            let place = "README.md:\(command.line) (block at line \(command.block))"
            script += """
                printf '\\n$ %s\\n' \(quoted(command.text))
                \(command.text)
                status=$?
                if [ "$status" -ne \(command.expectedStatus) ]; then
                    printf '%s: exit %s, expected \(command.expectedStatus): %s\\n' \
                \(quoted(place)) "$status" \(quoted(command.text)) >&2
                    exit 1
                fi

                """
        }
        return script
    }

    @Test func theParserFindsCommandsContinuationsAndExpectedCodes() {
        let markdown = """
            ```sh
            make install
            ```
            ```sh test
            # a comment
            cloudbackup validate a.json   # exits 3: invalid

            cloudbackup backup \\
                --file s.json
            ```
            ```sh test
            echo '```'
            ```
            """
        #expect(
            Self.commands(in: markdown) == [
                Command(
                    text: "cloudbackup validate a.json   # exits 3: invalid", line: 6, block: 4,
                    expectedStatus: 3),
                Command(
                    text: "cloudbackup backup \\\n    --file s.json", line: 8, block: 4,
                    expectedStatus: 0),
                Command(text: "echo '```'", line: 12, block: 11, expectedStatus: 0),
            ])
    }

    /// A README without tested commands would pass the run below vacuously.
    @Test func theReadmeMarksTheCommandsOfEachTask() throws {
        let readme = try String(contentsOf: Paths.file("README.md"), encoding: .utf8)
        let commands = Self.commands(in: readme)
        #expect(Set(commands.map(\.block)).count >= 10)
        for needed in [
            "cloudbackup login", "cloudbackup backup", "cloudbackup restore", "cloudbackup history",
            "cloudbackup status", "cloudbackup validate", "cloudbackup log",
        ] {
            #expect(commands.contains { $0.text.hasPrefix(needed) }, "no tested '\(needed)'")
        }
    }

    @Test func everyTestedCommandInTheReadmeWorks() throws {
        let readme = try String(contentsOf: Paths.file("README.md"), encoding: .utf8)
        let commands = Self.commands(in: readme)
        try #require(!commands.isEmpty)

        let emulator = try Emulator()
        defer { emulator.stop() }
        let sandbox = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: sandbox) }
        let files = FileManager.default
        let home = sandbox.appendingPathComponent("home")
        let clone = sandbox.appendingPathComponent("cloudbackup")
        let bin = home.appendingPathComponent(".local/bin")
        let habits = home.appendingPathComponent(".local/share/habits")
        for folder in [clone, bin, habits] {
            try files.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try files.createSymbolicLink(
            at: bin.appendingPathComponent("cloudbackup"), withDestinationURL: Paths.binary)
        try files.createSymbolicLink(
            at: clone.appendingPathComponent("Examples"),
            withDestinationURL: Paths.file("Examples"))
        try files.copyItem(
            at: Paths.file("Examples/phone.json"),
            to: habits.appendingPathComponent("state.json"))
        let script = sandbox.appendingPathComponent("readme.sh")
        try Data(Self.script(commands).utf8).write(to: script)

        var environment = testEnvironment
        environment.merge(emulator.environment(for: home.appendingPathComponent(".config"))) {
            _, new in new
        }
        environment["HOME"] = home.path
        environment["PATH"] = bin.path + ":/usr/bin:/bin"
        environment["CLOUDBACKUP_RETRY_BASE_MS"] = "5"
        let result = try run(
            URL(fileURLWithPath: "/usr/bin/timeout"), ["600", "/bin/bash", script.path],
            environment: environment, workingDirectory: clone)
        let failure = result.stderr.split(separator: "\n").last { $0.hasPrefix("README.md:") }
        #expect(
            result.status == 0,
            """
            \(failure.map(String.init) ?? "the README's commands exited \(result.status)")
            --- stdout (the last 60 lines)
            \(result.stdout.split(separator: "\n").suffix(60).joined(separator: "\n"))
            --- stderr (the last 40 lines)
            \(result.stderr.split(separator: "\n").suffix(40).joined(separator: "\n"))
            """)
    }
}
