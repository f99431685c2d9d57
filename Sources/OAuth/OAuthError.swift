import LocalFiles
import Networking

/// Everything that can go wrong in login, refresh and logout. The CLI's one error boundary
/// turns each case into a message and an exit code; these cases carry the facts, never a
/// token, code or secret.
public enum OAuthError: Error, Equatable, Sendable {
    /// No token file: the profile never logged in (or logged out).
    case notLoggedIn(tokenFile: String)
    /// The token endpoint answered `invalid_grant` to a refresh: the saved login is dead.
    case revoked(tokenFile: String)
    /// The user pressed "Cancel" on the consent screen (`error=access_denied`).
    case denied
    /// The authorization server redirected back with another `error`.
    case authorizationFailed(error: String)
    /// The token answer lacks a scope we asked for: the user left its box unticked on
    /// Google's consent page (granular consent).
    case scopeNotGranted(missing: [String])
    /// No matching redirect arrived in time.
    case timedOut(seconds: Int)
    /// Three pasted lines in a row were not the redirect this login waits for; `reason`
    /// says why the last one was refused (it never quotes the line, which may hold a code).
    case pasteRefused(reason: String)
    /// The device code expired before the user entered it (`expired_token`).
    case deviceCodeExpired
    /// The device endpoint refused our scope (`invalid_scope`): Google lists the app folder
    /// among the scopes of the device flow, but some report it refused in practice.
    case deviceScopeRefused
    /// The token or revocation endpoint answered with an unexpected status; `retryAfter` is
    /// its `Retry-After` header, which a retry of a 429 or 503 honours.
    case server(
        endpoint: String, status: Int, error: String?, description: String?,
        retryAfter: String? = nil)
    /// A 2xx answer that is not the JSON it should be.
    case malformedAnswer(endpoint: String, problem: String)
    /// No HTTP answer at all.
    case transport(TransportError)
    /// A token file open to group or others (`SecretFile`'s rule).
    case tooOpen(SecretFile.TooOpen)
    /// A token file that is not ours to read as JSON.
    case corruptTokenFile(path: String, problem: String)
    case file(LocalFileError)
    /// The loopback listener could not start (port in use, no permission).
    case listener(String)
    case crypto(String)
}

extension OAuthError: TransientFailure {
    /// What Google's retry guidance covers (FORMAT.md §9.2): 429, 5xx and network errors.
    public var isTransient: Bool {
        switch self {
        case .transport(let error): error.isRetryable
        case .server(_, let status, _, _, _): HTTPResponse.isTransient(status: status)
        default: false
        }
    }

    public var retryAfter: String? {
        guard case .server(_, _, _, _, let retryAfter) = self else { return nil }
        return retryAfter
    }

    public var transportFailure: TransportError? {
        guard case .transport(let error) = self else { return nil }
        return error
    }
}
