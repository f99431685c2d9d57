import BackupKit
import GoogleDrive

/// Which revision of the backup a point-in-time restore takes: one named by its id, or the
/// newest written at or before a time. Pure: the caller lists the revisions and downloads
/// the one chosen.
public enum RevisionChoice: Equatable, Sendable {
    case id(String)
    case asOf(Timestamp)

    public enum Refusal: Error, Equatable {
        /// No revision has that id; `oldest` is the oldest one there is (nil: none).
        case unknownID(String, oldest: DriveRevision?)
        /// The time is before the oldest revision.
        case beforeOldest(Timestamp, oldest: DriveRevision?)
    }

    /// The revision chosen among `revisions` (oldest first, as Drive lists them).
    public func pick(from revisions: [DriveRevision]) -> Result<DriveRevision, Refusal> {
        switch self {
        case .id(let id):
            guard let revision = revisions.first(where: { $0.id == id }) else {
                return .failure(.unknownID(id, oldest: revisions.first))
            }
            return .success(revision)
        case .asOf(let time):
            // Newest first, the first written at or before `time`; a revision without a time
            // cannot be placed and is passed over.
            let chosen = revisions.last { revision in
                revision.modifiedTime.flatMap { Timestamp($0) }.map { $0 <= time } ?? false
            }
            guard let chosen else { return .failure(.beforeOldest(time, oldest: revisions.first)) }
            return .success(chosen)
        }
    }
}
