import Foundation
import LocalFiles
import TestSupport
import Testing

@Suite struct LocalFileTests {
    let folder: URL

    init() throws {
        folder = try Paths.temporaryFolder()
    }

    @Test func atomicWriteReplacesContentAndAppliesMode() throws {
        let path = folder.appendingPathComponent("state.json").path
        try LocalFile.writeAtomically(Array("old\n".utf8), to: path)
        try LocalFile.writeAtomically(Array("new\n".utf8), to: path, mode: 0o600)
        #expect(try LocalFile.read(path) == Array("new\n".utf8))
        #expect(try LocalFile.mode(of: path) == 0o600)
        // No temporary file is left behind next to the target.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names == ["state.json"])
    }

    /// A backup holds notes and moods: replacing a file the user made private keeps it so.
    @Test(arguments: [0o600, 0o640, 0o644] as [mode_t])
    func replacingAFileKeepsItsPermissions(bits: mode_t) throws {
        let path = folder.appendingPathComponent("state.json").path
        try LocalFile.writeAtomically(Array("old\n".utf8), to: path, mode: bits)
        try LocalFile.writeAtomically(Array("new\n".utf8), to: path)
        #expect(try LocalFile.read(path) == Array("new\n".utf8))
        #expect(try LocalFile.mode(of: path) == bits)
    }

