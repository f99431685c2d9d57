/// One operation's share of a `RetryPolicy`: the attempts so far and when its deadline began.
/// Shared by `DriveClient` and `RetryingTransport`, so a Drive request and a login's code
/// exchange give up after the same attempts and the same time.
public struct RetryBudget {
    public let operation: String
    public let policy: RetryPolicy
    public let clock: DriveClock
    /// When the deadline started: the operation's start, or its last progress.
    private var began: Double
    private var retries = 0

    public init(operation: String, policy: RetryPolicy, clock: DriveClock) {
        self.operation = operation
        self.policy = policy
        self.clock = clock
        self.began = clock.monotonic()
    }

    /// Why an operation gave up: what `DriveError.unavailable` reports, kept apart from it so
    /// the budget needs nothing of Drive.
    public struct Exhausted: Error {
        public let operation: String
        public let attempts: Int
        public let last: String
        /// The last attempt's transport failure, when no answer came.
        public let transport: TransportError?
    }

    /// Starts the deadline again after bytes moved (a chunk kept, a body received): the
    /// deadline bounds waiting for a server that does not answer, not a slow link's
    /// transfer, or a large file on it could never be retried after five minutes.
    public mutating func restartDeadline() {
        began = clock.monotonic()
    }

    /// Sleeps before the next attempt, or throws when attempts or time ran out.
    /// A transport failure: back off when trying again may help, else give up at once.
    /// A connection that cannot be made at all gives up at `policy.unreachableDeadline`.
    public mutating func backOff(after error: TransportError) throws(Exhausted) {
        guard error.isRetryable else {
            throw Exhausted(
                operation: operation, attempts: retries + 1, last: error.summary, transport: error)
        }
        let deadline =
            error.kind == .couldNotConnect
            ? min(policy.deadline, policy.unreachableDeadline ?? .infinity) : policy.deadline
        try backOff(after: error.summary, retryAfter: nil, deadline: deadline, transport: error)
    }

    public mutating func backOff(after failure: String, retryAfter: Double?) throws(Exhausted) {
        try backOff(
            after: failure, retryAfter: retryAfter, deadline: policy.deadline, transport: nil)
    }

    private mutating func backOff(
        after failure: String, retryAfter: Double?, deadline: Double, transport: TransportError?
    ) throws(Exhausted) {
        guard retries + 1 < policy.maxAttempts else {
            throw Exhausted(
                operation: operation, attempts: retries + 1, last: failure, transport: transport)
        }
        let wait = policy.delay(
            beforeRetry: retries, jitter: clock.random(), retryAfter: retryAfter)
        guard clock.monotonic() - began + wait <= deadline else {
            // Giving up early on the server's word, not on a failure of ours: say so, when
            // its wait alone passes what is left of the deadline.
            let left = deadline - (clock.monotonic() - began)
            let asked = retryAfter.flatMap {
                $0 > left
                    ? "; Google asked to wait \(Int($0.rounded(.up))) s, past this run's \(Int(deadline)) s limit"
                    : nil
            }
            throw Exhausted(
                operation: operation, attempts: retries + 1, last: failure + (asked ?? ""),
                transport: transport)
        }
        clock.sleep(wait)
        retries += 1
    }
}
