import Foundation
import LocalFiles
import Networking
import TestSupport
import Testing

@testable import OAuth

@Suite struct TokenStoreTests {
    @Test func aSavedLoginIsPrivateAndReadsBack() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = TokenStore(path: folder.path + "/profile/token.json")
        let login = StoredLogin(
            refreshToken: "rt", accessToken: "at",
            accessTokenExpiresAt: Date(timeIntervalSince1970: 1_800_000_000),
            scope: "s")
        try store.save(login)
        #expect(try LocalFile.mode(of: store.path) == 0o600)
        #expect(try LocalFile.mode(of: folder.path + "/profile") == 0o700)
        #expect(try store.load() == login)
        try store.delete()
        #expect(try store.load() == nil)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660])
    func aFileOthersCanReadIsRefused(mode: Int) throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = TokenStore(path: folder.path + "/token.json")
        try store.save(
            StoredLogin(refreshToken: "rt", accessToken: nil, accessTokenExpiresAt: nil, scope: nil)
        )
        #expect(chmod(store.path, mode_t(mode)) == 0)
        #expect(
            throws: OAuthError.tooOpen(
                SecretFile.TooOpen(
                    path: store.path, mode: UInt32(mode), kind: "a token file",
                    holding: "your login"))
        ) {
            try store.load()
        }
        #expect(try store.load(checkingMode: false)?.refreshToken == "rt")
    }

    @Test func aFileThatIsNotATokenFileIsReported() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.path + "/token.json"
        try LocalFile.writeAtomically(Array("{\"nope\":1}".utf8), to: path, mode: 0o600)
        let error = #expect(throws: OAuthError.self) { try TokenStore(path: path).load() }
        guard case .corruptTokenFile(let reported, _) = error else {
            Issue.record("expected corruptTokenFile, got \(String(describing: error))")
            return
        }
        #expect(reported == path)
    }
}

@Suite struct TokenProviderTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    struct Fixture {
        let folder: URL
        let store: TokenStore
        init(accessExpiresIn seconds: TimeInterval) throws {
            folder = try Paths.temporaryFolder()
            store = TokenStore(path: folder.path + "/token.json")
            try store.save(
                StoredLogin(
                    refreshToken: "rt-old", accessToken: "at-old",
                    accessTokenExpiresAt: TokenProviderTests.now + seconds, scope: "s"))
        }
        func provider(_ transport: ScriptedTransport) -> TokenProvider {
            TokenProvider(
                client: testClient, store: store, transport: transport,
                now: { TokenProviderTests.now })
        }
        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    @Test func aLiveTokenIsUsedWithoutAsking() throws {
        let fixture = try Fixture(accessExpiresIn: 600)
        defer { fixture.remove() }
        let transport = ScriptedTransport(answers: [])
        #expect(try fixture.provider(transport).accessToken(refreshing: false) == "at-old")
        #expect(transport.sent.isEmpty)
    }

    @Test(arguments: [-10.0, 30.0])
    func anExpiredOrExpiringTokenIsRefreshedAndTheRefreshTokenKept(expiresIn: Double) throws {
        let fixture = try Fixture(accessExpiresIn: expiresIn)
        defer { fixture.remove() }
        let transport = ScriptedTransport(answers: [
            json(200, #"{"access_token":"at-new","expires_in":3599}"#)
        ])
        #expect(try fixture.provider(transport).accessToken(refreshing: false) == "at-new")
        let request = try #require(transport.sent.first)
        #expect(
            formFields(request) == [
                "client_id": testClient.clientID, "client_secret": testClient.clientSecret,
                "grant_type": "refresh_token", "refresh_token": "rt-old",
            ])
        let saved = try #require(try fixture.store.load())
        #expect(saved.accessToken == "at-new")
        #expect(saved.accessTokenExpiresAt == Self.now + 3599)
        #expect(saved.refreshToken == "rt-old")
        #expect(try LocalFile.mode(of: fixture.store.path) == 0o600)
    }

    @Test func aNewRefreshTokenInTheAnswerReplacesTheOldOne() throws {
        let fixture = try Fixture(accessExpiresIn: -1)
        defer { fixture.remove() }
        let transport = ScriptedTransport(answers: [
            json(200, #"{"access_token":"at-new","expires_in":3599,"refresh_token":"rt-new"}"#)
        ])
        _ = try fixture.provider(transport).accessToken(refreshing: false)
        #expect(try fixture.store.load()?.refreshToken == "rt-new")
    }

    @Test func a401ForcesOneRefresh() throws {
        let fixture = try Fixture(accessExpiresIn: 600)
        defer { fixture.remove() }
        let transport = ScriptedTransport(answers: [
            json(200, #"{"access_token":"at-new","expires_in":3599}"#)
        ])
        let provider = fixture.provider(transport)
        #expect(try provider.accessToken(refreshing: false) == "at-old")
        #expect(try provider.accessToken(refreshing: true) == "at-new")
        #expect(try provider.accessToken(refreshing: false) == "at-new")
        #expect(transport.sent.count == 1)
    }

    @Test func invalidGrantMeansRevoked() throws {
        let fixture = try Fixture(accessExpiresIn: -1)
        defer { fixture.remove() }
        let transport = ScriptedTransport(answers: [
            json(
                400,
                #"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#
            )
        ])
        #expect(throws: OAuthError.revoked(tokenFile: fixture.store.path)) {
            try fixture.provider(transport).token(refreshing: false)
        }
        // The file stays: the user may want to look at it; login replaces it.
        #expect(try fixture.store.load()?.refreshToken == "rt-old")
    }

    @Test func anUnreachableTokenEndpointIsATransportError() throws {
        let fixture = try Fixture(accessExpiresIn: -1)
        defer { fixture.remove() }
        let failure = TransportError(kind: .couldNotConnect, message: "refused")
        #expect(throws: OAuthError.transport(failure)) {
            try fixture.provider(ScriptedTransport(answers: [.failure(failure)])).token(
                refreshing: false)
        }
    }

