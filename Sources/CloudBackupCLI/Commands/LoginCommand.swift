import Networking
import OAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `cloudbackup login`: OAuth 2.0 authorization code with PKCE through a loopback redirect
/// (FORMAT.md §8.2), which may also arrive pasted into the terminal; or the device flow (RFC 8628).
/// Ends with one line on stdout saying where the login is saved (none under `--quiet`).
struct LoginCommand: Command {
    static let name = "login"
    static let summary = "log in to Google Drive through the browser and save the login"
    static var options: [OptionGroup] {
        OptionSpec.profile.described("which profile to log in (default: default)")
        OptionSpec.noBrowser
        OptionGroup.oneOf(
            OptionSpec.paste,
            OptionSpec.device.excluding(.noBrowser, .port, message: Self.deviceConflict),
            conflict: Self.deviceConflict)
        OptionSpec.port
        OptionSpec.timeout
        OptionGroup.verbosity(
            quiet: "no line on success (the URL or code is still shown)",
            verbose: "print each HTTP exchange (never a token or code)")
    }
    static let about = """
        Opens Google's consent page in a browser ($BROWSER, else xdg-open when there is a
        display) and always prints its URL too. After you allow access, the browser returns
        to a listener on 127.0.0.1 and the login is saved, readable only by you, in
        $XDG_CONFIG_HOME/cloudbackup/NAME/token.json. Later commands refresh it by themselves.

        On a machine without a browser (no DISPLAY, WAYLAND_DISPLAY or BROWSER, and a
        terminal), login waits for a pasted address as with --paste, and says so.
        """
    static let note: String? = """
        The client id and secret come from CLOUDBACKUP_CLIENT_ID and
        CLOUDBACKUP_CLIENT_SECRET, or clientId and clientSecret in the profile's config.json;
        for --device, from CLOUDBACKUP_DEVICE_CLIENT_ID and CLOUDBACKUP_DEVICE_CLIENT_SECRET,
        or deviceClientId and deviceClientSecret (a "TVs and Limited Input devices" client).

        The browser's address with Google's code is replaced at once by
        http://127.0.0.1:PORT/done, so the code stays out of its history, and each outcome has
        its own page (Logged in, Access not granted, Drive access not ticked, Not this login,
        Login failed) saying what to do next. A pasted address is not echoed; the whole
        address or its query will do, and one from another login or a Cancel is refused with
        a line saying why, three tries in all. Network errors, 429 and 5xx answers are tried
        again (up to 8 times within 5 minutes; at a terminal, a network that cannot be reached
        is given up on after 10 s, or CLOUDBACKUP_OFFLINE_WAIT seconds). The profile folder is
        made readable only by you (0700), and a wider one is tightened with a warning.
        """
    static let exits =
        Exit.always + [
            Exit(
                .invalidFile,
                "the profile's config.json or token file is broken or readable by others"),
            Exit(.notLoggedIn, "Google refused, or the consent was denied"),
            Exit(.network),
        ]

    /// For tests only: how many milliseconds one second of the device flow's poll interval
    /// lasts (default 1000), so a test need not wait Google's 5 s between polls.
    static let pollUnitVariable = "CLOUDBACKUP_DEVICE_POLL_UNIT_MS"

    /// For tests only: how many milliseconds the loopback listener keeps answering the
    /// browser after the login ends (default `Login.defaultLinger`), so a test's login need
    /// not wait for a person's reload.
    static let lingerVariable = "CLOUDBACKUP_LOGIN_LINGER_MS"

    enum Way: Equatable {
        case browser
        /// `announced`: chosen because this machine has no browser, which is said in a line.
        case paste(announced: Bool)
        case device
    }

    static let deviceConflict =
        "--device takes no --paste, --no-browser or --port (it opens no browser and listens on no port)"

