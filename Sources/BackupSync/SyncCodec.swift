import BackupKit

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
    public var merge: (Document, Document, Timestamp) -> Document
    public var stamp: (Document, Timestamp) -> Document
    /// Another copy of the backup (a duplicate file, or another device's revision) into
    /// `base`, and whether the merge held back items of it (the stale guard), which the
    /// result then lacks. `merge` when nil. Kept apart so what the local side alone does (its
    /// warnings, its settings) is not done, or blamed on it, for a copy.
    public var mergeCopy: ((Document, Document, Timestamp) -> (document: Document, heldBack: Bool))?

    public init(
        decode: @escaping ([UInt8]) throws -> Document,
        isRefusal: @escaping (any Error) -> Bool = { _ in false },
        encode: @escaping (Document) -> [UInt8],
        merge: @escaping (Document, Document, Timestamp) -> Document,
        stamp: @escaping (Document, Timestamp) -> Document,
        mergeCopy: ((Document, Document, Timestamp) -> (document: Document, heldBack: Bool))? = nil
    ) {
        self.decode = decode
        self.isRefusal = isRefusal
        self.encode = encode
        self.merge = merge
        self.stamp = stamp
        self.mergeCopy = mergeCopy
    }

    func merge(copy: Document, into base: Document, now: Timestamp)
        -> (document: Document, heldBack: Bool)
    {
        mergeCopy?(base, copy, now) ?? (merge(base, copy, now), false)
    }
}
