import Foundation

/// A running `Tests/Emulator/google_emulator.py`: Google's OAuth and Drive endpoints on an
/// ephemeral 127.0.0.1 port, started by a test and stopped by it.
///
/// The emulator prints `LISTENING http://127.0.0.1:<port>` once it accepts connections; `init`
/// reads that line from the pipe (no sleeping, no polling). Its standard input is a pipe this
/// object holds open: when the test process dies for any reason, the pipe closes and the
/// emulator exits by itself, so a crashed test never leaves a server running. It inherits this
/// process's environment: under `make test`, `GOOGLE_EMULATOR_REQUEST_LOG` names the file every
/// emulator appends its requests to, which the request sweep then checks against Google's
/// discovery documents.
///
///     let emulator = try Emulator()
///     defer { emulator.stop() }
///     try emulator.inject(.status(503, count: 2))
///     let result = try cloudbackup(["backup", "--file", state.path],
///                                  environment: emulator.environment(for: configHome))
///     #expect(try emulator.log().contains { $0.status == 503 })
public final class Emulator: @unchecked Sendable {
    public let baseURL: String
    public let port: UInt16
    public let clientID: String
    public let clientSecret: String
    /// The "TVs and Limited Input devices" client of the device flow (the emulator's defaults).
    public let deviceClientID = "test-device-client-id"
    public let deviceClientSecret = "test-device-client-secret"
    /// An executable that runs `fake_browser.py`, for `BROWSER=`.
    public let browserCommand: String

    private let process: Process
    private let input: Pipe
    private let scratch: URL
    private let lock = NSLock()
    private var stopped = false

    public init(
        clientID: String = "test-client-id", clientSecret: String = "test-client-secret",
        accessTokenLifetime: Int? = nil, stateFile: URL? = nil
    ) throws {
        self.clientID = clientID
        self.clientSecret = clientSecret
        var arguments = [
            Paths.file("Tests/Emulator/google_emulator.py").path,
            "--client-id", clientID, "--client-secret", clientSecret,
        ]
        if let accessTokenLifetime {
            arguments += ["--access-token-lifetime", String(accessTokenLifetime)]
        }
        if let stateFile { arguments += ["--state-file", stateFile.path] }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.python)
        process.arguments = arguments
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()

        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let prefix = "LISTENING http://127.0.0.1:"
        guard text.hasPrefix(prefix), let port = UInt16(text.dropFirst(prefix.count)) else {
            try? input.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
            throw LoopbackHTTPError(
                description: "the emulator did not start (it said '\(text)'); run "
                    + "\(Paths.python) Tests/Emulator/google_emulator.py to see why")
        }

