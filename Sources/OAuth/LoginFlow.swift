import Foundation
import Networking

/// The login protocol as a pure state machine (RFC 6749 §4.1 with PKCE, RFC 8252 loopback
/// redirect). It never touches a socket or a clock: each mutating method takes one event and
/// returns the actions the driver must perform, in order.
///
/// Worked example, a user who first reloads an old tab and then logs in:
///
///     start()                          → [.openBrowser(url), .waitForRedirect]
///     received(GET /?state=OLD&code=x) → [.answer(400, .stateMismatch), .waitForRedirect]
///     received(GET /favicon.ico)       → [.answer(404, .notFound), .waitForRedirect]
///     received(GET /?state=S&code=c)   → [.redirect(to: /done), .send(exchange)]
///     tokenAnswer(200 {…})             → [.finish(grant)]
///     received(GET /done)              → [.answer(200, .success)]
///
/// Exactly one redirect is accepted: the one carrying our `state`. After it, the machine
/// leaves the waiting state, so a second redirect can never start a second exchange. That
/// redirect is answered at once with a 303 to `resultPath`, so the code leaves the address
/// bar and the history; the browser's request for `resultPath` waits (in the listener's
/// backlog) until the exchange is over and then gets the outcome's page, so the browser says
/// whether the login worked. After the outcome the driver keeps answering for a moment (see
/// `Login.linger`): `resultPath` shows the outcome again (a reload), another redirect is sent
/// there too (a second click on Google's Continue), anything else is told the login is over.
///
/// On a machine without a browser the redirect also arrives as a line the user pasted (the
/// address the browser on another device could not load), while the listener keeps waiting:
///
///     pasted("not a url")                      → [.refusePaste(reason), .waitForRedirect]
///     pasted("'http://127.0.0.1:1/?state=S&code=c'") → [.send(exchange)]
///     tokenAnswer(200 {…})                     → [.finish(grant)]
///
/// A pasted line is checked like a redirect, but nothing is answered to a browser for it,
/// and a refused one (wrong `state`, `error=access_denied`, not a redirect at all) only
/// costs one of `pasteTries`: the user may open the URL again and paste anew.
public struct LoginFlow: Sendable {
    public enum Action: Sendable, Equatable {
        /// Print the URL and open a browser on it.
        case openBrowser(url: String)
        /// Accept the next request on the loopback listener (until the deadline).
        case waitForRedirect
        /// Answer the request last received with a page.
        case answer(status: Int, page: LoginPage)
        /// Answer the request last received with a 303 See Other to `location`.
        case redirect(to: String)
        /// Exchange the code at the token endpoint; report with `tokenAnswer`.
        case send(HTTPRequest)
        /// Send a request whose answer changes nothing: revoking a grant that is not kept,
        /// so it does not stay live in the user's Google account.
        case sendAndForget(HTTPRequest)
        /// Tell the user, in one line, why the pasted line was not taken.
        case refusePaste(reason: String)
        case finish(TokenGrant)
        case fail(OAuthError)
    }

    enum Phase: Sendable, Equatable {
        case ready, waitingForRedirect
        /// `pasted`: the code came from a pasted line, so no browser waits for a page.
        case exchangingCode(pasted: Bool)
        /// `outcome`: the page a browser is shown for how the login ended; nil when no
        /// browser took part (a pasted code, a timeout).
        case finished(outcome: LoginPage?)
    }

    /// The clean path the browser is sent to for the outcome, away from the code.
    public static let resultPath = "/done"

    public static let pasteTries = 3

    private let client: OAuthClient
    private let pkce: PKCE
    private let state: String
    private let redirectURI: String
    private let redirectPath: String
    private(set) var phase = Phase.ready
    private(set) var pasteTriesLeft = pasteTries
    /// 303s to `resultPath` sent but not yet followed by the browser.
    private(set) var unfollowedRedirects = 0

