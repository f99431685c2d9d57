/// A document's day logs, stored compactly: the bulk of every large document (issue 41).
///
/// Callers see a collection of `DayLog` values, sorted by key like the array it replaces; what
/// differs is storage. A `DayLog` value holds a values array and strings of its own, about
/// 250 bytes a log in small heap blocks; here a log is one 32-byte record in one contiguous
/// buffer, its values two small integers each in two shared arrays, its note bytes in one
/// shared buffer, and each challenge and task id one table entry however many logs name it.
/// A log is made into a value only when read through the subscript; the validator, the writer
/// and the merge read it through `withParts(at:_:)` without making one.
///
/// A log the compact form cannot hold exactly (a value or mood out of its small range, a note
/// over 65,535 bytes) is kept whole beside the records, so the store holds every `DayLog`
/// exactly, valid or not: the validator must see what the caller or the file gave.
public struct DayLogStore: Sendable {
    /// One log, or the place of a whole one in `wholeLogs` when `isWhole`.
    struct Record: Sendable {
        var updatedAt: Int64
        var day: Int32
        /// Index into `challengeIDs`.
        var challenge: UInt32
        /// First of the log's entries in `valueTasks` and `valueNumbers`; for a whole log, its
        /// index in `wholeLogs`.
        var valueStart: UInt32
        var valueCount: UInt32
        var noteStart: UInt32
        var noteCount: UInt16
        /// 0 for none, else 1…255.
        var mood: UInt8
        var isWhole: Bool
    }

    private(set) var records: [Record] = []
    /// Logs come grouped by challenge, so a new entry is made only when a log's challenge is not
    /// the previous log's: about one entry per challenge.
    private(set) var challengeIDs: [ChallengeID] = []
    private(set) var taskIDs: [TaskID] = []
    private var taskIndex: [TaskID: UInt32] = [:]
    /// The last few task entries made or found: a challenge's logs name the same few tasks, and
    /// comparing a few short ids costs less than hashing one.
    private var recentTasks: [(id: TaskID, index: UInt32)] = []
    /// Index into `taskIDs`, per value.
    private(set) var valueTasks: [UInt32] = []
    private(set) var valueNumbers: [UInt16] = []
    /// The notes' UTF-8 bytes, one after another.
    private(set) var noteBytes: [UInt8] = []
    private var wholeLogs: [DayLog] = []

    /// No logs.
    public init() {}

    /// The logs of `logs`, which must be sorted by key and unique, as `BackupDocument` requires.
    public init(_ logs: some Sequence<DayLog>) {
        for log in logs { append(log) }
    }

    /// Room for `logs` logs and `values` values without growing: the reader reserves its bound
    /// once, and only the pages it fills cost memory.
    mutating func reserve(logs: Int, values: Int, noteBytes bytes: Int) {
        records.reserveCapacity(logs)
        valueTasks.reserveCapacity(values)
        valueNumbers.reserveCapacity(values)
        noteBytes.reserveCapacity(bytes)
    }

    /// Room for every log of both stores: a merge writes at most one log per key.
    mutating func reserve(like local: DayLogStore, _ incoming: DayLogStore) {
        reserve(
            logs: local.records.count + incoming.records.count,
            values: local.valueTasks.count + incoming.valueTasks.count,
            noteBytes: local.noteBytes.count + incoming.noteBytes.count)
    }

    // MARK: Adding logs

    /// What copying logs from one store into another has learnt: which of this store's task
    /// entries each of the source's is, and the source's last challenge entry and its own.
    struct Transfer {
        fileprivate var tasks: [UInt32?] = []
        fileprivate var challenge: (source: UInt32, here: UInt32)?
    }

