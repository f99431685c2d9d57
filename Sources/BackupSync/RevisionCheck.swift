import GoogleDrive

/// What Drive's revision history says about one upload of ours: whether the revision just
/// before ours is the one our merge started from.
///
/// Why it is needed: the upload is conditional (v2 `If-Match`), but Google documents no
/// `If-Match` at all, nor whether a resumable session checks it when it opens or when it
/// completes. The revision history is documented: every upload of a binary file makes a
/// revision, listed oldest first. So after each upload the history is read, and any
/// revision between our base and ours is another device's write that ours replaced; its
/// bytes are still there to download and merge, whatever Google did with `If-Match`.
///
/// Example: history [r1, r2, r3, r4], our merge started from r2 (the head we read), ours is
/// r4 (md5 m4). r3 lies between: `.others([r3])`. History [r1, r2, r4]: `.clean`.
public enum RevisionCheck: Equatable, Sendable {
    /// Nothing between our base and our revision.
    case clean(ours: DriveRevision)
    /// Other writers' revisions between our base and ours, oldest first: to be merged.
    case others([DriveRevision], ours: DriveRevision)
    /// No revision holds our bytes after the base: the upload never landed.
    case missing

    /// `base`: the revision our merge started from (nil for a create, which no revision
    /// precedes). Ours is the revision `uploadedRevisionId` names, else the last holding
    /// `uploadedMd5`: the last, since a retried upload of the same bytes may land twice, and
    /// a write between the two would be replaced by the second. Revisions holding our bytes
    /// are never "others", nor are those in `known` (already merged this run). When the base
    /// is no longer listed (purged after 100 newer ones), every revision before ours counts:
    /// merging an older copy again is harmless, missing a newer one is not.
    public static func of(
        _ revisions: [DriveRevision], base: String?, uploadedMd5: String,
        uploadedRevisionId: String?, known: Set<String> = []
    ) -> RevisionCheck {
        let md5 = uploadedMd5.lowercased()
        let baseIndex = base.flatMap { base in revisions.firstIndex { $0.id == base } }
        let named = uploadedRevisionId.flatMap { id in revisions.lastIndex { $0.id == id } }
        let after = baseIndex.map { $0 + 1 } ?? 0
        guard
            let oursIndex = named
                ?? revisions[after...].lastIndex(where: { $0.md5Checksum?.lowercased() == md5 })
        else { return .missing }
        let ours = revisions[oursIndex]
        let start = baseIndex.map { min($0 + 1, oursIndex) } ?? 0
        let others = revisions[start..<oursIndex].filter {
            $0.md5Checksum?.lowercased() != md5 && !known.contains($0.id)
        }
        return others.isEmpty ? .clean(ours: ours) : .others(others, ours: ours)
    }

    /// Every revision after `base` (all of them when `base` is no longer listed) that does not
    /// hold `uploadedMd5`: what a run cut short may owe, whether or not its upload landed. A
    /// record's base is the oldest one its run had not proved, so revisions after it can hold
    /// what that run merged and never got onto Drive.
    public static func since(_ revisions: [DriveRevision], base: String?, uploadedMd5: String)
        -> [DriveRevision]
    {
        let md5 = uploadedMd5.lowercased()
        let start =
            base.flatMap { base in revisions.firstIndex { $0.id == base } }.map { $0 + 1 } ?? 0
        // The head is the file's content, read by the run anyway.
        return revisions[start...].dropLast().filter { $0.md5Checksum?.lowercased() != md5 }
    }

    /// What the head may lack when the file's last finished check was that of `checked`
    /// (`DriveFile.checkedRevision`): that revision and every later one but the head (every one
    /// but the head when `checked` is no longer listed), less those holding the head's bytes. A
    /// write after `checked` may have replaced it unmerged, so `checked` itself is owed too.
    public static func owed(_ revisions: [DriveRevision], checked: String, headMd5: String?)
        -> [DriveRevision]
    {
        let md5 = headMd5?.lowercased()
        let start = revisions.firstIndex { $0.id == checked } ?? 0
        return revisions[start...].dropLast().filter { $0.md5Checksum?.lowercased() != md5 }
    }
}
