import Foundation
import Networking
import TestSupport
import Testing

@testable import OAuth

#if canImport(Glibc)
    import Glibc
#endif

/// The real listener and driver, with a scripted browser (curl requests from a background
/// thread) and a scripted token endpoint.
@Suite struct LoopbackLoginTests {
    static let grant = json(
        200,
        #"{"access_token":"at-1","expires_in":3600,"refresh_token":"rt-1","scope":"\#(OAuthClient.driveAppDataScope)"}"#
    )

    /// What the scripted browser saw: one answer per request, or the transport failure.
    final class BrowserLog: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [Result<HTTPResponse, TransportError>] = []
        let done = DispatchGroup()
        func add(_ entry: Result<HTTPResponse, TransportError>) {
            lock.withLock { entries.append(entry) }
        }
        var all: [Result<HTTPResponse, TransportError>] {
            done.wait()
            return lock.withLock { entries }
        }
    }

    /// A browser that requests `targets(state)` in order, each after the previous answer.
    func browser(_ log: BrowserLog, _ targets: @escaping @Sendable (String) -> [String])
        -> (String, UInt16) -> Void
    {
        { url, port in
            let state =
                URLComponents(string: url)?.queryItems?.first { $0.name == "state" }?.value ?? ""
            log.done.enter()
            DispatchQueue.global().async {
                defer { log.done.leave() }
                for target in targets(state) {
                    let request = HTTPRequest(
                        method: "GET", url: "http://127.0.0.1:\(port)\(target)", timeout: 10)
                    log.add(
                        Result { () throws(TransportError) in try CurlTransport().send(request) })
                }
            }
        }
    }

    func statuses(_ log: BrowserLog) -> [Int?] { log.all.map { try? $0.get().status } }

    /// The text of each page the browser was shown.
    func pages(_ log: BrowserLog) -> [String] {
        log.all.map { (try? $0.get()).map { String(decoding: $0.body, as: UTF8.self) } ?? "" }
    }

    @Test func aMismatchedStateIsRefusedAndTheListenerWaitsForTheRightOne() throws {
        let transport = ScriptedTransport(answers: [Self.grant])
        let log = BrowserLog()
        let grant = try Login(client: testClient, transport: transport, timeoutSeconds: 20).run(
            openBrowser: browser(log) { state in
                ["/?state=forged&code=attacker", "/favicon.ico", "/?state=\(state)&code=good-code"]
            })
        #expect(statuses(log) == [400, 404, 200])
        #expect(grant.refreshToken == "rt-1")
        #expect(transport.sent.count == 1)
        #expect(transport.sent.first.map(formFields)?["code"] == "good-code")
    }

    @Test func denialEndsTheLoginWithDenied() throws {
        let transport = ScriptedTransport(answers: [])
        let log = BrowserLog()
        #expect(throws: OAuthError.denied) {
            try Login(client: testClient, transport: transport, timeoutSeconds: 20).run(
                openBrowser: browser(log) { ["/?state=\($0)&error=access_denied"] })
        }
        #expect(statuses(log) == [200])
        #expect(transport.sent.isEmpty)
    }

    @Test func noAnswerTimesOut() throws {
        let started = ContinuousClock.now
        #expect(throws: OAuthError.timedOut(seconds: 1)) {
            try Login(
                client: testClient, transport: ScriptedTransport(answers: []), timeoutSeconds: 1
            ).run {
                _, _ in
            }
        }
        #expect(ContinuousClock.now - started >= .seconds(1))
    }

    @Test func aSecondRequestAfterSuccessIsNotAnswered() throws {
        let transport = ScriptedTransport(answers: [Self.grant])
        let log = BrowserLog()
        var port: UInt16 = 0
        _ = try Login(client: testClient, transport: transport, timeoutSeconds: 20).run {
            url, listening in
            port = listening
            browser(log) { ["/?state=\($0)&code=c1", "/?state=\($0)&code=c2"] }(url, listening)
        }
        let results = log.all
        #expect(results.count == 2)
        #expect((try? results.first?.get())?.status == 200)
        #expect((try? results.last?.get()) == nil)
        #expect(transport.sent.count == 1)
        // And once the login is over, nothing listens there any more.
        let late = #expect(throws: TransportError.self) {
            try CurlTransport().send(
                HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/", timeout: 5))
        }
        #expect(late?.kind == .couldNotConnect)
    }

    @Test func anIdleConnectionDoesNotBlockTheRedirect() throws {
        let transport = ScriptedTransport(answers: [Self.grant])
        let log = BrowserLog()
        var idle: Int32 = -1
        defer { if idle >= 0 { close(idle) } }
        _ = try Login(client: testClient, transport: transport, timeoutSeconds: 20).run {
            url, port in
            // A browser's speculative connection that never sends a request.
            idle = Self.connect(port: port)
            browser(log) { ["/?state=\($0)&code=c"] }(url, port)
        }
        #expect(idle >= 0)
        #expect(statuses(log) == [200])
    }

    /// FORMAT.md §9.1: a network error, 429 or 5xx at the token endpoint is tried again (with the
    /// `Retry-After` asked for) before the login fails, and the browser is told the outcome.
    @Test(arguments: [
        ("503", answer(503), 1.5),
        ("429 with Retry-After", answer(429, headers: [("Retry-After", "7")]), 7),
        ("connection reset", cut(), 1.5),
    ])
    func aBlipAtTheTokenEndpointIsRetriedAndTheLoginSucceeds(
        _ name: String, blip: @escaping ScriptedTransport.Step, wait: Double
    ) throws {
        let transport = ScriptedTransport([blip, { _ in Self.grant }])
        let clock = FakeClock()
        let log = BrowserLog()
        let grant = try Login(
            client: testClient,
            transport: RetryingTransport(transport, policy: RetryPolicy(), clock: clock.clock),
            timeoutSeconds: 20
        ).run(openBrowser: browser(log) { ["/?state=\($0)&code=good-code"] })
        #expect(grant.refreshToken == "rt-1")
        #expect(transport.sent.map { formFields($0)["code"] } == ["good-code", "good-code"])
        #expect(clock.sleeps == [wait])
        #expect(statuses(log) == [200])
        #expect(pages(log).first?.contains(LoginFlow.successPage) == true)
        #expect(pages(log).first?.contains(LoginFlow.failedPage) == false)
    }

    /// A refusal is not retried; transient failures are, up to the policy's attempts. Either
    /// way the browser shows the failure page, not "you can close this tab" alone.
    @Test(arguments: [
        (answer(400, #"{"error":"invalid_grant"}"#), 1, 400),
        (answer(503), 3, 503),
    ])
    func aFailedExchangeEndsTheLoginAndTheBrowserSaysSo(
        failure: @escaping ScriptedTransport.Step, attempts: Int, status: Int
    ) throws {
        let transport = ScriptedTransport(Array(repeating: failure, count: 5))
        let clock = FakeClock()
        let log = BrowserLog()
        let error = #expect(throws: OAuthError.self) {
            try Login(
                client: testClient,
                transport: RetryingTransport(
                    transport, policy: RetryPolicy(maxAttempts: 3), clock: clock.clock),
                timeoutSeconds: 20
            ).run(openBrowser: browser(log) { ["/?state=\($0)&code=c"] })
        }
        guard case .server(_, let reported, _, _, _) = error else {
            Issue.record("expected the token endpoint's answer, got \(String(describing: error))")
            return
        }
        #expect(reported == status)
        #expect(transport.sent.count == attempts)
        #expect(clock.sleeps.count == attempts - 1)
        #expect(statuses(log) == [200])
        #expect(pages(log).first?.contains(LoginFlow.failedPage) == true)
    }

    @Test func theListenerIsBoundToLoopbackOnly() throws {
        let listener = try LoopbackListener()
        let address = try #require(listener.boundAddress)
        #expect(address.host == "127.0.0.1")
        #expect(address.port == listener.port)
        #expect(address.port != 0)
        #expect(listener.redirectURI == "http://127.0.0.1:\(listener.port)/")
    }

    @Test func aChosenPortIsUsedAndABusyOneIsExplained() throws {
        let port = try LocalServer.closedPort()
        let listener = try LoopbackListener(port: port)
        #expect(listener.boundAddress?.port == port)
        let error = #expect(throws: OAuthError.self) { try LoopbackListener(port: port) }
        guard case .listener(let message) = error else {
            Issue.record("expected a listener error, got \(String(describing: error))")
            return
        }
        #expect(message.contains("127.0.0.1:\(port)"))
        #expect(message.contains("--port"))
    }

    static func connect(port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0 ? fd : -1
    }
}
