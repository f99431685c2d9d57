import BackupKit
import Testing

/// FORMAT.md §5.4's properties over thousands of seeded random documents (see `RandomDocuments`:
/// shared ids, equal stamps, tombstones on both sides, edits after deletes). All inputs are
/// fresh (exported a day ago, every stamp within 20 days) and the clock guard is off, so the
/// properties hold without exceptions for guards or expiry. A failure names its seed.
struct MergePropertyTests {
    static let pairs: UInt64 = 2000
    static let triples: UInt64 = 1000

    /// The parts of a document the properties speak about, as canonical bytes: Swift's `==`
    /// calls NFC and NFD text equal, the file does not.
    struct Content: Equatable, CustomStringConvertible {
        var challenges: [[UInt8]]
        var dayLogs: [[UInt8]]
        var tombstones: [Tombstone]

        init(challenges: [Challenge] = [], dayLogs: [DayLog] = [], tombstones: [Tombstone] = []) {
            self.challenges = challenges.map {
                Array($0.id.rawValue.utf8) + BackupWriter.canonicalBytes(of: $0)
            }
            self.dayLogs = dayLogs.map {
                Array($0.key.description.utf8) + BackupWriter.canonicalBytes(of: $0)
            }
            self.tombstones = tombstones
        }

        init(_ document: BackupDocument) {
            self.init(
                challenges: document.challenges, dayLogs: Array(document.dayLogs),
                tombstones: document.tombstones)
        }

        var description: String {
            let text = { (bytes: [UInt8]) in String(decoding: bytes, as: UTF8.self) }
            return
                "challenges \(challenges.map(text)) logs \(dayLogs.map(text)) tombstones \(tombstones)"
        }
    }

    func combine(_ a: BackupDocument, _ b: BackupDocument, now: Timestamp) -> MergeOutcome {
        merge(local: a, incoming: b, options: MergeOptions(now: now))
    }

    @Test func theGeneratorsClockIsWhatItsCommentSays() {
        #expect(RandomDocuments(seed: 0).now.description == "2026-11-29T22:14:03.120Z")
        #expect(RandomDocuments.start.description == "2026-03-01")
    }

    @Test func idempotent() {
        for seed in 0..<Self.pairs {
            var random = RandomDocuments(seed: seed)
            let a = random.document()
            let b = random.document()
            let itself = combine(a, a, now: random.now)
            #expect(Content(itself.document) == Content(a), "seed \(seed)")
            #expect(itself.document.settings == a.settings)
            #expect(itself.decisions.isEmpty, "seed \(seed)")
            let once = combine(a, b, now: random.now).document
            let twice = combine(once, b, now: random.now).document
            #expect(Content(twice) == Content(once), "seed \(seed)")
        }
    }

    @Test func commutativeApartFromSettingsDeviceAndExportTime() {
        for seed in 0..<Self.pairs {
            var random = RandomDocuments(seed: seed)
            let a = random.document()
            let b = random.document()
            let ab = combine(a, b, now: random.now).document
            let ba = combine(b, a, now: random.now).document
            #expect(Content(ab) == Content(ba), "seed \(seed)")
        }
    }

