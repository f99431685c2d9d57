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
        .invalidBackup: 3, .unreadableFile: 3, .noBackup: 10, .profileFile: 3,
        .notLoggedIn: 4, .remote: 5, .busy: 6, .refused: 7, .lastRunFailed: 8, .tooOld: 9,
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

        init(
            _ testDescription: String, _ error: any Error & Sendable, _ code: Int32, _ fix: String?
        ) {
            self.testDescription = testDescription
            self.error = error
            self.code = code
            self.fix = fix
        }
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
        Row("not logged in", OAuthError.notLoggedIn(tokenFile: "/t"), 4, "cloudbackup login"),
        Row("revoked", OAuthError.revoked(tokenFile: "/t"), 4, "cloudbackup login"),
        Row("denied", OAuthError.denied, 4, "cloudbackup login"),
        Row(
            "authorization failed", OAuthError.authorizationFailed(error: "x"), 4,
            "check the OAuth client"),
        Row("scope not granted", OAuthError.scopeNotGranted(missing: ["s"]), 4, "tick the box"),
        Row("timed out", OAuthError.timedOut(seconds: 5), 4, "--timeout"),
        Row("paste refused", OAuthError.pasteRefused(reason: "r"), 4, "login --paste"),
        Row("device code expired", OAuthError.deviceCodeExpired, 4, "login --device"),
        Row("device scope refused", OAuthError.deviceScopeRefused, 4, "login --paste"),
        Row(
            "client refused",
            OAuthError.server(
                endpoint: token, status: 401, error: "invalid_client", description: nil), 2,
            "CLOUDBACKUP_CLIENT_ID"),
        Row(
            "grant refused",
            OAuthError.server(
                endpoint: token, status: 400, error: "invalid_grant", description: nil), 4,
            "cloudbackup login"),
        Row(
            "token server down",
            OAuthError.server(endpoint: token, status: 500, error: nil, description: nil), 5,
            "try again later"),
        Row(
            "malformed answer", OAuthError.malformedAnswer(endpoint: token, problem: "p"), 5,
            "try again later"),
        Row(
            "no connection",
            OAuthError.transport(TransportError(kind: .couldNotConnect, message: "m")), 5,
            "check the network"),
        Row(
            "token file too open",
            OAuthError.tooOpen(
                SecretFile.TooOpen(path: "/t", mode: 0o644, kind: "a token file", holding: "x")), 3,
            "chmod 600"),
        Row(
            "corrupt token file", OAuthError.corruptTokenFile(path: "/t", problem: "p"), 3,
            "delete it"),
        Row(
            "token file unwritable",
            OAuthError.file(LocalFileError(path: "/t", operation: .write, errno: ENOSPC)), 1,
            "free up space"),
        Row("listener", OAuthError.listener("m"), 1, nil),
        Row("crypto", OAuthError.crypto("m"), 1, nil),
        // DriveError, every case and every refusal the table tells apart.
        Row(
            "Drive unavailable",
            DriveError.unavailable(operation: .listFolder, attempts: 3, last: "HTTP 503"), 5,
            "try again later"),
        Row(
            "Drive unreachable",
            DriveError.unreachable(
                operation: .listFolder,
                TransportError(kind: .couldNotConnect, message: "m", host: "h", cause: "c")), 5,
            "check the network"),
        Row(
            "Drive quota", refusal(403, "storageQuotaExceeded", .upload(fileID: "F1")), 5,
            "free up space"),
        Row(
            "Drive domain policy", refusal(403, "domainPolicy", .upload(fileID: "F1")), 5,
            "administrator"),
        Row(
            "Drive scope missing", refusal(403, "insufficientScopes", .upload(fileID: "F1")), 4,
            "tick the box"),
        Row(
            "Drive 404 of a file", refusal(404, "notFound", .download(fileID: "F1")), 5, "run again"
        ),
        Row(
            "Drive 404 of the folder", refusal(404, "notFound", .listFolder), 5,
            "check the Drive URL"),
        Row("Drive 400", refusal(400, "badRequest", .upload(fileID: "F1")), 5, "run again"),
        Row(
            "Drive login refused",
            DriveError.unauthorized(
                operation: .upload(fileID: "F1"), GoogleAPIError(status: 401, message: "m")), 4,
            "cloudbackup login"),
        Row("Drive token", DriveError.token(OAuthError.denied), 4, "cloudbackup login"),
        Row(
            "Drive malformed",
            DriveError.malformedResponse(operation: .upload(fileID: "F1"), detail: "d"), 5,
            "run again"),
        // SyncError, every case but `unverified` (its record is built by a run: BackupRunDriveTests).
        Row(
            "sync over Drive",
            SyncError.drive(.malformedResponse(operation: .listFolder, detail: "d")), 5, "run again"
        ),
        Row(
            "unmerged revision",
            SyncError.unmerged(
                refusal(400, "badRequest", .pinRevision("R2", fileID: "F1")),
                revisions: [DriveRevision(id: "R2", modifiedTime: "2026-11-01T10:00:00.000Z")]), 5,
            "missing from the backup on Drive now"),
        Row("keeps changing", SyncError.keepsChanging(rounds: 3), 5, "try again later"),
        Row("too large", SyncError.tooLarge(bytes: 9, limit: 8), 3, "raise --max-bytes"),
        Row(
            "newer remote", SyncError.refused(file, BackupFileError.newerSchema(9)), 7,
            "update cloudbackup"),
        Row(
            "no key for it", SyncError.unopened(file, revision: nil, RemoteEncryption.MissingKey()),
            3, "give one"),
        Row("would unseal", SyncError.unsealing(file, revision: "R"), 3, "\"encrypt\": true"),
        Row("could not seal", SyncError.unsealed(CocoaError(.featureUnsupported)), 1, nil),
        Row(
            "invalid remote",
            SyncError.invalidRemote(file, BackupFileError.tooLarge(size: 9, limit: 8)), 3,
            "--max-bytes"),
        Row(
            "no such revision", SyncError.noSuchRevision(.unknownID("R", oldest: nil)), 2,
            "cloudbackup history"),
        Row(
            "before the oldest",
            SyncError.noSuchRevision(
                .beforeOldest(Timestamp(millisecondsSince1970: 0), oldest: nil)), 2,
            "cloudbackup history"),
        Row("cannot record", SyncError.cannotRecord("w"), 1, "free some space"),
        Row("protocol violation", SyncError.protocolViolation("x"), 1, nil),
        // The rest the boundary knows.
        Row(
            "unreadable local file", LocalFileError(path: "/s", operation: .open, errno: ENOENT), 3,
            nil),
        Row(
            "unwritable local file", LocalFileError(path: "/s", operation: .write, errno: EROFS), 1,
            "writable"),
        Row("transport", TransportError(kind: .timedOut, message: "m"), 5, "run again"),
        Row("missing key", RemoteEncryption.MissingKey(), 3, "give one"),
        Row("anything else", CocoaError(.featureUnsupported), 1, nil),
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

    /// After an upload, Drive's file is not "as it was" (the advice for a Drive failure before
    /// any write): a check cut short or a revision it could not read says what may be or is
    /// missing, and that the next run puts it back, with the Drive failure's own exit code.
    @Test func aFailureAfterTheUploadNeverSaysTheBackupIsAsItWas() {
        let refused = Self.refusal(400, "badRequest", .pinRevision("R2", fileID: "F1"))
        let pending = PendingVerification(fileId: "F1", baseRevisionId: "R1", uploadedMd5: "m")
        let unauthorized = DriveError.unauthorized(
            operation: .listRevisions(fileID: "F1"), GoogleAPIError(status: 401, message: "m"))
        for (error, code, words) in [
            (SyncError.unverified(refused, pending), 5, "may be missing"),
            (
                .unmerged(refused, revisions: [DriveRevision(id: "R2")]), 5,
                "missing from the backup on Drive now"
            ),
            (.unverified(unauthorized, pending), 4, "puts it back"),
        ] as [(SyncError, Int32, String)] {
            let line = CloudBackup.describe(error).lines.joined(separator: " ")
            #expect(!line.contains("as it was"), "\(line)")
            #expect(line.contains(words) && line.contains("next backup"), "\(line)")
            #expect(CloudBackup.describe(error).exitCode.rawValue == code, "\(line)")
        }
    }

    /// The reader's refusals, which commands describe with the file's name.
    @Test func everyReaderRefusalNamesTheFileWithItsCode() {
        let refusals: [(BackupFileError, Int32, String?)] = [
            (.tooLarge(size: 9, limit: 8), 3, "--max-bytes"),
            (.syntax(line: 1, column: 2, message: "m"), 3, nil),
            (.notABackup("m"), 3, nil),
            (.newerSchema(9), 7, "update cloudbackup"),
            (
                .invalid([
                    ValidationIssue(pointer: "/title", message: "must be a string", rule: .fields)
                ]), 3, nil
            ),
        ]
        for (error, code, fix) in refusals {
            let described = BackupFile.describe(error, file: "state.json")
            #expect(described.exitCode.rawValue == code, "\(error)")
            #expect(!described.lines.isEmpty, "\(error)")
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
