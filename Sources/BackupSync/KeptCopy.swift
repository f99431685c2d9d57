import Digests
import GoogleDrive

/// The backup as this profile last saw it on Drive, after its last verified upload or its
/// last download, so that a nightly backup where nothing changed costs one request: the
/// listing.
///
/// Design: the copy is never trusted over the server. It stands in for a download only when
/// the listing shows one file whose id, head revision and `md5Checksum` equal the copy's, and
/// that checksum is computed here from the bytes, so a copy damaged on disk cannot match. The
/// head revision, not `version`, says nobody wrote since: Drive moves `version` on any change,
/// a rename included, but a new revision only with new content. The etag of our last upload is
/// reused while `version` is still the one that came with it (the etag moves with `version`);
/// when it is stale anyway, the conditional upload answers 412 and the backup takes the full
/// path: nothing is lost, one request is wasted.
///
/// A sealed (encrypted) backup's copy keeps the plaintext and the checksum of the sealed
/// bytes, computed by the run that held them; `plainChecksum` then guards the copy itself.
public struct KeptCopy: Equatable, Sendable {
    public var fileID: String
    public var version: Int?
    public var etag: String?
    public var headRevisionId: String?
    /// The backup's bytes as the codec decodes them: Drive's own, or their plaintext when
    /// Drive's are sealed (so a run where nothing changed opens nothing).
    public var bytes: [UInt8]
    /// Of the bytes on Drive, lowercase hex, as Drive reports it.
    public let md5Checksum: String
    /// Of `bytes`: `md5Checksum` when they are Drive's (a plain backup).
    public let plainChecksum: String
    /// `bytes`, inflated when they are gzip, are what `encode` gives for the document they
    /// decode to (this version's upload wrote them), so a run compares a merge's encoding with
    /// them instead of encoding them again. false when not known: another writer (another
    /// app, another version) may spell the same document otherwise.
    public var canonical = false

    /// `sealedMd5`: the checksum of Drive's bytes when they are not `bytes` (sealed);
    /// `plainMd5`: that of `bytes`, when the caller hashed these very bytes in this process
    /// (a run's upload), computed here otherwise (bytes read from disk are never taken on trust).
    public init(
        file: DriveFile, etag: String?, bytes: [UInt8], sealedMd5: String? = nil,
        plainMd5: String? = nil
    ) {
        fileID = file.id
        version = file.version
        headRevisionId = file.headRevisionId
        self.etag = etag
        self.bytes = bytes
        plainChecksum = plainMd5 ?? Digest.hex(Digest.md5(bytes))
        md5Checksum = sealedMd5?.lowercased() ?? plainChecksum
    }

    /// Equal copies hold the same bytes of the same head; `canonical` is only what is known of
    /// those bytes (a function of them), so a copy that learnt it is the same copy.
    public static func == (lhs: KeptCopy, rhs: KeptCopy) -> Bool {
        (lhs.fileID, lhs.version, lhs.etag, lhs.headRevisionId, lhs.md5Checksum, lhs.plainChecksum)
            == (
                rhs.fileID, rhs.version, rhs.etag, rhs.headRevisionId, rhs.md5Checksum,
                rhs.plainChecksum
            )
            && lhs.bytes == rhs.bytes
    }

    /// Whether `bytes` are Drive's own (the backup on Drive is not sealed).
    public var holdsDriveBytes: Bool { plainChecksum == md5Checksum }

    /// Whether `file` (from a listing or v2 metadata) holds exactly these bytes, as the same
    /// revision. A copy from before revisions were recorded matches on the checksum alone.
    public func matches(_ file: DriveFile) -> Bool {
        file.id == fileID && file.md5Checksum?.lowercased() == md5Checksum
            && (headRevisionId == nil || file.headRevisionId == headRevisionId)
    }

    /// The etag to upload over `file` with, while its version says nobody wrote since ours
    /// (Drive lists no etags, so the listing cannot say whether ours is current).
    public func etag(for file: DriveFile) -> String? {
        guard let version, file.version == version else { return nil }
        return etag
    }
}
