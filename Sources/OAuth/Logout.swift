import Networking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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
                outcome = .deletedWithoutRevoking(reason: error.summary)
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
