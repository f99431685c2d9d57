import BackupKit
import Testing

/// Small hand-made documents for the named edges of FORMAT.md §5.1. Every stamp is given relative
/// to `now`, so each test reads as a story.
private let now = Timestamp(millisecondsSince1970: 1_796_040_000_000)  // 2026-11-30T12:00:00Z
private let day = Timestamp.millisecondsPerDay

private func ago(days: Int, ms: Int64 = 0) -> Timestamp {
    now.adding(days: -days).adding(milliseconds: -ms)
}

private func id(_ text: String) -> ChallengeID { ChallengeID(unchecked: text) }

private let start = DayKey(dayNumber: 20_513)  // 2026-03-01

private func challenge(_ name: String, updated: Timestamp, title: String = "Water") -> Challenge {
    Challenge(
        id: id(name), title: title, startDate: start, durationDays: 365,
        tasks: [
            HabitTask(
                id: TaskID(unchecked: "water"), title: "Drink",
                rules: [GoalRule(from: start, type: .count, target: 8, unit: "glasses")])
        ],
        createdAt: ago(days: 200), updatedAt: updated)
}

private func log(_ name: String, _ offset: Int, updated: Timestamp, note: String = "") -> DayLog {
    DayLog(
        key: DayLogKey(challengeID: id(name), day: start.adding(days: offset)),
        values: [TaskValue(taskID: TaskID(unchecked: "water"), value: 8)], note: note,
        updatedAt: updated)
}

private func document(
    device: String = "phone", exported: Timestamp = ago(days: 1), settings: Settings = Settings(),
    _ challenges: [Challenge] = [], logs: [DayLog] = [], tombstones: [Tombstone] = []
) -> BackupDocument {
    BackupDocument(
        exportedAt: exported, deviceId: DeviceID(unchecked: device), settings: settings,
        challenges: challenges.sorted { $0.id < $1.id }, dayLogs: logs.sorted { $0.key < $1.key },
        tombstones: tombstones.sorted { $0.id < $1.id })
}

private func merged(
    _ local: BackupDocument, _ incoming: BackupDocument,
    _ options: MergeOptions = MergeOptions(now: now)
) -> MergeOutcome {
    merge(local: local, incoming: incoming, options: options)
}

