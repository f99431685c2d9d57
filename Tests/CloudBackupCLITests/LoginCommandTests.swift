import Foundation
import LocalFiles
import Networking
import OAuth
import TestSupport
import Testing

@testable import CloudBackupCLI

/// login, logout and status through the built binary, without the emulator: everything
/// that needs no authorization server (the emulator tests cover the rest).
@Suite struct LoginCommandTests {
    /// A profile folder under a fresh XDG_CONFIG_HOME, with a client id and secret.
    struct Home {
        let base: URL
        var folder: String { base.path + "/cloudbackup/default" }
        var tokenPath: String { folder + "/token.json" }
        var environment: [String: String] {
            [
                "XDG_CONFIG_HOME": base.path, "CLOUDBACKUP_CLIENT_ID": "id-1",
                "CLOUDBACKUP_CLIENT_SECRET": "secret-1",
                // Never contacted by these tests; a closed loopback port keeps it that way.
                "CLOUDBACKUP_AUTH_URL": "http://127.0.0.1:9/auth",
                "CLOUDBACKUP_TOKEN_URL": "http://127.0.0.1:9/token",
            ]
        }
        init() throws { base = try Paths.temporaryFolder() }
        func remove() { try? FileManager.default.removeItem(at: base) }

        func saveLogin(expiresAt: Date?) throws {
            try TokenStore(path: tokenPath).save(
                StoredLogin(
                    refreshToken: "rt-9", accessToken: "at-9", accessTokenExpiresAt: expiresAt,
                    scope: nil))
        }
    }

    @Test(arguments: [
        ("CLOUDBACKUP_CLIENT_ID", "clientId"), ("CLOUDBACKUP_CLIENT_SECRET", "clientSecret"),
    ])
    func aMissingClientSettingIsNamed(variable: String, key: String) throws {
        let home = try Home()
        defer { home.remove() }
        var environment = home.environment
        environment[variable] = nil
        let result = try cloudbackup(["login", "--no-browser"], environment: environment)
        #expect(result.status == 2)
        #expect(result.stderr.contains(variable))
        #expect(result.stderr.contains("\"\(key)\" in \(home.folder)/config.json"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func loginWithoutAnAnswerTimesOutWithExit4() throws {
        let home = try Home()
        defer { home.remove() }
        let result = try cloudbackup(
            ["login", "--no-browser", "--timeout", "1"], environment: home.environment)
        #expect(result.status == 4)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        // The URL is printed even without a browser, with the listener's real port.
        let url = try #require(lines.dropFirst().first)
        let query = URLComponents(string: url)?.queryItems ?? []
        let redirect = try #require(query.first { $0.name == "redirect_uri" }?.value)
        #expect(url.hasPrefix("http://127.0.0.1:9/auth?"))
        #expect(redirect.hasPrefix("http://127.0.0.1:"))
        #expect(redirect != "http://127.0.0.1:0/")
        #expect(lines.last?.contains("no answer within 1 s") == true)
        #expect(!LocalFile.exists(home.tokenPath))
    }

