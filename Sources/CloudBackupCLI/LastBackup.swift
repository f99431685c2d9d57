import BackupKit

/// The profile's record of its last successful backup (`last-backup.json`), for `status`.
struct LastBackup: ProfileRecord, Equatable {
    var time: String
    var fileId: String
    var name: String
    var bytes: Int
    var uploaded: Bool

    init(time: String, fileId: String, name: String, bytes: Int, uploaded: Bool) {
        self.time = time
        self.fileId = fileId
        self.name = name
        self.bytes = bytes
        self.uploaded = uploaded
    }

    init(outcome: BackupCommand.Outcome, at time: Timestamp) {
        self.init(
            time: time.description, fileId: outcome.file.id, name: outcome.file.name,
            bytes: outcome.bytes, uploaded: outcome.uploaded)
    }
}
