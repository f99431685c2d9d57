import Foundation
import TestSupport
import Testing

/// Comments and the README cite `Schemas/FORMAT.md` by section; a citation of a section that
/// does not exist, or of the contract outside the repository, leaves a reader with nowhere to go.
@Suite struct FormatDocumentTests {
    /// The text files under the cited folders, with their repository-relative names.
    static func files(under folders: [String]) throws -> [(name: String, text: String)] {
        var found: [(String, String)] = []
        for folder in folders {
            let url = Paths.file(folder)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
                continue
            }
            let urls: [URL] =
                isFolder.boolValue
                ? (FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil)?
                    .compactMap { $0 as? URL } ?? []) : [url]
            // The schemas' descriptions are read by whoever opens a backup in an editor; the
            // tests' JSON is fixtures (some of it deliberately not UTF-8).
            let types = ["swift", "md", "py", "sh"] + (folder == "Schemas" ? ["json"] : [])
            for file in urls where types.contains(file.pathExtension) {
                found.append((file.path, try String(contentsOf: file, encoding: .utf8)))
            }
        }
        return found
    }

    static func anchors() throws -> Set<String> {
        let text = try String(contentsOf: Paths.file("Schemas/FORMAT.md"), encoding: .utf8)
        return Set(
            text.matches(of: /<a id="s([0-9.]+)"><\/a>/).map { String($0.output.1) })
    }

    @Test func everyCitedSectionExists() throws {
        let anchors = try Self.anchors()
        #expect(anchors.contains("5.1"))
        var missing: [String] = []
        for (name, text) in try Self.files(under: ["Sources", "Tests", "Schemas", "README.md"]) {
            for match in text.matches(
                of: /FORMAT\.md §([0-9]+(?:\.[0-9]+)?)((?:, ?§[0-9]+(?:\.[0-9]+)?)*)/)
            {
                let cited =
                    [String(match.output.1)]
                    + String(match.output.2).matches(of: /§([0-9.]*[0-9])/).map {
                        String($0.output.1)
                    }
                for section in cited where !anchors.contains(section) {
                    missing.append("\(name): §\(section)")
                }
            }
        }
        #expect(missing == [])
    }

    @Test func nothingShippedPointsAtTheContract() throws {
        let contract = "SPEC" + ".md"
        let offenders = try Self.files(under: ["Sources", "Schemas", "README.md"])
            .filter { $0.text.contains(contract) || $0.text.contains("SPEC" + " §") }
            .map(\.name)
        #expect(offenders == [])
    }
}
