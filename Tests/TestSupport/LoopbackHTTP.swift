import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One answer from a loopback HTTP server.
public struct LoopbackResponse: Sendable {
    public var status: Int
    /// Header names lower-cased; a repeated header keeps its last value.
    public var headers: [String: String]
    public var body: Data

    public var text: String { String(decoding: body, as: UTF8.self) }
}

public struct LoopbackHTTPError: Error, CustomStringConvertible {
    public var description: String
}

/// A deliberately tiny HTTP/1.1 client over a plain socket, for test helpers that talk to
/// servers on 127.0.0.1 (the emulator's control API). It sends one request with
/// `Connection: close` and reads until the server closes, so there is no framing to get wrong
/// and no dependency on FoundationNetworking, which the product does not use either.
public enum LoopbackHTTP {
    public static func request(
        port: UInt16, method: String, path: String, headers: [String: String] = [:],
        body: Data = Data()
    ) throws -> LoopbackResponse {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw failure("socket") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw failure("connect to 127.0.0.1:\(port)") }

        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        head += "Content-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try writeAll(descriptor, Data((head + "\r\n").utf8) + body)
        return try parse(readAll(descriptor))
    }

    private static func writeAll(_ descriptor: Int32, _ data: Data) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var sent = 0
            while sent < buffer.count {
                let count = send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, 0)
                guard count > 0 else { throw failure("send") }
                sent += count
            }
        }
    }

    private static func readAll(_ descriptor: Int32) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return data }
            guard count > 0 else { throw failure("recv") }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    private static func parse(_ data: Data) throws -> LoopbackResponse {
        let separator = Data("\r\n\r\n".utf8)
        guard let end = data.range(of: separator) else {
            throw LoopbackHTTPError(description: "the server closed before a whole HTTP header")
        }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self)
            .components(separatedBy: "\r\n")
        let statusWords = lines[0].split(separator: " ")
        guard statusWords.count >= 2, let status = Int(statusWords[1]) else {
            throw LoopbackHTTPError(description: "not an HTTP status line: \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] =
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return LoopbackResponse(
            status: status, headers: headers, body: Data(data[end.upperBound...]))
    }

    private static func failure(_ operation: String) -> LoopbackHTTPError {
        LoopbackHTTPError(description: "\(operation) failed: \(String(cString: strerror(errno)))")
    }
}
