import BackupKit
import Foundation
import GoogleDrive

/// Performs the sync machines' actions against Drive and feeds back what came of them: each
/// answer as the machine's event, each failure to the machine's `failed`. It decides nothing:
/// which file, which round, what to merge and what a refusal means are the machines'
/// (`BackupRun`, `FetchRun`, `RevisionFetch`); how a failure is worded and which exit code it
/// gets are the caller's.
public struct SyncDriver {
    public let drive: DriveClient
    /// The run's clock, asked once, after Drive's first answer: `--now`, or the system clock
    /// corrected by Drive's `Date` when the two differ by more than five minutes.
    public var now: () -> Timestamp
    /// Saves (nil: clears) the profile's pending verification. A record that cannot be saved
    /// stops the run before its upload (nothing sent, nothing lost); one that cannot be
    /// cleared costs only a needless check next time, and the closure should not throw then.
    public var record: (PendingVerification?) throws -> Void = { _ in }
    public var notify: (SyncNotice) -> Void = { _ in }
    public var progress: (@Sendable (Int, Int) -> Void)?

    public init(drive: DriveClient, now: @escaping () -> Timestamp) {
        self.drive = drive
        self.now = now
    }

    /// A run given its local document, which never asks for it.
    public func run<Document>(_ machine: BackupRun<Document>) throws(SyncError)
        -> BackupOutcome<Document>
    {
        try run(
            machine,
            readLocal: { () throws(SyncError) -> (Document, KeptCopy?) in
                throw .protocolViolation("a run given its local document asked for it")
            }, lift: { $0 })
    }

    /// A run that reads its local document only when it asks (`BackupRun.Action.readLocal`),
    /// through `readLocal`, which gives the profile's kept copy too when the run was made
    /// without one: what that throws (the caller's own error, such as an invalid file) ends the
    /// run and comes out as it was thrown.
    public func run<Document>(
        _ machine: BackupRun<Document>,
        readLocal: () throws -> (document: Document, kept: KeptCopy?)
    ) throws -> BackupOutcome<Document> {
        try run(machine, readLocal: readLocal, lift: { $0 })
    }

    /// The run; `lift` makes the run's own failures the caller's error type.
    private func run<Document, Failure: Error>(
        _ machine: BackupRun<Document>,
        readLocal: () throws(Failure) -> (document: Document, kept: KeptCopy?),
        lift: (SyncError) -> Failure
    ) throws(Failure) -> BackupOutcome<Document> {
        var machine = machine
        var action = machine.start()
        while true {
            switch action {
            case .finish(let outcome): return outcome
            case .fail(let error): throw lift(error)
            case .readLocal:
                let (document, kept) = try readLocal()
                action = machine.handle(.localRead(document, kept: kept))
            case .record(let pending):
                do {
                    try record(pending)
                } catch {
                    throw lift(.cannotRecord("\(error)"))
                }
                action = machine.handle(.done)
            default:
                do {
                    action = machine.handle(try perform(action, name: machine.name))
                } catch {
                    action = machine.failed(error, doing: action)
                }
            }
        }
    }

    /// One action's request(s); `.finish` and `.fail` end the run before they get here.
    private func perform<Document>(_ action: BackupRun<Document>.Action, name: String)
        throws(DriveError) -> BackupRun<Document>.Event
    {
        switch action {
        case .finish, .fail: return .done
        case .list: return .listed(try drive.list(named: name), now: now())
        case .download(let file): return .downloaded(try drive.read(id: file.id))
        case .readTag(let file):
            let tagged = try drive.tagged(id: file.id)
            return .tagged(tagged.file, etag: tagged.etag)
        case .create(let bytes):
            return .created(
                try drive.create(
                    name: name, id: try drive.generateID(), bytes: bytes, progress: progress))
        case .update(let file, let bytes, let etag):
            switch try drive.update(id: file.id, bytes: bytes, ifMatch: etag, progress: progress) {
            case .updated(let file): return .updated(file)
            case .changedSinceRead: return .changedSinceRead
            }
        case .listRevisions(let id): return .revisions(try drive.revisions(of: id))
        case .downloadRevision(let id, let revision):
            return .revisionBytes(try drive.read(id: id, revision: revision))
        case .pin(let id, let revision):
            try drive.pin(id: id, revision: revision)
            return .done
        case .markChecked(let file, let revision, let etag):
            switch try drive.markChecked(id: file.id, revision: revision, ifMatch: etag) {
            case .updated(let marked): return .marked(marked)
            case .changedSinceRead: return .changedSinceRead
            }
        case .release(let id, let revisions):
            // Each is tried; the first failure goes to the machine once all were.
            var failure: DriveError?
            for revision in revisions {
                do { try drive.delete(id: id, revision: revision) } catch {
                    failure = failure ?? error
                }
            }
            if let failure { throw failure }
            return .done
        case .keepAside(let snapshot, let bytes, let sideName, let reason):
            let side = try drive.create(name: sideName, id: try drive.generateID(), bytes: bytes)
            notify(.keptAside(copyID: snapshot.file.id, side: side, reason: reason))
            return .keptAside(side)
        case .delete(let id):
            try drive.delete(id: id)
            return .done
        // Performed by `run`, with the caller's closures.
        case .record, .readLocal:
            return .done
        case .backOff(let round):
            drive.clock.sleep(
                drive.retry.delay(beforeRetry: round, jitter: drive.clock.random(), retryAfter: nil)
            )
            return .done
        case .notify(let notice):
            notify(notice)
            return .done
        }
    }

