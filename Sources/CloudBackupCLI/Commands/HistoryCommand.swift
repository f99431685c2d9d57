import BackupKit
import BackupSync
import Foundation
import GoogleDrive
import LocalFiles

/// `cloudbackup history`: the backup file's revisions on Drive, oldest first, each a version
/// `restore --revision` or `--as-of` can bring back. With `--contents`, what each holds, read
/// from its bytes once and kept in the profile by checksum (a revision's bytes never change),
/// so the next call downloads nothing it has seen.
struct HistoryCommand: QuietCommand {
    static let name = "history"
    static let summary = "list the backup's older versions on Drive (for restore --revision)"
    static var options: [OptionGroup] {
        OptionSpec.profile
        OptionSpec.contents
        OptionSpec.json.described(#"print one object with a "revisions" array, oldest first"#)
        OptionGroup.verbosity()
        OptionSpec.maxBytes
        OptionGroup.keys
    }
    static let about = """
        Lists the revisions of the backup file in the Drive app folder, oldest first: the
        revision id, when it was written (local time and UTC), its size, and whether it is
        pinned (kept until deleted; the profile's "keep" policy pins the first backup of each
        of the last 7 days, 8 weeks and 12 months). Drive keeps an unpinned revision for about
        30 days, or until 100 newer ones. 'cloudbackup restore --revision ID' or '--as-of TIME'
        brings one back, with the same merge, replace and dry run as any restore.
        """
    static let note: String? = """
        --contents remembers what each revision held (export time, device, counts) by its
        checksum in the profile's history-cache.json, so the next call downloads only new
        revisions, and an encrypted one read once needs no key again; deleting the file is
        safe. A revision Drive no longer serves (purged, or refused) is listed as not
        readable, with why; it is not an error. --json gives "file" (id, name, otherFiles)
        and "revisions": id, modifiedTime (UTC), size, pinned, and with --contents
        "contents" (exportedAt, deviceId, challenges, dayLogs, keptDayLogs, tombstones), or
        null and "unreadable" with why.
        """
    static let exits =
        Exit.always + [
            Exit(.invalidFile, "the profile's files are broken"), Exit(.notLoggedIn),
            Exit(.network), Exit(.noBackupYet),
        ]

    var profileName: String
    var contents: Bool
    var json: Bool
    var quiet: Bool
    var verbose: Bool
    var readOptions: ReadOptions
    /// What opens an encrypted backup's revisions for `--contents`.
    var keys: RemoteEncryption.Options

    init(arguments: inout Arguments) throws(CLIError) {
        profileName = try arguments.option(.profile) ?? "default"
        contents = arguments.flag(.contents)
        json = arguments.flag(.json)
        (quiet, verbose) = (arguments.flag(.quiet), arguments.flag(.verbose))
        readOptions = try BackupFile.readOptions(&arguments)
        keys = try RemoteEncryption.Options(&arguments)
        _ = try arguments.positionals(exactly: [])
    }

    /// What one revision holds, as `--contents` shows it and the cache keeps it.
    /// Stored flat, the counts beside the export, as the cache has always kept them.
    struct Summary: Codable, Equatable {
        var exportedAt: String
        var deviceId: String
        var counts: DocumentCounts

        init(_ document: BackupDocument) {
            exportedAt = document.exportedAt.description
            deviceId = document.deviceId.rawValue
            counts = DocumentCounts(document)
        }

        private enum CodingKeys: String, CodingKey {
            case exportedAt, deviceId
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            exportedAt = try container.decode(String.self, forKey: .exportedAt)
            deviceId = try container.decode(String.self, forKey: .deviceId)
            counts = try DocumentCounts(from: decoder)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(exportedAt, forKey: .exportedAt)
            try container.encode(deviceId, forKey: .deviceId)
            try counts.encode(to: encoder)
        }
    }

    /// A revision as listed: its contents when asked for (nil: not downloadable, with why).
    struct Row {
        var revision: DriveRevision
        var contents: Result<Summary, Unreadable>?
    }

    struct Unreadable: Error {
        var reason: String
    }

    func run(in context: Context) throws {
        let profile = try Profile.load(name: profileName, environment: context.environment)
        let session = try DriveSession(
            profile: profile, context: context, now: nil, verbose: verbose, quiet: true,
            locking: false, savingLogin: true, maxBytes: readOptions.maxBytes,
            encryption: try RemoteEncryption.load(
                profile: profile, options: keys, environment: context.environment))
        let files = try session.drive.list(named: profile.fileName)
        guard let file = files.first else {
            throw CLIError.noBackupYet(
                profile.fileName,
                then: "no history; run 'cloudbackup backup' on the device that has the data")
        }
        let revisions = try session.drive.revisions(of: file.id)
        var cache = HistoryCache.load(from: profile.historyCachePath) ?? HistoryCache()
        let codec = session.codec(allowStale: false, readOptions: readOptions)
        var rows: [Row] = []
        for revision in revisions {
            guard contents else {
                rows.append(Row(revision: revision))
                continue
            }
            rows.append(
                Row(
                    revision: revision,
                    contents: summary(
                        of: revision, in: file, session: session, codec: codec, cache: &cache)))
        }
        if contents { try? cache.save(to: profile.historyCachePath) }
        session.clockSkew()
        if json {
            context.print(Self.json(rows, file: file, others: files.count - 1))
            return
        }
        context.print(
            "\(file.name.onOneLine) (id \(file.id)): \(revisions.count) revision(s), oldest first"
                + (files.count > 1
                    ? "; \(files.count - 1) other file(s) of this name, merged by the next backup"
                    : ""))
        for row in rows {
            for line in Self.lines(row, zone: ZoneSetting.local) { context.print(line) }
        }
    }

    /// From the cache by checksum, else downloaded and remembered. A revision Drive will not
    /// serve (purged meanwhile, or refused) is listed as such, never an error of the command.
    private func summary(
        of revision: DriveRevision, in file: DriveFile, session: DriveSession,
        codec: SyncCodec<BackupDocument>, cache: inout HistoryCache
    ) -> Result<Summary, Unreadable> {
        if let md5 = revision.md5Checksum, let known = cache.entries[md5] { return .success(known) }
        let bytes: [UInt8]
        do {
            bytes = try session.drive.read(id: file.id, revision: revision)
        } catch {
            if case .rejected(_, let google) = error {
                return .failure(
                    Unreadable(
                        reason: google.status == 404
                            ? "Drive no longer keeps its bytes"
                            : "Drive does not let it be downloaded (\(google.reason ?? "HTTP \(google.status)"))"
                    ))
            }
            return .failure(Unreadable(reason: "could not be downloaded (\(error))"))
        }
        do {
            let plain = try codec.opened(
                bytes, of: file, revision: revision.id, replacing: false)
            let summary = Summary(try codec.decode(plain))
            if let md5 = revision.md5Checksum { cache.entries[md5] = summary }
            return .success(summary)
        } catch let error as SyncError {
            // Encrypted, and no key given here opens it: which, and what to configure.
            return .failure(
                Unreadable(reason: CloudBackup.describe(error).lines.first ?? "\(error)"))
        } catch {
            let line =
                (error as? BackupFileError).flatMap {
                    BackupFile.describe($0, file: "revision \(revision.id)").lines.first
                } ?? "\(error)"
            return .failure(Unreadable(reason: "not a valid backup: \(line)"))
        }
    }

    /// "2026-11-29 23:14:03 +0100 (2026-11-29T22:14:03.000Z)": the local wall time first.
    static func when(_ revision: DriveRevision, zone: TimeZone) -> String {
        guard let text = revision.modifiedTime, let time = Timestamp(text) else {
            return "at an unknown time"
        }
        return "\(WallTime.text(time, zone: zone)) (\(time))"
    }

    static func lines(_ row: Row, zone: TimeZone) -> [String] {
        let revision = row.revision
        let size = revision.size.map { "\($0) bytes" } ?? "size unknown"
        var lines = [
            "\(revision.id)  \(when(revision, zone: zone))  \(size)"
                + (revision.keepForever == true ? "  pinned" : "")
        ]
        switch row.contents {
        case .success(let summary):
            lines.append(
                "  exported \(WallTime.text(rfc3339: summary.exportedAt)) by \(summary.deviceId.onOneLine): "
                    + "\(summary.counts.challenges) challenge(s), \(summary.counts.dayLogs) day log(s)"
                    + (summary.counts.keptDayLogs > 0
                        ? " (+ \(summary.counts.keptDayLogs) kept)" : "")
                    + ", \(summary.counts.tombstones) tombstone(s)")
        case .failure(let unreadable):
            lines.append("  not readable: \(unreadable.reason)")
        case nil:
            break
        }
        return lines
    }

    static func json(_ rows: [Row], file: DriveFile, others: Int) -> String {
        var out = JSONOutput()
        out.beginObject()
        out.key("file")
        out.beginObject()
        out.key("id")
        out.string(file.id)
        out.key("name")
        out.string(file.name)
        out.key("otherFiles")
        out.integer(others)
        out.endObject()
        out.key("revisions")
        out.beginArray()
        for row in rows {
            let revision = row.revision
            out.beginObject()
            out.key("id")
            out.string(revision.id)
            out.key("modifiedTime")
            if let time = revision.modifiedTime { out.string(time) } else { out.null() }
            out.key("size")
            if let size = revision.size { out.integer(size) } else { out.null() }
            out.key("pinned")
            out.bool(revision.keepForever == true)
            if let contents = row.contents {
                out.key("contents")
                switch contents {
                case .success(let summary):
                    out.beginObject()
                    out.key("exportedAt")
                    out.string(summary.exportedAt)
                    out.key("deviceId")
                    out.string(summary.deviceId)
                    for field in summary.counts.fields {
                        out.key(text: field.key)
                        out.integer(field.count)
                    }
                    out.endObject()
                case .failure(let unreadable):
                    out.null()
                    out.key("unreadable")
                    out.string(unreadable.reason)
                }
            }
            out.endObject()
        }
        out.endArray()
        out.endObject()
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

/// `history-cache.json` in the profile: what each revision held, by its `md5Checksum`.
struct HistoryCache: ProfileRecord {
    var entries: [String: HistoryCommand.Summary] = [:]
}

/// The options only `history` takes.
extension OptionSpec {
    fileprivate static let contents = OptionSpec(
        name: "--contents",
        help:
            "also show what each revision holds: export time, device, counts (each revision is downloaded once, then remembered by checksum)"
    )
}
