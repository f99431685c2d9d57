import Foundation
import Networking

/// Google's error body: `{"error":{"code","message","errors":[{"domain","reason","message"}]}}`.
/// Decoded leniently: a proxy's HTML page or an empty body still gives a status and words.
public struct GoogleAPIError: Sendable, Equatable {
    public var status: Int
    public var message: String
    /// The first `errors[].reason`, e.g. `rateLimitExceeded`, `conditionNotMet`, `fileIdInUse`;
    /// without one, the first `details[].reason` of Google's newer error model, e.g.
    /// `ACCESS_TOKEN_SCOPE_INSUFFICIENT`.
    public var reason: String?

    public init(status: Int, message: String, reason: String? = nil) {
        self.status = status
        self.message = message
        self.reason = reason
    }

    public init(_ response: HTTPResponse) {
        struct Body: Decodable {
            struct Inner: Decodable {
                struct Item: Decodable { var reason: String? }
                var message: String?
                var errors: [Item]?
                var details: [Item]?
            }
            var error: Inner
        }
        let body = try? JSONDecoder().decode(Body.self, from: Data(response.body))
        self.init(
            status: response.status,
            message: body?.error.message ?? HTTPStatus.phrase(response.status),
            reason: body?.error.errors?.first?.reason ?? body?.error.details?.first?.reason)
    }

    /// The access token lacks a scope the request needs (a login without the Drive box ticked).
    public var isMissingScope: Bool {
        ["insufficientPermissions", "insufficientScopes", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"]
            .contains(reason ?? "")
    }

    /// Whether Drive says to try again later (FORMAT.md §9.2): 429, 5xx gateways and rate-limit 403s.
    public var isRetryable: Bool {
        switch status {
        case 429, 500, 502, 503, 504: return true
        case 403: return reason == "rateLimitExceeded" || reason == "userRateLimitExceeded"
        default: return false
        }
    }
}

enum HTTPStatus {
    static func phrase(_ status: Int) -> String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 412: return "Precondition Failed"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "HTTP \(status)"
        }
    }
}

/// Why a Drive operation failed, after the retry policy had its turn. `operation` names what
/// was being done ("list the app folder", "download 1AbC…") so the CLI can say where.
public enum DriveError: Error, CustomStringConvertible {
    /// Retries ran out or the deadline passed; `last` is what the final attempt got.
    case unavailable(operation: DriveOperation, attempts: Int, last: String)
    /// No connection could be made at all (refused, unreachable, a name that does not
    /// resolve) until the retries gave up: the network or the endpoint setting, not Drive.
    case unreachable(operation: DriveOperation, TransportError)
    /// A final answer: a 4xx other than the retryable ones, or an unexpected status.
    case rejected(operation: DriveOperation, GoogleAPIError)
    /// Still 401 after one token refresh: the login is gone or revoked.
    case unauthorized(operation: DriveOperation, GoogleAPIError)
    /// The token source failed (not logged in, refresh token revoked, token endpoint down).
    case token(any Error)
    /// The answer was 2xx but not what Drive sends (bad JSON, a missing field).
    case malformedResponse(operation: DriveOperation, detail: String)

    public var description: String {
        switch self {
        case .unavailable(let operation, let attempts, let last):
            let tries = attempts == 1 ? "1 attempt" : "\(attempts) attempts"
            return
                "\(operation.name) failed after \(tries): \(last); try again later, or check the network"
        case .unreachable(let operation, let error):
            return "\(operation.name) failed: \(error.summary); check the network and run again"
        case .rejected(let operation, let error):
            let reason = error.reason.map { " (\($0))" } ?? ""
            return "Drive refused to \(operation): HTTP \(error.status)\(reason): \(error.message)"
        case .unauthorized(let operation, let error):
            return
                "Drive refused the login while trying to \(operation) (HTTP \(error.status): \(error.message)); run 'cloudbackup login'"
        case .token(let error):
            return "\(error)"
        case .malformedResponse(let operation, let detail):
            return "unexpected answer from Drive to \(operation): \(detail)"
        }
    }
}
