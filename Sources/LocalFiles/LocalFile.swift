#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What was being done to a local file, worded to follow "cannot": reads are told from
/// writes by it, and a folder's own failures from those of a file in it.
public enum LocalFileOperation: String, Sendable, Equatable {
    case open, stat, read
    case write, chmod, fsync, delete, lock, append
    /// Replacing a path that is not a regular file.
    case writeIt = "write it"
    case rename = "rename into place"
    case followLinks = "follow its symbolic links"
    case openLockFile = "open the lock file"
    case openForAppending = "open for appending"
    /// The error's path is the folder, which needs room or rights.
    case createInFolder = "create a file in this folder"
    /// The error's path is a folder that could not be made; the nearest existing one above
    /// it is where rights are missing.
    case createFolder = "create the folder"
}

/// What went wrong with a local file, with the OS's own words (`strerror`).
public struct LocalFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var operation: LocalFileOperation
    public var errno: Int32
    /// Our own words where the OS's would mislead (a FIFO given as the output file).
    public var reason: String?

    public init(
        path: String, operation: LocalFileOperation, errno: Int32, reason: String? = nil
    ) {
        self.path = path
        self.operation = operation
        self.errno = errno
        self.reason = reason
    }

    public var description: String {
        "\(path): cannot \(operation.rawValue): \(reason ?? String(cString: strerror(errno)))"
    }

    public var isMissing: Bool { errno == ENOENT }

    /// Reading failed (the file is missing, unreadable or bad); anything else is a write.
    public var isRead: Bool {
        switch operation {
        case .open, .stat, .read: true
        default: false
        }
    }

    /// What a person can do about a failed write, when errno says (a full disk, a folder they
    /// cannot write to); nil when the OS's own words are all there is to say.
    public var writeFix: String? {
        guard !isRead else { return nil }
        // The folder that needs room or rights: the path itself when filling it failed; when
        // making it failed, the nearest folder that exists (not one the user cannot see).
        let folder =
            switch operation {
            case .createInFolder: path
            case .createFolder: LocalFile.nearestExisting(above: path)
            default: LocalFile.directory(of: path)
            }
        switch errno {
        case ENOSPC, EDQUOT: return "free up space"
        case EACCES, EPERM, EROFS: return "make \(folder) writable"
        default: return nil
        }
    }
}

