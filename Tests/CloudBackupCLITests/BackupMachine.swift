import BackupKit
import Foundation
import LocalFiles
import TestSupport
import Testing

/// One "device" for the backup tests: its own config home (profile and login) and state
/// file, talking to a shared emulator. Retries wait milliseconds, not seconds. The folder
/// goes when the machine does.
final class BackupMachine: Sendable {
    static let now = "2026-11-30T12:00:00Z"

    let folder: URL
    let emulator: Emulator

    init(_ emulator: Emulator) throws {
        self.emulator = emulator
        folder = try Paths.temporaryFolder()
    }

    var state: URL { folder.appendingPathComponent("state.json") }
    /// The default profile's copy of the remote backup.
    var keptCopy: URL { folder.appendingPathComponent("config/cloudbackup/default/kept-copy.json") }
    /// The default profile's record of its last successful backup.
    var lastBackup: URL {
        folder.appendingPathComponent("config/cloudbackup/default/last-backup.json")
    }
    /// The default profile's unfinished check of an upload.
    var pendingVerification: URL {
        folder.appendingPathComponent("config/cloudbackup/default/pending-verification.json")
    }
    /// The default profile's login.
    var tokenPath: String {
        folder.appendingPathComponent("config/cloudbackup/default/token.json").path
    }

    var environment: [String: String] {
        var environment = emulator.environment(for: folder.appendingPathComponent("config"))
        environment["CLOUDBACKUP_RETRY_BASE_MS"] = "5"
        return environment
    }

    /// Logs in through the stand-in browser, as a person would once per machine.
    func login() throws {
        let result = try cloudbackup(["login"], environment: environment)
        try #require(result.status == 0, "login failed: \(result.stderr)")
    }

    func run(_ arguments: [String]) throws -> RunResult {
        try cloudbackup(arguments, environment: environment)
    }

    func backup(_ extra: [String] = []) throws -> RunResult {
        try run(["backup", "--file", state.path, "--now", Self.now] + extra)
    }

    /// Runs `cloudbackup` with stdin and stderr on a pseudo-terminal that is its controlling
    /// terminal (`/dev/tty`), as at a person's shell; with `answer`, types it once the `[y/N]`
    /// question has appeared, after running the shell command `meanwhile` (a person editing
    /// STATE while the question waits). stderr comes back as the terminal showed it;
    /// `stderrTo` sends the process's stderr to that file instead (`2>FILE` at the shell).
    func runOnATerminal(
        _ arguments: [String], answering answer: String? = nil, meanwhile: String? = nil,
        stderrTo: URL? = nil
    ) throws -> RunResult {
        let script = """
            import fcntl, os, pty, subprocess, sys, termios
            answer, meanwhile, stderr_path = sys.argv[1:4]
            master, slave = pty.openpty()
            stderr = open(stderr_path, "wb") if stderr_path else slave
            child = subprocess.Popen(
                sys.argv[4:], stdin=slave, stderr=stderr, stdout=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
            os.close(slave)
            seen = b""
            if answer:
                try:
                    while b"[y/N]" not in seen:
                        chunk = os.read(master, 1024)
                        if not chunk:
                            break
                        seen += chunk
                    if meanwhile:
                        subprocess.run(meanwhile, shell=True, check=True)
                    os.write(master, answer.encode() + b"\\n")
                except OSError:
                    pass
            out = child.stdout.read()
            child.wait()
            try:
                while True:
                    chunk = os.read(master, 65536)
                    if not chunk:
                        break
                    seen += chunk
            except OSError:
                pass
            sys.stdout.buffer.write(out)
            sys.stderr.buffer.write(seen)
            sys.exit(child.returncode)
            """
        var environment = ["PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": "/nonexistent"]
        environment.merge(self.environment) { _, new in new }
        return try TestSupport.run(
            URL(fileURLWithPath: Paths.python),
            ["-c", script, answer ?? "", meanwhile ?? "", stderrTo?.path ?? "", Paths.binary.path]
                + arguments,
            environment: environment)
    }

    /// The default profile's folder, where `cloudbackup` finds it through XDG_CONFIG_HOME.
    var profileFolder: URL { folder.appendingPathComponent("config/cloudbackup/default") }

    /// The default profile's config.json, private as a file holding a secret must be.
    func configure(_ json: String) throws {
        try LocalFile.writeAtomically(
            Array(json.utf8), to: profileFolder.appendingPathComponent("config.json").path,
            mode: 0o600)
    }