struct MergeEdgeTests {
    @Test func deleteThenReimportStaysDeleted() {
        let local = document(tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 5))])
        let backup = document(
            device: "laptop", [challenge("x", updated: ago(days: 10))],
            logs: [log("x", 1, updated: ago(days: 10))])
        let outcome = merged(local, backup)
        #expect(outcome.document.challenges.isEmpty)
        // Kept under the tombstone (FORMAT.md §2.4), in case an edit after the delete revives it.
        #expect(outcome.document.dayLogs == backup.dayLogs)
        #expect(outcome.document.tombstones == local.tombstones)
        #expect(outcome.report.challenges.keptDeleted == 1)
        #expect(outcome.report.dayLogs.keptUnderTombstone == 1)
        #expect(outcome.report.dayLogs.droppedOrphans == 0)
        #expect(outcome.decisions.map(\.reason) == [.deletedAfterEdit, .keptUnderTombstone])
        #expect(outcome.decisions.first?.winner == .local)
        #expect(BackupValidator.validate(outcome.document) == [])
    }

    @Test func editAfterTheDeleteRevives() {
        let local = document(tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 5))])
        let edited = challenge("x", updated: ago(days: 3))
        let outcome = merged(local, document(device: "laptop", [edited]))
        #expect(outcome.document.challenges == [edited])
        #expect(outcome.document.tombstones.isEmpty)
        #expect(outcome.report.challenges.revived == 1)
        #expect(outcome.decisions.map(\.reason) == [.editedAfterDelete])
    }

    /// "An edit after the delete revives, with its day logs": those kept under the tombstone
    /// on either side come back live.
    @Test func editAfterTheDeleteRevivesWithTheDayLogsKeptUnderTheTombstone() {
        let tombstone = Tombstone(id: id("x"), deletedAt: ago(days: 5))
        let keptHere = log("x", 0, updated: ago(days: 4), note: "kept here")
        let edited = challenge("x", updated: ago(days: 3))
        let outcome = merged(
            document(logs: [keptHere], tombstones: [tombstone]),
            document(device: "laptop", [edited]))
        #expect(outcome.document.challenges == [edited])
        #expect(outcome.document.dayLogs == [keptHere])
        // A copy here that survives: unchanged (FORMAT.md §6.2), and said to return.
        #expect(outcome.report.dayLogs.unchanged == 1)
        #expect(outcome.report.dayLogs.keptUnderTombstone == 0)
        #expect(
            outcome.decisions.last
                == MergeDecision(
                    item: .dayLog(keptHere.key), winner: .local, reason: .returnsWithChallenge,
                    local: MergeDecision.Version(isTombstone: false, stamp: ago(days: 4)),
                    incoming: nil))

        // The other way round: the backup kept it, this device's edit after the delete wins.
        let back = merged(
            document([edited]),
            document(device: "laptop", logs: [keptHere], tombstones: [tombstone]))
        #expect(back.document.challenges == [edited])
        #expect(back.document.dayLogs == [keptHere])
        #expect(back.document.tombstones.isEmpty)
        #expect(back.report.dayLogs.added == 1)
        #expect(back.decisions.map(\.reason) == [.editedAfterDelete, .returnsWithChallenge])
    }

    /// "A tombstone 91 days old is gone, with the day logs kept under it"; unless the other
    /// side has the challenge live, which then survives with them.
    @Test func anExpiredTombstoneTakesItsKeptDayLogsWithIt() {
        let old = Tombstone(id: id("x"), deletedAt: ago(days: 91))
        let kept = log("x", 0, updated: ago(days: 95))
        for (local, incoming) in [
            (document(logs: [kept], tombstones: [old]), document()),
            (document(), document(logs: [kept], tombstones: [old])),
        ] {
            let outcome = merged(local, incoming)
            #expect(outcome.document.dayLogs.isEmpty)
            #expect(outcome.document.tombstones.isEmpty)
            #expect(outcome.report.dayLogs.droppedOrphans == 1)
            #expect(outcome.report.tombstones.expired == 1)
            #expect(outcome.decisions.last?.reason == .orphan)
            #expect(BackupValidator.validate(outcome.document) == [])
        }
        let live = challenge("x", updated: ago(days: 100))
        let outcome = merged(document([live]), document(logs: [kept], tombstones: [old]))
        #expect(outcome.document.challenges == [live])
        #expect(outcome.document.dayLogs == [kept])
        #expect(outcome.report.dayLogs.added == 1)
    }

    /// The same delete, one millisecond apart from the edit: `deletedAt ≥ updatedAt` deletes.
    @Test(arguments: [(0, false), (1, true)])
    func deleteAtTheSameInstantAsTheEditWins(editLaterBy: Int64, revives: Bool) {
        let local = document(tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 5))])
        let incoming = document([
            challenge("x", updated: ago(days: 5).adding(milliseconds: editLaterBy))
        ])
        #expect(merged(local, incoming).document.challenges.isEmpty == !revives)
    }

    @Test func localEditAfterAnIncomingDeleteStays() {
        let edited = challenge("x", updated: ago(days: 3))
        let local = document([edited], logs: [log("x", 0, updated: ago(days: 3))])
        let outcome = merged(
            local, document(tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 4))]))
        #expect(outcome.document.challenges == [edited])
        #expect(outcome.document.tombstones.isEmpty)
        #expect(outcome.report.challenges.unchanged == 1)
        #expect(outcome.report.tombstones == MergeReport.Tombstones())
    }

    struct WindowCase: Sendable, CustomTestStringConvertible {
        var age: Int64
        var stays: Bool
        var testDescription: String { "\(Double(age) / Double(day)) days, stays: \(stays)" }
    }

    /// `deletedAt < now − window` expires; exactly at the edge it stays.
    @Test(arguments: [
        WindowCase(age: 91 * day, stays: false), WindowCase(age: 89 * day, stays: true),
        WindowCase(age: 90 * day, stays: true), WindowCase(age: 90 * day + 1, stays: false),
    ])
    func tombstoneWindow(_ example: WindowCase) {
        let tombstone = Tombstone(id: id("x"), deletedAt: now.adding(milliseconds: -example.age))
        for (local, incoming) in [
            (document(tombstones: [tombstone]), document()),
            (document(), document(tombstones: [tombstone])),
        ] {
            let outcome = merged(local, incoming)
            #expect(outcome.document.tombstones == (example.stays ? [tombstone] : []))
            #expect(outcome.report.tombstones.expired == (example.stays ? 0 : 1))
        }
    }

    @Test func tombstoneNinetyOneDaysOldNoLongerKeepsAnOldCopyDeleted() {
        let local = document(
            [challenge("a", updated: ago(days: 2))],
            tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 91))])
        let old = challenge("x", updated: ago(days: 100))
        let outcome = merged(local, document(device: "laptop", [old]))
        #expect(outcome.document.challenges.map(\.id) == [id("a"), id("x")])
        #expect(outcome.report.challenges.added == 1)
        #expect(outcome.report.tombstones.expired == 1)
    }

    @Test func dayLogOfADeletedChallengeIsKeptUnderItsTombstone() {
        let local = document(
            [challenge("x", updated: ago(days: 9))], logs: [log("x", 0, updated: ago(days: 9))])
        let outcome = merged(
            local, document(tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 2))]))
        #expect(outcome.document.challenges.isEmpty)
        #expect(outcome.document.dayLogs == local.dayLogs)
        #expect(outcome.document.keptDayLogCount == 1)
        #expect(outcome.document.tombstones.map(\.id) == [id("x")])
        #expect(outcome.report.challenges.deleted == 1)
        #expect(outcome.report.dayLogs.keptUnderTombstone == 1)
        #expect(outcome.report.dayLogs.droppedOrphans == 0)
        #expect(outcome.report.tombstones.added == 1)
        // Live here a moment ago: worth a line in --explain.
        #expect(
            outcome.decisions.contains {
                $0.item == .dayLog(local.dayLogs[0].key) && $0.reason == .keptUnderTombstone
            })
    }

    @Test func theLaterOfTwoDeletesIsKept() {
        let early = Tombstone(id: id("x"), deletedAt: ago(days: 8))
        let late = Tombstone(id: id("x"), deletedAt: ago(days: 2))
        for (local, incoming) in [(early, late), (late, early)] {
            let outcome = merged(document(tombstones: [local]), document(tombstones: [incoming]))
            #expect(outcome.document.tombstones == [late])
            #expect(outcome.report.tombstones.unchanged == 1)
        }
    }

    static let phoneSettings = Settings(
        dayStartHour: 2, weekStartsOn: .sunday, theme: .dark,
        reminderTime: ReminderTime(hour: 7, minute: 0),
        premium: nil, appLock: AppLock(enabled: false, method: "none"))
    static let laptopSettings = Settings(
        dayStartHour: 4, weekStartsOn: .saturday, theme: .light, reminderTime: nil,
        premium: Premium(plan: "yearly", validatedAt: ago(days: 1), expiresAt: nil),
        appLock: AppLock(enabled: true, method: "pin"))

    @Test func settingsStayLocalOnMerge() {
        let local = document(device: "phone", settings: Self.phoneSettings)
        let outcome = merged(local, document(device: "laptop", settings: Self.laptopSettings))
        #expect(outcome.document.settings == Self.phoneSettings)
        #expect(outcome.document.deviceId == local.deviceId)
        #expect(outcome.document.exportedAt == now)
    }

    @Test(arguments: [MergeOptions.Mode.merge, .replace])
    func importNeverChangesPremiumAppLockOrDeviceID(mode: MergeOptions.Mode) {
        let local = document(device: "phone", settings: Self.phoneSettings)
        let incoming = document(device: "laptop", settings: Self.laptopSettings)
        let result = merged(local, incoming, MergeOptions(now: now, mode: mode)).document
        #expect(result.settings.premium == nil)
        #expect(result.settings.appLock == Self.phoneSettings.appLock)
        #expect(result.deviceId == DeviceID(unchecked: "phone"))
    }

    @Test func replaceTakesTheBackupsOtherSettings() {
        let local = document(device: "phone", settings: Self.phoneSettings)
        let incoming = document(device: "laptop", settings: Self.laptopSettings)
        let settings = merged(local, incoming, MergeOptions(now: now, mode: .replace)).document
            .settings
        #expect(settings.dayStartHour == 4)
        #expect(settings.weekStartsOn == .saturday)
        #expect(settings.theme == .light)
        #expect(settings.reminderTime == nil)
    }

    @Test func equalStampsGiveTheSameResultInBothDirections() {
        let stamp = ago(days: 3)
        let a = document(
            device: "phone", [challenge("x", updated: stamp, title: "Apples")],
            logs: [log("x", 0, updated: stamp, note: "a")])
        let b = document(
            device: "laptop", [challenge("x", updated: stamp, title: "Bananas")],
            logs: [log("x", 0, updated: stamp, note: "b")])
        let ab = merged(a, b)
        let ba = merged(b, a)
        #expect(ab.document.challenges == ba.document.challenges)
        #expect(ab.document.dayLogs == ba.document.dayLogs)
        // "Bananas" sorts after "Apples" at the first differing byte; "b" after "a".
        #expect(ab.document.challenges.first?.title == "Bananas")
        #expect(ab.document.dayLogs.first?.note == "b")
        #expect(ab.report.challenges.updated == 1)
        #expect(ba.report.challenges.unchanged == 1)
        #expect(ab.decisions.first?.reason == .equalStampsHigherBytes)
    }

    /// Swift's `==` calls NFC and NFD "café" equal; their bytes differ, so they are two
    /// versions, and the higher bytes win from either side.
    @Test func canonicallyEquivalentNotesAreStillDifferentContent() {
        let stamp = ago(days: 3)
        let composed = document(
            [challenge("x", updated: stamp)], logs: [log("x", 0, updated: stamp, note: "caf\u{E9}")]
        )
        let decomposed = document(
            [challenge("x", updated: stamp)],
            logs: [log("x", 0, updated: stamp, note: "cafe\u{301}")])
        let forward = merged(composed, decomposed)
        let backward = merged(decomposed, composed)
        // "é" is C3 A9, "e" is 65: the composed note's bytes sort higher.
        #expect(forward.document.dayLogs.first?.note.unicodeScalars.count == 4)
        #expect(backward.document.dayLogs.first?.note.unicodeScalars.count == 4)
        #expect(forward.report.dayLogs.unchanged == 1)
        #expect(backward.report.dayLogs.updated == 1)
    }

    @Test func identicalCopiesAreUnchangedAndUnlisted() {
        let a = document(
            [challenge("x", updated: ago(days: 3))], logs: [log("x", 0, updated: ago(days: 3))])
        let outcome = merged(a, a)
        #expect(outcome.report.challenges.unchanged == 1)
        #expect(outcome.report.dayLogs.unchanged == 1)
        #expect(outcome.decisions.isEmpty)
    }

    // MARK: Guards

    /// An old phone's backup: `y` is missing here and older than the window (perhaps a delete
    /// whose tombstone expired), `w` exists here, `n` is missing but recent.
    private static func staleCase() -> (local: BackupDocument, incoming: BackupDocument) {
        let local = document([
            challenge("a", updated: ago(days: 2)), challenge("w", updated: ago(days: 130)),
        ])
        let incoming = document(
            device: "old-phone", exported: ago(days: 120),
            [
                challenge("y", updated: ago(days: 130)), challenge("w", updated: ago(days: 125)),
                challenge("n", updated: ago(days: 85)),
            ],
            logs: [log("y", 0, updated: ago(days: 130)), log("y", 1, updated: ago(days: 130))])
        return (local, incoming)
    }

    @Test func staleFileHoldsBackOldItemsMissingHere() {
        let (local, incoming) = Self.staleCase()
        let outcome = merged(local, incoming)
        #expect(outcome.document.challenges.map(\.id) == [id("a"), id("n"), id("w")])
        #expect(outcome.document.dayLogs.isEmpty)
        #expect(outcome.report.challenges.heldBack == 1)
        #expect(outcome.report.challenges.added == 1)
        #expect(outcome.report.challenges.updated == 1)
        #expect(outcome.report.dayLogs.heldBack == 2)
        #expect(outcome.decisions.filter { $0.reason == .stale }.count == 3)
    }

    @Test func allowStaleLetsThemIn() {
        let (local, incoming) = Self.staleCase()
        let outcome = merged(local, incoming, MergeOptions(now: now, allowStale: true))
        #expect(outcome.document.challenges.map(\.id) == [id("a"), id("n"), id("w"), id("y")])
        #expect(outcome.document.dayLogs.count == 2)
        #expect(outcome.report.challenges.heldBack == 0)
        #expect(outcome.report.challenges.added == 2)
    }

    @Test func mergeIntoAnEmptyDocumentHoldsNothingBack() {
        let (_, incoming) = Self.staleCase()
        // A tombstone older than the window is gone after rule 1: still empty.
        for local in [
            document(), document(tombstones: [Tombstone(id: id("q"), deletedAt: ago(days: 95))]),
        ] {
            let outcome = merged(local, incoming)
            #expect(outcome.document.challenges.count == 3)
            #expect(outcome.report.challenges.heldBack == 0)
            #expect(outcome.report.challenges.added == 3)
        }
    }

    @Test func aFreshFileIsNotStale() {
        let (local, stale) = Self.staleCase()
        var incoming = stale
        incoming.exportedAt = ago(days: 89)
        #expect(merged(local, incoming).report.challenges.heldBack == 0)
    }

    private static func futureCase() -> (local: BackupDocument, incoming: BackupDocument) {
        let local = document(
            [challenge("a", updated: ago(days: 2))], logs: [log("a", 0, updated: ago(days: 2))])
        let future = now.adding(days: 2)
        let incoming = document(
            device: "skewed",
            [challenge("f", updated: future)],
            logs: [
                log("a", 0, updated: future), log("f", 0, updated: ago(days: 1)),
            ],
            tombstones: [Tombstone(id: id("t"), deletedAt: future)])
        return (local, incoming)
    }

    @Test func futureStampsAreReportedWithTheGuardOff() {
        let (local, incoming) = Self.futureCase()
        let outcome = merged(local, incoming)
        #expect(
            Set(outcome.futureStamped.map(\.item))
                == [.challenge(id("f")), .challenge(id("t")), .dayLog(incoming.dayLogs[0].key)])
        #expect(outcome.document.challenges.map(\.id) == [id("a"), id("f")])
        #expect(outcome.report.challenges.heldBack == 0)
        #expect(outcome.report.dayLogs.updated == 1)
    }

    @Test func clockGuardHoldsFutureItemsBack() {
        let (local, incoming) = Self.futureCase()
        let outcome = merged(local, incoming, MergeOptions(now: now, clockGuard: true))
        #expect(outcome.futureStamped.count == 3)
        #expect(outcome.document.challenges.map(\.id) == [id("a")])
        #expect(outcome.document.dayLogs == local.dayLogs)
        #expect(outcome.document.tombstones.isEmpty)
        #expect(outcome.report.challenges.heldBack == 1)
        // Its own future log on `a`, and `f`'s log held back with `f`.
        #expect(outcome.report.dayLogs.heldBack == 2)
        #expect(outcome.report.tombstones.heldBack == 1)
    }

    @Test func exactlyTwentyFourHoursAheadIsNotFuture() {
        let incoming = document([challenge("f", updated: now.adding(days: 1))])
        let outcome = merged(document(), incoming, MergeOptions(now: now, clockGuard: true))
        #expect(outcome.futureStamped.isEmpty)
        #expect(outcome.report.challenges.added == 1)
    }

    // MARK: Report

    @Test func reportJSONHasExactlyTheShapeOfTheSpec() {
        var report = MergeReport()
        report.challenges.added = 1
        report.challenges.heldBack = 7
        report.dayLogs.keptUnderTombstone = 4
        report.dayLogs.droppedOrphans = 3
        report.tombstones.expired = 2
        #expect(
            report.json
                == #"{"challenges":{"added":1,"updated":0,"unchanged":0,"deleted":0,"keptDeleted":0,"revived":0,"heldBack":7},"#
                + #""dayLogs":{"added":0,"updated":0,"unchanged":0,"keptUnderTombstone":4,"droppedOrphans":3,"heldBack":0},"#
                + #""tombstones":{"added":0,"unchanged":0,"expired":2,"heldBack":0}}"#)
    }

    @Test func replaceCountsAgainstTheLocalSide() {
        let local = document(
            [
                challenge("same", updated: ago(days: 3)),
                challenge("edited", updated: ago(days: 3)),
                challenge("gone", updated: ago(days: 3)),
            ],
            logs: [log("gone", 0, updated: ago(days: 3))],
            tombstones: [Tombstone(id: id("old"), deletedAt: ago(days: 4))])
        let backup = document(
            device: "laptop",
            [
                challenge("same", updated: ago(days: 3)),
                challenge("edited", updated: ago(days: 9), title: "Older"),
                challenge("new", updated: ago(days: 1)),
            ],
            tombstones: [
                Tombstone(id: id("old"), deletedAt: ago(days: 4)),
                Tombstone(id: id("zz"), deletedAt: ago(days: 100)),
            ])
        let outcome = merged(local, backup, MergeOptions(now: now, mode: .replace))
        #expect(outcome.document.challenges == backup.challenges)
        #expect(outcome.document.tombstones.map(\.id) == [id("old")])
        var expected = MergeReport()
        expected.challenges.added = 1
        expected.challenges.updated = 1
        expected.challenges.unchanged = 1
        expected.challenges.deleted = 1
        expected.dayLogs.droppedOrphans = 1
        expected.tombstones.unchanged = 1
        expected.tombstones.expired = 1
        #expect(outcome.report == expected)
    }

    /// The backup's kept day logs come with it, except those under a tombstone the window
    /// drops: the result must stay a valid file.
    @Test func replaceKeepsTheBackupsKeptDayLogsButNotThoseOfAnExpiredTombstone() {
        let kept = log("old", 0, updated: ago(days: 5))
        let expired = log("zz", 0, updated: ago(days: 101))
        let backup = document(
            device: "laptop", logs: [kept, expired],
            tombstones: [
                Tombstone(id: id("old"), deletedAt: ago(days: 4)),
                Tombstone(id: id("zz"), deletedAt: ago(days: 100)),
            ])
        let local = document(
            logs: [kept], tombstones: [Tombstone(id: id("old"), deletedAt: ago(days: 4))])
        let outcome = merged(local, backup, MergeOptions(now: now, mode: .replace))
        #expect(outcome.document.dayLogs == [kept])
        #expect(outcome.report.dayLogs.keptUnderTombstone == 1)
        #expect(outcome.report.dayLogs.droppedOrphans == 1)
        #expect(BackupValidator.validate(outcome.document) == [])
    }

    @Test func replaceHasNoGuard() {
        let (local, incoming) = Self.staleCase()
        let outcome = merged(
            local, incoming, MergeOptions(now: now, mode: .replace, clockGuard: true))
        #expect(outcome.document.challenges == incoming.challenges)
        #expect(outcome.report.challenges.heldBack == 0)
    }

    /// No guard in replace, but rule 8's report is "always": the same items as a merge reports.
    @Test func replaceStillReportsFutureStamps() {
        let (local, incoming) = Self.futureCase()
        let outcome = merged(
            local, incoming, MergeOptions(now: now, mode: .replace, clockGuard: true))
        #expect(
            Set(outcome.futureStamped.map(\.item))
                == [.challenge(id("f")), .challenge(id("t")), .dayLog(incoming.dayLogs[0].key)])
        #expect(outcome.document.challenges == incoming.challenges)
        #expect(outcome.report.challenges.heldBack == 0)
    }
}

