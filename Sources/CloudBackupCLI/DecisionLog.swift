import BackupKit
import Foundation
import LocalFiles

/// What each merge decided, kept for the moment a user says "I did it and the system lost it":
/// `merge --log FILE` for a manual merge, and the profile's `decisions.jsonl` for the merges
/// `backup` and `restore --merge` make. One JSON line per merge, one vocabulary (`write`):
/// each non-trivial decision with its item key, the winner, the rule (`MergeDecision.Reason`)
/// and both sides' stamps, and the challenge's title, so a person finds the item, except in a
/// profile that encrypts its backups: its log keeps keys and stamps only, so it says no more
/// about the data than Drive's file names do.
///
/// The profile's log is bounded: lines older than `maxAgeDays` go, then the oldest until it is
/// under `maxBytes`, trimmed by whole lines in an atomic rewrite when a line is added.
struct DecisionLog {
    let path: String
    var bounds = Bounds()

    /// How much the log keeps: the profile's `"decisionLog": {"days": N, "megabytes": N}`.
    struct Bounds: Equatable {
        var days = 90
        var bytes = 10 << 20

        init() {}

        /// From config.json, each level left out keeping its default.
        init(_ value: Any, in path: String) throws(CLIError) {
            let fix = #"give e.g. "decisionLog": {"days": 90, "megabytes": 10}"#
            guard let object = value as? [String: Any] else {
                throw CLIError.badProfile(path, "setting 'decisionLog' must be an object; \(fix)")
            }
            for (name, count) in object {
                let range = name == "days" ? 1...3650 : 1...1024
                guard let number = Profile.wholeNumber(count), range.contains(number),
                    ["days", "megabytes"].contains(name)
                else {
                    throw CLIError.badProfile(
                        path,
                        "'decisionLog.\(name)' must be days (1 to 3650) or megabytes (1 to 1024); \(fix)"
                    )
                }
                if name == "days" { days = number } else { bytes = number << 20 }
            }
        }
    }

    /// One side of a merge as the log names it: what it was, and whose.
    struct Side {
        /// `backup` (the copy on Drive) or `state` (STATE).
        var role: String
        var deviceId: DeviceID
        /// The Drive revision, and its checksum, for the backup's side.
        var revision: String?
        var md5: String?
        /// STATE's path, for the state's side.
        var path: String?
    }

    /// Adds one merge's line, when it decided anything; the caller warns on a throw, as a log
    /// that cannot be written never fails the run it describes. `titles`: the challenges'
    /// titles, from the documents merged; nil (an encrypting profile) leaves them out.
    func append(
        command: String, at now: Timestamp, local: Side, incoming: Side,
        decisions: [MergeDecision], titles: [BackupDocument]?
    ) throws(CLIError) {
        guard !decisions.isEmpty else { return }
        var out = JSONOutput()
        out.beginObject()
        out.key("time")
        out.timestamp(now)
        out.key("command")
        out.string(command)
        for (name, side) in [("local", local), ("incoming", incoming)] {
            out.key(text: name)
            out.beginObject()
            out.key("role")
            out.string(side.role)
            out.key("deviceId")
            out.string(side.deviceId.rawValue)
            if let revision = side.revision {
                out.key("revision")
                out.string(revision)
            }
            if let md5 = side.md5 {
                out.key("md5Checksum")
                out.string(md5)
            }
            if let path = side.path {
                out.key("path")
                out.string(path)
            }
            out.endObject()
        }
        out.key("decisions")
        let titled = titles.map { documents in
            Dictionary(
                documents.flatMap(\.challenges).map { ($0.id, $0.title) },
                uniquingKeysWith: { first, _ in first })
        }
        Self.write(decisions, into: &out, titles: titled)
        out.endObject()
        try add(out.bytes, now: now)
    }

