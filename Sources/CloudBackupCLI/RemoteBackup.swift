import BackupKit
import Foundation
import GoogleDrive

/// What the sync needs to know about documents, as closures so the Drive protocol below is
/// tested with any toy document. `decode` throws for a file that fails validation; `encode`
/// gives canonical bytes; `merge(base, incoming)` folds `incoming` into `base`; `stamp` sets
/// the export time just before an upload.
struct DocumentCodec<Document> {
    var decode: ([UInt8]) throws -> Document
    var encode: (Document) -> [UInt8]
    /// The local document into the backup.
    var merge: (Document, Document) -> Document
    var stamp: (Document) -> Document
    /// Another copy of the backup on Drive (names are not unique) into the one kept, and
    /// whether the merge held back items of the copy (the stale guard), which the result then
    /// lacks; `merge`, holding nothing back, when nil. Kept apart so what the local side alone
    /// does (its warnings, its settings) is not done, or blamed on it, for a copy.
    var mergeCopy: ((Document, Document) -> (document: Document, heldBack: Bool))? = nil
    /// Drive's bytes (of the file named) as `decode` reads them, and `encode`'s bytes as they
    /// go to Drive: the profile's encryption (`RemoteEncryption`), else the bytes themselves.
    /// Apart from `decode`/`encode` so comparisons stay on plaintext, and so an envelope that
    /// does not open stops the run: it is never an invalid file to set aside and replace.
    var open: (_ bytes: [UInt8], _ file: String) throws -> [UInt8] = { bytes, _ in bytes }
    var seal: ([UInt8]) throws -> [UInt8] = { $0 }
    /// Whether `seal` encrypts. A plain backup on Drive (one that `open` leaves as it is) is
    /// then uploaded again, encrypted, even when the merge changes nothing; and the kept copy
    /// of an encrypted backup stands in for the download only while this holds.
    var seals = false

    func merge(copy: Document, into base: Document) -> (document: Document, heldBack: Bool) {
        mergeCopy?(base, copy) ?? (merge(base, copy), false)
    }
}

/// Merge-before-upload against the app folder (SPEC §6, §6b).
///
/// Design: the remote file is read as (etag, bytes), the local document merged into it, and
/// the result written only under `If-Match: etag`. A 412 means another device wrote in
/// between: read again, merge again, write again, a bounded number of times with backoff.
/// Because each round merges into what is on Drive NOW, no device's items are lost whatever
/// the interleaving. Names are not unique on Drive: with several files of our name, all are
/// merged into the oldest and the others deleted only after that upload succeeded; a copy
/// whose items the stale guard held back is first kept in a dated side file, so deleting it
/// loses nothing. A remote file that fails validation is copied to a side file before it is
/// replaced.
///
/// Example: remote {a} (etag e1), local {b}. Read → {a}; merged {a,b}; PUT If-Match e1 → 412
/// (device 2 wrote {a,c}, etag e2). Read → {a,c}; merged {a,b,c}; PUT If-Match e2 → 200.
///
/// The kept copy (see `KeptCopy`) skips the read: when the listing shows one file with the
/// copy's id and md5Checksum, the local document is merged into the copy, and nothing more is
/// sent unless that changed it; then one conditional upload under the copy's etag (or a fresh
/// one from the v2 metadata, checked against the same checksum). A 412 there, or any doubt
/// about the copy, falls back to the full read-merge-write loop above.
struct RemoteBackup<Document> {
    let drive: DriveClient
    let name: String
    let codec: DocumentCodec<Document>
    /// One line each, for a person (stderr).
    let warn: (String) -> Void
    var progress: (@Sendable (Int, Int) -> Void)?
    var maxRounds = 8
    /// The most bytes a device reads a backup with (`--max-bytes`): a larger upload would
    /// leave every device refusing the backup from the next run on, so it is refused here.
    var maxBytes = Int.max
    /// The command that merges a backup into the state file (`DriveSession.restoreCommand`),
    /// said with a kept-aside copy's name so its held-back items can be taken in.
    var restoreCommand = "cloudbackup restore --file STATE --merge"

    struct Outcome {
        var file: DriveFile
        var bytes: Int
        var created = false
        var uploaded = false
        var document: Document
        var deletedDuplicates: [String] = []
        var sideFiles: [DriveFile] = []
        /// What is on Drive now, as far as this run knows: the profile's next kept copy.
        var kept: KeptCopy
        /// The kept copy stood in for the download.
        var fromKeptCopy = false
    }

    /// The bytes to upload for `document` (`sent`, sealed) and their plaintext, refused
    /// (exit 3, nothing sent) over `maxBytes`.
    private func uploadBytes(_ document: Document) throws -> (plain: [UInt8], sent: [UInt8]) {
        let plain = codec.encode(document)
        let bytes = try codec.seal(plain)
        guard bytes.count <= maxBytes else {
            throw CLIError(
                "the backup would be \(bytes.count) bytes, over the \(maxBytes)-byte limit devices read it with; "
                    + "nothing was uploaded; raise --max-bytes (on every device) if the data is genuine",
                exitCode: .invalidFile)
        }
        return (plain, bytes)
    }