/// FORMAT.md §3.5's exact readings of the guards, each pinned at its millisecond edge.
struct MergeGuardReadingTests {
    /// Rule 8: future stamps are reported always, even when the item's challenge is held back
    /// for another reason (the stale guard) or the guard holds both back.
    @Test(arguments: [false, true])
    func aFutureLogOfAHeldBackChallengeIsStillReported(clockGuard: Bool) {
        let future = now.adding(days: 2)
        let local = document([challenge("a", updated: ago(days: 2))])
        // With the guard on, `f` itself is future; with it off, `f` is stale.
        let incoming = document(
            device: "other", exported: clockGuard ? ago(days: 1) : ago(days: 120),
            [challenge("f", updated: clockGuard ? future : ago(days: 130))],
            logs: [log("f", 0, updated: future)])
        let outcome = merged(local, incoming, MergeOptions(now: now, clockGuard: clockGuard))
        #expect(outcome.futureStamped.map(\.item).contains(.dayLog(incoming.dayLogs[0].key)))
        #expect(outcome.report.challenges.heldBack == 1)
        #expect(outcome.report.dayLogs.heldBack == 1)
        #expect(outcome.document.dayLogs.isEmpty)
    }
}

extension MergeGuardReadingTests {
    struct StaleEdge: Sendable, CustomTestStringConvertible {
        /// Milliseconds before `now − window` (0: exactly at it).
        var exportedBefore: Int64
        var updatedBefore: Int64
        var heldBack: Bool
        var testDescription: String {
            "exported \(exportedBefore) ms, updated \(updatedBefore) ms before the window"
        }
    }

