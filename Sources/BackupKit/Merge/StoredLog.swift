import Foundation

/// A day log read in place from its store, as the merge's rules see a copy: its stamp, and its
/// canonical bytes only on a tie, without making it a value. A pointer, not the store, so
/// that making one per key retains nothing: the two halves of the walk would otherwise count
/// references to the same buffers from two cores. Valid while the walk that made it holds the
/// store (`DayLogWalk.walk`).
struct StoredLog: Copy {
    let store: UnsafePointer<DayLogStore>
    let position: Int

    var updatedAt: Timestamp { store.pointee.updatedAt(at: position) }

    func writeCanonical(into out: inout JSONOutput) {
        out.compactDayLog(in: store.pointee, at: position, withKey: false)
    }

    /// Cheap fields first, the note byte by byte (`==` on strings allows Unicode equivalence);
    /// ids are ASCII, where the two agree. A log kept whole is compared as a value.
    func isSurelyIdentical(to other: StoredLog) -> Bool {
        var same: Bool?
        _ = store.pointee.withParts(at: position) { mine in
            _ = other.store.pointee.withParts(at: other.position) { theirs in
                same =
                    mine.updatedAt == theirs.updatedAt && mine.day == theirs.day
                    && mine.mood == theirs.mood && mine.tasks.count == theirs.tasks.count
                    && mine.challengeID == theirs.challengeID
                    && sameMemory(mine.numbers, theirs.numbers)
                    && mine.tasks.indices.allSatisfy {
                        mine.taskIDs[Int(mine.tasks[$0])] == theirs.taskIDs[Int(theirs.tasks[$0])]
                    }
                    && sameMemory(mine.note, theirs.note)
            }
        }
        return same ?? (self == other)
    }

    static func == (left: StoredLog, right: StoredLog) -> Bool {
        left.store.pointee[left.position] == right.store.pointee[right.position]
    }
}

/// Whether two buffers hold the same elements, compared as memory (`memcmp`): the generic
/// element-by-element comparison cost more than the rest of the tie-break.
private func sameMemory<Element: BitwiseCopyable>(
    _ left: UnsafeBufferPointer<Element>, _ right: UnsafeBufferPointer<Element>
) -> Bool {
    guard left.count == right.count else { return false }
    guard let a = left.baseAddress, let b = right.baseAddress else { return true }
    return memcmp(a, b, left.count * MemoryLayout<Element>.stride) == 0
}
