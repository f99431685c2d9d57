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
    /// How long the listener keeps answering once the outcome is known.
    public var linger: Duration
    public var now: @Sendable () -> Date

    /// A reload, or a second click on Google's Continue, sent while the code exchange runs
    /// or just after, must get a page, not the browser's "This site can't be reached" for a
    /// login that worked. 3 s covers a person's reload as the page appears, and holds the
    /// command's exit back little.
    public static let defaultLinger = Duration.seconds(3)

    /// How long, at most, the listener waits for the browser to follow a 303 to the outcome
    /// page (past `linger`). A browser follows one at once; this only bounds a browser that
    /// went away, so that it cannot hold the command for the whole login timeout.
    static let followWait = Duration.seconds(10)

    public init(
        client: OAuthClient, transport: any HTTPTransport, port: UInt16 = 0,
        timeoutSeconds: Int = 300, linger: Duration = defaultLinger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        self.transport = transport
        self.port = port
        self.timeoutSeconds = timeoutSeconds
        self.linger = linger
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
            case .answer, .redirect:
                answer(action, on: listener)
            case .send(let request):
                do {
                    actions += flow.tokenAnswer(try transport.send(request), now: now())
                } catch {
                    actions += flow.transportFailed(error)
                }
            case .sendAndForget(let request):
                _ = try? transport.send(request)
            case .finish(let grant):
                lingerOn(listener, &flow)
                return grant
            case .fail(let error):
                lingerOn(listener, &flow)
                throw error
            }
        }
        preconditionFailure("LoginFlow ended without finishing or failing")
    }

    private func answer(_ action: LoginFlow.Action, on listener: LoopbackListener) {
        switch action {
        case .answer(let status, let page): listener.answer(status: status, page: page)
        case .redirect(let location): listener.redirect(to: location)
        default: preconditionFailure("\(action) is not an answer to the browser")
        }
    }

    /// Answers the browser for `linger` after the outcome (longer while a 303 to the outcome
    /// page is unfollowed), then returns; what already arrived by then is still answered.
    /// The login is over: a listener failure now only ends the answering.
    private func lingerOn(_ listener: LoopbackListener, _ flow: inout LoginFlow) {
        guard flow.answersAfterOutcome else { return }
        let start = ContinuousClock.now
        while true {
            let end = start + (flow.awaitsBrowser ? max(linger, Self.followWait) : linger)
            guard case .request(let method, let target) = try? listener.nextEvent(until: end)
            else { return }
            for action in flow.received(method: method, target: target) {
                answer(action, on: listener)
            }
        }
    }
}
