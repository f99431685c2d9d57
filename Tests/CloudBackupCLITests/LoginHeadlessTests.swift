import Foundation
import OAuth
import TestSupport
import Testing

@testable import CloudBackupCLI

/// `login --paste` and `login --device` against the emulator, through the built binary. The
/// paste tests run it on a pseudo-terminal, as over ssh, with no browser configured; a script
/// plays the user: it opens the printed URL the way a browser on another device would (it
/// gets the redirect the emulator answers, which that browser could not load) and pastes that
/// address. Every test ends by scanning everything printed, the terminal included, for the
/// secrets the emulator issued or received.
@Suite(.serialized) struct LoginHeadlessTests {
    typealias Session = LoginEmulatorTests.Session

    /// One pasted line: how it is made from the address the consent ends on.
    enum Paste: String {
        /// The address as the browser shows it.
        case full
        /// Only its query.
        case query
        /// The address in double quotes, with spaces around.
        case quoted
        /// An address from another login (a different state).
        case wrongState = "wrong-state"
        /// The user clicks "Cancel" at the consent page, then pastes where that ends.
        case denied
        case garbage
        /// Nothing is pasted: a browser on this machine follows the redirect to the listener.
        case browserHere = "browser-here"
        /// Nothing is pasted: the user presses Ctrl-C. The script prints whether the terminal
        /// echoed input while the login waited, and after it ended.
        case interrupt
    }

    /// Runs `cloudbackup login ARGUMENTS` on a terminal without a browser and pastes `pastes`
    /// in turn, each but the last once the previous was refused.
    func loginOnATerminal(_ session: Session, _ arguments: [String], pasting pastes: [Paste])
        throws -> RunResult
    {
        let script = """
            import fcntl, http.client, json, os, pty, re, signal, subprocess, sys, termios
            import urllib.parse
            base, steps = sys.argv[1], json.loads(sys.argv[2])
            master, slave = pty.openpty()
            def terminal():
                fcntl.ioctl(0, termios.TIOCSCTTY, 0)
                # The test runner starts us with signals blocked; a shell would not.
                signal.pthread_sigmask(signal.SIG_SETMASK, set())
            child = subprocess.Popen(
                sys.argv[3:], stdin=slave, stderr=slave, stdout=subprocess.PIPE,
                start_new_session=True, preexec_fn=terminal)
            os.close(slave)
            seen = b""
            def read_until(marker, count):
                global seen
                while seen.count(marker) < count:
                    chunk = os.read(master, 4096)
                    if not chunk:
                        raise EOFError
                    seen += chunk
            def request(method, url, body=None):
                parts = urllib.parse.urlsplit(url)
                connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
                connection.request(method, parts.path + "?" + parts.query, body=body,
                                   headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                return response
            def consent():
                lines = seen.decode(errors="replace").splitlines()
                url = [l.strip() for l in lines if l.startswith(base + "/o/oauth2/v2/auth?")][0]
                return request("GET", url).getheader("Location")
            try:
                read_until(b"paste it here", 1)
                for index, step in enumerate(steps):
                    if step == "interrupt":
                        echo = lambda: bool(termios.tcgetattr(master)[3] & termios.ECHO)
                        print("echo while waiting:", echo())
                        os.killpg(child.pid, signal.SIGINT)
                        child.wait(timeout=30)
                        print("echo after Ctrl-C:", echo())
                        break
                    if step == "denied":
                        request("POST", base + "/__emulator/deny?", b"{}")
                    address = consent()
                    if step == "browser-here":
                        page = request("GET", address)
                        print("listener answered", page.status, file=sys.stdout)
                        if page.status == 303:
                            parts = urllib.parse.urlsplit(address)
                            clean = f"http://{parts.netloc}{page.getheader('Location')}"
                            print("then", request("GET", clean).status, file=sys.stdout)
                        continue
                    line = {
                        "full": address, "denied": address,
                        "query": urllib.parse.urlsplit(address).query,
                        "quoted": '  "' + address + '"  ',
                        "wrong-state": re.sub(r"state=[^&]*", "state=another-login", address),
                        "garbage": "what do I paste?",
                    }[step]
                    os.write(master, line.encode() + b"\\n")
                    if index < len(steps) - 1:
                        read_until(b" left)", index + 1)
            except (OSError, EOFError):
                pass
            try:
                while True:
                    chunk = os.read(master, 65536)
                    if not chunk:
                        break
                    seen += chunk
            except OSError:
                pass
            sys.stdout.flush()
            sys.stdout.buffer.write(child.stdout.read())
            sys.stderr.buffer.write(seen)
            sys.exit(child.wait())
            """
        var environment = testEnvironment.merging(session.environment()) { _, new in new }
        environment["BROWSER"] = nil
        let steps = String(
            decoding: try JSONSerialization.data(withJSONObject: pastes.map(\.rawValue)),
            as: UTF8.self)
        let result = try TestSupport.run(
            URL(fileURLWithPath: Paths.python),
            ["-c", script, session.emulator.baseURL, steps, Paths.binary.path, "login"]
                + arguments, environment: environment)
        session.keep(result.stdout)
        session.keep(result.stderr)
        return result
    }

