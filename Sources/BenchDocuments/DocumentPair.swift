import BackupKit
import SeededRandom

/// The two devices of one user.
public enum Device: String, CaseIterable, Sendable {
    case phone, laptop
}

/// Two realistic schema-4 backups of one user, written by two devices that last synced a
/// while ago: the benchmark's input, fixed by a seed. Neither keeps day logs under its own
/// tombstones (as files from before schema 4 would not); their merge keeps the other
/// device's logs of each deleted challenge there, which is what `backup-bench keptcost`
/// measures.
///
/// Design: every challenge draws its whole story (its base copy, what each device did to it,
/// and its 365 day logs with each device's edits) from its own random stream, seeded by
/// (seed, challenge index, stream). Nothing is kept per day log, so a million-log pair needs
/// only the bytes of the file being written, and both files always agree on the shared story
/// because each is drawn in full whichever device is being written.
///
/// What a pair holds, per challenge (365 days, 3 count or minutes tasks, a quarter with a
/// second goal rule, a tenth with a fourth task archived, up to 3 paused days):
/// - 4% deleted on the phone and still live on the laptop, 4% the other way round, 1%
///   deleted on the phone and edited on the laptop after the delete (a revive), 1% deleted
///   on both; the deletes are spread over the 200 days before the export, so about half are
///   older than the default 90-day window;
/// - 2% created on the phone only, 2% on the laptop only;
/// - the rest live on both, each device editing 6% of them;
/// - day logs: a note on 30% of days (some with quotes, new lines, tabs, accents, emoji), a
///   mood on 65%, 2% missing on each device, 8% edited on each device (so about 0.6% on
///   both, a fiftieth of those with equal stamps and different content).
/// Challenge starts are spread over 200 days; every item is stamped at least three hours before
/// the phone's export.
///
///     let pair = DocumentPair(seed: 42, dayLogs: 20_000)
///     let phone = pair.document(for: .phone)  // phone.bytes: canonical, trailing newline
public struct DocumentPair: Sendable {
    public let seed: UInt64
    /// Sorted by id, which is also the order of their keys in the file.
    private let plans: [ChallengePlan]

    public var challengeCount: Int { plans.count }

    /// A pair with `challenges` challenges in all (live, deleted or on one side only).
    public init(seed: UInt64, challenges: Int) {
        self.seed = seed
        plans = (0..<max(1, challenges))
            .map { ChallengePlan(seed: seed, index: $0) }
            .sorted { $0.id < $1.id }
    }

    /// A pair whose files hold about `dayLogs` day logs each.
    public init(seed: UInt64, dayLogs: Int) {
        // A challenge is live on a given device 92% of the time and 98% of its days are there.
        let perChallenge = Double(Timeline.challengeDays) * 0.98 * 0.92
        self.init(seed: seed, challenges: Int((Double(dayLogs) / perChallenge).rounded()))
    }

    /// `device`'s backup.
    public func document(for device: Device) -> GeneratedDocument {
        var out = CanonicalBytes(capacity: plans.count * Timeline.challengeDays * 180 + 4096)
        var counts = (challenges: 0, dayLogs: 0, tombstones: 0)
        out.raw("{\"challenges\":{")
        var first = true
        for plan in plans {
            guard case .live(let copy) = plan.presence(on: device) else { continue }
            if !first { out.raw(",") }
            first = false
            counts.challenges += 1
            out.string(plan.id)
            out.raw(":")
            copy.write(to: &out)
        }
        out.raw("},\"dayLogs\":{")
        first = true
        for plan in plans {
            guard case .live = plan.presence(on: device) else { continue }
            var dice = Dice(seed: seed, index: plan.index, stream: .dayLogs)
            for offset in 0..<Timeline.challengeDays {
                let day = plan.base.startDate.adding(days: offset)
                let story = DayLogStory(day: day, tasks: plan.base.tasks, dice: &dice)
                guard let log = story.copy(on: device)
                else { continue }
                if !first { out.raw(",") }
                first = false
                counts.dayLogs += 1
                // Ids all have 36 characters, so (id, day) order is the keys' byte order.
                out.dayLogKey(plan.id, day)
                out.raw(":")
                log.write(to: &out)
            }
        }
        out.raw("},\"deviceId\":")
        out.string(device.id)
        out.raw(",\"exportedAt\":")
        out.timestamp(device.exportedAt)
        out.raw(",\"format\":\"habit-backup\",\"schemaVersion\":4,\"settings\":")
        device.writeSettings(to: &out)
        out.raw(",\"tombstones\":{")
        first = true
        for plan in plans {
            guard case .deleted(let deletedAt) = plan.presence(on: device) else { continue }
            if !first { out.raw(",") }
            first = false
            counts.tombstones += 1
            out.string(plan.id)
            out.raw(":{\"deletedAt\":")
            out.timestamp(deletedAt)
            out.raw("}")
        }
        out.raw("}}\n")
        return GeneratedDocument(
            bytes: out.bytes, challenges: counts.challenges, dayLogs: counts.dayLogs,
            tombstones: counts.tombstones)
    }
}

