import BackupKit
import Foundation
import TestSupport
import Testing

/// FORMAT.md §2.4: version 4 keeps day logs under a tombstone. They read, write and merge like any
/// day log, count for no streak, and are what version 3 cannot hold.
@Suite struct SchemaFourTests {
    static func example(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: Paths.file("Examples/\(name)")))
    }

    /// The laptop (schema 4) keeps the run's day logs under its tombstone.
    static func laptop() throws -> BackupDocument {
        try BackupReader.read(try example("laptop.json")).document
    }

    @Test func aSchemaThreeFileMayNotKeepADayLogUnderATombstone() throws {
        let bytes = try [UInt8](
            Data(contentsOf: Paths.file("Examples/invalid/v3-day-log-under-tombstone.json")))
        #expect(throws: BackupFileError.self) { try BackupReader.read(bytes) }
        do {
            _ = try BackupReader.read(bytes)
        } catch {
            guard case .invalid(let issues) = error else {
                Issue.record("expected invalid, got \(error)")
                return
            }
            #expect(issues.count == 1)
            #expect(issues.first?.message.contains("schema 3 keeps no day logs") == true)
            #expect(issues.first?.message.contains("schemaVersion 4") == true)
        }
        // The same document as version 4 is valid.
        let asFour = String(decoding: bytes, as: UTF8.self).replacingOccurrences(
            of: #""schemaVersion": 3"#, with: #""schemaVersion": 4"#)
        let read = try BackupReader.read(Array(asFour.utf8))
        #expect(read.sourceVersion == 4)
        #expect(read.document.keptDayLogCount == 1)
    }

    /// `migrate --schema 3`: the kept day logs go, nothing else, and the bytes read as a
    /// valid version 3; written as 4 they are the same but for the number.
    @Test func droppingKeptDayLogsMakesAValidVersionThree() throws {
        let laptop = try Self.laptop()
        #expect(laptop.keptDayLogCount == 8)
        let (three, dropped) = laptop.droppingKeptDayLogs()
        #expect(dropped == 8)
        #expect(three.dayLogs.count == laptop.dayLogs.count - 8)
        #expect(three.challenges == laptop.challenges)
        #expect(three.tombstones == laptop.tombstones)
        #expect(three.keptDayLogCount == 0)
        let bytes = BackupWriter.write(three, schema: .version3)
        let read = try BackupReader.read(bytes)
        #expect(read.sourceVersion == 3)
        #expect(read.document == three)
        // Written as version 3 with its kept logs, the file would not read: the writer's
        // caller must drop them first.
        #expect(throws: BackupFileError.self) {
            try BackupReader.read(BackupWriter.write(laptop, schema: .version3))
        }
    }

    @Test func aMergeResultWithKeptDayLogsIsValidAndTheValidatorStillWantsAChallenge() throws {
        var laptop = try Self.laptop()
        #expect(BackupValidator.validate(laptop) == [])
        // Without its tombstone, a kept log names nothing.
        let run = try #require(laptop.tombstones.first { $0.id.rawValue.hasSuffix("0003") })
        laptop.tombstones.removeAll { $0.id == run.id }
        let issues = BackupValidator.validate(laptop)
        #expect(issues.count == 8)
        #expect(issues.allSatisfy { $0.message.contains("live or deleted") })
    }

    /// The phone (schema 3) still has the run live with its logs; the laptop deleted it and
    /// kept them. Either way round, the merge keeps all eight under the tombstone.
    @Test func thePhoneAndTheLaptopKeepTheRunsLogsUnderItsTombstone() throws {
        let laptop = try Self.laptop()
        let phone = try BackupReader.read(try Self.example("phone.json")).document
        let now = try #require(Timestamp("2026-11-30T12:00:00Z"))
        for (local, incoming) in [(phone, laptop), (laptop, phone)] {
            let outcome = merge(local: local, incoming: incoming, options: MergeOptions(now: now))
            #expect(outcome.report.dayLogs.keptUnderTombstone == 8)
            #expect(outcome.report.dayLogs.droppedOrphans == 0)
            #expect(outcome.document.keptDayLogCount == 8)
        }
    }

    /// Streaks are per challenge; a kept log belongs to none, so it changes no report.
    @Test func streaksIgnoreKeptDayLogs() throws {
        let laptop = try Self.laptop()
        let today = DayKey(dayNumber: 20_786)  // 2026-11-29
        let reports = Streaks.reports(for: laptop, today: today, skippedDays: [])
        let without = Streaks.reports(
            for: laptop.droppingKeptDayLogs().document, today: today, skippedDays: [])
        #expect(reports == without)
        #expect(Set(reports.map(\.challengeID)) == Set(laptop.challenges.map(\.id)))
    }
}
