import Foundation
import TestSupport
import Testing

@testable import LocalFiles

/// A folder that cannot be synced after the rename: the new file is in place, and the write
/// says so instead of keeping quiet (a power cut may still bring the old file back).
@Suite struct UnsyncedFolderTests {
    @Test func aFailedFolderSyncIsReturnedWithTheNewFileInPlace() throws {
        let path = try Paths.temporaryFolder().appendingPathComponent("state.json").path
        try LocalFile.writeAtomically(Array("old\n".utf8), to: path)
        let failing: (Int32) -> Int32 = { _ in
            errno = EIO
            return -1
        }
        let unsynced = try LocalFile.writeAtomically(to: path, mode: nil, syncingFolder: failing) {
            write throws(LocalFileError) in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 1)
            defer { buffer.deallocate() }
            buffer.copyBytes(from: Array("new\n".utf8))
            try write(UnsafeRawBufferPointer(buffer))
        }
        #expect(unsynced == LocalFile.UnsyncedFolder(path: path, errno: EIO))
        #expect(
            unsynced?.warning
                == "\(path) was written, but its folder could not be synced (Input/output error); the new file may not survive a power cut"
        )
        #expect(try LocalFile.read(path) == Array("new\n".utf8))
    }

    @Test func aSyncedFolderIsNothingToSay() throws {
        let path = try Paths.temporaryFolder().appendingPathComponent("state.json").path
        #expect(try LocalFile.writeAtomically(Array("new\n".utf8), to: path) == nil)
    }
}