    /// `exportedAt < now − window` and `updatedAt < now − window`, both strict, in ms.
    @Test(arguments: [
        StaleEdge(exportedBefore: 1, updatedBefore: 1, heldBack: true),
        StaleEdge(exportedBefore: 0, updatedBefore: 1, heldBack: false),
        StaleEdge(exportedBefore: 1, updatedBefore: 0, heldBack: false),
        StaleEdge(exportedBefore: 0, updatedBefore: 0, heldBack: false),
    ])
    func staleGuardEdges(_ edge: StaleEdge) {
        let local = document([challenge("a", updated: ago(days: 2))])
        let incoming = document(
            device: "old", exported: ago(days: 90, ms: edge.exportedBefore),
            [challenge("y", updated: ago(days: 90, ms: edge.updatedBefore))],
            logs: [log("y", 0, updated: ago(days: 100))])
        let report = merged(local, incoming).report
        #expect(report.challenges.heldBack == (edge.heldBack ? 1 : 0))
        #expect(report.challenges.added == (edge.heldBack ? 0 : 1))
        #expect(report.dayLogs.heldBack == (edge.heldBack ? 1 : 0))
        #expect(report.dayLogs.added == (edge.heldBack ? 0 : 1))
    }

    /// "Missing locally" means neither live nor tombstoned here after rule 1, and a local
    /// side with only a live tombstone is not empty.
    @Test func aTombstoneHereKeepsTheGuardOnAndItsIDFromBeingHeldBack() {
        let incoming = document(
            device: "old", exported: ago(days: 120),
            [challenge("y", updated: ago(days: 130)), challenge("z", updated: ago(days: 130))])
        let local = document(tombstones: [Tombstone(id: id("z"), deletedAt: ago(days: 80))])
        let outcome = merged(local, incoming)
        // `y` is missing here and old: held back. `z` is tombstoned here: rule 3 decides.
        #expect(outcome.report.challenges.heldBack == 1)
        #expect(outcome.report.challenges.keptDeleted == 1)
        #expect(outcome.document.challenges.isEmpty)
        #expect(outcome.document.tombstones == local.tombstones)
    }

