import BackupKit
import Foundation
import TestSupport
import Testing

/// The built `cloudbackup merge` and `verify` on small fixtures that tell one story, with
/// the clock fixed at 2026-11-30T12:00:00Z (window start 2026-09-01T12:00:00Z):
///
/// - local.json (phone): water, walk, read; logs water/11-02, read/11-03; tombstones yoga
///   (deleted 11-15) and old (deleted 07-01, outside the window).
/// - incoming.json (laptop): water edited later, walk identical, yoga edited 11-10 (before
///   its delete) with a log, stretch new with a log, a newer water/11-02 log, read deleted
///   11-21.
/// - old-tablet.json: exported 07-01, with "forgotten" (edited 06-01, unknown here).
/// - yoga-again.json: yoga edited 11-20, after the phone's delete.
struct MergeEndToEndTests {
    static let now = "2026-11-30T12:00:00Z"

    static func fixture(_ name: String) -> String {
        Paths.file("Tests/CloudBackupCLITests/Fixtures/\(name)").path
    }

    static func read(_ path: String) throws -> BackupDocument {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return try BackupReader.read(bytes).document
    }

    /// A write that fails part-way (the file size limit of `ulimit -f`, standing in for a
    /// full disk) leaves the old output as it was and no temporary file beside it, prints
    /// nothing on stdout (no report that reads like a success) and one line on stderr naming
    /// the output, not the temporary file.
    @Test func aWriteThatFailsPartWayLeavesTheOldOutput() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.json").path
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: output))
        let example = Paths.file("Examples/phone.json").path
        let size = try #require(
            FileManager.default.attributesOfItem(atPath: example)[.size] as? Int)
        try #require(size > 8 * 1024, "the merged file must pass the 4 KB limit")
        // SIGXFSZ ignored (and still ignored after exec), so the write past the limit fails
        // with EFBIG instead of killing the process.
        let result = try run(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c", #"trap '' XFSZ; ulimit -f 4; exec "$0" "$@""#, Paths.binary.path,
                "merge", example, example, "-o", output, "--now", Self.now,
            ],
            environment: ["PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": "/nonexistent"])
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(
            result.stderr
                == "cloudbackup: \(output): cannot write: File too large; \(output) is unchanged\n")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "old\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.json"])
    }

    /// A reader that went away (`merge … | head -1`) does not kill the run before its log
    /// line is written: stdout here is a pipe whose reading end is closed before the run.
    @Test func aClosedStdoutDoesNotStopTheMergeOrItsLog() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.json").path
        let log = folder.appendingPathComponent("merges.log").path
        let process = Process()
        process.executableURL = Paths.binary
        process.arguments = [
            "merge", Self.fixture("local.json"), Self.fixture("incoming.json"), "-o", output,
            "--now", Self.now, "--log", log,
        ]
        process.environment = ["PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": "/nonexistent"]
        let stdout = Pipe()
        try stdout.fileHandleForReading.close()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        #expect(FileManager.default.fileExists(atPath: output))
    }

    @Test func mergePrintsTheCountsAndWritesTheResult() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.json").path
        let result = try cloudbackup([
            "merge", Self.fixture("local.json"), Self.fixture("incoming.json"), "-o", output,
            "--now", Self.now,
        ])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(
            result.stdout == """
                challenges: 1 added, 1 updated, 1 unchanged, 1 deleted, 1 kept deleted
                day logs: 1 added, 1 updated, 2 kept under a tombstone
                tombstones: 1 added, 1 expired
                wrote \(output)

                """)

        let merged = try Self.read(output)
        #expect(merged.challenges.map(\.id.rawValue) == ["stretch", "walk", "water"])
        #expect(merged.challenges.last?.title == "40 days of water")
        #expect(merged.tombstones.map(\.id.rawValue) == ["read", "yoga"])
        // read's log (deleted by the backup) and yoga's (deleted here) are kept under their
        // tombstones, in case an edit after the delete brings them back.
        #expect(
            merged.dayLogs.map(\.key.description) == [
                "read/2026-11-03", "stretch/2026-11-26", "water/2026-11-02", "yoga/2026-11-05",
            ])
        #expect(merged.keptDayLogCount == 2)
        #expect(merged.dayLogs[2].note == "Late one, counted for Monday")
        #expect(merged.deviceId.rawValue == "phone")
        #expect(merged.settings.theme == .system)
        #expect(merged.settings.premium?.plan == "yearly")
        #expect(merged.exportedAt.description == "2026-11-30T12:00:00.000Z")
        // The file is canonical: writing what was read gives the same bytes.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(BackupWriter.write(merged) == bytes)
    }

    @Test func jsonPrintsExactlyTheReportObject() throws {
        let result = try cloudbackup([
            "merge", Self.fixture("local.json"), Self.fixture("incoming.json"), "--dry-run",
            "--json",
            "--now", Self.now,
        ])
        #expect(result.status == 0)
        #expect(
            result.stdout
                == #"{"challenges":{"added":1,"updated":1,"unchanged":1,"deleted":1,"keptDeleted":1,"revived":0,"heldBack":0},"#
                + #""dayLogs":{"added":1,"updated":1,"unchanged":0,"keptUnderTombstone":2,"droppedOrphans":0,"heldBack":0},"#
                + #""tombstones":{"added":1,"unchanged":0,"expired":1,"heldBack":0}}"# + "\n")
    }

    @Test func dryRunWritesNothing() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.json").path
        let result = try cloudbackup([
            "merge", Self.fixture("local.json"), Self.fixture("incoming.json"), "-o", output,
            "--dry-run",
            "--now", Self.now,
        ])
        #expect(result.status == 0)
        #expect(result.stdout.hasSuffix("dry run: nothing written\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func anInvalidInputWritesNothingAndExitsThree() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.json").path
        let invalid = Self.fixture("not-a-backup.json")
        let result = try cloudbackup(["merge", Self.fixture("local.json"), invalid, "-o", output])
        #expect(result.status == 3)
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("cloudbackup: \(invalid)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func explainListsEachNonTrivialDecision() throws {
        let result = try cloudbackup([
            "merge", Self.fixture("local.json"), Self.fixture("incoming.json"), "--dry-run",
            "--explain",
            "--now", Self.now,
        ])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "  challenge yoga: local wins: deleted at or after its last edit, stays deleted "
                    + "(local deleted 2026-11-15T12:00:00.000Z, incoming edited 2026-11-10T06:00:00.000Z)"
            ))
        #expect(
            lines.contains(
                "  challenge old: neither kept: tombstone older than the window, dropped (local deleted 2026-07-01T12:00:00.000Z)"
            ))
        #expect(
            lines.contains(
                "  day log read/2026-11-03: local wins: its challenge is deleted; kept under the tombstone, "
                    + "back if an edit revives it (local edited 2026-11-03T22:00:00.000Z)"
            ))
        #expect(lines.contains("day logs: 1 added, 1 updated, 2 kept under a tombstone"))
    }

    @Test func aStaleFileIsHeldBackUntilAllowed() throws {
        let arguments = [
            "merge", Self.fixture("local.json"), Self.fixture("old-tablet.json"), "--dry-run",
            "--now", Self.now,
        ]
        let held = try cloudbackup(arguments)
        #expect(held.status == 0)
        #expect(
            held.stdout == """
                challenges: 3 unchanged, 1 held back
                day logs: 2 unchanged, 1 held back
                tombstones: 1 expired
                dry run: nothing written

                """)
        #expect(held.stderr.hasPrefix("held back 1 challenge(s) and 1 day log(s) of "))
        #expect(held.stderr.contains("exported 152 days ago, before the 90-day window"))
        #expect(held.stderr.hasSuffix("to let them in, run again with --allow-stale\n"))

        let allowed = try cloudbackup(arguments + ["--allow-stale"])
        #expect(allowed.status == 0)
        #expect(allowed.stderr == "")
        #expect(
            allowed.stdout.hasPrefix(
                "challenges: 1 added, 3 unchanged\nday logs: 1 added, 2 unchanged\n"))
    }

    /// Ten days earlier, the laptop's newest items are from the future: reported with the
    /// guard off, held back with it (water's newer log goes with water).
    @Test func futureStampsAreReportedAndClockGuardHoldsThemBack() throws {
        let incoming = Self.fixture("incoming.json")
        let arguments = [
            "merge", Self.fixture("local.json"), incoming, "--dry-run", "--now",
            "2026-11-20T00:00:00Z",
        ]
        let reported = try cloudbackup(arguments)
        #expect(reported.status == 0)
        #expect(
            reported.stderr == """
                warning: challenge read in \(incoming) is stamped 2026-11-21T09:00:00.000Z, more than 24 h after now (--clock-guard holds such items back)
                warning: challenge stretch in \(incoming) is stamped 2026-11-26T08:00:00.000Z, more than 24 h after now (--clock-guard holds such items back)
                warning: challenge water in \(incoming) is stamped 2026-11-25T07:30:00.000Z, more than 24 h after now (--clock-guard holds such items back)
                warning: day log stretch/2026-11-26 in \(incoming) is stamped 2026-11-26T08:05:00.000Z, more than 24 h after now (--clock-guard holds such items back)

                """)
        #expect(
            reported.stdout.hasPrefix(
                "challenges: 1 added, 1 updated, 1 unchanged, 1 deleted, 1 kept deleted\n"))

        let guarded = try cloudbackup(arguments + ["--clock-guard"])
        #expect(guarded.status == 0)
        #expect(guarded.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("held back ") })
        #expect(
            guarded.stdout == """
                challenges: 2 unchanged, 1 kept deleted, 2 held back
                day logs: 1 unchanged, 1 kept under a tombstone, 2 held back
                tombstones: 1 expired, 1 held back
                dry run: nothing written

                """)
    }

    /// A replace has no guard (FORMAT.md §6.1): future stamps are still reported, but never as held
    /// back or as something a flag would hold back, and asking for the guard is refused.
    @Test func aReplaceReportsFutureStampsWithoutClaimingAGuard() throws {
        let incoming = Self.fixture("incoming.json")
        let arguments = [
            "merge", Self.fixture("local.json"), incoming, "--dry-run", "--replace", "--now",
            "2026-11-20T00:00:00Z",
        ]
        let reported = try cloudbackup(arguments)
        #expect(reported.status == 0)
        let lines = reported.stderr.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(
            lines.allSatisfy {
                $0.hasPrefix("warning: ") && $0.hasSuffix("more than 24 h after now")
            })

        let guarded = try cloudbackup(arguments + ["--clock-guard"])
        #expect(guarded.status == 2)
        #expect(guarded.stdout == "")
        #expect(
            guarded.stderr.hasPrefix(
                "cloudbackup: --clock-guard does not apply to --replace: a replace takes INCOMING as it is\n"
            ))
    }

    @Test func replaceTakesTheBackupButKeepsPremiumAppLockAndDevice() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.json").path
        let result = try cloudbackup([
            "merge", Self.fixture("local.json"), Self.fixture("incoming.json"), "-o", output,
            "--replace",
            "--json", "--now", Self.now,
        ])
        #expect(result.status == 0)
        #expect(
            result.stdout
                == #"{"challenges":{"added":2,"updated":1,"unchanged":1,"deleted":1,"keptDeleted":0,"revived":0,"heldBack":0},"#
                + #""dayLogs":{"added":2,"updated":1,"unchanged":0,"keptUnderTombstone":0,"droppedOrphans":1,"heldBack":0},"#
                + #""tombstones":{"added":1,"unchanged":0,"expired":0,"heldBack":0}}"# + "\n")
        let replaced = try Self.read(output)
        #expect(replaced.challenges.map(\.id.rawValue) == ["stretch", "walk", "water", "yoga"])
        #expect(replaced.settings.theme == .dark)
        #expect(replaced.settings.premium?.plan == "yearly")
        #expect(replaced.settings.appLock?.method == "pin")
        #expect(replaced.deviceId.rawValue == "phone")
    }

    @Test func logAppendsOneJSONLinePerMerge() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("merges.log").path
        let output = folder.appendingPathComponent("out.json").path
        for _ in 0..<2 {
            let result = try cloudbackup([
                "merge", Self.fixture("local.json"), Self.fixture("incoming.json"), "-o", output,
                "--log", log,
                "--now", Self.now,
            ])
            #expect(result.status == 0)
        }
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        try #require(lines.count == 2)
        let entry = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(entry["time"] as? String == "2026-11-30T12:00:00.000Z")
        let incoming = try #require(entry["incoming"] as? [String: Any])
        #expect(incoming["deviceId"] as? String == "laptop")
        let sum = try run(
            URL(fileURLWithPath: "/usr/bin/sha256sum"), [Self.fixture("incoming.json")])
        #expect(
            incoming["sha256"] as? String == sum.stdout.split(separator: " ").first.map(String.init)
        )
        let report = try #require(entry["report"] as? [String: [String: Int]])
        #expect(report["challenges"]?["keptDeleted"] == 1)
        let decisions = try #require(entry["decisions"] as? [[String: Any]])
        let yoga = try #require(decisions.first { $0["key"] as? String == "yoga" })
        #expect(yoga["winner"] as? String == "local")
        #expect(yoga["reason"] as? String == "deletedAfterEdit")
        #expect((yoga["local"] as? [String: String])?["deletedAt"] == "2026-11-15T12:00:00.000Z")
        #expect((yoga["incoming"] as? [String: String])?["updatedAt"] == "2026-11-10T06:00:00.000Z")
    }

    @Test func verifyInsideTheWindowExitsZero() throws {
        let file = Self.fixture("incoming.json")
        let result = try cloudbackup(["verify", file, "--now", Self.now])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                \(file): exported 2026-11-28 21:00:00 +0000 (1 day ago), by device laptop
                inside the 90-day window (which starts 2026-09-01T12:00:00.000Z)

                """)
    }

    @Test func verifyOfAFileThatPredatesTheWindowExitsSeven() throws {
        let file = Self.fixture("old-tablet.json")
        let result = try cloudbackup([
            "verify", file, "--now", Self.now, "--against", Self.fixture("local.json"),
        ])
        #expect(result.status == 7)
        #expect(
            result.stdout.contains(
                "  hold back challenge forgotten (missing here and last edited 2026-06-01T07:00:00.000Z, "
                    + "before the window: perhaps a forgotten delete)\n"))
        #expect(
            result.stderr
                == "cloudbackup: \(file) predates the 90-day tombstone window; merge holds its old, unknown items back unless --allow-stale\n"
        )
        // A wider window takes it in.
        #expect(
            try cloudbackup(["verify", file, "--now", Self.now, "--window", "200"]).status == 0)
    }

    @Test func verifyJSONNamesWhatAMergeWouldReviveOrHoldBack() throws {
        let result = try cloudbackup([
            "verify", Self.fixture("yoga-again.json"), "--against", Self.fixture("local.json"),
            "--json",
            "--now", Self.now,
        ])
        #expect(result.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["predatesWindow"] as? Bool == false)
        #expect(object["ageDays"] as? Int == 1)
        #expect((object["heldBack"] as? [Any])?.isEmpty == true)
        let revived = try #require(object["revived"] as? [[String: Any]])
        #expect(revived.count == 1)
        #expect(revived.first?["id"] as? String == "yoga")
        #expect(revived.first?["deletedAt"] as? String == "2026-11-15T12:00:00.000Z")
        #expect(revived.first?["updatedAt"] as? String == "2026-11-20T06:00:00.000Z")
        #expect(revived.first?["keptDayLogs"] as? Int == 0)
    }

    /// A state that keeps a day log under yoga's tombstone (the merge of the two fixtures
    /// keeps the backup's yoga log there): reviving yoga brings it back, and verify says so.
    @Test func verifySaysWhichKeptDayLogsARevivalBringsBack() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = folder.appendingPathComponent("state.json").path
        let merged = try cloudbackup([
            "merge", Self.fixture("local.json"), Self.fixture("incoming.json"), "-o", state,
            "--now", Self.now,
        ])
        #expect(merged.status == 0)
        let arguments = [
            "verify", Self.fixture("yoga-again.json"), "--against", state, "--now", Self.now,
        ]
        let text = try cloudbackup(arguments)
        #expect(text.status == 0)
        #expect(
            text.stdout.contains(
                "  revive challenge yoga (edited after its delete here, so a merge brings it back, "
                    + "with the 1 day log(s) kept under its tombstone here; deleted "))
        let json = try cloudbackup(arguments + ["--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let revived = try #require(object["revived"] as? [[String: Any]])
        #expect(revived.first?["keptDayLogs"] as? Int == 1)
        // And the merge does bring it back, counted as a copy here that survives.
        let report = try cloudbackup([
            "merge", state, Self.fixture("yoga-again.json"), "--dry-run", "--json", "--now",
            Self.now,
        ])
        #expect(report.stdout.contains(#""revived":1"#))
        #expect(report.stdout.contains(#""keptUnderTombstone":1,"#))
    }
}

/// The two devices of Examples/ (counts worked out by hand from the files): the laptop
/// raised the water challenge later, deleted the morning run the phone still has, and
/// added two challenges; the phone added one; most day logs are the same on both.
struct MergeExamplesTests {
    static let phone = Paths.file("Examples/phone.json").path
    static let laptop = Paths.file("Examples/laptop.json").path
    static let now = "2026-11-30T12:00:00Z"

    @Test func laptopIntoPhone() throws {
        let result = try cloudbackup([
            "merge", Self.phone, Self.laptop, "--dry-run", "--now", Self.now,
        ])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(
            result.stdout == """
                challenges: 2 added, 1 updated, 2 unchanged, 1 deleted
                day logs: 34 added, 1 updated, 60 unchanged, 8 kept under a tombstone
                tombstones: 1 added, 1 unchanged
                dry run: nothing written

                """)
    }

    @Test func phoneIntoLaptopAsJSON() throws {
        let result = try cloudbackup([
            "merge", Self.laptop, Self.phone, "--dry-run", "--json", "--now", Self.now,
        ])
        #expect(result.status == 0)
        #expect(
            result.stdout
                == #"{"challenges":{"added":1,"updated":0,"unchanged":4,"deleted":0,"keptDeleted":1,"revived":0,"heldBack":0},"#
                + #""dayLogs":{"added":5,"updated":7,"unchanged":83,"keptUnderTombstone":8,"droppedOrphans":0,"heldBack":0},"#
                + #""tombstones":{"added":0,"unchanged":1,"expired":0,"heldBack":0}}"# + "\n")
    }

    /// Both directions give the same items; settings and device stay each side's own.
    @Test func bothDirectionsAgree() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let onPhone = folder.appendingPathComponent("phone.json").path
        let onLaptop = folder.appendingPathComponent("laptop.json").path
        #expect(
            try cloudbackup(["merge", Self.phone, Self.laptop, "-o", onPhone, "--now", Self.now])
                .status == 0)
        #expect(
            try cloudbackup(["merge", Self.laptop, Self.phone, "-o", onLaptop, "--now", Self.now])
                .status == 0)
        let phone = try MergeEndToEndTests.read(onPhone)
        let laptop = try MergeEndToEndTests.read(onLaptop)
        #expect(phone.challenges == laptop.challenges)
        #expect(phone.dayLogs == laptop.dayLogs)
        #expect(phone.tombstones == laptop.tombstones)
        #expect(phone.challenges.count == 5)
        #expect(phone.settings.theme == .dark)
        #expect(laptop.settings.theme == .light)
        #expect(phone.deviceId != laptop.deviceId)
    }

    @Test func verifyTheExamples() throws {
        let fresh = try cloudbackup([
            "verify", Self.phone, "--now", Self.now, "--against", Self.laptop,
        ])
        #expect(fresh.status == 0)
        #expect(
            fresh.stdout.hasPrefix(
                "\(Self.phone): exported 2026-11-29 22:14:03 +0000 (today), by device 0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a\n"
                    + "inside the 90-day window (which starts 2026-09-01T12:00:00.000Z)\n"))
        #expect(fresh.stdout.hasSuffix("  hold back nothing and revive nothing\n"))
        // Three months later the same file predates the window.
        let late = try cloudbackup([
            "verify", Self.phone, "--now", "2027-03-01T00:00:00Z", "--json",
        ])
        #expect(late.status == 7)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(late.stdout.utf8)) as? [String: Any])
        #expect(object["predatesWindow"] as? Bool == true)
        #expect(object["ageDays"] as? Int == 91)
    }
}
