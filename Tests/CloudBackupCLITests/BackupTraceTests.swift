import Foundation
import TestSupport
import Testing

/// What `backup --verbose` traces of its HTTP exchanges.
extension BackupCommandTests {
    /// A resumable session URI is a bearer credential for the upload (Google): its
    /// `upload_id` is redacted like a token.
    @Test func aResumableUploadsSessionIdIsRedactedInTheTrace() throws {
        let challenges = challengeStamps(9, prefix: "R")
        try phone.write(
            backupJSON(
                device: "phone", challenges: challenges, logs: 365,
                note: String(repeating: "r", count: 1_900)))
        let result = try phone.backup(["--verbose"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("uploadType=resumable&upload_id=REDACTED"))
        let leaked = try emulator.leakedSecrets(in: [result.stdout, result.stderr]).map(
            emulatorSecretKind)
        #expect(leaked.isEmpty, "leaked: \(leaked)")
    }
}
