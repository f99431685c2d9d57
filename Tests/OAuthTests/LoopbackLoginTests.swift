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

    /// A browser that requests `targets(state)` in order, each after the previous answer,
    /// following a 303 to its Location (both answers are logged).
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
                    var next: String? = target
                    while let path = next {
                        let request = HTTPRequest(
                            method: "GET", url: "http://127.0.0.1:\(port)\(path)", timeout: 10)
                        let answer = Result { () throws(TransportError) in
                            try CurlTransport().send(request)
                        }
                        log.add(answer)
                        let response = try? answer.get()
                        next = response?.status == 303 ? response?.header("Location") : nil
                    }
                }
            }
        }
    }

    func statuses(_ log: BrowserLog) -> [Int?] { log.all.map { try? $0.get().status } }

    /// The `<title>` of each page the browser was shown ("" for none).
    func titles(_ log: BrowserLog) -> [String] {
        pages(log).map { page in
            guard let start = page.range(of: "<title>"), let end = page.range(of: "</title>")
            else { return "" }
            return String(page[start.upperBound..<end.lowerBound])
        }
    }

    /// A login whose listener stops answering as soon as the outcome page is fetched.
    func login(_ transport: any HTTPTransport, linger: Duration = .zero) -> Login {
        Login(client: testClient, transport: transport, timeoutSeconds: 20, linger: linger)
    }

    /// The text of each page the browser was shown.
    func pages(_ log: BrowserLog) -> [String] {
        log.all.map { (try? $0.get()).map { String(decoding: $0.body, as: UTF8.self) } ?? "" }
    }

    @Test func aMismatchedStateIsRefusedAndTheListenerWaitsForTheRightOne() throws {
        let transport = ScriptedTransport(answers: [Self.grant])
        let log = BrowserLog()
        let grant = try login(transport).run(
            openBrowser: browser(log) { state in
                ["/?state=forged&code=attacker", "/favicon.ico", "/?state=\(state)&code=good-code"]
            })
        #expect(statuses(log) == [400, 404, 303, 200])
        #expect(grant.refreshToken == "rt-1")
        #expect(transport.sent.count == 1)
        #expect(transport.sent.first.map(formFields)?["code"] == "good-code")
    }

    @Test func denialEndsTheLoginWithDenied() throws {
        let transport = ScriptedTransport(answers: [])
        let log = BrowserLog()
        #expect(throws: OAuthError.denied) {
            try login(transport).run(
                openBrowser: browser(log) { ["/?state=\($0)&error=access_denied"] })
        }
        #expect(statuses(log) == [200])
        #expect(titles(log) == [LoginPage.denied.title])
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

    struct OutcomeCase: Sendable, CustomTestStringConvertible {
        var name: String
        var token: Result<HTTPResponse, TransportError>
        var targets: @Sendable (_ state: String) -> [String]
        var statuses: [Int]
        var titles: [String]
        var testDescription: String { name }
    }

    /// Every outcome's page, as the browser sees it: its status and a title that says which
    /// outcome it is. A code is never left in the address bar: it is sent on with a 303.
    @Test(arguments: [
        OutcomeCase(
            name: "success", token: grant, targets: { ["/?state=\($0)&code=c"] },
            statuses: [303, 200], titles: ["", LoginPage.success.title]),
        OutcomeCase(
            name: "Drive box not ticked",
            token: json(
                200,
                #"{"access_token":"at","expires_in":3600,"refresh_token":"rt","scope":"openid"}"#),
            targets: { ["/?state=\($0)&code=c"] }, statuses: [303, 200],
            titles: ["", LoginPage.driveNotTicked.title]),
        OutcomeCase(
            name: "exchange failed", token: json(400, #"{"error":"invalid_grant"}"#),
            targets: { ["/?state=\($0)&code=c"] }, statuses: [303, 200],
            titles: ["", LoginPage.failed(error: nil).title]),
        OutcomeCase(
            name: "denied", token: grant, targets: { ["/?state=\($0)&error=access_denied"] },
            statuses: [200], titles: [LoginPage.denied.title]),
        OutcomeCase(
            name: "state mismatch, a bare /, a favicon, then success", token: grant,
            targets: { ["/?state=old&code=x", "/", "/favicon.ico", "/?state=\($0)&code=c"] },
            statuses: [400, 200, 404, 303, 200],
            titles: [
                LoginPage.stateMismatch.title, LoginPage.listener.title, LoginPage.notFound.title,
                "", LoginPage.success.title,
            ]),
    ])
    func eachOutcomeHasItsOwnPage(_ outcome: OutcomeCase) throws {
        let log = BrowserLog()
        _ = try? login(ScriptedTransport(answers: [outcome.token])).run(
            openBrowser: browser(log, outcome.targets))
        #expect(statuses(log) == outcome.statuses)
        #expect(titles(log) == outcome.titles)
        for answer in log.all {
            let response = try answer.get()
            let location = response.header("Location")
            #expect(location == (response.status == 303 ? LoginFlow.resultPath : nil))
        }
        for page in pages(log) where !page.isEmpty {
            #expect(page.contains(#"<meta name="viewport" content="width=device-width"#))
            #expect(!page.contains("code=") && !page.contains("at-1") && !page.contains("rt-1"))
        }
    }

    /// The browser the way Chromium behaves while the exchange is slow: it follows the 303
    /// on one connection, asks for the favicon on another it keeps open (keep-alive) and
    /// asks on it again once answered, and the user reloads after the page appears. Every
    /// request gets a page, and the code is exchanged once.
    @Test func requestsDuringAndJustAfterASlowExchangeAreAnswered() throws {
        let browserWaiting = DispatchSemaphore(value: 0)
        let transport = ScriptedTransport([
            { _ in
                // The exchange is slow until the browser has sent all it sends meanwhile.
                browserWaiting.wait()
                return Self.grant
            }
        ])
        let seen = Seen()
        let done = DispatchGroup()
        _ = try login(transport, linger: .seconds(2)).run { url, port in
            let state =
                URLComponents(string: url)?.queryItems?.first { $0.name == "state" }?.value ?? ""
            done.enter()
            DispatchQueue.global().async {
                defer { done.leave() }
                do {
                    let redirect = try RawConnection(port: port)
                    try redirect.send("/?state=\(state)&code=c")
                    seen.add("redirect", try redirect.response())
                    let followed = try RawConnection(port: port)
                    try followed.send(LoginFlow.resultPath)
                    let keptAlive = try RawConnection(port: port)
                    try keptAlive.send("/favicon.ico")
                    browserWaiting.signal()
                    seen.add("followed", try followed.response())
                    seen.add("favicon", try keptAlive.response())
                    try keptAlive.send(LoginFlow.resultPath)
                    seen.add("second on kept-alive", try keptAlive.response())
                    let reload = try RawConnection(port: port)
                    try reload.send(LoginFlow.resultPath)
                    seen.add("reload", try reload.response())
                } catch {
                    browserWaiting.signal()
                    seen.add("failure", RawAnswer(status: 0, headers: [:], text: ""))
                    Issue.record("the browser got no answer: \(error)")
                }
            }
        }
        done.wait()
        let success = LoginPage.success.title
        #expect(
            seen.all.map { "\($0.0) \($0.1.status) \(Self.title($0.1.text))" } == [
                "redirect 303 ", "followed 200 \(success)",
                "favicon 404 \(LoginPage.notFound.title)",
                "second on kept-alive 200 \(success)", "reload 200 \(success)",
            ])
        #expect(seen.all.first?.1.headers["location"] == LoginFlow.resultPath)
        #expect(transport.sent.count == 1)
    }

    /// Once the window has passed, nothing listens there any more.
    @Test func afterTheLingerTheListenerIsClosed() throws {
        let log = BrowserLog()
        var port: UInt16 = 0
        _ = try login(ScriptedTransport(answers: [Self.grant])).run { url, listening in
            port = listening
            browser(log) { ["/?state=\($0)&code=c"] }(url, listening)
        }
        #expect(statuses(log) == [303, 200])
        let late = #expect(throws: TransportError.self) {
            try CurlTransport().send(
                HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/", timeout: 5))
        }
        #expect(late?.kind == .couldNotConnect)
    }

    static func title(_ page: String) -> String {
        guard let start = page.range(of: "<title>"), let end = page.range(of: "</title>") else {
            return ""
        }
        return String(page[start.upperBound..<end.lowerBound])
    }

    /// What the raw browser connections were answered, in order.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [(String, RawAnswer)] = []
        func add(_ step: String, _ response: RawAnswer) {
            lock.withLock { entries.append((step, response)) }
        }
        var all: [(String, RawAnswer)] { lock.withLock { entries } }
    }

    struct RawAnswer {
        var status: Int
        /// Names lower-cased.
        var headers: [String: String]
        var text: String
    }

    struct RawError: Error { var description: String }

    /// One browser connection that may carry several requests (HTTP/1.1 keep-alive), read
    /// by `Content-Length` as a browser does.
    final class RawConnection {
        let fd: Int32
        var buffer: [UInt8] = []

        init(port: UInt16) throws {
            fd = LoopbackLoginTests.connect(port: port)
            guard fd >= 0 else { throw RawError(description: "cannot connect") }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        func send(_ target: String) throws {
            let request = Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            guard Glibc.send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count
            else {
                throw RawError(description: "cannot send")
            }
        }

        func response() throws -> RawAnswer {
            while true {
                if let end = (0..<max(0, buffer.count - 3)).first(where: {
                    buffer[$0..<$0 + 4].elementsEqual(Array("\r\n\r\n".utf8))
                }) {
                    let lines = String(decoding: buffer[..<end], as: UTF8.self).components(
                        separatedBy: "\r\n")
                    var headers: [String: String] = [:]
                    for line in lines.dropFirst() {
                        let parts = line.split(separator: ":", maxSplits: 1)
                        headers[parts[0].lowercased()] = parts.dropFirst().first.map {
                            $0.trimmingCharacters(in: .whitespaces)
                        }
                    }
                    let length = Int(headers["content-length"] ?? "0") ?? 0
                    if buffer.count >= end + 4 + length {
                        let body = String(
                            decoding: buffer[(end + 4)..<(end + 4 + length)], as: UTF8.self)
                        buffer.removeFirst(end + 4 + length)
                        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
                        return RawAnswer(status: status, headers: headers, text: body)
                    }
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let got = recv(fd, &chunk, chunk.count, 0)
                guard got > 0 else {
                    throw RawError(description: "the connection ended without an answer")
                }
                buffer += chunk[..<got]
            }
        }
    }

    @Test func anIdleConnectionDoesNotBlockTheRedirect() throws {
        let transport = ScriptedTransport(answers: [Self.grant])
        let log = BrowserLog()
        var idle: Int32 = -1
        defer { if idle >= 0 { close(idle) } }
        _ = try login(transport).run {
            url, port in
            // A browser's speculative connection that never sends a request.
            idle = Self.connect(port: port)
            browser(log) { ["/?state=\($0)&code=c"] }(url, port)
        }
        #expect(idle >= 0)
        #expect(statuses(log) == [303, 200])
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
        let grant = try login(
            RetryingTransport(transport, policy: RetryPolicy(), clock: clock.clock)
        ).run(openBrowser: browser(log) { ["/?state=\($0)&code=good-code"] })
        #expect(grant.refreshToken == "rt-1")
        #expect(transport.sent.map { formFields($0)["code"] } == ["good-code", "good-code"])
        #expect(clock.sleeps == [wait])
        #expect(statuses(log) == [303, 200])
        #expect(titles(log).last == LoginPage.success.title)
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
            try login(
                RetryingTransport(
                    transport, policy: RetryPolicy(maxAttempts: 3), clock: clock.clock)
            ).run(openBrowser: browser(log) { ["/?state=\($0)&code=c"] })
        }
        guard case .server(_, let reported, _, _, _) = error else {
            Issue.record("expected the token endpoint's answer, got \(String(describing: error))")
            return
        }
        #expect(reported == status)
        #expect(transport.sent.count == attempts)
        #expect(clock.sleeps.count == attempts - 1)
        #expect(statuses(log) == [303, 200])
        #expect(titles(log).last == LoginPage.failed(error: nil).title)
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
