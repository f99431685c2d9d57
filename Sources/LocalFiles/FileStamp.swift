#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a file's metadata says of its content without reading it: which file it is (device
/// and inode) and its size and change times to the nanosecond. The test restic, git and make
/// use to skip a file that did not change. The inode change time (ctime) is the one no tool
/// can set back, so a write that restores the old modification time still shows.
public struct FileStamp: Codable, Equatable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Nanoseconds since 1970.
    public var modified: Int64
    public var changed: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }

    /// The stamp of a regular file; nil for a missing file or anything else.
    public static func of(_ path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let nanoseconds = { (time: timespec) in
            Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        }
        return FileStamp(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: nanoseconds(info.st_mtim), changed: nanoseconds(info.st_ctim))
    }

    /// The system clock in nanoseconds since 1970, as file times are kept.
    public static func clock() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Whether a write made after `moment` must leave another stamp. Not when the file last
    /// changed within `margin` of it: the kernel stamps files from a clock that ticks every few
    /// milliseconds (whole seconds on some file systems), so a write in the same tick as the
    /// last one can leave every field as it was ("racily clean", as git calls it).
    public func isSettled(at moment: Int64, margin: Int64 = 2_000_000_000) -> Bool {
        max(modified, changed) + margin <= moment
    }
}