    struct FutureEdge: Sendable, CustomTestStringConvertible {
        var kind: String
        /// Milliseconds after `now + 24 h`.
        var after: Int64
        var testDescription: String { "\(kind) \(after) ms past now + 24 h" }
    }

    /// `stamp > now + 24 h`, for challenges, day logs and tombstones alike.
    @Test(
        arguments: ["challenge", "dayLog", "tombstone"].flatMap { kind in
            [FutureEdge(kind: kind, after: 0), FutureEdge(kind: kind, after: 1)]
        })
    func clockGuardEdges(_ edge: FutureEdge) {
        let stamp = now.adding(days: 1).adding(milliseconds: edge.after)
        let local = document([challenge("a", updated: ago(days: 2))])
        let incoming: BackupDocument
        switch edge.kind {
        case "challenge": incoming = document([challenge("f", updated: stamp)])
        case "dayLog":
            incoming = document(
                [challenge("a", updated: ago(days: 2))], logs: [log("a", 0, updated: stamp)])
        default: incoming = document(tombstones: [Tombstone(id: id("t"), deletedAt: stamp)])
        }
        let future = edge.after > 0
        let off = merged(local, incoming)
        #expect(off.futureStamped.count == (future ? 1 : 0))
        let on = merged(local, incoming, MergeOptions(now: now, clockGuard: true))
        #expect(on.futureStamped.count == (future ? 1 : 0))
        let report = on.report
        let heldBack =
            report.challenges.heldBack + report.dayLogs.heldBack + report.tombstones.heldBack
        #expect(heldBack == (future ? 1 : 0))
        // Held back means not taking part: the result is the local side's content.
        let kept = on.document
        #expect(
            (kept.challenges == local.challenges && kept.dayLogs == local.dayLogs
                && kept.tombstones == local.tombstones) == future)
    }
}

