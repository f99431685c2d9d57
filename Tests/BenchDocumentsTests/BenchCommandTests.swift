import BackupKit
import Foundation
import TestSupport
import Testing

/// `backup-bench`, the timed half of `make bench`, run on a small pair: each subcommand does
/// its job on the files bench.py gives it and reports what it did. What it measures is not
/// checked here (timing lives in `make bench`), only that the runs happen and the work is the
/// real one.
@Suite struct BenchCommandTests {
    static var bench: URL {
        Paths.binary.deletingLastPathComponent().appendingPathComponent("backup-bench")
    }

    static func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try run(bench, arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        let line = try #require(result.stdout.split(separator: "\n").last)
        return try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func eachStepDoesItsJobAsOftenAsAsked() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // 8,000 day logs make a file over 1 MB, which the reader splits over two cores.
        let generated = try run(
            Self.bench, ["generate", "--seed", "3", "--day-logs", "8000", "-o", folder.path])
        #expect(generated.status == 0)
        let phone = folder.appendingPathComponent("phone.json").path
        let laptop = folder.appendingPathComponent("laptop.json").path
        let phoneBytes = try Self.bytes(phone)
        let document = try BackupReader.read(phoneBytes).document

        let read = try Self.json(["read", phone, "--runs", "3", "--budget-ms", "1"])
        #expect((read["seconds"] as? [Double])?.count == 3)
        #expect(read["dayLogs"] as? Int == document.dayLogs.count)
        let freshPages = try #require(read["freshPages"] as? Double)
        #expect(freshPages >= 0)
        // Every clock started with the earlier results wholly freed, in both threads' arenas.
        #expect(read["unfoldedBytes"] as? Int == 0)

        let write = try Self.json(["write", phone, "--runs", "2"])
        #expect((write["seconds"] as? [Double])?.count == 2)
        #expect(write["identical"] as? Bool == true)

        let output = folder.appendingPathComponent("merged.json").path
        let merged = try Self.json(["merge", phone, laptop, "-o", output])
        let incoming = try BackupReader.read(try Self.bytes(laptop)).document
        let expected = BackupWriter.write(
            BackupKit.merge(
                local: document, incoming: incoming,
                options: MergeOptions(now: max(document.exportedAt, incoming.exportedAt))
            ).document)
        #expect(try Self.bytes(output) == expected)
        #expect(merged["bytes"] as? Int == expected.count)

        // The size cost of kept day logs: the merged file against itself without them,
        // written as schema 3 (which the bytes read back as).
        let cost = try Self.json(["keptcost", phone, laptop])
        let result = try BackupReader.read(expected).document
        let kept = result.keptDayLogCount
        #expect(kept > 0)
        #expect(cost["keptDayLogs"] as? Int == kept)
        #expect(cost["bytes"] as? Int == expected.count)
        let without = BackupWriter.write(result.droppingKeptDayLogs().document, schema: .version3)
        #expect(cost["bytesWithoutKept"] as? Int == without.count)
        #expect(try BackupReader.read(without).sourceVersion == 3)
        #expect(cost["tombstones"] as? Int == result.tombstones.count)
    }
}
