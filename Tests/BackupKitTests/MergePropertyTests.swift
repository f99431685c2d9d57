import BackupKit
import Testing

/// SPEC §4's properties over thousands of seeded random documents (see `RandomDocuments`:
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
                challenges: document.challenges, dayLogs: document.dayLogs,
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

    /// Associative for challenges and tombstones; day logs too, except those a delete
    /// dropped on the way (SPEC §4: `(a·b)·c` may have lost a log `a·(b·c)` keeps).
    @Test func associative() {
        for seed in 0..<Self.triples {
            var random = RandomDocuments(seed: 1_000_000 + seed)
            let (a, b, c) = (random.document(), random.document(), random.document())
            let ab = combine(a, b, now: random.now)
            let bc = combine(b, c, now: random.now)
            let left = combine(ab.document, c, now: random.now)
            let right = combine(a, bc.document, now: random.now)
            #expect(
                Content(challenges: left.document.challenges, tombstones: left.document.tombstones)
                    == Content(
                        challenges: right.document.challenges, tombstones: right.document.tombstones
                    ),
                "seed \(seed)")
            // Only the inner merges: a log the outer merge drops must be dropped in both
            // orders, since their challenges agree.
            let droppedByADelete = Set(
                [ab, bc].flatMap(\.decisions).filter { $0.reason == .orphan }.map(\.item))
            let keep = { (log: DayLog) in !droppedByADelete.contains(.dayLog(log.key)) }
            #expect(
                Content(dayLogs: left.document.dayLogs.filter(keep))
                    == Content(dayLogs: right.document.dayLogs.filter(keep)), "seed \(seed)")
            // Both orders agree with the model of all three inputs at once.
            let model = Model([a, b, c])
            #expect(
                Content(challenges: left.document.challenges, tombstones: left.document.tombstones)
                    == Content(challenges: model.challenges, tombstones: model.tombstones),
                "seed \(seed)")
        }
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
            for log in a.dayLogs + b.dayLogs
            where !kept.dayLogs.contains(Content(dayLogs: [log]).dayLogs[0]) {
                let beaten = result.dayLogs.contains {
                    $0.key == log.key && Model.ranks($0, above: log)
                }
                #expect(
                    beaten || !liveIDs.contains(log.key.challengeID),
                    "seed \(seed): lost log \(log.key)")
            }

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
                + counts.dayLogs.droppedOrphans + counts.dayLogs.heldBack
            #expect(logCounts == Set((a.dayLogs + b.dayLogs).map(\.key)).count, "seed \(seed)")
        }
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
        let live = Set(challenges.map(\.id))
        dayLogs = bestLog.values.filter { live.contains($0.key.challengeID) }
        challenges.sort { $0.id < $1.id }
        tombstones.sort { $0.id < $1.id }
        dayLogs.sort { $0.key < $1.key }
    }
}
