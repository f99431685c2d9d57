import Foundation
import Networking

/// A registered OAuth client (Google "Desktop app") and the endpoints it talks to; builds
/// the three requests of the protocol and reads the token endpoint's answers.
public struct OAuthClient: Sendable {
    public var clientID: String
    /// Google requires it from desktop clients even with PKCE; it is not really secret in an
    /// installed app, but it is still never printed.
    public var clientSecret: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var revocationEndpoint: String
    public var scope: String

    public static let driveAppDataScope = "https://www.googleapis.com/auth/drive.appdata"

    public init(
        clientID: String, clientSecret: String, authorizationEndpoint: String,
        tokenEndpoint: String, revocationEndpoint: String, scope: String = driveAppDataScope
    ) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.scope = scope
    }

    /// The requested scopes a grant's `scope` lacks. An answer without `scope` granted what
    /// was asked (RFC 6749 §5.1).
    public func scopesMissing(from granted: String?) -> [String] {
        guard let granted else { return [] }
        let have = Set(granted.split(separator: " "))
        return scope.split(separator: " ").filter { !have.contains($0) }.map(String.init)
    }

    /// The URL the browser opens. `access_type=offline` asks for a refresh token, and
    /// `prompt=consent` makes Google issue one again on a repeated login (it otherwise sends
    /// a refresh token only the first time a user consents).
    public func authorizationURL(pkce: PKCE, state: String, redirectURI: String) -> String {
        let parameters = [
            ("client_id", clientID), ("redirect_uri", redirectURI), ("response_type", "code"),
            ("scope", scope), ("code_challenge", pkce.challenge),
            ("code_challenge_method", PKCE.method), ("state", state),
            ("access_type", "offline"), ("prompt", "consent"),
        ]
        let separator = authorizationEndpoint.contains("?") ? "&" : "?"
        return authorizationEndpoint + separator + FormEncoding.encode(parameters)
    }

    public func codeExchangeRequest(code: String, pkce: PKCE, redirectURI: String) -> HTTPRequest {
        form(
            tokenEndpoint,
            [
                ("client_id", clientID), ("client_secret", clientSecret), ("code", code),
                ("code_verifier", pkce.verifier), ("grant_type", "authorization_code"),
                ("redirect_uri", redirectURI),
            ])
    }

    public func refreshRequest(refreshToken: String) -> HTTPRequest {
        form(
            tokenEndpoint,
            [
                ("client_id", clientID), ("client_secret", clientSecret),
                ("grant_type", "refresh_token"), ("refresh_token", refreshToken),
            ])
    }

    /// The token goes in the body, not the query, so no log on the way ever holds it.
    public func revocationRequest(token: String) -> HTTPRequest {
        form(revocationEndpoint, [("token", token)])
    }

    private func form(_ url: String, _ parameters: [(String, String)]) -> HTTPRequest {
        HTTPRequest(
            method: "POST", url: url,
            headers: [
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Accept", "application/json"),
            ],
            body: Array(FormEncoding.encode(parameters).utf8), timeout: 30)
    }

    /// Reads a token endpoint answer: a grant on 200, else an error naming Google's `error`
    /// code (`invalid_grant`, `invalid_client`, …).
    public func readGrant(_ response: HTTPResponse, now: Date) throws(OAuthError) -> TokenGrant {
        guard response.status == 200 else {
            let answer = try? JSONDecoder().decode(ErrorAnswer.self, from: Data(response.body))
            throw .server(
                endpoint: tokenEndpoint, status: response.status, error: answer?.error,
                description: answer?.error_description,
                retryAfter: response.header("Retry-After"))
        }
        let answer: GrantAnswer
        do {
            answer = try JSONDecoder().decode(GrantAnswer.self, from: Data(response.body))
        } catch {
            throw .malformedAnswer(
                endpoint: tokenEndpoint, problem: "expected access_token and expires_in in JSON")
        }
        guard !answer.access_token.isEmpty, answer.expires_in > 0 else {
            throw .malformedAnswer(
                endpoint: tokenEndpoint, problem: "empty access_token or expires_in")
        }
        return TokenGrant(
            accessToken: answer.access_token,
            expiresAt: now.addingTimeInterval(TimeInterval(answer.expires_in)),
            refreshToken: answer.refresh_token.flatMap { $0.isEmpty ? nil : $0 },
            scope: answer.scope)
    }

    // Wire names, as the token endpoint spells them (RFC 6749 §5.1, §5.2).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private struct GrantAnswer: Decodable {
        var access_token: String
        var expires_in: Int
        var refresh_token: String?
        var scope: String?
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    private struct ErrorAnswer: Decodable {
        var error: String
        var error_description: String?
    }
}

/// What the token endpoint granted. `refreshToken` is nil on a refresh answer (Google keeps
/// the old one valid).
public struct TokenGrant: Sendable, Equatable {
    public var accessToken: String
    public var expiresAt: Date
    public var refreshToken: String?
    public var scope: String?

    public init(accessToken: String, expiresAt: Date, refreshToken: String?, scope: String?) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.scope = scope
    }
}

/// `application/x-www-form-urlencoded`, and the same escaping for query strings: every
/// byte but RFC 3986's unreserved characters is percent-encoded.
enum FormEncoding {
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encode(_ parameters: [(String, String)]) -> String {
        parameters.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