        let scratch = try Paths.temporaryFolder()
        let browser = scratch.appendingPathComponent("browser")
        let script =
            "#!/bin/sh\nexec '\(Paths.python)' '\(Paths.file("Tests/Emulator/fake_browser.py").path)' \"$@\"\n"
        try Data(script.utf8).write(to: browser)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o755], ofItemAtPath: browser.path)

        self.process = process
        self.input = input
        self.scratch = scratch
        self.port = port
        self.baseURL = "http://127.0.0.1:\(port)"
        self.browserCommand = browser.path
    }

    deinit { stop() }

    /// Ends the emulator and waits for it. Safe to call more than once.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: scratch)
    }

    public var isRunning: Bool { process.isRunning }

    /// What `cloudbackup` needs to talk to this emulator: every CLOUDBACKUP_* endpoint, the
    /// client credentials, `XDG_CONFIG_HOME` = `configHome` (profiles live in
    /// `configHome/cloudbackup/<profile>/`) and `BROWSER` = the stand-in browser, optionally
    /// scripted by `browserMode` (see fake_browser.py: follow, tamper-state, probe, replay,
    /// deny, ignore) and recording its steps as JSON lines in `browserLog`.
    public func environment(
        for configHome: URL, browserMode: String? = nil, browserLog: URL? = nil
    ) -> [String: String] {
        var environment = [
            "XDG_CONFIG_HOME": configHome.path,
            "CLOUDBACKUP_CLIENT_ID": clientID,
            "CLOUDBACKUP_CLIENT_SECRET": clientSecret,
            "CLOUDBACKUP_AUTH_URL": baseURL + "/o/oauth2/v2/auth",
            "CLOUDBACKUP_TOKEN_URL": baseURL + "/token",
            "CLOUDBACKUP_REVOKE_URL": baseURL + "/revoke",
            "CLOUDBACKUP_DRIVE_URL": baseURL,
            "CLOUDBACKUP_DEVICE_CLIENT_ID": deviceClientID,
            "CLOUDBACKUP_DEVICE_CLIENT_SECRET": deviceClientSecret,
            "CLOUDBACKUP_DEVICE_CODE_URL": baseURL + "/device/code",
            "BROWSER": browserCommand,
            // The stand-in browser never reloads; the listener need not wait for it.
            "CLOUDBACKUP_LOGIN_LINGER_MS": "0",
        ]
        if let browserMode { environment["FAKE_BROWSER_MODE"] = browserMode }
        if let browserLog { environment["FAKE_BROWSER_LOG"] = browserLog.path }
        return environment
    }

    // MARK: - Control API

    /// A failure the emulator serves to the next matching requests (Drive and OAuth paths).
    public enum Fault: Sendable {
        /// Answer `status` in Google's error shape; `reason` defaults by status
        /// (429 rateLimitExceeded, 403 userRateLimitExceeded, 5xx backendError).
        case status(
            Int, count: Int = 1, reason: String? = nil, retryAfter: Int? = nil, paths: [String] = []
        )
        /// Handle the request, then drop the connection halfway through the answer (or, with
        /// `beforeHandling`, drop it without handling the request at all).
        case cut(count: Int = 1, paths: [String] = [], beforeHandling: Bool = false)
        /// Send half of the next downloads' bytes (the md5 in the metadata stays the original).
        case truncate(count: Int = 1)
        /// Wait before answering the next matching requests.
        case delay(seconds: Double, count: Int = 1, paths: [String] = [])

        var json: [String: Any] {
            switch self {
            case .status(let status, let count, let reason, let retryAfter, let paths):
                var rule: [String: Any] = ["status": status, "next": count, "paths": paths]
                if let reason { rule["reason"] = reason }
                if let retryAfter { rule["retryAfter"] = retryAfter }
                return rule
            case .cut(let count, let paths, let beforeHandling):
                return ["cut": count, "paths": paths, "when": beforeHandling ? "before" : "after"]
            case .truncate(let count):
                return ["truncate": count]
            case .delay(let seconds, let count, let paths):
                return ["delay": seconds, "next": count, "paths": paths]
            }
        }
    }

    public func inject(_ fault: Fault) throws {
        try control("POST", "faults", fault.json)
    }

    public func clearFaults() throws {
        try control("POST", "faults", ["clear": true])
    }

    /// When "another device" writes (see `interleave`).
    public enum InterleavePoint: String, Sendable {
        /// Between this client's next read of the file (a listing that shows it counts) and
        /// its next write to it: just before the write.
        case write
        /// Right after this client's next listing that shows the file.
        case list
        /// Right after this client's next download of the file's bytes.
        case download
        /// Before this client's next chunk, not the last, of a resumable upload to the file.
        case chunk
        /// Right after this client's next revision listing of any file: a write into another
        /// file of the same name (name it by `id`) while the client checks its own.
        case revisions
    }

    /// "Another device writes `content` to the file" at `point` of this client's exchange
    /// with it (only files named `name`, or the file `id`, when given), `count` times.
    public func interleave(
        _ content: Data, name: String? = nil, id: String? = nil, count: Int = 1,
        at point: InterleavePoint = .write
    ) throws {
        try interleave(each: [content], name: name, id: id, count: count, at: point)
    }

    /// The same with a device that writes each of `contents` in turn, once each by default.
    public func interleave(
        each contents: [Data], name: String? = nil, id: String? = nil, count: Int? = nil,
        at point: InterleavePoint = .write
    ) throws {
        var body: [String: Any] = [
            "contentsBase64": contents.map { $0.base64EncodedString() },
            "count": count ?? contents.count, "at": point.rawValue,
        ]
        if let name { body["name"] = name }
        if let id { body["id"] = id }
        try control("POST", "interleave", body)
    }

    /// The other device stops writing: an `interleave` not yet spent is forgotten.
    public func clearInterleave() throws {
        try control("POST", "interleave", ["clear": true])
    }

    /// The next authorization answers `error=access_denied`, as if the user clicked "Cancel".
    public func denyNextAuthorization() throws {
        try control("POST", "deny", [:])
    }

    /// The next consent leaves `scopes` unticked, as Google's granular consent lets a user do:
    /// the redirect's and the token answer's `scope` list only what remains.
    public func untickNextConsent(_ scopes: [String]) throws {
        try control("POST", "untick", ["scopes": scopes])
    }

    /// The device flow's user and Google's answers to it (each nil leaves a switch as it
    /// is): every device code is approved by itself after `approveAfterPolls` pending polls;
    /// the next `slowDown` polls answer slow_down; `deny` / `expire` make codes not yet
    /// decided answer access_denied / expired_token; `invalidScope` makes /device/code
    /// refuse the app-folder scope.
    public func configureDeviceFlow(
        approveAfterPolls: Int? = nil, slowDown: Int? = nil, deny: Bool? = nil,
        expire: Bool? = nil, invalidScope: Bool? = nil
    ) throws {
        var body: [String: Any] = [:]
        if let approveAfterPolls { body["approveAfterPolls"] = approveAfterPolls }
        if let slowDown { body["slowDown"] = slowDown }
        if let deny { body["deny"] = deny }
        if let expire { body["expire"] = expire }
        if let invalidScope { body["invalidScope"] = invalidScope }
        try control("POST", "device", body)
    }

    /// The user codes the device endpoint handed out, oldest first.
    public func deviceUserCodes() throws -> [String] {
        struct Answer: Decodable {
            struct Code: Decodable { var userCode: String }
            var codes: [Code]
        }
        return try JSONDecoder().decode(Answer.self, from: control("GET", "device", nil)).codes
            .map(\.userCode)
    }

    /// Skews the server clock (the `Date` header and Drive's timestamps) by `seconds`.
    public func setClockOffset(_ seconds: Double) throws {
        try control("POST", "clock", ["offset": seconds])
    }

    public func setAccessTokenLifetime(_ seconds: Int) throws {
        try control("POST", "settings", ["accessTokenLifetime": seconds])
    }

    /// Where the emulator checks a Drive v2 `If-Match` (Google does not document it).
    public enum IfMatchEnforcement: String, Sendable {
        /// At a one-request upload, when a resumable session opens and when it completes.
        case honour
        /// As `honour`, but never when a resumable session completes.
        case openOnly = "open-only"
        /// Never: a stale etag is written over.
        case ignore
    }

    /// Sets the switches for Google's undocumented behaviour until the next `reset()`; nil
    /// leaves a setting as it is. `revisionsKept`: unpinned revisions a file keeps (default
    /// 100); `revisionMaxAgeDays`: their age limit (default 30) on the emulator's clock, which
    /// `setClockOffset` moves.
    public func configure(
        ifMatch: IfMatchEnforcement? = nil, revisionsKept: Int? = nil,
        revisionMaxAgeDays: Double? = nil, pinnedRevisionDownloadsOnly: Bool? = nil
    ) throws {
        var settings: [String: Any] = [:]
        if let pinnedRevisionDownloadsOnly {
            settings["revisionDownloads"] = pinnedRevisionDownloadsOnly ? "pinned-only" : "any"
        }
        if let ifMatch { settings["ifMatch"] = ifMatch.rawValue }
        if let revisionsKept { settings["revisionsKept"] = revisionsKept }
        if let revisionMaxAgeDays { settings["revisionMaxAgeDays"] = revisionMaxAgeDays }
        try control("POST", "settings", settings)
    }

    public func expireAccessTokens() throws {
        try control("POST", "expire-access-tokens", [:])
    }

    /// Revokes every refresh and access token, as when the user removes the app's access.
    public func revokeAll() throws {
        try control("POST", "revoke-all", [:])
    }

    public func expireUploadSessions() throws {
        try control("POST", "expire-upload-sessions", [:])
    }

    /// Forgets files, tokens, faults and the log (the list of secrets is kept for leak scans),
    /// and puts the settings back to their start-up values.
    public func reset() throws {
        try control("POST", "reset", [:])
    }

    public func log() throws -> [EmulatorLogEntry] {
        try JSONDecoder().decode([EmulatorLogEntry].self, from: control("GET", "log", nil))
    }

    /// Every Drive file, any space, with its content.
    public func files() throws -> [EmulatorFile] {
        try JSONDecoder().decode([EmulatorFile].self, from: control("GET", "files", nil))
    }

    /// Puts a file in the app folder (or `parents`) as another device would have; names need
    /// not be unique.
    @discardableResult
    public func seedFile(name: String, content: Data, parents: [String] = ["appDataFolder"])
        throws -> EmulatorFile
    {
        let body: [String: Any] = [
            "name": name, "contentBase64": content.base64EncodedString(), "parents": parents,
        ]
        return try JSONDecoder().decode(EmulatorFile.self, from: control("POST", "files", body))
    }

    /// A fresh grant, as if the user had logged in (no browser, no PKCE): for tests of the
    /// Drive layer that only need a valid access token, or a refresh token to refresh.
    /// `scope` is what the user granted (default: the Drive app folder).
    public func issueTokens(
        offline: Bool = true, scope: String = "https://www.googleapis.com/auth/drive.appdata"
    ) throws -> EmulatorTokens {
        try JSONDecoder().decode(
            EmulatorTokens.self,
            from: control("POST", "tokens", ["offline": offline, "scope": scope]))
    }

    /// Every token, code, verifier and upload session id the emulator issued or received, and
    /// the client secret.
    public func secrets() throws -> [String] {
        try JSONDecoder().decode([String].self, from: control("GET", "secrets", nil))
    }

    /// The secrets that appear in any of `texts` (empty when nothing leaked). Only the secret's
    /// kind is safe to print, never the secret itself (see `emulatorSecretKind`).
    /// A secret counts as leaked in its URL-encoded form too (`4%2Femu-…`), as it appears
    /// inside a redirect address.
    public func leakedSecrets(in texts: [String]) throws -> [String] {
        let all = try secrets()
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return all.filter { secret in
            let forms = [secret, secret.addingPercentEncoding(withAllowedCharacters: unreserved)]
            return texts.contains { text in forms.contains { $0.map(text.contains) ?? false } }
        }
    }

    @discardableResult
    private func control(_ method: String, _ name: String, _ body: [String: Any]?) throws -> Data {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let response = try LoopbackHTTP.request(
            port: port, method: method, path: "/__emulator/" + name,
            headers: ["Content-Type": "application/json"], body: data)
        guard response.status == 200 else {
            throw LoopbackHTTPError(
                description:
                    "emulator control \(method) \(name) answered \(response.status): \(response.text)"
            )
        }
        return response.body
    }
}

