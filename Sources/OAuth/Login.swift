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
    /// must not wait for the browser to exit.
    public func run(openBrowser: (_ url: String, _ port: UInt16) -> Void) throws(OAuthError)
        -> TokenGrant
    {
        let listener = try LoopbackListener(port: port)
        var flow = LoginFlow(
            client: client, pkce: try PKCE.random(), state: try LoginState.random(),
            redirectURI: listener.redirectURI)
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        var actions = flow.start()
        while !actions.isEmpty {
            let action = actions.removeFirst()
            switch action {
            case .openBrowser(let url):
                openBrowser(url, listener.port)
            case .waitForRedirect:
                if let request = try listener.nextRequest(until: deadline) {
                    actions += flow.received(method: request.method, target: request.target)
                } else {
                    actions += flow.timedOut(after: timeoutSeconds)
                }
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

/// `cloudbackup logout`: revoke at the server, then delete the token file whatever the
/// server said, so a logout always leaves no usable token on disk. A damaged token file is
/// deleted too: it holds no token to revoke, and keeping it would leave every command of the
/// profile saying "delete it". A file readable by others is read all the same: logout is how
/// to get rid of it.
///
/// The revocation is tried again on network errors, 429 and 5xx when `transport` does so
/// (the CLI passes a `RetryingTransport`): a one-off blip must not leave the token live at
/// Google after its only local copy is gone.
public enum Logout {
    public enum Outcome: Sendable, Equatable {
        /// There was no token file.
        case wasNotLoggedIn
        /// Revoked at the server, or the server already considered it dead (400).
        case revoked
        /// Deleted locally, but the server was not reached or refused; the message says why.
        case deletedWithoutRevoking(reason: String)
        /// The token file was not a readable login (`problem` says why): deleted, and
        /// nothing could be revoked.
        case deletedDamaged(problem: String)
    }

    public static func run(store: TokenStore, client: OAuthClient, transport: any HTTPTransport)
        throws(OAuthError) -> Outcome
    {
        // Under the refresh lock, so a refresh running in another process cannot write the
        // file back after it was deleted.
        try store.withLock { () throws(OAuthError) -> Outcome in
            let loaded: StoredLogin?
            do throws(OAuthError) {
                loaded = try store.load(checkingMode: false)
            } catch {
                guard let problem = Self.damage(error) else { throw error }
                try store.delete()
                return .deletedDamaged(problem: problem)
            }
            guard let login = loaded else { return .wasNotLoggedIn }
            let outcome: Outcome
            do throws(TransportError) {
                // Revoking the refresh token also ends every access token issued from it.
                let response = try transport.send(
                    client.revocationRequest(token: login.refreshToken))
                switch response.status {
                case 200..<300, 400:
                    outcome = .revoked
                default:
                    outcome = .deletedWithoutRevoking(
                        reason: "the revocation endpoint answered \(response.status)")
                }
            } catch {
                outcome = .deletedWithoutRevoking(reason: error.message)
            }
            try store.delete()
            return outcome
        }
    }

    /// What makes the token file unusable as a login, or nil for a failure to read it at all
    /// (no permission, a folder): such a file may not be ours to delete.
    private static func damage(_ error: OAuthError) -> String? {
        switch error {
        case .corruptTokenFile(_, let problem): problem
        case .file(let error) where error.errno == EFBIG: "too large for a token file"
        default: nil
        }
    }
}
