import Foundation

/// Exponential backoff (FORMAT.md §9.2, as Google recommends it): wait `base × 2^n` plus up to `base` of jitter
/// before retry n (0-based), capped at `maxDelay`; a `Retry-After` from the server wins when
/// it asks for longer. Nothing is tried once `deadline` seconds have passed since the
/// operation began, nor a wait started that would end after it.
public struct RetryPolicy: Sendable, Equatable {
    /// One second in production; the CLI shortens it for tests (`CLOUDBACKUP_RETRY_BASE_MS`).
    public var base: Double
    public var maxDelay: Double
    public var maxAttempts: Int
    public var deadline: Double
    /// A shorter deadline for when no connection can be made at all (refused, unreachable,
    /// a name that does not resolve): a person at a terminal wants the verdict in seconds,
    /// not after the minute and a half the full backoff takes. nil: the same as any failure.
    /// Answers (429, 5xx) and broken or timed-out connections keep the full budget.
    public var unreachableDeadline: Double?

    public init(
        base: Double = 1, maxDelay: Double = 32, maxAttempts: Int = 8, deadline: Double = 300,
        unreachableDeadline: Double? = nil
    ) {
        self.base = base
        self.maxDelay = maxDelay
        self.maxAttempts = maxAttempts
        self.deadline = deadline
        self.unreachableDeadline = unreachableDeadline
    }

    /// The wait before retry `retry` (0 for the first retry). `retryAfter` is the server's
    /// request in seconds, if any; it is honoured up to the deadline, not capped by `maxDelay`.
    public func delay(beforeRetry retry: Int, jitter: Double, retryAfter: Double?) -> Double {
        let exponential = min(base * Double(1 << min(retry, 30)) + base * jitter, maxDelay)
        guard let retryAfter else { return exponential }
        return max(retryAfter, exponential)
    }

    /// `Retry-After` as seconds (delta form) or as an HTTP date relative to `now`.
    public static func retryAfter(_ value: String?, now: Date) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        if let seconds = Double(value), seconds >= 0 { return seconds }
        return HTTPDate.parse(value).map { max(0, $0.timeIntervalSince(now)) }
    }
}
