import Foundation
import Networking

/// The device authorization grant (RFC 8628, Google's "TVs and Limited Input devices") as a
/// pure state machine: no socket, no clock. Each event returns the actions the driver must
/// perform, in order, like `LoginFlow`.
///
/// Worked example, a user who takes a while and a server that asks us to slow down:
///
///     start()                                  → [.send(device code request)]
///     deviceCodeAnswer(200 {device_code, user_code, verification_url, interval: 5})
///                                              → [.show(url, user code), .wait(5)]
///     waited()                                 → [.send(poll)]
///     pollAnswer(428 authorization_pending)    → [.wait(5)]
///     waited(), pollAnswer(403 slow_down)      → [.wait(10)]   (+5 s, RFC 8628 §3.5)
///     waited(), pollAnswer(200 {…})            → [.finish(grant)]
///
/// The device code is a secret (whoever holds it collects the grant): it only ever goes into
/// a poll's body. The user code is meant to be shown.
public struct DeviceLoginFlow: Sendable {
    public enum Action: Sendable, Equatable {
        /// Send this request and report its answer with `deviceCodeAnswer` or `pollAnswer`.
        case send(HTTPRequest)
        /// Tell the user where to go and which code to type.
        case show(verificationURL: String, userCode: String)
        /// Wait this many seconds (the poll interval), then report `waited`.
        case wait(seconds: Int)
        /// Revoke a grant that is not kept; its answer changes nothing.
        case sendAndForget(HTTPRequest)
        case finish(TokenGrant)
        case fail(OAuthError)
    }

    enum Phase: Sendable, Equatable {
        case ready, requestingCode, waiting, polling, finished
    }

    /// RFC 8628 §3.5: on `slow_down` the interval grows by 5 seconds for good.
    public static let slowDownStep = 5

    private let client: OAuthClient
    private(set) var phase = Phase.ready
    private(set) var interval = 5
    private var deviceCode = ""

    public init(client: OAuthClient) {
        self.client = client
    }

    public mutating func start() -> [Action] {
        guard phase == .ready else { return [] }
        phase = .requestingCode
        return [.send(client.deviceCodeRequest())]
    }

    /// The answer to the request last sent, whichever it was.
    public mutating func answer(_ response: HTTPResponse, now: Date) -> [Action] {
        phase == .requestingCode ? deviceCodeAnswer(response) : pollAnswer(response, now: now)
    }

    public mutating func deviceCodeAnswer(_ response: HTTPResponse) -> [Action] {
        guard phase == .requestingCode else { return [] }
        do {
            let code = try client.readDeviceCode(response)
            deviceCode = code.deviceCode
            interval = code.interval
            phase = .waiting
            return [
                .show(verificationURL: code.verificationURL, userCode: code.userCode),
                .wait(seconds: interval),
            ]
        } catch .server(_, _, "invalid_scope", _, _) {
            phase = .finished
            return [.fail(.deviceScopeRefused)]
        } catch {
            phase = .finished
            return [.fail(error)]
        }
    }

    /// The interval passed: poll.
    public mutating func waited() -> [Action] {
        guard phase == .waiting else { return [] }
        phase = .polling
        return [.send(client.devicePollRequest(deviceCode: deviceCode))]
    }

    public mutating func pollAnswer(_ response: HTTPResponse, now: Date) -> [Action] {
        guard phase == .polling else { return [] }
        // The `error` code decides, whatever the status: Google documents 428 for
        // authorization_pending and 403 for slow_down, RFC 8628 says 400 for both.
        switch client.newLogin(response, now: now) {
        case .refused(.server(_, _, "authorization_pending", _, _), _):
            phase = .waiting
            return [.wait(seconds: interval)]
        case .refused(.server(_, _, "slow_down", _, _), _):
            phase = .waiting
            interval += Self.slowDownStep
            return [.wait(seconds: interval)]
        case .refused(.server(_, _, "access_denied", _, _), _):
            phase = .finished
            return [.fail(.denied)]
        case .refused(.server(_, _, "expired_token", _, _), _):
            phase = .finished
            return [.fail(.deviceCodeExpired)]
        case .refused(let error, let revoke):
            phase = .finished
            return (revoke.map { [.sendAndForget($0)] } ?? []) + [.fail(error)]
        case .granted(let grant):
            phase = .finished
            return [.finish(grant)]
        }
    }

    /// The login's deadline passes before the next poll.
    public mutating func timedOut(after seconds: Int) -> [Action] {
        guard phase == .waiting || phase == .requestingCode || phase == .polling else {
            return []
        }
        phase = .finished
        return [.fail(.timedOut(seconds: seconds))]
    }

    public mutating func transportFailed(_ error: TransportError) -> [Action] {
        guard phase == .requestingCode || phase == .polling else { return [] }
        phase = .finished
        return [.fail(.transport(error))]
    }
}
