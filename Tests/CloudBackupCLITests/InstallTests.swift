import Foundation
import TestSupport
import Testing

private let make = "/usr/bin/make"

/// `make install` and `make uninstall`, as `make -n` says they would run: a real install
/// needs the release build, which is minutes more than the suite should take.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: make), "make is not installed"))
struct InstallTests {
    /// Where each file goes under PREFIX, in the folders man and the shells look in.
    static let layout = [
        "bin/cloudbackup", "share/man/man1/cloudbackup.1",
        "share/bash-completion/completions/cloudbackup", "share/zsh/site-functions/_cloudbackup",
        "share/fish/vendor_completions.d/cloudbackup.fish",
    ]

    private func dryRun(_ target: String) throws -> [String] {
        let result = try run(
            URL(fileURLWithPath: make),
            [
                "-n", "--no-print-directory", "-C", Paths.root.path, target, "PREFIX=/x",
                "DESTDIR=/d",
            ],
            environment: ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func installPutsEachFileUnderDestdirAndPrefix() throws {
        let lines = try dryRun("install")
        // `install -D -m MODE SOURCE "DEST"`: the destinations, in order, and their modes.
        let installs = lines.filter { $0.hasPrefix("install -D -m ") }.map {
            $0.split(separator: " ").map { String($0).trimmingCharacters(in: ["\""]) }
        }
        #expect(installs.map { $0.last ?? "" } == Self.layout.map { "/d/x/" + $0 })
        #expect(installs.map { $0[3] } == ["755", "644", "644", "644", "644"])
        // The release binary, and the page and scripts it generates itself.
        #expect(lines.contains { $0.hasPrefix("swift build -c release") })
        #expect(installs.first?[4] == ".build/release/cloudbackup")
        #expect(lines.contains { $0.contains(".build/release/cloudbackup manpage > ") })
        #expect(lines.contains { $0.contains(".build/release/cloudbackup completion $shell > ") })
    }

    @Test func uninstallRemovesExactlyWhatInstallWrote() throws {
        let lines = try dryRun("uninstall")
        #expect(lines.count == 1)
        let removal = try #require(lines.first?.firstRange(of: "rm -f ")?.upperBound)
        let removed = try #require(lines.first)[removal...].prefix { $0 != ";" }
        #expect(removed.split(separator: " ").map(String.init) == Self.layout)
        #expect(lines.first?.contains(#"cd "/d/x""#) == true)
    }
}