    var profileName: String
    var openBrowser: Bool
    var paste: Bool
    var device: Bool
    var port: UInt16
    var timeoutSeconds: Int
    var verbose: Bool
    var quiet: Bool

    init(arguments: inout Arguments) throws(CLIError) {
        profileName = try arguments.option(.profile) ?? "default"
        openBrowser = !arguments.flag(.noBrowser)
        paste = arguments.flag(.paste)
        device = arguments.flag(.device)
        (quiet, verbose) = (arguments.flag(.quiet), arguments.flag(.verbose))
        port =
            try arguments.option(.port, expecting: "a port number 1…65535") {
                UInt16($0).flatMap { $0 == 0 ? nil : $0 }
            } ?? 0
        timeoutSeconds =
            try arguments.option(.timeout, expecting: "a number of seconds 1…86400") {
                Int($0).flatMap { (1...86_400).contains($0) ? $0 : nil }
            } ?? 300
        _ = try arguments.positionals(exactly: [])
    }

    /// Which way to log in. Without a way asked for, a machine that could open no browser
    /// and has a user at the terminal gets the paste (an ssh session without forwarding).
    static func way(
        paste: Bool, device: Bool, environment: [String: String], stdinIsTerminal: Bool
    ) -> Way {
        if device { return .device }
        if paste { return .paste(announced: false) }
        let noBrowser = Browser.command(for: "", environment: environment) == nil
        return noBrowser && stdinIsTerminal ? .paste(announced: true) : .browser
    }

    func run(in context: Context) throws {
        let profile = try Profile.load(name: profileName, environment: context.environment)
        let way = Self.way(
            paste: paste, device: device, environment: context.environment,
            stdinIsTerminal: context.stdinIsTerminal)
        let client: OAuthClient
        if way == .device {
            // Checked above: with requireCredentials the client is never nil.
            guard let deviceClient = try profile.deviceOAuthClient() else { return }
            client = deviceClient
        } else {
            client = try profile.oauthClient()
        }
        // Before the browser: a folder that cannot hold the login fails the run now, not
        // after the user has logged in.
        try profile.makeFolder(in: context)
        let transport = try context.retryingTransport(verbose: verbose)
        let grant: TokenGrant
        switch way {
        case .device:
            grant = try deviceLogin(client: client, transport: transport, in: context)
        case .paste(let announced):
            if announced {
                context.printError(
                    "cloudbackup: no browser on this machine (no DISPLAY, WAYLAND_DISPLAY or BROWSER), so the address the login ends on can be pasted here (see `cloudbackup login --help`)"
                )
            }
            grant = try pasteLogin(client: client, transport: transport, in: context)
        case .browser:
            grant = try Login(
                client: client, transport: transport, port: port, timeoutSeconds: timeoutSeconds,
                linger: linger(in: context)
            ).run { url, port in
                printURL(url, port: port, in: context)
                startBrowser(url, in: context)
            }
        }
        guard let saved = StoredLogin(grant: grant, clientID: client.clientID) else {
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
        if !quiet { context.print("logged in; the login is saved in \(profile.tokenPath)") }
    }

    private func printURL(_ url: String, port: UInt16, in context: Context) {
        context.printError(
            "Log in through this URL (waiting up to \(timeoutSeconds) s for the answer on 127.0.0.1:\(port)):"
        )
        context.printError(url)
    }

    private func startBrowser(_ url: String, in context: Context) {
        guard openBrowser, let command = Browser.command(for: url, environment: context.environment)
        else { return }
        if let failure = Browser.start(
            command, environment: context.environment, showErrors: verbose)
        {
            context.printError(
                "cloudbackup: warning: could not start \(command[0]) (\(failure)); open the URL yourself"
            )
        }
    }

    /// The browser flow with standard input read as pasted redirects meanwhile; no browser is
    /// started (the user opens the URL on whichever device has one).
    private func pasteLogin(client: OAuthClient, transport: any HTTPTransport, in context: Context)
        throws -> TokenGrant
    {
        // The pasted address holds the code: a terminal must not echo it back.
        let echo = context.stdinIsTerminal ? Terminal.hideInput() : nil
        defer { echo.map(Terminal.restore) }
        return try Login(
            client: client, transport: transport, port: port, timeoutSeconds: timeoutSeconds,
            linger: linger(in: context)
        ).run(
            openBrowser: { url, port in
                printURL(url, port: port, in: context)
                context.printError(
                    "Open it on any device; when its browser ends on a page that does not load, copy that page's address and paste it here (it is not shown):"
                )
            }, pasted: LineReader(fd: 0),
            refused: { context.printError("cloudbackup: \($0)") })
    }

    private func linger(in context: Context) -> Duration {
        milliseconds(Self.lingerVariable, in: context) ?? Login.defaultLinger
    }

    /// A test's override of a duration, in milliseconds.
    private func milliseconds(_ variable: String, in context: Context) -> Duration? {
        guard let text = context.environment[variable], let count = Int(text), count >= 0 else {
            return nil
        }
        return .milliseconds(count)
    }

    private func deviceLogin(client: OAuthClient, transport: any HTTPTransport, in context: Context)
        throws -> TokenGrant
    {
        try DeviceLogin(
            client: client, transport: transport, timeoutSeconds: timeoutSeconds,
            pollUnit: milliseconds(Self.pollUnitVariable, in: context) ?? .seconds(1)
        ).run { url, userCode in
            context.printError(
                "On any device, open \(url) and enter the code \(userCode) (waiting up to \(timeoutSeconds) s)"
            )
        }
    }
}

/// Turns the terminal's echo off while a secret is typed, and back on: also when Ctrl-C or
/// a `kill` ends the run meanwhile, or the user's shell would be left without echo.
enum Terminal {
    /// What `restore` and the signal handler put back; set before the handler is installed.
    nonisolated(unsafe) private static var saved = termios()

