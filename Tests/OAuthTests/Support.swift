import Foundation
import Networking

@testable import OAuth

/// The form fields of a request body, decoded.
func formFields(_ request: HTTPRequest) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1).map {
            String($0).removingPercentEncoding ?? ""
        }
        fields[parts[0]] = parts.count > 1 ? parts[1] : ""
    }
    return fields
}

func json(_ status: Int, _ text: String) -> Result<HTTPResponse, TransportError> {
    .success(
        HTTPResponse(
            status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    )
}

let testClient = OAuthClient(
    clientID: "client-1.apps.example", clientSecret: "client-secret-xyz",
    authorizationEndpoint: "http://127.0.0.1:1/o/oauth2/v2/auth",
    tokenEndpoint: "http://127.0.0.1:1/token",
    revocationEndpoint: "http://127.0.0.1:1/revoke")
