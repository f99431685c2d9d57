import BackupKit
import Foundation
import TestSupport
import Testing

/// The library example runs and gives what its text promises, BackupKit's DocC article (Using
/// BackupKit in your app) shows exactly the example the tests run, and the README links there.
@Suite struct LibraryExampleTests {
    static func lines(of relative: String) throws -> [Substring] {
        try String(contentsOf: Paths.file(relative), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false)
    }

    @Test func theExampleMergesTheTwoShippedDevices() throws {
        let phone = Array(try Data(contentsOf: Paths.file("Examples/phone.json")))
        let laptop = Array(try Data(contentsOf: Paths.file("Examples/laptop.json")))
        let now = try #require(Timestamp("2026-11-29T22:14:03.120Z"))
        let today = try #require(DayKey("2026-11-29"))
        let result = try sync(mine: phone, theirs: laptop, now: now, today: today)

        // What the example returns is what BackupKit's parts give on their own.
        let expected = merge(
            local: try BackupReader.read(phone).document,
            incoming: try BackupReader.read(laptop).document, options: MergeOptions(now: now))
        #expect(result.report == expected.report)
        #expect(result.saved == BackupWriter.write(expected.document))
        #expect(try BackupReader.read(result.saved).document == expected.document)
        let streaks = Streaks.reports(for: expected.document, today: today)
        #expect(result.streaks.count == Set(streaks.map(\.title)).count)
        #expect(!result.streaks.isEmpty)
        for report in streaks { #expect(result.streaks[report.title] != nil) }
        // The laptop brings something the phone lacks, so the merge is not a copy of either.
        #expect(result.saved != phone)
    }

    /// The lines between the example's markers in LibraryExample.swift.
    static func example() throws -> [Substring] {
        let file = try lines(of: "Tests/BackupKitTests/LibraryExample.swift")
        let begin = try #require(file.firstIndex(of: "// begin library example"))
        let end = try #require(file.firstIndex(of: "// end library example"))
        return Array(file[(begin + 1)..<end])
    }

    /// The lines of the first Swift code block after `heading` in the Markdown file at
    /// `relative`, `skipping` blocks first.
    static func swiftBlock(in relative: String, after heading: Substring, skipping: Int = 0)
        throws -> [Substring]
    {
        let text = try lines(of: relative)
        var open = try #require(text.firstIndex(of: heading))
        for _ in 0...skipping {
            open = try #require(text[(open + 1)...].firstIndex(of: "```swift"))
        }
        let close = try #require(text[(open + 1)...].firstIndex(of: "```"))
        return Array(text[(open + 1)..<close])
    }

    /// The README is for the tool's users: it shows no library code (a copy there could drift
    /// from the tested example) and sends app developers to the DocC article, which shows the
    /// example word for word (below).
    @Test func readmeLinksTheArticleThatShowsTheTestedExample() throws {
        let readme = try Self.lines(of: "README.md")
        #expect(!readme.contains { $0.hasPrefix("```swift") })
        #expect(
            readme.contains {
                $0.contains("(Sources/BackupKit/BackupKit.docc/UsingBackupKit.md)")
            })
    }

    @Test func theDocCArticleShowsTheTestedExample() throws {
        let shown = try Self.swiftBlock(
            in: "Sources/BackupKit/BackupKit.docc/UsingBackupKit.md",
            after: "### Sync another device's backup")
        #expect(shown == (try Self.example()))
    }
}
