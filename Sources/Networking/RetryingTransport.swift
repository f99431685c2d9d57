import Foundation

/// The retry loop (`RetryBudget.perform`, one budget per request) around a plain transport, for the requests that do not go through `DriveClient`: login's code exchange
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
    public var clock: RetryClock

    public init(_ base: any HTTPTransport, policy: RetryPolicy, clock: RetryClock = .system) {
        self.base = base
        self.policy = policy
        self.clock = clock
    }

    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        var budget = RetryBudget(
            operation: "\(request.method) \(request.url)", policy: policy, clock: clock)
        return try RetryBudget.perform(
            &budget, budget: \.self,
            send: { _ throws(TransportError) in
                do throws(TransportError) { return .success(try base.send(request)) } catch {
                    return .failure(error)
                }
            },
            transient: { response throws(TransportError) in
                HTTPResponse.isTransient(status: response.status) ? "\(response.status)" : nil
            },
            giveUp: { _, last throws(TransportError) in try last.get() })
    }
}
