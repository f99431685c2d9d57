#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The login's loopback redirect listener (RFC 8252 §7.3).
///
/// Design: the socket is bound to 127.0.0.1 only, never to all interfaces, so no other
/// machine can reach it; port 0 lets the kernel pick a free port, so two logins (or a test
/// run beside a login) never collide. Browsers open speculative connections that may never
/// send a request, so the listener does not serve one connection at a time: it polls the
/// listening socket and every open connection together and returns the first complete
/// request head, wherever it arrives; a pasted line's descriptor can be watched in the same
/// poll. A connection answered without `Connection: close` goes back among the open ones, so
/// a browser's next request on it (keep-alive) is read like any other. What to answer is not
/// decided here but by `LoginFlow`; this type only moves bytes.
public final class LoopbackListener {
    private let listener: Int32
    public let port: UInt16
    /// Connections accepted and not yet answered, or answered and kept open for the browser's
    /// next request (keep-alive), with what they have sent that is not yet taken.
    private var pending: [(fd: Int32, bytes: [UInt8])] = []
    /// The connection whose request was last returned, awaiting `answer` or `redirect`, with
    /// what arrived after that request and whether it may stay open after the answer.
    private var current: (fd: Int32, rest: [UInt8], keepAlive: Bool)?

    static let maxRequestHead = 16 * 1024
    static let maxPendingConnections = 32

