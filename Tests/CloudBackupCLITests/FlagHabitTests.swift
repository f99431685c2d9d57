import Foundation
import TestSupport
import Testing

/// The flags people try first: the version, a typo's nearest option even when a required
/// option is missing, and `-q` wherever a command prints results.
@Suite struct FlagHabitTests {
    let valid = Paths.file("Tests/BackupKitTests/Fixtures/v3-example.json").path

    @Test(arguments: [["--version"], ["-V"], ["version"]])
    func theVersionHasEveryUsualSpelling(arguments: [String]) throws {
        let result = try cloudbackup(arguments)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("cloudbackup "), "\(result.stdout)")
        #expect(result.stderr.isEmpty)
    }

    @Test func aMistypedVersionFlagIsToldTheNearest() throws {
        let result = try cloudbackup(["--versoin"])
        #expect(result.status == 2)
        #expect(
            result.stderr.hasPrefix(
                "cloudbackup: unknown option '--versoin'; did you mean '--version'?\n"),
            "\(result.stderr)")
    }

    /// The typo is named before the missing option it was meant to be.
    @Test(arguments: [
        (["backup", "--fiel", "x"], "unknown option '--fiel'; did you mean '--file'?"),
        (["restore", "--merge", "--fil=x"], "unknown option '--fil=x'; did you mean '--file'?"),
        (
            ["migrate", "x.json", "--ouput", "y"],
            "unknown option '--ouput'; did you mean '--output'?"
        ),
        // An option the command takes but has not read yet is no typo.
        (["backup", "--now", "2026-11-30T12:00:00Z"], "--file STATE is required"),
    ])
    func aTypoComesBeforeTheMissingOption(arguments: [String], says: String) throws {
        let result = try cloudbackup(arguments)
        #expect(result.status == 2)
        #expect(
            result.stderr.components(separatedBy: "\n").first == "cloudbackup: " + says,
            "\(result.stderr)")
    }

    /// `-q` leaves the outcome to the exit status: nothing on stdout, for a valid file and
    /// an invalid one alike.
    @Test(arguments: [
        ["validate", "-q", "FILE"], ["inspect", "FILE", "-q"], ["verify", "FILE", "-q"],
        ["inspect", "FILE", "--json", "--quiet"],
    ])
    func quietPrintsNothingAndTheStatusTells(arguments: [String]) throws {
        let loud = try cloudbackup(
            arguments.filter { $0 != "-q" && $0 != "--quiet" }.map { $0 == "FILE" ? valid : $0 })
        #expect(loud.status == 0)
        let result = try cloudbackup(arguments.map { $0 == "FILE" ? valid : $0 })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.isEmpty)
        let broken = try cloudbackup(arguments.map { $0 == "FILE" ? "/nonexistent.json" : $0 })
        #expect(broken.status == 3)
        #expect(broken.stdout.isEmpty)
        #expect(broken.stderr.contains("/nonexistent.json"))
    }

    /// `merge -q -o -`: the document alone on stdout, and no report on stderr either.
    @Test func aQuietMergeToStandardOutputWritesTheDocumentAlone() throws {
        let result = try cloudbackup([
            "merge", valid, valid, "-o", "-", "-q", "--now", "2026-11-30T12:00:00Z",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) is [String: Any])
    }

    @Test(arguments: [
        ["validate", "x"], ["migrate", "x", "-o", "y"], ["status"], ["history"],
        ["restore", "--file", "x", "--merge"], ["rollback", "--file", "x", "--revision", "r"],
    ])
    func quietAndVerboseExcludeEachOther(command: [String]) throws {
        let result = try cloudbackup(command + ["-q", "-v"])
        #expect(result.status == 2)
        #expect(
            result.stderr.hasPrefix("cloudbackup: --quiet and --verbose exclude each other\n"),
            "\(result.stderr)")
    }
}

/// `--json` on `validate` and `migrate`: what a script needs, without parsing sentences.
@Suite struct FileCommandJSONTests {
    let valid = Paths.file("Tests/BackupKitTests/Fixtures/v3-example.json").path
    let notABackup = Paths.file("Tests/CloudBackupCLITests/Fixtures/not-a-backup.json").path

    private func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func validateGivesEachFilesVerdictAndItsProblemsWhereTheyAre() throws {
        let folder = try Paths.temporaryFolder()
        let truncated = folder.appendingPathComponent("truncated.json").path
        try Data(#"{"format":"x""#.utf8).write(to: URL(fileURLWithPath: truncated))
        let result = try cloudbackup(["validate", "--json", valid, truncated, notABackup])
        #expect(result.status == 3)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let files = try #require(try object(result.stdout)["files"] as? [[String: Any]])
        try #require(files.count == 3)
        #expect(files[0]["file"] as? String == valid)
        #expect(files[0]["valid"] as? Bool == true)
        #expect(files[0]["schemaVersion"] as? Int == 3)
        #expect(files[1]["valid"] as? Bool == false)
        #expect(files[1]["exitCode"] as? Int == 3)
        let syntax = try #require((files[1]["problems"] as? [[String: Any]])?.first)
        #expect(syntax["line"] as? Int == 1)
        #expect(syntax["column"] as? Int == 14)
        // A syntax error breaks JSON, not a rule of the format: it names none.
        #expect(syntax["rule"] == nil)
        let problems = try #require(files[2]["problems"] as? [[String: Any]])
        #expect(problems.first?["pointer"] as? String == "/exportedAt")
        #expect(problems.first?["rule"] as? String == "3.6")
        #expect(problems.first?["message"] as? String == "is required")
        // Each missing field breaks FORMAT.md §3.6, required fields.
        #expect(problems.allSatisfy { $0["rule"] as? String == "3.6" }, "\(problems)")
    }

    @Test func migrateSaysFromWhichVersionToWhichAndWhatWasLeftOut() throws {
        let out = try Paths.temporaryFolder().appendingPathComponent("out.json").path
        let result = try cloudbackup(["migrate", valid, "-o", out, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try object(result.stdout)
        #expect(summary["file"] as? String == valid)
        #expect(summary["output"] as? String == out)
        #expect(summary["fromSchema"] as? Int == 3)
        #expect(summary["toSchema"] as? Int == 4)
        #expect(summary["droppedKeptDayLogs"] as? Int == 0)
        // With OUT on stdout, the object goes to stderr and stdout holds the document alone.
        let piped = try cloudbackup(["migrate", valid, "-o", "-", "--json"])
        #expect(try object(piped.stderr)["output"] as? String == "<stdout>")
        #expect(try object(piped.stdout)["schemaVersion"] as? Int == 4)
    }
}
