/// An upload whose revision check is not done yet, kept in the profile from just before the
/// upload until the check is over, so a run that dies in between (the network gone right
/// after the upload, `kill -9`) leaves the next run of the profile a check to finish first.
///
/// `baseRevisionId` is the revision the merge started from (nil for a create: no revision
/// precedes the first); `uploadedMd5` the checksum of the bytes sent, which finds our
/// revision in the history when the upload's answer never came; `uploadedRevisionId` is
/// filled in once the answer did. `readPins` are the revisions a check pinned only to read
/// them (Drive serving pinned revisions alone): the run that finishes the check releases them
/// once their items are in a checked head, so a run cut short leaves no pin behind for good.
public struct PendingVerification: Codable, Equatable, Sendable {
    public var fileId: String
    public var baseRevisionId: String?
    public var uploadedMd5: String
    public var uploadedRevisionId: String?
    public var readPins: [String]

    public init(
        fileId: String, baseRevisionId: String?, uploadedMd5: String,
        uploadedRevisionId: String? = nil, readPins: [String] = []
    ) {
        self.fileId = fileId
        self.baseRevisionId = baseRevisionId
        self.uploadedMd5 = uploadedMd5
        self.uploadedRevisionId = uploadedRevisionId
        self.readPins = readPins
    }

    // A record written before read pins were recorded has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fileId = try container.decode(String.self, forKey: .fileId)
        baseRevisionId = try container.decodeIfPresent(String.self, forKey: .baseRevisionId)
        uploadedMd5 = try container.decode(String.self, forKey: .uploadedMd5)
        uploadedRevisionId = try container.decodeIfPresent(
            String.self, forKey: .uploadedRevisionId)
        readPins = try container.decodeIfPresent([String].self, forKey: .readPins) ?? []
    }
}