    /// Binds 127.0.0.1:`port` (0: any free port) and listens.
    public init(port: UInt16 = 0) throws(OAuthError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .listener("cannot create a socket: \(Self.errorText())") }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let reason = Self.errorText()
            close(fd)
            throw .listener(
                port == 0
                    ? "cannot listen on 127.0.0.1: \(reason)"
                    : "cannot listen on 127.0.0.1:\(port): \(reason); choose another --port or leave it out to use any free port"
            )
        }
        guard listen(fd, 16) == 0 else {
            let reason = Self.errorText()
            close(fd)
            throw .listener("cannot listen on 127.0.0.1: \(reason)")
        }
        listener = fd
        guard let local = Self.localAddress(of: fd) else {
            close(fd)
            throw .listener("cannot read the listening address: \(Self.errorText())")
        }
        self.port = local.port
    }

    deinit {
        for connection in pending { close(connection.fd) }
        if let current { close(current.fd) }
        close(listener)
    }

    /// Where the browser is sent back to; built from the real port.
    public var redirectURI: String { "http://127.0.0.1:\(port)/" }

    /// The address the socket is bound to, as `getsockname` reports it.
    public var boundAddress: (host: String, port: UInt16)? { Self.localAddress(of: listener) }

    /// The next complete request head (method and target), or nil when `deadline` passes
    /// first. The previous request must have been answered.
    public func nextRequest(
        until deadline: ContinuousClock.Instant
    ) throws(OAuthError) -> (method: String, target: String)? {
        guard case .request(let method, let target) = try nextEvent(until: deadline) else {
            return nil
        }
        return (method, target)
    }

    public enum Event: Equatable, Sendable {
        case request(method: String, target: String)
        /// `input` (see `nextEvent`) can be read without blocking.
        case inputReadable
        case timedOut
    }

    /// The next complete request head, or `input` (a pasted line's descriptor, watched with
    /// the connections) becoming readable, whichever comes first before `deadline`. The
    /// previous request must have been answered.
    public func nextEvent(
        until deadline: ContinuousClock.Instant, input: Int32? = nil
    ) throws(OAuthError) -> Event {
        precondition(current == nil, "answer the previous request first")
        while true {
            // A pipelined request is already here: it needs no poll.
            for index in pending.indices.reversed() {
                if let request = takeRequest(pendingIndex: index) {
                    return .request(method: request.method, target: request.target)
                }
            }
            // Past the deadline the poll still runs once, without waiting, so what already
            // arrived (a connection in the backlog, its request) is answered, not dropped.
            let remaining = max(deadline - .now, .zero)
            let milliseconds =
                remaining.components.seconds * 1000
                + (remaining == .zero
                    ? 0 : remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            var polled = [pollfd(fd: input ?? -1, events: Int16(POLLIN), revents: 0)]
            polled.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0))
            polled += pending.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, nfds_t(polled.count), Int32(clamping: milliseconds))
            if ready < 0 {
                if errno == EINTR { continue }
                throw .listener("waiting for the browser failed: \(Self.errorText())")
            }
            if ready == 0 { return .timedOut }
            // Connections first: a request already arriving wins over new connections.
            for (index, entry) in polled.enumerated().dropFirst(2).reversed()
            where entry.revents != 0 {
                if let request = readFrom(pendingIndex: index - 2) {
                    return .request(method: request.method, target: request.target)
                }
            }
            if polled[1].revents & Int16(POLLIN) != 0 { acceptConnection() }
            // Any event on the input (data, end of file, hang-up) is the reader's to take.
            if polled[0].revents != 0 { return .inputReadable }
        }
    }

    /// Answers the request `nextRequest` returned with `page`.
    public func answer(status: Int, page: LoginPage) {
        respond(
            status: status, headers: [("Content-Type", "text/html; charset=utf-8")], body: page.html
        )
    }

    /// Answers the request `nextRequest` returned with a 303 See Other to `location` (a path
    /// on this listener), so the browser loads it with a GET and the address it came with
    /// (which holds the code) leaves the address bar and history.
    public func redirect(to location: String) {
        respond(status: 303, headers: [("Location", location)], body: "")
    }

    /// Sends the answer, then keeps the connection for the browser's next request when the
    /// request allows it, or closes it.
    private func respond(status: Int, headers: [(String, String)], body text: String) {
        guard let request = current else { return }
        current = nil
        let reason =
            [
                200: "OK", 303: "See Other", 400: "Bad Request", 404: "Not Found",
                431: "Request Header Fields Too Large",
            ][status] ?? "Error"
        let body = Array(text.utf8)
        let head =
            (["HTTP/1.1 \(status) \(reason)"] + headers.map { "\($0): \($1)" } + [
                "Content-Length: \(body.count)", "Cache-Control: no-store",
                "Connection: \(request.keepAlive ? "keep-alive" : "close")", "", "",
            ]).joined(separator: "\r\n")
        let sent = Self.sendAll(Array(head.utf8) + body, to: request.fd)
        guard request.keepAlive, sent else {
            close(request.fd)
            return
        }
        pending.append((fd: request.fd, bytes: request.rest))
    }

    private func acceptConnection() {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return }
        // The browser we start must not inherit the connection.
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if pending.count >= Self.maxPendingConnections {
            // Too many idle connections: drop the oldest, which a browser reopens if needed.
            close(pending.removeFirst().fd)
        }
        pending.append((fd: fd, bytes: []))
    }

    /// Reads what is available; returns the request once its head is complete, dropping
    /// connections that close or fail.
    private func readFrom(pendingIndex index: Int) -> (method: String, target: String)? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let fd = pending[index].fd
        let got = buffer.withUnsafeMutableBytes {
            recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if got < 0, errno == EAGAIN || errno == EINTR { return nil }
        guard got > 0 else {
            close(fd)
            pending.remove(at: index)
            return nil
        }
        pending[index].bytes += buffer[..<got]
        return takeRequest(pendingIndex: index)
    }

    /// The request whose head a connection has sent in full, made `current`; one that is not
    /// an HTTP request, or too large, is answered with an error and closed.
    private func takeRequest(pendingIndex index: Int) -> (method: String, target: String)? {
        let (fd, bytes) = pending[index]
        guard let headEnd = Self.headEnd(bytes) else {
            if bytes.count > Self.maxRequestHead {
                pending.remove(at: index)
                current = (fd: fd, rest: [], keepAlive: false)
                answer(status: 431, page: .tooLarge)
            }
            return nil
        }
        pending.remove(at: index)
        let lines = String(decoding: bytes[..<headEnd], as: UTF8.self).split(separator: "\r\n")
        let parts = (lines.first ?? "").split(separator: " ")
        current = (
            fd: fd, rest: Array(bytes[(headEnd + 4)...]),
            keepAlive: parts.count == 3 && Self.allowsKeepAlive(parts[2], lines.dropFirst())
        )
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            answer(status: 400, page: .badRequest)
            return nil
        }
        return (method: String(parts[0]), target: String(parts[1]))
    }

    /// Whether the connection may carry another request after this one: HTTP/1.1 without
    /// `Connection: close`, and without a body (which this listener never reads, so what
    /// follows the head would not be the next request).
    private static func allowsKeepAlive(_ version: Substring, _ headers: ArraySlice<Substring>)
        -> Bool
    {
        guard version == "HTTP/1.1" else { return false }
        return !headers.contains { line in
            let header = line.lowercased()
            return header.hasPrefix("transfer-encoding:")
                || (header.hasPrefix("content-length:")
                    && header.dropFirst("content-length:".count).filter { $0 != " " } != "0")
                || (header.hasPrefix("connection:") && header.contains("close"))
        }
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }
    }

    /// Whether all of `bytes` went out.
    private static func sendAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            sent += result
        }
        return true
    }

    private static func localAddress(of fd: Int32) -> (host: String, port: UInt16)? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count)) != nil else {
            return nil
        }
        let host = String(
            decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (host: host, port: UInt16(bigEndian: address.sin_port))
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
