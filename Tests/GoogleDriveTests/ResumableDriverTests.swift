import GoogleDrive
import Networking
import TestSupport
import Testing

private let kib = 1024
private let session = "http://127.0.0.1:9/upload/session/1"

private func payload(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
}

@Test func aResumableCreateResumesWhereTheServerIsAfterACut() throws {
    let bytes = payload(600 * kib)
    let clock = FakeClock()
    let transport = ScriptedTransport([
        answer(200, headers: [("Location", session)]),
        answer(308, headers: [("Range", "bytes=0-262143")]),
        cut(),
        answer(308, headers: [("Range", "bytes=0-393215")]),
        answer(200, #"{"id":"F1","name":"n.json","size":"614400"}"#),
    ])
    let file = try fakeDrive(transport, clock: clock, resumableThreshold: 512 * kib).create(
        name: "n.json", id: "F1", bytes: bytes)
    #expect(file.size == 600 * kib)
    let sent = transport.sent
    #expect(sent.count == 5)
    #expect(sent[0].query("uploadType") == "resumable")
    #expect(sent[0].header("X-Upload-Content-Length") == "614400")
    #expect(String(decoding: sent[0].body, as: UTF8.self).contains(#""id":"F1""#))
    #expect(sent[1...].allSatisfy { $0.url == session && $0.method == "PUT" })
    #expect(sent[1].header("Content-Range") == "bytes 0-262143/614400")
    #expect(sent[1].body == Array(bytes[0..<262_144]))
    #expect(sent[3].header("Content-Range") == "bytes */614400")
    #expect(sent[3].body.isEmpty)
    #expect(sent[4].header("Content-Range") == "bytes 393216-614399/614400")
    #expect(sent[4].body == Array(bytes[393_216...]))
    #expect(clock.sleeps.count == 1)
}

/// Five minutes of chunks on a slow link, then a 503: still retried, as the deadline counts
/// from the last chunk kept.
@Test func aSlowUploadIsStillRetriedAfterFiveMinutes() throws {
    let bytes = payload(600 * kib)
    let clock = FakeClock()
    func slowChunk(keptUpTo last: Int) -> ScriptedTransport.Step {
        { _ in
            clock.advance(200)
            return .success(HTTPResponse(status: 308, headers: [("Range", "bytes=0-\(last)")]))
        }
    }
    let transport = ScriptedTransport([
        answer(200, headers: [("Location", session)]),
        slowChunk(keptUpTo: 262_143),
        slowChunk(keptUpTo: 524_287),
        googleError(503, "backendError"),
        answer(308, headers: [("Range", "bytes=0-524287")]),
        answer(200, #"{"id":"F1","name":"n.json","size":"614400"}"#),
    ])
    let file = try fakeDrive(transport, clock: clock, resumableThreshold: 512 * kib).create(
        name: "n.json", id: "F1", bytes: bytes)
    #expect(file.size == 600 * kib)
    #expect(transport.sent.last?.header("Content-Range") == "bytes 524288-614399/614400")
    #expect(clock.sleeps.count == 1)
}

@Test func anExpiredSessionStartsOver() throws {
    let bytes = payload(300 * kib)
    let transport = ScriptedTransport([
        answer(200, headers: [("Location", session)]),
        googleError(404, "notFound"),
        answer(200, headers: [("Location", session + "b")]),
        answer(308, headers: [("Range", "bytes=0-262143")]),
        answer(201, #"{"id":"F1","name":"n.json"}"#),
    ])
    let clock = FakeClock()
    _ = try fakeDrive(transport, clock: clock, resumableThreshold: 256 * kib).create(
        name: "n.json", id: "F1", bytes: bytes)
    let sent = transport.sent
    #expect(sent.map(\.method) == ["POST", "PUT", "POST", "PUT", "PUT"])
    #expect(clock.sleeps.count == 1)
    #expect(sent[3].url == session + "b")
    #expect(sent[3].header("Content-Range") == "bytes 0-262143/307200")
    #expect(sent[4].header("Content-Range") == "bytes 262144-307199/307200")
}

@Test func aLargeConditionalUpdateOpensItsSessionWithIfMatch() throws {
    let transport = ScriptedTransport([googleError(412, "conditionNotMet")])
    let result = try fakeDrive(transport, resumableThreshold: 256 * kib).update(
        id: "F1", bytes: payload(300 * kib), ifMatch: "e9")
    #expect(result == .changedSinceRead)
    let request = try #require(transport.sent.first)
    #expect(request.path == "/upload/drive/v2/files/F1")
    #expect(request.query("uploadType") == "resumable")
    #expect(request.header("If-Match") == "e9")
}

@Test func aChunkAnswered503BacksOffAndAsksWhereTheServerIs() throws {
    let bytes = payload(300 * kib)
    let clock = FakeClock()
    let transport = ScriptedTransport([
        answer(200, headers: [("Location", session)]),
        googleError(503, "backendError"),
        answer(308),
        answer(308, headers: [("Range", "bytes=0-262143")]),
        answer(200, #"{"id":"F1","name":"n.json"}"#),
    ])
    _ = try fakeDrive(transport, clock: clock, resumableThreshold: 256 * kib).create(
        name: "n.json", id: "F1", bytes: bytes)
    let sent = transport.sent
    #expect(sent[2].header("Content-Range") == "bytes */307200")
    // No Range on the 308: nothing arrived, so the first chunk goes again.
    #expect(sent[3].header("Content-Range") == "bytes 0-262143/307200")
    #expect(clock.sleeps.count == 1)
}

@Test func aWriteDuringALargeConditionalUploadEndsInChangedSinceRead() throws {
    let transport = ScriptedTransport([
        answer(200, headers: [("Location", session)]),
        answer(308, headers: [("Range", "bytes=0-262143")]),
        googleError(412, "conditionNotMet"),
    ])
    let result = try fakeDrive(transport, resumableThreshold: 256 * kib).update(
        id: "F1", bytes: payload(300 * kib), ifMatch: "e9")
    #expect(result == .changedSinceRead)
    #expect(transport.remaining == 0)
}

struct StuckSession: Sendable, CustomTestStringConvertible {
    var testDescription: String
    /// The session URL's answer to every PUT, chunk or status query.
    var put: ScriptedTransport.Step
    /// Session POSTs and PUTs until 8 attempts (the default policy) are spent.
    var posts: Int
    var puts: Int
    var last: String
}

/// 300 KiB in 256 KiB chunks against a session that never gets anywhere. Each answer that
/// makes no progress is a failed attempt: 7 backoffs, then `.unavailable` (the CLI's exit 5).
@Test(arguments: [
    StuckSession(
        testDescription: "404 on every PUT", put: googleError(404, "notFound"), posts: 8,
        puts: 8, last: "the upload session expired (HTTP 404 notFound"),
    StuckSession(
        testDescription: "410 on every PUT", put: answer(410), posts: 8, puts: 8,
        last: "the upload session expired (HTTP 410"),
    // The first chunk moves the server from 0 to 1 byte; every later one from 1 to 1.
    StuckSession(
        testDescription: "308 bytes=0-0 on every PUT",
        put: answer(308, headers: [("Range", "bytes=0-0")]), posts: 1, puts: 9,
        last: "308 with Range 'bytes=0-0'"),
    // Every byte is in after the first chunk, yet no final answer comes to the queries.
    StuckSession(
        testDescription: "308 for all bytes, never a 200",
        put: answer(308, headers: [("Range", "bytes=0-307199")]), posts: 1, puts: 9,
        last: "308 with Range 'bytes=0-307199'"),
])
func aSessionThatMakesNoProgressSpendsTheRetryBudget(_ stuck: StuckSession) throws {
    let clock = FakeClock(jitter: 0)
    let server: ScriptedTransport.Step = { request in
        request.method == "POST"
            ? .success(HTTPResponse(status: 200, headers: [("Location", session)], body: []))
            : stuck.put(request)
    }
    let transport = ScriptedTransport(Array(repeating: server, count: 100))
    let error = #expect(throws: DriveError.self) {
        try fakeDrive(transport, clock: clock, resumableThreshold: 256 * kib).create(
            name: "n.json", id: "F1", bytes: payload(300 * kib))
    }
    guard case .unavailable(let operation, let attempts, let last) = error else {
        Issue.record("expected .unavailable, got \(String(describing: error))")
        return
    }
    #expect(operation == .create(name: "n.json"))
    #expect(operation.description == "create n.json")
    #expect(attempts == 8)
    #expect(last.contains(stuck.last))
    #expect(transport.sent.filter { $0.method == "POST" }.count == stuck.posts)
    #expect(transport.sent.filter { $0.method == "PUT" }.count == stuck.puts)
    // Base 1 s doubling, capped at 32 s (FORMAT.md §9.2).
    #expect(clock.sleeps == [1, 2, 4, 8, 16, 32, 32])
}
