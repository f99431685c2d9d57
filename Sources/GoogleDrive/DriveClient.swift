import Digests
import Foundation
import Networking
import Synchronization

/// The app-folder client (FORMAT.md §9.2): list by name, read bytes with their etag, create with a
/// pre-generated id, conditional update, delete. Every request goes through one retry loop
/// (backoff with jitter, `Retry-After`, a total deadline, one token refresh on 401) and
/// every answer's `Date` is recorded so the caller can measure clock skew.
///
/// Why reads take the etag BEFORE the bytes: if another device writes in between, our etag
/// is older than our bytes and the conditional write answers 412, so we read again. The
/// other order could pair old bytes with a new etag and overwrite that device's write.
public struct DriveClient: Sendable {
    public let baseURL: String
    public let transport: any HTTPTransport
    public let tokens: any AccessTokenSource
    public var retry: RetryPolicy
    public var clock: RetryClock
    /// Uploads larger than this use the resumable protocol.
    public var resumableThreshold: Int
    public var chunkSize: Int
    private let readings = Readings()

    public init(
        baseURL: String, transport: any HTTPTransport, tokens: any AccessTokenSource,
        retry: RetryPolicy = RetryPolicy(), clock: RetryClock = .system,
        resumableThreshold: Int = 5 * 1024 * 1024, chunkSize: Int = 8 * 1024 * 1024
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.transport = transport
        self.tokens = tokens
        self.retry = retry
        self.clock = clock
        self.resumableThreshold = resumableThreshold
        self.chunkSize = chunkSize
    }

    /// The latest server `Date` against our clock, once any answer has carried one.
    public var clockReading: ClockReading? { readings.latest.withLock { $0 } }

    // MARK: - Operations

    /// Every non-trashed app-folder file called `name`, all pages, oldest first (names are
    /// not unique on Drive; duplicates are returned, not hidden).
    public func list(named name: String) throws(DriveError) -> [DriveFile] {
        let operation = DriveOperation.listFolder
        var budget = Budget(operation: operation, policy: retry, clock: clock)
        var files: [DriveFile] = []
        var pageToken: String?
        repeat {
            var query = [
                ("spaces", "appDataFolder"),
                ("q", "name = '\(Self.quoted(name))' and trashed = false"),
                ("fields", "nextPageToken,files(\(Self.fileFields))"),
                ("pageSize", "100"),
            ]
            if let pageToken { query.append(("pageToken", pageToken)) }
            let url = endpoint("/drive/v3/files", query)
            let response = try perform(&budget) { HTTPRequest(method: "GET", url: url) }
            struct Page: Decodable {
                var files: [DriveFile]?
                var nextPageToken: String?
            }
            let page = try decode(Page.self, response, operation)
            files += page.files ?? []
            pageToken = page.nextPageToken.flatMap { $0.isEmpty ? nil : $0 }
        } while pageToken != nil
        return files.sorted { ($0.createdTime ?? "", $0.id) < ($1.createdTime ?? "", $1.id) }
    }

    /// The v3 metadata of one file.
    public func metadata(id: String) throws(DriveError) -> DriveFile {
        let operation = DriveOperation.readMetadata(fileID: id)
        var budget = Budget(operation: operation, policy: retry, clock: clock)
        let url = endpoint("/drive/v3/files/\(Self.pathSegment(id))", [("fields", Self.fileFields)])
        let response = try perform(&budget) { HTTPRequest(method: "GET", url: url) }
        return try decode(DriveFile.self, response, operation)
    }

    /// The file's etag (v2), then its bytes, checked against the `md5Checksum` that came with
    /// the etag. A mismatch (a truncated transfer, or a write in between) reads again.
    public func read(id: String) throws(DriveError) -> DriveSnapshot {
        let operation = DriveOperation.download(fileID: id)
        var budget = Budget(operation: operation, policy: retry, clock: clock)
        while true {
            let (file, etag) = try tagged(id: id, budget: &budget)
            let mediaURL = endpoint("/drive/v3/files/\(Self.pathSegment(id))", [("alt", "media")])
            let media = try perform(&budget) {
                HTTPRequest(method: "GET", url: mediaURL, timeout: 600)
            }
            budget.restartDeadline()
            let actual = Digest.hex(Digest.md5(media.body))
            if let expected = file.md5Checksum, expected.lowercased() != actual {
                try budget.backOff(
                    after:
                        "the \(media.body.count) bytes received do not match md5Checksum \(expected) (a cut transfer?)",
                    retryAfter: nil)
                continue
            }
            return DriveSnapshot(file: file, etag: etag, bytes: media.body)
        }
    }

