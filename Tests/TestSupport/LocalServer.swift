import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A tiny HTTP server on 127.0.0.1 for transport tests: it answers each connection with the
/// next canned response, then stops listening, so a client that tried a second request
/// (say, by following a redirect) would be refused. `finish()` waits for it to be done and
/// returns the raw requests it read.
public final class LocalServer: @unchecked Sendable {
    public let port: UInt16
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private var received: [String] = []

    public init(responses: [String]) throws {
        (listener, port) = try Self.listen()
        Thread.detachNewThread { [self] in
            for response in responses {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { break }
                received.append(Self.readRequest(connection))
                _ = Array(response.utf8).withUnsafeBytes {
                    send(connection, $0.baseAddress, $0.count, 0)
                }
                close(connection)
            }
            close(listener)
            done.signal()
        }
    }

    /// Waits until every response was sent; the requests as read, head and any body bytes
    /// that arrived with it.
    public func finish() -> [String] {
        done.wait()
        return received
    }

    /// A listening socket that never accepts: the kernel completes the handshake, and the
    /// client then waits forever for an answer. Close it with `close(fd)`.
    public static func silent() throws -> (fd: Int32, port: UInt16) {
        try listen()
    }

    /// A port on 127.0.0.1 that nothing listens on (bound, then released).
    public static func closedPort() throws -> UInt16 {
        let (fd, port) = try listen()
        close(fd)
        return port
    }

    static func listen() throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, Glibc.listen(fd, 8) == 0 else {
            close(fd)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Reads until the end of the header block (enough for the tests' small requests).
    private static func readRequest(_ connection: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !bytes.containsHeaderEnd {
            let got = buffer.withUnsafeMutableBytes {
                recv(connection, $0.baseAddress, $0.count, 0)
            }
            guard got > 0 else { break }
            bytes += buffer[..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension [UInt8] {
    fileprivate var containsHeaderEnd: Bool {
        count >= 4
            && indices.dropLast(3).contains { self[$0...$0 + 3].elementsEqual([13, 10, 13, 10]) }
    }
}
