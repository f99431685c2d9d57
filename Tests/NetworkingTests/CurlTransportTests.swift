import Foundation
import Networking
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct CurlTransportTests {
    let transport = CurlTransport()

    @Test func aRedirectIsAnsweredAsAStatusAndNotFollowed() throws {
        let server = try LocalServer(responses: [
            "HTTP/1.1 308 Resume Incomplete\r\nRange: bytes=0-262143\r\n"
                + "Location: /elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ])
        let response = try transport.send(
            HTTPRequest(method: "PUT", url: "http://127.0.0.1:\(server.port)/upload", timeout: 10))
        let requests = server.finish()
        #expect(response.status == 308)
        #expect(response.header("range") == "bytes=0-262143")
        #expect(requests.count == 1)
        #expect(requests.first?.hasPrefix("PUT /upload HTTP/1.1\r\n") == true)
        // An empty PUT still says how long its body is, as a resumable status query needs.
        #expect(requests.first?.contains("Content-Length: 0\r\n") == true)
    }

    @Test func theBodyHeadersAndStatusOfAnAnswerArrive() throws {
        let server = try LocalServer(responses: [
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                + "Content-Length: 11\r\nConnection: close\r\n\r\n{\"a\":\"b\"}\r\n"
        ])
        let response = try transport.send(
            HTTPRequest(
                method: "POST", url: "http://127.0.0.1:\(server.port)/token",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array("grant_type=x".utf8), timeout: 10))
        let request = try #require(server.finish().first)
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.body == Array("{\"a\":\"b\"}\r\n".utf8))
        #expect(request.hasPrefix("POST /token HTTP/1.1\r\n"))
        #expect(!request.contains("Expect:"))
    }

    @Test func aSilentServerTimesOut() throws {
        let (fd, port) = try LocalServer.silent()
        defer { close(fd) }
        let started = ContinuousClock.now
        let error = #expect(throws: TransportError.self) {
            try transport.send(
                HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/", timeout: 0.3))
        }
        #expect(error?.kind == .timedOut)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func aRefusedConnectionIsCouldNotConnect() throws {
        let port = try LocalServer.closedPort()
        let error = #expect(throws: TransportError.self) {
            try transport.send(
                HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/", timeout: 5))
        }
        #expect(error?.kind == .couldNotConnect)
        #expect(error?.message.contains("127.0.0.1:\(port)") == true)
        // libcurl's detail already ends with its short text; it is said once, not twice.
        let text = CurlError.couldNotConnect.text
        #expect(error?.message.components(separatedBy: text).count == 2)
    }

    @Test func anAnswerOverTheCapIsRefused() throws {
        let body = String(repeating: "x", count: 2000)
        // No Content-Length: the cap must hold while bytes stream in, not only up front.
        let server = try LocalServer(responses: [
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body
        ])
        var small = transport
        small.maxResponseBytes = 1000
        let error = #expect(throws: TransportError.self) {
            try small.send(
                HTTPRequest(method: "GET", url: "http://127.0.0.1:\(server.port)/", timeout: 10))
        }
        _ = server.finish()
        #expect(error?.kind == .responseTooLarge)
    }

    @Test(arguments: [
        "http://example.com/token", "http://10.0.0.1/x", "ftp://127.0.0.1/x", "file:///etc/passwd",
        "not a url",
    ])
    func plainHTTPOnlyGoesToLoopback(url: String) {
        let error = #expect(throws: TransportError.self) {
            try transport.send(HTTPRequest(method: "GET", url: url, timeout: 1))
        }
        #expect(error?.kind == .other)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.1.2.3", true), ("localhost", true), ("[::1]", true),
        ("::1", true), ("128.0.0.1", false), ("127.0.0.1.example.com", false),
        ("example.com", false),
    ])
    func loopbackHosts(host: String, expected: Bool) {
        #expect(CurlTransport.isLoopback(host) == expected)
    }

    @Test func theTraceNamesTheExchangeButNoSecret() throws {
        let server = try LocalServer(responses: [
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        ])
        let lines = LineCollector()
        var tracing = transport
        tracing.trace = { lines.append($0) }
        _ = try tracing.send(
            HTTPRequest(
                method: "GET",
                url: "http://127.0.0.1:\(server.port)/revoke?token=sekrit-1&alt=media", timeout: 10)
        )
        _ = server.finish()
        let line = try #require(lines.all.first)
        #expect(
            line.hasPrefix(
                "GET http://127.0.0.1:\(server.port)/revoke?token=REDACTED&alt=media -> 200 ("))
        #expect(line.hasSuffix(" ms)"))
        #expect(!line.contains("sekrit"))
    }

    @Test func progressIsReported() throws {
        let body = String(repeating: "y", count: 100_000)
        let server = try LocalServer(responses: [
            "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                + body
        ])
        let seen = LineCollector()
        var reporting = transport
        reporting.progress = { seen.append("\($0.downloaded)/\($0.downloadTotal)") }
        let response = try reporting.send(
            HTTPRequest(method: "GET", url: "http://127.0.0.1:\(server.port)/", timeout: 10))
        _ = server.finish()
        #expect(response.body.count == 100_000)
        #expect(seen.all.contains("100000/100000"))
    }
}

@Suite struct RedactionTests {
    @Test(arguments: [
        ("https://h/revoke?token=abc", "https://h/revoke?token=REDACTED"),
        (
            "http://127.0.0.1:5/?state=s1&code=c2&scope=x",
            "http://127.0.0.1:5/?state=REDACTED&code=REDACTED&scope=x"
        ),
        ("https://user:pw@h/p", "https://REDACTED@h/p"),
        (
            "https://h/drive/v3/files?q=name%20%3D%20'a'",
            "https://h/drive/v3/files?q=name%20%3D%20'a'"
        ),
        ("https://h/x?Client_Secret=zz", "https://h/x?Client_Secret=REDACTED"),
        // A resumable session URI lets anyone holding it upload into the file (Google).
        (
            "https://h/upload/drive/v3/files/1a?uploadType=resumable&upload_id=AEmuoyUP8z",
            "https://h/upload/drive/v3/files/1a?uploadType=resumable&upload_id=REDACTED"
        ),
    ])
    func secretsAreReplaced(url: String, expected: String) {
        #expect(Redaction.url(url) == expected)
    }
}

@Suite struct CurlErrorTests {
    @Test func namedCodesMatchInCatch() {
        let error: any Error = CurlError(
            rawValue: CurlError.operationTimedOut.rawValue, operation: "perform")
        var matched = false
        switch error {
        case CurlError.couldNotConnect: matched = false
        case CurlError.operationTimedOut: matched = true
        default: matched = false
        }
        #expect(matched)
        #expect("\(error)".hasPrefix("perform: "))
        #expect(CurlError.couldNotConnect.text.lowercased().contains("connect"))
    }
}

/// Lines handed over from libcurl's callbacks, read after the transfer.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
