import Foundation
import Networking

/// A registered OAuth client (Google "Desktop app", or "TVs and Limited Input devices" for
/// the device flow) and the endpoints it talks to; builds the requests of the protocol and
/// reads the token endpoint's answers.
public struct OAuthClient: Sendable {
    public var clientID: String
    /// Google requires it from desktop clients even with PKCE; it is not really secret in an
    /// installed app, but it is still never printed.
    public var clientSecret: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var revocationEndpoint: String
    /// The device authorization endpoint (RFC 8628 §3.1); only the device flow uses it.
    public var deviceCodeEndpoint: String
    public var scope: String

    public static let driveAppDataScope = "https://www.googleapis.com/auth/drive.appdata"
    public static let deviceCodeGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    public init(
        clientID: String, clientSecret: String, authorizationEndpoint: String,
        tokenEndpoint: String, revocationEndpoint: String, deviceCodeEndpoint: String = "",
        scope: String = driveAppDataScope
    ) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.deviceCodeEndpoint = deviceCodeEndpoint
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

    /// Asks for a device code and the user code to show (RFC 8628 §3.1). Google's device
    /// endpoint takes no client secret.
    public func deviceCodeRequest() -> HTTPRequest {
        form(deviceCodeEndpoint, [("client_id", clientID), ("scope", scope)])
    }

    /// One poll of the token endpoint for the grant behind `deviceCode` (RFC 8628 §3.4).
    public func devicePollRequest(deviceCode: String) -> HTTPRequest {
        form(
            tokenEndpoint,
            [
                ("client_id", clientID), ("client_secret", clientSecret),
                ("device_code", deviceCode), ("grant_type", Self.deviceCodeGrantType),
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
        guard response.status == 200 else { throw Self.failure(response, from: tokenEndpoint) }
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

    /// A new login from the token endpoint's answer to a code exchange or a device poll:
    /// the grant, or why it cannot be kept. A grant lacking a scope we asked for is live at
    /// Google all the same, so it comes with the request that revokes it.
    public func newLogin(_ response: HTTPResponse, now: Date) -> NewLogin {
        do {
            let grant = try readGrant(response, now: now)
            guard let refreshToken = grant.refreshToken else {
                return .refused(
                    .malformedAnswer(
                        endpoint: tokenEndpoint, problem: "the answer carries no refresh_token"),
                    revoke: nil)
            }
            let missing = scopesMissing(from: grant.scope)
            guard missing.isEmpty else {
                return .refused(
                    .scopeNotGranted(missing: missing),
                    revoke: revocationRequest(token: refreshToken))
            }
            return .granted(grant)
        } catch {
            return .refused(error, revoke: nil)
        }
    }

    public enum NewLogin: Sendable, Equatable {
        case granted(TokenGrant)
        case refused(OAuthError, revoke: HTTPRequest?)
    }

    /// The device endpoint's answer (RFC 8628 §3.2, with Google's `verification_url`).
    public func readDeviceCode(_ response: HTTPResponse) throws(OAuthError) -> DeviceCode {
        guard response.status == 200 else {
            throw Self.failure(response, from: deviceCodeEndpoint)
        }
        guard
            let answer = try? JSONDecoder().decode(
                DeviceCodeAnswer.self, from: Data(response.body)),
            let url = answer.verification_url ?? answer.verification_uri,
            !answer.device_code.isEmpty, !answer.user_code.isEmpty, !url.isEmpty
        else {
            throw .malformedAnswer(
                endpoint: deviceCodeEndpoint,
                problem: "expected device_code, user_code and verification_url in JSON")
        }
        // RFC 8628 §3.2: the interval defaults to 5 s; a negative one is read as that.
        let interval = answer.interval.flatMap { $0 >= 0 ? $0 : nil } ?? 5
        return DeviceCode(
            deviceCode: answer.device_code, userCode: answer.user_code, verificationURL: url,
            expiresIn: answer.expires_in, interval: interval)
    }

    /// An error answer of an OAuth endpoint: its status and Google's `error` code.
    static func failure(_ response: HTTPResponse, from endpoint: String) -> OAuthError {
        let answer = try? JSONDecoder().decode(ErrorAnswer.self, from: Data(response.body))
        return .server(
            endpoint: endpoint, status: response.status, error: answer?.error,
            description: answer?.error_description, retryAfter: response.header("Retry-After"))
    }

    // Wire names, as the token endpoint spells them (RFC 6749 §5.1, §5.2).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private struct GrantAnswer: Decodable {
        var access_token: String
        var expires_in: Int
        var refresh_token: String?
        var scope: String?
    }

    // Google answers `verification_url`; RFC 8628 names it `verification_uri`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private struct DeviceCodeAnswer: Decodable {
        var device_code: String
        var user_code: String
        var verification_url: String?
        var verification_uri: String?
        var expires_in: Int
        var interval: Int?
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

/// What the device endpoint handed out. `deviceCode` is a secret (it polls for the grant);
/// `userCode` is meant to be shown.
public struct DeviceCode: Sendable, Equatable {
    public var deviceCode: String
    public var userCode: String
    public var verificationURL: String
    public var expiresIn: Int
    public var interval: Int
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
