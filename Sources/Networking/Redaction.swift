import Foundation

/// Keeps secrets out of anything printed. OAuth codes and tokens travel in request bodies
/// and headers, which are never printed at all; this covers the one part that is: URLs,
/// whose query may still carry a code, a token or a key (the redirect the browser follows,
/// Google's revoke URL, a user's custom endpoint).
public enum Redaction {
    /// Query parameters whose values are never shown. `upload_id` names a resumable upload
    /// session, whose URI lets anyone holding it upload into the file without a token.
    public static let secretParameters: Set<String> = [
        "code", "token", "access_token", "refresh_token", "id_token", "client_secret",
        "code_verifier", "code_challenge", "state", "key", "assertion", "password", "upload_id",
    ]

    /// `url` with user information and every secret query value replaced by `REDACTED`.
    /// Something that does not parse as a URL is replaced whole: it cannot be checked.
    public static func url(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "<unparsable URL>" }
        if components.user != nil || components.password != nil {
            components.user = "REDACTED"
            components.password = nil
        }
        if let items = components.queryItems {
            components.percentEncodedQuery = items.map { item in
                let name =
                    item.name.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? ""
                guard let value = item.value else { return name }
                if secretParameters.contains(item.name.lowercased()) { return name + "=REDACTED" }
                let encoded =
                    value.addingPercentEncoding(withAllowedCharacters: queryValueAllowed) ?? ""
                return name + "=" + encoded
            }.joined(separator: "&")
        }
        return components.string ?? "<unparsable URL>"
    }

    private static let queryValueAllowed: CharacterSet = {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+")
        return allowed
    }()
}
