import CCurl

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A libcurl result code (`CURLcode`) as a Swift error, with the operation that failed.
/// The named statics are the codes the transport treats specially; `~=` lets a `catch`
/// match them: `catch CurlError.operationTimedOut { … }`.
public struct CurlError: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `CURLcode` value.
    public let rawValue: UInt32
    /// What we were doing, e.g. `perform` or `setopt CURLOPT_URL`.
    public var operation: String

    public init(rawValue: UInt32) {
        self.init(rawValue: rawValue, operation: "")
    }

    public init(rawValue: UInt32, operation: String) {
        self.rawValue = rawValue
        self.operation = operation
    }

    init(_ code: CURLcode, operation: String) {
        self.init(rawValue: code.rawValue, operation: operation)
    }

    public static let unsupportedProtocol = CurlError(CURLE_UNSUPPORTED_PROTOCOL, operation: "")
    public static let couldNotResolveHost = CurlError(CURLE_COULDNT_RESOLVE_HOST, operation: "")
    public static let couldNotResolveProxy = CurlError(CURLE_COULDNT_RESOLVE_PROXY, operation: "")
    public static let couldNotConnect = CurlError(CURLE_COULDNT_CONNECT, operation: "")
    public static let operationTimedOut = CurlError(CURLE_OPERATION_TIMEDOUT, operation: "")
    public static let writeError = CurlError(CURLE_WRITE_ERROR, operation: "")
    public static let abortedByCallback = CurlError(CURLE_ABORTED_BY_CALLBACK, operation: "")
    public static let fileSizeExceeded = CurlError(CURLE_FILESIZE_EXCEEDED, operation: "")
    public static let gotNothing = CurlError(CURLE_GOT_NOTHING, operation: "")
    public static let sendError = CurlError(CURLE_SEND_ERROR, operation: "")
    public static let receiveError = CurlError(CURLE_RECV_ERROR, operation: "")
    public static let partialFile = CurlError(CURLE_PARTIAL_FILE, operation: "")
    public static let sslConnectError = CurlError(CURLE_SSL_CONNECT_ERROR, operation: "")
    public static let peerFailedVerification = CurlError(
        CURLE_PEER_FAILED_VERIFICATION, operation: "")
    public static let sslCACertificate = CurlError(CURLE_SSL_CACERT_BADFILE, operation: "")

    /// libcurl's own words (`curl_easy_strerror`).
    public var text: String { String(cString: curl_easy_strerror(CURLcode(rawValue: rawValue))) }

    /// libcurl's detailed message (the operation after a failed perform) usually ends with
    /// the short text already; it is not repeated.
    public var description: String {
        if operation.isEmpty { return text }
        return operation.hasSuffix(text) ? operation : "\(operation): \(text)"
    }

    /// Codes compare by value; the operation is context, not identity.
    public static func == (lhs: CurlError, rhs: CurlError) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    public static func ~= (pattern: CurlError, error: any Error) -> Bool {
        (error as? CurlError)?.rawValue == pattern.rawValue
    }

    /// The one funnel from a `CURLcode` to a throw, naming the operation.
    static func check(_ code: CURLcode, _ operation: @autoclosure () -> String) throws(CurlError) {
        guard code == CURLE_OK else { throw CurlError(code, operation: operation()) }
    }

    /// How the transport's callers see this failure (no HTTP answer arrived).
    var transportKind: TransportError.Kind {
        switch self {
        case .couldNotConnect, .couldNotResolveHost, .couldNotResolveProxy: .couldNotConnect
        case .operationTimedOut: .timedOut
        case .gotNothing, .sendError, .receiveError, .partialFile: .connectionLost
        case .sslConnectError, .peerFailedVerification, .sslCACertificate: .tls
        case .fileSizeExceeded: .responseTooLarge
        default: .other
        }
    }

    /// The reason in a few words for a one-line report; `osErrno` is the socket's errno
    /// (`CURLINFO_OS_ERRNO`), which tells a refused connection from an unreachable host.
    func cause(osErrno: Int32) -> String {
        switch self {
        case .couldNotResolveHost: return "name not resolved"
        case .couldNotResolveProxy: return "proxy name not resolved"
        case .couldNotConnect:
            switch osErrno {
            case ECONNREFUSED: return "connection refused"
            case EHOSTUNREACH: return "host unreachable"
            case ENETUNREACH: return "network unreachable"
            case ETIMEDOUT: return "timed out"
            default: return text
            }
        default: return text
        }
    }
}
