import Foundation
import LocalFiles
import TestSupport
import Testing

/// The crontab line and the systemd units in Examples/cron, as a user copies them: the
/// command line is one cloudbackup takes, cron's mail stays quiet for exit 6 and for a quiet
/// success but not for anything else, and the service's sandbox is valid and tight.
@Suite struct ScheduleExampleTests {
    /// The crontab's job: its one line that is not a comment, without the five time fields.
    static func cronJob() throws -> String {
        let text = try String(contentsOf: Paths.file("Examples/cron/crontab"), encoding: .utf8)
        let line = try #require(
            text.split(separator: "\n").first { !$0.hasPrefix("#") && !$0.isEmpty })
        return line.split(separator: " ", maxSplits: 5).last.map(String.init) ?? ""
    }

    /// Runs the crontab's job with /bin/sh, as cron does, with a stand-in cloudbackup that
    /// prints `said` on stderr and exits `code`; returns what cron would mail, and the
    /// arguments the stand-in got.
    func mail(code: Int, said: String) throws -> (mail: String, arguments: String) {
        let home = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: home) }
        let bin = home.appendingPathComponent(".local/bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let arguments = home.appendingPathComponent("arguments").path
        let stub = """
            #!/bin/sh
            printf '%s\\n' "$*" > '\(arguments)'
            [ -n "$SAID" ] && printf '%s\\n' "$SAID" >&2
            exit \(code)
            """
        let path = bin.appendingPathComponent("cloudbackup").path
        try LocalFile.writeAtomically(Array(stub.utf8), to: path, mode: 0o755)
        let result = try run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", try Self.cronJob()],
            environment: ["HOME": home.path, "PATH": "/usr/bin:/bin", "SAID": said])
        let got = String(decoding: try LocalFile.read(arguments), as: UTF8.self)
        return (result.stdout + result.stderr, got)
    }

    @Test func cronMailsNothingForAQuietSuccessOrALockStillHeld() throws {
        #expect(try mail(code: 0, said: "").mail.isEmpty)
        let locked = try mail(code: 6, said: "cloudbackup: another cloudbackup run holds the lock")
        #expect(locked.mail.isEmpty)
        #expect(locked.arguments.contains("backup --file "))
        #expect(locked.arguments.contains(" --quiet --wait-lock 20m"))
    }

    @Test(arguments: [
        (0, "cloudbackup: warning: 2 item(s) stamped ahead; check that device's clock"),
        (3, "cloudbackup: /home/me/state.json:1:1: unexpected end of file"),
        (
            5,
            "cloudbackup: list failed: cannot connect to www.googleapis.com (connection refused); check the network and run again"
        ),
    ])
    func cronMailsEverythingElseWordForWord(code: Int, said: String) throws {
        #expect(try mail(code: code, said: said).mail == said + "\n")
    }

    /// What the job and the service run is a command line cloudbackup accepts: a missing
    /// STATE is exit 3, not the usage error (2) an unknown option would be.
    @Test func theScheduledCommandLinesAreOnesCloudbackupTakes() throws {
        let home = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: home) }
        let service = try String(
            contentsOf: Paths.file("Examples/cron/cloudbackup-backup.service"), encoding: .utf8)
        let exec = try #require(
            service.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let serviceArguments = exec.split(separator: " ").dropFirst().map(String.init)
        let cronArguments = try #require(
            try Self.cronJob().components(separatedBy: "cloudbackup\" ").last?
                .components(separatedBy: " 2>&1").first
        ).split(separator: " ").map(String.init)
        for arguments in [serviceArguments, cronArguments] {
            #expect(arguments.first == "backup")
            let missing = arguments.map {
                $0.hasSuffix("state.json") || $0.hasSuffix("state.json\"")
                    ? home.appendingPathComponent("state.json").path : $0
            }
            let result = try cloudbackup(missing, environment: ["XDG_CONFIG_HOME": home.path])
            #expect(result.status == 3, "\(arguments): \(result.stderr)")
        }
    }

    /// `systemd-analyze` checks the units as systemd would load them (no warning at all), and
    /// rates the service's sandbox: 4.0 or lower, where 9.6 was the score without one.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
    func theServiceLoadsCleanlyInATightSandbox() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["cloudbackup-backup.service", "cloudbackup-backup.timer"] {
            var text = try String(
                contentsOf: Paths.file("Examples/cron/\(name)"), encoding: .utf8)
            // verify also checks that ExecStart's program exists: the one just built.
            text = text.replacingOccurrences(
                of: "%h/.local/bin/cloudbackup", with: Paths.binary.path)
            try LocalFile.writeAtomically(Array(text.utf8), to: folder.path + "/" + name)
        }
        let analyze = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        let units = ["service", "timer"].map { folder.path + "/cloudbackup-backup." + $0 }
        let verify = try run(analyze, ["verify"] + units)
        #expect(verify.status == 0)
        #expect(verify.stdout + verify.stderr == "")
        let security = try run(analyze, ["security", "--offline=yes", units[0]])
        let overall = try #require(
            (security.stdout + security.stderr).split(separator: "\n")
                .first { $0.contains("Overall exposure level") })
        let score = try #require(
            overall.split(separator: " ").compactMap { Double($0) }.first, "\(overall)")
        #expect(score <= 4.0, "\(overall)")
    }
}