/// FORMAT.md §6.1/§4b: each challenge id with a live copy on either side gets exactly the one count
/// the definitions give it; tombstones get theirs. One id per case, beside a bystander `a`
/// that is only here (which counts `unchanged`).
struct MergeCountTests {
    enum Side: Sendable {
        case none
        case copy(daysAgo: Int, title: String = "Water")
        case tombstone(daysAgo: Int)
    }

    enum Count: Sendable {
        case added, updated, unchanged, deleted, keptDeleted, revived, none
    }

    enum TombstoneCount: Sendable {
        case added, unchanged, expired, none
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var local: Side
        var incoming: Side
        var challenge: Count
        var tombstone: TombstoneCount
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "new here", local: .none, incoming: .copy(daysAgo: 5), challenge: .added,
            tombstone: .none),
        Case(
            name: "same copy", local: .copy(daysAgo: 5), incoming: .copy(daysAgo: 5),
            challenge: .unchanged, tombstone: .none),
        Case(
            name: "older incoming edit", local: .copy(daysAgo: 3),
            incoming: .copy(daysAgo: 5, title: "Tea"), challenge: .unchanged, tombstone: .none),
        Case(
            name: "newer incoming edit", local: .copy(daysAgo: 5),
            incoming: .copy(daysAgo: 3, title: "Tea"), challenge: .updated, tombstone: .none),
        Case(
            name: "newer incoming delete", local: .copy(daysAgo: 5),
            incoming: .tombstone(daysAgo: 3),
            challenge: .deleted, tombstone: .added),
        Case(
            name: "delete at the edit's instant", local: .copy(daysAgo: 5),
            incoming: .tombstone(daysAgo: 5), challenge: .deleted, tombstone: .added),
        Case(
            name: "older incoming delete", local: .copy(daysAgo: 3),
            incoming: .tombstone(daysAgo: 5),
            challenge: .unchanged, tombstone: .none),
        Case(
            name: "re-import of a deleted copy", local: .tombstone(daysAgo: 3),
            incoming: .copy(daysAgo: 5), challenge: .keptDeleted, tombstone: .none),
        Case(
            name: "edit after the delete here", local: .tombstone(daysAgo: 5),
            incoming: .copy(daysAgo: 3), challenge: .revived, tombstone: .none),
        Case(
            name: "delete on both sides", local: .tombstone(daysAgo: 5),
            incoming: .tombstone(daysAgo: 3), challenge: .none, tombstone: .unchanged),
        Case(
            name: "incoming delete only", local: .none, incoming: .tombstone(daysAgo: 3),
            challenge: .none, tombstone: .added),
        Case(
            name: "expired delete here", local: .tombstone(daysAgo: 91),
            incoming: .copy(daysAgo: 95), challenge: .added, tombstone: .expired),
        Case(
            name: "expired on both sides, one id", local: .tombstone(daysAgo: 91),
            incoming: .tombstone(daysAgo: 92), challenge: .none, tombstone: .expired),
        Case(
            name: "expired incoming delete", local: .copy(daysAgo: 100),
            incoming: .tombstone(daysAgo: 91), challenge: .unchanged, tombstone: .expired),
    ]

    private static func content(_ side: Side) -> (challenges: [Challenge], tombstones: [Tombstone])
    {
        switch side {
        case .none: return ([], [])
        case .copy(let days, let title):
            return ([challenge("x", updated: ago(days: days), title: title)], [])
        case .tombstone(let days): return ([], [Tombstone(id: id("x"), deletedAt: ago(days: days))])
        }
    }

    @Test(arguments: cases)
    func oneCountPerID(_ test: Case) {
        let here = Self.content(test.local)
        let there = Self.content(test.incoming)
        let local = document(
            [challenge("a", updated: ago(days: 1))] + here.challenges, tombstones: here.tombstones)
        let incoming = document(device: "laptop", there.challenges, tombstones: there.tombstones)
        var expected = MergeReport()
        expected.challenges.unchanged = 1
        switch test.challenge {
        case .added: expected.challenges.added += 1
        case .updated: expected.challenges.updated += 1
        case .unchanged: expected.challenges.unchanged += 1
        case .deleted: expected.challenges.deleted += 1
        case .keptDeleted: expected.challenges.keptDeleted += 1
        case .revived: expected.challenges.revived += 1
        case .none: break
        }
        switch test.tombstone {
        case .added: expected.tombstones.added = 1
        case .unchanged: expected.tombstones.unchanged = 1
        case .expired: expected.tombstones.expired = 1
        case .none: break
        }
        #expect(merged(local, incoming).report == expected)
    }

    /// A held-back key counts only `heldBack`, even with a live copy here that stays.
    @Test func aHeldBackKeyCountsOnlyHeldBack() {
        let mine = challenge("x", updated: ago(days: 2))
        let local = document([mine], logs: [log("x", 0, updated: ago(days: 2))])
        let incoming = document(
            [challenge("x", updated: now.adding(days: 3), title: "Tea")],
            logs: [log("x", 0, updated: ago(days: 1), note: "later")])
        let outcome = merged(local, incoming, MergeOptions(now: now, clockGuard: true))
        var expected = MergeReport()
        expected.challenges.heldBack = 1
        expected.dayLogs.heldBack = 1
        #expect(outcome.report == expected)
        #expect(outcome.document.challenges == [mine])
        #expect(outcome.document.dayLogs == local.dayLogs)
    }
}

