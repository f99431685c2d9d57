import BackupSync
import Foundation
import LocalFiles
import Networking

/// One named profile's settings and files (FORMAT.md §8.3): `$XDG_CONFIG_HOME/cloudbackup/<name>/`
/// with `config.json`, the token file, the lock, the last-backup record and the kept copy.
/// Every setting may come from the environment, which wins over `config.json`.
struct Profile: Sendable {
    var name: String
    var folder: String
    var clientID: String?
    var clientSecret: String?
    var authURL: String
    var tokenURL: String
    var revokeURL: String
    var driveURL: String
    var fileName: String
    /// The "TVs and Limited Input devices" client of `login --device`, and its endpoint.
    var deviceClientID: String?
    var deviceClientSecret: String?
    var deviceCodeURL: String
    /// An age identity file (`AGE-SECRET-KEY-1…` lines) for the backup's encryption.
    var identityFile: String?
    /// Whether uploads are encrypted (`"encrypt": true`, `CLOUDBACKUP_ENCRYPT=1`), or
    /// explicitly not (`false`, `0`: an encrypted backup is then rewritten plain once); nil when
    /// unset, which never replaces an encrypted backup. See `RemoteEncryption`.
    var encrypt: Bool?
    /// Whether `backup` uploads the document gzipped (`"compress": true`,
    /// `CLOUDBACKUP_COMPRESS=1`), or plain (`false`, `0`: a gzipped backup is then rewritten
    /// plain once); nil keeps the form the backup on Drive has. Reads take either.
    var compress: Bool?
    /// Which revisions of the backup to pin (`"keep"` in config.json; nil: `"keep": false`).
    var retention: RetentionPolicy? = .standard
    /// How many copies of STATE a restore keeps (`"previousCopies"`; see `PreviousCopies`).
    var previousCopies = 1
    /// The decision log's bounds (`"decisionLog": {"days": N, "megabytes": N}`).
    var decisionLog = DecisionLog.Bounds()

    var configPath: String { folder + "/config.json" }
    var tokenPath: String { folder + "/token.json" }
    var lockPath: String { folder + "/lock" }
    var lastBackupPath: String { folder + "/last-backup.json" }
    /// How the last backup, restore or rollback ended, ok or not (see `LastRun`).
    var lastRunPath: String { folder + "/last-run.json" }
    /// The backup's bytes as last uploaded or downloaded (see `KeptCopy`).
    var keptCopyPath: String { folder + "/kept-copy.json" }
    /// An upload not yet checked against Drive's revision history (see `PendingVerification`).
    var pendingVerificationPath: String { folder + "/pending-verification.json" }
    /// Pins a backup could not make or release, for the next backup to try again.
    var retentionDuePath: String { folder + "/retention-due.json" }
    /// What each revision of the backup holds, by checksum, for `history --contents`.
    var historyCachePath: String { folder + "/history-cache.json" }
    /// STATE's shared settings when it and the backup were last brought together.
    var syncedSettingsPath: String { folder + "/synced-settings.json" }
    /// Every merge decision of backup and restore (see `DecisionLog`).
    var decisionLogPath: String { folder + "/decisions.jsonl" }
    /// What the last backup that changed nothing proved (see `SteadyState`).
    var steadyStatePath: String { Self.steadyStatePath(in: folder) }
    /// The same, for `backup`, which decides from it whether to read STATE before the
    /// profile is loaded.
    static func steadyStatePath(in folder: String) -> String { folder + "/steady-state.json" }

    /// For tests against an emulator whose cap of pins per file is lower than Google's 200: the
    /// cap the retention policy keeps its reserve under (see `RetentionPolicy.pinLimit`).
    static let pinLimitVariable = "CLOUDBACKUP_PIN_LIMIT"