    /// An `age-keygen` identity file in the profile's folder, and its public key.
    func makeKey() throws -> (path: String, publicKey: String) {
        let key = profileFolder.appendingPathComponent("age-key.txt")
        return (key.path, try ReferenceTools.generateKey(at: key))
    }

    func write(_ text: String) throws {
        try Data(text.utf8).write(to: state)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }
}

/// A valid schema-3 document with one check task per challenge; `challenges` maps ids to
/// their `updatedAt`. `logs` day logs per challenge with `note` make big documents.
/// `settings` is the settings object's JSON text.
func backupJSON(
    device: String, challenges: [String: String], exportedAt: String = "2026-11-29T10:00:00.000Z",
    logs: Int = 0, note: String = "",
    settings: String =
        #"{"dayStartHour":0,"weekStartsOn":"monday","theme":"system","reminderTime":null}"#
) -> String {
    let items = challenges.sorted { $0.key < $1.key }.map { id, updatedAt in
        #""\#(id)":{"title":"Challenge \#(id)","startDate":"2026-01-01","durationDays":365,"tasks":{"t":{"title":"Task","rules":[{"from":"2026-01-01","type":"check","target":1}],"archivedFrom":null}},"pausedDays":[],"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"\#(updatedAt)"}"#
    }
    var dayLogs: [String] = []
    for id in challenges.keys.sorted() {
        for day in 0..<logs {
            // Calendar days from 2026-01-01, counted on the day number, never on a UTC clock.
            let key = DayKey(year: 2026, month: 1, day: 1)!.adding(days: day).description
            dayLogs.append(
                #""\#(id)/\#(key)":{"values":{"t":1},"note":"\#(note)","mood":null,"updatedAt":"2026-11-01T00:00:00.000Z"}"#
            )
        }
    }
    return
        #"{"format":"habit-backup","schemaVersion":3,"exportedAt":"\#(exportedAt)","deviceId":"\#(device)","#
        + #""settings":\#(settings),"#
        + #""challenges":{\#(items.joined(separator: ","))},"dayLogs":{\#(dayLogs.joined(separator: ","))},"tombstones":{}}"#
}

/// `count` challenges named `prefix` and two digits, all stamped 2026-11-01, for the
/// documents big enough to pass a size threshold (with a year of logs and long notes).
func challengeStamps(_ count: Int, prefix: String) -> [String: String] {
    Dictionary(
        uniqueKeysWithValues: (0..<count).map {
            (String(format: "\(prefix)%02d", $0), "2026-11-01T00:00:00.000Z")
        })
}

/// The app-folder files named like the backup, each read as a document.
func remoteBackups(_ emulator: Emulator, name: String = "habit-backup.json") throws -> [(
    file: EmulatorFile, document: BackupDocument
)] {
    try emulator.files().filter { $0.isInAppFolder && $0.name == name }.map { file in
        (file, try BackupReader.read(Array(file.content)).document)
    }
}

func challengeIDs(_ document: BackupDocument) -> [String] {
    document.challenges.map(\.id.rawValue).sorted()
}

extension Emulator {
    /// A backup file in the app folder under the name backups use, as another device (or
    /// an older run) left it.
    @discardableResult
    func seedBackup(_ json: String) throws -> EmulatorFile {
        try seedFile(name: "habit-backup.json", content: Data(json.utf8))
    }
}

extension EmulatorLogEntry {
    /// What a request was, in the words the backup tests compare.
    var kind: String {
        switch (method, path) {
        case ("GET", "/drive/v3/files"): return "list"
        case ("GET", let path) where path.hasPrefix("/drive/v2/files/"): return "etag"
        case ("GET", let path) where path.hasSuffix("/revisions"): return "revisions"
        case ("PATCH", let path) where path.contains("/revisions/"): return "pin"
        case ("PATCH", let path) where path.hasPrefix("/drive/v2/files/"): return "mark"
        case ("GET", _) where query["alt"] == "media": return "download"
        case ("PUT", let path) where path.hasPrefix("/upload/drive/v2/files/"):
            let answer = status == 412 ? " → 412" : ""
            return (ifMatch == true ? "conditional upload" : "upload") + answer
        default: return "\(method) \(path)"
        }
    }
}
