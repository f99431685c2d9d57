import BackupKit
import Digests
import Foundation
import GoogleDrive
import Gzip

/// Merge-before-upload against the app folder, as a pure state machine: it never touches the
/// network, a file or a clock. The driver (`SyncDriver`) performs each `Action` and feeds
/// back what came of it as an `Event`; this type alone decides what happens next, so every
/// interleaving with another device is a test of a few lines.
///
/// The protocol, one round:
/// 1. List the files of our name (names are not unique on Drive). Their listing carries
///    `md5Checksum` and `headRevisionId`.
/// 2. The base: the profile's kept copy when the listing shows one file with the copy's id,
///    head revision and checksum; else the download (v2 etag, then bytes checked against the
///    checksum that came with it). Other files of our name are downloaded too and merged in.
/// 3. Merge the local document into the base. No change and nothing else to fold in: done,
///    nothing sent.
/// 4. Record a pending verification (the oldest base this run has not proved, the checksum of
///    what we send), then upload under `If-Match: <etag>`. A 412 means someone wrote since
///    our read, or that our upload landed and only its answer was lost (the retry met our own
///    new etag): the revision history tells which. Not ours: back off and start the round
///    again from the download.
/// 5. Verify: list the revisions and check that the revision before ours is our base
///    (`RevisionCheck`). Revisions between them are writes our upload replaced, because
///    Google's `If-Match` was not checked as we hoped: download each (pinning it first if Drive
///    serves only pinned revisions: a read pin), merge them into what we uploaded, and go round
///    again from the download with a fresh `If-Match`. A revision after ours (a device that wrote over it)
///    also means another round, so our items never rest on that device's own check. Nothing
///    between and ours the head: release the read pins (delete those revisions: their items
///    are in the checked head; never one the retention policy names, nor the head), clear the
///    pending record; keep aside copies whose items were held back, delete the other files of
///    our name; done.
/// Read pins are recorded with the pending check, so a run cut short leaves its pins to the
/// run that finishes the check. A read pin the policy names stays only while the policy has
/// room for it: kept beyond its share, it would eat the reserve. When Drive refuses a read pin
/// (its cap of pins per file, which `RetentionPolicy` never lets its own pins reach), one pin
/// the policy does not name, older than the base of the check, is freed and the pin asked
/// again; with none to free, the run waits (other devices release theirs as their checks
/// finish) and asks again, up to `maxRounds` times; when the revision still cannot be read,
/// the run fails with `.unmerged`, naming what is missing from Drive, and its record makes the
/// next run merge it.
/// A previous run's pending verification is finished first, right after the listing: every
/// revision after its base but the head and its own upload is merged into this run's upload,
/// whether that upload landed or not.
/// A check owed by another device is finished too. A proved upload is marked on the file
/// (`DriveFile.checkedRevision`, an app property: every revision up to it is in it). A listing
/// whose head is not the marked revision means some device's check is still owed (its run was
/// cut short, and it may never run again): a backup lists the revisions and merges the marked
/// one and every later one but the head into its upload (`RevisionCheck.owed`), then marks its
/// own once everything since the mark is proved in it. The rounds are bounded (`maxRounds`): a device
/// that writes on every round makes us give up with `.keepsChanging`, having lost nothing,
/// since every revision is still in the history and the next run merges again.
///
/// Worked example: Drive holds r1 = {a}; our STATE is {b}; another device uploads r2 = {a, c}
/// between our download and our upload, and Drive ignores `If-Match`.
///
///     start()                                  → .list
///     .listed([F r1])                          → .download(F)
///     .downloaded(F r1 {a}, etag e1)           → .record(pending: base r1, md5 of {a,b})
///     .done                                    → .update(F, {a,b}, ifMatch: e1)
///     .updated(F r3)                           → .listRevisions(F)
///     .revisions([r1, r2, r3])                 → .downloadRevision(F, r2)    (r2 is between)
///     .revisionBytes({a, c})                   → .download(F)                (round 2)
///     .downloaded(F r3 {a,b}, etag e3)         → .record(pending: base r1, md5 of {a,b,c})
///     .done                                    → .update(F, {a,b,c}, ifMatch: e3)
///     .updated(F r4)                           → .listRevisions(F)
///     .revisions([r1, r2, r3, r4])             → .record(nil)                (r3 is our base)
///     .done                                    → .finish(uploaded {a,b,c})
///
/// Sealed (encrypted) backups: every byte downloaded goes through `codec.opened` before it is
/// decoded, every upload is `codec.seal` of the encoded document, and the checks (the pending
/// record's checksum, the revision check, a 412 that was our own write) compare the sealed
/// bytes sent, which is what Drive lists; "nothing changed" compares plaintext. Sealed bytes
/// that do not open stop the run, as do sealed bytes a run that does not seal would replace.
/// A plain file of ours is uploaded sealed by a run that seals, even with nothing new, and a
/// sealed one plain by a run whose uploads are `.unsealed` (the user turned sealing off).
///
/// `local` nil makes a settling run (for `restore` and `status`): it only finishes a pending
/// verification, uploading what it owes, and does nothing else.
///
/// A run made with `unlessUnchanged` reads its local document only when it needs it: when
/// the check, asked of the first listing, names Drive's file (a recorded steady state still
/// holds, and no previous run's check is owed), the run finishes at once with
/// `BackupOutcome.quiet`, having read nothing; otherwise it asks for the document
/// (`.readLocal`) and goes on as a run given it.
public struct BackupRun<Document> {
    public enum Action {
        case list
        /// The local document, which `init(name:codec:unlessUnchanged:)` left unread;
        /// `.localRead`.
        case readLocal
        /// v2 metadata with the etag, then the bytes (`DriveClient.read`); `.downloaded`, or
        /// `.gone` when the file is no longer there.
        case download(DriveFile)
        /// v2 metadata with the etag only (`DriveClient.tagged`); `.tagged`, or `.gone` when
        /// the file is no longer there.
        case readTag(DriveFile)
        /// Reserve an id and create our file with `bytes`; `.created`.
        case create(bytes: [UInt8])
        /// Conditional upload; `.updated` or `.changedSinceRead`.
        case update(DriveFile, bytes: [UInt8], ifMatch: String)
        /// `.revisions`, every page, oldest first.
        case listRevisions(fileID: String)
        /// One revision's bytes; `.revisionBytes`, `.restricted` when Drive serves the bytes of
        /// pinned revisions only, or `.gone` when Drive no longer serves it.
        case downloadRevision(fileID: String, DriveRevision)
        /// Pin a revision (`keepForever`) so that Drive serves its bytes; `.done`, or
        /// `.pinRefused` when Drive will not pin it (its cap of pins per file).
        case pin(fileID: String, revision: String)
        /// Delete these revisions, whose pins are no longer needed (a pin cannot be taken off
        /// any other way); one that fails costs only its pin; `.done`.
        case release(fileID: String, revisions: [String])
        /// Record on the file that `revision`'s check finished, while its etag is `ifMatch`;
        /// `.marked` with the file's new metadata and etag, else (a 412, or any failure: the
        /// next run lists the revisions once more) `.changedSinceRead`.
        case markChecked(DriveFile, revision: String, ifMatch: String)
        /// Copy the snapshot, as `bytes`, to a new app-folder file of this name, then tell the
        /// user why (`SyncNotice.keptAside`); `.keptAside`.
        case keepAside(DriveSnapshot, bytes: [UInt8], name: String, reason: SideFileReason)
        /// `.done`.
        case delete(fileID: String)
        /// Save (or with nil, clear) the profile's pending verification; `.done`.
        case record(PendingVerification?)
        /// Wait before the next round (backoff with jitter; `round` counts from 0); `.done`.
        case backOff(round: Int)
        /// Tell the user; `.done`.
        case notify(SyncNotice)
        case finish(BackupOutcome<Document>)
        case fail(SyncError)
    }