    /// Environment variable → config.json key → default, for every setting.
    static let settings: [(variable: String, key: String, fallback: String?)] = [
        ("CLOUDBACKUP_CLIENT_ID", "clientId", nil),
        ("CLOUDBACKUP_CLIENT_SECRET", "clientSecret", nil),
        ("CLOUDBACKUP_AUTH_URL", "authUrl", "https://accounts.google.com/o/oauth2/v2/auth"),
        ("CLOUDBACKUP_TOKEN_URL", "tokenUrl", "https://oauth2.googleapis.com/token"),
        ("CLOUDBACKUP_REVOKE_URL", "revokeUrl", "https://oauth2.googleapis.com/revoke"),
        ("CLOUDBACKUP_DRIVE_URL", "driveUrl", "https://www.googleapis.com"),
        ("CLOUDBACKUP_FILE_NAME", "fileName", "habit-backup.json"),
        ("CLOUDBACKUP_DEVICE_CLIENT_ID", "deviceClientId", nil),
        ("CLOUDBACKUP_DEVICE_CLIENT_SECRET", "deviceClientSecret", nil),
        (
            "CLOUDBACKUP_DEVICE_CODE_URL", "deviceCodeUrl",
            "https://oauth2.googleapis.com/device/code"
        ),
        ("CLOUDBACKUP_IDENTITY_FILE", "identityFile", nil),
    ]

    /// A yes/no setting: `true` or `false` in config.json, or the variable `1` or `0`, which
    /// wins (`0` turns it off for a run); nil when neither says, which a setting may tell
    /// from `false` (see `encrypt`).
    struct Switch: Sendable {
        /// The config.json key, and what `1` does.
        var key: String
        var variable: String { "CLOUDBACKUP_" + key.uppercased() }
    }

    static let encryptSetting = Switch(key: "encrypt")
    static let compressSetting = Switch(key: "compress")
    static let switches = [encryptSetting, compressSetting]

    static func folder(for name: String, environment: [String: String]) throws(CLIError) -> String {
        guard Self.isValidName(name) else {
            throw .badProfileName(name)
        }
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else if let home = environment["HOME"], !home.isEmpty {
            base = home + "/.config"
        } else {
            // XDG's rule: a relative XDG_CONFIG_HOME is ignored, so say that, not "unset".
            let xdg = environment["XDG_CONFIG_HOME"].map {
                $0.isEmpty ? "is empty" : "'\($0)' is not an absolute path"
            }
            throw .noConfigHome(xdg: xdg)
        }
        return base + "/cloudbackup/" + name
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy {
                CharacterSet.alphanumerics.contains($0) && $0.isASCII
                    || "-_.".unicodeScalars.contains($0)
            }
    }

