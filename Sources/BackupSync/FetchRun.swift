import BackupKit
import GoogleDrive
import Gzip

/// Every file of our name merged into one (oldest first), for `restore`: a pure state machine
/// like `BackupRun`, driven by `SyncDriver`.
///
///     start()                         → .list
///     .listed([F1, F2])               → .download(F1)
///     .downloaded(F1 {a})             → .download(F2)
///     .gone                           → .list     (another device merged F2 away meanwhile)
///     .listed([F1])                   → .download(F1)
///     .downloaded(F1 {a, b})          → .finish({a, b} from [F1])
///
/// A file that went between our listing and its download was merged into another one and
/// deleted by another device's backup: the listing is read again, since its items are now in a
/// file this run may have read already. An invalid file, or sealed bytes that do not open,
/// are an error naming the file: a restore replaces nothing, so there is nothing to keep aside.
public struct FetchRun<Document> {
    public enum Action {
        case list
        case download(DriveFile)
        /// nil: no file of our name. `isGzip`: the first file's opened bytes are gzip, the
        /// form a backup that does not say keeps; `notices`: what merging the files said.
        case finish(Fetched?)
        case fail(SyncError)
    }

    public enum Event {
        case listed([DriveFile], now: Timestamp)
        case downloaded(DriveSnapshot)
        case gone
    }

    public typealias Fetched = (
        document: Document, files: [DriveFile], isGzip: Bool, notices: RunNotices
    )

    public let name: String
    public let codec: SyncCodec<Document>
    public var maxRounds = 8
    private var notices = RunNotices()
    private var round = 0
    private var phase = Phase.listing(now: nil)

    private enum Phase {
        /// The run's clock is the first listing's: a later round's listing carries it.
        case listing(now: Timestamp?)
        case reading(Reading)
        case finished
    }

    /// One listing's files, read in turn, and what those read so far merged into.
    private struct Reading {
        var files: [DriveFile]
        var unread: [DriveFile]
        var now: Timestamp
        /// `isGzip`: of the first file's opened bytes.
        var merged: (document: Document, isGzip: Bool)?
    }

    public init(name: String, codec: SyncCodec<Document>) {
        self.name = name
        self.codec = codec
    }

    public mutating func start() -> Action { .list }

    /// `action`'s request failed for good. A download refused because the file went is the
    /// `.gone` of another device's merge; any other failure ends the run.
    public mutating func failed(_ error: DriveError, doing action: Action) -> Action {
        guard case .download = action, error.isGone else { return fail(.drive(error)) }
        return handle(.gone)
    }

    public mutating func handle(_ event: Event) -> Action {
        switch (phase, event) {
        case (.listing(let clock), .listed(let listed, let now)):
            return next(Reading(files: listed, unread: listed, now: clock ?? now))
        case (.reading(var reading), .downloaded(let snapshot)):
            reading.unread.removeFirst()
            let document: Document
            let isGzip: Bool
            do {
                let opened = try codec.opened(snapshot.bytes, of: snapshot.file, replacing: false)
                isGzip = Gzip.isGzip(opened)
                document = try codec.decode(opened)
            } catch let error as SyncError {
                return fail(error)
            } catch {
                return fail(
                    codec.isRefusal(error)
                        ? .refused(snapshot.file, error) : .invalidRemote(snapshot.file, error))
            }
            if let into = reading.merged {
                let folded = codec.merge(copy: document, into: into.document, now: reading.now)
                reading.merged?.document = notices.add(folded).document
            } else {
                reading.merged = (document, isGzip)
            }
            return next(reading)
        case (.reading(let reading), .gone):
            round += 1
            guard round < maxRounds else { return fail(.keepsChanging(rounds: maxRounds)) }
            phase = .listing(now: reading.now)
            return .list
        default:
            return fail(.protocolViolation("\(event) while \(phase)"))
        }
    }

    private mutating func next(_ reading: Reading) -> Action {
        if let file = reading.unread.first {
            phase = .reading(reading)
            return .download(file)
        }
        phase = .finished
        return .finish(
            reading.merged.map { ($0.document, reading.files, $0.isGzip, notices) })
    }

    private mutating func fail(_ error: SyncError) -> Action {
        phase = .finished
        return .fail(error)
    }
}
