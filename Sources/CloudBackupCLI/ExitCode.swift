/// The exit codes of FORMAT.md §8.1, which cron jobs and monitoring scripts rely on.
public enum ExitCode: Int32, Sendable {
    case success = 0
    case failure = 1
    case usage = 2
    case invalidFile = 3
    case notLoggedIn = 4
    case network = 5
    case locked = 6
    case refused = 7
    /// `status`: the profile's last backup or restore failed.
    case lastRunFailed = 8
    /// `status --max-age`: the last successful backup is older than that, or there is none.
    case tooOld = 9
    /// `restore`, `history`, `rollback`: Drive holds no backup yet. Nothing is wrong with any
    /// file; a script setting up a new device tells "first device" from a failure by it.
    case noBackupYet = 10
}