    /// Reads the profile; a missing config.json is fine (defaults and environment apply), a
    /// broken one is an invalid file (exit 3, FORMAT.md §8.1), not a usage error.
    static func load(name: String, environment: [String: String]) throws(CLIError) -> Profile {
        let folder = try folder(for: name, environment: environment)
        var file: [String: String] = [:]
        var switched: [String: Bool] = [:]
        var retention: RetentionPolicy? = .standard
        var previousCopies = 1
        var decisionLog = DecisionLog.Bounds()
        let path = folder + "/config.json"
        let secret = SecretFile(
            path, kind: "a profile's config.json",
            holding: "settings such as the OAuth client secret")
        if LocalFile.exists(path) {
            do {
                guard let bytes = try secret.read(maxBytes: 1 << 20) else {
                    throw LocalFileError(path: path, operation: .open, errno: ENOENT)
                }
                guard
                    let object = try JSONSerialization.jsonObject(with: Data(bytes))
                        as? [String: Any]
                else {
                    throw CLIError.badProfile(
                        path, "expected a JSON object of settings; fix or delete the file")
                }
                for (key, value) in object {
                    if Self.switches.contains(where: { $0.key == key }) {
                        guard let flag = value as? Bool else {
                            throw CLIError.badProfile(
                                path, "setting '\(key)' must be true or false")
                        }
                        switched[key] = flag
                        continue
                    }
                    if key == "keep" {
                        retention = try Self.retention(value, in: path)
                        continue
                    }
                    if key == "decisionLog" {
                        decisionLog = try DecisionLog.Bounds(value, in: path)
                        continue
                    }
                    if key == "previousCopies" {
                        let range = PreviousCopies.range
                        guard let number = Self.wholeNumber(value), range.contains(number)
                        else {
                            throw CLIError.badProfile(
                                path,
                                "setting 'previousCopies' must be a whole number from \(range.lowerBound) to \(range.upperBound)"
                            )
                        }
                        previousCopies = number
                        continue
                    }
                    guard Self.settings.contains(where: { $0.key == key }) else {
                        let known =
                            (Self.settings.map(\.key) + Self.switches.map(\.key) + [
                                "keep", "previousCopies", "decisionLog",
                            ])
                            .joined(separator: ", ")
                        throw CLIError.badProfile(
                            path, "unknown setting '\(key)'; known settings are \(known)")
                    }
                    guard let text = value as? String else {
                        throw CLIError.badProfile(path, "setting '\(key)' must be a string")
                    }
                    file[key] = text
                }
            } catch let error as CLIError {
                throw error
            } catch let error as SecretFile.TooOpen {
                throw .tooOpen(error)
            } catch let error as LocalFileError {
                throw CLIError.unreadableProfile(error)
            } catch {
                throw CLIError.badProfile(
                    path, "not valid JSON (\(error.localizedDescription)); fix or delete the file")
            }
        }
        func fromEnvironment(_ index: Int) -> String? {
            environment[Self.settings[index].variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        func value(_ index: Int) -> String? {
            fromEnvironment(index) ?? file[Self.settings[index].key]
                ?? Self.settings[index].fallback
        }
        // An empty variable counts as unset, but "" written in the file is a slip (an empty
        // fileName would create an 'Untitled' file every run), unless the environment,
        // which wins, gives the value.
        for (index, setting) in Self.settings.enumerated()
        where file[setting.key] == "" && fromEnvironment(index) == nil {
            throw CLIError.badProfile(
                path, "setting '\(setting.key)' is empty; give it a value or remove it")
        }
        for setting in Self.switches {
            switch environment[setting.variable] ?? "" {
            case "": break
            case "1": switched[setting.key] = true
            case "0": switched[setting.key] = false
            case let other:
                throw CLIError.badVariable(
                    setting.variable, mustBe: "1 (\(setting.key)) or 0 (do not)", not: other)
            }
        }
        if var policy = retention, let text = environment[Self.pinLimitVariable], !text.isEmpty {
            guard let limit = Int(text), (1...RetentionPolicy.maxPins).contains(limit) else {
                throw CLIError.badVariable(
                    Self.pinLimitVariable,
                    mustBe: "a whole number from 1 to \(RetentionPolicy.maxPins)", not: text)
            }
            policy.pinLimit = limit
            retention = policy
        }
        let profile = Profile(
            name: name, folder: folder, clientID: value(0), clientSecret: value(1),
            authURL: value(2)!, tokenURL: value(3)!, revokeURL: value(4)!, driveURL: value(5)!,
            fileName: value(6)!, deviceClientID: value(7), deviceClientSecret: value(8),
            deviceCodeURL: value(9)!, identityFile: value(10),
            encrypt: switched[Self.encryptSetting.key],
            compress: switched[Self.compressSetting.key],
            retention: retention, previousCopies: previousCopies, decisionLog: decisionLog)
        // Each URL's error names where it came from: the variable or the file.
        for index in [2, 3, 4, 5, 9] {
            let setting = Self.settings[index]
            let origin =
                fromEnvironment(index) != nil
                ? (setting.variable, Failure.environment)
                : ("\(path): setting '\(setting.key)'", Failure.profileFile)
            try checkEndpoint(value(index)!, named: origin.0, failure: origin.1)
        }
        return profile
    }

    /// A whole number of config.json, never `true` or `false`: those parse to NSNumbers that
    /// `as? Int` reads as 1 and 0, while `is Bool` holds for the numbers 0 and 1 as well (Linux
    /// Foundation), so only the number's type tells them apart.
    static func wholeNumber(_ value: Any) -> Int? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else {
            return nil
        }
        return value as? Int
    }

    /// `"keep"`: `false` (pin nothing), or `{"daily": N, "weekly": N, "monthly": N}` with
    /// whole numbers from 0 (that level off); a level left out keeps its default.
    static func retention(_ value: Any, in path: String) throws(CLIError) -> RetentionPolicy? {
        if let flag = value as? Bool, !flag { return nil }
        let fix =
            #"give "keep": false or an object such as {"daily": 7, "weekly": 8, "monthly": 12}"#
        guard let object = value as? [String: Any] else {
            throw CLIError.badProfile(path, "setting 'keep' must be false or an object; \(fix)")
        }
        var policy = RetentionPolicy.standard
        for (level, count) in object {
            guard let number = Self.wholeNumber(count), number >= 0,
                number <= RetentionPolicy.maxPins
            else {
                throw CLIError.badProfile(
                    path,
                    "'keep.\(level)' must be a whole number from 0 to \(RetentionPolicy.maxPins); \(fix)"
                )
            }
            switch level {
            case "daily": policy.daily = number
            case "weekly": policy.weekly = number
            case "monthly": policy.monthly = number
            default:
                throw CLIError.badProfile(
                    path, "unknown level 'keep.\(level)'; the levels are daily, weekly and monthly")
            }
        }
        return policy
    }

    /// https everywhere; plain http only for loopback hosts (the local emulator).
    /// The transport's own rule, checked when the profile loads so a bad setting is named
    /// before any request.
    static func checkEndpoint(_ url: String, named setting: String, failure: Failure)
        throws(CLIError)
    {
        do {
            _ = try CurlTransport.allowedScheme(for: url)
        } catch {
            throw .badSetting(setting, error.message, failure)
        }
    }
}

extension Profile {
    /// Makes the profile folder, readable only by its owner (it holds the login): one that
    /// already exists with wider permissions (made by hand, 0755) is tightened to 0700, and
    /// a warning says so; once, as it is 0700 from then on.
    func makeFolder(in context: Context) throws(CLIError) {
        do {
            try LocalFile.makeDirectory(folder)
            if let was = try LocalFile.restrict(folder, to: 0o700) {
                context.printWarning(
                    "\(folder) was readable by others (mode \(String(was, radix: 8))); "
                        + "made it 0700, as it holds your login")
            }
        } catch {
            throw CloudBackup.describe(error)
        }
    }

    /// One run at a time per profile (FORMAT.md §8.1): the profile's lock, or exit 6 when
    /// another run still holds it after `waiting` seconds (`--wait-lock`; 0: at once). Held
    /// until the returned lock is released. A wait is announced when someone may be watching
    /// (`--verbose`, or a terminal), never to cron, which mails whatever is printed.
    func lock(in context: Context, waiting: Double = 0, announce: Bool = false)
        throws(CLIError) -> FileLock
    {
        try makeFolder(in: context)
        var held: FileLock?
        do {
            held = try FileLock(path: lockPath)
            if held == nil, waiting > 0 {
                if announce {
                    context.printError(
                        "cloudbackup: another run holds the lock of profile '\(name)'; "
                            + "waiting up to \(Int(waiting)) s for it to finish")
                }
                held = try FileLock(path: lockPath, waitingUpTo: waiting)
            }
        } catch {
            throw CloudBackup.describe(error)
        }
        guard let held else {
            throw .lockHeld(profile: name, lock: lockPath, waited: waiting)
        }
        return held
    }
}
