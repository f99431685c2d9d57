import Foundation

/// Time as a retry loop sees it, injectable so unit tests never really sleep and can script
/// the jitter. `monotonic` measures the deadline; `wall` is compared with the server's `Date`.
public struct RetryClock: Sendable {
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

    public static let system = RetryClock(
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
