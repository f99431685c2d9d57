import Foundation
import LocalFiles
import Networking
import OAuth
import TestSupport
import Testing

@testable import CloudBackupCLI

/// Login, refresh and logout against the local Google emulator, through the built binary and
/// the stand-in browser. Every line any step prints (stdout, stderr, the --verbose HTTP
/// trace) is kept, and each test ends by checking that none of the tokens, codes, verifiers
/// or the client secret the emulator issued or received appears in it.
@Suite(.serialized) struct LoginEmulatorTests {
    /// One emulator, one XDG_CONFIG_HOME, and everything printed while using them.
    final class Session: @unchecked Sendable {
        let emulator: Emulator
        let home: URL
        private let lock = NSLock()
        private var printed: [String] = []

        init(accessTokenLifetime: Int? = nil) throws {
            emulator = try Emulator(accessTokenLifetime: accessTokenLifetime)
            home = try Paths.temporaryFolder()
        }

        var tokenPath: String { home.path + "/cloudbackup/default/token.json" }
        var store: TokenStore { TokenStore(path: tokenPath) }

        func environment(browserMode: String? = nil, extra: [String: String] = [:]) -> [String:
            String]
        {
            emulator.environment(for: home, browserMode: browserMode).merging(extra) { _, new in new
            }
        }

        /// Runs the binary and keeps what it printed.
        func cloudbackup(
            _ arguments: [String], browserMode: String? = nil, extra: [String: String] = [:]
        )
            throws -> RunResult
        {
            let result = try CloudBackupCLITests.cloudbackup(
                arguments, environment: environment(browserMode: browserMode, extra: extra))
            keep(result.stdout)
            keep(result.stderr)
            return result
        }

        func keep(_ text: String) { lock.withLock { printed.append(text) } }

        /// A token provider for this profile, as the Drive commands build it, with its trace
        /// kept like any other output.
        func provider(now: @escaping @Sendable () -> Date = { Date() }) throws -> TokenProvider {
            let profile = try Profile.load(name: "default", environment: environment())
            var transport = CurlTransport()
            transport.trace = { [self] in keep($0) }
            return TokenProvider(
                client: try profile.oauthClient(), store: profile.tokenStore, transport: transport,
                now: now)
        }

        /// Fails the test if any secret the emulator knows appears in anything printed, naming
        /// only the secret's kind.
        func expectNoSecretPrinted() throws {
            let texts = lock.withLock { printed }
            // Only the kinds: a failure message must not print the secret it found.
            let leakedKinds = try emulator.leakedSecrets(in: texts).map(emulatorSecretKind)
            #expect(leakedKinds == [])
            #expect(try !emulator.secrets().isEmpty)
        }

        func finish() {
            emulator.stop()
            try? FileManager.default.removeItem(at: home)
        }
    }

    func loggedIn(_ session: Session) throws {
        let result = try session.cloudbackup(["login", "--verbose"])
        try #require(result.status == 0, "login failed: \(result.stderr)")
    }

    @Test func aFullLoginThroughTheBrowserSavesAPrivateTokenFile() throws {
        let session = try Session()
        defer { session.finish() }
        let result = try session.cloudbackup(["login"])
        #expect(result.status == 0)
        #expect(result.stdout == "logged in; the login is saved in \(session.tokenPath)\n")
        // Silent apart from the URL (a hint line and the URL itself).
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.last?.hasPrefix(session.emulator.baseURL + "/o/oauth2/v2/auth?") == true)

        #expect(try LocalFile.mode(of: session.tokenPath) == 0o600)
        let saved = try #require(try session.store.load())
        #expect(saved.refreshToken.hasPrefix("1//emu-"))
        #expect(saved.accessToken?.hasPrefix("ya29.emu-") == true)
        let exchange = try session.emulator.log().filter { $0.path == "/token" }
        #expect(exchange.map(\.grantType) == ["authorization_code"])
        #expect(exchange.map(\.status) == [200])