public enum LocalFile {
    /// The whole file, refusing (EFBIG) files over `maxBytes` before reading them. Only a
    /// regular file is read: a folder, a FIFO, a socket or a device is refused before any
    /// read, and opened without blocking (O_NONBLOCK), so a FIFO nobody writes to cannot hang
    /// a cron job in `open`.
    public static func read(_ path: String, maxBytes: Int = .max) throws(LocalFileError) -> [UInt8]
    {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            // A socket cannot be opened at all (ENXIO): say what it is, not the OS's riddle.
            var info = stat()
            if code == ENXIO, stat(path, &info) == 0, let kind = irregularKind(info.st_mode) {
                throw notARegularFile(path, kind)
            }
            throw LocalFileError(path: path, operation: .open, errno: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw LocalFileError(path: path, operation: .stat, errno: errno)
        }
        guard info.st_mode & S_IFMT != S_IFDIR else {
            throw LocalFileError(path: path, operation: .read, errno: EISDIR)
        }
        if let kind = irregularKind(info.st_mode) { throw notARegularFile(path, kind) }
        guard Int(info.st_size) <= maxBytes else {
            throw LocalFileError(path: path, operation: .read, errno: EFBIG)
        }
        // The size is known: read it into a buffer of exactly that size, left uninitialised
        // (read() fills it). Growing that buffer to look for EOF would copy it whole and
        // double its memory, so EOF is looked for with a small chunk; a file that grew while
        // we read goes on in such chunks.
        let size = Int(info.st_size)
        var failure: Int32?
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            guard let start = buffer.baseAddress else { return }
            while count < size {
                let got = Glibc.read(fd, start + count, size - count)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { return }
                count += got
            }
        }
        if let failure { throw LocalFileError(path: path, operation: .read, errno: failure) }
        try readToEnd(fd, appendingTo: &bytes, maxBytes: maxBytes, naming: path)
        return bytes
    }

    /// All of standard input (a pipe, or a file it was redirected from), refusing (EFBIG)
    /// more than `maxBytes` having read at most one byte more: a pipe has no size to check
    /// first, and a producer that never stops must not fill the memory. Errors name `name`.
    public static func readStandardInput(maxBytes: Int, naming name: String)
        throws(LocalFileError) -> [UInt8]
    {
        var bytes: [UInt8] = []
        try readToEnd(0, appendingTo: &bytes, maxBytes: maxBytes, naming: name)
        return bytes
    }

    /// Reads `fd` to its end onto `bytes` in chunks, never asking for more than one byte past
    /// `maxBytes` in all, and refuses (EFBIG) once past it.
    private static func readToEnd(
        _ fd: Int32, appendingTo bytes: inout [UInt8], maxBytes: Int, naming path: String
    ) throws(LocalFileError) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            // `maxBytes` may be Int.max: the one byte more is added only below the chunk.
            let room = maxBytes - bytes.count
            let wanted = room < chunk.count ? room + 1 : chunk.count
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if got < 0 {
                if errno == EINTR { continue }
                throw LocalFileError(path: path, operation: .read, errno: errno)
            }
            if got == 0 { return }
            bytes.append(contentsOf: chunk[..<got])
            guard bytes.count <= maxBytes else {
                throw LocalFileError(path: path, operation: .read, errno: EFBIG)
            }
        }
    }

    /// "a FIFO", "a socket" or "a device" for a file that is neither regular nor a folder.
    static func irregularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG, S_IFDIR: nil
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        default: "a device"
        }
    }

    private static func notARegularFile(_ path: String, _ kind: String) -> LocalFileError {
        LocalFileError(
            path: path, operation: .read, errno: EINVAL,
            reason: "it is \(kind), not a regular file; give the path of a file "
                + "(save a pipe's output to a file first)")
    }

    /// Replaces `path` with `bytes` so that a crash at any moment leaves either the old file
    /// or the new one, never a partial one (see `writeAtomically(to:mode:_:)`).
    @discardableResult
    public static func writeAtomically(
        _ bytes: [UInt8], to path: String, mode: mode_t? = nil
    ) throws(LocalFileError) -> UnsyncedFolder? {
        try writeAtomically(to: path, mode: mode) { write throws(LocalFileError) in
            try bytes.withUnsafeBufferPointer { (all) throws(LocalFileError) in
                try write(UnsafeRawBufferPointer(all))
            }
        }
    }

    /// Replaces `path` with the chunks `produce` hands to its `write` function, in order, so
    /// that a crash at any moment leaves either the old file or the new one, never a partial
    /// one: write a temporary file in the same folder, fsync it, rename it over the target,
    /// fsync the folder. If a chunk cannot be written or `produce` throws, the temporary file
    /// is removed, the target is untouched and the error comes out here, naming the target
    /// (the temporary file's name means nothing to a user, and it is gone). A folder that
    /// cannot be synced after the rename is returned, not thrown: the new file is in place
    /// and readable, only its survival of a power cut is in doubt, which a command that
    /// writes the user's document says in a warning.
    ///
    /// The new file's permissions are set from its creation, so its content is never briefly
    /// readable by more people than it will be: `mode` when given (a token, a kept copy);
    /// otherwise those of the file it replaces, as an editor saving it would keep them, and
    /// for a new file 0666 less the umask, as any program creating one gets. A `path` that
    /// is a symbolic link stays one: the file it points to is the one replaced.
    /// A FIFO, device or socket at `path` is refused, not replaced by a file.
    ///
    /// A run killed mid-write (SIGKILL, or Ctrl-C) leaves its temporary file behind; the
    /// temporary's name carries the writer's pid, so the next write to the same target
    /// removes those whose writer is gone.
    ///
    ///     try LocalFile.writeAtomically(to: path) { write throws(LocalFileError) in
    ///         try BackupWriter.write(document, to: write)
    ///     }
    @discardableResult
    public static func writeAtomically(
        to path: String, mode: mode_t? = nil,
        _ produce: (_ write: (UnsafeRawBufferPointer) throws(LocalFileError) -> Void)
            throws(LocalFileError) -> Void
    ) throws(LocalFileError) -> UnsyncedFolder? {
        try writeAtomically(to: path, mode: mode, syncingFolder: { fsync($0) }, produce)
    }

    /// `syncFolder` is fsync(2) but for a test: no file system here refuses a folder's fsync.
    static func writeAtomically(
        to path: String, mode: mode_t?, syncingFolder syncFolder: (Int32) -> Int32,
        _ produce: (_ write: (UnsafeRawBufferPointer) throws(LocalFileError) -> Void)
            throws(LocalFileError) -> Void
    ) throws(LocalFileError) -> UnsyncedFolder? {
        let target = try resolvingLink(path)
        var replaced = stat()
        let replacing = stat(target, &replaced) == 0
        if replacing, replaced.st_mode & S_IFMT != S_IFREG {
            throw LocalFileError(
                path: path, operation: .writeIt, errno: EINVAL,
                reason: "it is \(irregularKind(replaced.st_mode) ?? "a folder"), not a regular "
                    + "file; give the path of a file")
        }
        let folder = directory(of: target)
        removeLeftovers(in: folder, stem: temporaryStem(for: target))
        // The exact bits the new file must have; nil for a new file, which follows the umask.
        let wanted = mode ?? (replacing ? replaced.st_mode & 0o7777 : nil)
        // Created with those bits (less the umask), so it is never open to more people than
        // the file it replaces, even before the exact fchmod below.
        let (fd, temporary) = try createTemporary(
            in: folder, for: target, mode: wanted ?? 0o666, naming: path)
        var committed = false
        defer {
            if !committed { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            if replacing {
                // Best effort, as editors do: only root may give a file away, and a group
                // the writer is not in is refused. Before the mode, which chown may clear.
                _ = fchown(fd, replaced.st_uid, replaced.st_gid)
            }
            if let wanted {
                guard fchmod(fd, wanted) == 0 else {
                    throw LocalFileError(path: path, operation: .chmod, errno: errno)
                }
            }
            try produce { chunk throws(LocalFileError) in
                if let code = writeAll(chunk, to: fd) {
                    throw LocalFileError(path: path, operation: .write, errno: code)
                }
            }
            guard fsync(fd) == 0 else {
                throw LocalFileError(path: path, operation: .fsync, errno: errno)
            }
        }
        guard rename(temporary, target) == 0 else {
            throw LocalFileError(path: path, operation: .rename, errno: errno)
        }
        committed = true
        // The rename is durable only once the folder entry is on disk.
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderFD >= 0 else { return UnsyncedFolder(path: path, errno: errno) }
        defer { close(folderFD) }
        guard syncFolder(folderFD) == 0 else { return UnsyncedFolder(path: path, errno: errno) }
        return nil
    }

    /// An atomic write whose rename is done but whose folder could not be synced.
    public struct UnsyncedFolder: Equatable, Sendable {
        public let path: String
        public let errno: Int32

        /// The warning a command prints for its user's document.
        public var warning: String {
            "\(path) was written, but its folder could not be synced (\(String(cString: strerror(errno)))); the new file may not survive a power cut"
        }
    }

    /// A new, empty temporary file beside `target`, opened for writing, created with `mode`
    /// less the umask (mkstemp would make it 0600 whatever the umask, and the umask cannot be
    /// read without changing it for every thread). Errors name `path`, the user's name for
    /// the target.
    private static func createTemporary(
        in folder: String, for target: String, mode: mode_t, naming path: String
    ) throws(LocalFileError) -> (fd: Int32, path: String) {
        let stem = folder + "/" + temporaryStem(for: target) + "\(getpid())-"
        while true {
            let temporary = stem + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if fd >= 0 { return (fd, temporary) }
            guard errno == EEXIST || errno == EINTR else {
                // The folder is what failed (missing, read-only); the temporary file is ours.
                throw LocalFileError(
                    path: folder, operation: .createInFolder, errno: errno)
            }
        }
    }

    /// `.<name>.tmp-`, then the writer's pid and a random part. The name is cut so that the
    /// whole stays within the 255 bytes a file name may have, as the target's may use them.
    private static func temporaryStem(for target: String) -> String {
        let name = baseName(of: target).utf8
        let kept =
            name.count > 200 ? String(decoding: name.prefix(200), as: UTF8.self) : String(name)
        return ".\(kept).tmp-"
    }

    /// Removes temporary files of earlier writes to the same target whose writer was killed
    /// mid-write. Only what this code names so (`stem`, a pid, `-`, a base-36 part), a
    /// regular file of this user: at once when its pid is gone; when that pid runs, only once
    /// the file is untouched for ten minutes, as a writer writing touches it every few MB and
    /// such a pid is one the system has given to another process since.
    /// Best effort: a folder that cannot be listed is left as it is.
    private static func removeLeftovers(in folder: String, stem: String) {
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        let settled = time(nil) - 600
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(stem) else { continue }
            let parts = name.dropFirst(stem.count).split(
                separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            var info = stat()
            let path = folder + "/" + name
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, !parts[1].isEmpty,
                parts[1].allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLowercase) }),
                lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                info.st_uid == geteuid(),
                kill(pid, 0) != 0 && errno == ESRCH || info.st_mtim.tv_sec < settled
            else { continue }
            unlink(path)
        }
    }

    /// The file a symbolic link at `path` finally points to, or `path` itself when it is not
    /// a link. A link to a file not yet there (a first restore into a synced folder) points
    /// where the file is to be made: the end of its chain, each link read against its own
    /// folder. A loop is an error (ELOOP), as for open(2).
    private static func resolvingLink(_ path: String) throws(LocalFileError) -> String {
        var current = path
        // Linux's own limit on links followed in one lookup.
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else {
                return current
            }
            if let resolved = realpath(current, nil) {
                defer { free(resolved) }
                return String(cString: resolved)
            }
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &target, target.count - 1)
            guard count > 0 else { return current }
            let text = String(
                decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = text.hasPrefix("/") ? text : directory(of: current) + "/" + text
        }
        throw LocalFileError(path: path, operation: .followLinks, errno: ELOOP)
    }

    /// Writes every byte to `fd`, going on after short writes and EINTR; returns the errno of
    /// a failure, nil on success.
    @discardableResult
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32? {
        guard let start = bytes.baseAddress else { return nil }
        var written = 0
        while written < bytes.count {
            let result = write(fd, start + written, bytes.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                return errno
            }
            written += result
        }
        return nil
    }

    /// `writeAll` for bytes in any collection, gathered into one array first (no copy when
    /// they are an array already).
    @discardableResult
    public static func writeAll(_ bytes: some Collection<UInt8>, to fd: Int32) -> Int32? {
        Array(bytes).withUnsafeBytes { writeAll($0, to: fd) }
    }

    /// Creates `path` and its parents with `mode` (no error if it exists).
    public static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(LocalFileError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, mode) != 0, errno != EEXIST {
                throw LocalFileError(path: current, operation: .createFolder, errno: errno)
            }
        }
    }

    /// The nearest folder above `path` that exists ("/" at worst; "." for a relative name
    /// whose folders are all missing).
    static func nearestExisting(above path: String) -> String {
        var folder = directory(of: path)
        while !exists(folder), folder != "/", folder != "." { folder = directory(of: folder) }
        return folder
    }

    /// Takes away the permission bits of `path` beyond `allowed` (a profile folder made 0755
    /// by hand holds a login); returns the bits it had when they were changed, else nil.
    public static func restrict(_ path: String, to allowed: mode_t) throws(LocalFileError)
        -> mode_t?
    {
        guard let bits = try mode(of: path), bits & ~allowed != 0 else { return nil }
        guard chmod(path, bits & allowed) == 0 else {
            throw LocalFileError(path: path, operation: .chmod, errno: errno)
        }
        return bits
    }

    /// The permission bits, or nil when the file does not exist.
    public static func mode(of path: String) throws(LocalFileError) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw LocalFileError(path: path, operation: .stat, errno: errno)
        }
        return info.st_mode & 0o7777
    }

    /// Whether two paths name one file: the same text, the same device and inode (a link,
    /// `./x` beside `x`), or, for a file not made yet, the same name in the same real folder.
    public static func isSameFile(_ first: String, _ second: String) -> Bool {
        if first == second { return true }
        guard let a = identity(of: first), let b = identity(of: second) else { return false }
        return a == b
    }

    /// "device:inode" of an existing file; else its folder's real path and its name.
    private static func identity(of path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0 { return "\(info.st_dev):\(info.st_ino)" }
        var folder = stat()
        guard stat(directory(of: path), &folder) == 0 else { return nil }
        return "\(folder.st_dev):\(folder.st_ino)/\(baseName(of: path))"
    }

    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Removes `path`; a missing file is not an error.
    public static func remove(_ path: String) throws(LocalFileError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw LocalFileError(path: path, operation: .delete, errno: errno)
        }
    }

    /// Renames `path` to `target`, replacing it; a missing `path` is not an error.
    public static func move(_ path: String, to target: String) throws(LocalFileError) {
        guard rename(path, target) == 0 || errno == ENOENT else {
            throw LocalFileError(path: target, operation: .rename, errno: errno)
        }
    }

    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func baseName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