    /// The code exchanges the emulator answered.
    func exchanges(_ session: Session) throws -> [Int?] {
        try session.emulator.log().filter { $0.grantType == "authorization_code" }.map(\.status)
    }

    @Test func withoutABrowserLoginSaysSoAndTakesThePastedAddress() throws {
        let session = try Session()
        defer { session.finish() }
        let result = try loginOnATerminal(session, [], pasting: [.full])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("cloudbackup: no browser on this machine"))
        let saved = try #require(try session.store.load())
        #expect(saved.clientID == session.emulator.clientID)
        #expect(try exchanges(session) == [200])
        try session.expectNoSecretPrinted()
    }

    @Test(arguments: [Paste.query, .quoted])
    func theQueryAloneOrAQuotedAddressIsTaken(_ paste: Paste) throws {
        let session = try Session()
        defer { session.finish() }
        let result = try loginOnATerminal(session, ["--paste"], pasting: [paste])
        #expect(result.status == 0, "\(result.stderr)")
        // Asked for by name: not announced as a guess.
        #expect(!result.stderr.contains("no browser on this machine"))
        #expect(try session.store.load() != nil)
        try session.expectNoSecretPrinted()
    }

    /// The listener keeps waiting beside the paste, so a browser on this machine still works.
    @Test func theListenerStillTakesTheRedirectWhileAPasteIsAwaited() throws {
        let session = try Session()
        defer { session.finish() }
        let result = try loginOnATerminal(session, ["--paste"], pasting: [.browserHere])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == "listener answered 303\nthen 200\nlogged in; the login is saved in \(session.tokenPath)\n"
        )
        #expect(try session.store.load() != nil)
        try session.expectNoSecretPrinted()
    }

    /// The address is not echoed while it is pasted, and Ctrl-C gives the echo back.
    @Test func theTerminalDoesNotEchoThePasteAndCtrlCRestoresIt() throws {
        let session = try Session()
        defer { session.finish() }
        let result = try loginOnATerminal(session, ["--paste"], pasting: [.interrupt])
        // Ended by the signal itself (after restoring the terminal): the script passes on
        // Python's -SIGINT, which reaches us as 256 - SIGINT.
        #expect(result.status == 256 - SIGINT, "\(result.stderr)")
        #expect(result.stdout == "echo while waiting: False\necho after Ctrl-C: True\n")
        #expect(try session.store.load() == nil)
    }

    @Test func aWrongStateIsRefusedAndTheRightAddressThenTaken() throws {
        let session = try Session()
        defer { session.finish() }
        let result = try loginOnATerminal(session, ["--paste"], pasting: [.wrongState, .full])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "cloudbackup: that address belongs to another login (its state does not match)"))
        // The refused code was never exchanged: one exchange, the right one.
        #expect(try exchanges(session) == [200])
        try session.expectNoSecretPrinted()
    }

    @Test func threeRefusedPastesEndTheLoginWithExit4AndNothingSaved() throws {
        let session = try Session()
        defer { session.finish() }
        let result = try loginOnATerminal(
            session, ["--paste"], pasting: [.garbage, .denied, .denied])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("cloudbackup: that is not the address the login ended on"))
        #expect(result.stderr.contains("(1 try left)"))
        #expect(
            result.stderr.contains(
                "3 pasted lines were refused, so this profile is not logged in (the last: that address says access was not granted"
            ))
        #expect(try session.store.load() == nil)
        #expect(try exchanges(session) == [])
        try session.expectNoSecretPrinted()
    }

    // MARK: - The device flow

    /// The device flow with the poll interval's seconds shortened to a millisecond each.
    func deviceLogin(_ session: Session, extra: [String: String] = [:]) throws -> RunResult {
        try session.cloudbackup(
            ["login", "--device", "--verbose"],
            extra: [LoginCommand.pollUnitVariable: "1"].merging(extra) { _, new in new })
    }

    func devicePolls(_ session: Session) throws -> [Int?] {
        try session.emulator.log().filter { $0.grantType == OAuthClient.deviceCodeGrantType }
            .map(\.status)
    }

    @Test func aDeviceLoginPollsThroughSlowDownAndItsRefreshUsesTheDeviceClient() throws {
        let session = try Session()
        defer { session.finish() }
        try session.emulator.configureDeviceFlow(approveAfterPolls: 2, slowDown: 2)
        let result = try deviceLogin(session)
        #expect(result.status == 0, "\(result.stderr)")
        let userCode = try #require(try session.emulator.deviceUserCodes().first)
        #expect(
            result.stderr.contains(
                "On any device, open https://www.google.com/device and enter the code \(userCode) (waiting up to 300 s)"
            ))
        #expect(try devicePolls(session) == [403, 403, 428, 428, 200])
        let saved = try #require(try session.store.load())
        #expect(saved.clientID == session.emulator.deviceClientID)

        // A profile with only the device client refreshes the login through it.
        try session.emulator.expireAccessTokens()
        let status = try session.cloudbackup(
            ["status", "--remote", "--verbose"],
            extra: ["CLOUDBACKUP_CLIENT_ID": "", "CLOUDBACKUP_CLIENT_SECRET": ""])
        #expect(status.status == 0, "\(status.stderr)")
        let refreshes = try session.emulator.log().filter { $0.grantType == "refresh_token" }
        #expect(refreshes.map(\.status) == [200])
        try session.expectNoSecretPrinted()
    }

    struct DeviceRefusal: Sendable, CustomTestStringConvertible {
        var deny = false
        var expire = false
        var invalidScope = false
        var message: String
        var testDescription: String { message }
    }

    @Test(arguments: [
        DeviceRefusal(deny: true, message: "access was not granted in the browser"),
        DeviceRefusal(expire: true, message: "the code was not entered in time and has expired"),
        DeviceRefusal(
            invalidScope: true,
            message:
                "Google refused access to Drive's app folder for a device-code login (invalid_scope); use `cloudbackup login --paste` instead"
        ),
    ])
    func aRefusedDeviceLoginSaysWhyWithExit4(_ refusal: DeviceRefusal) throws {
        let session = try Session()
        defer { session.finish() }
        try session.emulator.configureDeviceFlow(
            deny: refusal.deny, expire: refusal.expire, invalidScope: refusal.invalidScope)
        let result = try deviceLogin(session)
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("cloudbackup: " + refusal.message))
        #expect(try session.store.load() == nil)
        // Refused at the first poll, or (invalid_scope) before any.
        #expect(try devicePolls(session).count == (refusal.invalidScope ? 0 : 1))
        try session.expectNoSecretPrinted()
    }

    @Test func aDeviceLoginWithoutTheDeviceClientNamesBothSettings() throws {
        let session = try Session()
        defer { session.finish() }
        let result = try session.cloudbackup(
            ["login", "--device"], extra: ["CLOUDBACKUP_DEVICE_CLIENT_ID": ""])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "set CLOUDBACKUP_DEVICE_CLIENT_ID or \"deviceClientId\" in"))
        #expect(result.stderr.contains("TVs and Limited Input devices"))
    }

    @Test(arguments: [["--paste"], ["--no-browser"], ["--port", "8080"]])
    func deviceTakesNoBrowserOptions(_ other: [String]) throws {
        let session = try Session()
        defer { session.finish() }
        let result = try session.cloudbackup(["login", "--device"] + other)
        #expect(result.status == 2)
        #expect(result.stderr.contains("--device takes no --paste, --no-browser or --port"))
    }
}
