import BackupKit
import Foundation
import OAuth
import TestSupport
import Testing

/// Drive refusals and logins that cannot work: what they exit with and what they tell the user.
extension BackupCommandTests {
    /// A login without the Drive scope (the box left unticked on Google's consent page) is
    /// a login problem, exit 4, not a Drive outage cron should retry.
    @Test func aLoginWithoutTheDriveScopeExits4() throws {
        let narrow = try BackupMachine(emulator)
        let tokens = try emulator.issueTokens(scope: "openid email")
        try TokenStore(path: narrow.tokenPath).save(
            StoredLogin(
                refreshToken: try #require(tokens.refreshToken), accessToken: nil,
                accessTokenExpiresAt: nil, scope: tokens.scope))
        try narrow.write(
            backupJSON(device: "narrow", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        let result = try narrow.backup()
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("cloudbackup login"))
        #expect(result.stderr.contains("tick"))
        #expect(try emulator.files().isEmpty)
    }

    struct RefusalCase: Sendable, CustomTestStringConvertible {
        var status = 403
        var reason: String
        var exitCode: Int32
        var advice: String
        var testDescription: String { "\(status) \(reason)" }
    }

    @Test(arguments: [
        RefusalCase(reason: "insufficientPermissions", exitCode: 4, advice: "tick"),
        RefusalCase(reason: "insufficientScopes", exitCode: 4, advice: "tick"),
        RefusalCase(reason: "storageQuotaExceeded", exitCode: 5, advice: "free up"),
        RefusalCase(reason: "domainPolicy", exitCode: 5, advice: "administrator"),
        RefusalCase(status: 404, reason: "notFound", exitCode: 5, advice: "check the Drive URL"),
        RefusalCase(status: 400, reason: "badRequest", exitCode: 5, advice: "--verbose"),
    ])
    func aDriveRefusalSaysWhatToDo(_ refusal: RefusalCase) throws {
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try emulator.inject(
            .status(
                refusal.status, count: 1, reason: refusal.reason, paths: ["/upload/"]))
        let result = try phone.backup()
        #expect(result.status == refusal.exitCode, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains(refusal.advice), "\(result.stderr)")
    }

    /// A 404 on the backup between our listing and our download: another device merged it
    /// into an older copy and deleted it. The backup lists again and goes on.
    @Test func aBackupWhoseFileGoesMeanwhileListsAgain() throws {
        try emulator.seedBackup(
            backupJSON(device: "tablet", challenges: ["B": "2026-11-01T00:00:00.000Z"]))
        try phone.write(backupJSON(device: "phone", challenges: ["A": "2026-11-01T00:00:00.000Z"]))
        try emulator.inject(.status(404, count: 1, reason: "notFound", paths: ["/drive/v2/files/"]))
        let result = try phone.backup()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try remoteBackups(emulator).map { challengeIDs($0.document) } == [["A", "B"]])
        #expect(try emulator.log().filter { $0.path == "/drive/v3/files" }.count == 2)
    }
}
