/// A day log read in place from its store, as the merge's rules see a copy: its stamp, and its
/// canonical bytes only on a tie, without making it a value. A pointer, not the store, so
/// that making one per key retains nothing: the two halves of the walk would otherwise count
/// references to the same arrays from two cores. Valid while the walk that made it holds the
/// store (`DayLogWalk.walk`).
struct StoredLog: Copy {
    let store: UnsafePointer<DayLogStore>
    let position: Int

    var updatedAt: Timestamp { store.pointee.updatedAt(at: position) }

    func writeCanonical(into out: inout JSONOutput) {
        out.compactDayLog(in: store.pointee, at: position, withKey: false)
    }

    func isSurelyIdentical(to other: StoredLog) -> Bool {
        store.pointee.holdsTheSameLog(at: position, as: other.store.pointee, at: other.position)
    }

    static func == (left: StoredLog, right: StoredLog) -> Bool {
        left.store.pointee[left.position] == right.store.pointee[right.position]
    }
}
