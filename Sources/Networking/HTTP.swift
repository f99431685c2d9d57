/// An HTTP request as a value: what the Drive and OAuth layers hand to a transport.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    /// In order; names as given (HTTP names are case-insensitive, see `HTTPResponse.header`).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Whole-request deadline in seconds (connect + transfer).
    public var timeout: Double

    public init(
        method: String, url: String, headers: [(name: String, value: String)] = [],
        body: [UInt8] = [], timeout: Double = 60
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body
            && lhs.timeout == rhs.timeout
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// Any status, including 4xx/5xx and 308: the caller decides which are errors.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first header named `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// The seam between protocol logic and the wire. The curl transport is the real conformer;
/// tests may script answers. Throws `TransportError` only when no HTTP answer arrived
/// (connection refused, reset, timed out, TLS failure).
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse
}

/// No HTTP answer: the request may or may not have reached the server.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case couldNotConnect, timedOut, connectionLost, tls, responseTooLarge, other
    }

    public var kind: Kind
    /// Human words, e.g. from `curl_easy_strerror`; never holds a token. The curl transport
    /// puts the request's method and (redacted) URL first, for `--verbose` and traces.
    public var message: String
    /// The server asked, when known: what a one-line report names instead of the whole URL,
    /// whose path and query are for `--verbose`.
    public var host: String?
    /// The reason in a few words ("connection refused", "name not resolved"), when known.
    public var cause: String?

    public init(kind: Kind, message: String, host: String? = nil, cause: String? = nil) {
        self.kind = kind
        self.message = message
        self.host = host
        self.cause = cause
    }

    public var description: String { message }

    /// What failed in one short clause without the URL's path or query, e.g. "cannot
    /// connect to www.googleapis.com (connection refused)"; `message` when the host is unknown.
    public var summary: String {
        guard let host else { return message }
        let because = cause.map { " (\($0))" } ?? ""
        return switch kind {
        case .couldNotConnect: "cannot connect to \(host)\(because)"
        case .timedOut: "no answer from \(host) in time\(because)"
        case .connectionLost: "the connection to \(host) broke\(because)"
        case .tls: "no secure connection to \(host)\(because)"
        case .responseTooLarge, .other: "\(host): \(cause ?? message)"
        }
    }

    /// Whether trying again may help: the connection failed, timed out or broke. A TLS
    /// failure, an answer over the size cap or a refused URL fails the same way every time.
    /// Drive's retries and the token refresh both ask here (FORMAT.md §9.1: network errors).
    public var isRetryable: Bool {
        kind == .couldNotConnect || kind == .timedOut || kind == .connectionLost
    }
}

/// Where an authorised request gets its bearer token. OAuth's token provider is the real
/// conformer; Drive only asks. `refreshing: true` is the one forced refresh after a 401.
public protocol AccessTokenSource: Sendable {
    func accessToken(refreshing: Bool) throws -> String
}

extension HTTPResponse {
    /// The retry guidance for a status alone (FORMAT.md §9.2): too many requests, or a server
    /// error. A service may add its own (Drive's rate-limit 403s, which need the body).
    public static func isTransient(status: Int) -> Bool {
        status == 429 || (500...599).contains(status)
    }
}

/// A failure to get a token that a retry may cure (the token endpoint's 429 or 5xx, a lost
/// connection): the Drive client backs off and asks again within its retry budget.
public protocol TransientFailure: Error {
    var isTransient: Bool { get }
    /// The server's `Retry-After` header as sent, if it said how long to wait.
    var retryAfter: String? { get }
    /// The transport failure behind it, when no answer came: a token endpoint that cannot
    /// be reached spends the shorter budget of `RetryPolicy.unreachableDeadline` too.
    var transportFailure: TransportError? { get }
}
