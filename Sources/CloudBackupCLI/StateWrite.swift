import BackupKit
import LocalFiles

/// STATE written by `restore` or `rollback` over the bytes the command read it with: those
/// bytes are kept first (as the newest of the previous copies, or aside as a broken file),
/// then STATE is written atomically.
///
/// Nothing is written when STATE is no longer those bytes. The result was made from them, so
/// an edit made since (at the question, during the download) would be overwritten without a
/// trace, and the copy would not hold it either. Exit 6, like a held lock: someone else was
/// using STATE, and running again is the fix.
struct StateWrite {
    let file: String
    /// The command, and what it was doing, for the line that says to run it again.
    let command: String
    let doing: String
    /// STATE's bytes as read; nil: there was no STATE.
    var previous: [UInt8]?
    var keep: Keep

    /// Where STATE's bytes go.
    enum Keep {
        case previousCopies(PreviousCopies)
        /// A broken STATE, kept at this path.
        case aside(String)
    }

    /// The file STATE's bytes are kept in; nil when there was no STATE.
    var keepAs: String? {
        guard previous != nil else { return nil }
        switch keep {
        case .previousCopies(let copies): return copies.newest
        case .aside(let path): return path
        }
    }

    func write(_ document: BackupDocument) throws(CLIError) {
        guard try bytesNow() == previous else {
            throw CLIError(
                "\(file) changed while \(doing); nothing was written; run \(command) again",
                .busy)
        }
        if let previous {
            do {
                switch keep {
                case .previousCopies(let copies): try copies.keep(previous)
                case .aside(let path):
                    try LocalFile.writeAtomically(previous, to: path, mode: 0o600)
                }
            } catch {
                throw BackupFile.failedWrite(error, leaving: "\(file) is unchanged")
            }
        }
        try BackupFile.save(document, to: file)
    }

    /// Whether STATE (`current`) holds `result` already, so that nothing is written: a copy
    /// would be STATE itself, and a new file would tell the user something happened. A STATE
    /// exported before the tombstone window is changed by the export time alone: the next
    /// backup no longer holds its items back.
    static func holds(_ current: BackupDocument?, _ result: BackupDocument, windowStart: Timestamp)
        -> Bool
    {
        guard let current, current.exportedAt >= windowStart else { return false }
        var result = result
        result.exportedAt = current.exportedAt
        return result == current
    }

    /// STATE's bytes as they are now; nil when there is no STATE.
    private func bytesNow() throws(CLIError) -> [UInt8]? {
        do {
            return try LocalFile.read(file)
        } catch {
            guard error.isMissing else {
                throw CLIError("\(error.description); nothing was written", .localWrite)
            }
            return nil
        }
    }
}
