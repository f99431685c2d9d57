import BackupKit
import Foundation
import TestSupport
import Testing

/// What `backup` does with STATE's settings.
extension BackupCommandTests {
    /// Examples/phone.json as text, whose theme, dark, the tests below change.
    static func phoneExample() throws -> String {
        let text = try String(contentsOf: Paths.file("Examples/phone.json"), encoding: .utf8)
        try #require(text.contains(#""theme": "dark""#))
        return text
    }

    /// The device backing up is the local side for settings: STATE's settings go up, except
    /// premium, app lock and the device id, which stay as the backup has them (FORMAT.md §5.1 rule 6:
    /// import never changes those three).
    @Test func aSettingsOnlyChangeIsUploadedAndSaidSo() throws {
        let original = try Self.phoneExample()
        try phone.write(original)
        #expect(try phone.backup().status == 0)
        let before = try #require(try remoteBackups(emulator).first?.document)

        let edited =
            original
            .replacingOccurrences(of: #""theme": "dark""#, with: #""theme": "light""#)
            .replacingOccurrences(
                of: #""reminderTime": "20:30""#, with: #""reminderTime": "07:00""#
            )
            .replacingOccurrences(of: #""enabled": true"#, with: #""enabled": false"#)
            .replacingOccurrences(
                of: #""validatedAt": "2026-11-28T08:00:00.000Z""#,
                with: #""validatedAt": "2026-11-29T08:00:00.000Z""#
            )
            .replacingOccurrences(of: before.deviceId.rawValue, with: "another-phone")
        try #require(edited.contains(#""theme": "light""#) && edited.contains("another-phone"))
        try phone.write(edited)
        let result = try phone.backup(["--verbose"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("cloudbackup: uploaded habit-backup.json"))
        #expect(!result.stderr.contains("nothing uploaded"))
        #expect(result.stderr.contains("cloudbackup:   settings: updated (theme, reminderTime)"))
        let after = try #require(try remoteBackups(emulator).first?.document)
        #expect(after.settings.theme == .light)
        #expect(after.settings.reminderTime?.description == "07:00")
        #expect(after.settings.premium == before.settings.premium)
        #expect(after.settings.appLock == before.settings.appLock)
        #expect(after.settings.appLock?.enabled == true)
        #expect(after.deviceId == before.deviceId)

        try phone.write(
            edited.replacingOccurrences(
                of: #""reminderTime": "07:00""#, with: #""reminderTime": "06:45""#))
        let json = try phone.backup(["--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains(#""result":"uploaded""#))
        #expect(
            try remoteBackups(emulator).first?.document.settings.reminderTime?.description
                == "06:45")
        let unchanged = try phone.backup(["--json"])
        #expect(unchanged.stdout.contains(#""result":"unchanged""#))
    }

    /// Two devices with different settings do not overwrite each other's every night: a
    /// device's settings go up when they changed there since it and the backup were last
    /// brought together, so a no-change night stays a night without an upload. A new device's
    /// first backup leaves the backup's settings alone (its own may be the app's defaults).
    @Test func settingsGoUpOnlyFromTheDeviceThatChangedThem() throws {
        let original = try Self.phoneExample()
        func withTheme(_ theme: String) -> String {
            original.replacingOccurrences(of: #""theme": "dark""#, with: "\"theme\": \"\(theme)\"")
        }
        /// Backs `machine` up and checks what the run did and the theme Drive then holds.
        func expectBackup(
            _ machine: BackupMachine, _ result: String, leaving theme: Settings.Theme,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let run = try machine.backup(["--json"])
            #expect(
                run.stdout.contains("\"result\":\"\(result)\""), "\(run.stderr)",
                sourceLocation: sourceLocation)
            #expect(
                try remoteBackups(emulator).first?.document.settings.theme == theme,
                sourceLocation: sourceLocation)
        }
        let laptop = try BackupMachine(emulator)
        try laptop.login()
        try phone.write(original)
        try expectBackup(phone, "created", leaving: .dark)
        try laptop.write(withTheme("system"))
        try expectBackup(laptop, "unchanged", leaving: .dark)

        try laptop.write(withTheme("light"))
        try expectBackup(laptop, "uploaded", leaving: .light)
        // The phone's settings did not change since its last backup: the laptop's stand.
        try expectBackup(phone, "unchanged", leaving: .light)
        try phone.write(withTheme("system"))
        try expectBackup(phone, "uploaded", leaving: .system)
        try expectBackup(laptop, "unchanged", leaving: .system)
    }

    /// A device sends up only the settings it changed: the phone's theme and the laptop's
    /// reminder, changed on each since their last backups, both stand.
    @Test func twoDevicesChangingDifferentSettingsKeepBoth() throws {
        let original = try Self.phoneExample()
        try #require(original.contains(#""reminderTime": "#))
        let laptop = try BackupMachine(emulator)
        try laptop.login()
        try phone.write(original)
        #expect(try phone.backup().status == 0)
        try laptop.write(original)
        #expect(try laptop.backup().status == 0)

        try phone.write(
            original.replacingOccurrences(of: #""theme": "dark""#, with: #""theme": "light""#))
        #expect(try phone.backup().status == 0)
        let reminder = try #require(
            original.range(of: #""reminderTime": ("[0-9:]+"|null)"#, options: .regularExpression))
        var later = original
        later.replaceSubrange(reminder, with: #""reminderTime": "06:45""#)
        try laptop.write(later)
        #expect(try laptop.backup().status == 0)

        let settings = try #require(try remoteBackups(emulator).first?.document.settings)
        #expect(settings.theme == .light)
        #expect(settings.reminderTime == ReminderTime(hour: 6, minute: 45))
    }

    /// A merge restore keeps STATE's settings, a change not yet backed up among them: the
    /// next backup still sends it (the restore's own advice for held-back items is exactly
    /// such a restore).
    @Test func aSettingsChangeNotYetBackedUpSurvivesAMergeRestore() throws {
        let original = try Self.phoneExample()
        try phone.write(original)
        #expect(try phone.backup().status == 0)
        try phone.write(
            original.replacingOccurrences(of: #""theme": "dark""#, with: #""theme": "light""#))
        let restored = try phone.run([
            "restore", "--file", phone.state.path, "--merge", "--yes", "--now", BackupMachine.now,
        ])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try phone.backup().status == 0)
        #expect(try remoteBackups(emulator).first?.document.settings.theme == .light)
    }

    /// A restore brings STATE and the backup in step, settings too: a change made after it,
    /// even back to what this device had before, goes up.
    @Test func aSettingsChangeAfterARestoreGoesUp() throws {
        let original = try Self.phoneExample()
        let light = original.replacingOccurrences(
            of: #""theme": "dark""#, with: #""theme": "light""#)
        try phone.write(original)
        #expect(try phone.backup().status == 0)
        let laptop = try BackupMachine(emulator)
        try laptop.login()
        try laptop.write(original)
        #expect(try laptop.backup().status == 0)
        try laptop.write(light)
        #expect(try laptop.backup().status == 0)

        let restored = try phone.run([
            "restore", "--file", phone.state.path, "--replace", "--yes", "--now", BackupMachine.now,
        ])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try String(contentsOf: phone.state, encoding: .utf8).contains(#""theme":"light""#))
        try phone.write(original)
        #expect(try phone.backup().status == 0)
        #expect(try remoteBackups(emulator).first?.document.settings.theme == .dark)
    }
}