    /// Said once, after the upload that encrypted a plain backup.
    private var encryptedNow: String {
        "the backup on Drive was not encrypted; this profile encrypts, so it was uploaded encrypted"
    }

    private func describe(_ file: DriveFile) -> String { "Drive file \(file.name) (id \(file.id))" }

    /// Backs `local` up: creates the file, or merges into it and uploads only on a change.
    /// `kept` is the profile's copy of the remote file from its last run, if any.
    func backup(_ local: Document, kept: KeptCopy? = nil) throws -> Outcome {
        let files = try drive.list(named: name)
        guard let target = files.first else {
            let document = codec.stamp(local)
            let bytes = try uploadBytes(document)
            let file = try drive.create(
                name: name, id: try drive.generateID(), bytes: bytes.sent, progress: progress)
            return Outcome(
                file: file, bytes: bytes.sent.count, created: true, uploaded: true,
                document: document,
                kept: KeptCopy(file: file, etag: nil, bytes: bytes.plain, onDrive: bytes.sent))
        }
        if files.count == 1, let kept, kept.matches(target),
            let outcome = try backup(local, into: kept, listed: target)
        {
            return outcome
        }
        var duplicates: [DriveFile] = []
        var sideFiles: [DriveFile] = []
        var extra: [(document: Document, snapshot: DriveSnapshot)] = []
        for duplicate in files.dropFirst() {
            let snapshot: DriveSnapshot
            do {
                snapshot = try drive.read(id: duplicate.id)
            } catch {
                // Another device merged and deleted it since our list: its items are in the target.
                if case .rejected(_, let google) = error, google.status == 404 { continue }
                throw error
            }
            duplicates.append(duplicate)
            if let decoded = try decodeOrKeepAside(snapshot, sideFiles: &sideFiles) {
                extra.append((decoded.document, snapshot))
            }
        }
        var keptAside: Set<String> = []
        for round in 0..<maxRounds {
            let snapshot = try drive.read(id: target.id)
            let base: (document: Document, plain: [UInt8])?
            if keptAside.contains(snapshot.etag) {
                base = nil
            } else {
                base = try decodeOrKeepAside(snapshot, sideFiles: &sideFiles)
                if base == nil { keptAside.insert(snapshot.etag) }
            }
            var copies = base?.document
            var holdingBack: [DriveSnapshot] = []
            for copy in extra {
                guard let into = copies else {
                    copies = copy.document
                    continue
                }
                let merged = codec.merge(copy: copy.document, into: into)
                copies = merged.document
                if merged.heldBack { holdingBack.append(copy.snapshot) }
            }
            let merged = copies.map { codec.merge($0, local) } ?? local
            // Drive's copy is plain when opening it changed nothing.
            let rewrite = codec.seals && base.map { $0.plain == snapshot.bytes } == true
            if let base, duplicates.isEmpty, !rewrite,
                codec.encode(merged) == codec.encode(base.document)
            {
                return Outcome(
                    file: snapshot.file, bytes: snapshot.bytes.count, document: base.document,
                    sideFiles: sideFiles,
                    kept: KeptCopy(
                        file: snapshot.file, etag: snapshot.etag, bytes: base.plain,
                        onDrive: snapshot.bytes))
            }
            let document = codec.stamp(merged)
            let bytes = try uploadBytes(document)
            switch try drive.update(
                id: target.id, bytes: bytes.sent, ifMatch: snapshot.etag, progress: progress)
            {
            case .updated(let file):
                if rewrite { warn(encryptedNow) }
                for copy in holdingBack {
                    let side = try keepAside(copy, as: "held-back", sideFiles: &sideFiles)
                    warn(
                        "kept that copy (id \(copy.file.id)) as '\(side)' in the app folder; to take "
                            + "its held-back items in, run 'CLOUDBACKUP_FILE_NAME=\(DriveSession.shellQuoted(side)) "
                            + "\(restoreCommand) --allow-stale', then back up again"
                    )
                }
                for duplicate in duplicates { try drive.delete(id: duplicate.id) }
                return Outcome(
                    file: file, bytes: bytes.sent.count, uploaded: true, document: document,
                    deletedDuplicates: duplicates.map(\.id), sideFiles: sideFiles,
                    kept: KeptCopy(
                        file: file, etag: file.etag, bytes: bytes.plain, onDrive: bytes.sent))
            case .changedSinceRead:
                drive.clock.sleep(
                    drive.retry.delay(
                        beforeRetry: round, jitter: drive.clock.random(), retryAfter: nil))
            }
        }
        throw CLIError(
            "the backup on Drive kept changing while we merged (\(maxRounds) attempts); another device is busy, try again later",
            exitCode: .network)
    }

