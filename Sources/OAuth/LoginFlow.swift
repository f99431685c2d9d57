import Foundation
import Networking

/// The login protocol as a pure state machine (RFC 6749 §4.1 with PKCE, RFC 8252 loopback
/// redirect). It never touches a socket or a clock: each mutating method takes one event and
/// returns the actions the driver must perform, in order.
///
/// Worked example, a user who first reloads an old tab and then logs in:
///
///     start()                          → [.openBrowser(url), .waitForRedirect]
///     received(GET /?state=OLD&code=x) → [.answer(400, mismatch page), .waitForRedirect]
///     received(GET /favicon.ico)       → [.answer(404, …), .waitForRedirect]
///     received(GET /?state=S&code=c)   → [.send(exchange)]
///     tokenAnswer(200 {…})             → [.answer(200, close-this-tab page), .finish(grant)]
///
/// Exactly one redirect is accepted: the one carrying our `state`. After it, the machine
/// leaves the waiting state, so a second redirect can never start a second exchange. That
/// redirect is answered only once the exchange is over, so the browser says whether the
/// login worked: a failed exchange shows the failure page, not "you can close this tab".
public struct LoginFlow: Sendable {
    public enum Action: Sendable, Equatable {
        /// Print the URL and open a browser on it.
        case openBrowser(url: String)
        /// Accept the next request on the loopback listener (until the deadline).
        case waitForRedirect
        /// Answer the request last received, then close its connection.
        case answer(status: Int, page: String)
        /// Exchange the code at the token endpoint; report with `tokenAnswer`. The redirect
        /// that brought the code is still unanswered.
        case send(HTTPRequest)
        /// Send a request whose answer changes nothing: revoking a grant that is not kept,
        /// so it does not stay live in the user's Google account.
        case sendAndForget(HTTPRequest)
        case finish(TokenGrant)
        case fail(OAuthError)
    }

    enum Phase: Sendable, Equatable {
        case ready, waitingForRedirect, exchangingCode, finished
    }

    public static let successPage = "You can close this tab and return to the terminal."
    public static let deniedPage =
        "Access was not granted, so cloudbackup is not logged in. You can close this tab and return to the terminal."
    public static let failedPage =
        "The login did not succeed. You can close this tab and return to the terminal."
    public static let mismatchPage =
        "This answer does not belong to the login cloudbackup is waiting for (the state does not match). Start the login from the URL the terminal printed."
    public static let notFoundPage = "Not found."

    private let client: OAuthClient
    private let pkce: PKCE
    private let state: String
    private let redirectURI: String
    private let redirectPath: String
    private(set) var phase = Phase.ready

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
        guard phase == .waitingForRedirect else {
            return [.answer(status: 404, page: Self.notFoundPage)]
        }
        guard let components = URLComponents(string: "http://127.0.0.1" + target) else {
            return [.answer(status: 400, page: Self.mismatchPage), .waitForRedirect]
        }
        guard method == "GET", components.path == redirectPath else {
            return [.answer(status: 404, page: Self.notFoundPage), .waitForRedirect]
        }
        let items = components.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard let returnedState = value("state"), Self.constantTimeEqual(returnedState, state)
        else {
            return [.answer(status: 400, page: Self.mismatchPage), .waitForRedirect]
        }
        if let error = value("error") {
            phase = .finished
            if error == "access_denied" {
                return [.answer(status: 200, page: Self.deniedPage), .fail(.denied)]
            }
            return [
                .answer(status: 200, page: Self.failedPage),
                .fail(.authorizationFailed(error: error)),
            ]
        }
        guard let code = value("code"), !code.isEmpty else {
            return [.answer(status: 400, page: Self.mismatchPage), .waitForRedirect]
        }
        phase = .exchangingCode
        return [
            .send(client.codeExchangeRequest(code: code, pkce: pkce, redirectURI: redirectURI))
        ]
    }

    /// The deadline passed while waiting for the redirect.
    public mutating func timedOut(after seconds: Int) -> [Action] {
        guard phase == .waitingForRedirect else { return [] }
        phase = .finished
        return [.fail(.timedOut(seconds: seconds))]
    }

    public mutating func tokenAnswer(_ response: HTTPResponse, now: Date) -> [Action] {
        guard phase == .exchangingCode else { return [] }
        phase = .finished
        let failed = Action.answer(status: 200, page: Self.failedPage)
        do {
            let grant = try client.readGrant(response, now: now)
            guard let refreshToken = grant.refreshToken else {
                return [
                    failed,
                    .fail(
                        .malformedAnswer(
                            endpoint: client.tokenEndpoint,
                            problem: "the answer carries no refresh_token")),
                ]
            }
            let missing = client.scopesMissing(from: grant.scope)
            guard missing.isEmpty else {
                // The browser is answered first: it need not wait for the revocation.
                return [
                    failed, .sendAndForget(client.revocationRequest(token: refreshToken)),
                    .fail(.scopeNotGranted(missing: missing)),
                ]
            }
            return [.answer(status: 200, page: Self.successPage), .finish(grant)]
        } catch {
            return [failed, .fail(error)]
        }
    }

    public mutating func transportFailed(_ error: TransportError) -> [Action] {
        guard phase == .exchangingCode else { return [] }
        phase = .finished
        return [.answer(status: 200, page: Self.failedPage), .fail(.transport(error))]
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
