import BackupKit
import Digests
import GoogleDrive
import LocalFiles

/// What a backup proved when merging STATE into Drive's file changed nothing (the file it
/// found, or the one it uploaded and checked, merged with STATE once more): while STATE and
/// that revision stay as they were and the clock has not carried a tombstone or the stale
/// guard past its window (`MergeOptions.unchangedUntil`), the same merge would change
/// nothing again. The next backup then reads neither STATE nor the backup: one listing shows
/// whether Drive still holds that revision, and the night is done (the "quiet night").
///
/// Kept in `steady-state.json` in the profile folder, written only by a backup that said no
/// warning (a warning is said again every night, so such a night is never skipped) and either
/// uploaded nothing or proved its checked update steady, removed by every other backup. Nothing here is trusted over the files it speaks
/// of: another STATE (stamp, or content when the stamp cannot tell), another revision on
/// Drive, other conditions, a pending check or pins still due each make a full run.
struct SteadyState: ProfileRecord, Equatable {
    /// STATE when it was read, and whether that stamp alone tells a later write (see
    /// `FileStamp.isSettled`); when it does not, STATE is read and `sha256` compared.
    var stamp: FileStamp
    var settled: Bool
    var sha256: String
    /// Drive's file, as the listing shows it.
    var fileId: String
    var headRevisionId: String
    var md5Checksum: String
    /// Milliseconds since 1970: the last instant the merge gives the same result; nil: none.
    var until: Int64?
    var conditions: Conditions
    /// What the full run reported, for `--json` and `status`.
    var bytes: Int
    var counts: DocumentCounts
    /// What the full run's `--verbose` said of the merge (`BackupCommand.mergeWords`), said
    /// again by the quiet nights; nil in records written before it was kept.
    var mergeWords: [String]?

    /// What else a backup's outcome depends on.
    struct Conditions: Codable, Equatable {
        var version = CloudBackup.version
        var fileName: String
        var encrypts: Bool
        /// The profile's `compress`, unset apart: each of the three decides whether the
        /// backup's form on Drive is rewritten.
        var compress: Bool?
        var maxBytes: Int
        /// STATE's shared settings as last brought together with the backup (their record).
        var syncedSettings: String?
    }

    /// Whether STATE at `path` is what this record was made from. `stamp`: its stamp now.
    func describes(_ path: String, stamp: FileStamp?, maxBytes: Int) -> Bool {
        guard let stamp, stamp == self.stamp else { return false }
        if settled { return true }
        guard let bytes = try? LocalFile.read(path, maxBytes: maxBytes) else { return false }
        return Digest.hex(Digest.sha256(bytes)) == sha256
    }

    /// This record trusted by its stamp alone from now on, when the content check it passed
    /// (`describes`) read STATE at `readAt`, past the stamp's tick: a write since would have
    /// moved the stamp. nil when it is settled already or still within the tick. So only the
    /// first quiet night after a write made just before a backup reads STATE, as git refreshes
    /// a racily clean index entry.
    func settled(at readAt: Int64) -> SteadyState? {
        guard !settled, stamp.isSettled(at: readAt) else { return nil }
        var record = self
        record.settled = true
        return record
    }

    /// Drive's file, when the listing shows this record's revision alone and `now` is
    /// within the horizon: nothing to do then.
    func unchangedFile(in listing: [DriveFile], now: Timestamp) -> DriveFile? {
        guard listing.count == 1, let file = listing.first, file.id == fileId,
            file.headRevisionId == headRevisionId,
            file.md5Checksum?.lowercased() == md5Checksum,
            // A head that is not the marked one owes a check: a full run finishes it.
            file.checkedRevision == nil || file.checkedRevision == file.headRevisionId,
            until.map({ now.millisecondsSince1970 <= $0 }) ?? true
        else { return nil }
        return file
    }
}
