import BackupKit
import Foundation
import TestSupport
import Testing

/// Gzip read as the document it holds, end to end on the binary: files, standard input and
/// Drive's copy alike, whatever their names; what cannot be inflated is refused in one line.
@Suite final class GzipReadingTests {
    let folder: URL
    let phone = Paths.file("Examples/phone.json").path
    let laptop = Paths.file("Examples/laptop.json").path
    static let now = "2026-12-01T00:00:00Z"

    init() throws {
        folder = try Paths.temporaryFolder()
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// `gzip -n -c source` saved as `name` in the test's folder.
    func gzipped(_ source: String, as name: String) throws -> String {
        let output = folder.appendingPathComponent(name)
        let made = try run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "gzip -n -c \"$0\" > \"$1\"", source, output.path])
        try #require(made.status == 0, "\(made.stderr)")
        return output.path
    }

    /// `bytes` saved as `name` in the test's folder.
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// The content decides, not the name: `.json.gz` and gzip called `.json` read as the
    /// plain file does.
    @Test(arguments: ["phone.json.gz", "phone.json"])
    func filesCommandsReadGzipByContent(name: String) throws {
        let compressed = try gzipped(phone, as: name)
        let validate = try cloudbackup(["validate", "--verbose", compressed])
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(validate.stdout == "\(compressed): valid (schema 3, migrates to schema 4)\n")

        let plainInspect = try cloudbackup(["inspect", phone, "--now", Self.now])
        let inspect = try cloudbackup(["inspect", compressed, "--now", Self.now])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(
            inspect.stdout.replacingOccurrences(of: compressed, with: phone) == plainInspect.stdout)

        let plainOut = folder.appendingPathComponent("plain-out.json").path
        let out = folder.appendingPathComponent("out.json").path
        #expect(
            try cloudbackup(["merge", phone, laptop, "-o", plainOut, "--now", Self.now]).status
                == 0)
        let merge = try cloudbackup(["merge", compressed, laptop, "-o", out, "--now", Self.now])
        #expect(merge.status == 0, "\(merge.stderr)")
        // OUT not named *.gz is plain JSON, whatever merge read.
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: out))
                == Data(contentsOf: URL(fileURLWithPath: plainOut)))
    }

    @Test func standardInputMayBeGzip() throws {
        let compressed = try Data(contentsOf: URL(fileURLWithPath: gzipped(phone, as: "p.gz")))
        let result = try cloudbackup(["validate", "--verbose", "-"], stdin: compressed)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "<stdin>: valid (schema 3, migrates to schema 4)\n")
    }

    /// 10 MB of spaces in about 10 KB, at a 1 MB limit: refused while inflating, in one
    /// line, exit 3, and the output is neither written nor changed.
    @Test func aBombIsRefusedAndNothingIsWritten() throws {
        let bomb = try write(
            "bomb.json.gz", ReferenceTools.gzip([UInt8](repeating: 0x20, count: 10_000_000)))
        let out = folder.appendingPathComponent("out.json")
        let line =
            "cloudbackup: \(bomb): decompressed size is over the 1000000-byte limit; raise it with --max-bytes if the file is genuine\n"
        let merge = try cloudbackup(
            ["merge", bomb, laptop, "-o", out.path, "--max-bytes", "1000000", "--now", Self.now])
        #expect(merge.status == 3)
        #expect(merge.stderr == line)
        #expect(merge.stdout == "")
        #expect(!FileManager.default.fileExists(atPath: out.path))

        try Data("kept".utf8).write(to: out)
        let again = try cloudbackup(
            ["merge", laptop, bomb, "-o", out.path, "--max-bytes", "1000000", "--now", Self.now])
        #expect(again.status == 3)
        #expect(again.stderr == line)
        #expect(try Data(contentsOf: out) == Data("kept".utf8))

        let json = try cloudbackup(["validate", "--json", bomb, "--max-bytes", "1000000"])
        #expect(json.status == 3)
        #expect(json.stdout.contains("decompressed size is over the 1000000-byte limit"))
    }

    /// Cut short, damaged, or followed by more bytes: one line each, exit 3.
    @Test func aBrokenStreamIsRefusedInOneLine() throws {
        let compressed = try ReferenceTools.gzip(
            Array(Data(contentsOf: URL(fileURLWithPath: phone))))
        let cases = [
            (Array(compressed.dropLast(20)), "gzip stream is truncated or corrupt"),
            (compressed + Array("garbage".utf8), "trailing bytes after the gzip stream"),
            (compressed + compressed, "a second gzip stream follows the first"),
        ]
        for (bytes, words) in cases {
            let file = try write("broken.json.gz", bytes)
            let result = try cloudbackup(["validate", file])
            #expect(result.status == 3)
            #expect(result.stderr.hasPrefix("cloudbackup: \(file): \(words)"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
    }
}

/// Drive's copy may be gzip too: restore and backup read it as the document it holds.
@Suite(.serialized) final class GzipRemoteTests {
    let emulator: Emulator
    let laptop: BackupMachine

    init() throws {
        emulator = try Emulator()
        laptop = try BackupMachine(emulator)
        try laptop.login()
        let phone = backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"])
        try emulator.seedFile(
            name: "habit-backup.json", content: Data(ReferenceTools.gzip(Array(phone.utf8))))
        try laptop.write(
            backupJSON(device: "laptop", challenges: ["B": "2026-11-02T00:00:00.000Z"]))
    }

    @Test func restoreMergesAGzipBackup() throws {
        let result = try laptop.run(
            ["restore", "--file", laptop.state.path, "--merge", "--now", BackupMachine.now])
        #expect(result.status == 0, "\(result.stderr)")
        let state = try BackupReader.read(Array(Data(contentsOf: laptop.state))).document
        #expect(challengeIDs(state) == ["A", "B"])
    }

    /// A copy on Drive that inflates past the limit judges nothing: refused in one line,
    /// never kept aside and replaced.
    @Test func aGzipBombOnDriveIsRefusedNotReplaced() throws {
        try emulator.reset()
        try laptop.login()
        let bomb = try ReferenceTools.gzip([UInt8](repeating: 0x20, count: 10_000_000))
        let seeded = try emulator.seedFile(name: "habit-backup.json", content: Data(bomb))
        let result = try laptop.backup(["--max-bytes", "1000000"])
        #expect(result.status == 3)
        #expect(
            result.stderr
                == "cloudbackup: Drive file habit-backup.json (id \(seeded.id)): decompressed size is over the 1000000-byte limit; raise it with --max-bytes if the file is genuine\n"
        )
        let files = try emulator.files().filter(\.isInAppFolder)
        #expect(files.map(\.content) == [Data(bomb)])
    }

    /// Backup merges into the gzip copy, and a profile that does not say "compress" uploads
    /// in the form the backup on Drive has: gzip, read back by the reference gunzip.
    @Test func backupMergesIntoAGzipBackup() throws {
        let result = try laptop.backup()
        #expect(result.status == 0, "\(result.stderr)")
        let files = try emulator.files().filter(\.isInAppFolder)
        try #require(files.count == 1)
        let uploaded = Array(files[0].content)
        #expect(uploaded.starts(with: [0x1f, 0x8b]))
        let document = try BackupReader.read(ReferenceTools.gunzip(uploaded, with: .python))
        #expect(challengeIDs(document.document) == ["A", "B"])
    }
}