    public enum Event {
        /// The listing, and the run's clock: known once Drive has first answered (its `Date`
        /// corrects ours), and fixed by the first listing for the rest of the run.
        case listed([DriveFile], now: Timestamp)
        /// The local document, and the profile's kept copy when the run was made without one:
        /// a run made `unlessUnchanged` reads both only now, as a quiet night needs neither.
        case localRead(Document, kept: KeptCopy? = nil)
        case downloaded(DriveSnapshot)
        case gone
        case tagged(DriveFile, etag: String)
        case created(DriveFile)
        case updated(DriveFile)
        case changedSinceRead
        case revisions([DriveRevision])
        case revisionBytes([UInt8])
        /// Drive serves only pinned revisions' bytes, and this one is not pinned.
        case restricted
        /// Drive refused to pin a revision.
        case pinRefused(DriveError)
        /// The file's v2 metadata, with its etag, after a mark.
        case marked(DriveFile)
        case keptAside(DriveFile)
        case done
    }

    private enum Phase {
        /// A later round's listing (the first is the opening's, `Stage.opening`).
        case listing
        /// The first listing, kept while the local document is read, and the previous run's
        /// check it owes.
        case readingLocal([DriveFile], previous: PendingVerification?)
        /// Finishing a previous run's check: its revision listing.
        case checkingPending(PendingVerification)
        /// Downloading the revisions a check found between a base and an upload.
        case fetchingOthers(Reading)
        /// Adding a read pin to the record on disk, then pinning, then freeing a pin when
        /// Drive refused one.
        case recordingPin(Reading)
        case pinning(Reading)
        case freeing(Reading)
        case waitingForPin(Reading)
        /// Deleting the read pins whose items are in the checked head.
        case releasing
        /// Deleting them between two batches of a check, then reading the next batch.
        case releasingBatch(Reading)
        /// Listing the revisions since the file's mark, which the head is not.
        case checkingMark(String)
        /// Marking this run's proved upload (or the head it found complete).
        case marking
        case readingCopies([DriveFile])
        case readingTarget
        /// Reading a fresh etag for `target`, the kept copy's being stale, before uploading.
        case taggingKept(Sending, target: DriveFile)
        /// Saving the upload's record; the update to `target` under `ifMatch` comes after.
        case recordingPending(Upload, target: DriveFile, ifMatch: String)
        case creating(Sending)
        case uploading(Upload)
        /// A 412: did our upload land anyway?
        case checkingOwnWrite(Upload)
        /// The upload's answer (its file, with its head revision and etag).
        case verifying(Upload, answer: DriveFile)
        case backingOff
        case clearing
        case keepingAside([DriveSnapshot])
        /// Reading a merged duplicate's metadata again just before it is deleted.
        case confirming([DriveFile])
        case deleting([DriveFile])
        /// Telling the caller something, one notice at a time, before `then`, the step it came
        /// with, in `resume`, that step's phase.
        indirect case telling([SyncNotice], then: Action, resume: Phase)
        case finished
    }

    /// Where the run is: before its first listing, or in the run proper, which that listing
    /// starts with its clock, so no step that reads the clock (a merge, a first backup's create,
    /// the retention check, a side file's name) can come before it.
    private enum Stage {
        case opening(Opening)
        case listed(Run)
        /// Failed before its first listing.
        case finished
    }

    /// What the run starts with, and what its first listing decides on and no later round's.
    private struct Opening {
        /// The local document given at the start (nil: read on request, or a settling run).
        var local: Document?
        /// A previous run's unfinished check, finished first.
        var previous: PendingVerification?
        /// Drive's file when the listing and the run's clock show nothing to do (the local
        /// document is unread until it names none).
        var unlessUnchanged: (([DriveFile], Timestamp) -> DriveFile?)?
    }

    private enum AfterOthers {
        /// A previous run's check: go on with this run.
        case resume
        /// This run's own upload: a new round.
        case newRound
        /// A batch of a check cut at the pin cap, read after the previous batch was proved:
        /// the next upload folds it in. Not a round: it is progress, not another writer.
        case nextBatch
    }

    /// The revisions a check still has to read (the first is the one in hand), of which file,
    /// and what comes after them.
    private struct Reading {
        var others: [DriveRevision]
        var fileID: String
        var then: AfterOthers
        /// A pin was freed for the first revision already: the next refusal waits.
        var freed = false
        /// How often a refused pin of the first revision was waited for.
        var waits = 0
    }

    /// What the next upload sends, and the revision it starts from.
    private struct Base {
        var document: Document?
        var revision: String?
        /// The checksum Drive listed for that revision's bytes.
        var md5: String?
        var etag: String?
        /// The base's envelope on Drive is not the one this run uploads in (`changesEnvelope`):
        /// upload even with nothing new.
        var rewrap = false
        /// The base's opened bytes are in another form than `encode` gives (`changesForm`):
        /// upload even with nothing new.
        var reform = false
        /// Its bytes as `decode` read them (inflated, when they come from a gzip kept copy):
        /// when the merge's encoding is these bytes, nothing changed, and the base is not
        /// encoded again to tell.
        var plain: [UInt8]?
        /// `plain` is `encode`'s of `document` (`KeptCopy.canonical`, and inflated): the
        /// merge's encoding differing from them is a change, with no encoding of the base to
        /// confirm it.
        var canonical = false
    }

    /// The head of our file as this run last knew it, for the profile's next kept copy.
    private struct Head {
        var file: DriveFile
        var etag: String?
        var document: Document
        /// As `decode` read it.
        var plain: [UInt8]
        /// Of the bytes on Drive.
        var size: Int
        /// Of the bytes on Drive, when they are sealed (not `plain`).
        var sealedMd5: String?
        /// Of `plain`, when the run has it already (nil: the kept copy computes it).
        var plainMd5: String?
        /// `plain`, inflated, is `encode`'s of `document` (`KeptCopy.canonical`).
        var canonical: Bool

        init(
            _ file: DriveFile, etag: String?, document: Document, plain: [UInt8],
            onDrive: [UInt8], canonical: Bool
        ) {
            self.file = file
            self.etag = etag
            self.document = document
            self.plain = plain
            self.canonical = canonical
            size = onDrive.count
            // Equal arrays of one buffer compare at once: a plain backup costs no second pass.
            sealedMd5 = onDrive == plain ? nil : Digest.hex(Digest.md5(onDrive))
        }

