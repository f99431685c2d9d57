import Foundation
import Networking
import Testing

@testable import OAuth

/// Every transition of the paste half of `LoginFlow`, without sockets or a terminal.
@Suite struct PastedRedirectTests {
    let redirect = "http://127.0.0.1:4711/"

    func makeFlow() throws -> (LoginFlow, PKCE) {
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        var flow = LoginFlow(client: testClient, pkce: pkce, state: "S", redirectURI: redirect)
        _ = flow.start()
        return (flow, pkce)
    }

    /// The code inside the exchange the flow asks for, or nil when it asks for none.
    func exchangedCode(_ actions: [LoginFlow.Action]) -> String? {
        // A browser's redirect is first sent on to the clean path; a pasted one has no browser.
        guard case .send(let request) = actions.last,
            actions.dropLast().allSatisfy({ $0 == .redirect(to: LoginFlow.resultPath) }),
            actions.count <= 2
        else { return nil }
        return formFields(request)["code"]
    }

    @Test(arguments: [
        "http://127.0.0.1:4711/?state=S&code=4%2Fabc&scope=x",
        "  http://127.0.0.1:4711/?state=S&code=4%2Fabc\t",
        "state=S&code=4%2Fabc&scope=x",
        "?state=S&code=4%2Fabc",
        "\"http://127.0.0.1:4711/?state=S&code=4%2Fabc\"",
        "'state=S&code=4%2Fabc'",
        " <http://127.0.0.1:4711/?code=4%2Fabc&state=S> \r",
    ])
    func theAddressOrItsQueryIsAcceptedWithSpacesAndQuotesAround(_ line: String) throws {
        var (flow, pkce) = try makeFlow()
        let actions = flow.pasted(line)
        #expect(exchangedCode(actions) == "4/abc")
        guard case .send(let request) = try #require(actions.first) else { return }
        // Exchanged exactly as a redirect the listener got: same verifier, same redirect URI.
        #expect(formFields(request)["code_verifier"] == pkce.verifier)
        #expect(formFields(request)["redirect_uri"] == redirect)
    }

    struct Refused: Sendable, CustomTestStringConvertible {
        var line: String
        var reasonStart: String
        var testDescription: String { line.isEmpty ? "(empty line)" : line }
    }

    @Test(arguments: [
        Refused(
            line: "state=OLD&code=4%2Fabc", reasonStart: "that address belongs to another login"),
        Refused(
            line: "state=S&error=access_denied",
            reasonStart: "that address says access was not granted"),
        Refused(line: "hello there", reasonStart: "that is not the address"),
        Refused(line: "", reasonStart: "that is not the address"),
        Refused(line: "https://example.com/", reasonStart: "that is not the address"),
        Refused(line: "state=S", reasonStart: "that is not the address"),
        Refused(line: "code=4%2Fabc", reasonStart: "that is not the address"),
    ])
    func aRefusedLineSaysWhyInOneLineAndTheFlowKeepsWaiting(_ refused: Refused) throws {
        var (flow, _) = try makeFlow()
        let actions = flow.pasted(refused.line)
        #expect(actions.count == 2)
        guard case .refusePaste(let reason) = try #require(actions.first) else {
            Issue.record("expected a refusal, got \(actions)")
            return
        }
        #expect(reason.hasPrefix(refused.reasonStart))
        #expect(reason.hasSuffix("(2 tries left)"))
        #expect(!reason.contains("\n"))
        // The pasted text (it may hold a code) is never quoted back.
        #expect(!reason.contains("4/abc") && !reason.contains("4%2Fabc"))
        #expect(actions.last == .waitForRedirect)
        #expect(exchangedCode(flow.pasted("state=S&code=right")) == "right")
    }

    @Test func theThirdRefusalEndsTheLoginWithTheLastReason() throws {
        var (flow, _) = try makeFlow()
        guard case .refusePaste = flow.pasted("nope").first,
            case .refusePaste(let second) = flow.pasted("state=OLD&code=c").first
        else {
            Issue.record("expected two refusals")
            return
        }
        #expect(second.hasSuffix("(1 try left)"))
        let last = flow.pasted("state=S&error=access_denied")
        guard case .fail(.pasteRefused(let reason)) = try #require(last.last), last.count == 1
        else {
            Issue.record("expected the login to fail, got \(last)")
            return
        }
        #expect(reason.hasPrefix("that address says access was not granted"))
        #expect(flow.pasted("state=S&code=late").isEmpty)
        #expect(flow.received(method: "GET", target: "/?state=S&code=c").first?.isAnswer == true)
    }

    /// Whichever arrives first wins: after the listener's redirect, a paste starts nothing,
    /// and after a paste the listener's redirect only gets "not found".
    @Test func theFirstOfListenerAndPasteWins() throws {
        var (flow, _) = try makeFlow()
        #expect(
            exchangedCode(flow.received(method: "GET", target: "/?state=S&code=fromBrowser"))
                == "fromBrowser")
        #expect(flow.pasted("state=S&code=pasted").isEmpty)

        var (other, _) = try makeFlow()
        #expect(exchangedCode(other.pasted("state=S&code=pasted")) == "pasted")
        #expect(
            other.received(method: "GET", target: "/?state=S&code=fromBrowser") == [
                .answer(status: 404, page: .notFound)
            ])
    }

    /// A pasted code has no browser waiting: no page is answered, whatever the outcome.
    @Test func aPastedExchangeAnswersNoBrowser() throws {
        var (flow, _) = try makeFlow()
        _ = flow.pasted("state=S&code=c")
        let now = Date(timeIntervalSince1970: 1_000_000)
        let grant = try json(
            200, #"{"access_token":"at","expires_in":60,"refresh_token":"rt"}"#
        ).get()
        #expect(
            flow.tokenAnswer(grant, now: now) == [
                .finish(
                    TokenGrant(
                        accessToken: "at", expiresAt: now + 60, refreshToken: "rt", scope: nil))
            ])

        var (refused, _) = try makeFlow()
        _ = refused.pasted("state=S&code=c")
        let answer = try json(400, #"{"error":"invalid_grant"}"#).get()
        #expect(refused.tokenAnswer(answer, now: now).count == 1)

        var (cut, _) = try makeFlow()
        _ = cut.pasted("state=S&code=c")
        #expect(
            cut.transportFailed(TransportError(kind: .connectionLost, message: "reset")).count == 1)
    }

    @Test func aPasteBeforeTheStartOrAfterTheTimeoutStartsNothing() throws {
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        var flow = LoginFlow(client: testClient, pkce: pkce, state: "S", redirectURI: redirect)
        #expect(flow.pasted("state=S&code=c").isEmpty)
        _ = flow.start()
        _ = flow.timedOut(after: 1)
        #expect(flow.pasted("state=S&code=c").isEmpty)
    }
}

