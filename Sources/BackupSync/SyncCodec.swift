import BackupKit
import GoogleDrive
import Gzip

/// What the sync needs to know about documents, as closures, so the Drive protocol is tested
/// with any toy document and the CLI keeps its own wording of what a merge held back.
///
/// `decode` throws for bytes that are not a valid backup; `isRefusal` tells the errors that
/// judge nothing (a newer schema, a file over the size limit) from those of a broken file:
/// a broken remote file is kept aside and replaced, a refused one never is (replacing a
/// newer schema's file would downgrade every device). `encode` gives canonical bytes;
/// `merge(base, local, now)` folds the local document into the backup; `stamp` sets the
/// export time just before an upload.
public struct SyncCodec<Document> {
    public var decode: ([UInt8]) throws -> Document
    public var isRefusal: (any Error) -> Bool
    public var encode: (Document) -> [UInt8]
    public var merge: (Document, Document, Timestamp) -> Merged<Document>
    public var stamp: (Document, Timestamp) -> Document
    /// Another copy of the backup (a duplicate file, or another device's revision) into
    /// `base`. `merge` when nil. Kept apart so what the local side alone does (its warnings,
    /// its settings, its record) is not done, or blamed on it, for a copy.
    public var mergeCopy: ((Document, Document, Timestamp) -> Merged<Document>)?
    /// The envelope around the bytes on Drive (the profile's encryption; none by default):
    /// `seal` on `encode`'s bytes before they go up, `open` on sealed bytes that came down,
    /// `isSealed` telling them apart without a key. Apart from `decode`/`encode` so that "did
    /// the merge change anything?" stays on plaintext, and so that bytes that do not open stop
    /// the run (`SyncError.unopened`) instead of being kept aside and replaced as invalid:
    /// nobody may replace a backup they cannot read.
    public var isSealed: ([UInt8]) -> Bool = { _ in false }
    public var open: ([UInt8]) throws -> [UInt8] = { $0 }
    public var seal: ([UInt8]) throws -> [UInt8] = { $0 }
    /// Opened bytes as `decode` reads them, gzip inflated (under the codec's own size limit),
    /// so a run compares an encoding with a gzip backup's content instead of encoding its
    /// document again; as they are by default (a codec that never reads gzip).
    public var inflate: ([UInt8]) throws -> [UInt8] = { $0 }
    /// What uploads are, and so what a run may upload over; plain unless the profile says.
    public var uploads = Uploads.plain
    /// The form uploads take before any `seal`: gzip of `encode`'s bytes (true), those bytes
    /// (false), or, when the profile does not say (nil), the form of the backup on Drive, so
    /// a device that does not say never undoes another's choice.
    public var compress: Bool?

    /// `encode(stamp(document, now))` made from `encode(document)`'s bytes, which the run holds
    /// already from asking whether the merge changed anything: a document walked once, not
    /// twice. nil (or a nil answer): `encode` the stamped document.
    public var restamp: (([UInt8], Document, Timestamp) -> [UInt8]?)?

    /// Whether `seal` seals.
    public var seals: Bool { uploads == .sealed }

    /// Whether opened bytes on Drive (`isGzip`: whether they are gzip) are in another form
    /// than this profile's (it turned compression on or off): the run uploads though the
    /// merge changed nothing, as for a change of envelope. Never when the profile does not say.
    public func changesForm(isGzip: Bool) -> Bool {
        compress.map { isGzip != $0 } ?? false
    }

    /// The opened bytes of an upload of `document` over a head whose opened bytes are gzip or
    /// not (`headIsGzip`; nil: no head known): `encode`'s (`encoded`, when the caller has
    /// them), gzipped when `compress` says so, or when it does not say and the head is. Gzip
    /// is deterministic, so "did the merge change anything?" may still compare `encode`'s
    /// bytes.
    public func upload(_ document: Document, encoded: [UInt8]? = nil, headIsGzip: Bool?)
        -> [UInt8]
    {
        let plain = encoded ?? encode(document)
        return compresses(headIsGzip: headIsGzip) ? Gzip.compress(plain) : plain
    }

    /// Whether an upload over a head whose opened bytes are gzip or not (nil: no head known)
    /// is gzipped.
    public func compresses(headIsGzip: Bool?) -> Bool {
        compress ?? headIsGzip ?? false
    }

