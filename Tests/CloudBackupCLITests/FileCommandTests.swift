import BackupKit
import Foundation
import LocalFiles
import TestSupport
import Testing

/// End to end: the built binary on backup files, checking stdout, stderr and exit codes.
@Suite final class FileCommandTests {
    let folder: URL
    let valid: String

    init() throws {
        folder = try Paths.temporaryFolder()
        valid = Paths.file("Tests/BackupKitTests/Fixtures/v3-example.json").path
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Writes `text` to a file in the test's folder and returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func example(replacing old: String, with new: String) throws -> String {
        let text = try String(contentsOfFile: valid, encoding: .utf8)
        try #require(text.contains(old))
        return text.replacingOccurrences(of: old, with: new)
    }

    @Test func validateIsSilentOnSuccess() throws {
        let result = try cloudbackup(["validate", valid])
        #expect(result.status == 0)
        #expect(result.stdout == "")
        #expect(result.stderr == "")
    }

    @Test func validateVerboseSaysValidAndNotesMisfits() throws {
        let file = try write(
            "outside.json",
            example(replacing: "001/2026-03-08", with: "001/2026-04-08").replacingOccurrences(
                of: #""water": 8 }"#, with: #""water": 8, "run": 1 }"#))
        let result = try cloudbackup(["validate", "--verbose", file])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                \(file): valid (schema 3, migrates to schema 4)
                \(file): /dayLogs/0193a5b2-0001-7000-8000-000000000001~12026-04-08: note: 2026-04-08 is outside the challenge's days (2026-03-01…2026-03-30); kept, not counted
                \(file): /dayLogs/0193a5b2-0001-7000-8000-000000000001~12026-04-08/values/run: note: task run is not in the challenge; kept, not counted

                """)
        #expect(result.stderr == "")
    }

    /// A schema-1 file has no /dayLogs: its notes point into the migrated document, and the
    /// line says so (validate), or names the migrated file (migrate).
    @Test func notesOfAnOlderFileSayWhereTheyPoint() throws {
        let text = try String(
            contentsOfFile: Paths.file("Examples/old-v1.json").path, encoding: .utf8)
        let old = #""challengeId": "pushups-2025",\#n      "date": "2025-01-02""#
        try #require(text.components(separatedBy: old).count == 2)
        let file = try write(
            "old.json",
            text.replacingOccurrences(
                of: old, with: #""challengeId": "pushups-2025",\#n      "date": "2025-02-02""#))
        let note =
            "/dayLogs/pushups-2025~12025-02-02: note: 2025-02-02 is outside the challenge's days (2025-01-01…2025-01-31); kept, not counted"
        let validated = try cloudbackup(["validate", "--verbose", file])
        #expect(validated.status == 0)
        #expect(
            validated.stdout
                == "\(file): valid (schema 1, migrates to schema 4)\n\(file) (as schema 4): \(note)\n"
        )
        let output = folder.appendingPathComponent("new.json").path
        let migrated = try cloudbackup(["migrate", "--verbose", file, "-o", output])
        #expect(migrated.status == 0)
        #expect(migrated.stdout.hasSuffix("\n\(output): \(note)\n"))
    }

    @Test func validateReportsEveryProblemOfEveryFileAndExitsWithTheHighestCode() throws {
        let invalid = try write(
            "invalid.json",
            example(replacing: #""target": 6"#, with: #""target": 0"#).replacingOccurrences(
                of: #""mood": 4"#, with: #""mood": 9"#))
        let newer = try write("newer.json", #"{"format":"habit-backup","schemaVersion":5}"#)
        let broken = try write("broken.json", "{\n  \"format\": \"habit-backup\",\n}\n")
        let missing = folder.appendingPathComponent("missing.json").path
        let result = try cloudbackup(["validate", invalid, valid, newer, broken, missing])
        #expect(result.status == 7)
        #expect(result.stdout == "")
        #expect(
            result.stderr == """
                cloudbackup: \(invalid): /challenges/0193a5b2-0001-7000-8000-000000000001/tasks/water/rules/0/target: must be 1…9999, not 0
                cloudbackup: \(invalid): /dayLogs/0193a5b2-0001-7000-8000-000000000001~12026-03-08/mood: must be null or 1…5, not 9
                cloudbackup: \(newer): written by a newer version (schema 5); update cloudbackup
                cloudbackup: \(broken):3:1: trailing comma before '}'
                cloudbackup: \(missing): cannot open: No such file or directory

                """)
    }

    /// A file's name is shown on one line, without the terminal escapes it may hold.
    @Test func aFileNameWithControlCharactersStaysOnOneLine() throws {
        let file = try write(
            "bad\nname\u{1B}[31m.json", example(replacing: #""target": 6"#, with: #""target": 0"#))
        let result = try cloudbackup(["validate", file])
        #expect(result.status == 3)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "\(result.stderr)")
        #expect(lines[0].contains("bad\\u000Aname\\u001B[31m.json: /challenges/"))
        #expect(!result.stderr.contains("\u{1B}"))
    }

    @Test func validateOfInvalidFilesOnlyExitsThree() throws {
        let other = try write("other.json", #"{"foo":1}"#)
        let result = try cloudbackup(["validate", other])
        #expect(result.status == 3)
        #expect(
            result.stderr
                == "cloudbackup: \(other): not a habit backup: it has no \"format\": \"habit-backup\" and no \"schemaVersion\"\n"
        )
    }

    @Test func maxBytesIsConfigurable() throws {
        let refused = try cloudbackup(["validate", "--max-bytes", "100", valid])
        #expect(refused.status == 3)
        #expect(
            refused.stderr
                == "cloudbackup: \(valid): the file is over the 100-byte limit; raise it with --max-bytes if the file is genuine\n"
        )
        #expect(try cloudbackup(["validate", "--max-bytes=100000", valid]).status == 0)
        let bad = try cloudbackup(["validate", "--max-bytes", "lots", valid])
        #expect(bad.status == 2)
        #expect(
            bad.stderr.hasPrefix(
                "cloudbackup: --max-bytes expects a positive number of bytes, not 'lots'\n"))
    }

    @Test func validateWithoutFilesIsAUsageError() throws {
        let result = try cloudbackup(["validate"])
        #expect(result.status == 2)
        #expect(
            result.stderr == """
                cloudbackup: missing <FILE>
                usage: cloudbackup validate FILE... [--json] [--quiet | --verbose] [--max-bytes N]

                """)
    }

    @Test func inspectShowsVersionOriginAndCounts() throws {
        let result = try cloudbackup(["inspect", valid, "--now", "2026-11-30T01:14:04Z"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                file:        \(valid)
                schema:      3 (shown migrated to schema 4)
                exported:    2026-11-29 22:14:03 +0000 (3 hours ago)
                device:      0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a
                challenges:  1
                live tasks:  1
                day logs:    1
                kept logs:   0 (under a tombstone; no streak counts them)
                tombstones:  1
                streaks:     as of 2026-11-29 (GMT, days start at 02:00)
                  30 days of water [0193a5b2-0001-7000-8000-000000000001]: finished
                    current 0 days, longest 1 day, completed 1 of 29 days (3.4%)

                """)
        #expect(result.stderr == "")
    }

    @Test func inspectOfAnOlderVersionSaysSo() throws {
        let file = Paths.file("Tests/BackupKitTests/Fixtures/v1.json").path
        let result = try cloudbackup(["inspect", file, "--now", "2026-03-10T10:00:00.500Z"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("schema:      1 (shown migrated to schema 4)\n"))
        #expect(
            result.stdout.contains(
                "exported:    2026-03-12 10:00:00 +0000 (in 2 days, ahead of this clock)\n"))
        #expect(result.stdout.contains("live tasks:  2\n"))
    }

    @Test func inspectJSON() throws {
        let result = try cloudbackup(["inspect", "--json", valid, "--now=2026-11-29T22:15:03.120Z"])
        #expect(result.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["schemaVersion"] as? Int == 3)
        #expect(object["exportedAt"] as? String == "2026-11-29T22:14:03.120Z")
        #expect(object["exportedMillisecondsAgo"] as? Int == 60_000)
        #expect(object["deviceId"] as? String == "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a")
        #expect(object["file"] as? String == valid)
        let counts = try #require(object["counts"] as? [String: Int])
        #expect(
            counts == [
                "challenges": 1, "liveTasks": 1, "dayLogs": 1, "keptDayLogs": 0, "tombstones": 1,
            ])
    }

