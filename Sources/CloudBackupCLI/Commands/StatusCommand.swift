import BackupKit
import Foundation
import OAuth

/// `cloudbackup status`: one section per subject, each a list of rows, printed as aligned
/// text or, with `--json`, as one object per section: the login and the last backup (offline),
/// then the remote file (`--remote`) and local counts (`--file`).
struct StatusCommand: Command {
    static let name = "status"
    static let summary = "show the login, the last backup, the remote file and local counts"
    static let usage =
        "usage: cloudbackup status [--profile NAME] [--remote] [--verbose] [--file STATE] [--json] [--max-bytes N]"
    static let help = """
        \(usage)

        Shows the profile's login: whether it is logged in and when the saved access token
        expires (an expired one is refreshed by the next command that needs it), and the
        profile's last successful backup. Works offline unless --remote is given.

        options:
          --profile NAME  which profile (default: default)
          --remote        also ask Drive for the backup file: id, size, modified, version
          --verbose       with --remote, trace each HTTP exchange (tokens redacted)
          --file STATE    also count the challenges, day logs and tombstones in STATE
          --json          print one JSON object instead of text
        \(BackupFile.maxBytesHelp(column: 18))
        """

    var profileName: String
    var json: Bool
    var remote: Bool
    var verbose: Bool
    var file: String?
    var readOptions: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        profileName = try arguments.option("--profile") ?? "default"
        json = arguments.flag("--json")
        remote = arguments.flag("--remote")
        verbose = arguments.flag("--verbose")
        file = try arguments.option("--file")
        readOptions = try BackupFile.readOptions(&arguments)
        _ = try arguments.positionals(exactly: [])
    }

    func run(in context: Context) throws {
        let profile = try Profile.load(name: profileName, environment: context.environment)
        var sections = [
            try Self.loginSection(profile: profile, now: Date()),
            DriveStatus.lastBackupSection(profile),
        ]
        var remoteFailure: CLIError?
        if remote {
            // status takes no passphrase options: a previous run's check that it finishes (and
            // which may merge and upload) has the keys of the environment and identityFile,
            // and without them is left to the next backup or restore.
            let keys = try? RemoteEncryption.load(
                profile: profile, options: RemoteEncryption.Options(),
                environment: context.environment)
            let session = try DriveSession(
                profile: profile, context: context, now: nil, verbose: verbose, quiet: true,
                locking: false, encryption: keys ?? .plain)
            // A previous run's unfinished check of its upload comes first, under the profile's
            // lock; a run holding it checks by itself.
            var settled: CLIError?
            if session.pendingVerification != nil, keys != nil,
                let lock = try? profile.lock(in: context)
            {
                do {
                    try withExtendedLifetime(lock) {
                        try session.settle(warn: { context.printWarning($0) })
                    }
                } catch {
                    settled = CloudBackup.describe(error)
                }
            }
            let (section, failure) = DriveStatus.remoteSection(session)
            sections.append(section)
            remoteFailure = settled ?? failure
            // FORMAT.md §9.2: a clock off Google's is warned about whenever Drive answered.
            session.clockSkew()
        }
        if let file { sections.append(try DriveStatus.localSection(file, options: readOptions)) }
        if json {
            var out = JSONOutput()
            out.beginObject()
            out.key("profile")
            out.string(profile.name)
            for section in sections {
                out.key(text: section.key)
                out.beginObject()
                for row in section.rows {
                    out.key(text: row.key)
                    row.value.write(into: &out)
                }
                out.endObject()
            }
            out.endObject()
            context.print(String(decoding: out.bytes, as: UTF8.self))
            if let remoteFailure { throw remoteFailure }
            return
        }
        let rows =
            [("profile", "\(profile.name) (\(profile.folder))")]
            + sections.flatMap(\.rows).compactMap { row in row.label.map { ($0, row.text) } }
        let width = rows.map(\.0.count).max() ?? 0
        for (label, text) in rows {
            context.print(
                label + String(repeating: " ", count: width - label.count + 2) + text.onOneLine)
        }
        if let remoteFailure { throw remoteFailure }
    }

    /// Reads the token file only; no network, so `status` works offline.
    static func loginSection(profile: Profile, now: Date) throws -> StatusSection {
        guard let login = try profile.tokenStore.load() else {
            return StatusSection(
                key: "login",
                rows: [
                    StatusRow(
                        key: "loggedIn", label: "login",
                        text: "not logged in; run `cloudbackup login`",
                        value: .bool(false))
                ])
        }
        var rows = [
            StatusRow(
                key: "loggedIn", label: "login", text: "logged in (\(profile.tokenPath))",
                value: .bool(true))
        ]
        if let expiresAt = login.accessTokenExpiresAt {
            let stamp = expiresAt.formatted(.iso8601)
            let seconds = Int(expiresAt.timeIntervalSince(now).rounded(.down))
            let text =
                seconds > 0
                ? "expires \(stamp) (in \(Self.span(seconds)))"
                : "expired \(stamp) (the next command refreshes it)"
            rows.append(
                StatusRow(
                    key: "accessTokenExpiresAt", label: "access token", text: text,
                    value: .string(stamp)))
        } else {
            rows.append(
                StatusRow(
                    key: "accessTokenExpiresAt", label: "access token",
                    text: "none saved (the next command gets one)", value: .null))
        }
        return StatusSection(key: "login", rows: rows)
    }

    static func span(_ seconds: Int) -> String {
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }
}

struct StatusSection: Sendable {
    /// The section's key in `--json` output.
    var key: String
    var rows: [StatusRow]
}

struct StatusRow: Sendable {
    /// The row's key inside its section's JSON object.
    var key: String
    /// The text output's left column; nil for a value only `--json` gives, whose text is
    /// part of another row's.
    var label: String?
    var text: String
    var value: StatusValue

    init(key: String, label: String, text: String, value: StatusValue) {
        self.key = key
        self.label = label
        self.text = text
        self.value = value
    }

    init(key: String, value: StatusValue) {
        self.key = key
        self.label = nil
        self.text = ""
        self.value = value
    }
}

enum StatusValue: Sendable {
    case string(String)
    case integer(Int)
    case bool(Bool)
    case null

    func write(into out: inout JSONOutput) {
        switch self {
        case .string(let text): out.string(text)
        case .integer(let value): out.integer(value)
        case .bool(let value): out.bool(value)
        case .null: out.null()
        }
    }
}
