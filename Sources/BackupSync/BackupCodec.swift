import BackupKit
import Gzip

/// How BackupKit documents travel through the sync: validated and migrated on the way in,
/// canonical bytes on the way out, merged by the format's rules with the remote copy as the
/// base and the local document (or another copy of the backup) as the incoming side.
///
/// `backingUp` is the state file `backup` merges into the remote copy. The device backing up
/// is then the local side for the settings it changed since it last backed up or restored
/// (`SharedSettings`): the result carries those of the state file's settings and the
/// backup's others, and `premium`, `appLock` and `deviceId` stay as the remote copy has them,
/// as on any import. Keeping the base's settings always, as a plain merge does, would freeze
/// them at whichever device created the file; taking all of the state file's would have two
/// devices with different settings overwrite each other every night, and undo another
/// device's change to a setting this one did not touch. Everything else (guards, counts, the
/// state file as the incoming side) is the plain merge.
public enum BackupCodec {
    /// The state file `backup` merges into the remote copy, and the profile's record of its
    /// settings (`SharedSettings`; nil: none, and none go up): those that differ from it go up.
    /// Told apart at the merge, so the codec is made before the state file is read (a run that
    /// reads it only when it needs it, `BackupRun.init(name:codec:unlessUnchanged:)`).
    public struct BackingUp: Sendable {
        public var path: String
        public var synced: SharedSettings?

        public init(path: String, synced: SharedSettings?) {
            self.path = path
            self.synced = synced
        }
    }

    /// `compress`: the form uploads take (`SyncCodec.compress`): true, gzip of the canonical
    /// bytes before any `seal` encrypts them, and a plain backup is rewritten gzipped once;
    /// false, the canonical bytes, and a gzipped backup is rewritten plain once; nil, the
    /// form of the backup on Drive, never rewritten for its form alone, as `encrypt` unset
    /// never rewrites for the envelope.
    public static func make(
        allowStale: Bool, backingUp: BackingUp? = nil, readOptions: ReadOptions = ReadOptions(),
        compress: Bool? = nil
    ) -> SyncCodec<BackupDocument> {
        func merged(_ base: BackupDocument, _ incoming: BackupDocument, now: Timestamp, copy: Bool)
            -> Merged<BackupDocument>
        {
            let outcome = BackupKit.merge(
                local: base, incoming: incoming,
                options: MergeOptions(now: now, allowStale: allowStale))
            let source: MergeNotice.Source = copy ? .copy : .state(backingUp?.path)
            var notices: [MergeNotice] = []
            if outcome.report.challenges.heldBack + outcome.report.dayLogs.heldBack > 0 {
                notices.append(.heldBack(outcome, from: source))
            }
            if !outcome.futureStamped.isEmpty {
                notices.append(.futureStamped(outcome, in: source))
            }
            if !copy {
                let ids = MergeNotice.staleSurvivors(
                    of: incoming, missingFrom: base, keptIn: outcome.document, now: now)
                if !ids.isEmpty { notices.append(.staleSurvivors(ids, of: source)) }
            }
            var document = outcome.document
            // The export time changes only with an upload, so "nothing changed" compares equal.
            document.exportedAt = base.exportedAt
            var settings: (before: Settings, after: Settings)?
            if !copy, let backingUp {
                let changed =
                    backingUp.synced?.changes(to: SharedSettings(incoming.settings)) ?? []
                document.settings = SharedSettings.taking(
                    changed, from: incoming.settings, into: base.settings)
                settings = (base.settings, document.settings)
            }
            return Merged(
                document: document, notices: notices,
                record: copy
                    ? nil
                    : MergeRecord(
                        report: outcome.report, decisions: outcome.decisions,
                        baseDevice: base.deviceId, settings: settings))
        }
        var codec = SyncCodec(
            decode: { bytes in
                try BackupReader.read(plainOrGzip: bytes, options: readOptions).document
            },
            // A file the reader did not judge (a newer schema, over the size limit, plain or
            // inflated) is never set aside as invalid, nor replaced.
            isRefusal: { error in
                switch error {
                case BackupFileError.newerSchema, BackupFileError.tooLarge: true
                case GzipError.overLimit: true
                default: false
                }
            },
            encode: { BackupWriter.write($0) },
            merging: { base, incoming, now in merged(base, incoming, now: now, copy: false) },
            stamp: { document, now in
                var stamped = document
                stamped.exportedAt = now
                return stamped
            },
            mergeCopy: { base, copy, now in merged(base, copy, now: now, copy: true) })
        codec.restamp = { bytes, document, now in
            BackupWriter.restamped(bytes, from: document.exportedAt, to: now)
        }
        codec.inflate = { bytes in try Gzip.plain(bytes, maxBytes: readOptions.maxBytes) }
        codec.compress = compress
        return codec
    }
}

/// What a run's merges said, for the caller to word: each kind once per source, though every
/// compare-and-swap round merges again.
public enum MergeNotice {
    public enum Source: Hashable, Sendable {
        /// The local state file (its path, when the caller named it).
        case state(String?)
        /// Another copy of the backup on Drive (a duplicate file).
        case copy
    }

    /// The stale guard held back items of `source`.
    case heldBack(MergeOutcome, from: Source)
    /// Items of `source` stamped more than 24 hours ahead (always reported).
    case futureStamped(MergeOutcome, in: Source)
    /// Challenges of a state exported before the tombstone window, last edited before it, that
    /// the backup does not have and the merge kept: perhaps deletes made elsewhere.
    case staleSurvivors([String], of: Source)

    /// The stale guard's case seen from the side it does not cover (it guards only the incoming
    /// file): `state`, exported before the tombstone window, brings into `result` challenges
    /// that `other` has no live copy of and that were last edited before the window. They may
    /// be deletions whose tombstones have expired since. `state` is STATE in a restore (the
    /// local side) and in a backup (the incoming side, where the guard is off for a backup with
    /// nothing left in it).
    public static func staleSurvivors(
        of state: BackupDocument, missingFrom other: BackupDocument, keptIn result: BackupDocument,
        now: Timestamp
    ) -> [String] {
        // The window the merges of backup and restore use (the default), as the guard reads it.
        let windowStart = MergeOptions(now: now).windowStart
        guard state.exportedAt < windowStart else { return [] }
        let live = Set(other.challenges.map(\.id))
        let kept = Set(result.challenges.map(\.id))
        return state.challenges.filter {
            $0.updatedAt < windowStart && !live.contains($0.id) && kept.contains($0.id)
        }.map(\.id.rawValue)
    }

    var key: String {
        switch self {
        case .heldBack(_, let source): "heldBack \(source)"
        case .futureStamped(_, let source): "future \(source)"
        case .staleSurvivors(_, let source): "survivors \(source)"
        }
    }
}

/// What a merge of the local document (STATE) into the backup did: what `--verbose` and the
/// decision log tell of it.
public struct MergeRecord {
    public var report: MergeReport
    /// Its non-trivial decisions, for the profile's decision log.
    public var decisions: [MergeDecision]
    /// The device id of the copy on Drive it merged into.
    public var baseDevice: DeviceID
    /// The backup's settings before and after the merge took the state file's (`backingUp`
    /// only).
    public var settings: (before: Settings, after: Settings)?
}