/// The kind of an emulator secret, from its recognisable prefix: safe to print in a failure.
public func emulatorSecretKind(_ secret: String) -> String {
    if secret.hasPrefix("ya29.emu-") { return "access token" }
    if secret.hasPrefix("1//emu-") { return "refresh token" }
    if secret.hasPrefix("4/emu-") { return "authorization code" }
    if secret.hasPrefix("AEmu") { return "upload session id" }
    if secret.hasPrefix("AH-emu-") { return "device code" }
    return "client secret or code verifier"
}

/// One request the emulator answered (control API requests are not logged). Secret query
/// parameters are logged as "REDACTED".
public struct EmulatorLogEntry: Decodable, Sendable {
    public var method: String
    public var path: String
    public var query: [String: String]
    /// nil when the connection was cut before an answer.
    public var status: Int?
    /// "status", "cut", "truncate" or "delay" when an injected fault applied.
    public var fault: String?
    public var grantType: String?
    public var ifMatch: Bool?
    /// True on a successful revocation.
    public var revoked: Bool?
    /// True when "another device" wrote just before this request (see `interleave`).
    public var interleaved: Bool?
    /// True on an authorization answered with access_denied.
    public var denied: Bool?
    /// True when the client hung up before sending the whole body (the request was dropped).
    public var incomplete: Bool?
    /// The request's body size (nil when it was dropped incomplete).
    public var requestBytes: Int?
    /// The answer's body size as sent (half of it for a cut answer); nil when dropped.
    public var responseBytes: Int?
}

