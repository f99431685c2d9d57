import Foundation

/// The peer for `JSONDecoder`: the schema-4 document as the plain Codable model an app would
/// write first. Stamps and day keys stay strings (Foundation's `.iso8601` strategy rejects
/// fractional seconds), which spares Foundation work BackupKit does, so the comparison
/// favours the peer.
struct CodableBackup: Codable {
    struct Settings: Codable {
        var dayStartHour: Int
        var weekStartsOn: String
        var theme: String
        var reminderTime: String?
        var premium: Premium?
        var appLock: AppLock?
    }

    struct Premium: Codable {
        var plan: String
        var validatedAt: String
        var expiresAt: String?
    }

    struct AppLock: Codable {
        var enabled: Bool
        var method: String
    }

    struct Challenge: Codable {
        var title: String
        var startDate: String
        var durationDays: Int
        var tasks: [String: HabitTask]
        var pausedDays: [String]
        var createdAt: String
        var updatedAt: String
    }

    struct HabitTask: Codable {
        var title: String
        var rules: [Rule]
        var archivedFrom: String?
    }

    struct Rule: Codable {
        var from: String
        var type: String
        var target: Int
        var unit: String?
    }

    struct DayLog: Codable {
        var values: [String: Int]
        var note: String
        var mood: Int?
        var updatedAt: String
    }

    struct Tombstone: Codable {
        var deletedAt: String
    }

    var format: String
    var schemaVersion: Int
    var exportedAt: String
    var deviceId: String
    var settings: Settings
    var challenges: [String: Challenge]
    var dayLogs: [String: DayLog]
    var tombstones: [String: Tombstone]
}
