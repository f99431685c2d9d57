/// A copy of an item that merges by `updatedAt`, then by canonical bytes.
protocol Copy: Equatable {
    var updatedAt: Timestamp { get }
    func writeCanonical(into out: inout JSONOutput)
    /// True only when the canonical bytes are certainly equal, found without writing them.
    func isSurelyIdentical(to other: Self) -> Bool
}

extension Challenge: Copy {
    func writeCanonical(into out: inout JSONOutput) {
        BackupWriter.write(self, into: &out)
    }

    /// Challenges are few; their bytes decide.
    func isSurelyIdentical(to other: Challenge) -> Bool { false }
}

extension DayLog: Copy {
    func writeCanonical(into out: inout JSONOutput) {
        BackupWriter.write(self, into: &out)
    }

    /// Most day logs are the same on both devices, so this saves writing both. The note,
    /// the one free text, is compared byte by byte (`==` on strings allows Unicode
    /// equivalence); ids are ASCII, where the two agree. Cheap fields first.
    func isSurelyIdentical(to other: DayLog) -> Bool {
        guard updatedAt == other.updatedAt, mood == other.mood, key == other.key,
            values == other.values
        else { return false }
        var note = note
        var otherNote = other.note
        return note.withUTF8 { mine in otherNote.withUTF8 { mine.elementsEqual($0) } }
    }
}

/// Rule 2's answer for one pair of copies.
enum Pick: Equatable, Sendable {
    case local, incoming, identical
}

/// Rule 2 with reusable buffers for canonical bytes, so tie-breaks allocate nothing.
struct TieBreak {
    private var leftBytes = JSONOutput(capacity: 512)
    private var rightBytes = JSONOutput(capacity: 512)

    /// Rule 2 for one pair of copies.
    mutating func pick<C: Copy>(_ local: C, _ incoming: C) -> Pick {
        if local.updatedAt != incoming.updatedAt {
            return local.updatedAt < incoming.updatedAt ? .incoming : .local
        }
        return compareBytes(local, incoming)
    }

    /// `.identical` when the canonical bytes match, else the side whose bytes sort higher.
    mutating func compareBytes<C: Copy>(_ local: C, _ incoming: C) -> Pick {
        if local.isSurelyIdentical(to: incoming) { return .identical }
        leftBytes.reset()
        rightBytes.reset()
        local.writeCanonical(into: &leftBytes)
        incoming.writeCanonical(into: &rightBytes)
        if leftBytes.bytes == rightBytes.bytes { return .identical }
        return leftBytes.bytes.lexicographicallyPrecedes(rightBytes.bytes) ? .incoming : .local
    }
}

/// A copy as a decision names it.
func version(_ copy: some Copy) -> MergeDecision.Version {
    MergeDecision.Version(isTombstone: false, stamp: copy.updatedAt)
}

/// A tombstone as a decision names it.
func version(_ tombstone: Tombstone) -> MergeDecision.Version {
    MergeDecision.Version(isTombstone: true, stamp: tombstone.deletedAt)
}
