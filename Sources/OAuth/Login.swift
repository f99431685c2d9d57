import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Performs the actions of `LoginFlow` with real I/O: the loopback listener, the browser
/// launcher the caller supplies, and the HTTP transport. All decisions stay in the flow.
/// Retrying the code exchange after a blip is the transport's job (the CLI passes a
/// `RetryingTransport`); the browser waits for the outcome meanwhile.
public struct Login {
    public var client: OAuthClient
    public var transport: any HTTPTransport
    /// 0: any free port.
    public var port: UInt16
    public var timeoutSeconds: Int
    public var now: @Sendable () -> Date

    public init(
        client: OAuthClient, transport: any HTTPTransport, port: UInt16 = 0,
        timeoutSeconds: Int = 300,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        self.transport = transport
        self.port = port
        self.timeoutSeconds = timeoutSeconds
        self.now = now
    }

    /// Runs the login to its end. `openBrowser` is called once with the authorization URL
    /// and the listener's port, after the listener is up (so a fast browser finds it) and
    /// must not wait for the browser to exit. With `pasted`, lines read from it count as
    /// redirects too (whichever arrives first wins); `refused` hears why a line was not.
    public func run(
        openBrowser: (_ url: String, _ port: UInt16) -> Void, pasted: LineReader? = nil,
        refused: (_ reason: String) -> Void = { _ in }
    ) throws(OAuthError) -> TokenGrant {
        let listener = try LoopbackListener(port: port)
        var flow = LoginFlow(
            client: client, pkce: try PKCE.random(), state: try LoginState.random(),
            redirectURI: listener.redirectURI)
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        // Lines read together (a paste of several) are taken one per wait.
        var lines: [String] = []
        var actions = flow.start()
        while !actions.isEmpty {
            let action = actions.removeFirst()
            switch action {
            case .openBrowser(let url):
                openBrowser(url, listener.port)
            case .waitForRedirect:
                if !lines.isEmpty {
                    actions += flow.pasted(lines.removeFirst())
                    continue
                }
                let input = pasted.flatMap { $0.ended ? nil : $0.fd }
                switch try listener.nextEvent(until: deadline, input: input) {
                case .request(let method, let target):
                    actions += flow.received(method: method, target: target)
                case .inputReadable:
                    lines = pasted?.readLines() ?? []
                    actions.insert(.waitForRedirect, at: 0)
                case .timedOut:
                    actions += flow.timedOut(after: timeoutSeconds)
                }
            case .refusePaste(let reason):
                refused(reason)
            case .answer(let status, let page):
                listener.answer(status: status, page: page)
            case .send(let request):
                do {
                    actions += flow.tokenAnswer(try transport.send(request), now: now())
                } catch {
                    actions += flow.transportFailed(error)
                }
            case .sendAndForget(let request):
                _ = try? transport.send(request)
            case .finish(let grant):
                return grant
            case .fail(let error):
                throw error
            }
        }
        preconditionFailure("LoginFlow ended without finishing or failing")
    }
}

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

/// What the user types or pipes in, read as lines, only when `poll` says there is
/// something (so the loopback listener is watched meanwhile).
public final class LineReader {
    public let fd: Int32
    private var buffer: [UInt8] = []
    /// End of file (or an error) was read: nothing more will come.
    public private(set) var ended = false

    /// Far longer than any redirect address; a longer line is cut there and then refused.
    static let maxLine = 16 * 1024

    public init(fd: Int32) {
        self.fd = fd
    }

    /// Reads once; returns the lines completed by it, and at end of file the unfinished one.
    public func readLines() -> [String] {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if got < 0, errno == EINTR || errno == EAGAIN { return [] }
        if got <= 0 {
            ended = true
        } else {
            buffer += chunk[..<got]
        }
        var lines: [String] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeSubrange(...newline)
        }
        if ended && !buffer.isEmpty || buffer.count > Self.maxLine {
            lines.append(String(decoding: buffer, as: UTF8.self))
            buffer = []
        }
        return lines
    }
}

/// `cloudbackup logout`: revoke at the server, then delete the token file whatever the
/// server said, so a logout always leaves no usable token on disk. A damaged token file is
/// deleted too: it holds no token to revoke, and keeping it would leave every command of the
/// profile saying "delete it". A file readable by others is read all the same: logout is how
/// to get rid of it.
///
/// The revocation is tried again on network errors, 429 and 5xx when `transport` does so
/// (the CLI passes a `RetryingTransport`): a one-off blip must not leave the token live at
/// Google after its only local copy is gone.
public enum Logout {
    public enum Outcome: Sendable, Equatable {
        /// There was no token file.
        case wasNotLoggedIn
        /// Revoked at the server, or the server already considered it dead (400).
        case revoked
        /// Deleted locally, but the server was not reached or refused; the message says why.
        case deletedWithoutRevoking(reason: String)
        /// The token file was not a readable login (`problem` says why): deleted, and
        /// nothing could be revoked.
        case deletedDamaged(problem: String)
    }

    public static func run(store: TokenStore, client: OAuthClient, transport: any HTTPTransport)
        throws(OAuthError) -> Outcome
    {
        // Under the refresh lock, so a refresh running in another process cannot write the
        // file back after it was deleted.
        try store.withLock { () throws(OAuthError) -> Outcome in
            let loaded: StoredLogin?
            do throws(OAuthError) {
                loaded = try store.load(checkingMode: false)
            } catch {
                guard let problem = Self.damage(error) else { throw error }
                try store.delete()
                return .deletedDamaged(problem: problem)
            }
            guard let login = loaded else { return .wasNotLoggedIn }
            let outcome: Outcome
            do throws(TransportError) {
                // Revoking the refresh token also ends every access token issued from it.
                let response = try transport.send(
                    client.revocationRequest(token: login.refreshToken))
                switch response.status {
                case 200..<300, 400:
                    outcome = .revoked
                default:
                    outcome = .deletedWithoutRevoking(
                        reason: "the revocation endpoint answered \(response.status)")
                }
            } catch {
                outcome = .deletedWithoutRevoking(reason: error.message)
            }
            try store.delete()
            return outcome
        }
    }

    /// What makes the token file unusable as a login, or nil for a failure to read it at all
    /// (no permission, a folder): such a file may not be ours to delete.
    private static func damage(_ error: OAuthError) -> String? {
        switch error {
        case .corruptTokenFile(_, let problem): problem
        case .file(let error) where error.errno == EFBIG: "too large for a token file"
        default: nil
        }
    }
}
