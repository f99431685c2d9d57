/// An upload whose revision check is not done yet, kept in the profile from just before the
/// upload until the check is over, so a run that dies in between (the network gone right
/// after the upload, `kill -9`) leaves the next run of the profile a check to finish first.
///
/// `baseRevisionId` is the revision the merge started from (nil for a create: no revision
/// precedes the first); `uploadedMd5` the checksum of the bytes sent, which finds our
/// revision in the history when the upload's answer never came; `uploadedRevisionId` is
/// filled in once the answer did.
public struct PendingVerification: Codable, Equatable, Sendable {
    public var fileId: String
    public var baseRevisionId: String?
    public var uploadedMd5: String
    public var uploadedRevisionId: String?

    public init(
        fileId: String, baseRevisionId: String?, uploadedMd5: String,
        uploadedRevisionId: String? = nil
    ) {
        self.fileId = fileId
        self.baseRevisionId = baseRevisionId
        self.uploadedMd5 = uploadedMd5
        self.uploadedRevisionId = uploadedRevisionId
    }
}
