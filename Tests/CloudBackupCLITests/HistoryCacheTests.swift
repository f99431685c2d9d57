import Foundation
import TestSupport
import Testing

@testable import CloudBackupCLI

/// `history-cache.json` keeps each revision's summary flat (export, device, counts side by
/// side), as it always has: a cache an earlier version wrote still reads, and is written back
/// in the same shape, so an upgrade never downloads every revision again.
@Suite struct HistoryCacheTests {
    static let earlier = #"""
        {"entries":{"0f3a":{"challenges":2,"dayLogs":7,"deviceId":"phone","exportedAt":"2026-11-29T22:14:03.989Z","keptDayLogs":1,"tombstones":3}}}
        """#

    @Test func anEarlierCacheReadsAndIsWrittenBackInItsShape() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("history-cache.json").path
        try Data(Self.earlier.utf8).write(to: URL(fileURLWithPath: path))

        let cache = try #require(HistoryCache.load(from: path))
        let summary = try #require(cache.entries["0f3a"])
        #expect(summary.exportedAt == "2026-11-29T22:14:03.989Z")
        #expect(summary.deviceId == "phone")
        #expect(
            summary.counts
                == DocumentCounts(challenges: 2, dayLogs: 7, keptDayLogs: 1, tombstones: 3))

        try cache.save(to: path)
        let written = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: path)))
        let earlier = try JSONSerialization.jsonObject(with: Data(Self.earlier.utf8))
        #expect((written as? NSDictionary) == (earlier as? NSDictionary))
    }
}