extension LoginFlow.Action {
    fileprivate var isAnswer: Bool {
        if case .answer = self { return true }
        return false
    }
}

/// Every transition of the device flow (RFC 8628), without sockets or a clock.
@Suite struct DeviceLoginFlowTests {
    let client = OAuthClient(
        clientID: "device-1.apps.example", clientSecret: "device-secret-xyz",
        authorizationEndpoint: "http://127.0.0.1:1/o/oauth2/v2/auth",
        tokenEndpoint: "http://127.0.0.1:1/token", revocationEndpoint: "http://127.0.0.1:1/revoke",
        deviceCodeEndpoint: "http://127.0.0.1:1/device/code")

    let codeAnswer =
        #"{"device_code":"AH-dc","user_code":"ABC-DEF-GHI","expires_in":1800,"interval":5,"verification_url":"https://www.google.com/device"}"#

    /// A flow that has shown the code and waits for its first poll.
    func waitingFlow() throws -> DeviceLoginFlow {
        var flow = DeviceLoginFlow(client: client)
        _ = flow.start()
        let actions = flow.answer(try json(200, codeAnswer).get(), now: Date())
        #expect(
            actions == [
                .show(verificationURL: "https://www.google.com/device", userCode: "ABC-DEF-GHI"),
                .wait(seconds: 5),
            ])
        return flow
    }

    func poll(_ flow: inout DeviceLoginFlow, answer status: Int, _ body: String, now: Date = Date())
        throws -> [DeviceLoginFlow.Action]
    {
        let sent = flow.waited()
        guard case .send(let request) = try #require(sent.first), sent.count == 1 else {
            Issue.record("expected a poll, got \(sent)")
            return []
        }
        #expect(
            formFields(request) == [
                "client_id": client.clientID, "client_secret": client.clientSecret,
                "device_code": "AH-dc",
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            ])
        #expect(request.url == client.tokenEndpoint)
        return flow.answer(try json(status, body).get(), now: now)
    }

    @Test func startAsksForADeviceCodeWithTheClientAndTheAppFolderScope() throws {
        var flow = DeviceLoginFlow(client: client)
        let actions = flow.start()
        guard case .send(let request) = try #require(actions.first), actions.count == 1 else {
            Issue.record("expected one request, got \(actions)")
            return
        }
        #expect(request.url == client.deviceCodeEndpoint)
        #expect(
            formFields(request) == [
                "client_id": client.clientID, "scope": OAuthClient.driveAppDataScope,
            ])
        #expect(flow.start().isEmpty)
        // Nothing to poll before the code is there.
        #expect(flow.waited().isEmpty)
    }

    @Test func pendingWaitsTheIntervalAndSlowDownAddsFiveSecondsForGood() throws {
        var flow = try waitingFlow()
        #expect(
            try poll(&flow, answer: 428, #"{"error":"authorization_pending"}"#) == [
                .wait(seconds: 5)
            ])
        #expect(try poll(&flow, answer: 403, #"{"error":"slow_down"}"#) == [.wait(seconds: 10)])
        #expect(
            try poll(&flow, answer: 428, #"{"error":"authorization_pending"}"#) == [
                .wait(seconds: 10)
            ])
        #expect(try poll(&flow, answer: 400, #"{"error":"slow_down"}"#) == [.wait(seconds: 15)])
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(
            try poll(
                &flow, answer: 200,
                #"{"access_token":"at","expires_in":3599,"refresh_token":"rt","scope":"\#(OAuthClient.driveAppDataScope)"}"#,
                now: now)
                == [
                    .finish(
                        TokenGrant(
                            accessToken: "at", expiresAt: now + 3599, refreshToken: "rt",
                            scope: OAuthClient.driveAppDataScope))
                ])
        #expect(flow.waited().isEmpty)
    }

    @Test(arguments: [
        (403, "access_denied", OAuthError.denied),
        (400, "expired_token", OAuthError.deviceCodeExpired),
    ])
    func denialAndExpiryStopThePolling(status: Int, code: String, error: OAuthError) throws {
        var flow = try waitingFlow()
        #expect(try poll(&flow, answer: status, #"{"error":"\#(code)"}"#) == [.fail(error)])
        #expect(flow.waited().isEmpty)
    }

    @Test func anotherErrorStopsWithGooglesCode() throws {
        var flow = try waitingFlow()
        let actions = try poll(&flow, answer: 401, #"{"error":"invalid_client"}"#)
        guard case .fail(.server(_, 401, "invalid_client", _, _)) = try #require(actions.last)
        else {
            Issue.record("expected the server's error, got \(actions)")
            return
        }
    }

    @Test func invalidScopeAtTheDeviceEndpointPointsToThePaste() throws {
        var flow = DeviceLoginFlow(client: client)
        _ = flow.start()
        let answer = try json(400, #"{"error":"invalid_scope","error_description":"no"}"#).get()
        #expect(flow.answer(answer, now: Date()) == [.fail(.deviceScopeRefused)])
    }

    /// RFC 8628 names it verification_uri and lets `interval` out (5 s then).
    @Test func theRFCsFieldNamesAndDefaultIntervalAreReadToo() throws {
        var flow = DeviceLoginFlow(client: client)
        _ = flow.start()
        let answer = try json(
            200,
            #"{"device_code":"d","user_code":"U","expires_in":600,"verification_uri":"https://x/device"}"#
        ).get()
        #expect(
            flow.answer(answer, now: Date()) == [
                .show(verificationURL: "https://x/device", userCode: "U"), .wait(seconds: 5),
            ])
    }

    @Test func aDeviceCodeAnswerWithoutItsFieldsIsMalformed() throws {
        var flow = DeviceLoginFlow(client: client)
        _ = flow.start()
        let actions = flow.answer(try json(200, #"{"user_code":"U"}"#).get(), now: Date())
        guard case .fail(.malformedAnswer) = try #require(actions.last) else {
            Issue.record("expected a malformed answer, got \(actions)")
            return
        }
    }

    @Test func aGrantWithoutTheAppFolderIsRevokedAndRefused() throws {
        var flow = try waitingFlow()
        let actions = try poll(
            &flow, answer: 200,
            #"{"access_token":"at","expires_in":3599,"refresh_token":"rt","scope":"openid"}"#)
        #expect(
            actions == [
                .sendAndForget(client.revocationRequest(token: "rt")),
                .fail(.scopeNotGranted(missing: [OAuthClient.driveAppDataScope])),
            ])
    }

    @Test func timeoutAndTransportFailureEndIt() throws {
        var flow = try waitingFlow()
        #expect(flow.timedOut(after: 30) == [.fail(.timedOut(seconds: 30))])
        #expect(flow.waited().isEmpty)
        var cut = try waitingFlow()
        _ = cut.waited()
        #expect(
            cut.transportFailed(TransportError(kind: .connectionLost, message: "reset"))
                == [.fail(.transport(TransportError(kind: .connectionLost, message: "reset")))])
    }
}
