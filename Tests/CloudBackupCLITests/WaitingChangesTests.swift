import Foundation
import TestSupport
import Testing

/// Issue 35, item 3: `status --file STATE` shows what waits for the next backup, offline:
/// the items STATE holds that the kept copy of the last backup lacks or holds in an older
/// version; with `--remote`, also the items Drive holds that STATE lacks.
@Suite(.serialized) final class WaitingChangesTests {
    let emulator: Emulator
    let phone: BackupMachine

    init() throws {
        emulator = try Emulator()
        phone = try BackupMachine(emulator)
        try phone.login()
        try phone.write(
            backupJSON(
                device: "phone",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"]))
    }

    func status(_ extra: [String] = []) throws -> RunResult {
        try phone.run(["status", "--file", phone.state.path, "--now", BackupMachine.now] + extra)
    }

    /// The `local` object of `status --json`, after checking the command succeeded.
    func local(_ extra: [String] = []) throws -> [String: Any] {
        let result = try status(["--json"] + extra)
        try #require(result.status == 0, "\(result.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require(object["local"] as? [String: Any])
    }

    func line(_ label: String, in result: RunResult) -> String? {
        result.stdout.split(separator: "\n").first { $0.hasPrefix("  " + label) }.map(String.init)
    }

    /// `backupJSON` with `dayLogs` and `tombstones` objects' members put in.
    func document(
        _ challenges: [String: String], dayLogs: [String] = [], tombstones: [String] = [],
        settings: String? = nil
    ) -> String {
        let text =
            settings.map { backupJSON(device: "phone", challenges: challenges, settings: $0) }
            ?? backupJSON(device: "phone", challenges: challenges)
        return
            text
            .replacingOccurrences(
                of: #""dayLogs":{}"#, with: #""dayLogs":{\#(dayLogs.joined(separator: ","))}"#
            )
            .replacingOccurrences(
                of: #""tombstones":{}"#,
                with: #""tombstones":{\#(tombstones.joined(separator: ","))}"#)
    }

    @Test func beforeAnyBackupNothingIsKnownToBeBackedUp() throws {
        let text = try status()
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            line("not backed up", in: text)?.hasSuffix(
                "unknown: no backup or restore from this profile yet") == true, "\(text.stdout)")
        let found = try local()
        #expect(found["changesNotBackedUp"] is NSNull)
        #expect(found["changesNotBackedUpByKind"] is NSNull)
        #expect(found["settingsNotBackedUp"] is NSNull)
    }

    @Test func afterABackupNothingWaits() throws {
        #expect(try phone.backup().status == 0)
        let text = try status()
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            line("not backed up", in: text)?.hasSuffix(
                "nothing: the last backup or restore holds every item") == true, "\(text.stdout)")
        let found = try local()
        #expect(found["changesNotBackedUp"] as? Int == 0)
        #expect(
            found["changesNotBackedUpByKind"] as? [String: Int]
                == ["challenges": 0, "dayLogs": 0, "tombstones": 0])
        #expect(found["settingsNotBackedUp"] as? Int == 0)

        // The same items in other bytes (pretty, keys reordered) are no change.
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: phone.state))
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted])
            .write(to: phone.state)
        #expect(try local()["changesNotBackedUp"] as? Int == 0)
    }

    @Test func localEditsAreCountedByKind() throws {
        #expect(try phone.backup().status == 0)
        // One challenge changed, one added, one day log added; B as it was.
        try phone.write(
            document(
                [
                    "A": "2026-11-20T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z",
                    "C": "2026-11-21T00:00:00.000Z",
                ],
                dayLogs: [
                    #""B/2026-11-28":{"values":{"t":1},"note":"","mood":null,"updatedAt":"2026-11-28T09:00:00.000Z"}"#
                ]))
        let text = try status()
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            line("not backed up", in: text)?.hasSuffix(
                "3 changes since the last backup or restore (challenges 2, day logs 1, tombstones 0)"
            )
                == true, "\(text.stdout)")
        let found = try local()
        #expect(found["changesNotBackedUp"] as? Int == 3)
        #expect(
            found["changesNotBackedUpByKind"] as? [String: Int]
                == ["challenges": 2, "dayLogs": 1, "tombstones": 0])

        // Backed up, they no longer wait.
        #expect(try phone.backup().status == 0)
        #expect(try local()["changesNotBackedUp"] as? Int == 0)
    }

    /// A deleted challenge is one change, its tombstone, and its day logs, kept under it as
    /// the backup has them, none; a log added under it before the delete is one more.
    @Test func aDeleteIsOneTombstone() throws {
        let log = { (day: String) in
            #""A/2026-11-\#(day)":{"values":{"t":1},"note":"","mood":null,"updatedAt":"2026-11-\#(day)T09:00:00.000Z"}"#
        }
        try phone.write(
            document(
                ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"],
                dayLogs: [log("10")]))
        #expect(try phone.backup().status == 0)
        // Schema 4: schema 3 keeps no logs under a tombstone.
        try phone.write(
            document(
                ["B": "2026-11-02T00:00:00.000Z"], dayLogs: [log("10"), log("11")],
                tombstones: [#""A":{"deletedAt":"2026-11-25T00:00:00.000Z"}"#]
            ).replacingOccurrences(of: #""schemaVersion":3"#, with: #""schemaVersion":4"#))
        #expect(
            try local()["changesNotBackedUpByKind"] as? [String: Int]
                == ["challenges": 0, "dayLogs": 1, "tombstones": 1])
    }

    /// Settings are counted apart from items: the ones the next backup sends.
    @Test func aChangedSettingIsNoItemChange() throws {
        #expect(try phone.backup().status == 0)
        try phone.write(
            document(
                ["A": "2026-11-01T00:00:00.000Z", "B": "2026-11-02T00:00:00.000Z"],
                settings:
                    #"{"dayStartHour":0,"weekStartsOn":"monday","theme":"dark","reminderTime":null}"#
            ))
        let found = try local()
        #expect(found["changesNotBackedUp"] as? Int == 0)
        #expect(found["settingsNotBackedUp"] as? Int == 1)
        #expect(
            line("settings", in: try status())?.hasSuffix(
                "changed since the last backup or restore: theme") == true)
    }

    @Test func withoutRemoteNoNetworkAndNothingWritten() throws {
        #expect(try phone.backup().status == 0)
        try phone.write(backupJSON(device: "phone", challenges: ["C": "2026-11-21T00:00:00.000Z"]))
        let profile = phone.folder.appendingPathComponent("config")
        let before = try snapshot(profile)
        let requests = try emulator.log().count
        #expect(try local()["changesNotBackedUp"] as? Int == 1)
        #expect(try status().status == 0)
        #expect(try emulator.log().count == requests)
        #expect(try snapshot(profile) == before)
    }

    /// Every file under `folder` with its bytes and modification time.
    func snapshot(_ folder: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder.path))
        for case let path as String in enumerator {
            let url = folder.appendingPathComponent(path)
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            let content = (try? Data(contentsOf: url)).map { $0.base64EncodedString() } ?? "dir"
            files[path] = "\(attributes[.modificationDate] ?? "") \(content)"
        }
        return files
    }

    @Test func remoteCountsWhatAnotherDeviceBackedUp() throws {
        #expect(try phone.backup().status == 0)
        let tablet = try BackupMachine(emulator)
        try tablet.login()
        try tablet.write(
            backupJSON(
                device: "tablet",
                challenges: ["A": "2026-11-01T00:00:00.000Z", "T": "2026-11-22T00:00:00.000Z"]))
        #expect(try tablet.backup().status == 0)

        let result = try status(["--remote", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((object["remote"] as? [String: Any])?["itemsNotInState"] as? Int == 1)
        // Nothing of the phone's own waits: the tablet's challenge is not a local change.
        #expect((object["local"] as? [String: Any])?["changesNotBackedUp"] as? Int == 0)
        let text = try status(["--remote"])
        #expect(
            line("not in file", in: text)?.hasSuffix(
                "1 item of the backup the file lacks (challenges 1, day logs 0, tombstones 0)")
                == true, "\(text.stdout)")

        // Once the phone's backup has merged it, and STATE has it, nothing is missing.
        #expect(try phone.backup().status == 0)
        let restored = try phone.run(["restore", "--file", phone.state.path, "--merge", "--yes"])
        #expect(restored.status == 0, "\(restored.stderr)")
        let after = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try status(["--remote", "--json"]).stdout.utf8)) as? [String: Any])
        #expect((after["remote"] as? [String: Any])?["itemsNotInState"] as? Int == 0)
        #expect((after["local"] as? [String: Any])?["changesNotBackedUp"] as? Int == 0)
    }

    /// A broken STATE: one line naming it, exit 3, and no network even with --remote.
    @Test func aBrokenStateFailsFirst() throws {
        try phone.write("{")
        let requests = try emulator.log().count
        let result = try status(["--remote"])
        #expect(result.status == 3)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("cloudbackup: " + phone.state.path + ":") == true)
        #expect(try emulator.log().count == requests)
    }
}
