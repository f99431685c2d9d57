import BackupSync
import Foundation
import LocalFiles
import TestSupport
import Testing

@testable import CloudBackupCLI

@Suite struct ProfileTests {
    @Test func defaultsAreGooglesRealEndpointsUnderXDGConfigHome() throws {
        let profile = try Profile.load(name: "default", environment: ["XDG_CONFIG_HOME": "/tmp/x"])
        #expect(profile.folder == "/tmp/x/cloudbackup/default")
        #expect(profile.tokenURL == "https://oauth2.googleapis.com/token")
        #expect(profile.driveURL == "https://www.googleapis.com")
        #expect(profile.fileName == "habit-backup.json")
        #expect(profile.clientID == nil)
    }

    /// config.json may hold the client secret: readable by group or others, it is refused as
    /// the token file is, with the chmod that fixes it, whatever the command (exit 3).
    @Test(arguments: [0o640, 0o604, 0o644])
    func aConfigOthersCanReadIsRefusedWithTheFix(mode: Int) throws {
        let base = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: base) }
        let folder = base.appendingPathComponent("cloudbackup/default").path
        try LocalFile.makeDirectory(folder)
        let path = folder + "/config.json"
        try LocalFile.writeAtomically(
            Array(#"{"clientSecret":"s3cret"}"#.utf8), to: path, mode: mode_t(mode))
        let octal = "0" + String(mode, radix: 8)
        for command in [["status"], ["login", "--no-browser"], ["logout"]] {
            let result = try cloudbackup(command, environment: ["XDG_CONFIG_HOME": base.path])
            #expect(result.status == 3)
            #expect(
                result.stderr
                    == "cloudbackup: \(path): permissions \(octal) are too open for a profile's config.json (it holds settings such as the OAuth client secret); run `chmod 600 \(path)` and try again\n"
            )
            #expect(!result.stderr.contains("s3cret") && !result.stdout.contains("s3cret"))
        }
        #expect(chmod(path, 0o600) == 0)
        #expect(
            try Profile.load(name: "default", environment: ["XDG_CONFIG_HOME": base.path])
                .clientSecret == "s3cret")
    }

    /// The device flow's client and endpoint are settings like the others, and its URL is
    /// held to the same https rule, named by its key.
    @Test func theDeviceClientSettingsComeFromConfigJSON() throws {
        let base = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: base) }
        let folder = base.appendingPathComponent("cloudbackup/default").path
        try LocalFile.makeDirectory(folder)
        try LocalFile.writeAtomically(
            Array(
                #"{"deviceClientId":"tv-id","deviceClientSecret":"tv-secret","deviceCodeUrl":"http://127.0.0.1:9/device/code"}"#
                    .utf8), to: folder + "/config.json", mode: 0o600)
        let profile = try Profile.load(name: "default", environment: ["XDG_CONFIG_HOME": base.path])
        let device = try #require(try profile.deviceOAuthClient())
        #expect(device.clientID == "tv-id")
        #expect(device.clientSecret == "tv-secret")
        #expect(device.deviceCodeEndpoint == "http://127.0.0.1:9/device/code")
        #expect(device.tokenEndpoint == "https://oauth2.googleapis.com/token")

        try LocalFile.writeAtomically(
            Array(#"{"deviceCodeUrl":"http://example.com/device/code"}"#.utf8),
            to: folder + "/config.json", mode: 0o600)
        let error = #expect(throws: CLIError.self) {
            try Profile.load(name: "default", environment: ["XDG_CONFIG_HOME": base.path])
        }
        #expect(error?.exitCode == .invalidFile)
        #expect(error?.lines.first?.contains("setting 'deviceCodeUrl'") == true)
        let defaults = try Profile.load(name: "default", environment: ["XDG_CONFIG_HOME": "/tmp/x"])
        #expect(defaults.deviceCodeURL == "https://oauth2.googleapis.com/device/code")
        #expect(try defaults.deviceOAuthClient(requireCredentials: false) == nil)
    }

    @Test func homeIsUsedWithoutXDGConfigHome() throws {
        let profile = try Profile.load(name: "work", environment: ["HOME": "/home/u"])
        #expect(profile.folder == "/home/u/.config/cloudbackup/work")
    }

    @Test func environmentWinsOverConfigFile() throws {
        let base = try Paths.temporaryFolder()
        let folder = base.appendingPathComponent("cloudbackup/default").path
        try LocalFile.makeDirectory(folder)
        try LocalFile.writeAtomically(
            Array(#"{"clientId":"from-file","fileName":"file.json"}"#.utf8),
            to: folder + "/config.json", mode: 0o600)
        let profile = try Profile.load(
            name: "default",
            environment: ["XDG_CONFIG_HOME": base.path, "CLOUDBACKUP_CLIENT_ID": "from-env"])
        #expect(profile.clientID == "from-env")
        #expect(profile.fileName == "file.json")
    }

    /// An empty value in the file is refused only when it would be used.
    @Test func anEmptyFileValueTheEnvironmentOverridesIsFine() throws {
        let base = try Paths.temporaryFolder()
        let folder = base.appendingPathComponent("cloudbackup/default").path
        try LocalFile.makeDirectory(folder)
        try LocalFile.writeAtomically(
            Array(#"{"fileName":""}"#.utf8), to: folder + "/config.json", mode: 0o600)
        let profile = try Profile.load(
            name: "default",
            environment: ["XDG_CONFIG_HOME": base.path, "CLOUDBACKUP_FILE_NAME": "x.json"])
        #expect(profile.fileName == "x.json")
    }

    @Test func unknownConfigKeyIsNamed() throws {
        let base = try Paths.temporaryFolder()
        let folder = base.appendingPathComponent("cloudbackup/default").path
        try LocalFile.makeDirectory(folder)
        try LocalFile.writeAtomically(
            Array(#"{"clientID":"x"}"#.utf8), to: folder + "/config.json", mode: 0o600)
        let error = #expect(throws: CLIError.self) {
            try Profile.load(name: "default", environment: ["XDG_CONFIG_HOME": base.path])
        }
        #expect(error?.lines.first?.contains("unknown setting 'clientID'") == true)
    }

    @Test(arguments: [
        #"{"clientID":"x"}"#, #"{"fileName":3}"#, "{", "[]", #"{"fileName":""}"#,
        #"{"driveUrl":"http://drive.example.com"}"#,
    ])
    func aBrokenConfigFileIsAnInvalidFile(text: String) throws {
        let base = try Paths.temporaryFolder()
        let folder = base.appendingPathComponent("cloudbackup/default").path
        try LocalFile.makeDirectory(folder)
        try LocalFile.writeAtomically(Array(text.utf8), to: folder + "/config.json", mode: 0o600)
        let error = #expect(throws: CLIError.self) {
            try Profile.load(name: "default", environment: ["XDG_CONFIG_HOME": base.path])
        }
        #expect(error?.exitCode == .invalidFile)
        #expect(error?.lines.first?.contains(folder + "/config.json") == true)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080", true), ("http://localhost:1", true),
        ("https://example.com", true),
        ("http://example.com", false), ("ftp://127.0.0.1", false), ("not a url", false),
        ("http://127.0.0.9:1", true), ("http://127.example.com", false),
        ("http://127.0.0.1.example.com", false),
    ])
    func plainHTTPOnlyForLoopback(url: String, allowed: Bool) {
        let accepted =
            (try? Profile.checkEndpoint(url, named: "CLOUDBACKUP_DRIVE_URL", failure: .environment))
            != nil
        #expect(accepted == allowed)
    }

    /// A bad URL from the environment is named by its variable, like an option (exit 2).
    @Test func aBadURLInTheEnvironmentIsNamedByItsVariable() throws {
        let error = #expect(throws: CLIError.self) {
            try Profile.load(
                name: "default",
                environment: [
                    "XDG_CONFIG_HOME": "/tmp/x",
                    "CLOUDBACKUP_DRIVE_URL": "http://drive.example.com",
                ])
        }
        #expect(error?.exitCode == .usage)
        #expect(error?.lines.first?.hasPrefix("CLOUDBACKUP_DRIVE_URL: ") == true)
    }

    /// The restore command a warning suggests runs as printed: the profile named, the path
    /// one shell word.
    @Test(arguments: [
        (
            "/home/me/state.json", "default",
            "cloudbackup restore --file /home/me/state.json --merge"
        ),
        (
            "/home/me/my state.json", "work",
            "cloudbackup restore --file '/home/me/my state.json' --merge --profile work"
        ),
        ("it's.json", "default", #"cloudbackup restore --file 'it'\''s.json' --merge"#),
    ])
    func theSuggestedRestoreRunsAsPrinted(state: String, profile: String, command: String) {
        #expect(DriveSession.restoreCommand(into: state, profile: profile) == command)
    }

    @Test func aRelativeXDGConfigHomeIsNamedAsSuch() {
        let error = #expect(throws: CLIError.self) {
            try Profile.folder(for: "default", environment: ["XDG_CONFIG_HOME": "rel"])
        }
        #expect(
            error?.lines.first
                == "XDG_CONFIG_HOME 'rel' is not an absolute path and HOME is not set; set one to an absolute path to say where the profile lives"
        )
    }

    @Test(arguments: ["../etc", ".hidden", "", "a/b", "white space"])
    func badProfileNamesAreRefused(name: String) {
        #expect(throws: CLIError.self) {
            try Profile.folder(for: name, environment: ["HOME": "/h"])
        }
    }

    /// A test's lower cap of pins per file (`CLOUDBACKUP_PIN_LIMIT`) sets the policy's, so its
    /// reserve is kept under that cap; a bad value is a usage error, never Google's 200 quietly.
    @Test func aPinLimitFromTheEnvironmentSetsThePolicysCap() throws {
        let plain = try Profile.load(name: "default", environment: ["XDG_CONFIG_HOME": "/tmp/x"])
        #expect(plain.retention?.pinLimit == RetentionPolicy.maxPins)
        let low = try Profile.load(
            name: "default",
            environment: ["XDG_CONFIG_HOME": "/tmp/x", "CLOUDBACKUP_PIN_LIMIT": "10"])
        #expect(low.retention?.pinLimit == 10)
        for bad in ["0", "201", "ten"] {
            let error = #expect(throws: CLIError.self) {
                try Profile.load(
                    name: "default",
                    environment: ["XDG_CONFIG_HOME": "/tmp/x", "CLOUDBACKUP_PIN_LIMIT": bad])
            }
            #expect(error?.exitCode.rawValue == 2, "\(bad)")
            #expect(error?.lines.first?.contains("CLOUDBACKUP_PIN_LIMIT") == true)
        }
    }
}

/// config.json's whole numbers 0 and 1 are numbers, not booleans: `"daily": 0` turns that level
/// off as the README says, `"days": 1` keeps a day, and `true` is refused where a number goes.
/// (Linux Foundation's `is Bool` holds for the numbers 0 and 1, and refused them.)
@Test func zeroAndOneAreNumbersInConfigAndTrueIsNot() throws {
    let policy = try Profile.retention(
        try JSONSerialization.jsonObject(with: Data(#"{"daily": 0, "weekly": 1}"#.utf8)),
        in: "config.json")
    #expect(policy?.daily == 0 && policy?.weekly == 1)
    let bounds = try DecisionLog.Bounds(
        try JSONSerialization.jsonObject(with: Data(#"{"days": 1, "megabytes": 1}"#.utf8)),
        in: "config.json")
    #expect(bounds.days == 1 && bounds.bytes == 1 << 20)
    #expect(throws: CLIError.self) {
        try Profile.retention(
            try JSONSerialization.jsonObject(with: Data(#"{"daily": true}"#.utf8)),
            in: "config.json")
    }
}
