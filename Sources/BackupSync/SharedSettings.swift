import BackupKit

/// The settings a backup carries from one device to another: all but premium and the app
/// lock, which an import never changes (FORMAT.md §5.1 rule 6).
///
/// The profile keeps them as STATE had them when STATE and the backup were last brought
/// together, by a backup or a restore (`synced-settings.json`). `backup` sends STATE's
/// settings up only where they differ from that record, that is, the ones changed on this
/// machine since: a change made on another device then stands until that setting is changed
/// here, and two devices with different settings do not overwrite each other every night. With no
/// record (a new machine, or a profile from before the record existed) the backup's settings
/// stay, so a new machine's defaults never replace them; the record starts then.
public struct SharedSettings: Codable, Equatable, Sendable {
    public var dayStartHour: Int
    public var weekStartsOn: String
    public var theme: String
    public var reminderTime: String?

    public init(_ settings: Settings) {
        dayStartHour = settings.dayStartHour
        weekStartsOn = settings.weekStartsOn.rawValue
        theme = settings.theme.rawValue
        reminderTime = settings.reminderTime?.description
    }

    /// One shared setting, by its JSON name.
    public enum Field: String, CaseIterable, Sendable {
        case dayStartHour, weekStartsOn, theme, reminderTime
    }

    /// The settings that differ in `other`.
    public func changes(to other: SharedSettings) -> [Field] {
        Field.allCases.filter { field in
            switch field {
            case .dayStartHour: dayStartHour != other.dayStartHour
            case .weekStartsOn: weekStartsOn != other.weekStartsOn
            case .theme: theme != other.theme
            case .reminderTime: reminderTime != other.reminderTime
            }
        }
    }

    /// `target` with `fields` taken from `source`, the others as they were: a device sends up
    /// only the settings it changed, so another device's change to another setting stands.
    public static func taking(_ fields: [Field], from source: Settings, into target: Settings)
        -> Settings
    {
        var result = target
        for field in fields {
            switch field {
            case .dayStartHour: result.dayStartHour = source.dayStartHour
            case .weekStartsOn: result.weekStartsOn = source.weekStartsOn
            case .theme: result.theme = source.theme
            case .reminderTime: result.reminderTime = source.reminderTime
            }
        }
        return result
    }
}
