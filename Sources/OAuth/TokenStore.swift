import Foundation
import LocalFiles

/// What a login leaves behind: the long-lived refresh token and the current access token.
public struct StoredLogin: Codable, Sendable, Equatable {
    public var refreshToken: String
    public var accessToken: String?
    public var accessTokenExpiresAt: Date?
    public var scope: String?
    /// The OAuth client the login was issued to: a refresh must use the same one (Google
    /// refuses another). nil in files from before the device flow: the desktop client.
    public var clientID: String?

    public init(
        refreshToken: String, accessToken: String?, accessTokenExpiresAt: Date?, scope: String?,
        clientID: String? = nil
    ) {
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.scope = scope
        self.clientID = clientID
    }

    /// A fresh login from a code exchange's or a device poll's grant, issued to `clientID`.
    public init?(grant: TokenGrant, clientID: String) {
        guard let refreshToken = grant.refreshToken else { return nil }
        self.init(
            refreshToken: refreshToken, accessToken: grant.accessToken,
            accessTokenExpiresAt: grant.expiresAt, scope: grant.scope, clientID: clientID)
    }
}

/// The profile's token file: JSON, mode 0600, replaced atomically (temporary file, fsync,
/// rename), so a crash or a second process never sees half a file. A file readable by group
/// or others is refused, as ssh refuses such a private key: the refresh token is a
/// long-lived password to the user's Drive app folder.
public struct TokenStore: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// Serialises refreshes between processes; beside the token file, not the file itself,
    /// because the token file is replaced by rename and a lock on a replaced inode locks
    /// nothing.
    public var lockPath: String { path + ".lock" }

    /// The saved login, or nil when there is none. `checkingMode: false` is for logout only,
    /// which must be able to get rid of an exposed file.
    public func load(checkingMode: Bool = true) throws(OAuthError) -> StoredLogin? {
        do {
            guard let bytes = try secret.read(maxBytes: 1 << 20, checking: checkingMode) else {
                return nil
            }
            do {
                return try Self.decoder.decode(StoredLogin.self, from: Data(bytes))
            } catch {
                throw OAuthError.corruptTokenFile(
                    path: path, problem: "not a token file (expected JSON with refreshToken)")
            }
        } catch let error as OAuthError {
            throw error
        } catch let error as SecretFile.TooOpen {
            throw .tooOpen(error)
        } catch let error as LocalFileError {
            throw .file(error)
        } catch {
            throw .corruptTokenFile(path: path, problem: "\(error)")
        }
    }

    /// The token file under the rule every file holding a secret follows.
    private var secret: SecretFile {
        SecretFile(path, kind: "a token file", holding: "your login")
    }

    public func save(_ login: StoredLogin) throws(OAuthError) {
        do {
            try LocalFile.makeDirectory(LocalFile.directory(of: path), mode: 0o700)
            let bytes = try Self.encoder.encode(login) + Data("\n".utf8)
            try LocalFile.writeAtomically(Array(bytes), to: path, mode: 0o600)
        } catch let error as LocalFileError {
            throw .file(error)
        } catch {
            throw .corruptTokenFile(path: path, problem: "cannot encode the login: \(error)")
        }
    }

    public func delete() throws(OAuthError) {
        do {
            try LocalFile.remove(path)
            try LocalFile.remove(lockPath)
        } catch {
            throw .file(error)
        }
    }

    /// Runs `body` holding the refresh lock, waiting for another process that holds it.
    func withLock<T>(_ body: () throws(OAuthError) -> T) throws(OAuthError) -> T {
        let lock: FileLock
        do {
            try LocalFile.makeDirectory(LocalFile.directory(of: path), mode: 0o700)
            lock = try FileLock(waitingFor: lockPath)
        } catch {
            throw .file(error)
        }
        return try withExtendedLifetime(lock) { () throws(OAuthError) -> T in try body() }
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
