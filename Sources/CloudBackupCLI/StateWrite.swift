import BackupKit
import BackupSync
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

    func write(_ document: BackupDocument, warn: (String) -> Void) throws(CLIError) {
        guard try bytesNow() == previous else {
            throw .changedMeanwhile(file, while: doing, command: command)
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
        try BackupFile.saveFile(document, to: file, warn: warn)
    }

    /// Once STATE holds `document`, the profile's record of STATE's shared settings (see
    /// `SharedSettings`). A replace brings STATE's settings and the backup's in step. A merge
    /// keeps STATE's as they are, changes made here and not backed up yet among them: the
    /// record stays as it was (a new profile's starts here), so the next backup still sends
    /// those changes. A record that cannot be saved costs a warning: STATE is written.
    func recordSettings(
        of document: BackupDocument, replaced: Bool, at path: String, warn: (String) -> Void
    ) {
        let written = SharedSettings(document.settings)
        do {
            try (replaced ? written : SharedSettings.load(from: path) ?? written).save(to: path)
        } catch {
            warn(
                error.lines.joined(separator: "; ")
                    + "; \(file) is written, but a settings change made here before the next "
                    + "backup may not reach Drive")
        }
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
                throw BackupFile.failedWrite(error, leaving: "nothing was written")
            }
            return nil
        }
    }
}
