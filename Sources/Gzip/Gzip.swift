import CDeflate

/// Reading and writing gzip (RFC 1952) with libdeflate: a backup may be stored compressed.
/// Reading is under a limit on what comes out, as a backup's size limit is the document's,
/// not the file's; writing is deterministic, so one document always gives the same bytes.
public enum Gzip {
    /// The level backups are written at: issue 40 allows 15 ms to compress the 20,000-day-log
    /// bench document (3.4 MB) on the project's machine, and only level 1 fits (`make bench`:
    /// 9.8 ms for 16.3 % of the size; level 3 29.4 ms for 15.4 %, level 6 78.5 ms for 14.1 %;
    /// zlib's compress2 at level 1 18.7 ms for 18.1 %).
    public static let defaultLevel: Int32 = 1

    /// `bytes` as one gzip member at `level` (0–12). libdeflate's header has no time (MTIME
    /// 0), no name and a fixed OS byte (255, unknown), so the same bytes always give the same
    /// file, and the same md5 on Drive: the no-change check keeps working on compressed
    /// backups.
    public static func compress(_ bytes: [UInt8], level: Int32 = defaultLevel) -> [UInt8] {
        guard let compressor = libdeflate_alloc_compressor(level) else {
            // NULL is malloc's failure or a level out of range, and the level is ours.
            fatalError("libdeflate_alloc_compressor(\(level)) failed")
        }
        defer { libdeflate_free_compressor(compressor) }
        let bound = libdeflate_gzip_compress_bound(compressor, bytes.count)
        return [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            count = bytes.withUnsafeBytes { input in
                libdeflate_gzip_compress(
                    compressor, input.baseAddress, input.count, buffer.baseAddress, buffer.count)
            }
            // The bound is room for any input, so 0 (out of room) cannot happen.
            precondition(count > 0, "libdeflate_gzip_compress: over its own bound")
        }
    }

    /// Whether `bytes` start with gzip's magic bytes (1f 8b). A JSON document never does: it
    /// starts with `{` after optional white space, and 0x1f is neither, so the content
    /// decides, whatever the file is called.
    public static func isGzip(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: [0x1F, 0x8B])
    }

    /// `bytes` inflated when they are gzip, else as they are.
    public static func plain(_ bytes: [UInt8], maxBytes: Int) throws(GzipError) -> [UInt8] {
        isGzip(bytes) ? try decompress(bytes, maxBytes: maxBytes) : bytes
    }

    /// The content of the one gzip member `bytes` hold, refused once it passes `maxBytes`:
    /// the output buffer is never larger than `maxBytes + 1`, so a small file that inflates
    /// to gigabytes (a gzip bomb) costs no more memory than a genuine document at the limit.
    public static func decompress(_ bytes: [UInt8], maxBytes: Int) throws(GzipError) -> [UInt8] {
        guard let decompressor = libdeflate_alloc_decompressor() else {
            // Its only failure is malloc's, which Swift's own allocations treat as fatal too.
            fatalError("libdeflate_alloc_decompressor: out of memory")
        }
        defer { libdeflate_free_decompressor(decompressor) }
        var capacity = firstCapacity(for: bytes, maxBytes: maxBytes)
        while true {
            var consumed = 0
            var status = LIBDEFLATE_SUCCESS
            let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                status = bytes.withUnsafeBytes { input in
                    libdeflate_gzip_decompress_ex(
                        decompressor, input.baseAddress, input.count, buffer.baseAddress,
                        buffer.count, &consumed, &count)
                }
                if status != LIBDEFLATE_SUCCESS { count = 0 }
            }
            switch status {
            case LIBDEFLATE_SUCCESS where output.count > maxBytes:
                throw .overLimit(limit: maxBytes)
            case LIBDEFLATE_SUCCESS where consumed < bytes.count:
                // One member only: a second is most often a second file glued on, and the
                // writer never makes one, so it is named rather than guessed at.
                throw isGzip(bytes[consumed...]) ? .secondMember : .trailingBytes
            case LIBDEFLATE_SUCCESS:
                return output
            case LIBDEFLATE_INSUFFICIENT_SPACE where capacity <= maxBytes:
                // ISIZE is only the size mod 2^32, so the hint may be short for a limit past
                // 4 GiB: try once more with all the room the limit allows.
                capacity = maxBytes + 1
            case LIBDEFLATE_INSUFFICIENT_SPACE:
                throw .overLimit(limit: maxBytes)
            default:
                throw .truncatedOrCorrupt
            }
        }
    }

    /// The output buffer's first size: the size the trailer claims (ISIZE, the last 4 bytes,
    /// little-endian, mod 2^32) so a genuine file is inflated in one pass, but never more
    /// than one byte over `maxBytes`, however much it claims.
    static func firstCapacity(for bytes: [UInt8], maxBytes: Int) -> Int {
        let claimed = bytes.suffix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
        return min(claimed, maxBytes + 1)
    }
}

/// Why gzip bytes gave no document; `description` is the line after the file's name.
public enum GzipError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The content passed the size limit while inflating (a gzip bomb, or a genuine file
    /// over the limit): judges nothing about the file, as `BackupFileError.tooLarge` does not.
    case overLimit(limit: Int)
    /// Not a gzip stream libdeflate can read to its end: cut short, damaged, or its CRC-32 or
    /// length does not match what came out.
    case truncatedOrCorrupt
    /// Bytes after the gzip stream that are not gzip.
    case trailingBytes
    /// A second gzip stream after the first (concatenated files).
    case secondMember

    public var description: String {
        switch self {
        case .overLimit(let limit):
            "decompressed size is over the \(limit)-byte limit; raise it with --max-bytes if the file is genuine"
        case .truncatedOrCorrupt:
            "gzip stream is truncated or corrupt (its data, length or CRC does not check out); use an intact copy of the file"
        case .trailingBytes:
            "trailing bytes after the gzip stream; the file was damaged or appended to: use an intact copy"
        case .secondMember:
            "a second gzip stream follows the first (files concatenated?); a backup is one document in one stream"
        }
    }
}
