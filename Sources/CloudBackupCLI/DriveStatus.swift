import BackupKit
import BackupSync
import Foundation
import GoogleDrive

/// The sections `status` gains from backup (FORMAT.md §8.2): the remote file, this profile's last
/// successful backup, and the local file's counts when `--file` is given.
enum DriveStatus {
    /// Lists the app folder (a network call); a failure becomes the row's text, so the
    /// other sections still show, and is returned too: `status` exits with its code (4, 5)
    /// after printing, as every command does.
    static func remoteSection(_ session: DriveSession) -> (
        StatusSection, failure: CLIError?, files: [DriveFile]
    ) {
        let name = session.profile.fileName
        let files: [DriveFile]
        do {
            files = try session.drive.list(named: name)
        } catch {
            let failure = CloudBackup.describe(error)
            let problem = failure.lines.joined(separator: "; ")
            // A refused login is the login row's to show, and the failure's line says why:
            // the text does not say it a third time.
            let row =
                failure.failure == .notLoggedIn
                ? StatusRow(key: "error", value: .string(problem))
                : StatusRow(
                    key: "error", label: "remote file", text: problem, value: .string(problem))
            return (StatusSection(key: "remote", rows: [row]), failure, [])
        }
        guard !files.isEmpty else {
            return (
                StatusSection(
                    key: "remote",
                    rows: [
                        StatusRow(
                            key: "id", label: "remote file",
                            text: "none named '\(name)' yet; run `cloudbackup backup`",
                            value: .null)
                    ]), nil, []
            )
        }
        var rows: [StatusRow] = []
        if files.count > 1 {
            rows.append(
                StatusRow(
                    key: "count", label: "remote files",
                    text:
                        "\(files.count) named '\(name)' (the next backup merges them into the oldest)",
                    value: .integer(files.count)))
        }
        for (index, file) in files.enumerated() {
            // The oldest file (the one backups merge into) takes the plain keys; duplicates
            // are numbered, so the JSON object never repeats a key.
            let suffix = index == 0 ? "" : String(index + 1)
            rows += [
                StatusRow(
                    key: "id" + suffix, label: "remote file", text: "\(file.name) (id \(file.id))",
                    value: .string(file.id)),
                StatusRow(
                    key: "size" + suffix, label: "  size",
                    text: file.size.map { "\($0) bytes" } ?? "unknown",
                    value: file.size.map(StatusValue.integer) ?? .null),
                StatusRow(
                    key: "modified" + suffix, label: "  modified",
                    text: file.modifiedTime.map { WallTime.text(rfc3339: $0) } ?? "unknown",
                    value: file.modifiedTime.map(StatusValue.string) ?? .null),
                StatusRow(
                    key: "version" + suffix, label: "  version",
                    text: file.version.map { "\($0)" } ?? "unknown",
                    value: file.version.map(StatusValue.integer) ?? .null),
            ]
        }
        // The revision history of the file backups merge into: what its pins keep, and what
        // they cost beside the backup itself (Drive counts pinned revisions as storage).
        if let file = files.first, let revisions = try? session.drive.revisions(of: file.id) {
            let pinned = revisions.filter { $0.keepForever == true }.count
            let storage = file.quotaBytesUsed.map { $0 - (file.size ?? 0) }
            rows += [
                StatusRow(
                    key: "revisions", label: "  revisions",
                    text: "\(revisions.count) on Drive, \(pinned) pinned"
                        + (storage.map { " (\($0) bytes of storage beside the backup)" } ?? ""),
                    value: .integer(revisions.count)),
                StatusRow(key: "pinnedRevisions", value: .integer(pinned)),
                StatusRow(
                    key: "pinnedBytes", value: storage.map(StatusValue.integer) ?? .null),
            ]
        }
        return (StatusSection(key: "remote", rows: rows), nil, files)
    }

    /// From the profile's `last-backup.json`; no network.
    static func lastBackupSection(_ last: LastBackup?) -> StatusSection {
        guard let last else {
            return StatusSection(
                key: "lastBackup",
                rows: [
                    StatusRow(
                        key: "time", label: "last backup", text: "never from this profile",
                        value: .null)
                ])
        }
        let what = last.uploaded ? "uploaded \(last.bytes) bytes" : "nothing had changed"
        return StatusSection(
            key: "lastBackup",
            rows: [
                StatusRow(
                    key: "time", label: "last backup",
                    text: "\(WallTime.text(rfc3339: last.time)) (\(what))",
                    value: .string(last.time)),
                StatusRow(
                    key: "fileId", label: "  to", text: "\(last.name) (id \(last.fileId))",
                    value: .string(last.fileId)),
                // Said in the time row's text already; separate values for scripts.
                StatusRow(key: "uploaded", value: .bool(last.uploaded)),
                StatusRow(key: "bytes", value: .integer(last.bytes)),
            ])
    }

