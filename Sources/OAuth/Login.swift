import Foundation
import Networking

/// Performs the actions of `LoginFlow` with real I/O: the loopback listener, the browser
/// launcher the caller supplies, and the HTTP transport. All decisions stay in the flow.
/// Retrying the code exchange after a blip is the transport's job (the CLI passes a
/// `RetryingTransport`); the browser waits for the outcome meanwhile.
public struct Login {
    public var client: OAuthClient
    public var transport: any HTTPTransport
    /// 0: any free port.
    public var port: UInt16
    public var timeoutSeconds: Int
    public var now: @Sendable () -> Date

    public init(
        client: OAuthClient, transport: any HTTPTransport, port: UInt16 = 0,
        timeoutSeconds: Int = 300,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        self.transport = transport
        self.port = port
        self.timeoutSeconds = timeoutSeconds
        self.now = now
    }

    /// Runs the login to its end. `openBrowser` is called once with the authorization URL
    /// and the listener's port, after the listener is up (so a fast browser finds it) and
    /// must not wait for the browser to exit. With `pasted`, lines read from it count as
    /// redirects too (whichever arrives first wins); `refused` hears why a line was not.
    public func run(
        openBrowser: (_ url: String, _ port: UInt16) -> Void, pasted: LineReader? = nil,
        refused: (_ reason: String) -> Void = { _ in }
    ) throws(OAuthError) -> TokenGrant {
        let listener = try LoopbackListener(port: port)
        var flow = LoginFlow(
            client: client, pkce: try PKCE.random(), state: try LoginState.random(),
            redirectURI: listener.redirectURI)
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        // Lines read together (a paste of several) are taken one per wait.
        var lines: [String] = []
        var actions = flow.start()
        while !actions.isEmpty {
            let action = actions.removeFirst()
            switch action {
            case .openBrowser(let url):
                openBrowser(url, listener.port)
            case .waitForRedirect:
                if !lines.isEmpty {
                    actions += flow.pasted(lines.removeFirst())
                    continue
                }
                let input = pasted.flatMap { $0.ended ? nil : $0.fd }
                switch try listener.nextEvent(until: deadline, input: input) {
                case .request(let method, let target):
                    actions += flow.received(method: method, target: target)
                case .inputReadable:
                    lines = pasted?.readLines() ?? []
                    actions.insert(.waitForRedirect, at: 0)
                case .timedOut:
                    actions += flow.timedOut(after: timeoutSeconds)
                }
            case .refusePaste(let reason):
                refused(reason)
            case .answer(let status, let page):
                listener.answer(status: status, page: page)
            case .send(let request):
                do {
                    actions += flow.tokenAnswer(try transport.send(request), now: now())
                } catch {
                    actions += flow.transportFailed(error)
                }
            case .sendAndForget(let request):
                _ = try? transport.send(request)
            case .finish(let grant):
                return grant
            case .fail(let error):
                throw error
            }
        }
        preconditionFailure("LoginFlow ended without finishing or failing")
    }
}
