import Foundation
import Networking
import Testing

@testable import OAuth

/// Every transition of the login state machine, without sockets.
@Suite struct LoginFlowTests {
    let redirect = "http://127.0.0.1:4711/"

    func makeFlow() throws -> (LoginFlow, PKCE) {
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        return (LoginFlow(client: testClient, pkce: pkce, state: "S", redirectURI: redirect), pkce)
    }

    @Test func startOpensTheAuthorizationURLWithPKCEAndState() throws {
        var (flow, pkce) = try makeFlow()
        let actions = flow.start()
        guard case .openBrowser(let url) = try #require(actions.first) else {
            Issue.record("expected openBrowser first, got \(actions)")
            return
        }
        #expect(actions.dropFirst().elementsEqual([.waitForRedirect]))
        let query = Dictionary(
            uniqueKeysWithValues: (URLComponents(string: url)?.queryItems ?? []).map {
                ($0.name, $0.value ?? "")
            })
        #expect(url.hasPrefix(testClient.authorizationEndpoint + "?"))
        #expect(query["code_challenge"] == pkce.challenge)
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["state"] == "S")
        #expect(query["redirect_uri"] == redirect)
        #expect(query["response_type"] == "code")
        #expect(query["access_type"] == "offline")
        #expect(query["scope"] == "https://www.googleapis.com/auth/drive.appdata")
        #expect(!url.contains(pkce.verifier))
        #expect(flow.start().isEmpty)
    }

    struct RefusedCase: Sendable, CustomTestStringConvertible {
        var method: String
        var target: String
        var status: Int
        var page: LoginPage
        var testDescription: String { "\(method) \(target) → \(status)" }
    }

    @Test(arguments: [
        RefusedCase(
            method: "GET", target: "/?state=WRONG&code=c", status: 400, page: .stateMismatch),
        RefusedCase(method: "GET", target: "/?code=c", status: 400, page: .stateMismatch),
        RefusedCase(
            method: "GET", target: "/?state=WRONG&error=access_denied", status: 400,
            page: .stateMismatch),
        RefusedCase(method: "GET", target: "/?state=S", status: 400, page: .stateMismatch),
        RefusedCase(method: "GET", target: "/", status: 200, page: .listener),
        RefusedCase(method: "GET", target: "/favicon.ico", status: 404, page: .notFound),
        RefusedCase(method: "GET", target: LoginFlow.resultPath, status: 404, page: .notFound),
        RefusedCase(method: "POST", target: "/?state=S&code=c", status: 404, page: .notFound),
    ])
    func anythingButTheMatchingRedirectIsRefusedAndTheFlowKeepsWaiting(_ refused: RefusedCase)
        throws
    {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        let actions = flow.received(method: refused.method, target: refused.target)
        #expect(actions.count == 2)
        #expect(actions.first == .answer(status: refused.status, page: refused.page))
        #expect(actions.last == .waitForRedirect)
        // The right one still works afterwards.
        let next = flow.received(method: "GET", target: "/?state=S&code=c")
        guard case .send = try #require(next.last) else {
            Issue.record("expected the exchange, got \(next)")
            return
        }
    }

    /// The redirect is sent on to the clean path at once, so the code leaves the address bar;
    /// the outcome page is served there once the exchange is over (see the tests below).
    @Test func theMatchingRedirectIsSentToTheCleanPathAndExchangedWithTheVerifier() throws {
        var (flow, pkce) = try makeFlow()
        _ = flow.start()
        let actions = flow.received(method: "GET", target: "/?state=S&code=4%2Fabc&scope=x")
        #expect(actions.count == 2)
        #expect(actions.first == .redirect(to: "/done"))
        #expect(flow.awaitsBrowser)
        guard case .send(let request) = try #require(actions.last) else {
            Issue.record("expected the exchange, got \(actions)")
            return
        }
        #expect(request.method == "POST")
        #expect(request.url == testClient.tokenEndpoint)
        #expect(
            formFields(request) == [
                "client_id": testClient.clientID, "client_secret": testClient.clientSecret,
                "code": "4/abc",
                "code_verifier": pkce.verifier, "grant_type": "authorization_code",
                "redirect_uri": redirect,
            ])
        // A second redirect, even a matching one, starts nothing.
        #expect(
            flow.received(method: "GET", target: "/?state=S&code=again") == [
                .answer(status: 404, page: .notFound)
            ])
    }

    @Test func denialFailsWithDenied() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        let actions = flow.received(method: "GET", target: "/?state=S&error=access_denied")
        #expect(actions == [.answer(status: 200, page: .denied), .fail(.denied)])
        #expect(flow.answersAfterOutcome)
        #expect(
            flow.received(method: "GET", target: "/?state=S&error=access_denied") == [
                .redirect(to: "/done")
            ])
        #expect(
            flow.received(method: "GET", target: "/done") == [.answer(status: 200, page: .denied)])
    }

    @Test func anotherErrorIsReportedByName() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        let actions = flow.received(method: "GET", target: "/?state=S&error=invalid_scope")
        #expect(actions.last == .fail(.authorizationFailed(error: "invalid_scope")))
    }

    @Test func timeoutFails() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        #expect(flow.timedOut(after: 300) == [.fail(.timedOut(seconds: 300))])
        #expect(!flow.answersAfterOutcome)
        #expect(
            flow.received(method: "GET", target: "/?state=S&code=c") == [
                .answer(status: 404, page: .notFound)
            ])
    }

    @Test func aGrantFinishes() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        _ = flow.received(method: "GET", target: "/?state=S&code=c")
        let now = Date(timeIntervalSince1970: 1_000_000)
        let answer = try json(
            200,
            #"{"access_token":"at","expires_in":3599,"refresh_token":"rt","scope":"openid \#(scope)","token_type":"Bearer"}"#
        ).get()
        #expect(
            flow.tokenAnswer(answer, now: now) == [
                .finish(
                    TokenGrant(
                        accessToken: "at", expiresAt: now + 3599, refreshToken: "rt",
                        scope: "openid \(scope)"))
            ])
        #expect(outcome(&flow) == .success)
    }

    /// What the browser sees at the clean path once the login has ended.
    private func outcome(_ flow: inout LoginFlow) -> LoginPage? {
        guard case .answer(200, let page) = flow.received(method: "GET", target: "/done").first
        else { return nil }
        return page
    }

    /// After the outcome the listener still answers a browser (a reload, a second click on
    /// Continue, the favicon) until the driver stops asking, but never exchanges again.
    @Test func afterTheOutcomeEveryRequestIsAnsweredAndNothingIsExchanged() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        _ = flow.received(method: "GET", target: "/?state=S&code=c")
        _ = flow.tokenAnswer(try Self.grantAnswer.get(), now: Date())
        #expect(flow.awaitsBrowser)
        #expect(
            flow.received(method: "GET", target: "/done") == [.answer(status: 200, page: .success)])
        #expect(!flow.awaitsBrowser)
        #expect(
            flow.received(method: "GET", target: "/done") == [.answer(status: 200, page: .success)])
        #expect(
            flow.received(method: "GET", target: "/?state=S&code=c") == [.redirect(to: "/done")])
        #expect(flow.awaitsBrowser)
        #expect(
            flow.received(method: "GET", target: "/") == [.answer(status: 200, page: .finished)])
        #expect(
            flow.received(method: "GET", target: "/favicon.ico") == [
                .answer(status: 404, page: .notFound)
            ])
    }

    static let grantAnswer = json(
        200,
        #"{"access_token":"at","expires_in":3599,"refresh_token":"rt","scope":"\#(OAuthClient.driveAppDataScope)"}"#
    )

    private let scope = OAuthClient.driveAppDataScope

    /// RFC 6749 §5.1: an answer without `scope` granted what was asked.
    @Test func aGrantWithoutAScopeFieldFinishes() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        _ = flow.received(method: "GET", target: "/?state=S&code=c")
        let answer = try json(200, #"{"access_token":"at","expires_in":3599,"refresh_token":"rt"}"#)
            .get()
        guard case .finish = try #require(flow.tokenAnswer(answer, now: Date()).last) else {
            Issue.record("expected the grant to finish")
            return
        }
    }

    /// Google's granular consent lets the user untick the Drive box.
    @Test(arguments: ["openid email", "", "https://www.googleapis.com/auth/drive.file"])
    func aGrantWithoutTheDriveScopeFails(granted: String) throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        _ = flow.received(method: "GET", target: "/?state=S&code=c")
        let answer = try json(
            200,
            #"{"access_token":"at","expires_in":3599,"refresh_token":"rt","scope":"\#(granted)"}"#
        ).get()
        #expect(
            flow.tokenAnswer(answer, now: Date()) == [
                .sendAndForget(testClient.revocationRequest(token: "rt")),
                .fail(.scopeNotGranted(missing: [scope])),
            ])
        #expect(outcome(&flow) == .driveNotTicked)
    }

    @Test func aGrantWithoutRefreshTokenFails() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        _ = flow.received(method: "GET", target: "/?state=S&code=c")
        let answer = try json(200, #"{"access_token":"at","expires_in":3599}"#).get()
        let actions = flow.tokenAnswer(answer, now: Date())
        guard case .fail(.malformedAnswer) = try #require(actions.last) else {
            Issue.record("expected a failure, got \(actions)")
            return
        }
        #expect(outcome(&flow) == .failed(error: nil))
    }

    @Test func aRefusedCodeNamesGooglesError() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        _ = flow.received(method: "GET", target: "/?state=S&code=c")
        let answer = try json(400, #"{"error":"invalid_grant","error_description":"Bad Request"}"#)
            .get()
        #expect(
            flow.tokenAnswer(answer, now: Date()) == [
                .fail(
                    .server(
                        endpoint: testClient.tokenEndpoint, status: 400, error: "invalid_grant",
                        description: "Bad Request"))
            ])
        #expect(outcome(&flow) == .failed(error: "invalid_grant"))
    }

    @Test func aTransportFailureDuringTheExchangeFails() throws {
        var (flow, _) = try makeFlow()
        _ = flow.start()
        _ = flow.received(method: "GET", target: "/?state=S&code=c")
        let error = TransportError(kind: .couldNotConnect, message: "refused")
        #expect(
            flow.transportFailed(error) == [.fail(.transport(error))])
        #expect(outcome(&flow) == .failed(error: nil))
    }
}