    @Test func noTokenFileMeansNotLoggedIn() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = TokenStore(path: folder.path + "/token.json")
        let provider = TokenProvider(
            client: testClient, store: store, transport: ScriptedTransport(answers: []))
        #expect(throws: OAuthError.notLoggedIn(tokenFile: store.path)) {
            try provider.token(refreshing: false)
        }
    }

    /// Two providers stand for two processes: each has its own lock file descriptor, and
    /// `flock` locks belong to the open file, so they exclude each other as processes do.
    @Test func twoProcessesRefreshingAtOnceSpendOneRefresh() throws {
        let fixture = try Fixture(accessExpiresIn: -1)
        defer { fixture.remove() }
        let transport = ScriptedTransport(answers: [
            json(200, #"{"access_token":"at-new","expires_in":3599}"#),
            json(400, #"{"error":"invalid_grant"}"#),
        ])
        let providers = [fixture.provider(transport), fixture.provider(transport)]
        let tokens = LockedArray()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            tokens.append((try? providers[index].token(refreshing: false)) ?? "failed")
        }
        #expect(tokens.all == ["at-new", "at-new"])
        #expect(transport.sent.count == 1)
        #expect(try fixture.store.load()?.accessToken == "at-new")
    }
}

final class LockedArray: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}

@Suite struct LogoutTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var answers: [ScriptedTransport.Step]
        var expected: Logout.Outcome
        var attempts: Int
        var testDescription: String { name }
    }

    static let refused = TransportError(kind: .couldNotConnect, message: "refused")

    /// FORMAT.md §8.2: network errors, 429 and 5xx are tried again (the policy here allows 3
    /// attempts) before logout gives up; the token file goes whatever happened.
    @Test(arguments: [
        Case(name: "revoked", answers: [answer(200, "{}")], expected: .revoked, attempts: 1),
        Case(
            name: "already dead", answers: [answer(400, #"{"error":"invalid_token"}"#)],
            expected: .revoked, attempts: 1),
        Case(
            name: "a 503, then revoked", answers: [answer(503), answer(200, "{}")],
            expected: .revoked, attempts: 2),
        Case(
            name: "a reset and a 429, then revoked",
            answers: [cut(), answer(429), answer(200, "{}")], expected: .revoked, attempts: 3),
        Case(
            name: "503 every time", answers: Array(repeating: answer(503), count: 3),
            expected: .deletedWithoutRevoking(reason: "the revocation endpoint answered 503"),
            attempts: 3),
        Case(
            name: "unreachable every time",
            answers: Array(repeating: { _ in .failure(refused) }, count: 3),
            expected: .deletedWithoutRevoking(reason: "refused"), attempts: 3),
        Case(
            name: "a refusal is not retried", answers: [answer(401)],
            expected: .deletedWithoutRevoking(reason: "the revocation endpoint answered 401"),
            attempts: 1),
    ])
    func logoutRevokesAndAlwaysDeletes(_ test: Case) throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = TokenStore(path: folder.path + "/token.json")
        try store.save(
            StoredLogin(
                refreshToken: "rt", accessToken: "at", accessTokenExpiresAt: nil, scope: nil))
        let scripted = ScriptedTransport(test.answers)
        let clock = FakeClock()
        let transport = RetryingTransport(
            scripted, policy: RetryPolicy(maxAttempts: 3), clock: clock.clock)
        #expect(
            try Logout.run(store: store, client: testClient, transport: transport) == test.expected)
        #expect(!LocalFile.exists(store.path))
        #expect(scripted.sent.count == test.attempts)
        #expect(clock.sleeps.count == test.attempts - 1)
        for request in scripted.sent {
            #expect(request.url == testClient.revocationEndpoint)
            #expect(formFields(request) == ["token": "rt"])
        }
        #expect(
            try Logout.run(store: store, client: testClient, transport: transport)
                == .wasNotLoggedIn)
        #expect(scripted.sent.count == test.attempts)
    }

    /// A damaged token file holds nothing to revoke: logout deletes it (and says so) instead
    /// of refusing, readable by others or not. A file it cannot read at all is left alone.
    @Test(arguments: [0o600, 0o644])
    func aDamagedTokenFileIsDeletedWithoutRevoking(mode: Int) throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = TokenStore(path: folder.path + "/token.json")
        try LocalFile.writeAtomically(
            Array(#"{"refreshToken": "#.utf8), to: store.path, mode: mode_t(mode))
        let transport = ScriptedTransport([])
        let outcome = try Logout.run(store: store, client: testClient, transport: transport)
        guard case .deletedDamaged(let problem) = outcome else {
            Issue.record("expected deletedDamaged, got \(outcome)")
            return
        }
        #expect(problem.contains("not a token file"))
        #expect(!LocalFile.exists(store.path))
        #expect(transport.sent.isEmpty)
    }

    @Test func aTokenFileThatCannotBeReadIsNotDeleted() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = TokenStore(path: folder.path + "/token.json")
        try FileManager.default.createDirectory(
            atPath: store.path, withIntermediateDirectories: false)
        let error = #expect(throws: OAuthError.self) {
            try Logout.run(store: store, client: testClient, transport: ScriptedTransport([]))
        }
        guard case .file = error else {
            Issue.record("expected a file error, got \(String(describing: error))")
            return
        }
        #expect(LocalFile.exists(store.path))
    }
}