        let status = try session.cloudbackup(["status"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("logged in (\(session.tokenPath))"))
        #expect(status.stdout.contains("access token  expires "))

        #expect(chmod(session.tokenPath, 0o644) == 0)
        let refused = try session.cloudbackup(["status"])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("run `chmod 600 \(session.tokenPath)`"))
        try session.expectNoSecretPrinted()
    }

    /// cloudbackup ignores SIGPIPE for itself; the browser it starts gets the default back.
    /// The stand-in browser is wrapped in a script that records what its process ignores.
    @Test func theBrowserStartsWithSIGPIPEAtItsDefault() throws {
        let session = try Session()
        defer { session.finish() }
        let record = session.home.appendingPathComponent("ignored.txt")
        let script = session.home.appendingPathComponent("browser.sh")
        try """
        #!/bin/sh
        grep '^SigIgn:' /proc/self/status > '\(record.path)'
        exec '\(session.emulator.browserCommand)' "$1"

        """.write(to: script, atomically: true, encoding: .utf8)
        #expect(chmod(script.path, 0o755) == 0)
        let result = try session.cloudbackup(["login"], extra: ["BROWSER": script.path])
        #expect(result.status == 0, "\(result.stderr)")
        let line = try String(contentsOf: record, encoding: .utf8)
        let mask = try #require(
            UInt64(
                line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespacesAndNewlines),
                radix: 16))
        #expect(mask & (1 << UInt64(SIGPIPE - 1)) == 0)
        try session.expectNoSecretPrinted()
    }

    @Test(arguments: [("tamper-state", "tampered", 400), ("probe", "probe", 404)])
    func theListenerRefusesOtherRequestsAndKeepsWaiting(mode: String, step: String, status: Int)
        throws
    {
        let session = try Session()
        defer { session.finish() }
        let browserLog = session.home.appendingPathComponent("browser.log")
        let result = try session.cloudbackup(
            ["login", "--verbose"], browserMode: mode, extra: ["FAKE_BROWSER_LOG": browserLog.path])
        #expect(result.status == 0)
        #expect(try session.store.load() != nil)
        // The refused step was recorded before the browser went on to the real redirect,
        // which the login needed to finish.
        let steps = try String(contentsOf: browserLog, encoding: .utf8).split(separator: "\n")
            .compactMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        let refusal = try #require(steps.first { $0["step"] as? String == step })
        #expect(refusal["status"] as? Int == status)
        try session.expectNoSecretPrinted()
    }

    @Test func denyingAccessIsExit4AndSavesNothing() throws {
        let session = try Session()
        defer { session.finish() }
        let result = try session.cloudbackup(["login"], browserMode: "deny")
        #expect(result.status == 4)
        #expect(result.stderr.contains("access was not granted in the browser"))
        #expect(!LocalFile.exists(session.tokenPath))
        #expect(try session.emulator.log().contains { $0.denied == true })
        #expect(try !session.emulator.log().contains { $0.path == "/token" })
    }

    /// Google's granular consent lets a user untick the Drive box: the login then works but
    /// every backup would fail. Refused at once, with what to do, and nothing saved.
    @Test func aConsentWithoutTheDriveBoxTickedIsExit4AndSavesNothing() throws {
        let session = try Session()
        defer { session.finish() }
        try session.emulator.untickNextConsent([OAuthClient.driveAppDataScope])
        let result = try session.cloudbackup(["login"])
        #expect(result.status == 4, "\(result.stderr)")
        let failure = result.stderr.split(separator: "\n").filter { $0.hasPrefix("cloudbackup: ") }
        #expect(failure.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(OAuthClient.driveAppDataScope))
        #expect(result.stderr.contains("run `cloudbackup login` again and tick the box"))
        #expect(!LocalFile.exists(session.tokenPath))
        #expect(try session.emulator.log().contains { $0.path == "/token" && $0.status == 200 })
        // The grant not kept is revoked, so it does not stay live in the user's account.
        #expect(try session.emulator.log().contains { $0.path == "/revoke" && $0.status == 200 })
        try session.expectNoSecretPrinted()
    }

    /// A login that cannot be saved (here the token file's place is a folder) is revoked, so
    /// no grant stays live that nobody holds; the save's failure is the error (exit 1).
    @Test func aLoginThatCannotBeSavedIsRevoked() throws {
        let session = try Session()
        defer { session.finish() }
        try LocalFile.makeDirectory(session.tokenPath + "/x")
        let result = try session.cloudbackup(["login"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("\(session.tokenPath): cannot"))
        #expect(try session.emulator.log().contains { $0.path == "/revoke" && $0.status == 200 })
        try session.expectNoSecretPrinted()
    }

    /// Backoff of 1 ms, so the retries below take no time.
    static let quickRetries = ["CLOUDBACKUP_RETRY_BASE_MS": "1"]

    /// FORMAT.md §8.1: a 503 at the token endpoint during the code exchange is tried again, so a
    /// one-off blip does not cost the user a second consent.
    @Test func aLoginRidesOutA503AtTheTokenEndpoint() throws {
        let session = try Session()
        defer { session.finish() }
        try session.emulator.inject(.status(503, count: 1, paths: ["/token"]))
        let result = try session.cloudbackup(["login"], extra: Self.quickRetries)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try session.store.load()?.refreshToken.hasPrefix("1//emu-") == true)
        #expect(
            try session.emulator.log().filter { $0.path == "/token" }.map(\.status) == [503, 200])
        try session.expectNoSecretPrinted()
    }

    /// A token endpoint that keeps answering 503 ends the login after the policy's 8 attempts,
    /// as before: exit 5 and nothing saved.
    @Test func aLoginWhoseExchangeKeepsFailingGivesUpAfterTheRetries() throws {
        let session = try Session()
        defer { session.finish() }
        try session.emulator.inject(.status(503, count: 20, paths: ["/token"]))
        let result = try session.cloudbackup(["login"], extra: Self.quickRetries)
        #expect(result.status == 5)
        #expect(result.stderr.contains("/token answered 503"))
        #expect(!LocalFile.exists(session.tokenPath))
        #expect(
            try session.emulator.log().filter { $0.path == "/token" }.map(\.status)
                == Array(repeating: 503, count: 8))
        try session.expectNoSecretPrinted()
    }

    @Test func anExpiredAccessTokenIsRefreshedAndTheRefreshTokenKept() throws {
        // Access tokens live 30 s: less than the provider's one-minute margin, so the saved
        // one counts as expired at once.
        let session = try Session(accessTokenLifetime: 30)
        defer { session.finish() }
        try loggedIn(session)
        let before = try #require(try session.store.load())
        let token = try session.provider().accessToken(refreshing: false)
        let after = try #require(try session.store.load())
        #expect(token != before.accessToken)
        #expect(after.accessToken == token)
        #expect(after.refreshToken == before.refreshToken)
        #expect(try LocalFile.mode(of: session.tokenPath) == 0o600)
        #expect(
            try session.emulator.log().filter { $0.path == "/token" }.map(\.grantType) == [
                "authorization_code", "refresh_token",
            ])
        try session.expectNoSecretPrinted()
    }

    @Test func a401FromDriveIsRefreshedOnce() throws {
        let session = try Session()
        defer { session.finish() }
        try loggedIn(session)
        let provider = try session.provider()
        let first = try provider.accessToken(refreshing: false)
        #expect(try session.emulator.log().filter { $0.grantType == "refresh_token" }.isEmpty)
        try session.emulator.expireAccessTokens()

        func list(_ token: String) throws -> Int {
            try CurlTransport().send(
                HTTPRequest(
                    method: "GET",
                    url: session.emulator.baseURL + "/drive/v3/files?spaces=appDataFolder",
                    headers: [("Authorization", "Bearer " + token)], timeout: 10)
            ).status
        }
        #expect(try list(first) == 401)
        let second = try provider.accessToken(refreshing: true)
        #expect(second != first)
        #expect(try list(second) == 200)
        #expect(try session.emulator.log().filter { $0.grantType == "refresh_token" }.count == 1)
        try session.expectNoSecretPrinted()
    }

    @Test func aRevokedLoginIsExit4WithTheMessage() throws {
        let session = try Session(accessTokenLifetime: 30)
        defer { session.finish() }
        try loggedIn(session)
        try session.emulator.revokeAll()
        let error = #expect(throws: OAuthError.self) {
            try session.provider().token(refreshing: false)
        }
        let described = try CloudBackup.describe(#require(error))
        session.keep(described.lines.joined(separator: "\n"))
        #expect(described.exitCode == .notLoggedIn)
        #expect(
            described.lines.first?.hasPrefix(
                "the saved login was revoked or expired; run `cloudbackup login`") == true)
        #expect(described.lines.first?.contains("7 days") == true)
        try session.expectNoSecretPrinted()
    }

    @Test func logoutRevokesAtTheServerAndDeletesTheFile() throws {
        let session = try Session()
        defer { session.finish() }
        try loggedIn(session)
        let result = try session.cloudbackup(["logout"])
        #expect(result.status == 0)
        #expect(
            result.stdout == "logged out: access revoked at Google and the saved login deleted\n")
        #expect(result.stderr.isEmpty)
        #expect(!LocalFile.exists(session.tokenPath))
        #expect(try session.emulator.log().contains { $0.path == "/revoke" && $0.revoked == true })
        let again = try session.cloudbackup(["logout"])
        #expect(again.status == 0)
        #expect(again.stdout == "not logged in: profile 'default' has no saved login\n")
        try session.expectNoSecretPrinted()
    }

    @Test func quietLoginAndLogoutSayNothingOnSuccess() throws {
        let session = try Session()
        defer { session.finish() }
        let login = try session.cloudbackup(["login", "--quiet"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.isEmpty)
        #expect(LocalFile.exists(session.tokenPath))
        let logout = try session.cloudbackup(["logout", "-q"])
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout.isEmpty && logout.stderr.isEmpty)
        #expect(!LocalFile.exists(session.tokenPath))
    }

    /// A 503 at the revocation endpoint is tried again: the refresh token must not stay live
    /// at Google once its only local copy is deleted.
    @Test func logoutRidesOutA503AtTheRevocationEndpoint() throws {
        let session = try Session()
        defer { session.finish() }
        try loggedIn(session)
        try session.emulator.inject(.status(503, count: 1, paths: ["/revoke"]))
        let result = try session.cloudbackup(["logout"], extra: Self.quickRetries)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(!LocalFile.exists(session.tokenPath))
        let revocations = try session.emulator.log().filter { $0.path == "/revoke" }
        #expect(revocations.map(\.status) == [503, 200])
        #expect(revocations.last?.revoked == true)
        try session.expectNoSecretPrinted()
    }
}
