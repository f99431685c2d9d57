import Foundation
import LocalFiles
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a fault campaign against the local commands found: inputs that are not files, file
/// names that are not one line, a log on a full disk, a profile folder open to others.
@Suite final class HardeningTests {
    static let now = "2026-11-30T12:00:00Z"
    let folder: URL
    let valid = Paths.file("Tests/BackupKitTests/Fixtures/v3-example.json").path

    init() throws {
        folder = try Paths.temporaryFolder()
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// The one line a FILE that is not a regular file gets.
    static func refusal(_ path: String, _ kind: String) -> String {
        "cloudbackup: \(path): cannot read: it is \(kind), not a regular file; give the path of a file (save a pipe's output to a file first)\n"
    }

    /// A FIFO nobody writes to used to hang `open` for ever (a stalled cron job): it is
    /// refused at once, as is a pipe, a device or a socket. `timeout` turns a hang into exit 137.
    @Test func aFileThatIsNotARegularFileIsRefusedAtOnce() throws {
        let fifo = path("fifo.json")
        try #require(mkfifo(fifo, 0o600) == 0)
        let socket = path("socket.json")
        let made = try run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            ["-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", socket])
        try #require(made.status == 0, "\(made.stderr)")
        for (file, kind) in [(fifo, "a FIFO"), (socket, "a socket"), ("/dev/null", "a device")] {
            let result = try run(
                URL(fileURLWithPath: "/usr/bin/timeout"),
                ["-s", "KILL", "10", Paths.binary.path, "validate", file],
                environment: testEnvironment)
            #expect(result.status == 3, "\(file): \(result.stderr)")
            #expect(result.stderr == Self.refusal(file, kind))
            #expect(result.stdout == "")
        }
        // A pipe (`<(zcat backup.json.gz)`) is a FIFO too, refused before anything is read.
        let piped = try run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", #"exec "$0" migrate <(cat "$1") -o "$2""#, Paths.binary.path, valid, path("o")],
            environment: testEnvironment)
        #expect(piped.status == 3)
        #expect(piped.stderr.hasPrefix("cloudbackup: /dev/fd/"))
        #expect(piped.stderr.hasSuffix(String(Self.refusal("", "a FIFO").dropFirst(15))))
        #expect(!LocalFile.exists(path("o")))
        let folderResult = try cloudbackup(["validate", folder.path])
        #expect(folderResult.status == 3)
        #expect(folderResult.stderr == "cloudbackup: \(folder.path): cannot read: Is a directory\n")
    }

    /// Every file name a command prints on stdout is one line with no terminal escape in it,
    /// as on stderr: `\n` and ESC are shown as `\u000A` and `\u001B`.
    @Test func fileNamesOnStdoutAreEscaped() throws {
        let name = "a\nb\u{1B}[2J"
        let shown = "a\\u000Ab\\u001B[2J"
        let file = path(name + ".json")
        try FileManager.default.copyItem(atPath: valid, toPath: file)
        let now = "2026-03-10T10:00:00Z"
        let runs: [(arguments: [String], line: String)] = [
            (
                ["validate", "--verbose", file],
                "\(path(shown)).json: valid (schema 3, migrates to schema 4)"
            ),
            (
                ["migrate", "--verbose", file, "-o", path(name + "-2.json")],
                "\(path(shown)).json (schema 3) → \(path(shown))-2.json (schema 4)"
            ),
            (
                ["merge", file, file, "-o", path(name + "-3.json"), "--now", now],
                "wrote \(path(shown))-3.json"
            ),
            (["inspect", file, "--now", now], "file:        \(path(shown)).json"),
            (
                ["verify", file, "--now", now, "--against", file],
                "merging it into \(path(shown)).json would:"
            ),
        ]
        for (arguments, line) in runs {
            let result = try cloudbackup(arguments)
            #expect(result.status == 0, "\(arguments[0]): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.contains(line), "\(arguments[0]): \(result.stdout)")
            #expect(!result.stdout.contains("\u{1B}"), "\(arguments[0])")
            #expect(!result.stdout.contains("a\nb"), "\(arguments[0])")
        }
    }

    /// `merge --dry-run --log LOG` under a file-size limit (`ulimit -f`, standing in for a full
    /// disk), SIGXFSZ ignored so the write fails instead of killing the run.
    func mergeLogging(to log: String, limitKB: Int) throws -> RunResult {
        let example = Paths.file("Examples/phone.json").path
        return try run(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c", #"trap '' XFSZ; ulimit -f "$1"; shift; exec "$0" "$@""#, Paths.binary.path,
                "\(limitKB)", "merge", example, example, "--dry-run", "--now", Self.now,
                "--log", log,
            ],
            environment: testEnvironment)
    }

    /// A log line cut short by a full disk is taken back off: the log stays whole lines, the
    /// old ones untouched, so the next merge's line is not glued onto a torn one.
    @Test func aLogLineThatDoesNotFitIsTakenBackOff() throws {
        let log = path("merges.log")
        // 20 bytes short of the 1 KiB limit: the next line starts, and cannot end.
        let old = Data((String(repeating: "x", count: 1003) + "\n").utf8)
        try old.write(to: URL(fileURLWithPath: log))
        let result = try mergeLogging(to: log, limitKB: 1)
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "cloudbackup: \(log): cannot append: File too large (the merge itself was a dry run)\n"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: log)) == old)
        // With room again the next line is whole, on a line of its own.
        let again = try mergeLogging(to: log, limitKB: 64)
        #expect(again.status == 0, "\(again.stderr)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            (try? JSONSerialization.jsonObject(with: Data(lines[1].utf8))) as? [String: Any]
                != nil)
    }

    /// A disk full before the log exists leaves no empty log behind.
    @Test func aLogThatCannotTakeItsFirstLineIsNotLeftEmpty() throws {
        let log = path("merges.log")
        let result = try mergeLogging(to: log, limitKB: 0)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("cloudbackup: \(log): cannot append: File too large"))
        #expect(!LocalFile.exists(log))
    }

    /// A profile folder made 0755 by hand holds the login: the first run that takes the
    /// profile's lock makes it 0700 and says so; the next run has nothing to say.
    @Test func anOpenProfileFolderIsTightenedOnceWithAWarning() throws {
        let profile = path("config/cloudbackup/default")
        try LocalFile.makeDirectory(profile, mode: 0o755)
        try #require(chmod(profile, 0o755) == 0)
        let environment = [
            "XDG_CONFIG_HOME": path("config"),
            "CLOUDBACKUP_REVOKE_URL": "http://127.0.0.1:\(try LocalServer.closedPort())/revoke",
        ]
        let first = try cloudbackup(["logout"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stderr
                == "cloudbackup: warning: \(profile) was readable by others (mode 755); made it 0700, as it holds your login\n"
        )
        #expect(try LocalFile.mode(of: profile) == 0o700)
        let second = try cloudbackup(["logout"], environment: environment)
        #expect(second.status == 0)
        #expect(second.stderr == "")
    }
}
