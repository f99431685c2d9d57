import GoogleDrive

/// Why a sync run stopped. The CLI says it in words and chooses the exit code; nothing here
/// prints.
public enum SyncError: Error {
    /// A Drive operation failed for good (retries spent, a final refusal, the login gone).
    case drive(DriveError)
    /// Our upload went through, but its check against the revision history could not be
    /// finished (`error`); `pending` is recorded in the profile, and the next run of the
    /// profile finishes it first.
    case unverified(DriveError, PendingVerification)
    /// A check found other writers' `revisions` (oldest first) that an upload replaced, and
    /// could not read them (`error`: Drive refused to pin one, or its download failed past the
    /// retries): what only they hold is missing from the backup on Drive now. They stay in
    /// Drive's history and in the profile's pending record, so the next run merges them.
    case unmerged(DriveError, revisions: [DriveRevision])
    /// Another device wrote in every one of `rounds` rounds; every revision stays in the
    /// history, so nothing was lost, and the next run merges again.
    case keepsChanging(rounds: Int)
    /// The merged backup would be `bytes` long, over the `limit` devices read it with.
    case tooLarge(bytes: Int, limit: Int)
    /// A file of our name the codec refused to judge (a newer schema, over the size limit):
    /// never replaced, never kept aside.
    case refused(DriveFile, any Error)
    /// Sealed bytes of our file (of its `revision`, when an old revision's) that the codec's
    /// `open` could not open (`error`: no key, the wrong key, a damaged envelope). The run
    /// stops, nothing replaced or kept aside.
    case unopened(DriveFile, revision: String?, any Error)
    /// Sealed bytes of our file (or of its `revision`) that a run which does not seal would
    /// replace with plain ones: it stops instead, nothing written.
    case unsealing(DriveFile, revision: String?)
    /// The codec's `seal` failed; nothing was uploaded.
    case unsealed(any Error)
    /// A remote file that is not a valid backup, where nothing may replace it (a restore).
    case invalidRemote(DriveFile, any Error)
    /// A point-in-time restore named a revision that is not there, or a time before the
    /// oldest one.
    case noSuchRevision(RevisionChoice.Refusal)
    /// The profile's record of the check to come could not be saved, so nothing was uploaded
    /// (a run cut short after the upload would leave no trace of what it owes).
    case cannotRecord(String)
    /// An event the machine cannot be in: a bug in the driver, never Drive's doing.
    case protocolViolation(String)
}

/// What a run tells the user along the way, one line each.
public enum SyncNotice {
    /// A merge of this run warned (once per kind and run: `RunNotices`).
    case merged(MergeNotice)
    /// A copy of the backup was kept in a side file `side` (why: `reason`).
    case keptAside(copyID: String, side: DriveFile, reason: SideFileReason)
    /// A revision another device wrote between our base and our upload could not be read
    /// (purged, or refused by Drive), so what it held alone could not be merged.
    case unreadableRevision(fileID: String, revision: String)
    /// Our file's envelope on Drive was not this run's (plain while it seals, or sealed
    /// while its uploads are `.unsealed`): it was uploaded `sealed` or plain, though the merge may have
    /// changed nothing.
    case envelopeChanged(fileID: String, sealed: Bool)
    /// Our file's opened bytes on Drive were in another form than this profile's
    /// (`SyncCodec.changesForm`): it was uploaded `compressed` or plain, though the merge may
    /// have changed nothing.
    case formChanged(fileID: String, compressed: Bool)
}