    public func run<Document>(_ machine: FetchRun<Document>) throws(SyncError)
        -> FetchRun<Document>.Fetched?
    {
        var machine = machine
        var action = machine.start()
        while true {
            switch action {
            case .finish(let result): return result
            case .fail(let error): throw error
            case .list, .download:
                do {
                    action = machine.handle(try perform(action, name: machine.name))
                } catch {
                    action = machine.failed(error, doing: action)
                }
            }
        }
    }

    private func perform<Document>(_ action: FetchRun<Document>.Action, name: String)
        throws(DriveError) -> FetchRun<Document>.Event
    {
        switch action {
        case .finish, .fail: return .gone
        case .list: return .listed(try drive.list(named: name), now: now())
        case .download(let file): return .downloaded(try drive.read(id: file.id))
        }
    }

    /// Pins and releases `fileID`'s revisions as `policy` names them (see `RetentionPolicy`),
    /// from `revisions` when the caller has just listed them. Never throws: a pin or release
    /// that fails costs nothing but itself, and the caller tries again another day; the
    /// failures come back in words.
    public func retain(
        fileID: String, revisions: [DriveRevision]?, policy: RetentionPolicy, now: Timestamp,
        timeZone: TimeZone
    ) -> (plan: RetentionPlan, failures: [String]) {
        let listed: [DriveRevision]
        do {
            listed = try revisions ?? drive.revisions(of: fileID)
        } catch {
            return (RetentionPlan(pin: [], release: []), ["\(error)"])
        }
        let plan = policy.plan(listed, now: now, timeZone: timeZone)
        var failures: [String] = []
        for revision in plan.pin {
            do { try drive.pin(id: fileID, revision: revision) } catch {
                failures.append("\(error)")
            }
        }
        for revision in plan.release {
            do {
                try drive.delete(id: fileID, revision: revision)
            } catch {
                failures.append("\(error)")
            }
        }
        return (plan, failures)
    }

    /// Pins `revision` of `fileID` (`keepForever`): a point the user may come back to, which
    /// the retention policy releases only once it is older than Drive keeps unpinned ones.
    public func keep(fileID: String, revision: String) throws(SyncError) {
        do {
            try drive.pin(id: fileID, revision: revision)
        } catch {
            throw .drive(error)
        }
    }

}

extension SyncDriver {
    /// One revision of the oldest file named `name`, decoded (`RevisionFetch`); nil when there
    /// is no such file.
    public func fetch<Document>(
        _ choice: RevisionChoice, name: String, codec: SyncCodec<Document>
    ) throws(SyncError) -> RevisionFetch<Document>.Found? {
        var machine = RevisionFetch(choice, name: name, codec: codec)
        var action = machine.start()
        while true {
            switch action {
            case .finish(let found): return found
            case .fail(let error): throw error
            default:
                do {
                    action = machine.handle(try perform(action, name: name))
                } catch {
                    action = machine.failed(error)
                }
            }
        }
    }

    /// One action's request; `.finish` and `.fail` end the run before they get here.
    private func perform<Document>(_ action: RevisionFetch<Document>.Action, name: String)
        throws(DriveError) -> RevisionFetch<Document>.Event
    {
        switch action {
        case .list, .finish, .fail: return .listed(try drive.list(named: name))
        case .listRevisions(let file): return .revisions(try drive.revisions(of: file.id))
        case .download(let file, let revision):
            return .revisionBytes(try drive.read(id: file.id, revision: revision))
        }
    }
}
