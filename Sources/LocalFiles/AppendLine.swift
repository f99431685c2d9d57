#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension LocalFile {
    /// Appends `line` and a newline to `path` (created 0600 if missing) with one `write` of
    /// the whole line on an `O_APPEND` descriptor, so concurrent writers of an audit log never
    /// interleave inside a line. A write that fails or comes up short (a full disk) is cut
    /// back off, so the log never keeps a torn line that the next one would be glued onto,
    /// and a log this call created is removed rather than left empty.
    public static func appendLine(_ line: [UInt8], to path: String) throws(LocalFileError) {
        // O_EXCL first, so we know whether the file is ours to remove on failure.
        var created = true
        var fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0, errno == EEXIST {
            created = false
            fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        }
        guard fd >= 0 else {
            throw LocalFileError(path: path, operation: .openForAppending, errno: errno)
        }
        defer { close(fd) }
        let whole = line + [UInt8(ascii: "\n")]
        let code: Int32? = whole.withUnsafeBytes { all in
            func put(from start: Int) -> Int {
                var count: Int
                repeat {
                    count = write(fd, all.baseAddress! + start, all.count - start)
                } while count < 0 && errno == EINTR
                return count
            }
            let written = put(from: 0)
            guard written >= 0 else { return errno }
            guard written < all.count else { return nil }
            // A short write sets no errno: the rest, tried once, says why (a full disk, the
            // file-size limit), and is cut off with the start of the line either way.
            let rest = put(from: written)
            let code = rest < 0 ? errno : EIO
            // With O_APPEND the offset is the end of what we wrote, wherever other writers
            // put theirs before it: cut from where our line starts.
            let end = lseek(fd, 0, SEEK_CUR)
            let ours = off_t(written + max(rest, 0))
            if end >= ours { _ = ftruncate(fd, end - ours) }
            return code
        }
        guard let code else { return }
        var info = stat()
        if created, fstat(fd, &info) == 0, info.st_size == 0 { unlink(path) }
        throw LocalFileError(path: path, operation: .append, errno: code)
    }
}