    /// "Inside the window" is about the files, not their items: with tombstones expiring
    /// on either side and challenges older than the window, rule 1 drops the same
    /// tombstones in both orders.
    @Test func commutativeWhileItemsAgeAcrossTheWindow() {
        var expired = 0
        for seed in 0..<Self.pairs {
            var random = RandomDocuments(seed: 3_000_000 + seed, aged: true)
            let a = random.document()
            let b = random.document()
            let ab = combine(a, b, now: random.now)
            let ba = combine(b, a, now: random.now)
            expired += ab.report.tombstones.expired
            #expect(Content(ab.document) == Content(ba.document), "seed \(seed)")
            #expect(
                ab.document.tombstones.allSatisfy {
                    $0.deletedAt >= random.now.adding(days: -MergeOptions.defaultWindowDays)
                }, "seed \(seed)")
        }
        // The generator really does age items across the window.
        #expect(expired > Int(Self.pairs) / 4)
    }

    /// Associative for every item, day logs included (FORMAT.md §5.4 rule 5: a day log merges by key
    /// whatever happened to its challenge, kept under a tombstone while it lives, so no
    /// inner merge can lose one that the other order keeps).
    @Test func associative() {
        var keptOnTheWay = 0
        for seed in 0..<Self.triples {
            var random = RandomDocuments(seed: 1_000_000 + seed)
            let (a, b, c) = (random.document(), random.document(), random.document())
            let ab = combine(a, b, now: random.now)
            let bc = combine(b, c, now: random.now)
            let left = combine(ab.document, c, now: random.now)
            let right = combine(a, bc.document, now: random.now)
            keptOnTheWay +=
                ab.report.dayLogs.keptUnderTombstone + bc.report.dayLogs.keptUnderTombstone
            #expect(Content(left.document) == Content(right.document), "seed \(seed)")
            // Both orders agree with the model of all three inputs at once.
            let model = Model([a, b, c])
            #expect(
                Content(left.document)
                    == Content(
                        challenges: model.challenges, dayLogs: model.dayLogs,
                        tombstones: model.tombstones),
                "seed \(seed)")
        }
        // The inner merges really do keep day logs under tombstones on the way.
        #expect(keptOnTheWay > Int(Self.triples))
    }

    /// The story that made version 3's rule 5 order-dependent (FORMAT.md §2.4): B deletes X; A, not
    /// having seen the delete, logs a day on X; C, not having seen it either, edits X after
    /// the delete. In every order of the three backups, A's check-in survives with X live,
    /// and merging one more time changes nothing.
    @Test(arguments: ThreeDevices.orders)
    func aCheckInSurvivesADeleteThatAnotherDeviceUndoes(_ order: [String]) throws {
        let story = ThreeDevices()
        let devices = ["A": story.a, "B": story.b, "C": story.c]
        var result = try #require(devices[order[0]])
        for name in order.dropFirst() {
            result = combine(result, try #require(devices[name]), now: story.now).document
        }
        #expect(result.challenges.map(\.id) == [story.x])
        #expect(result.challenges.first?.title == "Edited on C")
        #expect(result.tombstones.isEmpty)
        #expect(Content(dayLogs: Array(result.dayLogs)) == Content(dayLogs: Array(story.a.dayLogs)))
        #expect(BackupValidator.validate(result) == [])
        for device in devices.values {
            #expect(Content(combine(result, device, now: story.now).document) == Content(result))
        }
    }

    /// The report counts of the story's steps, against the local side (FORMAT.md §6.2: a day log
    /// kept under a tombstone here is "a copy here").
    @Test func theThreeDeviceStoryIsCountedStepByStep() {
        let story = ThreeDevices()
        // B, then A: A's check-in is kept under B's tombstone, X counted deleted... from B's
        // side X was never live, so A's copy is kept deleted.
        let ba = combine(story.b, story.a, now: story.now)
        #expect(ba.report.challenges.keptDeleted == 1)
        #expect(ba.report.dayLogs.keptUnderTombstone == 1)
        #expect(ba.report.dayLogs.added == 0)
        #expect(ba.document.dayLogs.count == 1)
        #expect(ba.document.tombstones.map(\.id) == [story.x])
        // Then C: its edit after the delete revives X, and the kept check-in returns with it,
        // counted "unchanged": it was here, kept, and nothing beat it.
        let bac = combine(ba.document, story.c, now: story.now)
        #expect(bac.report.challenges.revived == 1)
        #expect(bac.report.dayLogs.unchanged == 1)
        #expect(bac.report.dayLogs.keptUnderTombstone == 0)
        #expect(bac.report.dayLogs.droppedOrphans == 0)
        #expect(
            bac.decisions.contains {
                $0.item == .dayLog(story.checkIn) && $0.reason == .returnsWithChallenge
                    && $0.winner == .local
            })
        // A into B·C (X live there, the check-in new): added.
        let bca = combine(
            combine(story.b, story.c, now: story.now).document, story.a, now: story.now)
        #expect(bca.report.dayLogs.added == 1)
        // A newer copy of the kept log from A revives nothing but updates it: B·A, then a
        // later edit of the same day on A, then C.
        var newer = story.a
        newer.dayLogs[0].updatedAt = story.now.adding(days: -1)
        newer.dayLogs[0].note = "edited later"
        let kept = combine(ba.document, newer, now: story.now)
        #expect(kept.report.dayLogs.keptUnderTombstone == 1)
        #expect(
            kept.decisions.contains {
                $0.item == .dayLog(story.checkIn) && $0.reason == .keptUnderTombstone
                    && $0.winner == .incoming
            })
        // C with its own newer copy of the day: the kept log here returns, beaten, "updated".
        var cWithLog = story.c
        cWithLog.dayLogs = [newer.dayLogs[0]]
        let revivedAndUpdated = combine(ba.document, cWithLog, now: story.now)
        #expect(revivedAndUpdated.report.dayLogs.updated == 1)
        #expect(revivedAndUpdated.document.dayLogs.map(\.note) == ["edited later"])
    }

    /// The result is exactly what the simple model says, and no live item of either input
    /// is missing unless something the spec names beats it.
    @Test func agreesWithTheModelAndLosesNothing() {
        for seed in 0..<Self.pairs {
            var random = RandomDocuments(seed: 2_000_000 + seed)
            let a = random.document()
            let b = random.document()
            let outcome = combine(a, b, now: random.now)
            let result = outcome.document
            let model = Model([a, b])
            #expect(
                Content(result)
                    == Content(
                        challenges: model.challenges, dayLogs: model.dayLogs,
                        tombstones: model.tombstones),
                "seed \(seed)")

            let liveIDs = Set(result.challenges.map(\.id))
            let allTombstones = a.tombstones + b.tombstones
            let kept = Content(result)
            for copy in a.challenges + b.challenges
            where !kept.challenges.contains(Content(challenges: [copy]).challenges[0]) {
                let beatenByCopy = result.challenges.contains {
                    $0.id == copy.id && Model.ranks($0, above: copy)
                }
                let beatenByDelete = allTombstones.contains {
                    $0.id == copy.id && $0.deletedAt >= copy.updatedAt
                }
                #expect(beatenByCopy || beatenByDelete, "seed \(seed): lost challenge \(copy.id)")
            }
            // Fresh inputs: no tombstone expires, so only a newer copy beats a day log.
            for log in a.dayLogs + b.dayLogs
            where !kept.dayLogs.contains(Content(dayLogs: [log]).dayLogs[0]) {
                let beaten = result.dayLogs.contains {
                    $0.key == log.key && Model.ranks($0, above: log)
                }
                #expect(beaten, "seed \(seed): lost log \(log.key)")
            }
            // Kept day logs are exactly those whose challenge ends tombstoned.
            let keptCount = result.dayLogs.count { !liveIDs.contains($0.key.challengeID) }
            #expect(outcome.report.dayLogs.keptUnderTombstone == keptCount, "seed \(seed)")
            #expect(result.keptDayLogCount == keptCount, "seed \(seed)")

            // Every id with a live copy gets exactly one challenge count; every key one log count.
            let counts = outcome.report
            let challengeCounts =
                counts.challenges.added + counts.challenges.updated + counts.challenges.unchanged
                + counts.challenges.deleted + counts.challenges.keptDeleted
                + counts.challenges.revived
                + counts.challenges.heldBack
            #expect(
                challengeCounts == Set((a.challenges + b.challenges).map(\.id)).count,
                "seed \(seed)")
            let logCounts =
                counts.dayLogs.added + counts.dayLogs.updated + counts.dayLogs.unchanged
                + counts.dayLogs.keptUnderTombstone + counts.dayLogs.droppedOrphans
                + counts.dayLogs.heldBack
            #expect(logCounts == Set((a.dayLogs + b.dayLogs).map(\.key)).count, "seed \(seed)")
        }
    }
}

