import BackupKit

/// What one challenge is on one device.
enum Presence {
    case live(ChallengeCopy)
    case deleted(Timestamp)
    case absent
}

/// One challenge's story on both devices, drawn from its own stream.
struct ChallengePlan: Sendable {
    let index: Int
    let id: String
    /// The copy both devices had at their last sync; day logs are drawn from it, so a
    /// device's later edit of the challenge never changes the logs' story.
    let base: ChallengeCopy
    private let phone: Presence
    private let laptop: Presence

    init(seed: UInt64, index: Int) {
        var dice = Dice(seed: seed, index: index, stream: .challenge)
        let base = ChallengeCopy(dice: &dice)
        self.base = base
        self.index = index
        // A UUIDv7 shape: creation milliseconds, then random bits, then the index so ids
        // never collide. Every id has 36 characters.
        let millis = UInt64(base.createdAt.millisecondsSince1970)
        let time = dice.hex(millis, digits: 12)
        id =
            "\(time.prefix(8))-\(time.suffix(4))-7\(dice.hex(3))-8\(dice.hex(3))-"
            + "\(dice.hex(4))\(dice.hex(UInt64(index), digits: 8))"

        func editedMaybe(_ dice: inout Dice) -> ChallengeCopy {
            dice.chance(0.06) ? base.edited(after: base.updatedAt, dice: &dice) : base
        }
        func deletedAt(_ dice: inout Dice) -> Timestamp {
            Timeline.latest.adding(milliseconds: -Timeline.day - dice.below(199 * Timeline.day))
        }
        let fate = dice.below(1000)
        switch fate {
        case 0..<40:
            phone = .deleted(deletedAt(&dice))
            laptop = .live(editedMaybe(&dice))
        case 40..<80:
            phone = .live(editedMaybe(&dice))
            laptop = .deleted(deletedAt(&dice))
        case 80..<90:
            let deleted = deletedAt(&dice)
            phone = .deleted(deleted)
            laptop = .live(base.edited(after: deleted, dice: &dice))
        case 90..<100:
            phone = .deleted(deletedAt(&dice))
            laptop = .deleted(deletedAt(&dice))
        case 100..<120:
            phone = .live(base)
            laptop = .absent
        case 120..<140:
            phone = .absent
            laptop = .live(base)
        default:
            phone = .live(editedMaybe(&dice))
            laptop = .live(editedMaybe(&dice))
        }
    }

    func presence(on device: Device) -> Presence {
        switch device {
        case .phone: phone
        case .laptop: laptop
        }
    }
}

struct ChallengeCopy: Sendable {
    var title: String
    var startDate: DayKey
    /// Sorted by id.
    var tasks: [TaskPlan]
    /// Sorted, unique, inside the challenge's days.
    var pausedDays: [DayKey]
    var createdAt: Timestamp
    var updatedAt: Timestamp

    private static let titles = [
        "30 days of water", "Morning pages", "Couch to 5k", "Read before bed", "No sugar",
        "Daily stretch", "Learn Spanish", "Méditation du matin", "毎日の読書", "Walk the dog",
        "Guitar practice", "Sleep by 23:00", "Cold showers 🚿", "Journal \"three good things\"",
        "Inbox zero", "Push-up ladder", "Drink less coffee", "Piano — scales", "Plank",
        "Steps: 10k",
    ]

    /// A fresh challenge created up to 200 days before its year-long run has to end.
    init(dice: inout Dice) {
        startDate = Timeline.exportDay.adding(days: -Timeline.challengeDays - dice.below(200))
        createdAt = Timeline.midnight(startDate.adding(days: -1))
            .adding(milliseconds: dice.below(Timeline.day))
        updatedAt = createdAt.adding(milliseconds: dice.below(30 * Timeline.day))
        title = dice.pick(Self.titles)
        var pool = TaskPlan.catalogue
        var tasks: [TaskPlan] = []
        let count = dice.chance(0.1) ? 4 : 3
        for number in 0..<count {
            let (id, title, unit) = pool.remove(at: dice.below(pool.count))
            let archivedFrom = number == 3 ? startDate.adding(days: 30 + dice.below(270)) : nil
            tasks.append(
                TaskPlan(
                    id: id, title: title, unit: unit, startDate: startDate,
                    archivedFrom: archivedFrom, dice: &dice))
        }
        self.tasks = tasks.sorted { $0.id < $1.id }
        var paused: Set<DayKey> = []
        for _ in 0..<dice.below(4) {
            paused.insert(startDate.adding(days: dice.below(Timeline.challengeDays)))
        }
        pausedDays = paused.sorted()
    }

