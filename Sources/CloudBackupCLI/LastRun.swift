import BackupKit
import LocalFiles

/// The profile's record of its last `backup` or `restore` that tried (`last-run.json`), ok
/// or not, for `status` to show beside the last success and to exit 8 on, so a monitoring
/// check hears of a night that failed.
struct LastRun: ProfileRecord {
    var command: String
    var at: String
    var exitCode: Int32
    /// The failure's first line, as printed (tokens already redacted); nil when it went well.
    var reason: String?

    var failed: Bool { exitCode != ExitCode.success.rawValue }

    /// Records how `command` ended in `profileName`'s folder, when the profile loads and has
    /// a folder: a broken config.json or a profile never set up has no status to show. A usage
    /// error (exit 2) never tried, and a restore answered no to did not fail, so neither is
    /// recorded.
    static func record(
        _ command: String, failure: CLIError?, profileName: String, in context: Context
    ) {
        if let failure, failure.exitCode == .usage || failure.failure == .cancelled { return }
        guard let profile = try? Profile.load(name: profileName, environment: context.environment),
            LocalFile.exists(profile.folder)
        else { return }
        let run = LastRun(
            command: command, at: ClockOptions.systemNow().description,
            exitCode: (failure?.exitCode ?? .success).rawValue, reason: failure?.lines.first)
        do {
            try run.save(to: profile.lastRunPath)
        } catch {
            // A failed run is said already, and a full disk that failed it fails this too:
            // only a success that status would not show is worth another line.
            guard failure == nil else { return }
            context.printWarning(
                error.lines.joined(separator: "; ")
                    + "; 'cloudbackup status' will show the run before this one")
        }
    }
}
