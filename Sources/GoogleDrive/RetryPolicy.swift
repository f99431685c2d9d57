import Foundation

/// Time as the client sees it, injectable so unit tests never really sleep and can script
/// the jitter. `monotonic` measures the deadline; `wall` is compared with the server's `Date`.
public struct DriveClock: Sendable {
    public var monotonic: @Sendable () -> Double
    public var wall: @Sendable () -> Date
    public var sleep: @Sendable (Double) -> Void
    /// A number in 0..<1, for the jitter.
    public var random: @Sendable () -> Double

    public init(
        monotonic: @escaping @Sendable () -> Double, wall: @escaping @Sendable () -> Date,
        sleep: @escaping @Sendable (Double) -> Void, random: @escaping @Sendable () -> Double
    ) {
        self.monotonic = monotonic
        self.wall = wall
        self.sleep = sleep
        self.random = random
    }

    public static let system = DriveClock(
        monotonic: {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        },
        wall: { Date() },
        sleep: { seconds in
            guard seconds > 0 else { return }
            var request = timespec(
                tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        },
        random: { Double.random(in: 0..<1) })
}

/// Google's recommended backoff (FORMAT.md §9.2): wait `base × 2^n` plus up to `base` of jitter
/// before retry n (0-based), capped at `maxDelay`; a `Retry-After` from the server wins when
/// it asks for longer. Nothing is tried once `deadline` seconds have passed since the
/// operation began, nor a wait started that would end after it.
public struct RetryPolicy: Sendable, Equatable {
    /// One second in production; the CLI shortens it for tests (`CLOUDBACKUP_RETRY_BASE_MS`).
    public var base: Double
    public var maxDelay: Double
    public var maxAttempts: Int
    public var deadline: Double

    public init(
        base: Double = 1, maxDelay: Double = 32, maxAttempts: Int = 8, deadline: Double = 300
    ) {
        self.base = base
        self.maxDelay = maxDelay
        self.maxAttempts = maxAttempts
        self.deadline = deadline
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

/// The IMF-fixdate of RFC 9110 §5.6.7 (`Sun, 06 Nov 1994 08:49:37 GMT`), the form of `Date`.
enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}
