/// What `seal` does to uploads, and so what a run may upload over.
public enum Uploads: Sendable {
    /// Plain, and never over a sealed file of ours (`SyncError.unsealing`): a profile
    /// that does not say would otherwise strip the envelope off a backup another device
    /// keeps sealed.
    case plain
    /// Sealed: a plain file of ours is uploaded sealed even when nothing changed.
    case sealed
    /// Plain on purpose (the user turned sealing off): a sealed file of ours is opened
    /// and uploaded plain even when nothing changed.
    case unsealed
}
