import Foundation
import TestSupport
import Testing

@testable import CloudBackupCLI

/// Runs a command line in-process and keeps what it printed.
func printed(_ arguments: [String]) -> (code: ExitCode, stdout: String, stderr: String) {
    final class Streams: @unchecked Sendable {
        var out = ""
        var err = ""
    }
    let streams = Streams()
    let context = Context(
        environment: [:], stdout: { streams.out += $0 }, stderr: { streams.err += $0 })
    let code = CloudBackup.run(arguments, in: context)
    return (code, streams.out, streams.err)
}

/// The long options a command's `--help` lists, read straight from its option lines
/// (`  --name …`, `  -o, --output …`), not through `HelpData`, so a parser that loses one
/// is caught too.
func helpLongOptions(_ command: any Command.Type) -> [String] {
    command.help.split(separator: "\n").filter { $0.hasPrefix("  -") }.compactMap { line in
        line.split(separator: " ").map { $0.trimmingCharacters(in: [","]) }
            .first { $0.hasPrefix("--") }
    }
}

private func isInstalled(_ path: String) -> Bool {
    FileManager.default.isExecutableFile(atPath: path)
}

/// `cloudbackup completion SHELL`, and each script run by (or at least parsed by) its shell.
@Suite struct CompletionTests {
    /// The script `completion SHELL` prints, saved in `folder`.
    private func script(_ shell: String, in folder: URL) throws -> URL {
        let result = printed(["completion", shell])
        #expect(result.code == .success)
        #expect(result.stderr.isEmpty)
        let file = folder.appendingPathComponent("cloudbackup.\(shell)")
        try Data(result.stdout.utf8).write(to: file)
        return file
    }

    private func withFolder<T>(_ body: (URL) throws -> T) throws -> T {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        return try body(folder)
    }

    /// What bash's completion function offers with `words` on the line, the cursor in the
    /// last one, as bash itself would call it.
    private func bashCompletes(_ words: [String], script: URL) throws -> [String] {
        let program = """
            source "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
            _cloudbackup
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", program, "bash", script.path] + words,
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandNames() throws {
        try withFolder { folder in
            let script = try script("bash", in: folder)
            #expect(try bashCompletes(["cloudbackup", "ba"], script: script) == ["backup"])
            let all = try bashCompletes(["cloudbackup", ""], script: script)
            for command in CloudBackup.commands { #expect(all.contains(command.name)) }
            #expect(
                try bashCompletes(["cloudbackup", "help", "ver"], script: script) == ["verify"])
        }
    }

    @Test func bashCompletesEachCommandsOptions() throws {
        try withFolder { folder in
            let script = try script("bash", in: folder)
            let backup = try bashCompletes(["cloudbackup", "backup", "--"], script: script)
            for option in ["--file", "--max-bytes", "--password-file", "--quiet", "--help"] {
                #expect(backup.contains(option), "\(option) in \(backup)")
            }
            #expect(backup.contains("--dry-run"))
            // Each command's own options only: login has no dry run.
            let login = try bashCompletes(["cloudbackup", "login", "--"], script: script)
            #expect(login.contains("--no-browser") && !login.contains("--dry-run"))
            let restore = try bashCompletes(["cloudbackup", "restore", "--d"], script: script)
            #expect(restore == ["--dry-run"])
            for command in CloudBackup.commands {
                let offered = try bashCompletes(["cloudbackup", command.name, "-"], script: script)
                for option in helpLongOptions(command) {
                    #expect(offered.contains(option), "\(command.name) \(option)")
                }
                #expect(offered.contains("-h"))
            }
        }
    }

    @Test func bashCompletesFileNamesWhereAValueIsAFile() throws {
        try withFolder { folder in
            let script = try script("bash", in: folder)
            let state = folder.appendingPathComponent("state.json").path
            try Data("{}".utf8).write(to: URL(fileURLWithPath: state))
            let prefix = folder.appendingPathComponent("st").path
            #expect(
                try bashCompletes(["cloudbackup", "backup", "--file", prefix], script: script)
                    == [state])
            #expect(
                try bashCompletes(["cloudbackup", "merge", "-o", prefix], script: script)
                    == [state])
            #expect(
                try bashCompletes(["cloudbackup", "backup", "--file", "=", prefix], script: script)
                    == [state])
            #expect(
                try bashCompletes(["cloudbackup", "validate", prefix], script: script) == [state])
            // A profile's name, a size or a time is not a file.
            #expect(
                try bashCompletes(["cloudbackup", "backup", "--profile", ""], script: script)
                    .isEmpty)
            #expect(
                try bashCompletes(["cloudbackup", "validate", "--max-bytes", ""], script: script)
                    .isEmpty)
            #expect(
                try bashCompletes(["cloudbackup", "completion", ""], script: script)
                    == ["bash", "zsh", "fish"])
        }
    }

    @Test(.enabled(if: isInstalled("/usr/bin/zsh"), "zsh is not installed: no zsh -n check"))
    func zshScriptParsesAndHasEveryCommand() throws {
        try withFolder { folder in
            let script = try script("zsh", in: folder)
            let check = try run(URL(fileURLWithPath: "/usr/bin/zsh"), ["-n", script.path])
            #expect(check.status == 0, "\(check.stderr)")
            #expect(check.stderr.isEmpty)
            let text = try String(contentsOf: script, encoding: .utf8)
            #expect(text.hasPrefix("#compdef cloudbackup\n"))
            for command in CloudBackup.commands {
                #expect(text.contains("        '\(command.name):"))
                #expect(text.contains("    (\(command.name))\n"))
                for option in helpLongOptions(command) {
                    #expect(text.contains(option), "\(command.name) \(option)")
                }
            }
        }
    }

    @Test(.enabled(if: isInstalled("/usr/bin/fish"), "fish is not installed: no fish check"))
    func fishScriptParsesAndCompletes() throws {
        try withFolder { folder in
            let script = try script("fish", in: folder)
            let fish = URL(fileURLWithPath: "/usr/bin/fish")
            let check = try run(fish, ["--no-execute", script.path])
            #expect(check.status == 0, "\(check.stderr)")
            #expect(check.stderr.isEmpty)
            let text = try String(contentsOf: script, encoding: .utf8)
            for command in CloudBackup.commands {
                #expect(text.contains("__fish_use_subcommand -a \(command.name) "))
                #expect(text.contains("'__fish_seen_subcommand_from \(command.name)'"))
            }
            // fish asked as at a prompt: `complete -C` lists what a tab would offer.
            let asked = try run(
                fish,
                [
                    "--no-config", "-c",
                    "source $argv[1]; complete -C 'cloudbackup ba'; "
                        + "complete -C 'cloudbackup restore --dry'",
                    script.path,
                ],
                environment: ["PATH": "/usr/bin:/bin", "HOME": folder.path])
            #expect(asked.status == 0, "\(asked.stderr)")
            let offered = asked.stdout.split(separator: "\n").map {
                String($0.prefix { $0 != "\t" })
            }
            #expect(offered == ["backup", "--dry-run"])
        }
    }

    @Test func anUnknownShellIsAUsageError() {
        let result = printed(["completion", "tcsh"])
        #expect(result.code == .usage)
        #expect(result.stderr.contains("unknown shell 'tcsh': say bash, zsh or fish"))
        #expect(result.stdout.isEmpty)
        #expect(printed(["completion"]).code == .usage)
    }
}