    /// Day logs kept under a tombstone are counted on their own, and no streak counts them:
    /// the laptop keeps the run's eight logs under the run's tombstone.
    @Test func inspectCountsKeptDayLogsApart() throws {
        let laptop = Paths.file("Examples/laptop.json").path
        let now = "2026-11-29T22:15:03.120Z"
        let text = try cloudbackup(["inspect", laptop, "--now", now])
        #expect(text.status == 0)
        #expect(text.stdout.contains("\nschema:      4\n"))
        #expect(text.stdout.contains("\nday logs:    90\n"))
        #expect(
            text.stdout.contains("\nkept logs:   8 (under a tombstone; no streak counts them)\n"))
        #expect(!text.stdout.contains("[0193a5b2-0003-7000-8000-000000000003]"))
        let json = try cloudbackup(["inspect", "--json", laptop, "--now", now])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let counts = try #require(object["counts"] as? [String: Int])
        #expect(counts["dayLogs"] == 90)
        #expect(counts["keptDayLogs"] == 8)
    }

    @Test func inspectRejectsABadNow() throws {
        let result = try cloudbackup(["inspect", valid, "--now", "yesterday"])
        #expect(result.status == 2)
        #expect(
            result.stderr == """
                cloudbackup: --now expects an RFC 3339 UTC time such as 2026-11-29T22:14:03Z, not 'yesterday'
                usage: cloudbackup inspect FILE [--json] [--quiet] [--now T] [--today DAY | --at T] [--tz ZONE] [--max-bytes N]

                """)
    }

    @Test func migrateNeedsAnOutput() throws {
        let result = try cloudbackup(["migrate", valid])
        #expect(result.status == 2)
        #expect(
            result.stderr == """
                cloudbackup: missing -o OUT
                usage: cloudbackup migrate FILE -o OUT [--schema 3|4] [--pretty] [--json] [--quiet | --verbose] [--max-bytes N]

                """)
    }

    /// FORMAT.md §8.2: migrate is silent on success unless --verbose.
    @Test func migrateIsSilentUnlessVerbose() throws {
        let output = folder.appendingPathComponent("out.json").path
        let quiet = try cloudbackup(["migrate", valid, "-o", output])
        #expect(quiet.status == 0)
        #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty)
        let verbose = try cloudbackup(["migrate", valid, "-o", output, "--verbose"])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stdout.contains(valid + " (schema 3) → " + output + " (schema 4)"))
    }

    /// A number beyond what the reader holds is not quoted as the saturated value it read.
    @Test func aHugeNumberIsNotQuotedAsTheLargestInteger() throws {
        let file = try write(
            "huge.json", example(replacing: #""dayStartHour": 2"#, with: #""dayStartHour": 1e400"#))
        let result = try cloudbackup(["validate", file])
        #expect(result.status == 3)
        #expect(
            result.stderr
                == "cloudbackup: \(file): /settings/dayStartHour: must be 0…4, not \(Int.max) or more\n"
        )
        let newer = try write(
            "newer.json",
            example(
                replacing: #""schemaVersion": 3"#,
                with: #""schemaVersion": 99999999999999999999999"#))
        let refused = try cloudbackup(["validate", newer])
        #expect(refused.status == 7)
        #expect(refused.stderr.contains("(schema \(Int.max) or more)"))
    }

    /// A file with more problems than are listed says the list was cut, and where; one with
    /// exactly as many does not.
    @Test func aCutListOfProblemsSaysSo() throws {
        let hundred = (0..<100).map { "\"unknown\($0)\": 1, " }.joined()
        let exactly = try write(
            "hundred.json", example(replacing: #""settings": {"#, with: #""settings": {"# + hundred)
        )
        let all = try cloudbackup(["validate", exactly])
        #expect(all.status == 3)
        #expect(all.stderr.split(separator: "\n").count == 100)
        #expect(!all.stderr.contains("stopped after"))

        let unknown = (0..<120).map { "\"unknown\($0)\": 1, " }.joined()
        let file = try write(
            "many.json", example(replacing: #""settings": {"#, with: #""settings": {"# + unknown))
        let result = try cloudbackup(["validate", file])
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(result.status == 3)
        #expect(lines.count == 102)  // 100 problems, the cut, the final newline
        #expect(lines.dropLast(2).allSatisfy { $0.hasSuffix(": unknown field") })
        #expect(
            lines[100]
                == "cloudbackup: \(file): stopped after the first 100 problems; fix these and run again for the rest"
        )
    }

    /// A key from an untrusted file can neither add a line of its own nor send the terminal
    /// an escape sequence: its control characters are shown escaped.
    @Test func controlCharactersInAKeyStayOnTheProblemsLine() throws {
        let file = try write(
            "control.json",
            example(
                replacing: #""settings": {"#,
                with: #""settings": {"x\u001b[2J\ncloudbackup: all good": 1, "#))
        let result = try cloudbackup(["validate", file])
        #expect(result.status == 3)
        #expect(
            result.stderr
                == "cloudbackup: \(file): /settings/x\\u001B[2J\\u000Acloudbackup: all good: unknown field\n"
        )
    }

    /// A backup holds notes and moods: a new output is as private as the user's umask asks,
    /// and an output the user made private stays so.
    @Test(arguments: ["077", "027"])
    func migrateWritesWhatTheUmaskAllowsAndKeepsAnOutputsPermissions(umask: String) throws {
        let fresh = folder.appendingPathComponent("fresh-\(umask).json").path
        let kept = folder.appendingPathComponent("kept-\(umask).json").path
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: kept))
        #expect(chmod(kept, 0o600) == 0)
        for output in [fresh, kept] {
            let result = try run(
                URL(fileURLWithPath: "/bin/bash"),
                [
                    "-c", "umask \(umask); exec \"$0\" \"$@\"", Paths.binary.path, "migrate", valid,
                    "-o", output,
                ],
                environment: ["PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": "/nonexistent"])
            #expect(result.status == 0, "\(result.stderr)")
        }
        let expected: mode_t = umask == "077" ? 0o600 : 0o640
        #expect(try LocalFile.mode(of: fresh) == expected)
        #expect(try LocalFile.mode(of: kept) == 0o600)
    }

    @Test func migrateOfAnInvalidFileWritesNothing() throws {
        let invalid = try write(
            "invalid.json", example(replacing: #""mood": 4"#, with: #""mood": 9"#))
        let output = folder.appendingPathComponent("out.json").path
        let result = try cloudbackup(["migrate", invalid, "-o", output])
        #expect(result.status == 3)
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}

/// The binary on the shipped examples, the invalid fixture table and `migrate`.
@Suite final class ExampleCommandTests {
    let folder: URL

    init() throws {
        folder = try Paths.temporaryFolder()
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func everyExampleValidates() throws {
        let result = try cloudbackup(["validate"] + ExampleFiles.valid().map(\.path))
        #expect(result.status == 0)
        #expect(result.stdout == "")
        #expect(result.stderr == "")
    }

    @Test(arguments: try ExampleFiles.invalid())
    func invalidFixtureExitsWithItsCodeAndNamesItsPointer(_ example: InvalidExample) throws {
        let result = try cloudbackup(["validate", example.url.path])
        #expect(result.status == example.exitCode)
        #expect(result.stdout == "")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let prefix = "cloudbackup: \(example.url.path)"
        #expect(lines.count == 1 && lines.allSatisfy { $0.hasPrefix(prefix) }, "\(lines)")
        if example.exitCode == 7 {
            #expect(
                lines.first
                    == "\(prefix): written by a newer version (schema 5); update cloudbackup")
        } else if let pointer = example.pointer, !pointer.isEmpty {
            #expect(lines.first?.hasPrefix("\(prefix): \(pointer): ") == true, "\(lines)")
        } else if example.pointer == nil {
            // A syntax error: FILE:line:column: message.
            let rest = lines.first.map { $0.dropFirst(prefix.count) } ?? ""
            #expect(
                rest.range(of: #"^:[0-9]+:[0-9]+: "#, options: .regularExpression) != nil,
                "\(lines)")
        }
    }

    @Test(arguments: ["old-v1.json", "old-v2.json", "phone.json"])
    func migrateWritesCanonicalSchema4(_ name: String) throws {
        let source = Paths.file("Examples/" + name).path
        let output = folder.appendingPathComponent("out.json").path
        let result = try cloudbackup(["migrate", source, "-o", output])
        #expect(result.status == 0)
        #expect(result.stdout == "")
        #expect(result.stderr == "")
        let written = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        let original = try BackupReader.read(
            Array(try Data(contentsOf: URL(fileURLWithPath: source))))
        let migrated = try BackupReader.read(written)
        #expect(migrated.sourceVersion == 4)
        #expect(migrated.document == original.document)
        #expect(written.last == UInt8(ascii: "\n"))
        #expect(!written.dropLast().contains(UInt8(ascii: "\n")))
        #expect(written.starts(with: Array(#"{"challenges":{"#.utf8)))
    }

    @Test func migrateInPlaceAndPretty() throws {
        let file = folder.appendingPathComponent("state.json")
        try Data(contentsOf: Paths.file("Examples/old-v2.json")).write(to: file)
        let before = try BackupReader.read(Array(try Data(contentsOf: file))).document
        let result = try cloudbackup(["migrate", file.path, "--output", file.path, "--pretty"])
        #expect(result.status == 0)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasPrefix("{\n  \"challenges\": {\n"))
        let after = try BackupReader.read(Array(text.utf8))
        #expect(after.sourceVersion == 4)
        #expect(after.document == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(leftovers == ["state.json"])
    }

    /// `--schema 3` for an app that cannot read 4 yet: the kept day logs go, a note says how
    /// many, and OUT reads as a valid version 3 with everything else.
    @Test func migrateToSchemaThreeDropsKeptDayLogsAndSaysSo() throws {
        let laptop = Paths.file("Examples/laptop.json").path
        let output = folder.appendingPathComponent("v3.json").path
        let result = try cloudbackup(["migrate", laptop, "-o", output, "--schema", "3"])
        #expect(result.status == 0)
        #expect(result.stdout == "")
        #expect(
            result.stderr
                == "cloudbackup: note: \(output) (schema 3) leaves out the 8 day log(s) kept under "
                + "a tombstone in \(laptop): schema 3 cannot hold them; an app that reads schema 4 "
                + "keeps them\n")
        let written = try BackupReader.read(
            Array(try Data(contentsOf: URL(fileURLWithPath: output))))
        let original = try BackupReader.read(
            Array(try Data(contentsOf: URL(fileURLWithPath: laptop))))
        #expect(written.sourceVersion == 3)
        #expect(written.document.dayLogs.count == original.document.dayLogs.count - 8)
        #expect(written.document.challenges == original.document.challenges)
        #expect(written.document.tombstones == original.document.tombstones)

        // Nothing kept, nothing to say; without --schema, version 4.
        let phone = Paths.file("Examples/phone.json").path
        let quiet = try cloudbackup(["migrate", phone, "-o", output, "--schema=3"])
        #expect(quiet.status == 0)
        #expect(quiet.stderr == "")
        #expect(
            try BackupReader.read(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
                .sourceVersion == 3)
        let four = try cloudbackup(["migrate", laptop, "-o", output])
        #expect(four.stderr == "")
        #expect(
            try BackupReader.read(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
                .document.keptDayLogCount == 8)
    }

    @Test func migrateToAnUnknownSchemaIsAUsageError() throws {
        let output = folder.appendingPathComponent("out.json").path
        let phone = Paths.file("Examples/phone.json").path
        let result = try cloudbackup(["migrate", phone, "-o", output, "--schema", "2"])
        #expect(result.status == 2)
        #expect(
            result.stderr.hasPrefix(
                "cloudbackup: --schema expects 3 or 4, the versions cloudbackup writes, not '2'\n"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func migrateOfANewerSchemaExitsSeven() throws {
        let output = folder.appendingPathComponent("out.json").path
        let newer = Paths.file("Examples/invalid/schema-version-5-newer.json").path
        let result = try cloudbackup(["migrate", newer, "-o", output])
        #expect(result.status == 7)
        #expect(
            result.stderr
                == "cloudbackup: \(newer): written by a newer version (schema 5); update cloudbackup\n"
        )
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