        /// The head an upload made: its checksums are the ones `send` computed.
        init(_ file: DriveFile, etag: String?, sent: Sending) {
            self.file = file
            self.etag = etag
            document = sent.document
            plain = sent.plain
            // `send` uploads `encode`'s bytes, gzipped or not.
            canonical = true
            size = sent.bytes.count
            sealedMd5 = sent.sealed ? sent.md5 : nil
            plainMd5 = sent.plainMd5
        }
    }

    /// The upload under way: its document, that document's bytes, and the bytes sent (sealed),
    /// each hashed once, here, for the pending record, the check and the next kept copy.
    private struct Sending {
        var document: Document
        var plain: [UInt8]
        var bytes: [UInt8]
        /// Of `bytes`, and of `plain` (the same when nothing seals them).
        var md5: String
        var plainMd5: String
        var sealed: Bool

        init(document: Document, plain: [UInt8], bytes: [UInt8]) {
            self.document = document
            self.plain = plain
            self.bytes = bytes
            // Equal arrays of one buffer compare at once: a plain backup hashes once.
            sealed = bytes != plain
            md5 = Digest.hex(Digest.md5(bytes))
            plainMd5 = sealed ? Digest.hex(Digest.md5(plain)) : md5
        }
    }

    /// An upload to our file, from its record to its check: what it sends, and the record
    /// saved before it (the check's base and checksum).
    private struct Upload {
        var sending: Sending
        var record: PendingVerification
    }

    public let name: String
    public let codec: SyncCodec<Document>
    /// The rounds before the run gives up (`.keepsChanging`). This and the settings below are
    /// set before the start: the run proper takes them at its first listing.
    public var maxRounds = 8
    /// The most bytes a device reads a backup with (`--max-bytes`): a larger upload would
    /// leave every device refusing the backup from the next run on, so it is refused here.
    public var maxBytes = Int.max
    /// The profile's retention policy: a read pin it names stays (it is one of its pins), and
    /// a pin it names is never freed. nil: it names none.
    public var retention: RetentionPolicy?
    /// The user's zone, for the days the policy names.
    public var timeZone = TimeZone.current
    private let kept: KeptCopy?
    private var stage: Stage

    /// The local document: given at the start, or read when the run asked for it.
    public var local: Document? {
        switch stage {
        case .opening(let opening): opening.local
        case .listed(let run): run.local
        case .finished: nil
        }
    }

    public init(
        name: String, codec: SyncCodec<Document>, local: Document?, kept: KeptCopy? = nil,
        pending: PendingVerification? = nil
    ) {
        self.name = name
        self.codec = codec
        self.kept = kept
        stage = .opening(Opening(local: local, previous: pending))
    }

    /// A backup whose local document is read only when `unlessUnchanged`, asked of the first
    /// listing and the run's clock, names no file: so a night with nothing to do reads nothing.
    public init(
        name: String, codec: SyncCodec<Document>,
        unlessUnchanged: @escaping ([DriveFile], Timestamp) -> DriveFile?, kept: KeptCopy? = nil,
        pending: PendingVerification? = nil
    ) {
        self.init(name: name, codec: codec, local: nil, kept: kept, pending: pending)
        stage = .opening(
            Opening(local: nil, previous: pending, unlessUnchanged: unlessUnchanged))
    }

    /// The first request; the run is in its first listing from its making.
    public func start() -> Action {
        .list
    }

    /// `action`'s request failed for good (retries spent). A refusal that answers it (a file
    /// gone, a revision that wants a pin, the pin cap) goes on as that event; anything else
    /// ends the run. Once an upload of ours landed, the check is left undone: the pending
    /// record on disk says what the next run finishes.
    public mutating func failed(_ error: DriveError, doing action: Action) -> Action {
        guard case .listed(var run) = stage else {
            if let answer = Self.answer(error, to: action) { return handle(answer) }
            stage = .finished
            return .fail(.drive(error))
        }
        stage = .finished  // the run is held once while it changes (see `handle`)
        let next = run.failed(error, doing: action)
        stage = .listed(run)
        return next
    }

    /// The event a refusal of `action` stands for, when it is one.
    static func answer(_ error: DriveError, to action: Action) -> Event? {
        switch action {
        case .download, .readTag:
            return error.isGone ? .gone : nil
        case .downloadRevision(_, let revision):
            if error.asksForPin, revision.keepForever != true { return .restricted }
            return error.isGone ? .gone : nil
        case .pin:
            return error.refusesPin ? .pinRefused(error) : nil
        case .markChecked:
            // A mark that fails costs only a revision listing on the next run of any device.
            return .changedSinceRead
        case .release:
            // A release that fails costs only its pin: the policy releases it after 30 days.
            return .done
        default:
            return nil
        }
    }

    /// What comes of `event`, the answer to the last action: the next action. Before the first
    /// listing, only the listing is an answer.
    public mutating func handle(_ event: Event) -> Action {
        switch (stage, event) {
        case (.opening(let opening), .listed(let files, let now)):
            var run = Run(self, opening: opening, now: now)
            let next = run.opened(files, opening)
            stage = .listed(run)
            return next
        case (.listed(var run), _):
            // Out of `stage` while it changes: held twice, every collection the run appends
            // to would be copied first.
            stage = .finished
            let next = run.handle(event)
            stage = .listed(run)
            return next
        case (.opening, _), (.finished, _):
            // Only the listing answers the first request; nothing answers a failed run.
            stage = .finished
            return .fail(.protocolViolation("\(event) before the first listing"))
        }
    }

