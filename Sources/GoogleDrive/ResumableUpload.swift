/// The resumable upload protocol (Drive "Upload file data", FORMAT.md §9.2) as a pure state
/// machine: the driver in `DriveClient` performs each `Action` and feeds back what came of
/// it as an `Event`; this type alone decides what to do next, so every transition is tested
/// without a socket.
///
/// Worked example, 600 KiB in 256 KiB chunks:
///   start()                             → .initiate
///   .initiated(session URL)             → .send(offset 0, count 262144)
///   .incomplete(received: 262144)       → .send(offset 262144, count 262144)   (308, Range bytes=0-262143)
///   .connectionLost                     → .queryStatus                        (empty PUT, bytes */614400)
///   .incomplete(received: 393216)       → .send(offset 393216, count 221184)  (resume where the server is)
///   .completed(200, body)               → .finished(200, body)
/// A 404 on the session (`.sessionExpired`) starts over with a fresh `.initiate`.
public struct ResumableUpload: Sendable, Equatable {
    public static let granularity = 256 * 1024

    public enum Action: Sendable, Equatable {
        /// Open a session (POST/PUT `uploadType=resumable` with the metadata).
        case initiate
        /// PUT bytes `offset ..< offset+count` with `Content-Range: bytes a-b/total`.
        case send(offset: Int, count: Int)
        /// An empty PUT with `Content-Range: bytes */total`: how much did the server keep?
        case queryStatus
        /// The session is over: the server's final answer, normally 200/201 with the file's
        /// metadata, or a final refusal the caller expects (412 on a conditional session).
        case finished(status: Int, body: [UInt8])
    }

    public enum Event: Sendable, Equatable {
        case initiated(session: String)
        /// 308: the server holds `received` bytes from the start (no `Range` header: 0).
        case incomplete(received: Int)
        /// 200 or 201 on a chunk or a status query, or a final status the caller expects.
        case completed(status: Int, body: [UInt8])
        /// 404 (or 410) on the session URL.
        case sessionExpired
        /// No answer, or a retryable error answer: where the server stands is unknown.
        case connectionLost
    }

    public let total: Int
    public let chunkSize: Int
    public private(set) var session: String?
    /// Bytes the server has confirmed.
    public private(set) var received = 0

    /// `chunkSize` is rounded up to a multiple of 256 KiB, as Drive requires of every chunk
    /// but the last.
    public init(total: Int, chunkSize: Int) {
        self.total = total
        let units = max(1, (chunkSize + Self.granularity - 1) / Self.granularity)
        self.chunkSize = units * Self.granularity
    }

    public mutating func start() -> Action {
        session = nil
        received = 0
        return .initiate
    }

    public mutating func handle(_ event: Event) -> Action {
        switch event {
        case .initiated(let url):
            session = url
            received = 0
            return nextChunk()
        case .incomplete(let count):
            // A server never un-receives bytes; a smaller number would be a confused answer,
            // and resending from it is still correct.
            received = min(max(0, count), total)
            return nextChunk()
        case .completed(let status, let body):
            received = total
            return .finished(status: status, body: body)
        case .sessionExpired:
            return start()
        case .connectionLost:
            return session == nil ? .initiate : .queryStatus
        }
    }

    private func nextChunk() -> Action {
        // All bytes arrived but no final answer yet: ask for it.
        guard received < total else { return .queryStatus }
        return .send(offset: received, count: min(chunkSize, total - received))
    }

    /// `Range: bytes=0-N` → N + 1 bytes received; nil header → 0.
    public static func received(fromRange header: String?) -> Int? {
        guard let header else { return 0 }
        guard header.hasPrefix("bytes=0-"), let last = Int(header.dropFirst("bytes=0-".count)),
            last >= 0
        else { return nil }
        return last + 1
    }
}
