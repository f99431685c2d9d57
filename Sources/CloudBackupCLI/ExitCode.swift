/// The exit codes of FORMAT.md §8.1, which cron jobs and monitoring scripts rely on.
public enum ExitCode: Int32, Sendable, CaseIterable {
    case success = 0
    case failure = 1
    case usage = 2
    case invalidFile = 3
    case notLoggedIn = 4
    case network = 5
    case locked = 6
    case refused = 7
    /// `status`: the profile's last backup, restore or rollback failed.
    case lastRunFailed = 8
    /// `status --max-age`: the last successful backup is older than that, or there is none.
    case tooOld = 9
    /// `restore`, `history`, `rollback`: Drive holds no backup yet. Nothing is wrong with any
    /// file; a script setting up a new device tells "first device" from a failure by it.
    case noBackupYet = 10
}

extension ExitCode {
    /// What the code means, in one line: the words of `cloudbackup --help`, the man page and
    /// every command's `exit status:` list, typed here only.
    var meaning: String {
        switch self {
        case .success: "done"
        case .failure: "failure (a local write, a question answered no, or a bug)"
        case .usage: "usage"
        case .invalidFile: "invalid or unreadable file"
        case .notLoggedIn: "not logged in"
        case .network: "network or server failure"
        case .locked: "another run holds the lock"
        case .refused: "refused"
        case .lastRunFailed: "the last backup, restore or rollback failed"
        case .tooOld: "no recent backup"
        case .noBackupYet: "no backup on Drive yet"
        }
    }
}

/// One exit code a command can end with, and, where the code's meaning needs it, when this
/// command gives it.
struct Exit: Sendable {
    let code: ExitCode
    let when: String?

    init(_ code: ExitCode, _ when: String? = nil) {
        self.code = code
        self.when = when
    }

    /// The code's meaning and when: `invalid or unreadable file: STATE is invalid`.
    var description: String { code.meaning + (when.map { ": " + $0 } ?? "") }

    /// The code, its meaning and when: `3 invalid or unreadable file: STATE is invalid`.
    var text: String { "\(code.rawValue) \(description)" }

    /// Every command may end with these: done, a bug, or a command line it cannot take.
    static let always = [Exit(.success), Exit(.failure), Exit(.usage)]
}