    /// Copies the log at `position` of `source` after these, without making it a value: the
    /// merge's winners.
    mutating func append(from source: DayLogStore, at position: Int, transfer: inout Transfer) {
        var record = source.records[position]
        if record.isWhole {
            appendWhole(source.wholeLogs[Int(record.valueStart)])
            return
        }
        if let known = transfer.challenge, known.source == record.challenge,
            challengeIDs.count - 1 == Int(known.here)
        {
            record.challenge = known.here
        } else {
            let here = challengeIndex(source.challengeIDs[Int(record.challenge)])
            transfer.challenge = (record.challenge, here)
            record.challenge = here
        }
        if transfer.tasks.count < source.taskIDs.count {
            transfer.tasks += repeatElement(nil, count: source.taskIDs.count - transfer.tasks.count)
        }
        let start = Int(record.valueStart)
        for index in start..<start + Int(record.valueCount) {
            let task = Int(source.valueTasks[index])
            let mapped = transfer.tasks[task] ?? taskIndex(source.taskIDs[task])
            transfer.tasks[task] = mapped
            valueTasks.append(mapped)
            valueNumbers.append(source.valueNumbers[index])
        }
        record.valueStart = UInt32(valueTasks.count) - record.valueCount
        let noteStart = Int(record.noteStart)
        record.noteStart = UInt32(noteBytes.count)
        noteBytes.append(
            contentsOf: source.noteBytes[noteStart..<noteStart + Int(record.noteCount)])
        records.append(record)
    }

    /// Adds a log after the others, from its parts, without making a `DayLog`.
    mutating func append(
        key: DayLogKey, values: some Collection<TaskValue>, note: some Collection<UInt8>,
        mood: Int?, updatedAt: Timestamp
    ) {
        guard Self.fits(values: values, noteCount: note.count, mood: mood) else {
            appendWhole(
                DayLog(
                    key: key, values: Array(values), note: String(decoding: note, as: UTF8.self),
                    mood: mood, updatedAt: updatedAt))
            return
        }
        records.append(
            Record(
                updatedAt: updatedAt.millisecondsSince1970, day: key.day.dayNumber,
                challenge: challengeIndex(key.challengeID),
                valueStart: UInt32(valueTasks.count), valueCount: UInt32(values.count),
                noteStart: UInt32(noteBytes.count), noteCount: UInt16(note.count),
                mood: UInt8(mood ?? 0), isWhole: false))
        for value in values {
            valueTasks.append(taskIndex(value.taskID))
            valueNumbers.append(UInt16(value.value))
        }
        noteBytes.append(contentsOf: note)
    }

    /// Adds `log` after the others.
    public mutating func append(_ log: DayLog) {
        var note = log.note
        note.withUTF8 { bytes in
            append(
                key: log.key, values: log.values, note: bytes, mood: log.mood,
                updatedAt: log.updatedAt)
        }
    }

    /// Adds the logs of `other` after these, its ids folded into these tables: the reader's
    /// second half joining the first.
    mutating func append(contentsOf other: DayLogStore) {
        records.reserveCapacity(records.count + other.records.count)
        var transfer = Transfer()
        for position in other.indices {
            append(from: other, at: position, transfer: &transfer)
        }
    }

    private mutating func appendWhole(_ log: DayLog) {
        records.append(
            Record(
                updatedAt: log.updatedAt.millisecondsSince1970, day: log.key.day.dayNumber,
                challenge: challengeIndex(log.key.challengeID),
                valueStart: UInt32(wholeLogs.count), valueCount: 0, noteStart: 0, noteCount: 0,
                mood: 0, isWhole: true))
        wholeLogs.append(log)
    }

    private static func fits(
        values: some Collection<TaskValue>, noteCount: Int, mood: Int?
    ) -> Bool {
        guard noteCount <= Int(UInt16.max), mood.map({ (1...255).contains($0) }) ?? true else {
            return false
        }
        return values.allSatisfy { (0...Int(UInt16.max)).contains($0.value) }
    }

    /// The challenge table's entry for `id`: the last one when it is the same id.
    private mutating func challengeIndex(_ id: ChallengeID) -> UInt32 {
        if let last = challengeIDs.last, last == id { return UInt32(challengeIDs.count - 1) }
        challengeIDs.append(id)
        return UInt32(challengeIDs.count - 1)
    }

    private mutating func taskIndex(_ id: TaskID) -> UInt32 {
        for recent in recentTasks where recent.id == id { return recent.index }
        let index: UInt32
        if let known = taskIndex[id] {
            index = known
        } else {
            index = UInt32(taskIDs.count)
            taskIDs.append(id)
            taskIndex[id] = index
        }
        if recentTasks.count == 8 { recentTasks.removeFirst() }
        recentTasks.append((id, index))
        return index
    }

