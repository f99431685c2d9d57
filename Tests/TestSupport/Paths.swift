import Foundation

/// Where things are, found from this file's own path so tests run from any folder.
public enum Paths {
    /// The repository root.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// A file under the repository root, e.g. `Paths.file("Examples/phone.json")`.
    public static func file(_ relative: String) -> URL {
        root.appendingPathComponent(relative)
    }

    /// The `cloudbackup` binary built beside the test bundle (same configuration).
    public static var binary: URL {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return testBinary.deletingLastPathComponent().appendingPathComponent("cloudbackup")
    }

    /// The Python the Makefile prepared (with jsonschema), else the system's.
    public static var python: String {
        ProcessInfo.processInfo.environment["CLOUDBACKUP_PYTHON"]
            ?? (FileManager.default.isExecutableFile(atPath: file(".venv/bin/python").path)
                ? file(".venv/bin/python").path : "/usr/bin/python3")
    }

    /// A fresh temporary folder, removed by the caller with `FileManager.removeItem`.
    public static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("cloudbackup-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