/// FORMAT.md §2.4's three devices. Everything happens within the last 20 days, so nothing expires.
struct ThreeDevices {
    let now = RandomDocuments(seed: 0).now
    let x = ChallengeID(unchecked: "x")
    var checkIn: DayLogKey { DayLogKey(challengeID: x, day: RandomDocuments.start) }
    /// Deleted X five days ago.
    let b: BackupDocument
    /// Has X as it was before the delete, and logged a day on it after the delete.
    let a: BackupDocument
    /// Edited X four days ago, after the delete, with no day logged.
    let c: BackupDocument

    static let orders = [
        ["B", "A", "C"], ["B", "C", "A"], ["A", "B", "C"], ["A", "C", "B"], ["C", "A", "B"],
        ["C", "B", "A"],
    ]

    init() {
        let created = now.adding(days: -15)
        let before = Challenge(
            id: x, title: "Before the delete", startDate: RandomDocuments.start, durationDays: 365,
            tasks: [
                HabitTask(
                    id: TaskID(unchecked: "glass"), title: "Water",
                    rules: [
                        GoalRule(from: RandomDocuments.start, type: .check, target: 1, unit: nil)
                    ])
            ], createdAt: created, updatedAt: created)
        var edited = before
        edited.title = "Edited on C"
        edited.updatedAt = now.adding(days: -4)
        let exported = now.adding(days: -1)
        b = BackupDocument(
            exportedAt: exported, deviceId: DeviceID(unchecked: "b"),
            tombstones: [Tombstone(id: x, deletedAt: now.adding(days: -5))])
        a = BackupDocument(
            exportedAt: exported, deviceId: DeviceID(unchecked: "a"), challenges: [before],
            dayLogs: [
                DayLog(
                    key: DayLogKey(challengeID: x, day: RandomDocuments.start),
                    values: [TaskValue(taskID: TaskID(unchecked: "glass"), value: 1)],
                    note: "checked in on A", updatedAt: now.adding(days: -3))
            ])
        c = BackupDocument(
            exportedAt: exported, deviceId: DeviceID(unchecked: "c"), challenges: [edited])
    }
}

