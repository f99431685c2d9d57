#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension LocalFile {
    /// Appends `line` and a newline to `path` (created 0600 if missing) with one `write` on
    /// an `O_APPEND` descriptor, so concurrent writers of an audit log never interleave
    /// inside a line.
    public static func appendLine(_ line: [UInt8], to path: String) throws(LocalFileError) {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw LocalFileError(path: path, operation: "open for appending", errno: errno)
        }
        defer { close(fd) }
        if let code = writeAll(line + [UInt8(ascii: "\n")], to: fd) {
            throw LocalFileError(path: path, operation: "append", errno: code)
        }
    }
}