    /// The same challenge edited on one device after `stamp`: renamed, a new goal rule, or
    /// one more paused day.
    func edited(after stamp: Timestamp, dice: inout Dice) -> ChallengeCopy {
        var copy = self
        copy.updatedAt = dice.stamp(after: stamp, within: 60 * Timeline.day)
        switch dice.below(3) {
        case 0:
            copy.title += " (again)"
        case 1:
            let task = dice.below(tasks.count)
            copy.tasks[task].addRule(dice: &dice)
        default:
            let day = startDate.adding(days: dice.below(Timeline.challengeDays))
            copy.pausedDays = Set(pausedDays + [day]).sorted()
        }
        return copy
    }

    func write(to out: inout CanonicalBytes) {
        out.raw("{\"createdAt\":")
        out.timestamp(createdAt)
        out.raw(",\"durationDays\":")
        out.integer(Timeline.challengeDays)
        out.raw(",\"pausedDays\":[")
        for (position, day) in pausedDays.enumerated() {
            if position > 0 { out.raw(",") }
            out.day(day)
        }
        out.raw("],\"startDate\":")
        out.day(startDate)
        out.raw(",\"tasks\":{")
        for (position, task) in tasks.enumerated() {
            if position > 0 { out.raw(",") }
            task.write(to: &out)
        }
        out.raw("},\"title\":")
        out.string(title)
        out.raw(",\"updatedAt\":")
        out.timestamp(updatedAt)
        out.raw("}")
    }
}

struct TaskPlan: Sendable {
    struct Rule: Sendable {
        var from: DayKey
        var type: String
        var target: Int
        var unit: String
    }

    /// (id, title, unit); a `min` unit makes a `minutes` task, anything else a `count` task.
    static let catalogue = [
        ("water", "Drink water", "glasses"), ("steps", "Walk", "k steps"),
        ("pages", "Read", "pages"), ("pushups", "Push-ups", "reps"),
        ("stretch", "Stretch", "min"), ("journal", "Write", "lines"),
        ("meditate", "Sit still", "min"), ("vocab", "New words", "words"),
        ("practice", "Practise", "min"), ("fruit", "Fruit & veg", "portions"),
        ("no-snack", "Skip snacks", ""), ("plank_hold", "Plank hold", "min"),
    ]

    var id: String
    var title: String
    /// Strictly increasing `from`, the first on the challenge's start.
    var rules: [Rule]
    var archivedFrom: DayKey?

    init(
        id: String, title: String, unit: String, startDate: DayKey, archivedFrom: DayKey?,
        dice: inout Dice
    ) {
        self.id = id
        self.title = title
        self.archivedFrom = archivedFrom
        let type = unit == "min" ? "minutes" : "count"
        let target = type == "minutes" ? 5 + dice.below(56) : 1 + dice.below(12)
        rules = [Rule(from: startDate, type: type, target: target, unit: unit)]
        if dice.chance(0.25) {
            addRule(dice: &dice)
        }
    }

    /// A goal edit: a new rule some days after the last one, so the past keeps its goal.
    mutating func addRule(dice: inout Dice) {
        guard var rule = rules.last else { return }
        rule.from = rule.from.adding(days: 1 + dice.below(120))
        rule.target = max(1, rule.target + dice.below(5) - 2)
        rules.append(rule)
    }

    /// The target that counts on `day`.
    func target(on day: DayKey) -> Int {
        rules.last { $0.from <= day }?.target ?? rules[0].target
    }

    func isLive(on day: DayKey) -> Bool {
        archivedFrom.map { day < $0 } ?? true
    }

    func write(to out: inout CanonicalBytes) {
        out.string(id)
        out.raw(":{\"archivedFrom\":")
        if let archivedFrom { out.day(archivedFrom) } else { out.raw("null") }
        out.raw(",\"rules\":[")
        for (position, rule) in rules.enumerated() {
            if position > 0 { out.raw(",") }
            out.raw("{\"from\":")
            out.day(rule.from)
            out.raw(",\"target\":")
            out.integer(rule.target)
            out.raw(",\"type\":")
            out.string(rule.type)
            out.raw(",\"unit\":")
            out.string(rule.unit)
            out.raw("}")
        }
        out.raw("],\"title\":")
        out.string(title)
        out.raw("}")
    }
}