/// An advisory lock on a file (`flock(LOCK_EX)`): one run at a time per profile. The lock
/// ends with the process, so a crashed run never leaves it held.
public final class FileLock {
    private let fd: Int32
    public let path: String

    /// nil when another process holds the lock.
    public convenience init?(path: String) throws(LocalFileError) {
        try self.init(path: path, waitingUpTo: 0)
    }

    /// nil when another process still holds the lock after `seconds`: polled, not blocked
    /// on, because `flock` has no timeout and a signal-driven one would reach the whole
    /// process. The pause grows from 50 ms to 1 s, so a short wait ends soon after the other
    /// run does, and a long one costs a wake-up a second.
    public init?(path: String, waitingUpTo seconds: Double) throws(LocalFileError) {
        let fd = try Self.openLockFile(path)
        let deadline = Self.monotonicSeconds() + seconds
        var pause = 0.05
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            let left = deadline - Self.monotonicSeconds()
            guard code == EWOULDBLOCK, left > 0 else {
                close(fd)
                if code == EWOULDBLOCK { return nil }
                throw LocalFileError(path: path, operation: .lock, errno: code)
            }
            usleep(useconds_t(min(pause, left) * 1_000_000))
            pause = min(pause * 2, 1)
        }
        self.fd = fd
        self.path = path
    }

    /// Waits until the lock is free (`flock(LOCK_EX)`): for short critical sections, such as
    /// a token refresh, where a second process should wait for the first, not give up.
    public init(waitingFor path: String) throws(LocalFileError) {
        let fd = try Self.openLockFile(path)
        while flock(fd, LOCK_EX) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            throw LocalFileError(path: path, operation: .lock, errno: code)
        }
        self.fd = fd
        self.path = path
    }

    private static func openLockFile(_ path: String) throws(LocalFileError) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw LocalFileError(path: path, operation: .openLockFile, errno: errno)
        }
        return fd
    }

    private static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
