import Digests
import GoogleDrive
import Networking
import TestSupport
import Testing

@testable import CloudBackupCLI

/// A toy document (a set of lines) so these tests pin the Drive protocol of the backup —
/// create, compare-and-swap, duplicates, side files — independently of BackupKit's merge.
private struct Lines: Equatable {
    var items: Set<String>
}

private struct NotABackup: Error {}

private var codec: DocumentCodec<Lines> {
    DocumentCodec(
        decode: { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            guard !text.hasPrefix("!") else { throw NotABackup() }
            return Lines(items: Set(text.split(separator: "\n").map(String.init)))
        },
        encode: { Array($0.items.sorted().joined(separator: "\n").utf8) },
        merge: { Lines(items: $0.items.union($1.items)) },
        stamp: { $0 })
}

private func lines(_ items: String...) -> Lines { Lines(items: Set(items)) }

private func listing(_ ids: String...) -> ScriptedTransport.Step {
    let files = ids.enumerated().map { index, id in
        #"{"id":"\#(id)","name":"habit-backup.json","createdTime":"2026-01-0\#(index + 1)T00:00:00.000Z"}"#
    }
    return answer(200, #"{"files":[\#(files.joined(separator: ","))]}"#)
}

/// The two answers of `DriveClient.read`: v2 metadata with the etag, then the bytes.
private func remote(_ id: String, etag: String, _ text: String) -> [ScriptedTransport.Step] {
    let bytes = Array(text.utf8)
    return [
        answer(
            200,
            #"{"id":"\#(id)","title":"habit-backup.json","etag":"\#(etag)","md5Checksum":"\#(Digest.hex(Digest.md5(bytes)))"}"#
        ),
        answer(200, bytes: bytes),
    ]
}

private let updated = answer(200, #"{"id":"F1","title":"habit-backup.json"}"#)

private final class Warnings: @unchecked Sendable {
    var lines: [String] = []
}

private func backup(
    _ transport: ScriptedTransport, warnings: Warnings = Warnings(), maxRounds: Int = 8
)
    -> RemoteBackup<Lines>
{
    var remote = RemoteBackup(
        drive: fakeDrive(transport), name: "habit-backup.json", codec: codec,
        warn: { warnings.lines.append($0) })
    remote.maxRounds = maxRounds
    return remote
}

@Test func theFirstBackupCreatesTheFile() throws {
    let transport = ScriptedTransport([
        listing(), answer(200, #"{"ids":["NEW1"]}"#),
        answer(200, #"{"id":"NEW1","name":"habit-backup.json"}"#),
    ])
    let outcome = try backup(transport).backup(lines("a", "b"))
    #expect(outcome.created && outcome.uploaded)
    #expect(outcome.file.id == "NEW1")
    let create = try #require(transport.sent.last)
    #expect(create.method == "POST")
    #expect(String(decoding: create.body, as: UTF8.self).contains("\r\na\nb\r\n"))
}

@Test func anUnchangedBackupUploadsNothing() throws {
    let transport = ScriptedTransport([listing("F1")] + remote("F1", etag: "e1", "a\nb"))
    let outcome = try backup(transport).backup(lines("b"))
    #expect(!outcome.uploaded)
    #expect(transport.sent.allSatisfy { $0.method == "GET" })
    #expect(transport.remaining == 0)
}

@Test func aWriteBetweenOurReadAndOurUploadIsMergedAgain() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a") + [googleError(412, "conditionNotMet")]
            + remote("F1", etag: "e2", "a\nc") + [updated])
    let outcome = try backup(transport).backup(lines("b"))
    #expect(outcome.uploaded)
    let puts = transport.sent.filter { $0.method == "PUT" }
    #expect(puts.map { $0.header("If-Match") } == ["e1", "e2"])
    #expect(puts.map { String(decoding: $0.body, as: UTF8.self) } == ["a\nb", "a\nb\nc"])
}

@Test func duplicatesAreMergedIntoTheOldestAndDeletedAfterTheUpload() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2")] + remote("F2", etag: "x", "c") + remote("F1", etag: "e1", "a") + [
            updated, answer(204),
        ])
    let outcome = try backup(transport).backup(lines("b"))
    #expect(outcome.deletedDuplicates == ["F2"])
    let writes = transport.sent.filter { $0.method != "GET" }
    #expect(writes.map(\.method) == ["PUT", "DELETE"])
    #expect(writes.first?.path == "/upload/drive/v2/files/F1")
    #expect(writes.first.map { String(decoding: $0.body, as: UTF8.self) } == "a\nb\nc")
    #expect(writes.last?.path == "/drive/v3/files/F2")
}

@Test func aDuplicateAnotherDeviceDeletedMeanwhileIsSkipped() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2"), googleError(404, "notFound")] + remote("F1", etag: "e1", "a") + [
            updated
        ])
    let outcome = try backup(transport).backup(lines("b"))
    #expect(outcome.deletedDuplicates.isEmpty)
    let puts = transport.sent.filter { $0.method == "PUT" }
    #expect(puts.map { String(decoding: $0.body, as: UTF8.self) } == ["a\nb"])
    #expect(!transport.sent.contains { $0.method == "DELETE" })
}

@Test func aDuplicateIsNotDeletedWhenTheUploadFails() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2")] + remote("F2", etag: "x", "c") + remote("F1", etag: "e1", "a") + [
            googleError(403, "insufficientPermissions")
        ])
    #expect(throws: DriveError.self) { try backup(transport).backup(lines("b")) }
    #expect(!transport.sent.contains { $0.method == "DELETE" })
}