    /// From the profile's `last-run.json`: the last attempt, beside the last success. Its
    /// text gives the local time, the JSON the UTC one.
    static func lastRunSection(_ run: LastRun?, zone: TimeZone) -> StatusSection {
        guard let run else {
            return StatusSection(
                key: "lastRun",
                rows: [
                    StatusRow(
                        key: "outcome", label: "last run", text: "none recorded", value: .null)
                ])
        }
        let when = WallTime.text(rfc3339: run.at, zone: zone)
        let text =
            run.failed
            ? "\(run.command) failed \(when), exit \(run.exitCode): \(run.reason ?? "no reason recorded")"
            : "\(run.command) ok \(when)"
        return StatusSection(
            key: "lastRun",
            rows: [
                StatusRow(
                    key: "outcome", label: "last run", text: text,
                    value: .string(run.failed ? "failed" : "ok")),
                // Said in the outcome row's text already; separate values for scripts.
                StatusRow(key: "command", value: .string(run.command)),
                StatusRow(key: "exitCode", value: .integer(Int(run.exitCode))),
                StatusRow(key: "at", value: .string(run.at)),
                StatusRow(key: "reason", value: run.reason.map(StatusValue.string) ?? .null),
            ])
    }

    /// Counts of a local state file, and what in it waits for the next backup: the items
    /// `lastSynced` (the kept copy of the last backup or restore, nil when there was none)
    /// lacks or holds in an older version, and the settings changed since (`SharedSettings`:
    /// `changedSettings` are those the next backup sends). No network.
    static func localSection(
        _ path: String, document: BackupDocument, lastSynced: BackupDocument?,
        changedSettings: [SharedSettings.Field], now: Timestamp
    ) -> StatusSection {
        var rows =
            [StatusRow(key: "file", label: "local file", text: path, value: .string(path))]
            + DocumentCounts(document).fields.map { key, label, count in
                StatusRow(key: key, label: "  " + label, text: "\(count)", value: .integer(count))
            }
        guard let lastSynced else {
            // Null, not 0: with nothing to compare with, nothing is known to be backed up.
            return StatusSection(
                key: "local",
                rows: rows + [
                    StatusRow(
                        key: "changesNotBackedUp", label: "  not backed up",
                        text: "unknown: no backup or restore from this profile yet", value: .null),
                    StatusRow(key: "changesNotBackedUpByKind", value: .null),
                    StatusRow(key: "settingsNotBackedUp", value: .null),
                ])
        }
        let changes = ItemChanges(of: document, over: lastSynced, now: now)
        rows += [
            StatusRow(
                key: "changesNotBackedUp", label: "  not backed up",
                text: changes.total == 0
                    ? "nothing: the last backup or restore holds every item"
                    : "\(changes.total) \(changes.total == 1 ? "change" : "changes") since the last backup or restore (\(changes.byKind))",
                value: .integer(changes.total)),
            StatusRow(key: "changesNotBackedUpByKind", value: changes.value),
            StatusRow(
                key: "settingsNotBackedUp", label: "  settings",
                text: changedSettings.isEmpty
                    ? "unchanged since the last backup or restore"
                    : "changed since the last backup or restore: "
                        + changedSettings.map(\.rawValue).joined(separator: ", "),
                value: .integer(changedSettings.count)),
        ]
        return StatusSection(key: "local", rows: rows)
    }

    /// How many items the backup on Drive holds that `state` lacks or holds in an older
    /// version: what a `restore --merge` would bring. The kept copy stands in for a download
    /// when the listing shows it is still the backup, as `backup` uses it. A failure becomes
    /// the row's text and is returned, as `remoteSection`'s.
    static func itemsNotInStateRow(
        _ session: DriveSession, files: [DriveFile], state: BackupDocument,
        lastSynced: (copy: KeptCopy, document: BackupDocument)?, now: Timestamp
    ) -> (StatusRow, failure: CLIError?) {
        let backup: BackupDocument?
        if files.count == 1, let lastSynced, lastSynced.copy.matches(files[0]) {
            backup = lastSynced.document
        } else if files.isEmpty {
            backup = nil
        } else {
            // status is quiet: what a merge of several copies would warn about is for the
            // backup or restore that makes it.
            let codec = session.codec(allowStale: false)
            do {
                backup = try session.driver(restoreCommand: "", warn: { _ in })
                    .run(FetchRun(name: session.profile.fileName, codec: codec))?.document
            } catch {
                let failure = CloudBackup.describe(error)
                let problem = failure.lines.joined(separator: "; ")
                return (
                    StatusRow(
                        key: "itemsNotInState", label: "  not in file", text: problem,
                        value: .null), failure
                )
            }
        }
        guard let backup else {
            return (
                StatusRow(
                    key: "itemsNotInState", label: "  not in file",
                    text: "nothing: there is no backup", value: .integer(0)), nil
            )
        }
        let changes = ItemChanges(of: backup, over: state, now: now)
        return (
            StatusRow(
                key: "itemsNotInState", label: "  not in file",
                text: changes.total == 0
                    ? "nothing: the file holds every item of the backup"
                    : "\(changes.total) \(changes.total == 1 ? "item" : "items") of the backup the file lacks (\(changes.byKind))",
                value: .integer(changes.total)), nil
        )
    }
}