    /// The file's v2 metadata with its etag, the precondition of `update`: for a caller that
    /// already holds the bytes (and checks them against this `md5Checksum`).
    public func tagged(id: String) throws(DriveError) -> (file: DriveFile, etag: String) {
        var budget = Budget(operation: .readETag(fileID: id), policy: retry, clock: clock)
        return try tagged(id: id, budget: &budget)
    }

    private func tagged(id: String, budget: inout Budget) throws(DriveError) -> (
        file: DriveFile, etag: String
    ) {
        let url = endpoint("/drive/v2/files/\(Self.pathSegment(id))", [])
        let response = try perform(&budget) { HTTPRequest(method: "GET", url: url) }
        let file = try decode(DriveFile.self, response, budget.operation)
        guard let etag = file.etag else {
            throw .malformedResponse(
                operation: budget.operation, detail: "the v2 metadata has no etag")
        }
        return (file, etag)
    }

    /// A fresh id to create a file with, so that a retried create cannot make a duplicate.
    public func generateID() throws(DriveError) -> String {
        let operation = DriveOperation.reserveID
        var budget = Budget(operation: operation, policy: retry, clock: clock)
        let url = endpoint(
            "/drive/v3/files/generateIds", [("space", "appDataFolder"), ("count", "1")])
        let response = try perform(&budget) { HTTPRequest(method: "GET", url: url) }
        struct IDs: Decodable { var ids: [String] }
        guard let id = try decode(IDs.self, response, operation).ids.first else {
            throw .malformedResponse(operation: operation, detail: "no id in the answer")
        }
        return id
    }