/// One generated backup and what it holds.
public struct GeneratedDocument: Sendable {
    /// Canonical JSON with a trailing newline.
    public var bytes: [UInt8]
    /// Live challenges.
    public var challenges: Int
    public var dayLogs: Int
    public var tombstones: Int
}

/// The fixed clock of every pair.
enum Timeline {
    static let challengeDays = 365
    static let hour: Int64 = 3_600_000
    static let day: Int64 = Timestamp.millisecondsPerDay
    /// 2026-11-29T22:14:03.120Z, the phone's export.
    static let export = Timestamp(
        millisecondsSince1970: Int64(DayKey.daysFromCivil(year: 2026, month: 11, day: 29)) * day
            + 22 * hour + 14 * 60_000 + 3_120)
    static let exportDay = DayKey(dayNumber: Int32(export.millisecondsSince1970 / day))
    /// No stamp is later than this.
    static let latest = export.adding(milliseconds: -3 * hour)

    static func midnight(_ day: DayKey) -> Timestamp {
        Timestamp(millisecondsSince1970: Int64(day.dayNumber) * Timeline.day)
    }
}

extension Device {
    var id: String {
        switch self {
        case .phone: "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a"
        case .laptop: "0193a5b2-7c1e-7d3a-9f00-7d41aa0c9e12"
        }
    }

    var exportedAt: Timestamp {
        switch self {
        case .phone: Timeline.export
        case .laptop: Timeline.export.adding(milliseconds: -(2 * Timeline.hour + 47 * 60_000))
        }
    }

    /// The phone has premium and an app lock; the laptop keeps the defaults it was set up with.
    func writeSettings(to out: inout CanonicalBytes) {
        switch self {
        case .phone:
            out.raw("{\"appLock\":{\"enabled\":true,\"method\":\"pin\"},\"dayStartHour\":2,")
            out.raw("\"premium\":{\"expiresAt\":")
            out.timestamp(Timeline.export.adding(days: 153))
            out.raw(",\"plan\":\"yearly\",\"validatedAt\":")
            out.timestamp(Timeline.export.adding(days: -2))
            out.raw(
                "},\"reminderTime\":\"20:30\",\"theme\":\"system\",\"weekStartsOn\":\"monday\"}")
        case .laptop:
            out.raw("{\"dayStartHour\":2,\"reminderTime\":null,\"theme\":\"dark\",")
            out.raw("\"weekStartsOn\":\"monday\"}")
        }
    }
}

/// A seeded random stream with the few draws the generator needs. The draws are written
/// here (not `Int.random(in:using:)`) so the same seed gives the same bytes on every
/// toolchain.
struct Dice {
    enum Stream: UInt64 {
        case challenge = 1
        case dayLogs = 2
    }

    private var generator: SeededRandom

    init(seed: UInt64, index: Int, stream: Stream) {
        // SplitMix streams whose seeds differ by a multiple of its step would overlap, so the
        // combined seed goes through one round of the mixer first.
        var mixer = SeededRandom(seed: seed ^ (UInt64(index) << 8) ^ stream.rawValue)
        generator = SeededRandom(seed: mixer.next())
    }

    /// 0..<count
    mutating func below(_ count: Int) -> Int {
        Int(generator.next() % UInt64(max(1, count)))
    }

    mutating func below(_ count: Int64) -> Int64 {
        Int64(generator.next() % UInt64(max(1, count)))
    }

    mutating func chance(_ probability: Double) -> Bool {
        Double(generator.next() >> 11) * 0x1p-53 < probability
    }

    mutating func pick<Element>(_ items: [Element]) -> Element {
        items[below(items.count)]
    }

    mutating func hex(_ digits: Int) -> String {
        let value = generator.next() & ((1 << (4 * UInt64(digits))) - 1)
        return hex(value, digits: digits)
    }

    func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// `(after, limit]` at millisecond resolution, or `after` + 1 ms when the range is empty.
    mutating func stamp(after: Timestamp, within span: Int64, limit: Timestamp = Timeline.latest)
        -> Timestamp
    {
        let room = min(span, limit.millisecondsSince1970 - after.millisecondsSince1970)
        return after.adding(milliseconds: 1 + below(max(1, room)))
    }
}