    /// The run proper, from its first listing on.
    private struct Run {
        /// The run's clock, fixed by its first listing (Drive's `Date` corrects ours).
        let now: Timestamp
        // The settings, as they were at the first listing.
        let name: String
        let codec: SyncCodec<Document>
        let maxRounds: Int
        let maxBytes: Int
        let retention: RetentionPolicy?
        let timeZone: TimeZone
        private var kept: KeptCopy?
        /// What the run's merges and steps said so far, for the outcome.
        private var notices = RunNotices()
        private(set) var local: Document?
        private var phase = Phase.listing
        /// This run's record of the upload in flight.
        private var pending: PendingVerification?
        /// The oldest base whose revisions since are not proved to be on Drive (a check found
        /// others, or ours landed unchecked): every record of this run keeps it, so a run cut
        /// short leaves the next one everything it may owe. nil: none; `.some(nil)`: since the
        /// first revision.
        private var unprovedBase: String??
        /// An upload of this run is on Drive (its check may still be to come).
        private var landed = false
        private var target: DriveFile?
        /// Other files of our name, still to read; then those read.
        private var unread: [DriveFile] = []
        private var duplicates: [DriveFile] = []
        /// Decoded duplicates, with their snapshots (kept aside when their items are held back).
        private var copies: [(document: Document, snapshot: DriveSnapshot)] = []
        /// Each duplicate as it was read (decoded or kept aside), by id: deleted only while it
        /// is still that.
        private var duplicatesRead: [String: (file: DriveFile, etag: String)] = [:]
        private var holdingBack: [DriveSnapshot] = []
        /// Other writers' revisions found by a check, merged into every later round.
        private var owed: [Document] = []
        /// Revision ids merged or written this run: a later check does not count them again.
        private var known: Set<String> = []
        /// Revisions pinned only to be read, by this run or a cut-short one whose check it finishes:
        /// released once their items are in a checked head.
        private var readPins: Set<String>
        /// The pending record on disk as last saved (this run's or a previous run's), which a read
        /// pin is added to; cleared once no check is left. nil: none is on disk.
        private var onDisk: PendingVerification?
        /// The latest revision listing: which pins the policy names, which one may be freed.
        private var lastRevisions: [DriveRevision] = []
        /// The read pins released by the run.
        private var released: Set<String> = []
        /// What a check still has to read once the upload of what it read so far is proved and its
        /// read pins released: Drive's cap left no room to pin it all at once.
        private var deferred: Reading?
        /// The file's mark as the run's listing showed it (`DriveFile.checkedRevision`), read once,
        /// as the revisions since it are listed and merged. nil: not read yet; `.some(nil)`: the
        /// file bore none.
        private var mark: String??
        /// Revisions whose items are in what this run uploads: every base it read and every
        /// other writer's revision it merged (its own uploads are in `known`).
        private var covered: Set<String> = []
        private var base = Base()
        /// What this run last uploaded, checked: merged again into a later round's base, in case
        /// another device's write replaced it.
        private var uploaded: Document?
        private var head: Head?
        /// This run uploaded over our file in another envelope, to be said once at the end.
        private var rewraps = false
        /// The same for another form (`SyncCodec.changesForm`).
        private var reforms = false
        private var round = 0
        private var fromKeptCopy = false
        private var created = false
        /// The revision listing that proved this run's last upload.
        private var checkedRevisions: [DriveRevision]?
        /// Etags whose bytes did not decode and were kept aside: not kept aside again.
        private var keptAsideEtags: Set<String> = []
        private var sideFiles: [DriveFile] = []

        init(_ setup: BackupRun, opening: Opening, now: Timestamp) {
            self.now = now
            name = setup.name
            codec = setup.codec
            maxRounds = setup.maxRounds
            maxBytes = setup.maxBytes
            retention = setup.retention
            timeZone = setup.timeZone
            kept = setup.kept
            local = opening.local
            onDisk = opening.previous
            readPins = Set(opening.previous?.readPins ?? [])
        }

        /// The first listing: the quiet check, when the run has one, asked of it and the clock.
        mutating func opened(_ files: [DriveFile], _ opening: Opening) -> Action {
            guard let unlessUnchanged = opening.unlessUnchanged else {
                return listed(files, previous: opening.previous)
            }
            // A previous run's check is owed whatever the listing shows.
            if opening.previous == nil, let file = unlessUnchanged(files, now) {
                return quiet(file)
            }
            phase = .readingLocal(files, previous: opening.previous)
            return .readLocal
        }

        /// `BackupRun.failed(_:doing:)`, from the first listing on.
        mutating func failed(_ error: DriveError, doing action: Action) -> Action {
            if let answer = BackupRun.answer(error, to: action) { return handle(answer) }
            defer { phase = .finished }
            switch phase {
            case .fetchingOthers(let reading), .recordingPin(let reading), .pinning(let reading),
                .freeing(let reading), .waitingForPin(let reading):
                // A check that cannot read what it must merge: the truth is that those items are
                // missing from Drive now; the record on disk makes the next run merge them.
                return .fail(.unmerged(error, revisions: reading.others))
            default:
                if landed, let pending { return .fail(.unverified(error, pending)) }
                return .fail(.drive(error))
            }
        }

