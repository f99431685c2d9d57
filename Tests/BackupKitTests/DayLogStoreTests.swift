import Testing

@testable import BackupKit

/// The compact store of day logs (issue 41): whatever a caller puts in, it gives back exactly,
/// compact or not, through every way of changing it.
struct DayLogStoreTests {
    private static let start = DayKey(dayNumber: 20_513)  // 2026-03-01

    private static func log(
        _ challenge: String, _ offset: Int, values: [(String, Int)] = [("water", 8)],
        note: String = "", mood: Int? = 3, stamp: Int64 = 1_790_000_000_000
    ) -> DayLog {
        DayLog(
            key: DayLogKey(
                challengeID: ChallengeID(unchecked: challenge), day: start.adding(days: offset)),
            values: values.map { TaskValue(taskID: TaskID(unchecked: $0.0), value: $0.1) },
            note: note, mood: mood, updatedAt: Timestamp(millisecondsSince1970: stamp))
    }

    /// Logs the compact form cannot hold (the reader lets them through for the validator to
    /// report, and a caller may build them): each comes back as it went in.
    static let awkward: [DayLog] = [
        log("a", 0, values: [("water", 70_000)]),
        log("a", 1, values: [("water", -1)]),
        log("a", 2, mood: 0),
        log("a", 3, mood: 6),
        log("a", 4, mood: -4),
        log("a", 5, mood: 300),
        log("a", 6, note: String(repeating: "é", count: 40_000)),
        log("a", 7, values: [("water", 9_999), ("walk", 10_000)], note: "ok", mood: nil),
    ]

    @Test func everyLogComesBackExactly() {
        let logs =
            Self.awkward + [
                Self.log("b", 0, values: [], note: "", mood: nil),
                Self.log("b", 1, values: [("a", 0), ("b", 65_535)], note: "tabs\tand\nlines ☀️"),
                Self.log("c-d", 0, values: [("water", 1)], mood: 5, stamp: 946_684_800_000),
            ]
        let store = DayLogStore(logs)
        #expect(Array(store) == logs)
        #expect(store.count == logs.count)
        for index in logs.indices {
            #expect(store.key(at: index) == logs[index].key)
            #expect(store.updatedAt(at: index) == logs[index].updatedAt)
        }
    }

    @Test func editsReplaceOnlyTheirLog() {
        var logs = (0..<6).map { Self.log("a", $0, note: "day \($0)") }
        var store = DayLogStore(logs)
        logs[2].note = "a much longer note than the one it replaces"
        logs[2].values.append(TaskValue(taskID: TaskID(unchecked: "zz"), value: 4))
        store[2] = logs[2]
        logs[4] = Self.awkward[0]
        store[4] = Self.awkward[0]
        #expect(Array(store) == logs)

        store.removeAll { $0.key.day == Self.start.adding(days: 3) }
        logs.removeAll { $0.key.day == Self.start.adding(days: 3) }
        #expect(Array(store) == logs)

        store.replaceSubrange(1..<3, with: [Self.log("a", 9)])
        logs.replaceSubrange(1..<3, with: [Self.log("a", 9)])
        #expect(Array(store) == logs)
    }

    @Test func sortingKeepsTheFirstOfEqualKeysAndTellsTheRest() {
        let first = Self.log("b", 1, note: "first")
        var store = DayLogStore([
            Self.log("b", 2), first, Self.log("a-b", 0), Self.log("b", 1, note: "second"),
            Self.log("a", 5),
        ])
        var dropped: [DayLogKey] = []
        store.sortByKey { dropped.append($0) }
        // `a-b` sorts before `a` by bytes ("-" < "/"), as the canonical writer orders keys.
        #expect(
            store.map(\.key.description) == [
                "a-b/2026-03-01", "a/2026-03-06", "b/2026-03-02", "b/2026-03-03",
            ])
        #expect(store[2] == first)
        #expect(dropped == [first.key])
    }

    @Test func copyingALogCarriesItsIdsIntoTheOtherStoresTables() {
        let source = DayLogStore([
            Self.log("a", 0, values: [("run", 3), ("water", 2)], note: "from the phone"),
            Self.log("b", 0, values: [("read", 1)]), Self.awkward[3],
        ])
        var target = DayLogStore([Self.log("0", 0, values: [("water", 8), ("zen", 1)])])
        var transfer = DayLogStore.Transfer()
        for index in [0, 1, 2, 0] {
            target.append(from: source, at: index, transfer: &transfer)
        }
        #expect(
            Array(target) == [
                Self.log("0", 0, values: [("water", 8), ("zen", 1)]), source[0], source[1],
                source[2], source[0],
            ])
    }

    @Test func equalLogsMakeEqualStoresHoweverBuilt() {
        let logs = (0..<4).map { Self.log("a", $0) }
        var edited = DayLogStore(logs)
        edited[1] = logs[1]
        #expect(edited == DayLogStore(logs))
        edited[1].mood = 1
        #expect(edited != DayLogStore(logs))
    }
}
