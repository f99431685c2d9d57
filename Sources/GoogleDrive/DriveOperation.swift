/// What a Drive call was doing, as `DriveError` carries it: worded for a person ("download
/// F1"), and telling a call that names one file by its id, where a 404 means that file (or
/// its revision) went meanwhile, from one that does not, where it means a wrong endpoint.
public enum DriveOperation: Sendable, Equatable, CustomStringConvertible {
    case listFolder
    case readMetadata(fileID: String)
    case download(fileID: String)
    case readETag(fileID: String)
    case reserveID
    case create(name: String)
    case upload(fileID: String)
    case delete(fileID: String)
    case listRevisions(fileID: String)
    case downloadRevision(String, fileID: String)
    case pinRevision(String, fileID: String)
    case deleteRevision(String, fileID: String)
    case markChecked(String, fileID: String)

    /// The file the call names by its id; nil for calls that name none.
    public var fileID: String? {
        switch self {
        case .listFolder, .reserveID, .create: nil
        case .readMetadata(let id), .download(let id), .readETag(let id), .upload(let id),
            .delete(let id), .listRevisions(let id), .downloadRevision(_, let id),
            .pinRevision(_, let id), .deleteRevision(_, let id), .markChecked(_, let id):
            id
        }
    }

    /// The call in a word or two, without its ids, for a report that must stay one short
    /// line ("list failed: …").
    public var name: String {
        switch self {
        case .listFolder: "list"
        case .readMetadata: "metadata read"
        case .download: "download"
        case .readETag: "etag read"
        case .reserveID: "file id request"
        case .create: "create"
        case .upload: "upload"
        case .delete: "delete"
        case .listRevisions: "revision list"
        case .downloadRevision: "revision download"
        case .pinRevision: "revision pin"
        case .deleteRevision: "revision delete"
        case .markChecked: "revision mark"
        }
    }

    public var description: String {
        switch self {
        case .listFolder: "list the app folder"
        case .readMetadata(let id): "read the metadata of \(id)"
        case .download(let id): "download \(id)"
        case .readETag(let id): "read the etag of \(id)"
        case .reserveID: "reserve a file id"
        case .create(let name): "create \(name)"
        case .upload(let id): "upload to \(id)"
        case .delete(let id): "delete \(id)"
        case .listRevisions(let id): "list the revisions of \(id)"
        case .downloadRevision(let revision, let id): "download revision \(revision) of \(id)"
        case .pinRevision(let revision, let id): "pin revision \(revision) of \(id)"
        case .deleteRevision(let revision, let id): "delete revision \(revision) of \(id)"
        case .markChecked(let revision, let id): "mark revision \(revision) of \(id) as checked"
        }
    }
}
