import BackupSync
import GoogleDrive
import Testing

/// `RevisionCheck` as a table: a history, our base and our upload → what lies between.
struct RevisionCheckCase: CustomTestStringConvertible, Sendable {
    var name: String
    /// (id, md5) oldest first.
    var history: [(String, String)]
    var base: String?
    var uploadedMd5: String
    var uploadedRevisionId: String?
    var known: Set<String> = []
    /// nil: `.missing`; else the ids of the others (empty: `.clean`) and ours.
    var expected: (others: [String], ours: String)?

    var testDescription: String { name }
}

private let cases: [RevisionCheckCase] = [
    .init(
        name: "nothing between", history: [("r1", "a"), ("r2", "b")], base: "r1", uploadedMd5: "b",
        uploadedRevisionId: "r2", expected: ([], "r2")),
    .init(
        name: "another device between", history: [("r1", "a"), ("r2", "c"), ("r3", "b")],
        base: "r1", uploadedMd5: "b", uploadedRevisionId: "r3", expected: (["r2"], "r3")),
    .init(
        name: "a write after ours is the next writer's to check",
        history: [("r1", "a"), ("r2", "b"), ("r3", "c")], base: "r1", uploadedMd5: "b",
        uploadedRevisionId: "r2", expected: ([], "r2")),
    .init(
        name: "ours found by its checksum when the answer was lost",
        history: [("r1", "a"), ("r2", "c"), ("r3", "b")], base: "r1", uploadedMd5: "b",
        uploadedRevisionId: nil, expected: (["r2"], "r3")),
    .init(
        name: "a retried upload landed twice: the last counts, a write between them too",
        history: [("r1", "a"), ("r2", "b"), ("r3", "c"), ("r4", "b")], base: "r1",
        uploadedMd5: "b", uploadedRevisionId: nil, expected: (["r3"], "r4")),
    .init(
        name: "the upload never landed", history: [("r1", "a"), ("r2", "c")], base: "r1",
        uploadedMd5: "b", uploadedRevisionId: nil, expected: nil),
    .init(
        name: "our bytes before the base are not ours", history: [("r0", "b"), ("r1", "a")],
        base: "r1", uploadedMd5: "b", uploadedRevisionId: nil, expected: nil),
    .init(
        name: "a purged base: every revision before ours counts",
        history: [("r5", "x"), ("r6", "y"), ("r7", "b")], base: "r1", uploadedMd5: "b",
        uploadedRevisionId: "r7", expected: (["r5", "r6"], "r7")),
    .init(
        name: "revisions merged already are not counted again",
        history: [("r1", "a"), ("r2", "c"), ("r3", "d"), ("r4", "b")], base: "r1",
        uploadedMd5: "b", uploadedRevisionId: "r4", known: ["r2"], expected: (["r3"], "r4")),
    .init(
        name: "a create: nothing before ours", history: [("r1", "b")], base: nil, uploadedMd5: "b",
        uploadedRevisionId: "r1", expected: ([], "r1")),
]

@Test(arguments: cases)
func theRevisionsBetweenOurBaseAndOurUpload(_ test: RevisionCheckCase) {
    let revisions = test.history.map { DriveRevision(id: $0.0, md5Checksum: $0.1) }
    let check = RevisionCheck.of(
        revisions, base: test.base, uploadedMd5: test.uploadedMd5,
        uploadedRevisionId: test.uploadedRevisionId, known: test.known)
    switch (check, test.expected) {
    case (.missing, nil): break
    case (.clean(let ours), let expected?):
        #expect(expected.others.isEmpty && ours.id == expected.ours)
    case (.others(let others, let ours), let expected?):
        #expect(others.map(\.id) == expected.others && ours.id == expected.ours)
    default:
        Issue.record("got \(check), expected \(String(describing: test.expected))")
    }
}