    /// Creates `name` in the app folder with id `id` (from `generateID`). A 409 `fileIdInUse`
    /// means an earlier attempt whose answer we lost did create it: the file is read back
    /// and accepted when its checksum is ours.
    public func create(
        name: String, id: String, bytes: [UInt8], progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws(DriveError) -> DriveFile {
        let operation = DriveOperation.create(name: name)
        var budget = Budget(operation: operation, policy: retry, clock: clock)
        struct Metadata: Encodable {
            var id: String
            var name: String
            var parents = ["appDataFolder"]
            var mimeType: String
        }
        // Gzip's magic bytes (a profile that compresses and does not encrypt); Drive keeps the
        // type a file was created with, so a later switch leaves it as it was.
        let gzip = bytes.starts(with: [0x1f, 0x8b])
        let fields =
            (try? JSONEncoder().encode(
                Metadata(
                    id: id, name: name, mimeType: gzip ? "application/gzip" : "application/json")))
            .map(Array.init) ?? []
        let response: HTTPResponse
        if bytes.count > resumableThreshold {
            let start = HTTPRequest(
                method: "POST",
                url: endpoint(
                    "/upload/drive/v3/files",
                    [("uploadType", "resumable"), ("fields", Self.fileFields)]),
                headers: Self.sessionHeaders(bytes.count), body: fields)
            response = try upload(
                bytes, starting: start, accepting: [409], budget: &budget, progress: progress)
        } else {
            let boundary = "cloudbackup-\(UUID().uuidString)"
            var body = Array(
                "--\(boundary)\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".utf8)
            body += fields
            body += Array("\r\n--\(boundary)\r\nContent-Type: application/json\r\n\r\n".utf8)
            body += bytes
            body += Array("\r\n--\(boundary)--\r\n".utf8)
            let url = endpoint(
                "/upload/drive/v3/files",
                [("uploadType", "multipart"), ("fields", Self.fileFields)])
            let request = HTTPRequest(
                method: "POST", url: url,
                headers: [("Content-Type", "multipart/related; boundary=\(boundary)")], body: body,
                timeout: 600)
            progress?(0, bytes.count)
            response = try perform(&budget, accepting: [409]) { request }
            progress?(bytes.count, bytes.count)
        }
        guard response.status == 409 else { return try decode(DriveFile.self, response, operation) }
        let error = GoogleAPIError(response)
        guard error.reason == "fileIdInUse" else { throw .rejected(operation: operation, error) }
        let existing = try metadata(id: id)
        guard existing.md5Checksum.map({ $0.lowercased() == Digest.hex(Digest.md5(bytes)) }) ?? true
        else {
            throw .rejected(
                operation: operation,
                GoogleAPIError(
                    status: 409, message: "id \(id) is taken by a file with other contents",
                    reason: error.reason))
        }
        return existing
    }

    /// Replaces the file's bytes only if its etag is still `etag` (v2 upload endpoint with
    /// `If-Match`; v3 has no precondition). 412 → `.changedSinceRead`. The updated file
    /// carries its new etag, the precondition of the next update.
    public func update(
        id: String, bytes: [UInt8], ifMatch etag: String,
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws(DriveError) -> ConditionalUpdate {
        let operation = DriveOperation.upload(fileID: id)
        var budget = Budget(operation: operation, policy: retry, clock: clock)
        let path = "/upload/drive/v2/files/\(Self.pathSegment(id))"
        let response: HTTPResponse
        if bytes.count > resumableThreshold {
            let start = HTTPRequest(
                method: "PUT",
                url: endpoint(path, [("uploadType", "resumable")] + Self.quietUpdate),
                headers: Self.sessionHeaders(bytes.count) + [("If-Match", etag)], body: [])
            response = try upload(
                bytes, starting: start, accepting: [412], budget: &budget, progress: progress)
        } else {
            let request = HTTPRequest(
                method: "PUT", url: endpoint(path, [("uploadType", "media")] + Self.quietUpdate),
                headers: [("Content-Type", "application/json"), ("If-Match", etag)], body: bytes,
                timeout: 600)
            progress?(0, bytes.count)
            response = try perform(&budget, accepting: [412]) { request }
            progress?(bytes.count, bytes.count)
        }
        if response.status == 412 { return .changedSinceRead }
        return .updated(try decode(DriveFile.self, response, operation))
    }

    /// Every revision of the file, oldest first, all pages (`revisions.list`): how a writer
    /// proves that nobody wrote between the content it merged from and its own upload.
    public func revisions(of id: String) throws(DriveError) -> [DriveRevision] {
        var budget = Budget(
            operation: .listRevisions(fileID: id), policy: retry, clock: clock)
        var revisions: [DriveRevision] = []
        var pageToken: String?
        repeat {
            var query = [
                ("fields", "nextPageToken,revisions(\(Self.revisionFields))"),
                ("pageSize", "1000"),
            ]
            if let pageToken { query.append(("pageToken", pageToken)) }
            let url = endpoint("/drive/v3/files/\(Self.pathSegment(id))/revisions", query)
            let response = try perform(&budget) { HTTPRequest(method: "GET", url: url) }
            struct Page: Decodable {
                var revisions: [DriveRevision]?
                var nextPageToken: String?
            }
            let page = try decode(Page.self, response, budget.operation)
            revisions += page.revisions ?? []
            pageToken = page.nextPageToken.flatMap { $0.isEmpty ? nil : $0 }
        } while pageToken != nil
        return revisions
    }

    /// One revision's bytes (`revisions.get?alt=media`), checked against its `md5Checksum`
    /// when given; a mismatch (a cut transfer) reads again. A purged revision answers 404,
    /// one Drive will not serve 403: both come back as `.rejected`, for the caller to judge.
    public func read(id: String, revision: DriveRevision) throws(DriveError) -> [UInt8] {
        var budget = Budget(
            operation: .downloadRevision(revision.id, fileID: id), policy: retry, clock: clock)
        let url = endpoint(
            "/drive/v3/files/\(Self.pathSegment(id))/revisions/\(Self.pathSegment(revision.id))",
            [("alt", "media")])
        while true {
            let media = try perform(&budget) { HTTPRequest(method: "GET", url: url, timeout: 600) }
            budget.restartDeadline()
            let actual = Digest.hex(Digest.md5(media.body))
            if let expected = revision.md5Checksum, expected.lowercased() != actual {
                try budget.backOff(
                    after:
                        "the \(media.body.count) bytes received do not match md5Checksum \(expected) (a cut transfer?)",
                    retryAfter: nil)
                continue
            }
            return media.body
        }
    }

    /// Pins the revision (`keepForever`), so Drive never purges it.
    public func pin(id: String, revision: String) throws(DriveError) {
        var budget = Budget(
            operation: .pinRevision(revision, fileID: id), policy: retry, clock: clock)
        let url = endpoint(
            "/drive/v3/files/\(Self.pathSegment(id))/revisions/\(Self.pathSegment(revision))",
            [("fields", Self.revisionFields)])
        _ = try perform(&budget) {
            HTTPRequest(
                method: "PATCH", url: url, headers: [("Content-Type", "application/json")],
                body: Array(#"{"keepForever":true}"#.utf8))
        }
    }

    /// Deletes one revision (a pin cannot be taken off any other way); one already gone counts
    /// as deleted.
    public func delete(id: String, revision: String) throws(DriveError) {
        var budget = Budget(
            operation: .deleteRevision(revision, fileID: id), policy: retry, clock: clock)
        let url = endpoint(
            "/drive/v3/files/\(Self.pathSegment(id))/revisions/\(Self.pathSegment(revision))", [])
        _ = try perform(&budget, accepting: [404]) { HTTPRequest(method: "DELETE", url: url) }
    }

    /// Records on the file that `revision`'s check finished (`DriveFile.checkedRevision`), while
    /// its etag is still `etag`: a v2 metadata patch of a private property (v3's app property),
    /// whose answer carries the new etag, so the next upload needs no fresh read of it. It makes
    /// no revision. 412 → `.changedSinceRead` (another write came first: its run marks).
    public func markChecked(id: String, revision: String, ifMatch etag: String) throws(DriveError)
        -> ConditionalUpdate
    {
        var budget = Budget(
            operation: .markChecked(revision, fileID: id), policy: retry, clock: clock)
        let url = endpoint("/drive/v2/files/\(Self.pathSegment(id))", Self.quietUpdate)
        let property =
            #"{"properties":[{"key":"\#(DriveFile.checkedRevisionKey)","value":"\#(revision)","visibility":"PRIVATE"}]}"#
        let response = try perform(&budget, accepting: [412]) {
            HTTPRequest(
                method: "PATCH", url: url,
                headers: [("Content-Type", "application/json"), ("If-Match", etag)],
                body: Array(property.utf8))
        }
        if response.status == 412 { return .changedSinceRead }
        return .updated(try decode(DriveFile.self, response, budget.operation))
    }

    /// Deletes the file; one already gone (a retry after a lost answer) counts as deleted.
    public func delete(id: String) throws(DriveError) {
        var budget = Budget(operation: .delete(fileID: id), policy: retry, clock: clock)
        let url = endpoint("/drive/v3/files/\(Self.pathSegment(id))", [])
        _ = try perform(&budget, accepting: [404]) { HTTPRequest(method: "DELETE", url: url) }
    }

    // MARK: - The resumable driver

    /// Performs the `ResumableUpload` machine's actions. `starting` opens the session; a
    /// status in `accepting` on it or on the last chunk ends the upload there (412 on a
    /// conditional session someone wrote under, 409 on a create whose id is taken) and is
    /// returned as the answer.
    private func upload(
        _ bytes: [UInt8], starting: HTTPRequest, accepting: Set<Int>, budget: inout Budget,
        progress: (@Sendable (Int, Int) -> Void)?
    ) throws(DriveError) -> HTTPResponse {
        var machine = ResumableUpload(total: bytes.count, chunkSize: chunkSize)
        var action = machine.start()
        while true {
            switch action {
            case .initiate:
                let response = try perform(&budget, accepting: accepting) { starting }
                if accepting.contains(response.status) { return response }
                guard let location = response.header("Location"), !location.isEmpty else {
                    throw .malformedResponse(
                        operation: budget.operation, detail: "no Location for the upload session")
                }
                action = machine.handle(.initiated(session: location))
            case .send(let offset, let count):
                let request = HTTPRequest(
                    method: "PUT", url: machine.session ?? "",
                    headers: [
                        ("Content-Type", "application/json"),
                        ("Content-Range", "bytes \(offset)-\(offset + count - 1)/\(bytes.count)"),
                    ],
                    body: Array(bytes[offset..<offset + count]), timeout: 600)
                let before = machine.received
                action = try machine.handle(
                    sessionEvent(
                        request, accepting: accepting, expectingMoreThan: machine.received,
                        budget: &budget))
                if machine.received > before { budget.restartDeadline() }
                progress?(machine.received, bytes.count)
            case .queryStatus:
                let request = HTTPRequest(
                    method: "PUT", url: machine.session ?? "",
                    headers: [("Content-Range", "bytes */\(bytes.count)")])
                // A query after a lost answer has paid its backoff already; one asked because
                // all bytes are in must bring the final answer, or it would be asked forever.
                let allIn = machine.received == bytes.count
                action = try machine.handle(
                    sessionEvent(
                        request, accepting: accepting,
                        expectingMoreThan: allIn ? machine.received : nil,
                        budget: &budget))
            case .finished(let status, let body):
                return HTTPResponse(status: status, body: body)
            }
        }
    }

    /// One request on the session URL turned into the machine's event. Failures that leave
    /// the server's position unknown back off first, then become `.connectionLost`.
    ///
    /// An answer that sends the machine round again without progress spends the retry budget
    /// too: a session that expired (404/410), or a 308 whose `Range` holds no more than
    /// `floor` bytes (nil: any 308 counts as progress). A session that keeps expiring or
    /// never keeps a chunk so ends in `.unavailable`, like any other exhausted retry, instead
    /// of sending the file again at full speed forever.
    private func sessionEvent(
        _ request: HTTPRequest, accepting: Set<Int>, expectingMoreThan floor: Int?,
        budget: inout Budget
    ) throws(DriveError) -> ResumableUpload.Event {
        switch try exchange(request, budget: &budget) {
        case .failure(let error):
            try budget.backOff(after: error)
            return .connectionLost
        case .success(let response):
            switch response.status {
            case 200, 201:
                return .completed(status: response.status, body: response.body)
            case let status where accepting.contains(status):
                return .completed(status: status, body: response.body)
            case 308:
                guard let received = ResumableUpload.received(fromRange: response.header("Range"))
                else {
                    throw .malformedResponse(
                        operation: budget.operation,
                        detail: "308 with Range '\(response.header("Range") ?? "")'")
                }
                if let floor, received <= floor {
                    try budget.backOff(
                        after:
                            "the upload session kept no more than \(received) bytes (308 with Range '\(response.header("Range") ?? "")')",
                        retryAfter: retryAfter(response))
                }
                return .incomplete(received: received)
            case 404, 410:
                try budget.backOff(
                    after:
                        "the upload session expired (\(Self.summary(GoogleAPIError(response))))",
                    retryAfter: retryAfter(response))
                return .sessionExpired
            default:
                let error = GoogleAPIError(response)
                guard error.isRetryable else { throw .rejected(operation: budget.operation, error) }
                try budget.backOff(after: Self.summary(error), retryAfter: retryAfter(response))
                return .connectionLost
            }
        }
    }

    // MARK: - The retry loop

    /// A `RetryBudget` that gives up with Drive's own error, and the one token refresh a 401
    /// may trigger per operation.
    struct Budget {
        var retry: RetryBudget
        /// The one token refresh a 401 may trigger per operation has been spent.
        var refreshed = false

        let operation: DriveOperation

        init(operation: DriveOperation, policy: RetryPolicy, clock: RetryClock) {
            self.operation = operation
            retry = RetryBudget(operation: operation.description, policy: policy, clock: clock)
            retry.server = "Google"
        }

        mutating func restartDeadline() {
            retry.restartDeadline()
        }

        mutating func backOff(after failure: TransportError) throws(DriveError) {
            do throws(RetryBudget.Exhausted) {
                try retry.backOff(after: failure)
            } catch {
                throw Self.unavailable(error, in: operation)
            }
        }

        mutating func backOff(after failure: String, retryAfter: Double?) throws(DriveError) {
            do throws(RetryBudget.Exhausted) {
                try retry.backOff(after: failure, retryAfter: retryAfter)
            } catch {
                throw Self.unavailable(error, in: operation)
            }
        }

        static func unavailable(_ exhausted: RetryBudget.Exhausted, in operation: DriveOperation)
            -> DriveError
        {
            if let failure = exhausted.transport, failure.kind == .couldNotConnect {
                return .unreachable(operation: operation, failure)
            }
            return .unavailable(
                operation: operation, attempts: exhausted.attempts, last: exhausted.last)
        }
    }

    /// Sends through the retry loop with Drive's rules until a 2xx or an `accepting` status
    /// arrives: its rate-limit 403s are worth another try too, any other refusal is final.
    private func perform(
        _ budget: inout Budget, accepting: Set<Int> = [], _ make: () -> HTTPRequest
    ) throws(DriveError) -> HTTPResponse {
        let operation = budget.operation
        return try RetryBudget.perform(
            &budget, budget: \.retry,
            send: { budget throws(DriveError) in try exchange(make(), budget: &budget) },
            transient: { response throws(DriveError) in
                if (200..<300).contains(response.status) || accepting.contains(response.status) {
                    return nil
                }
                let error = GoogleAPIError(response)
                guard error.isRetryable else { throw .rejected(operation: operation, error) }
                return Self.summary(error)
            },
            giveUp: { exhausted, _ throws(DriveError) in
                throw Budget.unavailable(exhausted, in: operation)
            })
    }

    /// One authorised request. A 401 refreshes the token once per operation and sends again;
    /// a second 401 means the login is gone.
    private func exchange(
        _ request: HTTPRequest, budget: inout Budget
    ) throws(DriveError) -> Result<HTTPResponse, TransportError> {
        var forceRefresh = false
        while true {
            let token: String
            do {
                token = try tokens.accessToken(refreshing: forceRefresh)
            } catch let failure as any TransientFailure where failure.isTransient {
                // Out of attempts or time: the token error itself says best what failed.
                let wait = RetryPolicy.retryAfter(failure.retryAfter, now: clock.wall())
                let again =
                    if let cut = failure.transportFailure {
                        (try? budget.backOff(after: cut)) != nil
                    } else {
                        (try? budget.backOff(after: "\(failure)", retryAfter: wait)) != nil
                    }
                guard again else { throw .token(failure) }
                continue
            } catch {
                throw .token(error)
            }
            var authorised = request
            authorised.headers.append(("Authorization", "Bearer \(token)"))
            let response: HTTPResponse
            let sent = clock.wall()
            do {
                response = try transport.send(authorised)
            } catch {
                return .failure(error)
            }
            record(response, sentAt: sent)
            guard response.status == 401 else { return .success(response) }
            guard !budget.refreshed else {
                throw .unauthorized(operation: budget.operation, GoogleAPIError(response))
            }
            budget.refreshed = true
            forceRefresh = true
        }
    }

    /// Google stamps `Date` somewhere between our request and the end of its answer, which
    /// for a large body on a slow link is minutes later: only a `Date` outside that span says
    /// the clocks differ, and by how much it lies outside.
    private func record(_ response: HTTPResponse, sentAt sent: Date) {
        guard let text = response.header("Date"), let server = HTTPDate.parse(text) else { return }
        let local = min(max(server, sent), clock.wall())
        readings.latest.withLock { $0 = ClockReading(server: server, local: local) }
    }

    private func retryAfter(_ response: HTTPResponse) -> Double? {
        RetryPolicy.retryAfter(response.header("Retry-After"), now: clock.wall())
    }

    /// Shared by copies of the client (a `Mutex` cannot be copied, a reference to it can).
    private final class Readings: Sendable {
        let latest = Mutex<ClockReading?>(nil)
    }

    // MARK: - Encoding

    static let fileFields =
        "id,name,size,version,md5Checksum,createdTime,modifiedTime,headRevisionId,quotaBytesUsed,appProperties"
    /// A write changes nothing it does not have to: not the file's viewed date, which would
    /// move its metadata (and `version`) for no one's benefit.
    static let quietUpdate = [("updateViewedDate", "false")]
    static let revisionFields = "id,md5Checksum,modifiedTime,size,keepForever"

    private static func summary(_ error: GoogleAPIError) -> String {
        "HTTP \(error.status)" + (error.reason.map { " \($0)" } ?? "") + ": \(error.message)"
    }

    private static func sessionHeaders(_ total: Int) -> [(name: String, value: String)] {
        [
            ("Content-Type", "application/json; charset=UTF-8"),
            ("X-Upload-Content-Type", "application/json"),
            ("X-Upload-Content-Length", "\(total)"),
        ]
    }

    private func decode<T: Decodable>(
        _ type: T.Type, _ response: HTTPResponse, _ operation: DriveOperation
    )
        throws(DriveError) -> T
    {
        do {
            return try JSONDecoder().decode(type, from: Data(response.body))
        } catch {
            throw .malformedResponse(
                operation: operation,
                detail: "HTTP \(response.status) body is not the expected JSON")
        }
    }

    private func endpoint(_ path: String, _ query: [(String, String)]) -> String {
        guard !query.isEmpty else { return baseURL + path }
        return baseURL + path + "?"
            + query.map { Self.percentEncoded($0.0) + "=" + Self.percentEncoded($0.1) }.joined(
                separator: "&")
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    static func pathSegment(_ id: String) -> String { percentEncoded(id) }

    /// A string literal inside a Drive query: backslash and single quote escaped.
    static func quoted(_ name: String) -> String {
        name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }
}