        mutating func handle(_ event: Event) -> Action {
            switch (phase, event) {
            case (.listing, .listed(let files, _)):
                // A later round's listing: the run's clock stays the first listing's.
                return listed(files, previous: nil)
            case (.readingLocal(let files, let previous), .localRead(let document, let readKept)):
                local = document
                kept = kept ?? readKept
                return listed(files, previous: previous)

            case (.checkingPending(let record), .revisions(let revisions)):
                lastRevisions = revisions
                // Whether or not its upload landed, what came after its base may be owed.
                let others = RevisionCheck.since(
                    revisions, base: record.baseRevisionId, uploadedMd5: record.uploadedMd5)
                if !others.isEmpty { unprovedBase = .some(record.baseRevisionId) }
                return fetch(others, fileID: record.fileId, then: .resume)

            case (.fetchingOthers(var reading), .revisionBytes(let bytes)):
                let revision = reading.others.removeFirst()
                reading.freed = false
                reading.waits = 0
                known.insert(revision.id)
                let plain: [UInt8]
                do {
                    plain = try codec.opened(
                        bytes, of: file(withID: reading.fileID), revision: revision.id,
                        replacing: true)
                } catch {
                    return fail(error)
                }
                do {
                    owed.append(try codec.decode(plain))
                    covered.insert(revision.id)
                } catch {
                    // A newer schema's write is never merged down into ours: refused, as a file.
                    if codec.isRefusal(error), let target { return fail(.refused(target, error)) }
                    return unreadable(revision, then: reading)
                }
                return fetch(reading)
            case (.fetchingOthers(var reading), .gone):
                let revision = reading.others.removeFirst()
                reading.freed = false
                return unreadable(revision, then: reading)
            case (.fetchingOthers(var reading), .restricted):
                let revision = reading.others[0]
                guard revision.keepForever != true else {
                    // Pinned, and still not served: Drive will not give it.
                    reading.others.removeFirst()
                    return unreadable(revision, then: reading)
                }
                readPins.insert(revision.id)
                // On disk before the pin: a run cut short after it leaves the pin to be released.
                guard var record = pending ?? onDisk else { return pin(reading) }
                record.readPins = readPins.sorted()
                onDisk = record
                phase = .recordingPin(reading)
                return .record(record)
            case (.recordingPin(let reading), .done):
                return pin(reading)
            case (.pinning(var reading), .done):
                reading.others[0].keepForever = true
                phase = .fetchingOthers(reading)
                return .downloadRevision(fileID: reading.fileID, reading.others[0])
            case (.pinning(var reading), .pinRefused(let error)):
                if !reading.freed, let spare = spare(reading) {
                    reading.freed = true
                    phase = .freeing(reading)
                    return .release(fileID: reading.fileID, revisions: [spare])
                }
                if reading.waits == 0, cutIntoBatches(reading) {
                    // The room left is held by this run's own read pins: the revisions they hold
                    // go up first, proved, then their pins make room for the rest.
                    reading.others = []
                    return fetch(reading)
                }
                guard reading.waits < maxRounds else {
                    return fail(.unmerged(error, revisions: reading.others))
                }
                reading.waits += 1
                phase = .waitingForPin(reading)
                return .backOff(round: reading.waits - 1)
            case (.freeing(let reading), .done), (.waitingForPin(let reading), .done):
                return pin(reading)
            case (.releasing, .done):
                return finishChecks()
            case (.releasingBatch(let more), .done):
                return fetch(more)
            case (.checkingMark(let mark), .revisions(let revisions)):
                lastRevisions = revisions
                guard let target else { return proceed() }
                let others = RevisionCheck.owed(
                    revisions, checked: mark, headMd5: target.md5Checksum)
                // A record of this run keeps the mark as its base: a run cut short owes them too.
                if !others.isEmpty, unprovedBase == nil { unprovedBase = .some(mark) }
                return fetch(others, fileID: target.id, then: .resume)
            case (.marking, .marked(let file)):
                target = file
                if var head, head.file.id == file.id {
                    head.file = file
                    head.etag = file.etag
                    self.head = head
                }
                return finishChecks()
            case (.marking, .changedSinceRead):
                return finishChecks()

            case (.readingCopies(var files), .downloaded(let snapshot)):
                duplicates.append(files.removeFirst())
                duplicatesRead[snapshot.file.id] = (snapshot.file, snapshot.etag)
                switch decodeOrKeepAside(snapshot) {
                case .document(let document, _): copies.append((document, snapshot))
                case .keepAside(let action):
                    phase = .readingCopies(files)
                    return action
                case .refused(let error): return fail(error)
                }
                return readCopies(files)
            case (.readingCopies(var files), .gone):
                // Another device merged and deleted it since our listing: its items are in the target.
                files.removeFirst()
                return readCopies(files)
            case (.readingCopies(let files), .keptAside(let side)):
                sideFiles.append(side)
                return readCopies(files)

            case (.readingTarget, .downloaded(let snapshot)):
                target = snapshot.file
                base = Base(
                    revision: snapshot.file.headRevisionId, md5: snapshot.file.md5Checksum,
                    etag: snapshot.etag)
                if keptAsideEtags.contains(snapshot.etag) { return mergeAndUpload() }
                switch decodeOrKeepAside(snapshot) {
                case .document(let document, let plain):
                    base.document = document
                    base.plain = plain
                    if let revision = snapshot.file.headRevisionId { covered.insert(revision) }
                    base.rewrap = codec.changesEnvelope(ofSealed: codec.isSealed(snapshot.bytes))
                    base.reform = codec.changesForm(isGzip: Gzip.isGzip(plain))
                    head = Head(
                        snapshot.file, etag: snapshot.etag, document: document, plain: plain,
                        onDrive: snapshot.bytes, canonical: false)
                    return mergeAndUpload()
                case .keepAside(let action):
                    keptAsideEtags.insert(snapshot.etag)
                    return action
                case .refused(let error): return fail(error)
                }
            case (.readingTarget, .keptAside(let side)):
                sideFiles.append(side)
                return mergeAndUpload()
            case (.readingTarget, .gone):
                // Our file went (another device merged it into an older one and deleted it).
                return nextRound(waiting: false)

            case (.taggingKept, .gone):
                return nextRound(waiting: false)
            case (.taggingKept(let sending, let target), .tagged(let file, let etag)):
                // The kept copy stands in for bytes read under this etag only if they are the same.
                guard kept?.matches(file) == true else { return download() }
                base.etag = etag
                return upload(sending, to: target, ifMatch: etag)

            case (.recordingPending(let upload, let target, let etag), .done):
                phase = .uploading(upload)
                return .update(target, bytes: upload.sending.bytes, ifMatch: etag)

            case (.creating(let sending), .created(let file)):
                // Not checked against the history: no revision can precede the first one of a
                // file whose id was reserved for us, so the check could only pass.
                created = true
                target = file
                uploaded = sending.document
                head = Head(file, etag: file.etag, sent: sending)
                // A new file's history is its one revision: known without asking.
                checkedRevisions = file.headRevisionId.map {
                    [
                        DriveRevision(
                            id: $0, md5Checksum: file.md5Checksum, modifiedTime: file.modifiedTime)
                    ]
                }
                return finishChecks()
            case (.uploading(let upload), .updated(let file)):
                return verify(upload, answer: file)
            case (.uploading(let upload), .changedSinceRead):
                // Someone wrote since our read, or our upload landed and only its answer was lost
                // (the retry then meets our own new etag): the history tells which.
                phase = .checkingOwnWrite(upload)
                return .listRevisions(fileID: upload.record.fileId)
            case (.checkingOwnWrite(let upload), .revisions(let revisions)):
                return checked(revisions, of: upload, answered: nil)

            case (.verifying(let upload, let file), .revisions(let revisions)):
                return checked(revisions, of: upload, answered: file)

            case (.backingOff, .done):
                return download()

            case (.clearing, .done):
                return keepAside(holdingBack)
            case (.keepingAside(var snapshots), .keptAside(let side)):
                snapshots.removeFirst()
                sideFiles.append(side)
                return keepAside(snapshots)
            case (.confirming(let files), .tagged(let file, let etag)):
                guard duplicatesRead[file.id].map({ moved(file, etag: etag, since: $0) }) ?? true
                else {
                    phase = .deleting(files)
                    return .delete(fileID: file.id)
                }
                // Written since we read it: another round, from the listing, reads it again and
                // merges its new items into our file before it goes.
                return nextRound(waiting: false)
            case (.confirming(var files), .gone), (.deleting(var files), .done):
                files.removeFirst()
                return delete(files)

            case (.telling(let untold, let next, let resume), .done):
                return tell(untold, then: next, resume: resume)

            default:
                return fail(.protocolViolation("\(event) while \(phase)"))
            }
        }

        // MARK: - Steps

        private mutating func listed(_ files: [DriveFile], previous: PendingVerification?)
            -> Action
        {
            target = files.first
            unread = Array(files.dropFirst())
            duplicates = []
            copies = []
            // A previous run's check, unless the file it was about is gone (merged into another,
            // then deleted): nothing is left to check then.
            if let previous, files.contains(where: { $0.id == previous.fileId }) {
                phase = .checkingPending(previous)
                return .listRevisions(fileID: previous.fileId)
            }
            return proceed()
        }

