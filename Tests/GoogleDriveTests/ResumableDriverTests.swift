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

@Test func anExpiredSessionStartsOver() throws {
    let bytes = payload(300 * kib)
    let transport = ScriptedTransport([
        answer(200, headers: [("Location", session)]),
        googleError(404, "notFound"),
        answer(200, headers: [("Location", session + "b")]),
        answer(308, headers: [("Range", "bytes=0-262143")]),
        answer(201, #"{"id":"F1","name":"n.json"}"#),
    ])
    _ = try fakeDrive(transport, resumableThreshold: 256 * kib).create(
        name: "n.json", id: "F1", bytes: bytes)
    let sent = transport.sent
    #expect(sent.map(\.method) == ["POST", "PUT", "POST", "PUT", "PUT"])
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
