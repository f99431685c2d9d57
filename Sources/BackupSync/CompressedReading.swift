import BackupKit
import Gzip

extension BackupReader {
    /// `read`, for bytes that are a document or gzip of one (FORMAT.md §3): the magic bytes
    /// decide, not a file's name, and `options.maxBytes` limits the inflated document too,
    /// checked while inflating. Every way a document comes in (a FILE, a STATE, a download, a
    /// revision, a decrypted payload) is read here. Throws `GzipError` for gzip that holds no
    /// readable stream, else `BackupFileError`.
    public static func read(plainOrGzip bytes: [UInt8], options: ReadOptions = ReadOptions())
        throws -> ReadResult
    {
        try read(Gzip.plain(bytes, maxBytes: options.maxBytes), options: options)
    }

    /// `read(plainOrGzip:options:)` for a caller that has no more use for the bytes (pass
    /// them with `consume`): see `read(consuming:options:)`. Gzip's inflated bytes are
    /// always this read's own, and the compressed ones go once inflated.
    public static func read(
        consumingPlainOrGzip bytes: consuming [UInt8], options: ReadOptions = ReadOptions()
    ) throws -> ReadResult {
        if Gzip.isGzip(bytes) {
            let plain = try Gzip.decompress(consume bytes, maxBytes: options.maxBytes)
            return try read(consuming: plain, options: options)
        }
        return try read(consuming: consume bytes, options: options)
    }
}