/// One day log's story: the copy both devices had after their last sync, and what each did
/// to it since. Drawn in full whichever device is written, so the stream stays aligned.
struct DayLogStory {
    private let phone: LogCopy?
    private let laptop: LogCopy?

    init(day: DayKey, tasks: [TaskPlan], dice: inout Dice) {
        let base = LogCopy(day: day, tasks: tasks, dice: &dice)
        let phoneMissing = dice.chance(0.02)
        let laptopMissing = dice.chance(0.02)
        let phoneEdit = dice.chance(0.08) ? base.edited(dice: &dice) : nil
        var laptopEdit = dice.chance(0.08) ? base.edited(dice: &dice) : nil
        if let phoneEdit, dice.chance(0.02) {
            // Both devices edited it in the same millisecond: the tie-break decides.
            laptopEdit?.updatedAt = phoneEdit.updatedAt
        }
        phone = phoneMissing ? nil : phoneEdit ?? base
        laptop = laptopMissing ? nil : laptopEdit ?? base
    }

    func copy(on device: Device) -> LogCopy? {
        switch device {
        case .phone: phone
        case .laptop: laptop
        }
    }
}

struct LogCopy {
    /// (task id, value), sorted by task id.
    var values: [(String, Int)]
    var note: String
    var mood: Int?
    var updatedAt: Timestamp

    /// Logged in the evening of `day` or early the next morning.
    init(day: DayKey, tasks: [TaskPlan], dice: inout Dice) {
        values = []
        for task in tasks where task.isLive(on: day) {
            guard !dice.chance(0.05) else { continue }
            let target = task.target(on: day)
            values.append((task.id, min(9_999, dice.below(target * 3 / 2 + 2))))
        }
        note = dice.chance(0.3) ? LogCopy.note(dice: &dice) : ""
        mood = dice.chance(0.65) ? 1 + dice.below(5) : nil
        updatedAt = Timeline.midnight(day)
            .adding(milliseconds: 18 * Timeline.hour + dice.below(10 * Timeline.hour))
    }

    func edited(dice: inout Dice) -> LogCopy {
        var copy = self
        copy.updatedAt = dice.stamp(after: updatedAt, within: 20 * Timeline.day)
        if !copy.values.isEmpty {
            let position = dice.below(copy.values.count)
            copy.values[position].1 = min(9_999, copy.values[position].1 + 1)
        }
        if dice.chance(0.5) {
            copy.note += copy.note.isEmpty ? "Fixed later" : " (fixed later)"
        }
        copy.mood = dice.chance(0.5) ? 1 + dice.below(5) : copy.mood
        return copy
    }

    private static let words = [
        "felt", "good", "tired", "late", "again", "the", "after", "work", "rain", "sunny",
        "skipped", "lunch", "kids", "gym", "slept", "badly", "bus", "train", "coffee", "walk",
        "long", "day", "short", "friends", "dinner", "café", "naïve", "plan", "tomorrow",
        "almost", "missed", "it", "but", "made", "up", "for", "with", "extra", "💧", "🏃",
    ]

    /// A few words to a few sentences; some with quotes, a new line or a tab.
    private static func note(dice: inout Dice) -> String {
        var text = ""
        let count = 2 + dice.below(dice.chance(0.03) ? 120 : 12)
        for position in 0..<count {
            if position > 0 {
                text += dice.chance(0.03) ? "\n" : dice.chance(0.01) ? "\t" : " "
            }
            let word = dice.pick(words)
            text += dice.chance(0.02) ? "\"\(word)\"" : word
        }
        return text
    }

    func write(to out: inout CanonicalBytes) {
        out.raw("{\"mood\":")
        if let mood { out.integer(mood) } else { out.raw("null") }
        out.raw(",\"note\":")
        out.string(note)
        out.raw(",\"updatedAt\":")
        out.timestamp(updatedAt)
        out.raw(",\"values\":{")
        for (position, (task, value)) in values.enumerated() {
            if position > 0 { out.raw(",") }
            out.string(task)
            out.raw(":")
            out.integer(value)
        }
        out.raw("}}")
    }
}