    /// The decisions as `merge --log` and the profile's log record them.
    static func write(
        _ decisions: [MergeDecision], into out: inout JSONOutput,
        titles: [ChallengeID: String]? = nil
    ) {
        out.beginArray()
        for decision in decisions {
            out.beginObject()
            out.key("item")
            switch decision.item {
            case .challenge: out.string("challenge")
            case .dayLog: out.string("dayLog")
            }
            out.key("key")
            out.string(decision.item.key)
            let challenge: ChallengeID =
                switch decision.item {
                case .challenge(let id): id
                case .dayLog(let key): key.challengeID
                }
            if let title = titles?[challenge] {
                out.key("title")
                out.string(title)
            }
            out.key("winner")
            out.string(decision.winner.rawValue)
            out.key("reason")
            out.string(decision.reason.rawValue)
            for (side, version) in [("local", decision.local), ("incoming", decision.incoming)] {
                out.key(text: side)
                if let version {
                    out.beginObject()
                    out.key(version.isTombstone ? "deletedAt" : "updatedAt")
                    out.timestamp(version.stamp)
                    out.endObject()
                } else {
                    out.null()
                }
            }
            out.endObject()
        }
        out.endArray()
    }

    /// Whether the log is there, refusing one that others can read: it names the user's items
    /// and when each was edited, theirs alone like the token.
    func exists() throws(CLIError) -> Bool {
        do {
            return try SecretFile(
                path, kind: "the decision log", holding: "when each of your items was edited"
            ).exists()
        } catch let error as SecretFile.TooOpen {
            throw .tooOpen(error)
        } catch {
            throw .logNotWritten(error, path: path)
        }
    }

    /// Appends `line`, reading the log whole only when it must be trimmed: over its size
    /// bound with the line, or its first (oldest) line past the age bound. A backup's append
    /// costs a stat and the first line, not the whole log.
    private func add(_ line: [UInt8], now: Timestamp) throws(CLIError) {
        do {
            guard try exists(),
                Int(FileStamp.of(path)?.size ?? 0) + line.count + 1 > bounds.bytes
                    || firstLineIsExpired(now: now)
            else {
                return try LocalFile.appendLine(line, to: path)
            }
            try LocalFile.writeAtomically(
                trimmed(try LocalFile.read(path), adding: line, now: now), to: path, mode: 0o600)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .logNotWritten(error, path: path)
        }
    }

    /// The lines kept, oldest first, and `line` last: none older than the age limit, and the
    /// newest of the rest that fit under the size limit with `line`.
    func trimmed(_ old: [UInt8], adding line: [UInt8], now: Timestamp) -> [UInt8] {
        let cutoff = now.adding(days: -bounds.days)
        var kept = old.split(separator: UInt8(ascii: "\n")).filter {
            Self.time(of: $0).map { $0 >= cutoff } ?? false
        }
        var size = kept.reduce(line.count + 1) { $0 + $1.count + 1 }
        while size > bounds.bytes, !kept.isEmpty {
            size -= kept.removeFirst().count + 1
        }
        return kept.flatMap { Array($0) + [UInt8(ascii: "\n")] } + line + [UInt8(ascii: "\n")]
    }

    /// Whether the log's first line, read alone (its time leads it), is past the age bound;
    /// a first line without a time is trimmed too.
    private func firstLineIsExpired(now: Timestamp) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let start = Array(handle.readData(ofLength: 64))
        guard !start.isEmpty else { return false }
        return Self.time(of: start).map { $0 < now.adding(days: -bounds.days) } ?? true
    }

    /// A line's `time`, which every line starts with.
    static func time(of line: some Collection<UInt8>) -> Timestamp? {
        let prefix = Array(#"{"time":""#.utf8)
        guard line.starts(with: prefix) else { return nil }
        let stamp = line.dropFirst(prefix.count).prefix { $0 != UInt8(ascii: "\"") }
        return Timestamp(String(decoding: stamp, as: UTF8.self))
    }
}
