import BackupKit
import BackupSync
import Envelope
import Foundation
import GoogleDrive
import LocalFiles
import Networking
import OAuth
import Testing

@testable import CloudBackupCLI

/// The error table (ErrorTable.swift) against the README's exit codes: every kind of failure
/// has the code the table there promises, and every case of every error type the boundary
/// knows comes out with its code and a line that says what to do.
@Suite struct ErrorTableTests {
    /// The README's "Exit codes" table, row by row.
    static let documented: [Failure: Int32] = [
        .unexpected: 1, .localWrite: 1, .cancelled: 1,
        .arguments: 2, .environment: 2, .missingSetup: 2, .unknownRevision: 2,
        .invalidBackup: 3, .unreadableFile: 3, .noBackup: 3, .profileFile: 3,
        .notLoggedIn: 4, .remote: 5, .busy: 6, .refused: 7,
    ]

    @Test func everyFailureHasTheExitCodeTheReadmeDocuments() {
        #expect(Set(Self.documented.keys) == Set(Failure.allCases))
        for failure in Failure.allCases {
            #expect(failure.exitCode.rawValue == Self.documented[failure], "\(failure)")
        }
    }

    /// One error of each case, the exit code it must give, and words of the fix its line must
    /// hold (nil: a failure with nothing for the user to do, such as a bug).
    struct Row: CustomTestStringConvertible, Sendable {
        var testDescription: String
        var error: any Error & Sendable
        var code: Int32
        var fix: String?
    }

    static let file = DriveFile(id: "F1", name: "habit-backup.json")
    static let token = "https://oauth2.googleapis.com/token"

    static func refusal(_ status: Int, _ reason: String?, _ operation: DriveOperation)
        -> DriveError
    {
        .rejected(
            operation: operation, GoogleAPIError(status: status, message: "m", reason: reason))
    }

