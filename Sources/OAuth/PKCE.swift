import Digests

/// Proof Key for Code Exchange (RFC 7636) with the S256 method: the login sends
/// `challenge = base64url(SHA-256(verifier))` with the authorization request and the
/// `verifier` itself with the code exchange, so an app that intercepts the redirect cannot
/// use the code.
public struct PKCE: Sendable, Equatable {
    /// Secret until the code exchange; never printed.
    public let verifier: String
    public let challenge: String
    public static let method = "S256"

    /// From a known verifier (RFC 7636 appendix B checks this).
    public init(verifier: String) throws(OAuthError) {
        self.verifier = verifier
        self.challenge = Base64URL.encode(Digest.sha256(verifier.utf8))
    }

    /// A fresh verifier: 32 random bytes as base64url, 43 characters (the RFC's
    /// recommendation, and within its 43…128 range).
    public static func random() throws(OAuthError) -> PKCE {
        try PKCE(verifier: Base64URL.encode(try Crypto.randomBytes(32)))
    }

    /// The verifier made from given octets (for the RFC's test vector).
    public static func verifier(fromOctets octets: [UInt8]) -> String {
        Base64URL.encode(octets)
    }
}

/// The `state` parameter: 32 random bytes, base64url. The listener accepts only a redirect
/// that carries it back, so a page cannot push someone else's code into our login.
public enum LoginState {
    public static func random() throws(OAuthError) -> String {
        Base64URL.encode(try Crypto.randomBytes(32))
    }
}
