import Foundation
import LocalFiles
import TestSupport
import Testing

/// The one rule every file holding a secret follows: its owner's alone.
@Suite struct SecretFileTests {
    let path: String
    let secret: SecretFile

    init() throws {
        path = try Paths.temporaryFolder().appendingPathComponent("key").path
        secret = SecretFile(path, kind: "a test key", holding: "a secret")
    }

    @Test(arguments: [0o600, 0o400, 0o700] as [mode_t])
    func aFileOnlyItsOwnerCanReachIsRead(bits: mode_t) throws {
        try LocalFile.writeAtomically(Array("k\n".utf8), to: path, mode: bits)
        #expect(try secret.read(maxBytes: 10) == Array("k\n".utf8))
    }

    /// Any bit for group or others refuses it, reading or writing, with the fix in the line.
    @Test(arguments: [0o640, 0o604, 0o620, 0o602, 0o644, 0o666] as [mode_t])
    func aFileOthersCanReachIsRefused(bits: mode_t) throws {
        try LocalFile.writeAtomically(Array("k\n".utf8), to: path, mode: bits)
        let refusal = #expect(throws: SecretFile.TooOpen.self) {
            try secret.read(maxBytes: 10)
        }
        let octal = "0" + String(bits, radix: 8)
        #expect(
            refusal?.description
                == "\(path): permissions \(octal) are too open for a test key (it holds a secret); run `chmod 600 \(path)` and try again"
        )
        // Logout alone reaches an exposed file, to delete it.
        #expect(try secret.read(maxBytes: 10, checking: false) == Array("k\n".utf8))
    }

    @Test func aMissingFileIsNotThere() throws {
        #expect(try secret.read(maxBytes: 10) == nil)
        #expect(try secret.exists() == false)
    }
}
