import Foundation
import TestSupport
import Testing

/// The JSON Schemas in `Schemas/`, run by a real validator (Python's `jsonschema`, through
/// `Tests/schema_check.py`), agree with the fixture table `Examples/invalid/EXPECTED.tsv`:
/// every example passes its version's schema; every fixture whose rule a schema can express
/// fails at that rule's pointer; and every fixture whose rule is beyond JSON Schema passes it,
/// which shows both that the schema is no stricter than the spec and that the fixture breaks
/// nothing else.
@Suite struct SchemaAgreementTests {
    struct Verdict: Decodable, Sendable {
        var file: String
        var valid: Bool
        var errors: [String]
        var syntax: String?
    }

    struct CheckerFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// One run for the whole suite: starting Python and loading the schemas per file would
    /// cost far more than validating.
    static let verdicts: Result<[String: Verdict], CheckerFailure> = runChecker()

    static func runChecker() -> Result<[String: Verdict], CheckerFailure> {
        let script = Paths.file("Tests/schema_check.py").path
        let result: RunResult
        do {
            result = try run(URL(fileURLWithPath: Paths.python), [script])
        } catch {
            return .failure(CheckerFailure(description: "cannot start \(Paths.python): \(error)"))
        }
        guard result.status == 0 else {
            return .failure(
                CheckerFailure(
                    description: "schema_check.py exited \(result.status) (is jsonschema "
                        + "installed? `make venv`): \(result.stderr)"))
        }
        var verdicts: [String: Verdict] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let verdict = try? JSONDecoder().decode(Verdict.self, from: Data(line.utf8))
            else {
                return .failure(CheckerFailure(description: "unreadable checker line: \(line)"))
            }
            verdicts[verdict.file] = verdict
        }
        return .success(verdicts)
    }

    static func verdict(for url: URL) throws -> Verdict {
        let relative = String(url.standardizedFileURL.path.dropFirst(Paths.root.path.count + 1))
        let verdicts = try verdicts.get()
        return try #require(verdicts[relative], "schema_check.py did not report \(relative)")
    }

    /// The same place, or one step apart: a validator reports an unknown or missing member
    /// at the object that holds it, and a bad key at the map, while BackupKit names the member.
    static func isSameOrAdjacent(_ reported: String, _ expected: String) -> Bool {
        func parent(_ pointer: String) -> String? {
            pointer.lastIndex(of: "/").map { String(pointer[..<$0]) }
        }
        return reported == expected || parent(reported) == expected || parent(expected) == reported
    }

    @Test func tableNamesEveryInvalidFileOnce() throws {
        let rows = try ExampleFiles.invalid()
        let files = try ExampleFiles.invalidFiles().map(\.lastPathComponent)
        #expect(rows.map(\.file).sorted() == files)
        #expect(Set(rows.map(\.file)).count == rows.count)
        #expect(rows.count >= 34)
        #expect(rows.allSatisfy { $0.exitCode == 3 || $0.exitCode == 7 })
    }

    /// The fixtures and their table come from one script; a hand edit to one of them would
    /// let the two drift apart.
    @Test func examplesAreWhatTheGeneratorWrites() throws {
        let script = Paths.file("Examples/tools/make_examples.py").path
        let result = try run(URL(fileURLWithPath: Paths.python), [script, "--check"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test(arguments: try ExampleFiles.valid())
    func examplePassesItsSchema(_ file: URL) throws {
        let verdict = try Self.verdict(for: file)
        #expect(
            verdict.valid, "\(file.lastPathComponent): \(verdict.errors) \(verdict.syntax ?? "")")
    }

    @Test(arguments: try ExampleFiles.invalid().filter(\.schemaCanExpress))
    func schemaRejectsAtTheExpectedPointer(_ example: InvalidExample) throws {
        let expected = try #require(example.pointer, "a syntax error is beyond JSON Schema")
        let verdict = try Self.verdict(for: example.url)
        #expect(!verdict.valid)
        #expect(
            verdict.errors.contains { Self.isSameOrAdjacent($0, expected) },
            "expected \(expected), schema said \(verdict.errors)")
    }

    @Test(
        arguments: try ExampleFiles.invalid().filter { !$0.schemaCanExpress && $0.pointer != nil })
    func schemaCannotSeeTheBrokenRule(_ example: InvalidExample) throws {
        let verdict = try Self.verdict(for: example.url)
        #expect(verdict.valid, "schema said \(verdict.errors) \(verdict.syntax ?? "")")
    }

    @Test func adjacentPointers() {
        #expect(Self.isSameOrAdjacent("/settings", "/settings/reminderTime"))
        #expect(Self.isSameOrAdjacent("", "/comment"))
        #expect(Self.isSameOrAdjacent("/a/b/c", "/a/b"))
        #expect(!Self.isSameOrAdjacent("/a", "/a/b/c"))
        #expect(!Self.isSameOrAdjacent("/settings/theme", "/settings/reminderTime"))
    }
}
