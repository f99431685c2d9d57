import Digests
import Foundation
import GoogleDrive
import Networking
import OAuth
import Synchronization
import TestSupport
import Testing

private let fileJSON =
    #"{"id":"F1","name":"habit-backup.json","size":"12","version":"7","md5Checksum":"abc","createdTime":"2026-01-02T00:00:00.000Z"}"#

@Test func listReadsEveryPageAndKeepsDuplicatesOldestFirst() throws {
    let transport = ScriptedTransport([
        answer(
            200,
            #"{"nextPageToken":"p2","files":[{"id":"B","name":"n.json","size":"5","version":"3","createdTime":"2026-02-01T00:00:00.000Z"}]}"#
        ),
        answer(
            200,
            #"{"files":[{"id":"A","name":"n.json","size":"9","version":"1","createdTime":"2026-01-01T00:00:00.000Z"}]}"#
        ),
    ])
    let files = try fakeDrive(transport).list(named: "it's \\ n.json")
    #expect(files.map(\.id) == ["A", "B"])
    #expect(files.map(\.size) == [9, 5])
    #expect(files.map(\.version) == [1, 3])
    let first = try #require(transport.sent.first)
    #expect(first.method == "GET")
    #expect(first.path == "/drive/v3/files")
    #expect(first.query("spaces") == "appDataFolder")
    #expect(first.query("q") == #"name = 'it\'s \\ n.json' and trashed = false"#)
    #expect(first.header("Authorization") == "Bearer token-0")
    #expect(transport.sent.last?.query("pageToken") == "p2")
}

@Test func readTakesTheEtagFirstAndChecksTheBytes() throws {
    let bytes = Array("{\"hello\":1}\n".utf8)
    let transport = ScriptedTransport([
        answer(
            200,
            #"{"id":"F1","title":"n.json","etag":"\"e1\"","md5Checksum":"\#(Digest.hex(Digest.md5(bytes)))","fileSize":"12"}"#
        ),
        answer(200, bytes: bytes),
    ])
    let snapshot = try fakeDrive(transport).read(id: "F1")
    #expect(snapshot.etag == "\"e1\"")
    #expect(snapshot.bytes == bytes)
    #expect(snapshot.file.size == 12)
    #expect(transport.sent.map(\.path) == ["/drive/v2/files/F1", "/drive/v3/files/F1"])
    #expect(transport.sent.last?.query("alt") == "media")
}

