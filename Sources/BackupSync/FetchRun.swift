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
    private var now: Timestamp?
    private var files: [DriveFile] = []
    private var unread: [DriveFile] = []
    private var merged: Document?
    private var isGzip = false
    private var round = 0

    public init(name: String, codec: SyncCodec<Document>) {
        self.name = name
        self.codec = codec
    }

    public mutating func start() -> Action { .list }

    /// `action`'s request failed for good. A download refused because the file went is the
    /// `.gone` of another device's merge; any other failure ends the run.
    public mutating func failed(_ error: DriveError, doing action: Action) -> Action {
        guard case .download = action, error.isGone else { return .fail(.drive(error)) }
        return handle(.gone)
    }

    public mutating func handle(_ event: Event) -> Action {
        switch event {
        case .listed(let listed, let now):
            self.now = self.now ?? now
            files = listed
            unread = listed
            merged = nil
            return next()
        case .downloaded(let snapshot):
            unread.removeFirst()
            let document: Document
            do {
                let opened = try codec.opened(snapshot.bytes, of: snapshot.file, replacing: false)
                if merged == nil { isGzip = Gzip.isGzip(opened) }
                document = try codec.decode(opened)
            } catch let error as SyncError {
                return .fail(error)
            } catch {
                return .fail(
                    codec.isRefusal(error)
                        ? .refused(snapshot.file, error) : .invalidRemote(snapshot.file, error))
            }
            if let into = merged, let now {
                merged = notices.add(codec.merge(copy: document, into: into, now: now)).document
            } else {
                merged = document
            }
            return next()
        case .gone:
            round += 1
            guard round < maxRounds else { return .fail(.keepsChanging(rounds: maxRounds)) }
            return .list
        }
    }

    private func next() -> Action {
        if let file = unread.first { return .download(file) }
        return .finish(merged.map { ($0, files, isGzip, notices) })
    }
}
