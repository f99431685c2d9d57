import BackupKit
import GoogleDrive

/// One revision of the oldest file named `name` (the one backups merge into), decoded: a
/// point-in-time restore or a rollback, as a pure machine like `FetchRun`, driven by
/// `SyncDriver`.
///
///     start()                    → .list
///     .listed([F1, F2])          → .listRevisions(F1)
///     .revisions([r1, r2, r3])   → .download(F1, r2)        (the choice picks r2)
///     .revisionBytes(bytes)      → .finish((document, F1, r2))
///
/// No file of the name finishes with nil; a choice that names none of the revisions fails
/// with `.noSuchRevision`; bytes that do not open or decode fail naming the file.
public struct RevisionFetch<Document> {
    public typealias Found = (document: Document, file: DriveFile, revision: DriveRevision)

    public enum Action {
        case list
        case listRevisions(DriveFile)
        case download(DriveFile, DriveRevision)
        /// nil: no file of the name.
        case finish(Found?)
        case fail(SyncError)
    }

    public enum Event {
        case listed([DriveFile])
        case revisions([DriveRevision])
        case revisionBytes([UInt8])
    }

    private enum Phase {
        case ready
        case listing
        case listingRevisions(DriveFile)
        case downloading(DriveFile, DriveRevision)
        case finished
    }

    public let choice: RevisionChoice
    public let name: String
    public let codec: SyncCodec<Document>
    private var phase = Phase.ready

    public init(_ choice: RevisionChoice, name: String, codec: SyncCodec<Document>) {
        self.choice = choice
        self.name = name
        self.codec = codec
    }

    public mutating func start() -> Action {
        phase = .listing
        return .list
    }

    /// A request failed for good: the run ends with it.
    public mutating func failed(_ error: DriveError) -> Action {
        end(.fail(.drive(error)))
    }

    public mutating func handle(_ event: Event) -> Action {
        switch (phase, event) {
        case (.listing, .listed(let files)):
            guard let file = files.first else { return end(.finish(nil)) }
            phase = .listingRevisions(file)
            return .listRevisions(file)
        case (.listingRevisions(let file), .revisions(let revisions)):
            switch choice.pick(from: revisions) {
            case .success(let revision):
                phase = .downloading(file, revision)
                return .download(file, revision)
            case .failure(let refusal):
                return end(.fail(.noSuchRevision(refusal)))
            }
        case (.downloading(let file, let revision), .revisionBytes(let bytes)):
            let plain: [UInt8]
            do {
                plain = try codec.opened(bytes, of: file, revision: revision.id, replacing: false)
            } catch {
                return end(.fail(error))
            }
            do {
                return end(.finish((try codec.decode(plain), file, revision)))
            } catch {
                return end(
                    .fail(
                        codec.isRefusal(error)
                            ? .refused(file, error) : .invalidRemote(file, error)))
            }
        default:
            return end(.fail(.protocolViolation("\(event) while \(phase)")))
        }
    }

    private mutating func end(_ action: Action) -> Action {
        phase = .finished
        return action
    }
}
