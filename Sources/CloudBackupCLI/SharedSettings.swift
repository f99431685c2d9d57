import BackupKit
import Foundation
import LocalFiles

/// The settings a backup carries from one device to another: all but premium and the app
/// lock, which an import never changes (SPEC §4 rule 6).
///
/// The profile keeps them as STATE had them when STATE and the backup were last brought
/// together, by a backup or a restore (`synced-settings.json`). `backup` sends STATE's
/// settings up only when they differ from that record, that is, when they were changed on
/// this machine since: a change made on another device then stands until one is made here,
/// and two devices with different settings do not overwrite each other every night. With no
/// record (a new machine, or a profile from before the record existed) the backup's settings
/// stay, so a new machine's defaults never replace them; the record starts then.
struct SharedSettings: Codable, Equatable {
    var dayStartHour: Int
    var weekStartsOn: String
    var theme: String
    var reminderTime: String?

    init(_ settings: Settings) {
        dayStartHour = settings.dayStartHour
        weekStartsOn = settings.weekStartsOn.rawValue
        theme = settings.theme.rawValue
        reminderTime = settings.reminderTime?.description
    }

    /// nil when there is no record (or it cannot be read).
    static func load(from path: String) -> SharedSettings? {
        guard let bytes = try? LocalFile.read(path, maxBytes: 1 << 16) else { return nil }
        return try? JSONDecoder().decode(SharedSettings.self, from: Data(bytes))
    }

    /// Saves the record; a failure costs at most one settings change sent up late, so it is
    /// a warning, not a failure of the backup or restore that already succeeded.
    func save(to path: String, warn: (String) -> Void) {
        do {
            try LocalFile.writeAtomically(
                Array((JSONLine.encode(self) + "\n").utf8), to: path, mode: 0o600)
        } catch {
            warn(
                "\(error.description); a settings change made here before the next backup may not "
                    + "reach Drive")
        }
    }
}