    @Test func aBrowserThatCannotStartIsAWarningAndTheURLStillPrinted() throws {
        let home = try Home()
        defer { home.remove() }
        var environment = home.environment
        environment["BROWSER"] = "/nonexistent/browser"
        let result = try cloudbackup(["login", "--timeout", "1"], environment: environment)
        #expect(result.status == 4)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.dropFirst().first?.hasPrefix("http://127.0.0.1:9/auth?") == true)
        #expect(
            lines.contains {
                $0.hasPrefix("cloudbackup: warning: could not start /nonexistent/browser (")
                    && $0.hasSuffix("); open the URL yourself")
            })
    }

    @Test func aBusyPortIsExplained() throws {
        let home = try Home()
        defer { home.remove() }
        let listener = try LoopbackListener()
        let result = try cloudbackup(
            ["login", "--no-browser", "--port", String(listener.port)],
            environment: home.environment)
        #expect(result.status == 1)
        #expect(result.stderr.contains("127.0.0.1:\(listener.port)"))
        #expect(result.stderr.contains("--port"))
    }

    @Test(arguments: ["0", "65536", "x"])
    func aBadPortIsAUsageError(port: String) throws {
        let result = try cloudbackup(["login", "--port", port])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--port expects a port number"))
    }

    @Test func statusSaysNotLoggedIn() throws {
        let home = try Home()
        defer { home.remove() }
        // A monitoring check hears of it by the exit code, after the report.
        let text = try cloudbackup(["status"], environment: home.environment)
        #expect(text.status == 4)
        #expect(text.stdout.contains("not logged in; run `cloudbackup login`"))
        #expect(text.stderr.split(separator: "\n").count == 1)
        let json = try cloudbackup(["status", "--json"], environment: home.environment)
        #expect(json.status == 4)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["login"] as? [String: Any])?["loggedIn"] as? Bool == false)
    }

    @Test func statusShowsWhenTheAccessTokenExpires() throws {
        let home = try Home()
        defer { home.remove() }
        try home.saveLogin(expiresAt: Date().addingTimeInterval(7200))
        let text = try cloudbackup(["status"], environment: home.environment)
        #expect(text.status == 0)
        #expect(text.stdout.contains("logged in (\(home.tokenPath))"))
        #expect(text.stdout.contains("(in 1 h 59 min)"))
        #expect(!text.stdout.contains("rt-9") && !text.stdout.contains("at-9"))

        try home.saveLogin(expiresAt: Date(timeIntervalSince1970: 1_700_000_000))
        let json = try cloudbackup(["status", "--json"], environment: home.environment)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let login = try #require(object["login"] as? [String: Any])
        #expect(login["loggedIn"] as? Bool == true)
        #expect(login["accessTokenExpiresAt"] as? String == "2023-11-14T22:13:20Z")
    }

    @Test func aTokenFileOthersCanReadIsRefusedWithTheFix() throws {
        let home = try Home()
        defer { home.remove() }
        try home.saveLogin(expiresAt: nil)
        #expect(chmod(home.tokenPath, 0o644) == 0)
        let result = try cloudbackup(["status"], environment: home.environment)
        #expect(result.status == 3)
        #expect(result.stderr.contains("permissions 0644 are too open"))
        #expect(result.stderr.contains("run `chmod 600 \(home.tokenPath)`"))
    }

    /// Logout also gets rid of a token file others can read (every other command refuses it).
    @Test(arguments: [0o600, 0o644])
    func logoutDeletesWithAWarningWhenTheServerIsUnreachable(mode: Int) throws {
        let home = try Home()
        defer { home.remove() }
        try home.saveLogin(expiresAt: nil)
        #expect(chmod(home.tokenPath, mode_t(mode)) == 0)
        var environment = home.environment
        environment["CLOUDBACKUP_REVOKE_URL"] =
            "http://127.0.0.1:\(try LocalServer.closedPort())/revoke"
        // Refused connections are retried; 1 ms keeps the backoff short.
        environment["CLOUDBACKUP_RETRY_BASE_MS"] = "1"
        let result = try cloudbackup(["logout"], environment: environment)
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(
            result.stderr.hasPrefix(
                "cloudbackup: warning: revoke failed: cannot connect to 127.0.0.1 (connection refused); "
            ))
        #expect(!LocalFile.exists(home.tokenPath))
        #expect(
            try cloudbackup(["status"], environment: home.environment).stdout.contains(
                "not logged in"))
    }

    /// A damaged token file holds nothing to revoke: logout deletes it with one warning
    /// instead of refusing. Logout is also the way out of a file readable by others, so the
    /// mode does not matter to it.
    @Test(arguments: [0o600, 0o644])
    func logoutDeletesADamagedTokenFileWithAWarning(mode: Int) throws {
        let home = try Home()
        defer { home.remove() }
        try LocalFile.makeDirectory(home.folder)
        try LocalFile.writeAtomically(
            Array(#"{"refreshToken": "#.utf8), to: home.tokenPath, mode: mode_t(mode))
        var environment = home.environment
        environment["CLOUDBACKUP_REVOKE_URL"] =
            "http://127.0.0.1:\(try LocalServer.closedPort())/revoke"
        let result = try cloudbackup(["logout"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(
            lines.first?.hasPrefix(
                "cloudbackup: warning: \(home.tokenPath) was damaged (not a token file") == true)
        #expect(lines.first?.contains("so nothing could be revoked at the server") == true)
        #expect(!LocalFile.exists(home.tokenPath))
        #expect(
            try cloudbackup(["status"], environment: home.environment).stdout.contains(
                "not logged in"))
    }

    /// One run at a time per profile: logout waits for no one, and deletes nothing a running
    /// backup still reads.
    @Test func logoutWhileAnotherRunHoldsTheProfileExits6() throws {
        let home = try Home()
        defer { home.remove() }
        try LocalFile.makeDirectory(home.folder)
        try LocalFile.writeAtomically(
            Array(#"{"refreshToken": "#.utf8), to: home.tokenPath, mode: 0o600)
        let held = try #require(try FileLock(path: home.folder + "/lock"))
        let result = try cloudbackup(["logout"], environment: home.environment)
        withExtendedLifetime(held) {}
        #expect(result.status == 6, "\(result.stderr)")
        #expect(result.stderr.contains("another cloudbackup run holds the lock"))
        #expect(LocalFile.exists(home.tokenPath))
    }

    /// A token file that cannot be read is a bad file (3); one that cannot be written, after a
    /// refresh on a full disk, is a failed write (1) with its fix.
    @Test func aTokenFileThatCannotBeWrittenIsAFailedWriteNotABadFile() {
        let unreadable = CloudBackup.describe(
            OAuthError.file(LocalFileError(path: "/p/token.json", operation: .read, errno: EIO)))
        #expect(unreadable.exitCode == .invalidFile)
        let full = CloudBackup.describe(
            OAuthError.file(
                LocalFileError(path: "/p/token.json", operation: .write, errno: ENOSPC)))
        #expect(full.exitCode == .failure)
        #expect(full.lines.first?.hasSuffix("; free up space, then run again") == true)
        let locked = CloudBackup.describe(
            OAuthError.file(
                LocalFileError(
                    path: "/p/default", operation: .createInFolder, errno: EACCES)))
        #expect(locked.exitCode == .failure)
        #expect(locked.lines.first?.hasSuffix("; make /p/default writable, then run again") == true)
        // The same rule for any local file that reaches the boundary (logout deleting the
        // kept copy), and for an output left as it was.
        let delete = CloudBackup.describe(
            LocalFileError(path: "/p/kept-copy.json", operation: .delete, errno: EACCES)
                as any Error)
        #expect(delete.exitCode == .failure)
        #expect(delete.lines.first?.hasSuffix("; make /p writable, then run again") == true)
        let output = BackupFile.failedWrite(
            LocalFileError(path: "/o/out.json", operation: .write, errno: ENOSPC),
            leaving: "/o/out.json is unchanged")
        #expect(
            output.lines == [
                "/o/out.json: cannot write: No space left on device; /o/out.json is unchanged; free up space"
            ])
    }

    @Test func revokedAndNotLoggedInAreExit4WithTheWayOut() {
        let revoked = CloudBackup.describe(OAuthError.revoked(tokenFile: "/t/token.json"))
        #expect(revoked.exitCode == .notLoggedIn)
        #expect(revoked.lines.count == 1)
        let line = revoked.lines.first ?? ""
        #expect(line.hasPrefix("the saved login was revoked or expired; run `cloudbackup login`"))
        #expect(line.contains("7 days"))
        #expect(line.contains("Testing mode"))
        #expect(
            CloudBackup.describe(OAuthError.notLoggedIn(tokenFile: "/t")).exitCode == .notLoggedIn)
        let network = CloudBackup.describe(
            OAuthError.transport(TransportError(kind: .couldNotConnect, message: "refused")))
        #expect(network.exitCode == .network)
    }

    @Test(arguments: [
        (["BROWSER": "firefox"], ["firefox", "U"]),
        (["BROWSER": "open-it --new %s:firefox"], ["open-it", "--new", "U"]),
        (["BROWSER": "w3m", "DISPLAY": ":0"], ["w3m", "U"]),
        (["DISPLAY": ":0"], ["xdg-open", "U"]),
        (["WAYLAND_DISPLAY": "wayland-0"], ["xdg-open", "U"]),
        ([:], nil),
    ])
    func theBrowserFollowsTheUnixConvention(environment: [String: String], expected: [String]?) {
        #expect(Browser.command(for: "U", environment: environment) == expected)
    }

    /// The paste is chosen by itself only on a terminal of a machine that could open no
    /// browser; a cron job (no terminal) or a desktop (a display or BROWSER) keeps the browser.
    @Test(arguments: [
        ([:], true, LoginCommand.Way.paste(announced: true)),
        ([:], false, .browser),
        (["DISPLAY": ":0"], true, .browser),
        (["WAYLAND_DISPLAY": "wayland-0"], true, .browser),
        (["BROWSER": "w3m"], true, .browser),
        (["DISPLAY": ""], true, .paste(announced: true)),
    ])
    func thePasteIsChosenWithoutABrowserOnATerminal(
        environment: [String: String], terminal: Bool, expected: LoginCommand.Way
    ) {
        #expect(
            LoginCommand.way(
                paste: false, device: false, environment: environment, stdinIsTerminal: terminal)
                == expected)
        #expect(
            LoginCommand.way(
                paste: true, device: false, environment: environment, stdinIsTerminal: terminal)
                == .paste(announced: false))
        #expect(
            LoginCommand.way(
                paste: false, device: true, environment: environment, stdinIsTerminal: terminal)
                == .device)
    }
}