    /// A codec whose merges say nothing but their document (a toy document's, in tests).
    public init(
        decode: @escaping ([UInt8]) throws -> Document,
        isRefusal: @escaping (any Error) -> Bool = { _ in false },
        encode: @escaping (Document) -> [UInt8],
        merge: @escaping (Document, Document, Timestamp) -> Document,
        stamp: @escaping (Document, Timestamp) -> Document
    ) {
        self.init(
            decode: decode, isRefusal: isRefusal, encode: encode,
            merging: { Merged(document: merge($0, $1, $2)) }, stamp: stamp)
    }

    public init(
        decode: @escaping ([UInt8]) throws -> Document,
        isRefusal: @escaping (any Error) -> Bool = { _ in false },
        encode: @escaping (Document) -> [UInt8],
        merging merge: @escaping (Document, Document, Timestamp) -> Merged<Document>,
        stamp: @escaping (Document, Timestamp) -> Document,
        mergeCopy: ((Document, Document, Timestamp) -> Merged<Document>)? = nil
    ) {
        self.decode = decode
        self.isRefusal = isRefusal
        self.encode = encode
        self.merge = merge
        self.stamp = stamp
        self.mergeCopy = mergeCopy
    }

    func merge(copy: Document, into base: Document, now: Timestamp) -> Merged<Document> {
        (mergeCopy ?? merge)(base, copy, now)
    }

    /// Whether an upload over our file changes its envelope (plain to sealed or back), so
    /// the run uploads though the merge changed nothing.
    func changesEnvelope(ofSealed sealed: Bool) -> Bool {
        sealed ? uploads == .unsealed : seals
    }

    /// Drive's `bytes` of `file` (at `revision`, for an old revision's) as `decode` reads them.
    /// `replacing`: the run may upload over them, which a run that does not seal may not do
    /// when they are sealed.
    public func opened(
        _ bytes: [UInt8], of file: DriveFile, revision: String? = nil, replacing: Bool
    ) throws(SyncError) -> [UInt8] {
        guard isSealed(bytes) else { return bytes }
        if replacing, uploads == .plain { throw .unsealing(file, revision: revision) }
        do {
            return try open(bytes)
        } catch {
            throw .unopened(file, revision: revision, error)
        }
    }
}

/// One merge's document, and what it said, for the run to hand back in its outcome.
public struct Merged<Document> {
    public var document: Document
    /// What the caller warns of, each kind once per run (`MergeNotice.key`).
    public var notices: [MergeNotice] = []
    /// A merge of the local document: what `--verbose` and the decision log tell of it.
    public var record: MergeRecord?

    public init(document: Document, notices: [MergeNotice] = [], record: MergeRecord? = nil) {
        self.document = document
        self.notices = notices
        self.record = record
    }

    /// The stale guard held back items of the incoming side, which `document` then lacks: its
    /// notice says so.
    public var heldBack: Bool {
        notices.contains {
            if case .heldBack = $0 { return true }
            return false
        }
    }
}

/// What a run's merges and steps said, each merge notice once (every compare-and-swap round
/// merges again), and its last merge of the local document: the part of a run's outcome the
/// caller words as warnings and `--verbose` lines.
public struct RunNotices {
    public private(set) var merges: [MergeNotice] = []
    /// What the run told as it went (`.notify`), kept for the outcome too.
    public private(set) var steps: [SyncNotice] = []
    /// The last merge of the local document, as `--verbose` and the decision log tell it.
    public private(set) var localMerge: MergeRecord?
    private var said: Set<String> = []

    public init() {}

    /// Nothing to warn of: no merge notice, no step's notice.
    public var isEmpty: Bool { merges.isEmpty && steps.isEmpty }

    /// Keeps what `merged` said; returns it, for the caller to go on with its document.
    @discardableResult
    public mutating func add<Document>(_ merged: Merged<Document>) -> Merged<Document> {
        for notice in merged.notices where said.insert(notice.key).inserted {
            merges.append(notice)
        }
        if let record = merged.record { localMerge = record }
        return merged
    }

    mutating func add(_ notice: SyncNotice) {
        steps.append(notice)
    }
}
