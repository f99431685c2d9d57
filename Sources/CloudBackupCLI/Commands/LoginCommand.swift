import OAuth

/// `cloudbackup login`: OAuth 2.0 authorization code with PKCE through a loopback redirect
/// (SPEC §6). Silent on success apart from the URL, which is always printed so a login
/// works over ssh too.
struct LoginCommand: Command {
    static let name = "login"
    static let summary = "log in to Google Drive through the browser and save the login"
    static let usage =
        "usage: cloudbackup login [--profile NAME] [--no-browser] [--port N] [--timeout S] [--verbose]"
    static let help = """
        \(usage)

        Opens Google's consent page in a browser ($BROWSER, else xdg-open when there is a
        display) and always prints its URL too. After you allow access, the browser returns
        to a listener on 127.0.0.1 and the login is saved, readable only by you, in
        $XDG_CONFIG_HOME/cloudbackup/NAME/token.json. Later commands refresh it by themselves.

        options:
          --profile NAME  which profile to log in (default: default)
          --no-browser    only print the URL, for example to open it on another machine
                          (its answer must still reach this machine's 127.0.0.1)
          --port N        listen on this port instead of any free one
          --timeout S     seconds to wait for the browser (default: 300)
          --verbose       print each HTTP exchange (never a token or code)

        The client id and secret come from CLOUDBACKUP_CLIENT_ID and
        CLOUDBACKUP_CLIENT_SECRET, or clientId and clientSecret in the profile's config.json.
        """

    var profileName: String
    var openBrowser: Bool
    var port: UInt16
    var timeoutSeconds: Int
    var verbose: Bool

    init(arguments: inout Arguments) throws(CLIError) {
        profileName = try arguments.option("--profile") ?? "default"
        openBrowser = !arguments.flag("--no-browser")
        verbose = arguments.flag("--verbose")
        port =
            try arguments.option("--port", expecting: "a port number 1…65535") {
                UInt16($0).flatMap { $0 == 0 ? nil : $0 }
            } ?? 0
        timeoutSeconds =
            try arguments.option("--timeout", expecting: "a number of seconds 1…86400") {
                Int($0).flatMap { (1...86_400).contains($0) ? $0 : nil }
            } ?? 300
        _ = try arguments.positionals(exactly: [])
    }

    func run(in context: Context) throws {
        let profile = try Profile.load(name: profileName, environment: context.environment)
        let client = try profile.oauthClient()
        // Before the browser: a folder that cannot hold the login fails the run now, not
        // after the user has logged in.
        try profile.makeFolder(in: context)
        let login = Login(
            client: client,
            transport: context.retryingTransport(verbose: verbose),
            port: port, timeoutSeconds: timeoutSeconds)
        let grant = try login.run { url, port in
            context.printError(
                "Log in through this URL (waiting up to \(timeoutSeconds) s for the answer on 127.0.0.1:\(port)):"
            )
            context.printError(url)
            guard openBrowser,
                let command = Browser.command(for: url, environment: context.environment)
            else { return }
            if let failure = Browser.start(
                command, environment: context.environment, showErrors: verbose)
            {
                context.printError(
                    "cloudbackup: warning: could not start \(command[0]) (\(failure)); open the URL yourself"
                )
            }
        }
        guard let saved = StoredLogin(grant: grant) else {
            throw OAuthError.malformedAnswer(
                endpoint: profile.tokenURL, problem: "no refresh_token")
        }
        do {
            try profile.tokenStore.save(saved)
        } catch {
            // A login nobody holds must not stay live in the user's account: revoke it (once,
            // best effort), then say why it could not be kept.
            _ = try? context.transport(verbose: verbose).send(
                client.revocationRequest(token: saved.refreshToken))
            throw error
        }
        if verbose {
            context.printError("cloudbackup: logged in; the login is saved in \(profile.tokenPath)")
        }
    }
}
