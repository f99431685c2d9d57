import CCurl
import Foundation

/// How far a transfer has got, as libcurl reports it (`CURLOPT_XFERINFOFUNCTION`).
/// Totals are 0 while unknown.
public struct TransferProgress: Sendable, Equatable {
    public var downloaded: Int
    public var downloadTotal: Int
    public var uploaded: Int
    public var uploadTotal: Int
}

/// The real `HTTPTransport`: one libcurl easy handle per request.
///
/// Fixed policy, not options: TLS peer and host verification always on; redirects never
/// followed (Drive's resumable upload answers 308 meaning "resume incomplete", which must
/// reach the caller as a status); plain http only to loopback hosts (the local emulator and
/// the login listener), https everywhere else, enforced twice — by the URL check below and
/// by `CURLOPT_PROTOCOLS_STR`, so not even a scheme libcurl parses differently slips through.
public struct CurlTransport: HTTPTransport {
    /// Seconds allowed for the TCP and TLS handshakes; the request's `timeout` bounds the
    /// whole exchange.
    public var connectTimeout: Double
    /// Bodies larger than this end the transfer with `TransportError.Kind.responseTooLarge`.
    public var maxResponseBytes: Int
    /// Called from inside the transfer as bytes move.
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// Receives one line per exchange: method, URL with secrets redacted, status and
    /// duration. Never a header or a body.
    public var trace: (@Sendable (String) -> Void)?

    public init(
        connectTimeout: Double = 15, maxResponseBytes: Int = 300 << 20,
        progress: (@Sendable (TransferProgress) -> Void)? = nil,
        trace: (@Sendable (String) -> Void)? = nil
    ) {
        self.connectTimeout = connectTimeout
        self.maxResponseBytes = maxResponseBytes
        self.progress = progress
        self.trace = trace
    }

    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let shownURL = Redaction.url(request.url)
        let started = ContinuousClock.now
        func elapsed() -> String {
            let duration = ContinuousClock.now - started
            let milliseconds =
                duration.components.seconds * 1000
                + duration.components.attoseconds / 1_000_000_000_000_000
            return "\(milliseconds) ms"
        }
        do {
            let response = try perform(request)
            trace?("\(request.method) \(shownURL) -> \(response.status) (\(elapsed()))")
            return response
        } catch {
            trace?("\(request.method) \(shownURL) -> failed: \(error.message) (\(elapsed()))")
            throw TransportError(
                kind: error.kind, message: "\(request.method) \(shownURL): \(error.message)",
                host: URLComponents(string: request.url)?.host, cause: error.cause ?? error.message)
        }
    }

    private func perform(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let scheme = try Self.allowedScheme(for: request.url)
        let sink = ResponseSink(maxBytes: maxResponseBytes, progress: progress)
        do {
            let easy = try CurlEasy(sink: sink)
            try configure(easy, for: request, scheme: scheme)
            do {
                try easy.perform()
            } catch {
                if sink.exceededLimit || error == .fileSizeExceeded {
                    throw TransportError(
                        kind: .responseTooLarge,
                        message: "the answer is larger than the \(maxResponseBytes)-byte limit")
                }
                throw TransportError(
                    kind: error.transportKind, message: error.description,
                    cause: error.cause(
                        osErrno: Int32(clamping: (try? easy.info(CURLINFO_OS_ERRNO)) ?? 0)))
            }
            let status = try easy.info(CURLINFO_RESPONSE_CODE)
            return HTTPResponse(status: status, headers: sink.headers, body: sink.body)
        } catch let error as TransportError {
            throw error
        } catch {
            throw TransportError(kind: .other, message: "\(error)")
        }
    }

    private func configure(_ easy: CurlEasy, for request: HTTPRequest, scheme: String)
        throws(CurlError)
    {
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_PROTOCOLS_STR, scheme)
        try easy.set(CURLOPT_FOLLOWLOCATION, false)
        try easy.set(CURLOPT_SSL_VERIFYPEER, true)
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        // Timeouts would otherwise use SIGALRM during name resolution, which is unsafe in a
        // threaded process.
        try easy.set(CURLOPT_NOSIGNAL, true)
        try easy.set(
            CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(min(connectTimeout, request.timeout)))
        try easy.set(CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout))
        // Loopback never goes through a proxy a user configured for the outside world.
        try easy.set(CURLOPT_NOPROXY, "127.0.0.1,localhost,::1")
        try easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: maxResponseBytes)

        switch request.method {
        case "GET" where request.body.isEmpty:
            try easy.set(CURLOPT_HTTPGET, true)
        case "HEAD":
            try easy.set(CURLOPT_NOBODY, true)
        default:
            try easy.set(CURLOPT_CUSTOMREQUEST, request.method)
            // POST and PUT always send a body, even an empty one (a resumable upload's
            // status query is an empty PUT that needs `Content-Length: 0`).
            if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
                try easy.setBody(request.body)
            }
        }
        // "Expect:" stops libcurl from waiting for `100 Continue` before large bodies.
        try easy.setHeaders(request.headers.map { "\($0.name): \($0.value)" } + ["Expect:"])

        let userData = Unmanaged.passUnretained(easy.sink).toOpaque()
        try easy.set(CURLOPT_WRITEDATA, pointer: userData)
        try easy.set(
            CURLOPT_WRITEFUNCTION,
            function: { data, size, count, userData in
                guard let data, let userData else { return 0 }
                let sink = Unmanaged<ResponseSink>.fromOpaque(userData).takeUnretainedValue()
                return sink.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
            })
        try easy.set(CURLOPT_HEADERDATA, pointer: userData)
        try easy.set(
            CURLOPT_HEADERFUNCTION,
            function: { data, size, count, userData in
                guard let data, let userData else { return 0 }
                let sink = Unmanaged<ResponseSink>.fromOpaque(userData).takeUnretainedValue()
                sink.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
                return size * count
            })
        if progress != nil {
            try easy.set(CURLOPT_XFERINFODATA, pointer: userData)
            try easy.setProgressFunction {
                userData, downloadTotal, downloaded, uploadTotal, uploaded in
                guard let userData else { return 0 }
                let sink = Unmanaged<ResponseSink>.fromOpaque(userData).takeUnretainedValue()
                sink.progress?(
                    TransferProgress(
                        downloaded: downloaded, downloadTotal: downloadTotal, uploaded: uploaded,
                        uploadTotal: uploadTotal))
                return 0
            }
            try easy.set(CURLOPT_NOPROGRESS, false)
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        max(1, Int((seconds * 1000).rounded(.up)))
    }

    /// The one scheme this URL may use: https, or http when the host is loopback.
    public static func allowedScheme(for url: String) throws(TransportError) -> String {
        guard let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw TransportError(kind: .other, message: "'\(Redaction.url(url))' is not a URL")
        }
        switch scheme {
        case "https":
            return "https"
        case "http" where isLoopback(host):
            return "http"
        default:
            throw TransportError(
                kind: .other,
                message:
                    "'\(Redaction.url(url))' must use https (plain http is allowed only for loopback hosts)"
            )
        }
    }

    public static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
