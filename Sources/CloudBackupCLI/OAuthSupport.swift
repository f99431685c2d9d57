import Foundation
import Networking
import OAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the login, logout and status commands share: the profile's OAuth client and token
/// store, the transport with its `--verbose` trace, and the browser launcher.
extension Profile {
    var tokenStore: TokenStore { TokenStore(path: tokenPath) }

    /// The OAuth client; without `requireCredentials` (logout only needs the revocation
    /// endpoint) a missing id or secret is left empty instead of refused.
    func oauthClient(requireCredentials: Bool = true) throws(CLIError) -> OAuthClient {
        if requireCredentials {
            try requireClient(
                ("client id", "CLOUDBACKUP_CLIENT_ID", "clientId", clientID),
                ("client secret", "CLOUDBACKUP_CLIENT_SECRET", "clientSecret", clientSecret),
                kind: "Desktop app")
        }
        return OAuthClient(
            clientID: clientID ?? "", clientSecret: clientSecret ?? "",
            authorizationEndpoint: authURL,
            tokenEndpoint: tokenURL, revocationEndpoint: revokeURL)
    }

    /// The device flow's client ("TVs and Limited Input devices"), or nil when the profile
    /// has none and `requireCredentials` is false.
    func deviceOAuthClient(requireCredentials: Bool = true) throws(CLIError) -> OAuthClient? {
        if requireCredentials {
            try requireClient(
                (
                    "device client id", "CLOUDBACKUP_DEVICE_CLIENT_ID", "deviceClientId",
                    deviceClientID
                ),
                (
                    "device client secret", "CLOUDBACKUP_DEVICE_CLIENT_SECRET",
                    "deviceClientSecret", deviceClientSecret
                ), kind: "TVs and Limited Input devices")
        }
        guard let deviceClientID, !deviceClientID.isEmpty else { return nil }
        return OAuthClient(
            clientID: deviceClientID, clientSecret: deviceClientSecret ?? "",
            authorizationEndpoint: authURL, tokenEndpoint: tokenURL,
            revocationEndpoint: revokeURL, deviceCodeEndpoint: deviceCodeURL)
    }

    private typealias Credential = (
        what: String, variable: String, key: String, value: String?
    )

    /// Names every missing setting of one client, each with where to set it.
    private func requireClient(_ id: Credential, _ secret: Credential, kind: String)
        throws(CLIError)
    {
        let missing = [id, secret].filter { ($0.value ?? "").isEmpty }
        guard missing.isEmpty else {
            throw .noClient(
                missing.map { ($0.what, $0.variable, $0.key) }, profile: name, config: configPath,
                kind: kind)
        }
    }

    /// Every command that needs Drive asks this for its tokens; `persisting: false` keeps a
    /// refreshed token in memory only, for a run that writes nothing. A login made with
    /// `login --device` refreshes through the device client, so a profile with only that
    /// client needs no desktop one.
    func tokenProvider(transport: any HTTPTransport, persisting: Bool = true) throws(CLIError)
        -> TokenProvider
    {
        let device = try deviceOAuthClient(requireCredentials: false)
        return TokenProvider(
            client: try oauthClient(requireCredentials: device == nil),
            otherClients: device.map { [$0] } ?? [], store: tokenStore, transport: transport,
            persisting: persisting)
    }
}

extension Context {
    /// The libcurl transport; with `verbose`, one stderr line per HTTP exchange (method,
    /// URL with secrets redacted, status, duration).
    func transport(verbose: Bool) -> CurlTransport {
        var transport = CurlTransport()
        if verbose {
            transport.trace = { [self] line in printError("cloudbackup: http: " + line) }
        }
        return transport
    }

    /// For tests only: the retry backoff base in milliseconds (default 1000).
    static let retryBaseVariable = "CLOUDBACKUP_RETRY_BASE_MS"

    /// Seconds to keep trying when no connection can be made at all (refused, unreachable,
    /// a name that does not resolve), counted from the request's first attempt.
    static let offlineWaitVariable = "CLOUDBACKUP_OFFLINE_WAIT"
    /// The default at a terminal: a person waits for the verdict, and with connect failures
    /// that come at once the attempts fit in it with the whole answer under 15 s. Without a
    /// terminal (cron) there is no default: a network that comes back within the full
    /// budget (about 100 s of backoff) still gets the night's backup done.
    static let offlineWaitAtTerminal: Double = 10

    /// Google's backoff (FORMAT.md §9.2), with the base `CLOUDBACKUP_RETRY_BASE_MS` sets and
    /// the shorter wait of an unreachable network at a terminal or as
    /// `CLOUDBACKUP_OFFLINE_WAIT` sets.
    func retryPolicy() throws(CLIError) -> RetryPolicy {
        var retry = RetryPolicy()
        if let text = environment[Self.retryBaseVariable], let milliseconds = Double(text),
            milliseconds >= 0
        {
            retry.base = milliseconds / 1000
        }
        if let text = environment[Self.offlineWaitVariable], !text.isEmpty {
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                throw CLIError.badVariable(
                    Self.offlineWaitVariable, mustBe: "a number of seconds (such as 10)", not: text)
            }
            retry.unreachableDeadline = seconds
        } else if stderrIsTerminal {
            retry.unreachableDeadline = Self.offlineWaitAtTerminal
        }
        return retry
    }

    /// For login's code exchange and logout's revocation, which no Drive client retries: the
    /// libcurl transport trying network errors, 429 and 5xx again under `retryPolicy`.
    func retryingTransport(verbose: Bool) throws(CLIError) -> RetryingTransport {
        RetryingTransport(transport(verbose: verbose), policy: try retryPolicy())
    }
}

/// Opens the login URL the Unix way (FORMAT.md §8.3): `$BROWSER` when set, else `xdg-open` when
/// there is a display, else nothing (the URL is printed either way).
enum Browser {
    /// The argument vector to run, or nil when no browser should be started. `BROWSER` may
    /// list several commands separated by `:` (the first is used) and may place the URL
    /// with `%s`; otherwise the URL is the last argument.
    static func command(for url: String, environment: [String: String]) -> [String]? {
        if let browser = environment["BROWSER"], !browser.isEmpty {
            let first = browser.split(separator: ":", omittingEmptySubsequences: true).first ?? ""
            var words = first.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard !words.isEmpty else { return nil }
            if words.contains(where: { $0.contains("%s") }) {
                words = words.map { $0.replacingOccurrences(of: "%s", with: url) }
            } else {
                words.append(url)
            }
            return words
        }
        let hasDisplay = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]]
            .contains { !($0 ?? "").isEmpty }
        return hasDisplay ? ["xdg-open", url] : nil
    }

    /// Starts `arguments` (searched in PATH) without waiting for it: a browser may keep
    /// running long after the login ends. Its output goes to /dev/null unless `showErrors`,
    /// so a chatty browser cannot break `login`'s silence.
    static func start(_ arguments: [String], environment: [String: String], showErrors: Bool)
        -> String?
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if !showErrors { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        // cloudbackup ignores SIGPIPE (CloudBackup.exit); the browser and xdg-open's shell
        // pipelines get the default back, as if started from a shell.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        return result == 0 ? nil : String(cString: strerror(result))
    }
}