        /// This run proper, once any previous run's check is done.
        private mutating func proceed() -> Action {
            guard let target else {
                // No file: a first backup creates it; a settling run has nothing to do.
                guard let local else { return finishChecks() }
                return send(codec.stamp(local, now))
            }
            guard local != nil else {
                // A settling run uploads only what a previous run's check found, into the file
                // it checked; it reads no duplicates and deletes nothing (restore deletes nothing).
                unread = []
                return owed.isEmpty ? finishChecks() : download()
            }
            if mark == nil {
                mark = .some(target.checkedRevision)
                if let mark = target.checkedRevision, mark != target.headRevisionId {
                    // A check some device still owes: what the head may lack is merged first.
                    phase = .checkingMark(mark)
                    return .listRevisions(fileID: target.id)
                }
            }
            // A copy of a sealed backup is no base for a run that uploads plain without being told
            // to: the download then refuses to replace that backup with plain bytes.
            if unread.isEmpty, owed.isEmpty, let kept, kept.matches(target),
                kept.holdsDriveBytes || codec.uploads != .plain,
                let inflated = try? codec.inflate(kept.bytes),
                let document = try? codec.decode(inflated)
            {
                base = Base(
                    document: document, revision: target.headRevisionId, md5: target.md5Checksum,
                    etag: kept.etag(for: target),
                    rewrap: codec.changesEnvelope(ofSealed: !kept.holdsDriveBytes),
                    reform: codec.changesForm(isGzip: Gzip.isGzip(kept.bytes)), plain: inflated,
                    // Gzip a codec left as it was is no encoding: the base is encoded to compare.
                    canonical: kept.canonical && !Gzip.isGzip(inflated))
                var copied = Head(
                    target, etag: base.etag, document: document, plain: kept.bytes,
                    onDrive: kept.bytes, canonical: kept.canonical)
                // The size on Drive, when the copy holds the plaintext of sealed bytes.
                copied.size = target.size ?? kept.bytes.count
                copied.sealedMd5 = kept.holdsDriveBytes ? nil : kept.md5Checksum
                copied.plainMd5 = kept.plainChecksum
                head = copied
                fromKeptCopy = true
                if let revision = target.headRevisionId { covered.insert(revision) }
                return mergeAndUpload()
            }
            return readCopies(unread)
        }

        private mutating func readCopies(_ files: [DriveFile]) -> Action {
            guard let file = files.first else { return download() }
            phase = .readingCopies(files)
            return .download(file)
        }

        private mutating func download() -> Action {
            guard let target else { return nextRound(waiting: false) }
            fromKeptCopy = false
            phase = .readingTarget
            return .download(target)
        }

        /// Another round: after a 412 or a lost upload, with a backoff first, from the download;
        /// when our file went, from the listing.
        private mutating func nextRound(waiting: Bool) -> Action {
            round += 1
            guard round < maxRounds else { return fail(.keepsChanging(rounds: maxRounds)) }
            if waiting {
                phase = .backingOff
                return .backOff(round: round - 1)
            }
            phase = .listing
            return .list
        }

        private mutating func fetch(_ others: [DriveRevision], fileID: String, then: AfterOthers)
            -> Action
        {
            fetch(Reading(others: others, fileID: fileID, then: then))
        }

        private mutating func fetch(_ reading: Reading) -> Action {
            guard let revision = reading.others.first else {
                switch reading.then {
                case .resume: return proceed()
                case .newRound:
                    // No wait: what the others wrote is merged already, the next round folds it in.
                    round += 1
                    guard round < maxRounds else { return fail(.keepsChanging(rounds: maxRounds)) }
                    return download()
                case .nextBatch: return download()
                }
            }
            phase = .fetchingOthers(reading)
            return .downloadRevision(fileID: reading.fileID, revision)
        }

        private mutating func pin(_ reading: Reading) -> Action {
            phase = .pinning(reading)
            return .pin(fileID: reading.fileID, revision: reading.others[0].id)
        }

        /// A pin to free when Drive's cap refused a read pin: the oldest pinned revision that the
        /// policy does not name and this check has not yet to read, before the oldest base this
        /// run has not proved. Its items reached that base (each later writer merged what it
        /// replaced, or its check did), so deleting it loses no item, only a point in the history
        /// the policy does not keep. nil when there is none.
        private func spare(_ reading: Reading) -> String? {
            let base: String? =
                if let unprovedBase { unprovedBase } else { (pending ?? onDisk)?.baseRevisionId }
            guard let base, let end = lastRevisions.firstIndex(where: { $0.id == base }) else {
                return nil
            }
            let named = retention?.names(lastRevisions, timeZone: timeZone) ?? []
            let waiting = Set(reading.others.map(\.id))
            return lastRevisions[..<end].first {
                $0.keepForever == true && !named.contains($0.id) && !waiting.contains($0.id)
            }?.id
        }

        /// Folds everything this run owes into the base, then uploads when that changed it; what
        /// the merges warn of first (each kind once a run), so it comes before what follows.
        private mutating func mergeAndUpload() -> Action {
            let said = notices.merges.count
            let next = mergeAndUploadSteps()
            return tell(notices.merges[said...].map(SyncNotice.merged), then: next)
        }

        /// Tells `untold` (kept in `notices` already) one `.notify` at a time, then goes on with
        /// `next`, the step made before, in the phase that step set.
        private mutating func tell(_ untold: [SyncNotice], then next: Action) -> Action {
            tell(untold, then: next, resume: phase)
        }

        private mutating func tell(_ untold: [SyncNotice], then next: Action, resume: Phase)
            -> Action
        {
            guard let notice = untold.first else {
                phase = resume
                return next
            }
            phase = .telling(Array(untold.dropFirst()), then: next, resume: resume)
            return .notify(notice)
        }

        /// A revision of `reading`'s that cannot be read: said, and the check reads on without it.
        private mutating func unreadable(_ revision: DriveRevision, then reading: Reading)
            -> Action
        {
            let notice = SyncNotice.unreadableRevision(
                fileID: reading.fileID, revision: revision.id)
            notices.add(notice)
            return tell([notice], then: fetch(reading))
        }

        private mutating func mergeAndUploadSteps() -> Action {
            var result = base.document
            holdingBack = []
            for copy in copies {
                guard let into = result else {
                    result = copy.document
                    continue
                }
                let folded = notices.add(codec.merge(copy: copy.document, into: into, now: now))
                result = folded.document
                if folded.heldBack { holdingBack.append(copy.snapshot) }
            }
            // Other devices' writes that an upload replaced, and our own last upload.
            for document in owed + [uploaded].compactMap({ $0 }) {
                result =
                    result.map {
                        notices.add(codec.merge(copy: document, into: $0, now: now)).document
                    }
                    ?? document
            }
            if let local {
                result = result.map { notices.add(codec.merge($0, local, now)).document } ?? local
            }
            guard let result else { return finishChecks() }
            // Encoded once: the comparison's bytes are the upload's, restamped.
            let encoded = codec.encode(result)
            if let document = base.document, duplicates.isEmpty, !base.rewrap, !base.reform,
                encoded.sameBytes(as: base.plain)
                    || (!base.canonical && encoded.sameBytes(as: codec.encode(document)))
            {
                // The head holds what the batch read: its pins make room for the next batch.
                if let more = deferred { return readOn(more) }
                // The head held everything owed since the mark already: it is marked as it is.
                if let mark = mark ?? nil, mark != base.revision, let revision = base.revision,
                    let action = markIfComplete(revision, in: lastRevisions, etag: base.etag)
                {
                    return action
                }
                return finishChecks()
            }
            return send(codec.stamp(result, now), encoded: codec.restamp?(encoded, result, now))
        }

