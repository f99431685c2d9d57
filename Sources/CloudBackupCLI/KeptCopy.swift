import Digests
import Foundation
import GoogleDrive
import LocalFiles

/// The backup as this profile last saw it on Drive, after its last successful upload or
/// download, so that a nightly backup where nothing changed costs one request: the listing.
///
/// Design: the copy is never trusted over the server. It stands in for a download only when
/// the listing shows one file whose id and `md5Checksum` equal the copy's, and that checksum
/// is computed here from the bytes, so a copy damaged on disk cannot match. Any doubt (the
/// copy is unreadable, another device wrote, there are duplicates) leaves it unused and the
/// backup downloads as before. The etag of our last upload is reused while Drive's `version`
/// is still the one that came with it; when that etag is stale anyway, the conditional upload
/// answers 412 and the backup takes the full path: nothing is lost, one request is wasted.
///
/// An encrypted backup's copy keeps the plaintext (so a run where nothing changed decrypts
/// nothing) and the checksum of the encrypted bytes on Drive, which the listing is matched
/// against; a second checksum, of the plaintext, guards the copy itself.
///
/// On disk: `kept-copy.json` in the profile folder, mode 0600, written atomically: one line
/// of JSON (id, version, etag, checksum, size, and the plaintext's checksum when it differs),
/// then the document's bytes as they are on Drive, or their plaintext.
struct KeptCopy: Equatable {
    var fileID: String
    var version: Int?
    var etag: String?
    /// The backup's bytes as the codec decodes them (plaintext).
    var bytes: [UInt8]
    /// Of the bytes on Drive, lowercase hex, as Drive reports it.
    let md5Checksum: String
    /// Of `bytes`: `md5Checksum` when they are the bytes on Drive (a plain backup).
    let plainChecksum: String

    /// `onDrive`: the bytes on Drive when they are not `bytes` (an encrypted backup).
    init(file: DriveFile, etag: String?, bytes: [UInt8], onDrive: [UInt8]? = nil) {
        let plainChecksum = Digest.hex(Digest.md5(bytes))
        self.init(
            fileID: file.id, version: file.version, etag: etag, bytes: bytes,
            md5Checksum: onDrive.map { Digest.hex(Digest.md5($0)) } ?? plainChecksum,
            plainChecksum: plainChecksum)
    }

    private init(
        fileID: String, version: Int?, etag: String?, bytes: [UInt8], md5Checksum: String,
        plainChecksum: String
    ) {
        self.fileID = fileID
        self.version = version
        self.etag = etag
        self.bytes = bytes
        self.md5Checksum = md5Checksum
        self.plainChecksum = plainChecksum
    }

    /// Whether `bytes` are Drive's own (the backup on Drive is not encrypted).
    var holdsDriveBytes: Bool { plainChecksum == md5Checksum }

    /// Whether `file` (from a listing or v2 metadata) holds exactly these bytes.
    func matches(_ file: DriveFile) -> Bool {
        file.id == fileID && file.md5Checksum?.lowercased() == md5Checksum
    }

    /// The etag to upload over `file` with, while its version says nobody wrote since ours
    /// (Drive lists no etags, so the listing cannot say whether ours is current).
    func etag(for file: DriveFile) -> String? {
        guard let version, file.version == version else { return nil }
        return etag
    }

    private struct Header: Codable {
        var fileId: String
        var version: Int?
        var etag: String?
        var md5Checksum: String
        var size: Int
        /// Absent when the kept bytes are Drive's (and in copies kept before encryption).
        var plainChecksum: String?
    }

    private static let maxHeaderBytes = 4096

    func save(to path: String) throws(CLIError) {
        let header = Header(
            fileId: fileID, version: version, etag: etag, md5Checksum: md5Checksum,
            size: bytes.count, plainChecksum: holdsDriveBytes ? nil : plainChecksum)
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
            throw CLIError(error.description, exitCode: .failure)
        }
    }

    /// nil when there is no copy, or it is unreadable, truncated or not what its header says:
    /// the caller then simply downloads.
    static func load(from path: String, maxBytes: Int) -> KeptCopy? {
        guard let stored = try? LocalFile.read(path, maxBytes: maxBytes + maxHeaderBytes),
            let newline = stored.prefix(maxHeaderBytes).firstIndex(of: UInt8(ascii: "\n")),
            let header = try? JSONDecoder().decode(Header.self, from: Data(stored[..<newline]))
        else { return nil }
        let bytes = Array(stored[(newline + 1)...])
        let plainChecksum = Digest.hex(Digest.md5(bytes))
        guard bytes.count == header.size,
            plainChecksum == header.plainChecksum ?? header.md5Checksum
        else { return nil }
        return KeptCopy(
            fileID: header.fileId, version: header.version, etag: header.etag, bytes: bytes,
            md5Checksum: header.md5Checksum, plainChecksum: plainChecksum)
    }
}
