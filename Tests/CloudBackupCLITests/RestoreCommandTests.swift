import BackupKit
import Foundation
import SeededRandom
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `cloudbackup restore` end to end: a backup made by the phone restored on the laptop.
@Suite(.serialized) final class RestoreCommandTests {
    let emulator: Emulator
    let phone: BackupMachine
    let laptop: BackupMachine
    let laptopText = backupJSON(device: "laptop", challenges: ["B": "2026-11-02T00:00:00.000Z"])

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        laptop = try BackupMachine(emulator)
        try phone.login()
        try laptop.login()
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let backup = try phone.backup()
        try #require(backup.status == 0, "\(backup.stderr)")
        try laptop.write(laptopText)
    }

    private func restore(_ arguments: String...) throws -> RunResult {
        try laptop.run(
            ["restore", "--file", laptop.state.path, "--now", BackupMachine.now] + arguments)
    }

    private func stateIDs() throws -> [String] {
        challengeIDs(try BackupReader.read(Array(Data(contentsOf: laptop.state))).document)
    }

    @Test func aDryRunPrintsTheCountsAndWritesNothing() throws {
        let before = try FileManager.default.contentsOfDirectory(atPath: laptop.folder.path)
            .sorted()
        let result = try restore("--merge", "--dry-run")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("challenges: 1 added, 1 unchanged"))
        #expect(result.stdout.contains("dry run: nothing written"))
        #expect(try String(contentsOf: laptop.state, encoding: .utf8) == laptopText)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: laptop.folder.path).sorted()
                == before)
    }

    /// `restore` and `status --remote` talk to Google too: with `--verbose` each exchange is
    /// one trace line on stderr, as for `backup`, with no token in it; without, none.
    @Test func restoreAndRemoteStatusTraceTheirExchangesWhenVerbose() throws {
        let runs = [
            [
                "restore", "--file", laptop.state.path, "--merge", "--dry-run", "--now",
                BackupMachine.now,
            ],
            ["status", "--remote"],
        ]
        for arguments in runs {
            let quiet = try laptop.run(arguments)
            #expect(quiet.status == 0, "\(quiet.stderr)")
            #expect(!quiet.stderr.contains("cloudbackup: http: "))
            let traced = try laptop.run(arguments + ["--verbose"])
            #expect(traced.status == 0, "\(traced.stderr)")
            let trace = traced.stderr.split(separator: "\n").filter {
                $0.hasPrefix("cloudbackup: http: ")
            }
            #expect(
                trace.contains { $0.hasPrefix("cloudbackup: http: GET http://127.0.0.1:") },
                "\(arguments[0]): \(traced.stderr)")
            #expect(trace.allSatisfy { $0.contains(" -> ") })
            #expect(traced.stdout == quiet.stdout)
            let leaked = try emulator.leakedSecrets(in: [traced.stdout, traced.stderr]).map(
                emulatorSecretKind)
            #expect(leaked.isEmpty, "leaked: \(leaked)")
        }
    }

    /// Every file under the laptop's folder with its bytes (the profile's files included).
    private func snapshot() throws -> [String: Data] {
        let root = laptop.folder.path
        let paths = try #require(FileManager.default.subpaths(atPath: root))
        var files: [String: Data] = [:]
        for path in paths {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder)
            if !isFolder.boolValue {
                files[path] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
            }
        }
        return files
    }

    @Test func aDryRunThatRefreshesTheLoginStillWritesNoProfileFile() throws {
        try emulator.expireAccessTokens()
        let before = try snapshot()
        let result = try restore("--merge", "--dry-run")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try emulator.log().contains { $0.grantType == "refresh_token" })
        #expect(try snapshot() == before)
    }

    /// The laptop deleted A after the phone's last edit and keeps two of A's day logs under
    /// the tombstone (schema 4): restore and backup print them where they print day logs.
    @Test func restoreAndBackupPrintTheKeptDayLogs() throws {
        let logs = (1...2).map { day in
            #""A/2026-01-0\#(day)":{"values":{"t":1},"note":"","mood":null,"updatedAt":"2026-11-01T00:00:00.000Z"}"#
        }
        try laptop.write(
            #"{"format":"habit-backup","schemaVersion":4,"exportedAt":"2026-11-29T10:00:00.000Z","#
                + #""deviceId":"laptop","settings":{"dayStartHour":0,"weekStartsOn":"monday","#
                + #""theme":"system","reminderTime":null},"challenges":{},"#
                + #""dayLogs":{\#(logs.joined(separator: ","))},"#
                + #""tombstones":{"A":{"deletedAt":"2026-11-20T00:00:00.000Z"}}}"#)
        let restored = try restore("--merge", "--dry-run")
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("\n  challenges: 1 kept deleted\n"))
        #expect(restored.stdout.contains("\n  day logs: 2 kept under a tombstone\n"))
        let json = try restore("--merge", "--dry-run", "--json")
        #expect(json.stdout.contains(#""keptUnderTombstone":2,"#))

        let backup = try laptop.backup(["--json"])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stdout.contains(#""dayLogs":0,"keptDayLogs":2,"#))
        let verbose = try laptop.backup(["--verbose"])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stderr.contains("cloudbackup:   day logs: 2 kept under a tombstone\n"))
    }

    @Test func aDryRunWithJSONPrintsTheReportObject() throws {
        let result = try restore("--merge", "--dry-run", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix(#"{"challenges":{"added":1,"#))
    }

    @Test func mergeKeepsBothAndThePreviousFile() throws {
        let result = try restore("--merge", "--yes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try stateIDs() == ["A", "B"])
        let backup = laptop.state.appendingPathExtension("bak")
        #expect(try String(contentsOf: backup, encoding: .utf8) == laptopText)
    }

    @Test func replaceTakesTheBackupAndKeepsThePreviousFile() throws {
        let result = try restore("--replace", "--yes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try stateIDs() == ["A"])
        let document = try BackupReader.read(Array(Data(contentsOf: laptop.state))).document
        #expect(document.deviceId.rawValue == "laptop")
        let backup = laptop.state.appendingPathExtension("bak")
        #expect(try String(contentsOf: backup, encoding: .utf8) == laptopText)
    }

    /// A write that fails (the file size limit of `ulimit -f 0`, standing in for a full
    /// disk): with `--yes` nothing is asked, so nothing is printed on stdout either, only one
    /// line on stderr, and STATE stays as it was with no STATE.bak and no temporary file.
    @Test func aWriteThatFailsLeavesStateAndPrintsNoReport() throws {
        let before = try FileManager.default.contentsOfDirectory(atPath: laptop.folder.path)
            .sorted()
        var environment = ["PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": "/nonexistent"]
        environment.merge(laptop.environment) { _, new in new }
        // SIGXFSZ ignored (and still ignored after exec): the write fails with EFBIG instead
        // of the signal killing the process.
        let result = try run(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c", #"trap '' XFSZ; ulimit -f 0; exec "$0" "$@""#, Paths.binary.path,
                "restore", "--file", laptop.state.path, "--now", BackupMachine.now, "--merge",
                "--yes",
            ],
            environment: environment)
        let state = laptop.state.path
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(
            result.stderr
                == "cloudbackup: \(state).bak: cannot write: File too large; \(state) is unchanged\n"
        )
        #expect(try String(contentsOf: laptop.state, encoding: .utf8) == laptopText)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: laptop.folder.path).sorted()
                == before)
    }

    /// One previous copy: a second restore over another STATE replaces STATE.bak rather than
    /// adding STATE.bak.1 beside it.
    @Test func aSecondRestoreReplacesThePreviousCopy() throws {
        let first = try restore("--replace", "--yes")
        #expect(first.status == 0, "\(first.stderr)")
        let edited = backupJSON(device: "laptop", challenges: ["C": "2026-11-03T00:00:00.000Z"])
        try laptop.write(edited)

        let second = try restore("--merge", "--yes")
        #expect(second.status == 0, "\(second.stderr)")
        let state = laptop.state.path
        #expect(second.stdout.contains("previous file kept as \(state).bak)\n"))
        #expect(try String(contentsOfFile: state + ".bak", encoding: .utf8) == edited)
        #expect(!FileManager.default.fileExists(atPath: state + ".bak.1"))
        let mode =
            try FileManager.default.attributesOfItem(atPath: state + ".bak")[.posixPermissions]
            as? Int
        #expect(mode == 0o600)
    }

    /// A restore that would change nothing writes nothing: STATE keeps its bytes, and the
    /// copy of an earlier STATE is not replaced by a copy of this one.
    @Test func aRestoreThatChangesNothingWritesNothing() throws {
        let first = try restore("--replace", "--yes")
        #expect(first.status == 0, "\(first.stderr)")
        let afterFirst = try Data(contentsOf: laptop.state)

        for mode in ["--merge", "--replace"] {
            let again = try restore(mode, "--yes")
            #expect(again.status == 0, "\(again.stderr)")
            #expect(
                again.stdout.hasSuffix("\(laptop.state.path) already holds it: nothing written\n"))
            #expect(try Data(contentsOf: laptop.state) == afterFirst)
            #expect(
                try String(contentsOfFile: laptop.state.path + ".bak", encoding: .utf8)
                    == laptopText)
        }
        let dryRun = try restore("--merge", "--dry-run")
        #expect(
            dryRun.stdout.hasSuffix(
                "dry run: nothing written (\(laptop.state.path) already holds it)\n"))
    }

    /// `"previousCopies": 3` keeps three: the newest as STATE.bak, then .bak.1 and .bak.2; a
    /// fourth restore drops the oldest.
    @Test func theProfileMayKeepMorePreviousCopies() throws {
        let config = laptop.folder.appendingPathComponent("config/cloudbackup/default/config.json")
        try Data(#"{"previousCopies": 3}"#.utf8).write(to: config)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
        let states = ["C", "D", "E", "F"].map {
            backupJSON(device: "laptop", challenges: [$0: "2026-11-03T00:00:00.000Z"])
        }
        for text in states {
            try laptop.write(text)
            let result = try restore("--replace", "--yes")
            #expect(result.status == 0, "\(result.stderr)")
        }
        let state = laptop.state.path
        #expect(try String(contentsOfFile: state + ".bak", encoding: .utf8) == states[3])
        #expect(try String(contentsOfFile: state + ".bak.1", encoding: .utf8) == states[2])
        #expect(try String(contentsOfFile: state + ".bak.2", encoding: .utf8) == states[1])
        #expect(!FileManager.default.fileExists(atPath: state + ".bak.3"))

        try Data(#"{"previousCopies": 0}"#.utf8).write(to: config)
        let refused = try restore("--replace", "--yes")
        #expect(refused.status == 3)
        #expect(
            refused.stderr
                == "cloudbackup: \(config.path): setting 'previousCopies' must be a whole number from 1 to 100\n"
        )
    }

    @Test func aRestoreOntoAMissingStateCreatesIt() throws {
        try FileManager.default.removeItem(at: laptop.state)
        let result = try restore("--merge", "--yes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try stateIDs() == ["A"])
        #expect(!FileManager.default.fileExists(atPath: laptop.state.path + ".bak"))
    }

    /// A new machine has no settings of its own to keep: merge takes the backup's as replace
    /// does, apart from premium and app lock (FORMAT.md §5.1 rule 6), and the summary says so.
    @Test(arguments: ["--merge", "--replace"])
    func aRestoreOntoAMissingStateTakesTheBackupsSettings(mode: String) throws {
        try emulator.reset()
        try laptop.login()
        let settings =
            #"{"dayStartHour":2,"weekStartsOn":"sunday","theme":"dark","reminderTime":"20:30","#
            + #""premium":{"plan":"yearly","validatedAt":"2026-11-01T00:00:00.000Z","expiresAt":null},"#
            + #""appLock":{"enabled":true,"method":"biometric"}}"#
        let phoneText = backupJSON(
            device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"], settings: settings)
        try emulator.seedBackup(phoneText)
        try FileManager.default.removeItem(at: laptop.state)

        let result = try restore(mode, "--yes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("settings: the backup's"))
        let document = try BackupReader.read(Array(Data(contentsOf: laptop.state))).document
        #expect(
            document.settings
                == Settings(
                    dayStartHour: 2, weekStartsOn: .sunday, theme: .dark,
                    reminderTime: ReminderTime(hour: 20, minute: 30)))
        #expect(document.deviceId.rawValue != "phone")
    }

    @Test func anInvalidStateIsRefusedBeforeAnyDownload() throws {
        try laptop.write("{")
        let logBefore = try emulator.log().count
        let result = try restore("--merge", "--yes")
        #expect(result.status == 3)
        #expect(result.stderr.contains(laptop.state.path))
        #expect(try emulator.log().count == logBefore)
        #expect(try String(contentsOf: laptop.state, encoding: .utf8) == "{")
    }

    /// The files beside STATE that keep a broken one aside.
    private func keptBroken() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: laptop.folder.path)
            .filter { $0.hasPrefix("state.json.broken-") }.map {
                laptop.folder.appendingPathComponent($0)
            }
    }

    static let brokenStates = [
        "", "{\"format\": \"habit-backup\", \"challen",
        #"{"format":"habit-backup","schemaVersion":99,"exportedAt":"2026-11-01T00:00:00.000Z"}"#,
        #"{"format":"habit-backup","schemaVersion":3,"challenges":[]}"#,
    ]

    /// A broken STATE (empty, cut short, of a newer schema, invalid) is the most common reason
    /// to restore: --replace keeps it aside, named in one line, and writes the backup.
    @Test(arguments: brokenStates)
    func replaceKeepsABrokenStateAsideAndWritesTheBackup(broken: String) throws {
        try laptop.write(broken)
        let result = try restore("--replace", "--yes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try stateIDs() == ["A"])
        let aside = try keptBroken()
        #expect(aside.count == 1)
        #expect(try aside.first.map { try Data(contentsOf: $0) } == Data(broken.utf8))
        let name = try #require(aside.first?.lastPathComponent)
        #expect(
            result.stderr.contains("keeping it as \(laptop.folder.path)/\(name)"),
            "\(result.stderr)")
        #expect(result.stdout.contains("(replacing a broken file)"))
        #expect(result.stdout.contains("broken file kept as"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: laptop.state.path + ".bak"))
    }

    /// --merge has nothing to merge into: one line that names --replace, nothing written or
    /// downloaded; a dry run of --replace says what it would keep aside and writes nothing.
    @Test func mergeRefusesABrokenStateAndADryRunOfReplaceWritesNothing() throws {
        try laptop.write("{")
        let logBefore = try emulator.log().count
        let refused = try restore("--merge", "--yes")
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("restore with --replace instead"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(try emulator.log().count == logBefore)
        let dry = try restore("--replace", "--dry-run")
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stderr.contains("a restore would keep it as"), "\(dry.stderr)")
        #expect(dry.stdout.contains("dry run: nothing written"))
        #expect(try String(contentsOf: laptop.state, encoding: .utf8) == "{")
        #expect(try keptBroken().isEmpty)
    }

    /// The account's first device: not an invalid file (3) but an outcome of its own, one line.
    @Test func noBackupOnDriveYetIsExit10() throws {
        try emulator.reset()
        try laptop.login()
        let result = try restore("--merge", "--yes")
        #expect(result.status == 10)
        #expect(
            result.stderr
                == "cloudbackup: there is no backup on Drive yet (no 'habit-backup.json' in this account's app folder); nothing to restore; run 'cloudbackup backup' on the device that has the data\n"
        )
        #expect(try String(contentsOf: laptop.state, encoding: .utf8) == laptopText)
    }

    @Test func aBackupOlderThanTheWindowHoldsBackWhatIsMissingHereUnlessAllowed() throws {
        try emulator.reset()
        try laptop.login()
        let old = backupJSON(
            device: "old-phone", challenges: ["OLD": "2026-06-01T00:00:00.000Z"],
            exportedAt: "2026-07-01T00:00:00.000Z")
        try emulator.seedBackup(old)

        let guarded = try restore("--merge", "--yes")
        #expect(guarded.status == 0, "\(guarded.stderr)")
        #expect(guarded.stdout.contains("predates the 90-day tombstone window"))
        #expect(guarded.stdout.contains("pass --allow-stale"))
        #expect(try stateIDs() == ["B"])

        let json = try restore("--merge", "--dry-run", "--json")
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stderr.contains("held back 1 challenge(s)"))
        #expect(json.stderr.contains("--allow-stale"))

        let allowed = try restore("--merge", "--yes", "--allow-stale")
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try stateIDs() == ["B", "OLD"])
    }

    private func restoreOnATerminal(answering answer: String) throws -> RunResult {
        try laptop.runOnATerminal(
            ["restore", "--file", laptop.state.path, "--merge", "--now", BackupMachine.now],
            answering: answer)
    }

    @Test func onATerminalItAsksAndANoWritesNothing() throws {
        let result = try restoreOnATerminal(answering: "n")
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                "write \(laptop.state.path) (the current file kept as \(laptop.state.path).bak)? [y/N]"
            ))
        #expect(result.stderr.contains("restore cancelled"))
        #expect(try String(contentsOf: laptop.state, encoding: .utf8) == laptopText)
        #expect(!FileManager.default.fileExists(atPath: laptop.state.path + ".bak"))
    }

    /// STATE edited while the question waits (or created, when it was missing): the edit
    /// stays, nothing is written, and the exit status is the one for "run again" (6).
    @Test(arguments: [true, false])
    func aStateChangedWhileRestoringIsNotOverwritten(stateExisted: Bool) throws {
        if !stateExisted { try FileManager.default.removeItem(at: laptop.state) }
        let edited = laptop.folder.appendingPathComponent("edited.json")
        let editedText = backupJSON(
            device: "laptop",
            challenges: ["B": "2026-11-02T00:00:00.000Z", "C": "2026-11-29T00:00:00.000Z"])
        try Data(editedText.utf8).write(to: edited)

        let result = try laptop.runOnATerminal(
            ["restore", "--file", laptop.state.path, "--merge", "--now", BackupMachine.now],
            answering: "y", meanwhile: "cp '\(edited.path)' '\(laptop.state.path)'")
        #expect(result.status == 6)
        #expect(
            result.stderr.contains(
                "cloudbackup: \(laptop.state.path) changed while restoring; nothing was written; "
                    + "run restore again"))
        #expect(try String(contentsOf: laptop.state, encoding: .utf8) == editedText)
        #expect(!FileManager.default.fileExists(atPath: laptop.state.path + ".bak"))
    }

    /// Only stderr redirected: stdin is still a person's terminal, so it still asks, on the
    /// terminal.
    @Test func withStderrRedirectedItStillAsksOnTheTerminal() throws {
        let errors = laptop.folder.appendingPathComponent("errors.txt")
        let result = try laptop.runOnATerminal(
            ["restore", "--file", laptop.state.path, "--merge", "--now", BackupMachine.now],
            answering: "n", stderrTo: errors)
        #expect(result.status == 1)
        #expect(result.stderr.contains("[y/N]"))
        #expect(try String(contentsOf: errors, encoding: .utf8).contains("restore cancelled"))
        #expect(try String(contentsOf: laptop.state, encoding: .utf8) == laptopText)
    }

    @Test func onATerminalAYesWrites() throws {
        let result = try restoreOnATerminal(answering: "y")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try stateIDs() == ["A", "B"])
    }

    /// SIGKILL at random moments of a restore: STATE is always the old or the new file.
    @Test func aRestoreKilledAtAnyPointLeavesTheOldOrTheNewState() throws {
        let challenges = challengeStamps(12, prefix: "K")
        try phone.write(
            backupJSON(
                device: "phone", challenges: challenges, logs: 365,
                note: String(repeating: "x", count: 600)))
        try #require(try phone.backup().status == 0)
        let arguments = [
            "restore", "--file", laptop.state.path, "--replace", "--yes", "--now",
            BackupMachine.now,
        ]

        let started = Date()
        try #require(try laptop.run(arguments).status == 0)
        let duration = Date().timeIntervalSince(started)
        let new = try Data(contentsOf: laptop.state)
        let old = Data(laptopText.utf8)
        try #require(new != old)

        var random = SeededRandom(seed: 5)
        for _ in 0..<8 {
            try old.write(to: laptop.state)
            let process = Process()
            process.executableURL = Paths.binary
            process.arguments = arguments
            process.environment = ["PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": "/nonexistent"]
                .merging(laptop.environment) { _, new in new }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Not synchronisation: the kill lands at a random moment of the run on purpose.
            usleep(UInt32(Double.random(in: 0..<duration, using: &random) * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let state = try Data(contentsOf: laptop.state)
            #expect(state == old || state == new, "STATE is neither the old nor the new file")
        }
    }
}