@Test func taggedReadsTheV2MetadataAndNoBytes() throws {
    let transport = ScriptedTransport([
        answer(
            200, #"{"id":"F1","title":"n.json","etag":"\"e1\"","md5Checksum":"abc","version":"4"}"#)
    ])
    let tagged = try fakeDrive(transport).tagged(id: "F1")
    #expect(tagged.etag == "\"e1\"")
    #expect(tagged.file.md5Checksum == "abc")
    #expect(tagged.file.version == 4)
    #expect(transport.sent.map(\.path) == ["/drive/v2/files/F1"])
}

@Test func v2MetadataWithoutAnEtagIsMalformed() throws {
    let transport = ScriptedTransport([answer(200, #"{"id":"F1","title":"n.json"}"#)])
    #expect(throws: DriveError.self) { try fakeDrive(transport).tagged(id: "F1") }
}

@Test func aTruncatedDownloadIsReadAgain() throws {
    let bytes = Array("{\"hello\":1}\n".utf8)
    let meta = answer(
        200,
        #"{"id":"F1","title":"n.json","etag":"e1","md5Checksum":"\#(Digest.hex(Digest.md5(bytes)))"}"#
    )
    let transport = ScriptedTransport([
        meta, answer(200, bytes: Array(bytes.prefix(5))), meta, answer(200, bytes: bytes),
    ])
    let clock = FakeClock()
    let snapshot = try fakeDrive(transport, clock: clock).read(id: "F1")
    #expect(snapshot.bytes == bytes)
    #expect(clock.sleeps.count == 1)
    #expect(transport.remaining == 0)
}

@Test func aDownloadThatNeverMatchesEndsUnavailable() throws {
    let meta = answer(
        200,
        #"{"id":"F1","title":"n.json","etag":"e1","md5Checksum":"00000000000000000000000000000000"}"#
    )
    let transport = ScriptedTransport(
        Array(repeating: [meta, answer(200, "x")], count: 3).flatMap { $0 })
    let error = #expect(throws: DriveError.self) {
        try fakeDrive(transport, retry: RetryPolicy(maxAttempts: 3)).read(id: "F1")
    }
    guard case .unavailable(_, let attempts, let last) = error else {
        Issue.record("expected .unavailable, got \(String(describing: error))")
        return
    }
    #expect(attempts == 3)
    #expect(last.contains("md5Checksum"))
}

struct RetryCase: Sendable, CustomTestStringConvertible {
    var name: String
    var first: ScriptedTransport.Step
    var wait: Double
    var testDescription: String { name }
}

/// With base 1 s and jitter 0.5, the first retry waits 1.5 s unless the server asks longer.
@Test(arguments: [
    RetryCase(
        name: "429 with Retry-After",
        first: googleError(429, "rateLimitExceeded", headers: [("Retry-After", "7")]), wait: 7),
    RetryCase(name: "503", first: googleError(503, "backendError"), wait: 1.5),
    RetryCase(name: "500 without JSON", first: answer(500, "<html>oops</html>"), wait: 1.5),
    RetryCase(name: "502", first: answer(502), wait: 1.5),
    RetryCase(name: "504", first: answer(504), wait: 1.5),
    RetryCase(
        name: "403 rateLimitExceeded", first: googleError(403, "rateLimitExceeded"), wait: 1.5),
    RetryCase(
        name: "403 userRateLimitExceeded", first: googleError(403, "userRateLimitExceeded"),
        wait: 1.5),
    RetryCase(name: "cut connection", first: cut(), wait: 1.5),
])
func transientFailuresAreRetriedAfterABackoff(_ retryCase: RetryCase) throws {
    let clock = FakeClock()
    let transport = ScriptedTransport([retryCase.first, answer(200, #"{"ids":["X1"]}"#)])
    #expect(try fakeDrive(transport, clock: clock).generateID() == "X1")
    #expect(clock.sleeps == [retryCase.wait])
}

/// A failed certificate check or an oversized answer fails the same way every time.
@Test(arguments: [TransportError.Kind.tls, .responseTooLarge, .other])
func transportFailuresThatCannotPassAreNotRetried(kind: TransportError.Kind) throws {
    let clock = FakeClock()
    let transport = ScriptedTransport([
        { _ in .failure(TransportError(kind: kind, message: "no")) },
        answer(200, #"{"ids":["X1"]}"#),
    ])
    let error = #expect(throws: DriveError.self) {
        try fakeDrive(transport, clock: clock).generateID()
    }
    guard case .unavailable(_, let attempts, _) = error else {
        Issue.record("expected .unavailable, got \(String(describing: error))")
        return
    }
    #expect(attempts == 1)
    #expect(clock.sleeps.isEmpty)
}

@Test(arguments: [
    (403, "insufficientPermissions"), (404, "notFound"), (400, "badRequest"),
    (403, "dailyLimitExceeded"),
])
func finalFailuresAreNotRetried(status: Int, reason: String) throws {
    let clock = FakeClock()
    let transport = ScriptedTransport([googleError(status, reason)])
    let error = #expect(throws: DriveError.self) {
        try fakeDrive(transport, clock: clock).generateID()
    }
    guard case .rejected(_, let google) = error else {
        Issue.record("expected .rejected, got \(String(describing: error))")
        return
    }
    #expect(google.status == status)
    #expect(google.reason == reason)
    #expect(clock.sleeps.isEmpty)
}

@Test func backoffDoublesUpToTheCapAndStopsAtMaxAttempts() throws {
    let clock = FakeClock(jitter: 0)
    let transport = ScriptedTransport(Array(repeating: answer(503), count: 6))
    let policy = RetryPolicy(base: 1, maxDelay: 5, maxAttempts: 6, deadline: 1000)
    let error = #expect(throws: DriveError.self) {
        try fakeDrive(transport, clock: clock, retry: policy).generateID()
    }
    #expect(clock.sleeps == [1, 2, 4, 5, 5])
    guard case .unavailable(_, let attempts, _) = error else {
        Issue.record("expected .unavailable, got \(String(describing: error))")
        return
    }
    #expect(attempts == 6)
}

/// The deadline stops retries before a wait would pass it; the error blames Google's
/// `Retry-After` only when that wait alone was too long, not when our own backoff was.
@Test(arguments: [
    (retryAfter: "20", base: 1.0, deadline: 45.0, sleeps: [20.0, 20], blamed: true),
    (retryAfter: "1", base: 10.0, deadline: 15.0, sleeps: [10.0], blamed: false),
])
func theDeadlineStopsRetriesBeforeAWaitWouldPassIt(
    retryAfter: String, base: Double, deadline: Double, sleeps: [Double], blamed: Bool
) throws {
    let clock = FakeClock(jitter: 0)
    let transport = ScriptedTransport(
        Array(
            repeating: googleError(
                429, "rateLimitExceeded", headers: [("Retry-After", retryAfter)]),
            count: 5))
    let policy = RetryPolicy(base: base, maxDelay: 32, maxAttempts: 10, deadline: deadline)
    let error = #expect(throws: DriveError.self) {
        try fakeDrive(transport, clock: clock, retry: policy).generateID()
    }
    #expect(clock.sleeps == sleeps)
    let said = "Google asked to wait \(retryAfter) s, past this run's \(Int(deadline)) s limit"
    #expect(error?.description.contains(said) == blamed)
}

@Test func a401RefreshesTheTokenOnce() throws {
    let tokens = CountingTokens()
    let transport = ScriptedTransport([answer(401), answer(200, #"{"ids":["X1"]}"#)])
    #expect(try fakeDrive(transport, tokens: tokens).generateID() == "X1")
    #expect(tokens.refreshes == 1)
    #expect(
        transport.sent.map { $0.header("Authorization") } == ["Bearer token-0", "Bearer token-1"])
}

@Test func aSecond401MeansTheLoginIsGone() throws {
    let transport = ScriptedTransport([answer(401), googleError(401, "authError")])
    let error = #expect(throws: DriveError.self) { try fakeDrive(transport).generateID() }
    guard case .unauthorized = error else {
        Issue.record("expected .unauthorized, got \(String(describing: error))")
        return
    }
}

@Test func aTokenFailureIsPassedOn() throws {
    struct Revoked: Error {}
    let transport = ScriptedTransport([])
    let error = #expect(throws: DriveError.self) {
        try fakeDrive(transport, tokens: CountingTokens(failure: Revoked())).generateID()
    }
    guard case .token(let inner) = error else {
        Issue.record("expected .token, got \(String(describing: error))")
        return
    }
    #expect(inner is Revoked)
    #expect(transport.sent.isEmpty)
}

/// A refresh inside a Drive operation meets a busy token endpoint: its `Retry-After` is
/// honoured as Drive's own is; without one the usual backoff (1.5 s at jitter 0.5) applies.
@Test(arguments: [("6", 6.0), (nil, 1.5)])
func aBusyTokenEndpointIsRetriedAfterItsRetryAfter(header: String?, wait: Double) throws {
    let folder = try Paths.temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = TokenStore(path: folder.path + "/token.json")
    try store.save(
        StoredLogin(
            refreshToken: "rt", accessToken: "at-old",
            accessTokenExpiresAt: Date(timeIntervalSinceNow: -60), scope: nil))
    let busy = HTTPResponse(
        status: 503, headers: header.map { [("Retry-After", $0)] } ?? [],
        body: Array(#"{"error":"temporarily_unavailable"}"#.utf8))
    let tokenEndpoint = ScriptedTransport(answers: [
        .success(busy),
        .success(
            HTTPResponse(
                status: 200, body: Array(#"{"access_token":"at-new","expires_in":3599}"#.utf8))),
    ])
    let tokens = TokenProvider(
        client: OAuthClient(
            clientID: "c", clientSecret: "s", authorizationEndpoint: "http://127.0.0.1:9/auth",
            tokenEndpoint: "http://127.0.0.1:9/token",
            revocationEndpoint: "http://127.0.0.1:9/revoke"),
        store: store, transport: tokenEndpoint)
    let clock = FakeClock()
    let drive = ScriptedTransport([answer(200, #"{"ids":["X1"]}"#)])
    let client = DriveClient(
        baseURL: "http://127.0.0.1:9/", transport: drive, tokens: tokens, clock: clock.clock)
    #expect(try client.generateID() == "X1")
    #expect(clock.sleeps == [wait])
    #expect(tokenEndpoint.sent.count == 2)
    #expect(drive.sent.map { $0.header("Authorization") } == ["Bearer at-new"])
}

@Test func theServerDateIsRecorded() throws {
    let clock = FakeClock()
    // The fake wall clock starts at 2027-01-15T08:00:00Z; the server says 10 minutes later.
    let transport = ScriptedTransport([
        answer(200, #"{"ids":["X1"]}"#, headers: [("Date", "Fri, 15 Jan 2027 08:10:00 GMT")])
    ])
    let drive = fakeDrive(transport, clock: clock)
    _ = try drive.generateID()
    let reading = try #require(drive.clockReading)
    #expect(reading.skew == 600)
}

/// Google stamps Date as it starts answering; a body that then takes minutes is not a clock
/// minutes apart. (The fake wall clock starts at 2027-01-15T08:00:00Z.)
@Test func aSlowAnswerIsNotTakenForClockSkew() throws {
    let clock = FakeClock()
    let transport = ScriptedTransport([
        { _ in
            clock.advance(400)
            return .success(
                HTTPResponse(
                    status: 200, headers: [("Date", "Fri, 15 Jan 2027 08:00:00 GMT")],
                    body: Array(#"{"ids":["X1"]}"#.utf8)))
        }
    ])
    let drive = fakeDrive(transport, clock: clock)
    _ = try drive.generateID()
    #expect(try #require(drive.clockReading).skew == 0)
}

/// A download whose minutes of body arrive damaged is read again: the deadline counts from
/// the end of the transfer, not from its start.
@Test func aSlowDownloadThatArrivesDamagedIsReadAgain() throws {
    let bytes = Array("{\"hello\":1}\n".utf8)
    let clock = FakeClock()
    let metadata = answer(
        200,
        #"{"id":"F1","title":"n.json","etag":"\"e1\"","md5Checksum":"\#(Digest.hex(Digest.md5(bytes)))"}"#
    )
    let transport = ScriptedTransport([
        metadata,
        { _ in
            clock.advance(400)
            return .success(HTTPResponse(status: 200, body: Array(bytes.dropLast())))
        },
        metadata,
        answer(200, bytes: bytes),
    ])
    let snapshot = try fakeDrive(transport, clock: clock).read(id: "F1")
    #expect(snapshot.bytes == bytes)
    #expect(clock.sleeps.count == 1)
}

@Test func createSendsTheIdAndTheAppFolderAsParent() throws {
    let bytes = Array("{}\n".utf8)
    let transport = ScriptedTransport([answer(201, fileJSON)])
    let file = try fakeDrive(transport).create(name: "habit-backup.json", id: "F1", bytes: bytes)
    #expect(file.id == "F1")
    let request = try #require(transport.sent.first)
    #expect(request.method == "POST")
    #expect(request.path == "/upload/drive/v3/files")
    #expect(request.query("uploadType") == "multipart")
    let body = String(decoding: request.body, as: UTF8.self)
    #expect(body.contains(#""id":"F1""#))
    #expect(body.contains(#""parents":["appDataFolder"]"#))
    #expect(body.contains("\r\n{}\n\r\n"))
    #expect(request.header("Content-Type")?.hasPrefix("multipart/related; boundary=") == true)
}

@Test func aCreateRetriedAfterACutConnectionConfirmsTheFileIsOurs() throws {
    let bytes = Array("{}\n".utf8)
    let transport = ScriptedTransport([
        cut(), googleError(409, "fileIdInUse"),
        answer(
            200,
            #"{"id":"F1","name":"habit-backup.json","md5Checksum":"\#(Digest.hex(Digest.md5(bytes)))"}"#
        ),
    ])
    let file = try fakeDrive(transport).create(name: "habit-backup.json", id: "F1", bytes: bytes)
    #expect(file.id == "F1")
    #expect(transport.sent.map(\.method) == ["POST", "POST", "GET"])
    #expect(transport.sent.last?.path == "/drive/v3/files/F1")
}

@Test func anIdTakenByOtherBytesIsRefused() throws {
    let transport = ScriptedTransport([
        googleError(409, "fileIdInUse"),
        answer(
            200,
            #"{"id":"F1","name":"habit-backup.json","md5Checksum":"00000000000000000000000000000000"}"#
        ),
    ])
    #expect(throws: DriveError.self) {
        try fakeDrive(transport).create(name: "n", id: "F1", bytes: [1])
    }
}

@Test func updateIsConditionalOnTheEtag() throws {
    let transport = ScriptedTransport([
        answer(200, #"{"id":"F1","title":"n.json","fileSize":"3","version":"9","etag":"\"e2\""}"#)
    ])
    let result = try fakeDrive(transport).update(id: "F1", bytes: [1, 2, 3], ifMatch: "\"e1\"")
    #expect(
        result == .updated(DriveFile(id: "F1", name: "n.json", size: 3, version: 9, etag: "\"e2\""))
    )
    let request = try #require(transport.sent.first)
    #expect(request.method == "PUT")
    #expect(request.path == "/upload/drive/v2/files/F1")
    #expect(request.query("uploadType") == "media")
    #expect(request.header("If-Match") == "\"e1\"")
    #expect(request.body == [1, 2, 3])
}

@Test func a412MeansChangedSinceRead() throws {
    let clock = FakeClock()
    let transport = ScriptedTransport([googleError(412, "conditionNotMet")])
    #expect(
        try fakeDrive(transport, clock: clock).update(id: "F1", bytes: [1], ifMatch: "e1")
            == .changedSinceRead)
    #expect(clock.sleeps.isEmpty)
}

@Test func deleteCountsAFileAlreadyGoneAsDeleted() throws {
    let transport = ScriptedTransport([cut(), googleError(404, "notFound")])
    try fakeDrive(transport).delete(id: "F1")
    #expect(transport.sent.map(\.method) == ["DELETE", "DELETE"])
}

@Test(arguments: [
    (
        #"{"error":{"code":403,"message":"Rate Limit Exceeded","errors":[{"domain":"usageLimits","reason":"rateLimitExceeded","message":"Rate Limit Exceeded"}]}}"#,
        "Rate Limit Exceeded", String?.some("rateLimitExceeded")
    ),
    ("not json", "Forbidden", nil),
    (#"{"error":{"code":403,"message":"no"}}"#, "no", nil),
    (
        #"{"error":{"code":403,"message":"Request had insufficient authentication scopes.","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ACCESS_TOKEN_SCOPE_INSUFFICIENT"}]}}"#,
        "Request had insufficient authentication scopes.",
        String?.some("ACCESS_TOKEN_SCOPE_INSUFFICIENT")
    ),
])
func googleErrorBodiesDecode(body: String, message: String, reason: String?) {
    let error = GoogleAPIError(HTTPResponse(status: 403, body: Array(body.utf8)))
    #expect(error.message == message)
    #expect(error.reason == reason)
    #expect(error.isRetryable == (reason == "rateLimitExceeded"))
    #expect(error.isMissingScope == (reason == "ACCESS_TOKEN_SCOPE_INSUFFICIENT"))
}

@Test func aSingleRequestUploadReportsItsStartAndEnd() throws {
    let transport = ScriptedTransport([answer(200, #"{"id":"F1","title":"n.json"}"#)])
    let reports = Mutex<[[Int]]>([])
    _ = try fakeDrive(transport).update(id: "F1", bytes: [1, 2, 3], ifMatch: "e1") { sent, total in
        reports.withLock { $0.append([sent, total]) }
    }
    #expect(reports.withLock { $0 } == [[0, 3], [3, 3]])
}

/// A 404 on any call that names one file by its id means that file (or its revision) went
/// meanwhile, not a wrong endpoint: the CLI's advice depends on the operation's `fileID`
/// telling them apart, so every such call's operation must name its file.
@Test func aNotFoundOnEveryCallThatNamesAFileIsAboutThatFile() throws {
    let revision = DriveRevision(id: "R1", md5Checksum: nil)
    let calls: [(String, (DriveClient) throws -> Void)] = [
        ("metadata", { _ = try $0.metadata(id: "F1") }),
        ("read", { _ = try $0.read(id: "F1") }),
        ("tagged", { _ = try $0.tagged(id: "F1") }),
        ("update", { _ = try $0.update(id: "F1", bytes: [1], ifMatch: "e1") }),
        ("revisions", { _ = try $0.revisions(of: "F1") }),
        ("read revision", { _ = try $0.read(id: "F1", revision: revision) }),
        ("pin", { try $0.pin(id: "F1", revision: "R1") }),
    ]
    for (name, call) in calls {
        let drive = fakeDrive(ScriptedTransport([googleError(404, "notFound")]))
        do {
            try call(drive)
            Issue.record("\(name): expected a 404")
        } catch DriveError.rejected(let operation, let google) {
            #expect(google.status == 404)
            #expect(operation.fileID == "F1", "\(name): \(operation)")
        } catch {
            Issue.record("\(name): \(error)")
        }
    }
    for unnamed in [DriveOperation.listFolder, .reserveID, .create(name: "habit-backup.json")] {
        #expect(unnamed.fileID == nil, "\(unnamed)")
    }
}