    /// Whether a browser took part and may still ask for the outcome page.
    public var answersAfterOutcome: Bool {
        guard case .finished(let outcome) = phase else { return false }
        return outcome != nil
    }

    /// Whether a 303 to the outcome page is still to be followed.
    public var awaitsBrowser: Bool { unfollowedRedirects > 0 }

    public init(client: OAuthClient, pkce: PKCE, state: String, redirectURI: String) {
        self.client = client
        self.pkce = pkce
        self.state = state
        self.redirectURI = redirectURI
        self.redirectPath = URLComponents(string: redirectURI)?.path.nonEmpty ?? "/"
    }

    public mutating func start() -> [Action] {
        guard phase == .ready else { return [] }
        phase = .waitingForRedirect
        return [
            .openBrowser(
                url: client.authorizationURL(pkce: pkce, state: state, redirectURI: redirectURI)),
            .waitForRedirect,
        ]
    }

    /// One HTTP request arrived on the listener: `target` is the request line's
    /// path-and-query, e.g. `/?state=…&code=…`.
    public mutating func received(method: String, target: String) -> [Action] {
        let components = URLComponents(string: "http://127.0.0.1" + target)
        switch phase {
        case .waitingForRedirect:
            let answer = waiting(method: method, components)
            return answer + (phase == .waitingForRedirect ? [.waitForRedirect] : [])
        case .finished(let outcome?):
            return afterOutcome(outcome, method: method, components)
        default:
            return [.answer(status: 404, page: .notFound)]
        }
    }

    /// The answer to a request while the redirect is awaited; the caller goes on waiting
    /// unless this ended the wait.
    private mutating func waiting(method: String, _ components: URLComponents?) -> [Action] {
        guard let components else { return [.answer(status: 400, page: .badRequest)] }
        guard method == "GET", components.path == redirectPath else {
            return [.answer(status: 404, page: .notFound)]
        }
        let items = components.queryItems ?? []
        // Someone opened the listener's address by hand: say what it is.
        guard !items.isEmpty else { return [.answer(status: 200, page: .listener)] }
        switch redirect(items) {
        case .mismatch, .noCode:
            return [.answer(status: 400, page: .stateMismatch)]
        case .error("access_denied"):
            phase = .finished(outcome: .denied)
            return [.answer(status: 200, page: .denied), .fail(.denied)]
        case .error(let error):
            phase = .finished(outcome: .failed(error: error))
            return [
                .answer(status: 200, page: .failed(error: error)),
                .fail(.authorizationFailed(error: error)),
            ]
        case .code(let code):
            unfollowedRedirects += 1
            return [.redirect(to: Self.resultPath)] + exchange(code, pasted: false)
        }
    }

    /// The answer to a request once the login has ended and a browser took part.
    private mutating func afterOutcome(
        _ outcome: LoginPage, method: String, _ components: URLComponents?
    ) -> [Action] {
        guard method == "GET", let components else {
            return [.answer(status: 404, page: .notFound)]
        }
        switch components.path {
        case Self.resultPath:
            unfollowedRedirects = max(0, unfollowedRedirects - 1)
            return [.answer(status: 200, page: outcome)]
        case redirectPath where !(components.queryItems ?? []).isEmpty:
            // A second redirect (a double click on Continue): its code must leave the
            // address bar too; it is never exchanged.
            unfollowedRedirects += 1
            return [.redirect(to: Self.resultPath)]
        case redirectPath:
            return [.answer(status: 200, page: .finished)]
        default:
            return [.answer(status: 404, page: .notFound)]
        }
    }

