import BackupSync
import Foundation
import GoogleDrive
import LocalFiles

/// The profile's kept copy of the backup (see `BackupSync.KeptCopy`) on disk: `kept-copy.json`
/// in the profile folder, mode 0600, written atomically: one line of JSON (id, version, etag,
/// head revision, checksum, size, the plaintext's checksum when it differs, and the version
/// whose writer gave the bytes when they are canonical), then the document's bytes as they are
/// on Drive, or their plaintext when Drive's are encrypted.
extension KeptCopy {
    private struct Header: Codable {
        var fileId: String
        var version: Int?
        var etag: String?
        var headRevisionId: String?
        var md5Checksum: String
        var size: Int
        /// Absent when the kept bytes are Drive's (and in copies kept before encryption).
        var plainChecksum: String?
        /// The version whose writer gave the bytes, when they are its canonical bytes
        /// (`KeptCopy.canonical`): another version's writer may spell the document otherwise.
        var canonicalFor: String?
    }

    private static let maxHeaderBytes = 4096

    func save(to path: String) throws(CLIError) {
        let header = Header(
            fileId: fileID, version: version, etag: etag, headRevisionId: headRevisionId,
            md5Checksum: md5Checksum, size: bytes.count,
            plainChecksum: holdsDriveBytes ? nil : plainChecksum,
            canonicalFor: canonical ? CloudBackup.version : nil)
        // The header and the bytes as two chunks: joining them would copy the whole backup.
        let headerLine = Array((JSONLine.encode(header) + "\n").utf8)
        do {
            try LocalFile.writeAtomically(to: path, mode: 0o600) { write throws(LocalFileError) in
                for chunk in [headerLine, bytes] {
                    try chunk.withUnsafeBufferPointer { (part) throws(LocalFileError) in
                        try write(UnsafeRawBufferPointer(part))
                    }
                }
            }
        } catch {
            throw CloudBackup.describe(error)
        }
    }

    /// nil when there is no copy, or it is unreadable, truncated or not what its header says:
    /// the caller then simply downloads.
    static func load(from path: String, maxBytes: Int) -> KeptCopy? {
        guard let stored = try? LocalFile.read(path, maxBytes: maxBytes + maxHeaderBytes),
            let newline = stored.prefix(maxHeaderBytes).firstIndex(of: UInt8(ascii: "\n")),
            let header = try? JSONDecoder().decode(Header.self, from: Data(stored[..<newline]))
        else { return nil }
        var copy = KeptCopy(
            file: DriveFile(
                id: header.fileId, name: "", version: header.version,
                headRevisionId: header.headRevisionId),
            etag: header.etag, bytes: Array(stored[(newline + 1)...]),
            sealedMd5: header.plainChecksum.map { _ in header.md5Checksum })
        guard copy.bytes.count == header.size,
            copy.plainChecksum == header.plainChecksum ?? header.md5Checksum
        else { return nil }
        copy.canonical = header.canonicalFor == CloudBackup.version
        return copy
    }
}
