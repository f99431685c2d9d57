/// One operation's share of a `RetryPolicy`: the attempts so far and when its deadline began,
/// and the one retry loop (`perform`) that spends it. `DriveClient` and `RetryingTransport`
/// both send through that loop, each with its service's rules, so a Drive request and a
/// login's code exchange give up after the same attempts and the same time.
public struct RetryBudget {
    public let operation: String
    public let policy: RetryPolicy
    public let clock: RetryClock
    /// Who answers, as a refusal names it when its `Retry-After` outlasts the deadline.
    public var server = "the server"
    /// When the deadline started: the operation's start, or its last progress.
    private var began: Double
    private var retries = 0

    public init(operation: String, policy: RetryPolicy, clock: RetryClock) {
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
                    ? "; \(server) asked to wait \(Int($0.rounded(.up))) s, past this run's \(Int(deadline)) s limit"
                    : nil
            }
            throw Exhausted(
                operation: operation, attempts: retries + 1, last: failure + (asked ?? ""),
                transport: transport)
        }
        clock.sleep(wait)
        retries += 1
    }

    /// What went wrong with one attempt, as `backOff` weighs it.
    private enum Setback {
        case transport(TransportError)
        /// An answer the rules call transient: its summary, and its `Retry-After` in seconds.
        case answer(String, retryAfter: Double?)
    }

    /// The retry loop: sends (`send`, which may spend the budget itself, as a token refresh
    /// does) until an answer that `transient` calls final (nil) comes back, backing off after
    /// transport failures and after answers it calls transient (their summary), honouring
    /// `Retry-After`. When attempts or time run out, `giveUp` turns the last attempt into
    /// the caller's result or error.
    public static func perform<State, Failure: Error>(
        _ state: inout State, budget: WritableKeyPath<State, RetryBudget>,
        send: (inout State) throws(Failure) -> Result<HTTPResponse, TransportError>,
        transient: (HTTPResponse) throws(Failure) -> String?,
        giveUp: (Exhausted, Result<HTTPResponse, TransportError>) throws(Failure) -> HTTPResponse
    ) throws(Failure) -> HTTPResponse {
        while true {
            let answer = try send(&state)
            let setback: Setback
            switch answer {
            case .failure(let error):
                setback = .transport(error)
            case .success(let response):
                guard let failure = try transient(response) else { return response }
                let clock = state[keyPath: budget].clock
                setback = .answer(
                    failure,
                    retryAfter: RetryPolicy.retryAfter(
                        response.header("Retry-After"), now: clock.wall()))
            }
            do throws(Exhausted) {
                switch setback {
                case .transport(let error):
                    try state[keyPath: budget].backOff(after: error)
                case .answer(let failure, let retryAfter):
                    try state[keyPath: budget].backOff(after: failure, retryAfter: retryAfter)
                }
            } catch {
                return try giveUp(error, answer)
            }
        }
    }
}