extension MergeEdgeTests {
    /// FORMAT.md §5.1's own example, which version 3's rule 5 made order-dependent: a={X, its log},
    /// b={tombstone X}, c={X edited after the delete}: both orders keep the log.
    @Test func ruleFiveKeepsTheLogInBothOrders() {
        let a = document(
            [challenge("x", updated: ago(days: 9))], logs: [log("x", 0, updated: ago(days: 9))])
        let b = document(tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 5))])
        let edited = challenge("x", updated: ago(days: 3), title: "Tea")
        let c = document([edited])
        let left = merged(merged(a, b).document, c).document
        let right = merged(a, merged(b, c).document).document
        #expect(left.challenges == [edited])
        #expect(right.challenges == [edited])
        #expect(left.tombstones.isEmpty && right.tombstones.isEmpty)
        #expect(left.dayLogs == a.dayLogs)
        #expect(right.dayLogs == a.dayLogs)
    }
}

extension MergeCountTests {
    enum LogCount: Sendable {
        case added, updated, unchanged, keptUnderTombstone, droppedOrphans, heldBack
    }

    struct LogCase: Sendable, CustomTestStringConvertible {
        var name: String
        var local: BackupDocument
        var incoming: BackupDocument
        var clockGuard = false
        var count: LogCount
        var testDescription: String { name }
    }