    /// A new file gets what any program creating one gets: 0666 less the umask (read from
    /// the kernel, as changing it in a test would change it for every test running).
    @Test func aNewFileFollowsTheUmask() throws {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let umask = try #require(
            mode_t(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8))
        let path = folder.appendingPathComponent("new.json").path
        try LocalFile.writeAtomically(Array("new\n".utf8), to: path)
        #expect(try LocalFile.mode(of: path) == 0o666 & ~umask)
    }

    /// Writing through a symbolic link updates the file it points to and leaves the link.
    @Test func aSymbolicLinkStaysALinkToTheUpdatedFile() throws {
        let target = folder.appendingPathComponent("real.json").path
        let link = folder.appendingPathComponent("state.json").path
        try LocalFile.writeAtomically(Array("old\n".utf8), to: target, mode: 0o600)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.json")
        try LocalFile.writeAtomically(Array("new\n".utf8), to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real.json")
        #expect(try LocalFile.read(target) == Array("new\n".utf8))
        #expect(try LocalFile.mode(of: target) == 0o600)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == ["real.json", "state.json"])
    }

    /// A link to a file not made yet (a first restore into a synced folder) is written
    /// through, so the file lands where the link points.
    @Test func aLinkToAMissingFileIsWrittenThrough() throws {
        let synced = folder.appendingPathComponent("synced")
        try FileManager.default.createDirectory(at: synced, withIntermediateDirectories: false)
        let link = folder.appendingPathComponent("state.json").path
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: "synced/habits.json")
        try LocalFile.writeAtomically(Array("new\n".utf8), to: link)
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: link) == "synced/habits.json")
        #expect(
            try LocalFile.read(synced.appendingPathComponent("habits.json").path)
                == Array("new\n".utf8))
    }

    /// The error names the folder that failed, not a temporary file the user never sees.
    @Test func failedWriteLeavesTheOldFileAndNoTemporary() throws {
        let missing = folder.appendingPathComponent("missing-folder").path
        let path = missing + "/state.json"
        let error = #expect(throws: LocalFileError.self) {
            try LocalFile.writeAtomically([1, 2, 3], to: path)
        }
        #expect(error?.path == missing)
        #expect(error?.isMissing == true)
        #expect(!LocalFile.exists(path))
    }

    /// A link chain ending nowhere yet is followed to its end; a loop is refused and both
    /// links stay links.
    @Test func linkChainsAreFollowedToTheEndAndLoopsRefused() throws {
        let fm = FileManager.default
        let first = folder.appendingPathComponent("a").path
        try fm.createSymbolicLink(atPath: first, withDestinationPath: "b")
        try fm.createSymbolicLink(
            atPath: folder.appendingPathComponent("b").path, withDestinationPath: "c")
        try LocalFile.writeAtomically(Array("new\n".utf8), to: first)
        #expect(try LocalFile.read(folder.appendingPathComponent("c").path) == Array("new\n".utf8))
        #expect(
            try fm.destinationOfSymbolicLink(atPath: folder.appendingPathComponent("b").path) == "c"
        )

        let loop = folder.appendingPathComponent("x").path
        try fm.createSymbolicLink(atPath: loop, withDestinationPath: "y")
        try fm.createSymbolicLink(
            atPath: folder.appendingPathComponent("y").path, withDestinationPath: "x")
        let error = #expect(throws: LocalFileError.self) {
            try LocalFile.writeAtomically([1], to: loop)
        }
        #expect(error?.errno == ELOOP)
        #expect(try fm.destinationOfSymbolicLink(atPath: loop) == "y")
        #expect(
            try fm.destinationOfSymbolicLink(atPath: folder.appendingPathComponent("y").path) == "x"
        )
    }

    @Test func isSameFileSeesThroughLinksAndDotSlash() throws {
        let file = folder.appendingPathComponent("x.json").path
        let other = folder.appendingPathComponent("z.json").path
        try LocalFile.writeAtomically([1], to: file)
        try LocalFile.writeAtomically([1], to: other)
        let link = folder.appendingPathComponent("y.json").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "x.json")
        #expect(LocalFile.isSameFile(link, file))
        #expect(LocalFile.isSameFile(folder.path + "/./x.json", file))
        #expect(!LocalFile.isSameFile(file, other))
        #expect(!LocalFile.isSameFile(file, folder.appendingPathComponent("missing").path))
        // A file not made yet (merge's OUT) is named the same way two ways too.
        let new = folder.appendingPathComponent("new.json").path
        #expect(LocalFile.isSameFile(new, folder.path + "/./new.json"))
        #expect(!LocalFile.isSameFile(new, folder.appendingPathComponent("other.json").path))
    }

    /// `-o` naming a FIFO (or a device) must not turn it into a regular file.
    @Test func aFIFOIsRefusedNotReplaced() throws {
        let path = folder.appendingPathComponent("fifo").path
        try #require(mkfifo(path, 0o600) == 0)
        let error = #expect(throws: LocalFileError.self) {
            try LocalFile.writeAtomically([1], to: path)
        }
        #expect(error?.description.contains("not a regular file") == true)
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    }

    /// A name near the 255-byte limit still leaves room for the temporary file's name.
    @Test func aNameNearTheLimitCanBeWritten() throws {
        let path = folder.appendingPathComponent(String(repeating: "n", count: 250)).path
        try LocalFile.writeAtomically(Array("new\n".utf8), to: path)
        #expect(try LocalFile.read(path) == Array("new\n".utf8))
    }

    /// A write killed midway leaves its temporary file; the next write to the same target
    /// removes it as soon as its writer is gone, however fresh. A pid that runs keeps its
    /// file while it is being written, and loses it once untouched for ten minutes: that
    /// pid was given to another process since (a 55 MB leftover must not stay for ever).
    @Test func aKilledWritersTemporaryIsRemovedByTheNextWrite() throws {
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = finished.processIdentifier
        let gone = folder.appendingPathComponent(".state.json.tmp-\(dead)-a1")
        let fresh = folder.appendingPathComponent(".state.json.tmp-\(dead)-d4")
        let live = folder.appendingPathComponent(".state.json.tmp-\(getpid())-b2")
        let reused = folder.appendingPathComponent(".state.json.tmp-\(getpid())-e5")
        let other = folder.appendingPathComponent(".other.json.tmp-\(dead)-c3")
        // Named like ours but not in our shape: never ours to delete.
        let lookalike = folder.appendingPathComponent(".state.json.tmp-\(dead)")
        let anHourAgo = Date(timeIntervalSinceNow: -3600)
        for leftover in [gone, fresh, live, reused, other, lookalike] {
            try Data([1]).write(to: leftover)
            if ![fresh, live].contains(leftover) {
                try FileManager.default.setAttributes(
                    [.modificationDate: anHourAgo], ofItemAtPath: leftover.path)
            }
        }
        try LocalFile.writeAtomically(
            Array("new\n".utf8), to: folder.appendingPathComponent("state.json").path)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(
            names
                == ([other, live, lookalike].map(\.lastPathComponent) + ["state.json"]).sorted())
    }

    /// Chunks of any size, empty ones too, land in order and nothing else does.
    @Test func chunkedAtomicWriteJoinsTheChunksInOrder() throws {
        let path = folder.appendingPathComponent("state.json").path
        try LocalFile.writeAtomically(Array("old and longer\n".utf8), to: path)
        let chunks: [[UInt8]] = [
            Array("{".utf8), [], (0..<100_003).map { UInt8(truncatingIfNeeded: $0 % 251) },
            Array("}\n".utf8),
        ]
        try LocalFile.writeAtomically(to: path, mode: 0o600) { write throws(LocalFileError) in
            for chunk in chunks {
                try chunk.withUnsafeBufferPointer { (part) throws(LocalFileError) in
                    try write(UnsafeRawBufferPointer(part))
                }
            }
        }
        #expect(try LocalFile.read(path) == Array(chunks.joined()))
        #expect(try LocalFile.mode(of: path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["state.json"])
    }

    /// A failure after some chunks went to the temporary file: the old file stays as it was,
    /// the temporary file is gone and the producer's error comes out.
    @Test func chunkedWriteThatFailsLeavesTheOldFileAndNoTemporary() throws {
        let path = folder.appendingPathComponent("state.json").path
        try LocalFile.writeAtomically(Array("old\n".utf8), to: path)
        let failure = LocalFileError(path: "next chunk", operation: .write, errno: EIO)
        let error = #expect(throws: LocalFileError.self) {
            try LocalFile.writeAtomically(to: path) { write throws(LocalFileError) in
                try [UInt8](repeating: 0x6E, count: 70_000).withUnsafeBufferPointer {
                    (part) throws(LocalFileError) in try write(UnsafeRawBufferPointer(part))
                }
                throw failure
            }
        }
        #expect(error == failure)
        #expect(try LocalFile.read(path) == Array("old\n".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["state.json"])
    }

    /// Sizes around the read's chunk (64 KiB) and an empty file: every byte, nothing more.
    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 300_007])
    func readReturnsExactlyTheFilesBytes(size: Int) throws {
        let path = folder.appendingPathComponent("sized-\(size)").path
        let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 251) }
        try LocalFile.writeAtomically(content, to: path)
        #expect(try LocalFile.read(path) == content)
    }

    @Test func readRefusesFilesOverTheLimitBeforeReading() throws {
        let path = folder.appendingPathComponent("big").path
        try LocalFile.writeAtomically([UInt8](repeating: 7, count: 1000), to: path)
        #expect(try LocalFile.read(path, maxBytes: 1000).count == 1000)
        let error = #expect(throws: LocalFileError.self) { try LocalFile.read(path, maxBytes: 999) }
        #expect(error?.description.contains("big") == true)
    }

    @Test func readOfAMissingFileNamesIt() throws {
        let path = folder.appendingPathComponent("nope.json").path
        let error = #expect(throws: LocalFileError.self) { try LocalFile.read(path) }
        #expect(error?.isMissing == true)
        #expect(error?.description == "\(path): cannot open: No such file or directory")
    }

    @Test func secondLockOnTheSameFileIsRefusedUntilTheFirstEnds() throws {
        let path = folder.appendingPathComponent("lock").path
        var first = try FileLock(path: path)
        #expect(first != nil)
        // flock locks belong to the open file description, so a second open in the same
        // process conflicts exactly as another process would.
        #expect(try FileLock(path: path) == nil)
        first = nil
        #expect(try FileLock(path: path) != nil)
    }

    @Test func aWaitForAHeldLockEndsWithNilAfterItsTime() throws {
        let path = folder.appendingPathComponent("lock").path
        let first = try FileLock(path: path)
        let start = Date()
        #expect(try FileLock(path: path, waitingUpTo: 0.3) == nil)
        #expect(Date().timeIntervalSince(start) >= 0.3)
        withExtendedLifetime(first) {}
    }

    @Test func aWaitForAFreeLockTakesItAtOnce() throws {
        let path = folder.appendingPathComponent("lock").path
        let lock = try FileLock(path: path, waitingUpTo: 3_600)
        #expect(lock != nil)
        #expect(try FileLock(path: path) == nil)
    }

    /// A folder that could not be made (a read-only config home) is not one to make
    /// writable: the advice names the nearest folder that exists.
    @Test func theFixForAFolderThatCouldNotBeMadeNamesTheNearestExistingOne() throws {
        let missing = folder.appendingPathComponent("a/b/c").path
        for code in [EROFS, EACCES] {
            let error = LocalFileError(path: missing, operation: .createFolder, errno: code)
            #expect(error.writeFix == "make \(folder.path) writable")
        }
        let inside = LocalFileError(
            path: folder.path, operation: .createInFolder, errno: EROFS)
        #expect(inside.writeFix == "make \(folder.path) writable")
    }

    @Test func makeDirectoryCreatesParents() throws {
        let path = folder.appendingPathComponent("a/b/c").path
        try LocalFile.makeDirectory(path)
        try LocalFile.makeDirectory(path)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
    }
}
