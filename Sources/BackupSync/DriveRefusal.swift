import GoogleDrive

/// What a refusal from Drive means to the sync machines, read from its status and reason. The
/// machines decide what follows (`BackupRun.failed`, `FetchRun.failed`); the driver only hands
/// the error over.
extension DriveError {
    private var google: GoogleAPIError? {
        guard case .rejected(_, let google) = self else { return nil }
        return google
    }

    /// The file or revision is no longer there: a 404 or 410, or a revision Drive will not serve
    /// any more.
    var isGone: Bool {
        guard let google else { return false }
        return [404, 410].contains(google.status)
            || google.reason == "download_restricted_for_revision"
    }

    /// Google's guide can be read as serving only pinned (`keepForever`) revisions of a binary
    /// file: a 403 (but a missing scope) on a download of one not pinned asks for a pin.
    var asksForPin: Bool {
        guard let google else { return false }
        return google.status == 403 && !google.isMissingScope
    }

    /// Google documents "up to 200" pins a file, not its answer past them: any refusal of the
    /// pin itself (400, 403 but a missing scope) is read as that cap.
    var refusesPin: Bool {
        guard let google else { return false }
        return [400, 403].contains(google.status) && !google.isMissingScope
    }
}