    static let x = challenge("x", updated: ago(days: 9))
    static let logCases: [LogCase] = [
        LogCase(
            name: "new log", local: document([x]),
            incoming: document([x], logs: [log("x", 0, updated: ago(days: 2))]), count: .added),
        LogCase(
            name: "same log", local: document([x], logs: [log("x", 0, updated: ago(days: 2))]),
            incoming: document([x], logs: [log("x", 0, updated: ago(days: 2))]), count: .unchanged),
        LogCase(
            name: "older incoming log",
            local: document([x], logs: [log("x", 0, updated: ago(days: 2))]),
            incoming: document([x], logs: [log("x", 0, updated: ago(days: 4), note: "z")]),
            count: .unchanged),
        LogCase(
            name: "newer incoming log",
            local: document([x], logs: [log("x", 0, updated: ago(days: 4))]),
            incoming: document([x], logs: [log("x", 0, updated: ago(days: 2), note: "z")]),
            count: .updated),
        LogCase(
            name: "its challenge deleted by the backup",
            local: document([x], logs: [log("x", 0, updated: ago(days: 4))]),
            incoming: document(tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 1))]),
            count: .keptUnderTombstone),
        LogCase(
            name: "its challenge deleted here",
            local: document(tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 1))]),
            incoming: document([x], logs: [log("x", 0, updated: ago(days: 2))]),
            count: .keptUnderTombstone),
        LogCase(
            name: "kept here, its challenge revived by the backup",
            local: document(
                logs: [log("x", 0, updated: ago(days: 4))],
                tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 5))]),
            incoming: document([challenge("x", updated: ago(days: 3))]), count: .unchanged),
        LogCase(
            name: "kept here, revived with a newer copy",
            local: document(
                logs: [log("x", 0, updated: ago(days: 4))],
                tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 5))]),
            incoming: document(
                [challenge("x", updated: ago(days: 3))],
                logs: [log("x", 0, updated: ago(days: 2), note: "z")]), count: .updated),
        LogCase(
            name: "kept under an expired tombstone",
            local: document(
                logs: [log("x", 0, updated: ago(days: 95))],
                tombstones: [Tombstone(id: id("x"), deletedAt: ago(days: 91))]),
            incoming: document(), count: .droppedOrphans),
        LogCase(
            name: "kept under a future tombstone",
            local: document(),
            incoming: document(
                logs: [log("x", 0, updated: ago(days: 4))],
                tombstones: [Tombstone(id: id("x"), deletedAt: now.adding(days: 2))]),
            clockGuard: true, count: .heldBack),
        LogCase(
            name: "its challenge stale",
            local: document(tombstones: [Tombstone(id: id("q"), deletedAt: ago(days: 1))]),
            incoming: document(
                exported: ago(days: 100), [challenge("x", updated: ago(days: 95))],
                logs: [log("x", 0, updated: ago(days: 95))]), count: .heldBack),
        LogCase(
            name: "stamped in the future",
            local: document([x], logs: [log("x", 0, updated: ago(days: 4))]),
            incoming: document([x], logs: [log("x", 0, updated: now.adding(days: 2))]),
            clockGuard: true, count: .heldBack),
    ]

    @Test(arguments: logCases)
    func oneCountPerDayLog(_ test: LogCase) {
        let report = merged(
            test.local, test.incoming, MergeOptions(now: now, clockGuard: test.clockGuard)
        ).report
        var expected = MergeReport.DayLogs()
        switch test.count {
        case .added: expected.added = 1
        case .updated: expected.updated = 1
        case .unchanged: expected.unchanged = 1
        case .keptUnderTombstone: expected.keptUnderTombstone = 1
        case .droppedOrphans: expected.droppedOrphans = 1
        case .heldBack: expected.heldBack = 1
        }
        #expect(report.dayLogs == expected)
    }
}
