import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Performs the actions of `DeviceLoginFlow` with real I/O: the transport, and waiting the
/// poll interval. `pollUnit` is how long one second of the interval lasts: a second, except
/// in tests, which shorten it instead of waiting for real.
public struct DeviceLogin {
    public var client: OAuthClient
    public var transport: any HTTPTransport
    public var timeoutSeconds: Int
    public var pollUnit: Duration
    public var now: @Sendable () -> Date

    public init(
        client: OAuthClient, transport: any HTTPTransport, timeoutSeconds: Int = 300,
        pollUnit: Duration = .seconds(1), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        self.transport = transport
        self.timeoutSeconds = timeoutSeconds
        self.pollUnit = pollUnit
        self.now = now
    }

    /// Runs the login to its end; `show` is called once with where to go and the code to type.
    public func run(show: (_ verificationURL: String, _ userCode: String) -> Void)
        throws(OAuthError) -> TokenGrant
    {
        var flow = DeviceLoginFlow(client: client)
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        var actions = flow.start()
        while !actions.isEmpty {
            switch actions.removeFirst() {
            case .send(let request):
                do {
                    actions += flow.answer(try transport.send(request), now: now())
                } catch {
                    actions += flow.transportFailed(error)
                }
            case .show(let url, let userCode):
                show(url, userCode)
            case .wait(let seconds):
                let wake = ContinuousClock.now + pollUnit * seconds
                guard wake < deadline else {
                    actions += flow.timedOut(after: timeoutSeconds)
                    continue
                }
                Self.sleep(until: wake)
                actions += flow.waited()
            case .sendAndForget(let request):
                _ = try? transport.send(request)
            case .finish(let grant):
                return grant
            case .fail(let error):
                throw error
            }
        }
        preconditionFailure("DeviceLoginFlow ended without finishing or failing")
    }

    private static func sleep(until wake: ContinuousClock.Instant) {
        let left = (wake - .now).components
        guard left.seconds > 0 || left.attoseconds > 0 else { return }
        var request = timespec(
            tv_sec: Int(left.seconds), tv_nsec: Int(left.attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
