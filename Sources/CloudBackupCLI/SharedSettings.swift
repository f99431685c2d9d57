import BackupKit

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
struct SharedSettings: ProfileRecord, Equatable {
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

    /// The JSON names of the settings that differ in `other`.
    func changes(to other: SharedSettings) -> [String] {
        [
            ("dayStartHour", dayStartHour != other.dayStartHour),
            ("weekStartsOn", weekStartsOn != other.weekStartsOn),
            ("theme", theme != other.theme),
            ("reminderTime", reminderTime != other.reminderTime),
        ].filter(\.1).map(\.0)
    }
}