        /// Records the check to come, then uploads `document` (or creates the file with it);
        /// `encoded`: its `encode`'s bytes, when the caller has them.
        private mutating func send(_ document: Document, encoded: [UInt8]? = nil) -> Action {
            let headIsGzip = head.map { Gzip.isGzip($0.plain) }
            let plain = codec.upload(document, encoded: encoded, headIsGzip: headIsGzip)
            let bytes: [UInt8]
            do {
                bytes = try codec.seal(plain)
            } catch {
                return fail(.unsealed(error))
            }
            guard bytes.count <= maxBytes else {
                return fail(.tooLarge(bytes: bytes.count, limit: maxBytes))
            }
            let sending = Sending(document: document, plain: plain, bytes: bytes)
            if base.rewrap { rewraps = true }
            if base.reform { reforms = true }
            guard let target else {
                phase = .creating(sending)
                return .create(bytes: sending.bytes)
            }
            guard let etag = base.etag else {
                // The kept copy's etag is stale (the version moved): read a fresh one first.
                phase = .taggingKept(sending, target: target)
                return .readTag(target)
            }
            return upload(sending, to: target, ifMatch: etag)
        }

        private mutating func upload(_ sending: Sending, to target: DriveFile, ifMatch etag: String)
            -> Action
        {
            let record = PendingVerification(
                fileId: target.id, baseRevisionId: unprovedBase ?? base.revision,
                uploadedMd5: sending.md5, readPins: readPins.sorted())
            pending = record
            onDisk = record
            phase = .recordingPending(
                Upload(sending: sending, record: record), target: target, ifMatch: etag)
            return .record(record)
        }

        private mutating func verify(_ upload: Upload, answer file: DriveFile) -> Action {
            target = file
            landed = true
            pending?.uploadedRevisionId = file.headRevisionId
            phase = .verifying(upload, answer: file)
            return .listRevisions(fileID: file.id)
        }

        /// What the history says of `upload`; `answered`: its answer, when it came.
        private mutating func checked(
            _ revisions: [DriveRevision], of upload: Upload, answered: DriveFile?
        ) -> Action {
            let sending = upload.sending
            let record = upload.record
            lastRevisions = revisions
            let check = RevisionCheck.of(
                revisions, base: base.revision, uploadedMd5: record.uploadedMd5,
                uploadedRevisionId: answered?.headRevisionId, known: known)
            let ours: DriveRevision
            var others: [DriveRevision] = []
            switch check {
            case .missing:
                // A 412 whose upload did not land: someone else wrote; read, merge, try again. An
                // answered upload the history does not show yet: the same, to be safe.
                if answered != nil { uploaded = sending.document }
                return nextRound(waiting: true)
            case .clean(let revision): ours = revision
            case .others(let found, let revision):
                ours = revision
                others = found
            }
            landed = true
            known.insert(ours.id)
            uploaded = sending.document
            if let answered, others.isEmpty, revisions.last?.id == ours.id {
                // Proved: nothing between our base and ours, and ours is the head.
                head = Head(answered, etag: answered.etag, sent: sending)
                checkedRevisions = revisions
                // A check cut at the pin cap reads on; what it has yet to read is not proved.
                if let more = deferred { return readOn(more) }
                unprovedBase = nil
                return markIfComplete(ours.id, in: revisions, etag: answered.etag) ?? finishChecks()
            }
            // Others to merge, a write after ours, or a landing learnt only from the history:
            // another round from the head, with our upload and the others folded in.
            unprovedBase = unprovedBase ?? .some(record.baseRevisionId)
            return fetch(others, fileID: record.fileId, then: .newRound)
        }

        /// No check is left: release the read pins, clear the record, then keep aside and delete
        /// the duplicates.
        private mutating func finishChecks() -> Action {
            if let release = releaseReadPins(of: target?.id ?? onDisk?.fileId, then: .releasing) {
                return release
            }
            pending = nil
            guard onDisk != nil else { return keepAside(holdingBack) }
            onDisk = nil
            phase = .clearing
            return .record(nil)
        }

        /// Marks `revision` (the head, proved) as checked when every revision from the file's mark
        /// up to it is in it: one this run read as a base, merged or uploaded, or holding the same
        /// bytes as one of those.
        /// An unmarked file (older versions never marked) counts from the first base this run
        /// read, as far as the checks before this version proved. nil: not provable, not marked.
        private mutating func markIfComplete(
            _ revision: String, in revisions: [DriveRevision], etag: String?
        ) -> Action? {
            guard let etag, let target, let end = revisions.firstIndex(where: { $0.id == revision })
            else { return nil }
            let held = covered.union(known)
            let from = (mark ?? nil) ?? revisions.first { held.contains($0.id) }?.id
            let start = from.flatMap { from in revisions.firstIndex { $0.id == from } } ?? 0
            let sums = Set(
                revisions.filter { held.contains($0.id) }.compactMap {
                    $0.md5Checksum?.lowercased()
                })
            let proved = revisions[start..<end].allSatisfy { revision in
                held.contains(revision.id)
                    || revision.md5Checksum.map { sums.contains($0.lowercased()) } ?? false
            }
            guard proved else { return nil }
            phase = .marking
            return .markChecked(target, revision: revision, ifMatch: etag)
        }

        /// Cuts a check whose next read pin Drive refused into batches when this run's own read
        /// pins hold the room: the rest of `reading` is read once the upload of what was read is
        /// proved and those pins are released. false: no pin of this run would be released.
        private mutating func cutIntoBatches(_ reading: Reading) -> Bool {
            guard !releasableIDs().isEmpty else { return false }
            if var more = deferred {
                // A second check of this run cut too (a previous run's, then the mark's).
                guard more.fileID == reading.fileID else { return false }
                let ids = Set(more.others.map(\.id))
                more.others += reading.others.filter { !ids.contains($0.id) }
                deferred = more
            } else {
                deferred = Reading(others: reading.others, fileID: reading.fileID, then: .nextBatch)
            }
            return true
        }

        /// The head holds what the batch read: releases its read pins, then reads the next batch.
        private mutating func readOn(_ more: Reading) -> Action {
            deferred = nil
            return releaseReadPins(of: more.fileID, then: .releasingBatch(more)) ?? fetch(more)
        }

        /// Deletes the read pins whose items are in the head now (`releasableIDs`), going on in
        /// `next` once that is done; nil when there are none.
        private mutating func releaseReadPins(of fileID: String?, then next: Phase) -> Action? {
            let ids = releasableIDs()
            guard let fileID, !ids.isEmpty else { return nil }
            readPins.subtract(ids)
            released.formUnion(ids)
            phase = next
            return .release(fileID: fileID, revisions: lastRevisions.map(\.id).filter(ids.contains))
        }

        /// The read pins whose items are in the head now (covered this run): every one but the
        /// head itself and those the policy would pin itself, within its share of the cap, were
        /// they not pinned yet.
        private func releasableIDs() -> Set<String> {
            let heads = Set(
                [lastRevisions.last?.id, head?.file.headRevisionId, target?.headRevisionId]
                    .compactMap { $0 })
            var kept: Set<String> = []
            if let retention {
                let unpinned = lastRevisions.map { revision in
                    var revision = revision
                    if readPins.contains(revision.id) { revision.keepForever = false }
                    return revision
                }
                kept = Set(retention.plan(unpinned, now: now, timeZone: timeZone).pin)
            }
            return readPins.intersection(covered).subtracting(heads).subtracting(kept)
        }