    /// The settings to restore, or nil when standard input is no terminal.
    static func hideInput() -> termios? {
        var current = termios()
        guard tcgetattr(0, &current) == 0 else { return nil }
        saved = current
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            _ = Glibc.signal(signal) { number in
                // tcsetattr and raise are async-signal-safe.
                _ = tcsetattr(0, TCSANOW, &Terminal.saved)
                _ = Glibc.signal(number, SIG_DFL)
                _ = raise(number)
            }
        }
        var quiet = current
        quiet.c_lflag &= ~tcflag_t(ECHO)
        // Still echo the newline, so the next line starts on its own.
        quiet.c_lflag |= tcflag_t(ECHONL)
        guard tcsetattr(0, TCSANOW, &quiet) == 0 else { return nil }
        return current
    }

    static func restore(_ settings: termios) {
        var settings = settings
        _ = tcsetattr(0, TCSANOW, &settings)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { _ = Glibc.signal(signal, SIG_DFL) }
    }
}

/// The options only `login` takes.
extension OptionSpec {
    fileprivate static let noBrowser = OptionSpec(
        name: "--no-browser",
        help:
            "only print the URL, for example to open it on another machine (its answer must still reach this machine's 127.0.0.1)"
    )
    fileprivate static let paste = OptionSpec(
        name: "--paste",
        help:
            "open the URL on any device; when the browser there ends on a page that does not load (http://127.0.0.1:…/?state=…&code=…), paste its address here. The listener on 127.0.0.1 keeps waiting too"
    )
    fileprivate static let device = OptionSpec(
        name: "--device",
        help:
            "show a code to type at Google's device page on any device instead (needs the device client settings below)"
    )
    fileprivate static let port = OptionSpec(
        name: "--port", value: "N", help: "listen on this port instead of any free one")
    fileprivate static let timeout = OptionSpec(
        name: "--timeout", value: "S", help: "seconds to wait for the answer (default: 300)")
}