    /// The user pasted `line` into the terminal: the whole address the browser ended on, or
    /// just its query, maybe with spaces or quotes around it.
    public mutating func pasted(_ line: String) -> [Action] {
        guard phase == .waitingForRedirect else { return [] }
        let reason: String
        switch Self.queryItems(pasted: line).map(redirect) {
        case .code(let code):
            return exchange(code, pasted: true)
        case .mismatch:
            reason =
                "that address belongs to another login (its state does not match); open the URL printed above and paste the address it ends on"
        case .error("access_denied"):
            reason =
                "that address says access was not granted; open the URL again, allow access, and paste the new address"
        case .error(let error):
            reason =
                "that address carries error=\(error) instead of a code; open the URL again and paste the new address"
        case .noCode, nil:
            reason =
                "that is not the address the login ended on (expected one with state= and code=); copy the whole address from the browser's address bar"
        }
        pasteTriesLeft -= 1
        guard pasteTriesLeft > 0 else {
            phase = .finished(outcome: nil)
            return [.fail(.pasteRefused(reason: reason))]
        }
        let left = pasteTriesLeft == 1 ? "1 try left" : "\(pasteTriesLeft) tries left"
        return [.refusePaste(reason: reason + " (\(left))"), .waitForRedirect]
    }

    /// What a redirect's query says, our `state` checked first.
    private enum Redirect: Equatable {
        case mismatch, noCode
        case error(String)
        case code(String)
    }

    private func redirect(_ items: [URLQueryItem]) -> Redirect {
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard let returnedState = value("state"), Self.constantTimeEqual(returnedState, state)
        else { return value("state") == nil ? .noCode : .mismatch }
        if let error = value("error") { return .error(error) }
        guard let code = value("code"), !code.isEmpty else { return .noCode }
        return .code(code)
    }

    private mutating func exchange(_ code: String, pasted: Bool) -> [Action] {
        phase = .exchangingCode(pasted: pasted)
        return [
            .send(client.codeExchangeRequest(code: code, pkce: pkce, redirectURI: redirectURI))
        ]
    }

    /// The query of a pasted line, or nil when it cannot be one. Terminals and chat apps
    /// add spaces, quotes or angle brackets around a copied address; they are dropped.
    static func queryItems(pasted line: String) -> [URLQueryItem]? {
        var text = Substring(line.trimmingCharacters(in: .whitespacesAndNewlines))
        while let first = text.first, let last = text.last, text.count >= 2,
            ["\"\"", "''", "<>"].contains(String([first, last]))
        {
            text = Substring(text.dropFirst().dropLast().trimmingCharacters(in: .whitespaces))
        }
        guard !text.isEmpty, !text.contains(where: \.isWhitespace) else { return nil }
        let address =
            text.contains("://") ? String(text) : "http://127.0.0.1/?" + text.drop { $0 == "?" }
        return URLComponents(string: address)?.queryItems
    }

    /// The deadline passed while waiting for the redirect.
    public mutating func timedOut(after seconds: Int) -> [Action] {
        guard phase == .waitingForRedirect else { return [] }
        phase = .finished(outcome: nil)
        return [.fail(.timedOut(seconds: seconds))]
    }

    public mutating func tokenAnswer(_ response: HTTPResponse, now: Date) -> [Action] {
        guard case .exchangingCode(let pasted) = phase else { return [] }
        switch client.newLogin(response, now: now) {
        case .granted(let grant):
            phase = .finished(outcome: pasted ? nil : .success)
            return [.finish(grant)]
        case .refused(let error, let revoke):
            phase = .finished(outcome: pasted ? nil : Self.page(for: error))
            return (revoke.map { [.sendAndForget($0)] } ?? []) + [.fail(error)]
        }
    }

    /// The browser's page for an exchange that did not give a login.
    static func page(for error: OAuthError) -> LoginPage {
        switch error {
        case .scopeNotGranted: .driveNotTicked
        case .server(_, _, let error, _, _): .failed(error: error)
        default: .failed(error: nil)
        }
    }

    public mutating func transportFailed(_ error: TransportError) -> [Action] {
        guard case .exchangingCode(let pasted) = phase else { return [] }
        phase = .finished(outcome: pasted ? nil : .failed(error: nil))
        return [.fail(.transport(error))]
    }

    /// `state` is a secret of sorts: compare without an early exit.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