    /// The backup with `kept` standing in for the download of `listed` (which the caller
    /// matched against it); nil when the full path must run instead: the copy does not
    /// decode, the etag is stale, or the file changed since the listing.
    private func backup(_ local: Document, into kept: KeptCopy, listed: DriveFile) throws
        -> Outcome?
    {
        guard let base = try? codec.decode(kept.bytes) else { return nil }
        let merged = codec.merge(base, local)
        // An encrypted backup's copy, for a profile that no longer encrypts: the download
        // path refuses to replace that backup with a plain one (exit 3), nothing written.
        guard kept.holdsDriveBytes || codec.seals else { return nil }
        // The copy holds Drive's very bytes only when Drive's copy is plain.
        let rewrite = kept.holdsDriveBytes && codec.seals
        if !rewrite, codec.encode(merged) == codec.encode(base) {
            // The size on Drive: the copy holds the plaintext of an encrypted backup.
            return Outcome(
                file: listed, bytes: listed.size ?? kept.bytes.count, document: base, kept: kept,
                fromKeptCopy: true)
        }
        let etag: String
        if let known = kept.etag(for: listed) {
            etag = known
        } else {
            let tagged = try drive.tagged(id: listed.id)
            guard kept.matches(tagged.file) else { return nil }
            etag = tagged.etag
        }
        let document = codec.stamp(merged)
        let bytes = try uploadBytes(document)
        switch try drive.update(id: listed.id, bytes: bytes.sent, ifMatch: etag, progress: progress)
        {
        case .updated(let file):
            if rewrite { warn(encryptedNow) }
            return Outcome(
                file: file, bytes: bytes.sent.count, uploaded: true, document: document,
                kept: KeptCopy(
                    file: file, etag: file.etag, bytes: bytes.plain, onDrive: bytes.sent),
                fromKeptCopy: true)
        case .changedSinceRead:
            return nil
        }
    }

    /// Every remote file of our name merged into one (oldest first), for restore and status;
    /// nil when there is none. An invalid remote file is an error naming it.
    func fetch() throws -> (document: Document, files: [DriveFile])? {
        let files = try drive.list(named: name)
        var merged: Document?
        for file in files {
            let snapshot = try drive.read(id: file.id)
            let plain = try codec.open(snapshot.bytes, describe(file))
            let document: Document
            do {
                document = try codec.decode(plain)
            } catch let error as BackupFileError {
                throw BackupFile.describe(error, file: describe(file))
            }
            merged = merged.map { codec.merge(copy: document, into: $0).document } ?? document
        }
        return merged.map { ($0, files) }
    }

    /// The decoded document and its plaintext (Drive's bytes opened), or nil after copying the bytes to a dated side file (and saying
    /// so). A file from a newer schema is refused instead (exit 7): replacing it would
    /// downgrade every device's backup. So is one over the size limit (exit 3, saying to
    /// raise `--max-bytes`): it may well be a genuine backup, whose items would otherwise be
    /// left behind in the side file.
    private func decodeOrKeepAside(_ snapshot: DriveSnapshot, sideFiles: inout [DriveFile]) throws
        -> (document: Document, plain: [UInt8])?
    {
        let plain = try codec.open(snapshot.bytes, describe(snapshot.file))
        do {
            return (try codec.decode(plain), plain)
        } catch {
            if let error = error as? BackupFileError, error.isRefusedUnread {
                throw BackupFile.describe(error, file: describe(snapshot.file))
            }
            let sideName = try keepAside(snapshot, as: "invalid", sideFiles: &sideFiles)
            warn(
                "the backup on Drive (id \(snapshot.file.id)) is not a valid backup (\(Self.firstLine(error))); "
                    + "kept its bytes as '\(sideName)' in the app folder and replaced it")
            return nil
        }
    }

    /// Copies `snapshot`'s bytes to a new app-folder file named after ours, `label`, the time
    /// and the copy's id (never our name, so no later run takes it for a backup), and
    /// returns that name.
    private func keepAside(
        _ snapshot: DriveSnapshot, as label: String, sideFiles: inout [DriveFile]
    )
        throws -> String
    {
        let stamp = Self.sideFileStamp(drive.clock.wall())
        let sideName = "\(name).\(label)-\(stamp)-\(snapshot.file.id)"
        sideFiles.append(
            try drive.create(name: sideName, id: try drive.generateID(), bytes: snapshot.bytes))
        return sideName
    }

    static func sideFileStamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: date)
    }

    private static func firstLine(_ error: any Error) -> String {
        if let error = error as? BackupFileError {
            return BackupFile.describe(error, file: "remote").lines.first ?? "\(error)"
        }
        return "\(error)"
    }
}

extension BackupFileError {
    /// A file the reader did not judge (a newer schema, or over the size limit): not to be set
    /// aside as invalid.
    fileprivate var isRefusedUnread: Bool {
        switch self {
        case .newerSchema, .tooLarge: true
        case .syntax, .notABackup, .invalid: false
        }
    }
}
