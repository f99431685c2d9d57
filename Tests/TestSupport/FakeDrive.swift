import Foundation
import GoogleDrive
import Networking
import Synchronization

/// A transport that answers from a script, one step per request, and records what it was
/// sent. Running past the script's end is a test failure, reported as a 599 answer.
public final class ScriptedTransport: HTTPTransport, Sendable {
    public typealias Step = @Sendable (HTTPRequest) -> Result<HTTPResponse, TransportError>
    private let state: Mutex<(steps: [Step], sent: [HTTPRequest])>

    public init(_ steps: [Step]) {
        state = Mutex((steps, []))
    }

    /// Fixed answers, one per request, whatever is asked.
    public convenience init(answers: [Result<HTTPResponse, TransportError>]) {
        self.init(answers.map { answer in { _ in answer } })
    }

    public var sent: [HTTPRequest] { state.withLock { $0.sent } }
    public var remaining: Int { state.withLock { $0.steps.count } }

    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let step: Step? = state.withLock { state in
            state.sent.append(request)
            return state.steps.isEmpty ? nil : state.steps.removeFirst()
        }
        guard let step else { return HTTPResponse(status: 599, body: Array("script ran out".utf8)) }
        return try step(request).get()
    }
}

/// Canned answers.
public func answer(
    _ status: Int, _ body: String = "", headers: [(name: String, value: String)] = []
)
    -> ScriptedTransport.Step
{
    { _ in .success(HTTPResponse(status: status, headers: headers, body: Array(body.utf8))) }
}

public func answer(_ status: Int, bytes: [UInt8]) -> ScriptedTransport.Step {
    { _ in .success(HTTPResponse(status: status, body: bytes)) }
}

public func googleError(
    _ status: Int, _ reason: String, headers: [(name: String, value: String)] = []
)
    -> ScriptedTransport.Step
{
    answer(
        status,
        #"{"error":{"code":\#(status),"message":"m-\#(reason)","errors":[{"domain":"global","reason":"\#(reason)","message":"x"}]}}"#,
        headers: headers)
}

public func cut(_ message: String = "connection reset") -> ScriptedTransport.Step {
    { _ in .failure(TransportError(kind: .connectionLost, message: message)) }
}

/// Tokens numbered by how often they were asked for, so a test sees a refresh happen.
public final class CountingTokens: AccessTokenSource, Sendable {
    private let state = Mutex<(fetches: Int, refreshes: Int)>((0, 0))
    public let failure: (any Error)?

    public init(failure: (any Error)? = nil) {
        self.failure = failure
    }

    public var refreshes: Int { state.withLock { $0.refreshes } }

    public func accessToken(refreshing: Bool) throws -> String {
        if let failure { throw failure }
        return state.withLock { state in
            state.fetches += 1
            if refreshing { state.refreshes += 1 }
            return "token-\(state.refreshes)"
        }
    }
}

/// A clock whose sleeps only move time forward and are written down.
public final class FakeClock: Sendable {
    private let state = Mutex<(now: Double, sleeps: [Double])>((1000, []))
    public let wallStart = Date(timeIntervalSince1970: 1_800_000_000)
    public let jitter: Double

    public init(jitter: Double = 0.5) {
        self.jitter = jitter
    }

    public var sleeps: [Double] { state.withLock { $0.sleeps } }

    /// Time passing without a sleep: a slow transfer inside a request.
    public func advance(_ seconds: Double) {
        state.withLock { $0.now += seconds }
    }

    public var clock: RetryClock {
        RetryClock(
            monotonic: { self.state.withLock { $0.now } },
            wall: { self.wallStart.addingTimeInterval(self.state.withLock { $0.now } - 1000) },
            sleep: { seconds in
                self.state.withLock { state in
                    state.sleeps.append(seconds)
                    state.now += seconds
                }
            },
            random: { self.jitter })
    }
}

/// A client on a fake address over `transport`; small chunks so tests stay small.
public func fakeDrive(
    _ transport: ScriptedTransport, tokens: CountingTokens = CountingTokens(),
    clock: FakeClock = FakeClock(),
    retry: RetryPolicy = RetryPolicy(), resumableThreshold: Int = 5 * 1024 * 1024,
    chunkSize: Int = 256 * 1024
) -> DriveClient {
    DriveClient(
        baseURL: "http://127.0.0.1:9/", transport: transport, tokens: tokens, retry: retry,
        clock: clock.clock,
        resumableThreshold: resumableThreshold, chunkSize: chunkSize)
}

extension HTTPRequest {
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var path: String { URLComponents(string: url)?.path ?? "" }

    public func query(_ name: String) -> String? {
        URLComponents(string: url)?.queryItems?.first { $0.name == name }?.value
    }
}

/// What a `RetryBudget` under `policy` spends before it gives up on `failure` (an HTTP 503
/// answer when nil) again and again: its worst case, with the largest jitter and attempts
/// that take no time. `waited` is the seconds of backoff.
public func givingUp(_ policy: RetryPolicy, after failure: TransportError?) -> (
    attempts: Int, waited: Double
) {
    let fake = FakeClock(jitter: 0.999)
    var budget = RetryBudget(operation: "GET", policy: policy, clock: fake.clock)
    do throws(RetryBudget.Exhausted) {
        while true {
            if let failure {
                try budget.backOff(after: failure)
            } else {
                try budget.backOff(after: "HTTP 503", retryAfter: nil)
            }
        }
    } catch {
        return (error.attempts, fake.sleeps.reduce(0, +))
    }
}