@Suite struct OAuthCommandHelpTests {
    static let cases: [(command: String, help: String)] = [
        (
            "login",
            """
            usage: cloudbackup login [--profile NAME] [--no-browser] [--paste | --device] [--port N]
                                     [--timeout S] [--quiet | --verbose]

            Opens Google's consent page in a browser ($BROWSER, else xdg-open when there is a
            display) and always prints its URL too. After you allow access, the browser returns
            to a listener on 127.0.0.1 and the login is saved, readable only by you, in
            $XDG_CONFIG_HOME/cloudbackup/NAME/token.json. Later commands refresh it by themselves.

            On a machine without a browser (no DISPLAY, WAYLAND_DISPLAY or BROWSER, and a
            terminal), login waits for a pasted address as with --paste, and says so.

            options:
              --profile NAME  which profile to log in (default: default)
              --no-browser    only print the URL, for example to open it on another machine (its
                              answer must still reach this machine's 127.0.0.1)
              --paste         open the URL on any device; when the browser there ends on a page that
                              does not load (http://127.0.0.1:…/?state=…&code=…), paste its address
                              here. The listener on 127.0.0.1 keeps waiting too
              --device        show a code to type at Google's device page on any device instead
                              (needs the device client settings below)
              --port N        listen on this port instead of any free one
              --timeout S     seconds to wait for the answer (default: 300)
              -q, --quiet     no line on success (the URL or code is still shown)
              -v, --verbose   print each HTTP exchange (never a token or code)

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

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: the profile's config.json or token file is broken or
                  readable by others
              4   not logged in: Google refused, or the consent was denied
              5   network or server failure

            """
        ),
        (
            "logout",
            """
            usage: cloudbackup logout [--profile NAME] [--quiet | --verbose]

            Revokes the profile's login at Google's revocation endpoint and deletes its token
            file and its kept copy of the backup. Network errors and 429/5xx answers are tried
            again with backoff. When the server still cannot be reached, or the token file is
            damaged, the files are deleted anyway and a warning says how to remove the access
            by hand. Ends with one line on stdout saying what was done.

            options:
              --profile NAME  which profile to log out (default: default)
              -q, --quiet     no line on success, only warnings
              -v, --verbose   print each HTTP exchange (never a token)

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: the profile's config.json is broken or readable by
                  others
              6   another run holds the lock: another run of the profile is using the login

            """
        ),
    ]

    @Test(arguments: cases.map(\.command))
    func helpWordForWord(command: String) throws {
        let expected = try #require(Self.cases.first { $0.command == command }).help
        let result = try cloudbackup([command, "--help"])
        #expect(result.status == 0)
        #expect(result.stdout == expected)
        #expect(result.stderr == "")
    }

    @Test func theCommandListNamesTheNewCommands() throws {
        let result = try cloudbackup(["--help"])
        for name in ["login", "logout", "status"] {
            #expect(result.stdout.contains("\n  \(name) "))
        }
    }
}
