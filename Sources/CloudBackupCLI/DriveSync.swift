import BackupKit
import BackupSync
import GoogleDrive
import LocalFiles

/// The sync engine (`BackupSync`) as the commands use it: its driver over this session's
/// Drive client and profile, and its notices and errors in words.
extension DriveSession {
    /// The driver, with the run's clock (`now()`), the profile's pending verification, the
    /// progress line, and notices said as warnings. `restoreCommand` is what a kept-aside
    /// copy's held-back items are taken in with; `backingUp`: the run merges STATE in as
    /// `backup` does.
    func driver(
        restoreCommand: String, backingUp: Bool = false, warn: @escaping (String) -> Void
    ) -> SyncDriver {
        var driver = SyncDriver(drive: drive, now: { now() })
        let path = profile.pendingVerificationPath
        driver.record = { pending in
            do {
                if let pending { try pending.save(to: path) } else { try LocalFile.remove(path) }
            } catch {
                // The check still runs in this process; only its record for a run cut short is lost.
                warn(
                    CloudBackup.describe(error).lines.joined(separator: "; ")
                        + "; if this run is cut short, the next one cannot finish checking its upload"
                )
            }
        }
        let profileName = profile.name
        driver.notify = { notice in
            warn(
                Self.words(
                    notice, restoreCommand: restoreCommand, backingUp: backingUp,
                    profile: profileName))
        }
        if let line = progress { driver.progress = { sent, total in line.upload(sent, total) } }
        return driver
    }

    /// A previous run's unfinished check of its upload, if any.
    var pendingVerification: PendingVerification? {
        PendingVerification.load(from: profile.pendingVerificationPath)
    }

    /// Finishes a previous run's check of its upload, if one is recorded (uploading what it
    /// found missing), before `restore` or `status` reads the backup.
    func settle(warn: @escaping (String) -> Void) throws {
        guard let pending = pendingVerification else { return }
        var machine = BackupRun(
            name: profile.fileName, codec: codec(allowStale: false), local: nil, pending: pending)
        machine.retention = profile.retention
        machine.timeZone = ZoneSetting.local
        _ = try driver(
            restoreCommand: Self.restoreCommand(into: "STATE", profile: profile.name), warn: warn
        ).run(machine)
    }

    static func words(
        _ notice: SyncNotice, restoreCommand: String, backingUp: Bool, profile: String
    ) -> String {
        switch notice {
        case .merged(let notice):
            return words(notice, backingUp: backingUp, profile: profile)
        case .keptAside(let copyID, let side, .heldBack):
            return "kept that copy (id \(copyID)) as '\(side.name)' in the app folder; to take "
                + "its held-back items in, run 'CLOUDBACKUP_FILE_NAME=\(shellQuoted(side.name)) "
                + "\(restoreCommand) --allow-stale', then back up again"
        case .keptAside(let copyID, let side, .invalid(let error)):
            return
                "the backup on Drive (id \(copyID)) is not a valid backup (\(firstLine(error))); "
                + "kept its bytes as '\(side.name)' in the app folder and replaced it"
        case .envelopeChanged(_, let sealed):
            return sealed ? RemoteEncryption.encryptedNow : RemoteEncryption.decryptedNow
        case .formChanged(_, let compressed):
            return compressed ? Self.compressedNow : Self.decompressedNow
        case .unreadableRevision(let fileID, let revision):
            return "revision \(revision) of \(fileID), which another device wrote between this "
                + "run's download and its upload, can no longer be read from Drive; what it alone "
                + "held is not in the backup (back up again on that device to send it)"
        }
    }

    /// Said once, after the upload that gzipped a plain backup.
    static let compressedNow =
        "the backup on Drive was plain; this profile compresses, so it was uploaded compressed"

    /// Said once, after the upload that turned a gzipped backup plain.
    static let decompressedNow =
        "the backup on Drive was compressed; this profile sets compress to false, so it was uploaded plain"

    private static func firstLine(_ error: any Error) -> String {
        if let error = error as? BackupFileError {
            return BackupFile.describe(error, file: "remote").lines.first ?? "\(error)"
        }
        return "\(error)"
    }
}

extension PendingVerification: ProfileRecord {}

extension SharedSettings: ProfileRecord {}

extension RevisionChoice.Refusal {
    /// "(the oldest was written 2026-11-01T…Z)", or that there is none.
    var oldestWords: String {
        let oldest: DriveRevision?
        switch self {
        case .unknownID(_, let first), .beforeOldest(_, let first): oldest = first
        }
        guard let oldest else { return " (it has no revisions Drive still keeps)" }
        return " (the oldest available was written \(oldest.modifiedTime ?? "at an unknown time"))"
    }
}
