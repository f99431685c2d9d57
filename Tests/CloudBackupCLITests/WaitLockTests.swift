import Foundation
import LocalFiles
import TestSupport
import Testing

@testable import CloudBackupCLI

/// `--wait-lock DURATION`: a run that finds another run of its profile waits for it, then
/// goes on; exit 6 only once the wait is over. Cron hears nothing of a wait that ended well.
@Suite(.serialized) final class WaitLockTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
    }

    /// The other run: the profile's lock, held by this test until `release()`.
    private final class OtherRun: @unchecked Sendable {
        private let mutex = NSLock()
        private var lock: FileLock?
        init(_ path: String) throws { lock = try FileLock(path: path) }
        var holds: Bool { mutex.withLock { lock != nil } }
        func release() { mutex.withLock { lock = nil } }
    }

    private var lockPath: String {
        phone.folder.appendingPathComponent("config/cloudbackup/default/lock").path
    }

    @Test func aBackupWaitsForTheOtherRunAndThenBacksUp() throws {
        let other = try OtherRun(lockPath)
        #expect(other.holds)
        let result = try cloudbackup(
            [
                "backup", "--file", phone.state.path, "--now", BackupMachine.now, "--verbose",
                "--wait-lock", "2m",
            ],
            environment: phone.environment,
            whenStderrShows: ("waiting up to 120 s for it to finish", { other.release() }))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!other.holds)
        #expect(try remoteBackups(emulator).first?.document.challenges.map(\.id.rawValue) == ["A"])
    }

    @Test func aRestoreWaitsToo() throws {
        #expect(try phone.backup().status == 0)
        let other = try OtherRun(lockPath)
        let result = try cloudbackup(
            [
                "restore", "--file", phone.state.path, "--merge", "--yes", "--verbose",
                "--wait-lock", "90s",
            ],
            environment: phone.environment,
            whenStderrShows: ("waiting up to 90 s", { other.release() }))
        #expect(result.status == 0, "\(result.stderr)")
        // It ran to the end once the lock came free: STATE held the backup already.
        #expect(result.stdout.hasSuffix("\(phone.state.path) already holds it: nothing written\n"))
    }

    /// One line, the one cron mails: that the wait ran out and what to do.
    @Test func aLockStillHeldWhenTheWaitEndsIsExit6() throws {
        let other = try OtherRun(lockPath)
        let result = try phone.backup(["--wait-lock", "1s"])
        #expect(result.status == 6)
        #expect(
            result.stderr
                == "cloudbackup: another cloudbackup run holds the lock of profile 'default' (\(lockPath)) after waiting 1 s; try again when it has finished, or wait longer with --wait-lock\n"
        )
        #expect(try emulator.files().isEmpty)
        #expect(other.holds)
    }

    @Test func withoutAWaitASecondRunSaysHowToWait() throws {
        let other = try OtherRun(lockPath)
        let result = try phone.backup()
        #expect(result.status == 6)
        #expect(result.stderr.hasSuffix("or wait for it with --wait-lock DURATION\n"))
        _ = other
    }

    @Test(arguments: [
        ("90", 90), ("90s", 90), ("10m", 600), ("1h30m", 5_400), ("1h", 3_600), ("0", 0),
        ("2h3m4s", 7_384), ("24h", 86_400), ("1d", 86_400), ("0d23h59m60s", 86_400),
    ])
    func durationsReadAsGoWritesThem(text: String, seconds: Int) {
        #expect(DurationText.seconds(in: text, atMost: 86_400) == seconds)
    }

    @Test(arguments: [
        "", "m", "10x", "5m1h", "1h1d", "1h1h", "-5", "1.5m", "25h", "2d", "90000", "10 m",
        "99999999999999999d",
    ])
    func otherDurationsAreRefused(text: String) {
        #expect(DurationText.seconds(in: text, atMost: 86_400) == nil)
    }

    @Test func aBadDurationIsAUsageError() throws {
        let result = try phone.backup(["--wait-lock", "soon"])
        #expect(result.status == 2)
        #expect(
            result.stderr.hasPrefix(
                "cloudbackup: --wait-lock expects a duration such as 90s, 10m or 1h30m (at most 24h), not 'soon'"
            ))
    }
}