    // MARK: Reading logs

    /// The key of the log at `position`, without making the log.
    public func key(at position: Int) -> DayLogKey {
        let record = records[position]
        return DayLogKey(
            challengeID: challengeIDs[Int(record.challenge)], day: DayKey(dayNumber: record.day))
    }

    /// The challenge table's entry of the log at `position`: logs with the same entry name the
    /// same challenge, so a walk can tell a new challenge without comparing ids.
    func challengeEntry(at position: Int) -> UInt32 { records[position].challenge }

    /// The id of a challenge table's entry.
    func challengeID(entry: UInt32) -> ChallengeID { challengeIDs[Int(entry)] }

    /// When the log at `position` was last edited, without making the log.
    public func updatedAt(at position: Int) -> Timestamp {
        Timestamp(millisecondsSince1970: records[position].updatedAt)
    }

    private func makeLog(_ record: Record) -> DayLog {
        if record.isWhole { return wholeLogs[Int(record.valueStart)] }
        let start = Int(record.valueStart)
        let values = (start..<start + Int(record.valueCount)).map { index in
            TaskValue(taskID: taskIDs[Int(valueTasks[index])], value: Int(valueNumbers[index]))
        }
        let noteStart = Int(record.noteStart)
        return DayLog(
            key: DayLogKey(
                challengeID: challengeIDs[Int(record.challenge)], day: DayKey(dayNumber: record.day)
            ),
            values: values,
            note: String(
                decoding: noteBytes[noteStart..<noteStart + Int(record.noteCount)], as: UTF8.self),
            mood: record.mood == 0 ? nil : Int(record.mood),
            updatedAt: Timestamp(millisecondsSince1970: record.updatedAt))
    }

    /// A compact log's parts, read in place: pointers into the store, valid only inside the
    /// `withParts` call that gave them. What the writer and the merge read a log through, so
    /// that neither makes a value nor copies the store (each copy retains every buffer, and the
    /// two cores would count references to the same ones).
    struct Parts {
        let challengeID: String
        let day: DayKey
        let mood: Int?
        let updatedAt: Timestamp
        let note: UnsafeBufferPointer<UInt8>
        /// Per value, its entry in `taskIDs`, and its number.
        let tasks: UnsafeBufferPointer<UInt32>
        let numbers: UnsafeBufferPointer<UInt16>
        let taskIDs: UnsafeBufferPointer<TaskID>
    }

    /// `body` given the parts of the log at `position`; false, without calling it, for a log
    /// kept whole.
    func withParts(at position: Int, _ body: (Parts) -> Void) -> Bool {
        let record = records[position]
        guard !record.isWhole else { return false }
        let values = Int(record.valueStart)..<Int(record.valueStart) + Int(record.valueCount)
        let note = Int(record.noteStart)..<Int(record.noteStart) + Int(record.noteCount)
        noteBytes.withUnsafeBufferPointer { notes in
            valueTasks.withUnsafeBufferPointer { tasks in
                valueNumbers.withUnsafeBufferPointer { numbers in
                    taskIDs.withUnsafeBufferPointer { ids in
                        body(
                            Parts(
                                challengeID: challengeIDs[Int(record.challenge)].rawValue,
                                day: DayKey(dayNumber: record.day),
                                mood: record.mood == 0 ? nil : Int(record.mood),
                                updatedAt: Timestamp(millisecondsSince1970: record.updatedAt),
                                note: UnsafeBufferPointer(rebasing: notes[note]),
                                tasks: UnsafeBufferPointer(rebasing: tasks[values]),
                                numbers: UnsafeBufferPointer(rebasing: numbers[values]),
                                taskIDs: ids))
                    }
                }
            }
        }
        return true
    }

    // MARK: Reordering