/// The obviously-correct reading of rules 2–5 over any number of fresh documents at once:
/// gather every copy and tombstone per key in dictionaries, take the best of each, then
/// decide. No cursors, no sorted walks, no notion of local and incoming.
struct Model {
    var challenges: [Challenge] = []
    var dayLogs: [DayLog] = []
    var tombstones: [Tombstone] = []

    /// Newer `updatedAt` first; equal stamps by canonical bytes.
    static func ranks(_ a: Challenge, above b: Challenge) -> Bool {
        a.updatedAt != b.updatedAt
            ? a.updatedAt > b.updatedAt
            : BackupWriter.canonicalBytes(of: b).lexicographicallyPrecedes(
                BackupWriter.canonicalBytes(of: a))
    }

    static func ranks(_ a: DayLog, above b: DayLog) -> Bool {
        a.updatedAt != b.updatedAt
            ? a.updatedAt > b.updatedAt
            : BackupWriter.canonicalBytes(of: b).lexicographicallyPrecedes(
                BackupWriter.canonicalBytes(of: a))
    }

    init(_ documents: [BackupDocument]) {
        var bestCopy: [ChallengeID: Challenge] = [:]
        var latestDelete: [ChallengeID: Tombstone] = [:]
        var bestLog: [DayLogKey: DayLog] = [:]
        for document in documents {
            for copy in document.challenges {
                if let best = bestCopy[copy.id], !Model.ranks(copy, above: best) { continue }
                bestCopy[copy.id] = copy
            }
            for tombstone in document.tombstones {
                if let latest = latestDelete[tombstone.id], latest.deletedAt >= tombstone.deletedAt
                {
                    continue
                }
                latestDelete[tombstone.id] = tombstone
            }
            for log in document.dayLogs {
                if let best = bestLog[log.key], !Model.ranks(log, above: best) { continue }
                bestLog[log.key] = log
            }
        }
        for id in Set(bestCopy.keys).union(latestDelete.keys) {
            if let copy = bestCopy[id],
                latestDelete[id].map({ copy.updatedAt > $0.deletedAt }) ?? true
            {
                challenges.append(copy)
            } else if let tombstone = latestDelete[id] {
                tombstones.append(tombstone)
            }
        }
        // Rule 5: a day log stays with its challenge, live or tombstoned.
        let present = Set(challenges.map(\.id)).union(tombstones.map(\.id))
        dayLogs = bestLog.values.filter { present.contains($0.key.challengeID) }
        challenges.sort { $0.id < $1.id }
        tombstones.sort { $0.id < $1.id }
        dayLogs.sort { $0.key < $1.key }
    }
}
