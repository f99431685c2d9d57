import Foundation

/// `DriveClient`'s retry loop (`RetryPolicy`, one `RetryBudget` per request) around a plain
/// transport, for the requests that do not go through `DriveClient`: login's code exchange
/// and logout's revocation (FORMAT.md §8.2: network errors, 429 and 5xx are tried again, honouring
/// `Retry-After`).
///
/// Once the attempts or the deadline run out, the last answer (or transport failure) is
/// handed back as it came, so the caller reports it as it would a single failed request.
/// Not for the transport under a `DriveClient` or a token refresh: those already retry, and
/// nesting would multiply the attempts.
public struct RetryingTransport: HTTPTransport {
    public let base: any HTTPTransport
    public var policy: RetryPolicy
    public var clock: DriveClock

    public init(_ base: any HTTPTransport, policy: RetryPolicy, clock: DriveClock = .system) {
        self.base = base
        self.policy = policy
        self.clock = clock
    }

    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        var budget = RetryBudget(
            operation: "\(request.method) \(request.url)", policy: policy, clock: clock)
        while true {
            let response: HTTPResponse
            do {
                response = try base.send(request)
            } catch {
                guard (try? budget.backOff(after: error)) != nil else { throw error }
                continue
            }
            guard HTTPResponse.isTransient(status: response.status) else { return response }
            let retryAfter = RetryPolicy.retryAfter(
                response.header("Retry-After"), now: clock.wall())
            guard
                (try? budget.backOff(after: "\(response.status)", retryAfter: retryAfter)) != nil
            else { return response }
        }
    }
}