    static let rows: [Row] = [
        // OAuthError, every case.
        Row(
            testDescription: "not logged in", error: OAuthError.notLoggedIn(tokenFile: "/t"),
            code: 4, fix: "cloudbackup login"),
        Row(
            testDescription: "revoked", error: OAuthError.revoked(tokenFile: "/t"), code: 4,
            fix: "cloudbackup login"),
        Row(testDescription: "denied", error: OAuthError.denied, code: 4, fix: "cloudbackup login"),
        Row(
            testDescription: "authorization failed",
            error: OAuthError.authorizationFailed(error: "x"), code: 4,
            fix: "check the OAuth client"),
        Row(
            testDescription: "scope not granted", error: OAuthError.scopeNotGranted(missing: ["s"]),
            code: 4, fix: "tick the box"),
        Row(
            testDescription: "timed out", error: OAuthError.timedOut(seconds: 5), code: 4,
            fix: "--timeout"),
        Row(
            testDescription: "paste refused", error: OAuthError.pasteRefused(reason: "r"), code: 4,
            fix: "login --paste"),
        Row(
            testDescription: "device code expired", error: OAuthError.deviceCodeExpired, code: 4,
            fix: "login --device"),
        Row(
            testDescription: "device scope refused", error: OAuthError.deviceScopeRefused, code: 4,
            fix: "login --paste"),
        Row(
            testDescription: "client refused",
            error: OAuthError.server(
                endpoint: token, status: 401, error: "invalid_client", description: nil), code: 2,
            fix: "CLOUDBACKUP_CLIENT_ID"),
        Row(
            testDescription: "grant refused",
            error: OAuthError.server(
                endpoint: token, status: 400, error: "invalid_grant", description: nil), code: 4,
            fix: "cloudbackup login"),
        Row(
            testDescription: "token server down",
            error: OAuthError.server(endpoint: token, status: 500, error: nil, description: nil),
            code: 5, fix: "try again later"),
        Row(
            testDescription: "malformed answer",
            error: OAuthError.malformedAnswer(endpoint: token, problem: "p"), code: 5,
            fix: "try again later"),
        Row(
            testDescription: "no connection",
            error: OAuthError.transport(TransportError(kind: .couldNotConnect, message: "m")),
            code: 5, fix: "check the network"),
        Row(
            testDescription: "token file too open",
            error: OAuthError.insecureTokenFile(path: "/t", mode: 0o644), code: 3, fix: "chmod 600"),
        Row(
            testDescription: "corrupt token file",
            error: OAuthError.corruptTokenFile(path: "/t", problem: "p"), code: 3, fix: "delete it"),
        Row(
            testDescription: "token file unwritable",
            error: OAuthError.file(LocalFileError(path: "/t", operation: .write, errno: ENOSPC)),
            code: 1, fix: "free up space"),
        Row(testDescription: "listener", error: OAuthError.listener("m"), code: 1, fix: nil),
        Row(testDescription: "crypto", error: OAuthError.crypto("m"), code: 1, fix: nil),
        // DriveError, every case and every refusal the table tells apart.
        Row(
            testDescription: "Drive unavailable",
            error: DriveError.unavailable(
                operation: .listFolder, attempts: 3, last: "HTTP 503"), code: 5,
            fix: "try again later"),
        Row(
            testDescription: "Drive quota",
            error: refusal(403, "storageQuotaExceeded", .upload(fileID: "F1")),
            code: 5, fix: "free up space"),
        Row(
            testDescription: "Drive domain policy",
            error: refusal(403, "domainPolicy", .upload(fileID: "F1")),
            code: 5, fix: "administrator"),
        Row(
            testDescription: "Drive scope missing",
            error: refusal(403, "insufficientScopes", .upload(fileID: "F1")), code: 4,
            fix: "tick the box"),
        Row(
            testDescription: "Drive 404 of a file",
            error: refusal(404, "notFound", .download(fileID: "F1")),
            code: 5, fix: "run again"),
        Row(
            testDescription: "Drive 404 of the folder",
            error: refusal(404, "notFound", .listFolder), code: 5,
            fix: "check the Drive URL"),
        Row(
            testDescription: "Drive 400", error: refusal(400, "badRequest", .upload(fileID: "F1")),
            code: 5,
            fix: "run again"),
        Row(
            testDescription: "Drive login refused",
            error: DriveError.unauthorized(
                operation: .upload(fileID: "F1"), GoogleAPIError(status: 401, message: "m")),
            code: 4,
            fix: "cloudbackup login"),
        Row(
            testDescription: "Drive token", error: DriveError.token(OAuthError.denied), code: 4,
            fix: "cloudbackup login"),
        Row(
            testDescription: "Drive malformed",
            error: DriveError.malformedResponse(operation: .upload(fileID: "F1"), detail: "d"),
            code: 5,
            fix: "run again"),
        // SyncError, every case but `unverified` (its record is built by a run: BackupRunDriveTests).
        Row(
            testDescription: "sync over Drive",
            error: SyncError.drive(.malformedResponse(operation: .listFolder, detail: "d")),
            code: 5,
            fix: "run again"),
        Row(
            testDescription: "keeps changing", error: SyncError.keepsChanging(rounds: 3), code: 5,
            fix: "try again later"),
        Row(
            testDescription: "too large", error: SyncError.tooLarge(bytes: 9, limit: 8), code: 3,
            fix: "raise --max-bytes"),
        Row(
            testDescription: "newer remote",
            error: SyncError.refused(file, BackupFileError.newerSchema(9)), code: 7,
            fix: "update cloudbackup"),
        Row(
            testDescription: "no key for it",
            error: SyncError.unopened(file, revision: nil, RemoteEncryption.MissingKey()), code: 3,
            fix: "give one"),
        Row(
            testDescription: "would unseal", error: SyncError.unsealing(file, revision: "R"),
            code: 3, fix: "\"encrypt\": true"),
        Row(
            testDescription: "could not seal",
            error: SyncError.unsealed(CocoaError(.featureUnsupported)), code: 1, fix: nil),
        Row(
            testDescription: "invalid remote",
            error: SyncError.invalidRemote(file, BackupFileError.tooLarge(size: 9, limit: 8)),
            code: 3, fix: "--max-bytes"),
        Row(
            testDescription: "no such revision",
            error: SyncError.noSuchRevision(.unknownID("R", oldest: nil)), code: 2,
            fix: "cloudbackup history"),
        Row(
            testDescription: "before the oldest",
            error: SyncError.noSuchRevision(
                .beforeOldest(Timestamp(millisecondsSince1970: 0), oldest: nil)), code: 2,
            fix: "cloudbackup history"),
        Row(
            testDescription: "cannot record", error: SyncError.cannotRecord("w"), code: 1,
            fix: "free some space"),
        Row(
            testDescription: "protocol violation", error: SyncError.protocolViolation("x"), code: 1,
            fix: nil),
        // The rest the boundary knows.
        Row(
            testDescription: "unreadable local file",
            error: LocalFileError(path: "/s", operation: .open, errno: ENOENT), code: 3, fix: nil),
        Row(
            testDescription: "unwritable local file",
            error: LocalFileError(path: "/s", operation: .write, errno: EROFS), code: 1,
            fix: "writable"),
        Row(
            testDescription: "transport", error: TransportError(kind: .timedOut, message: "m"),
            code: 5, fix: "try again"),
        Row(
            testDescription: "missing key", error: RemoteEncryption.MissingKey(), code: 3,
            fix: "give one"),
        Row(
            testDescription: "anything else", error: CocoaError(.featureUnsupported), code: 1,
            fix: nil),
    ]

    @Test(arguments: rows)
    func everyErrorComesOutWithItsCodeAndItsFix(row: Row) {
        let described = CloudBackup.describe(row.error)
        #expect(described.exitCode.rawValue == row.code)
        #expect(!described.lines.isEmpty)
        if let fix = row.fix {
            #expect(described.lines.joined(separator: " ").contains(fix), "\(described.lines)")
        }
    }

    /// The reader's refusals, which commands describe with the file's name.
    @Test func everyReaderRefusalNamesTheFileWithItsCode() {
        let refusals: [(BackupFileError, Int32, String?)] = [
            (.tooLarge(size: 9, limit: 8), 3, "--max-bytes"),
            (.syntax(line: 1, column: 2, message: "m"), 3, nil),
            (.notABackup("m"), 3, nil),
            (.newerSchema(9), 7, "update cloudbackup"),
            (.invalid([]), 3, nil),
        ]
        for (error, code, fix) in refusals {
            let described = BackupFile.describe(error, file: "state.json")
            #expect(described.exitCode.rawValue == code, "\(error)")
            #expect(described.lines.allSatisfy { $0.hasPrefix("state.json") }, "\(error)")
            if let fix { #expect(described.lines.joined().contains(fix), "\(error)") }
        }
    }

    /// A decryption failure the envelope reports is a bad backup, never a crash or a bug.
    @Test func anEnvelopeErrorIsAnInvalidBackup() throws {
        let error = #expect(throws: EnvelopeError.self) {
            try Envelope.decrypt(Array("age-encryption.org/v1\n".utf8), with: [])
        }
        #expect(CloudBackup.describe(try #require(error)).exitCode == .invalidFile)
    }
}
