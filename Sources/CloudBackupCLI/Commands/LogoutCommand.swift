import LocalFiles
import OAuth

/// `cloudbackup logout`: revokes the login at Google and deletes the token file; the file
/// goes even when the server cannot be reached (after the usual retries) or the file is
/// damaged, with one warning line. The kept copy of the remote backup goes too: it is the
/// account's data, and a logged-out profile should not keep it.
struct LogoutCommand: Command {
    static let name = "logout"
    static let summary = "revoke the saved login at Google and delete it"
    static var options: [OptionGroup] {
        OptionSpec.profile.described("which profile to log out (default: default)")
        OptionGroup.verbosity(
            quiet: "no line on success, only warnings",
            verbose: "print each HTTP exchange (never a token)")
    }
    static let about = """
        Revokes the profile's login at Google's revocation endpoint and deletes its token
        file and its kept copy of the backup. Network errors and 429/5xx answers are tried
        again with backoff. When the server still cannot be reached, or the token file is
        damaged, the files are deleted anyway and a warning says how to remove the access
        by hand. Ends with one line on stdout saying what was done.
        """
    static let exits =
        Exit.always + [
            Exit(.invalidFile, "the profile's config.json is broken or readable by others"),
            Exit(.locked, "another run of the profile is using the login"),
        ]

    var profileName: String
    var verbose: Bool
    var quiet: Bool

    init(arguments: inout Arguments) throws(CLIError) {
        profileName = try arguments.option(.profile) ?? "default"
        (quiet, verbose) = (arguments.flag(.quiet), arguments.flag(.verbose))
        _ = try arguments.positionals(exactly: [])
    }

    func run(in context: Context) throws {
        let profile = try Profile.load(name: profileName, environment: context.environment)
        // A backup or restore running now reads the token and the kept copy: not under it.
        let lock = try profile.lock(in: context)
        defer { withExtendedLifetime(lock) {} }
        let outcome = try Logout.run(
            store: profile.tokenStore, client: try profile.oauthClient(requireCredentials: false),
            transport: try context.retryingTransport(verbose: verbose))
        // All three describe the backup of the account logged out of, not of the next one.
        try LocalFile.remove(profile.keptCopyPath)
        try LocalFile.remove(profile.syncedSettingsPath)
        try LocalFile.remove(profile.steadyStatePath)
        if LocalFile.exists(profile.pendingVerificationPath) {
            context.printWarning(
                "the last backup's check against Drive's revision history was not finished; "
                    + "it is dropped with the login (a backup before logging out finishes it)")
        }
        try LocalFile.remove(profile.pendingVerificationPath)
        switch outcome {
        case .wasNotLoggedIn:
            if !quiet {
                context.print("not logged in: profile '\(profileName)' has no saved login")
            }
        case .revoked:
            if !quiet {
                context.print("logged out: access revoked at Google and the saved login deleted")
            }
        case .deletedWithoutRevoking(let reason):
            context.printError(
                "cloudbackup: warning: revoke failed: \(reason); "
                    + "deleted locally only: see myaccount.google.com/permissions"
            )
        case .deletedDamaged(let problem):
            context.printError(
                "cloudbackup: warning: \(profile.tokenPath) was damaged (\(problem)), so nothing could be revoked at the server; the file was deleted, but to be sure remove the app's access at https://myaccount.google.com/permissions"
            )
        }
    }
}
