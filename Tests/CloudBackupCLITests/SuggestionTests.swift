import Testing

@testable import CloudBackupCLI

/// The "did you mean" distance: near slips are named, different words are not.
@Suite struct SuggestionTests {
    static let words = ["backup", "restore", "login", "logout", "status", "--dry-run", "--json"]

    @Test(
        arguments: [
            ("bakup", "backup"),  // one letter left out
            ("bcakup", "backup"),  // two substitutions in six letters
            ("logni", nil),  // two edits is more than a third of five letters
            ("--dryrun", "--dry-run"),
            ("statsu", "status"),
            ("ls", nil),
            ("backup", nil),  // the word itself is not a suggestion
            ("--jsno", "--json"),
            ("frobnicate", nil),
        ] as [(String, String?)])
    func nearest(typed: String, expected: String?) {
        #expect(Suggestion.nearest(to: typed, among: Self.words) == expected)
    }

    @Test(arguments: [
        ("", "", 0), ("abc", "", 3), ("kitten", "sitting", 3), ("flaw", "lawn", 2),
    ])
    func editDistance(a: String, b: String, distance: Int) {
        #expect(Suggestion.editDistance(Array(a), Array(b)) == distance)
    }
}
