#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the user types or pipes in, read as lines, only when `poll` says there is
/// something (so the loopback listener is watched meanwhile).
public final class LineReader {
    public let fd: Int32
    private var buffer: [UInt8] = []
    /// End of file (or an error) was read: nothing more will come.
    public private(set) var ended = false

    /// Far longer than any redirect address; a longer line is cut there and then refused.
    static let maxLine = 16 * 1024

    public init(fd: Int32) {
        self.fd = fd
    }

    /// Reads once; returns the lines completed by it, and at end of file the unfinished one.
    public func readLines() -> [String] {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if got < 0, errno == EINTR || errno == EAGAIN { return [] }
        if got <= 0 {
            ended = true
        } else {
            buffer += chunk[..<got]
        }
        var lines: [String] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeSubrange(...newline)
        }
        if ended && !buffer.isEmpty || buffer.count > Self.maxLine {
            lines.append(String(decoding: buffer, as: UTF8.self))
            buffer = []
        }
        return lines
    }
}
