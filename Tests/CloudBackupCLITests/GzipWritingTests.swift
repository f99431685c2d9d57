import BackupKit
import Foundation
import TestSupport
import Testing

/// An output named `*.gz` is written as gzip: the same bytes as the plain output once
/// inflated, and the same file every time (no time or name in the header).
@Suite final class GzipWritingTests {
    let folder: URL
    let phone = Paths.file("Examples/phone.json").path
    let laptop = Paths.file("Examples/laptop.json").path

    init() throws {
        folder = try Paths.temporaryFolder()
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func bytes(_ path: String) throws -> [UInt8] {
        try Array(Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The command's arguments with OUT in place of `-o`'s value, run for `out.json` and
    /// for `out.json.gz` twice: gzip the second time, `gzip -d` giving the first's bytes,
    /// and the third run the second's bytes exactly.
    @Test(arguments: [
        ["migrate", Paths.file("Examples/phone.json").path, "-o"],
        [
            "merge", Paths.file("Examples/phone.json").path,
            Paths.file("Examples/laptop.json").path, "--now", "2026-12-01T00:00:00Z", "-o",
        ],
    ])
    func anOutNamedGzIsGzip(command: [String]) throws {
        let plain = try cloudbackup(command + [path("out.json")])
        #expect(plain.status == 0, "\(plain.stderr)")
        let compressed = try cloudbackup(command + [path("out.json.gz")])
        #expect(compressed.status == 0, "\(compressed.stderr)")
        let gzip = try bytes(path("out.json.gz"))
        #expect(gzip.starts(with: [0x1F, 0x8B]))
        #expect(try ReferenceTools.gunzip(gzip, with: .command) == bytes(path("out.json")))

        let again = try cloudbackup(command + [path("out.json.gz")])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try bytes(path("out.json.gz")) == gzip)
    }
}

/// Restore writes STATE as gzip when its name ends in `.gz`, and reads it back as such.
@Suite final class GzipRestoreTests {
    @Test func aStateNamedGzIsWrittenAsGzip() throws {
        let emulator = try Emulator()
        let laptop = try BackupMachine(emulator)
        try laptop.login()
        let phone = backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"])
        try emulator.seedFile(name: "habit-backup.json", content: Data(phone.utf8))
        let state = laptop.folder.appendingPathComponent("state.json.gz")
        let result = try laptop.run(
            ["restore", "--file", state.path, "--replace", "--yes", "--now", BackupMachine.now])
        #expect(result.status == 0, "\(result.stderr)")
        let written = try Array(Data(contentsOf: state))
        #expect(written.starts(with: [0x1F, 0x8B]))
        let document = try BackupReader.read(ReferenceTools.gunzip(written, with: .python))
            .document
        #expect(challengeIDs(document) == ["A"])

        let again = try laptop.run(
            ["restore", "--file", state.path, "--merge", "--now", BackupMachine.now])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Array(Data(contentsOf: state)) == written)
    }
}