        private mutating func keepAside(_ snapshots: [DriveSnapshot]) -> Action {
            guard let snapshot = snapshots.first else { return delete(duplicates) }
            phase = .keepingAside(snapshots)
            do {
                return try keepAside(snapshot, label: "held-back", reason: .heldBack)
            } catch {
                return fail(error)
            }
        }

        /// The copy of `snapshot` in a side file, sealed when this run seals: a plain duplicate
        /// or broken file kept aside by a run that seals would otherwise stay readable on Drive
        /// after the backup itself is sealed. Sealed bytes stay as they are (the key opens them).
        private func keepAside(_ snapshot: DriveSnapshot, label: String, reason: SideFileReason)
            throws(SyncError) -> Action
        {
            var bytes = snapshot.bytes
            if codec.seals, !codec.isSealed(bytes) {
                do {
                    bytes = try codec.seal(bytes)
                } catch {
                    throw .unsealed(error)
                }
            }
            return .keepAside(
                snapshot, bytes: bytes, name: sideName(snapshot, label: label), reason: reason)
        }

        /// Deletes the duplicates merged in, each once its metadata, read again, shows it as it
        /// was read: a write into it since then would go with it. (A write between that read and
        /// the delete still can: Google documents no condition for a delete.)
        private mutating func delete(_ files: [DriveFile]) -> Action {
            guard let file = files.first else { return announce() }
            phase = .confirming(files)
            return .readTag(file)
        }

        /// The duplicate's head is not the one read: another revision, other bytes, or (with
        /// neither listed) another etag.
        private func moved(
            _ file: DriveFile, etag: String, since read: (file: DriveFile, etag: String)
        ) -> Bool {
            if let now = file.headRevisionId, let then = read.file.headRevisionId {
                return now != then || file.md5Checksum != read.file.md5Checksum
            }
            return etag != read.etag
        }

        /// Says that our file is in its new envelope, then in its new form, each once the
        /// upload that did it is checked.
        private mutating func announce() -> Action {
            guard uploaded != nil, let target else { return finish() }
            var changes: [SyncNotice] = []
            if rewraps { changes.append(.envelopeChanged(fileID: target.id, sealed: codec.seals)) }
            if reforms {
                changes.append(.formChanged(fileID: target.id, compressed: codec.compress == true))
            }
            for change in changes { notices.add(change) }
            return tell(changes, then: finish())
        }

        private mutating func finish() -> Action {
            phase = .finished
            var outcome = BackupOutcome<Document>()
            outcome.notices = notices
            if let head {
                outcome.file = head.file
                outcome.document = head.document
                outcome.bytes = head.size
                outcome.kept = KeptCopy(
                    file: head.file, etag: head.etag, bytes: head.plain, sealedMd5: head.sealedMd5,
                    plainMd5: head.plainMd5)
                outcome.kept?.canonical = head.canonical
            }
            outcome.created = created
            outcome.uploaded = uploaded != nil
            outcome.deletedDuplicates = duplicates.map(\.id)
            outcome.sideFiles = sideFiles
            outcome.fromKeptCopy = fromKeptCopy
            outcome.mergedRevisions = owed.count
            outcome.revisions = checkedRevisions?.filter { !released.contains($0.id) }
            outcome.releasedPins = released.count
            outcome.baseRevision = base.revision
            outcome.baseMd5 = base.md5
            return .finish(outcome)
        }

        /// Drive's file as the steady state left it: nothing read, merged or sent.
        private mutating func quiet(_ file: DriveFile) -> Action {
            phase = .finished
            var outcome = BackupOutcome<Document>()
            outcome.file = file
            outcome.quiet = true
            return .finish(outcome)
        }

        private mutating func fail(_ error: SyncError) -> Action {
            phase = .finished
            return .fail(error)
        }

        // MARK: - Broken remote files

        private enum Decoded {
            /// With its bytes as decoded (opened).
            case document(Document, plain: [UInt8])
            case keepAside(Action)
            case refused(SyncError)
        }

        /// The decoded document; or the action that copies the bytes to a dated side file (our
        /// upload then replaces them); or a refusal (a newer schema, over the size limit, sealed
        /// bytes that do not open or that this run would unseal): such a file is never replaced.
        private func decodeOrKeepAside(_ snapshot: DriveSnapshot) -> Decoded {
            let plain: [UInt8]
            do {
                plain = try codec.opened(snapshot.bytes, of: snapshot.file, replacing: true)
            } catch {
                return .refused(error)
            }
            do {
                return .document(try codec.decode(plain), plain: plain)
            } catch {
                if codec.isRefusal(error) { return .refused(.refused(snapshot.file, error)) }
                do {
                    return .keepAside(
                        try keepAside(snapshot, label: "invalid", reason: .invalid(error)))
                } catch {
                    return .refused(error)
                }
            }
        }

        /// Our file of that id, as last listed or read.
        private func file(withID id: String) -> DriveFile {
            ([target].compactMap { $0 } + unread + duplicates).first { $0.id == id }
                ?? DriveFile(id: id, name: name)
        }

        /// Named after our file, the label, the run's time and the copy's id: never our name, so
        /// no later run takes it for a backup.
        private func sideName(_ snapshot: DriveSnapshot, label: String) -> String {
            "\(name).\(label)-\(now.compact)-\(snapshot.file.id)"
        }
    }
}

extension Timestamp {
    /// `20261130T120000Z`: the time in a file name, without separators.
    public var compact: String {
        description.prefix(19).filter { $0 != "-" && $0 != ":" } + "Z"
    }
}

/// Why a copy of the backup was kept in a side file.
public enum SideFileReason {
    /// It is not a valid backup; our upload replaces it.
    case invalid(any Error)
    /// The stale guard held back items only it has; the copy is deleted after the merge.
    case heldBack
}

/// What a backup did.
public struct BackupOutcome<Document> {
    /// The file on Drive now (nil: a settling run found none, or had nothing to do).
    public var file: DriveFile?
    public var document: Document?
    public var bytes = 0
    public var created = false
    public var uploaded = false
    /// The run's `unlessUnchanged` check named `file` unchanged: nothing was read, merged or
    /// sent, and `document` and `kept` are nil.
    public var quiet = false
    public var deletedDuplicates: [String] = []
    public var sideFiles: [DriveFile] = []
    /// What is on Drive now, as far as this run knows: the profile's next kept copy.
    public var kept: KeptCopy?
    /// The kept copy stood in for the download.
    public var fromKeptCopy = false
    /// Other devices' revisions found between a base and an upload, and merged.
    public var mergedRevisions = 0
    /// What the run's merges warned of, what it told as it went, and its last merge of the
    /// local document.
    public var notices = RunNotices()
    /// The file's revisions as the check of this run's last upload listed them (ours last),
    /// less the read pins released.
    public var revisions: [DriveRevision]?
    /// Read pins released: revisions pinned to be read, deleted once their items were in the
    /// checked head.
    public var releasedPins = 0
    /// The revision the last round's merge started from (nil: a new file), and its checksum.
    public var baseRevision: String?
    public var baseMd5: String?
}
