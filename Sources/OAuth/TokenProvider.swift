import Foundation
import Networking

/// Hands out access tokens for every command after login, refreshing them through the token
/// endpoint when needed.
///
/// Design: the token file is the one source of truth, shared by every process of the
/// profile (a cron backup and a manual `status` may run at once). A refresh happens under a
/// lock file and re-reads the file first, so a second process that waited for the lock finds
/// the token the first one just saved instead of spending another refresh; the new file is
/// renamed into place, so a reader without the lock sees the old file or the new one.
///
/// - `accessToken(refreshing: false)`: the saved token while it has more than `margin` to
///   live, else a refreshed one.
/// - `accessToken(refreshing: true)`: after a 401. The token this provider handed out was
///   refused; a different, live token in the file (another process refreshed) is used as
///   is, otherwise it refreshes.
/// - A refresh answer without `refresh_token` keeps the saved one (Google's refresh answers
///   carry none). `invalid_grant` means the login is dead: `OAuthError.revoked`.
/// - `persisting: false` (a run that must write nothing, `restore --dry-run`): a refreshed
///   login stays in memory; the file and its lock are never written.
/// - A refresh uses the client the login was issued to (`StoredLogin.clientID`): `client`,
///   or one of `otherClients` (the device flow's); a login of no known client uses `client`.
public final class TokenProvider: AccessTokenSource, @unchecked Sendable {
    private let client: OAuthClient
    private let otherClients: [OAuthClient]
    private let store: TokenStore
    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date
    private let margin: TimeInterval
    /// The last token handed out, to tell after a 401 whether the file holds a newer one.
    private var lastHandedOut: String?
    private let persisting: Bool
    /// A refreshed login that was not saved (`persisting: false`).
    private var unsaved: StoredLogin?
    private let lock = NSLock()

    public init(
        client: OAuthClient, otherClients: [OAuthClient] = [], store: TokenStore,
        transport: any HTTPTransport, now: @escaping @Sendable () -> Date = { Date() },
        margin: TimeInterval = 60, persisting: Bool = true
    ) {
        self.persisting = persisting
        self.client = client
        self.otherClients = otherClients
        self.store = store
        self.transport = transport
        self.now = now
        self.margin = margin
    }

    public func accessToken(refreshing: Bool) throws -> String {
        try token(refreshing: refreshing)
    }

    /// The typed-throws form of `accessToken(refreshing:)`.
    public func token(refreshing: Bool) throws(OAuthError) -> String {
        lock.lock()
        defer { lock.unlock() }
        let refused = refreshing ? lastHandedOut : nil
        let saved: StoredLogin
        if let unsaved { saved = unsaved } else { saved = try loadLogin() }
        if let live = usable(saved, refused: refused, forced: refreshing) {
            lastHandedOut = live
            return live
        }
        guard persisting else {
            let token = try refresh(saved)
            lastHandedOut = token
            return token
        }
        let token = try store.withLock { () throws(OAuthError) -> String in
            let latest = try loadLogin()
            if let live = usable(latest, refused: refused, forced: refreshing && latest == saved) {
                return live
            }
            return try refresh(latest)
        }
        lastHandedOut = token
        return token
    }

    private func loadLogin() throws(OAuthError) -> StoredLogin {
        guard let login = try store.load() else { throw .notLoggedIn(tokenFile: store.path) }
        return login
    }

    /// The saved access token if it may be used: not expiring within `margin`, and not the
    /// one a server just refused. `forced` refuses the saved token outright.
    private func usable(_ login: StoredLogin, refused: String?, forced: Bool) -> String? {
        guard !forced, let token = login.accessToken, token != refused,
            let expiresAt = login.accessTokenExpiresAt, expiresAt.timeIntervalSince(now()) > margin
        else { return nil }
        return token
    }

    private func refresh(_ login: StoredLogin) throws(OAuthError) -> String {
        let response: HTTPResponse
        do {
            let issuer = otherClients.first { $0.clientID == login.clientID } ?? client
            response = try transport.send(issuer.refreshRequest(refreshToken: login.refreshToken))
        } catch {
            throw .transport(error)
        }
        let grant: TokenGrant
        do {
            grant = try client.readGrant(response, now: now())
        } catch .server(_, _, "invalid_grant", _, _) {
            throw .revoked(tokenFile: store.path)
        }
        var updated = login
        updated.accessToken = grant.accessToken
        updated.accessTokenExpiresAt = grant.expiresAt
        updated.refreshToken = grant.refreshToken ?? login.refreshToken
        updated.scope = grant.scope ?? login.scope
        if persisting { try store.save(updated) } else { unsaved = updated }
        return grant.accessToken
    }
}
