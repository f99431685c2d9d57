import Foundation
import Networking
import TestSupport
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

/// No connection at all gives up at `unreachableDeadline`; every other failure keeps the
/// whole budget (8 attempts, about 95 s of backoff), a 5xx or 429 answer above all.
@Test func theUnreachableDeadlineBoundsOnlyFailuresToConnect() {
    let short = RetryPolicy(unreachableDeadline: 10)
    let refused = TransportError(kind: .couldNotConnect, message: "refused", host: "h")
    let (attempts, waited) = givingUp(short, after: refused)
    #expect(attempts == 4)
    #expect(waited <= 10)
    let full = givingUp(RetryPolicy(), after: refused)
    #expect(full.attempts == 8)
    #expect(full.waited > 90)
    for failure in [nil, TransportError(kind: .timedOut, message: "slow", host: "h")] {
        #expect(givingUp(short, after: failure) == full, "\(String(describing: failure))")
    }
}

/// The hand-read IMF-fixdate gives Foundation's answer for every spelling it accepts, and
/// refuses what is not one.
@Test(arguments: [
    ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
    ("Fri, 15 Jan 2027 08:00:30 GMT", 1_800_000_030),
    ("Thu, 01 Jan 1970 00:00:00 GMT", 0), ("Tue, 29 Feb 2028 23:59:59 GMT", 1_835_481_599),
    ("Mon, 29 Feb 2027 00:00:00 GMT", nil), ("Sat, 15 Jan 2027 08:00:30 GMT", nil),
    ("Fri, 15 Jan 2027 08:00:30 UTC", nil), ("Fri, 15 Jan 2027 8:00:30 GMT", nil),
    ("Fri, 15 Jan 2027 24:00:00 GMT", nil), ("Fri, 15 Jab 2027 08:00:30 GMT", nil),
    ("Friday, 15-Jan-27 08:00:30 GMT", nil), ("", nil),
])
func anHTTPDateIsReadExactly(text: String, seconds: Double?) {
    #expect(HTTPDate.parse(text)?.timeIntervalSince1970 == seconds)
}
