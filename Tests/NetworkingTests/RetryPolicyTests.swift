import Foundation
import Networking
import Synchronization
import Testing

private let now = Date(timeIntervalSince1970: 1_800_000_000)  // Fri, 15 Jan 2027 08:00:00 GMT

@Test(arguments: [
    (String?.none, Double?.none), ("", nil), ("7", 7), (" 120 ", 120), ("-3", nil), ("soon", nil),
    ("Fri, 15 Jan 2027 08:00:30 GMT", 30), ("Fri, 15 Jan 2027 07:59:00 GMT", 0),
])
func retryAfterIsSecondsOrAnHTTPDate(header: String?, seconds: Double?) {
    #expect(RetryPolicy.retryAfter(header, now: now) == seconds)
}

@Test(arguments: [
    (0, 0.0, Double?.none, 1.0), (0, 0.99, nil, 1.99), (3, 0.5, nil, 8.5), (10, 0.0, nil, 32),
    (0, 0.0, 20, 20), (5, 0.0, 1, 32),
])
func delayIsExponentialWithJitterCappedAndRetryAfterWins(
    retry: Int, jitter: Double, retryAfter: Double?, expected: Double
) {
    #expect(
        RetryPolicy().delay(beforeRetry: retry, jitter: jitter, retryAfter: retryAfter) == expected)
}

/// A clock that only moves when the budget sleeps (attempts take no time) and always draws the
/// largest jitter, so what a budget gives up after is its worst case.
private final class SteppedClock: Sendable {
    private let now = Mutex(0.0)
    var clock: DriveClock {
        DriveClock(
            monotonic: { self.now.withLock { $0 } }, wall: { Date() },
            sleep: { seconds in self.now.withLock { $0 += seconds } },
            random: { 0.999 })
    }
}

/// Backs off after `failure` until the budget gives up: the attempts and the seconds waited.
private func exhaust(_ policy: RetryPolicy, after failure: TransportError?) -> (Int, Double) {
    let stepped = SteppedClock()
    var budget = RetryBudget(operation: "GET", policy: policy, clock: stepped.clock)
    do throws(RetryBudget.Exhausted) {
        while true {
            if let failure {
                try budget.backOff(after: failure)
            } else {
                try budget.backOff(after: "HTTP 503", retryAfter: nil)
            }
        }
    } catch {
        return (error.attempts, stepped.clock.monotonic())
    }
}

/// No connection at all gives up at `unreachableDeadline`; every other failure keeps the
/// whole budget (8 attempts, about 95 s of backoff), a 5xx or 429 answer above all.
@Test func theUnreachableDeadlineBoundsOnlyFailuresToConnect() {
    let short = RetryPolicy(unreachableDeadline: 10)
    let refused = TransportError(kind: .couldNotConnect, message: "refused", host: "h")
    let (attempts, waited) = exhaust(short, after: refused)
    #expect(attempts == 4)
    #expect(waited <= 10)
    let full = exhaust(RetryPolicy(), after: refused)
    #expect(full.0 == 8)
    #expect(full.1 > 90)
    for failure in [nil, TransportError(kind: .timedOut, message: "slow", host: "h")] {
        #expect(exhaust(short, after: failure) == full, "\(String(describing: failure))")
    }
}