    /// Sorts the logs by key, keeping the first of logs with equal keys and telling
    /// `duplicate` each key dropped: records move, values and notes stay where they are.
    mutating func sortByKey(duplicate: (DayLogKey) -> Void = { _ in }) {
        let ids = challengeIDs
        let key = { (record: Record) in
            DayLogKey(challengeID: ids[Int(record.challenge)], day: DayKey(dayNumber: record.day))
        }
        records.sortDroppingDuplicates(by: { key($0) < key($1) }, dropped: { duplicate(key($0)) })
    }
}

extension DayLogStore: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    /// 0: positions count the logs in key order.
    public var startIndex: Int { 0 }
    /// The number of logs.
    public var endIndex: Int { records.count }

    /// The log at `position`, made into a value. Setting one replaces it; its old values and
    /// note stay in the shared buffers until the store is rebuilt, as edits are rare (tests,
    /// a rollback's few logs) and the reader and the merge only append.
    public subscript(position: Int) -> DayLog {
        get { makeLog(records[position]) }
        set {
            var single = DayLogStore()
            single.append(newValue)
            let end = records.count
            append(contentsOf: single)
            records.swapAt(position, end)
            records.removeLast()
        }
    }

    /// Swaps two logs by their records alone.
    public mutating func swapAt(_ i: Int, _ j: Int) {
        records.swapAt(i, j)
    }

    /// Replaces the logs at `subrange` with `newElements`, whose values and notes are added to
    /// the shared buffers.
    public mutating func replaceSubrange(
        _ subrange: Range<Int>, with newElements: some Collection<DayLog>
    ) {
        let suffix = Array(records[subrange.upperBound...])
        records.removeSubrange(subrange.lowerBound...)
        for log in newElements { append(log) }
        records.append(contentsOf: suffix)
    }

    /// Removes the logs of the challenges `shouldBeRemoved` names, without making any log a
    /// value: asked once per run of logs of one challenge.
    mutating func removeLogs(ofChallengesWhere shouldBeRemoved: (ChallengeID) -> Bool) {
        var answers = ChallengeAnswers()
        let ids = challengeIDs
        records.removeAll { answers.answer(for: $0.challenge, in: ids, shouldBeRemoved) }
    }

    /// How many logs name a challenge `matches` answers true for, asked once per run of logs of
    /// one challenge.
    func countLogs(ofChallengesWhere matches: (ChallengeID) -> Bool) -> Int {
        var answers = ChallengeAnswers()
        return records.count { answers.answer(for: $0.challenge, in: challengeIDs, matches) }
    }

    /// Removes the logs `shouldBeRemoved` answers true for, keeping the others' records.
    public mutating func removeAll(where shouldBeRemoved: (DayLog) throws -> Bool) rethrows {
        var kept: [Record] = []
        kept.reserveCapacity(records.count)
        for record in records where try !shouldBeRemoved(makeLog(record)) {
            kept.append(record)
        }
        records = kept
    }
}

extension DayLogStore: ExpressibleByArrayLiteral {
    /// The logs listed, which must be sorted by key and unique.
    public init(arrayLiteral logs: DayLog...) {
        self.init(logs)
    }
}

extension DayLogStore: Equatable {
    /// The same logs in the same order, however each store holds them.
    public static func == (lhs: DayLogStore, rhs: DayLogStore) -> Bool {
        lhs.count == rhs.count && lhs.indices.allSatisfy { lhs[$0] == rhs[$0] }
    }
}

/// A question about a log's challenge, answered once per challenge table entry: logs come
/// grouped by challenge, so the answer for the previous log's entry is usually the one.
private struct ChallengeAnswers {
    private var last: (entry: UInt32, answer: Bool)?

    mutating func answer(
        for entry: UInt32, in ids: [ChallengeID], _ question: (ChallengeID) -> Bool
    ) -> Bool {
        if let last, last.entry == entry { return last.answer }
        let answer = question(ids[Int(entry)])
        last = (entry, answer)
        return answer
    }
}

extension DayLogStore: CustomReflectable {
    /// The logs as values, as an array of them would show: what a failed test or a debugger
    /// should print, not the records and buffers.
    public var customMirror: Mirror {
        Mirror(self, unlabeledChildren: Array(self), displayStyle: .collection)
    }
}