@Test func anInvalidRemoteFileIsKeptAsideBeforeItIsReplaced() throws {
    let warnings = Warnings()
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "!garbage") + [
            answer(200, #"{"ids":["SIDE1"]}"#), answer(200, #"{"id":"SIDE1","name":"side"}"#),
            updated,
        ])
    let outcome = try backup(transport, warnings: warnings).backup(lines("b"))
    #expect(outcome.sideFiles.map(\.id) == ["SIDE1"])
    let sent = transport.sent
    let side = try #require(sent.first { $0.method == "POST" })
    let sideBody = String(decoding: side.body, as: UTF8.self)
    #expect(sideBody.contains(#""name":"habit-backup.json.invalid-"#))
    #expect(sideBody.contains("!garbage"))
    #expect(sent.last?.method == "PUT")
    #expect(sent.last.map { String(decoding: $0.body, as: UTF8.self) } == "b")
    #expect(warnings.lines.count == 1)
    #expect(warnings.lines.first?.contains("habit-backup.json.invalid-") == true)
}

@Test func aRemoteThatKeepsChangingEndsInExit5() throws {
    let transport = ScriptedTransport(
        [listing("F1")] + remote("F1", etag: "e1", "a") + [googleError(412, "conditionNotMet")]
            + remote("F1", etag: "e2", "c") + [googleError(412, "conditionNotMet")])
    let error = #expect(throws: CLIError.self) {
        try backup(transport, maxRounds: 2).backup(lines("b"))
    }
    #expect(error?.exitCode == .network)
}

@Test func fetchMergesEveryRemoteFile() throws {
    let transport = ScriptedTransport(
        [listing("F1", "F2")] + remote("F1", etag: "e1", "a") + remote("F2", etag: "e2", "c"))
    let fetched = try #require(try backup(transport).fetch())
    #expect(fetched.document == lines("a", "c"))
    #expect(fetched.files.map(\.id) == ["F1", "F2"])
}

@Test func fetchWithNoRemoteFileIsNil() throws {
    #expect(try backup(ScriptedTransport([listing()])).fetch() == nil)
}

// MARK: - The kept copy

private func md5(_ text: String) -> String { Digest.hex(Digest.md5(Array(text.utf8))) }

private func listed(_ id: String, version: Int, holding text: String) -> ScriptedTransport.Step {
    answer(
        200,
        #"{"files":[{"id":"\#(id)","name":"habit-backup.json","version":"\#(version)","md5Checksum":"\#(md5(text))"}]}"#
    )
}

private func kept(_ text: String, version: Int, etag: String?) -> KeptCopy {
    KeptCopy(
        file: DriveFile(id: "F1", name: "habit-backup.json", version: version), etag: etag,
        bytes: Array(text.utf8))
}

@Test func anEtagFromAnOlderVersionIsNotUsed() throws {
    // Another device rewrote the same bytes: the checksum matches, our etag is stale.
    let transport = ScriptedTransport([
        listed("F1", version: 2, holding: "a"),
        answer(
            200,
            #"{"id":"F1","title":"habit-backup.json","etag":"e2","version":"2","md5Checksum":"\#(md5("a"))"}"#
        ),
        answer(200, #"{"id":"F1","title":"habit-backup.json","etag":"e3","version":"3"}"#),
    ])
    let outcome = try backup(transport).backup(lines("b"), kept: kept("a", version: 1, etag: "e1"))
    let put = try #require(transport.sent.last)
    #expect(put.header("If-Match") == "e2")
    #expect(String(decoding: put.body, as: UTF8.self) == "a\nb")
    #expect(!transport.sent.contains { $0.query("alt") == "media" })
    #expect(outcome.kept == kept("a\nb", version: 3, etag: "e3"))
}

@Test func aFileThatChangesAfterTheListingIsDownloaded() throws {
    let transport = ScriptedTransport(
        [
            listed("F1", version: 1, holding: "a"),
            answer(
                200,
                #"{"id":"F1","title":"habit-backup.json","etag":"e2","md5Checksum":"\#(md5("a\nc"))"}"#
            ),
        ] + remote("F1", etag: "e2", "a\nc") + [updated])
    let outcome = try backup(transport).backup(lines("b"), kept: kept("a", version: 1, etag: nil))
    #expect(outcome.uploaded)
    let put = try #require(transport.sent.last)
    #expect(put.header("If-Match") == "e2")
    #expect(String(decoding: put.body, as: UTF8.self) == "a\nb\nc")
}

@Test func aKeptCopyIsNotUsedBesideADuplicate() throws {
    // F1 matches the copy, but F2's items must be merged in and F2 deleted: the full path.
    let files = [
        #"{"id":"F1","name":"habit-backup.json","version":"1","md5Checksum":"\#(md5("a"))","createdTime":"2026-01-01T00:00:00.000Z"}"#,
        #"{"id":"F2","name":"habit-backup.json","createdTime":"2026-01-02T00:00:00.000Z"}"#,
    ]
    let transport = ScriptedTransport(
        [answer(200, #"{"files":[\#(files.joined(separator: ","))]}"#)]
            + remote("F2", etag: "x", "c") + remote("F1", etag: "e1", "a") + [updated, answer(204)])
    let outcome = try backup(transport).backup(lines("b"), kept: kept("a", version: 1, etag: "e1"))
    #expect(outcome.deletedDuplicates == ["F2"])
    #expect(transport.sent.filter { $0.query("alt") == "media" }.count == 2)
}