/// A token answer, with Google's field names.
public struct EmulatorTokens: Decodable, Sendable {
    public var accessToken: String
    public var refreshToken: String?
    public var expiresIn: Int
    public var scope: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case expiresIn = "expires_in"
        case scope
    }
}

/// A Drive file as the emulator holds it.
public struct EmulatorFile: Decodable, Sendable {
    public var id: String
    public var name: String
    public var mimeType: String
    public var parents: [String]
    public var spaces: [String]
    public var size: String
    public var version: String
    public var md5Checksum: String
    public var etag: String
    public var createdTime: String
    public var modifiedTime: String
    public var headRevisionId: String
    /// v3's app properties (none: empty).
    public var appProperties: [String: String] = [:]
    /// Oldest first; the last is the head.
    public var revisions: [EmulatorRevision]
    public var contentBase64: String

    private enum CodingKeys: String, CodingKey {
        case id, name, mimeType, parents, spaces, size, version, md5Checksum, etag, createdTime
        case modifiedTime, headRevisionId, appProperties, revisions, contentBase64
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        mimeType = try container.decode(String.self, forKey: .mimeType)
        parents = try container.decode([String].self, forKey: .parents)
        spaces = try container.decode([String].self, forKey: .spaces)
        size = try container.decode(String.self, forKey: .size)
        version = try container.decode(String.self, forKey: .version)
        md5Checksum = try container.decode(String.self, forKey: .md5Checksum)
        etag = try container.decode(String.self, forKey: .etag)
        createdTime = try container.decode(String.self, forKey: .createdTime)
        modifiedTime = try container.decode(String.self, forKey: .modifiedTime)
        headRevisionId = try container.decode(String.self, forKey: .headRevisionId)
        appProperties =
            try container.decodeIfPresent([String: String].self, forKey: .appProperties) ?? [:]
        revisions = try container.decode([EmulatorRevision].self, forKey: .revisions)
        contentBase64 = try container.decode(String.self, forKey: .contentBase64)
    }

    public var content: Data { Data(base64Encoded: contentBase64) ?? Data() }
    public var isInAppFolder: Bool { spaces == ["appDataFolder"] }
}

/// One stored content of a Drive file, with Google's field names.
public struct EmulatorRevision: Decodable, Sendable {
    public var id: String
    public var md5Checksum: String
    public var size: String
    public var modifiedTime: String
    public var keepForever: Bool
}
