import Foundation
import TestSupport
import Testing

/// The Google emulator is test infrastructure that other tests trust, so it has tests of its
/// own: the Python protocol suite (PKCE, single-use codes, invalid_grant, 412, 409, resumable
/// 308 semantics, faults, duplicates) and the Swift harness that starts and drives it.
@Suite struct EmulatorSelfTests {
    @Test func pythonProtocolSuitePasses() throws {
        let result = try run(
            URL(fileURLWithPath: Paths.python),
            ["-m", "unittest", "discover", "-s", Paths.file("Tests/Emulator").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("OK"))
    }

    /// Google's own client (google-api-python-client, from the project's .venv) against the
    /// emulator, and the emulator's field lists against Google's discovery documents.
    @Test func fidelitySuiteWithGooglesClientPasses() throws {
        let result = try run(
            URL(fileURLWithPath: Paths.python),
            [
                "-m", "unittest", "discover", "-s", Paths.file("Tests/Emulator").path,
                "-p", "fidelity_*.py",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("OK"))
    }

    @Test func startsOnAnEphemeralPortAndLogsDriveRequests() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        #expect(emulator.port != 0)

        let response = try LoopbackHTTP.request(
            port: emulator.port, method: "GET", path: "/drive/v3/files?spaces=appDataFolder")
        #expect(response.status == 401)
        #expect(response.headers["date"] != nil)

        let log = try emulator.log()
        let entry = try #require(log.last)
        #expect(entry.method == "GET")
        #expect(entry.path == "/drive/v3/files")
        #expect(entry.query == ["spaces": "appDataFolder"])
        #expect(entry.status == 401)
    }

    @Test func twoEmulatorsNeverShareAPort() throws {
        let first = try Emulator()
        let second = try Emulator()
        defer {
            first.stop()
            second.stop()
        }
        #expect(first.port != second.port)
    }

    @Test func seededFilesComeBackWithContentAndDuplicateNames() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bytes = Data("{\"format\":\"habit-backup\"}\n".utf8)
        let first = try emulator.seedFile(name: "habit-backup.json", content: bytes)
        let second = try emulator.seedFile(name: "habit-backup.json", content: Data("{}".utf8))

        let files = try emulator.files()
        #expect(files.map(\.id) == [first.id, second.id])
        #expect(files[0].content == bytes)
        #expect(files[0].size == String(bytes.count))
        #expect(files.allSatisfy { $0.isInAppFolder })
    }

    @Test func injectedFaultIsServedOnceThenTheRequestSucceedsAgain() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        try emulator.inject(.status(503, count: 1, retryAfter: 1, paths: ["/token"]))

        func tokenRequest() throws -> LoopbackResponse {
            try LoopbackHTTP.request(
                port: emulator.port, method: "POST", path: "/token",
                headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Data("grant_type=refresh_token&refresh_token=none".utf8))
        }
        let faulted = try tokenRequest()
        #expect(faulted.status == 503)
        #expect(faulted.headers["retry-after"] == "1")
        let next = try tokenRequest()
        #expect(next.status == 400, "the client_id is missing: a real answer, not the fault")
        #expect(try emulator.log().map(\.fault) == ["status", nil])
    }

    @Test func configureSetsTheUndocumentedSwitchesAndRefusesBadValues() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        try emulator.configure(ifMatch: .ignore, revisionsKept: 1)
        let token = try emulator.issueTokens().accessToken
        let seeded = try emulator.seedFile(name: "a.json", content: Data("one".utf8))
        let write = try LoopbackHTTP.request(
            port: emulator.port, method: "PUT",
            path: "/upload/drive/v2/files/\(seeded.id)?uploadType=media",
            headers: ["Authorization": "Bearer \(token)", "If-Match": "\"stale\""],
            body: Data("two".utf8))
        #expect(write.status == 200, "ignore: a stale If-Match is written over")
        let file = try #require(try emulator.files().first)
        #expect(file.revisions.map(\.md5Checksum) == [file.md5Checksum], "one unpinned kept")
        #expect(file.headRevisionId == file.revisions.last?.id)
        #expect(throws: LoopbackHTTPError.self) { try emulator.configure(revisionsKept: 0) }
    }

    @Test func environmentPointsEveryEndpointAtTheEmulator() throws {
        let emulator = try Emulator(clientID: "id-1", clientSecret: "secret-1")
        defer { emulator.stop() }
        let home = URL(fileURLWithPath: "/tmp/config-home")
        let environment = emulator.environment(
            for: home, browserMode: "tamper-state", browserLog: home.appendingPathComponent("b.log")
        )
        #expect(environment["XDG_CONFIG_HOME"] == "/tmp/config-home")
        #expect(environment["CLOUDBACKUP_CLIENT_ID"] == "id-1")
        #expect(environment["CLOUDBACKUP_CLIENT_SECRET"] == "secret-1")
        #expect(environment["CLOUDBACKUP_TOKEN_URL"] == emulator.baseURL + "/token")
        #expect(environment["FAKE_BROWSER_MODE"] == "tamper-state")
        #expect(environment["FAKE_BROWSER_LOG"] == "/tmp/config-home/b.log")
        let browser = try #require(environment["BROWSER"])
        #expect(FileManager.default.isExecutableFile(atPath: browser))
        #expect(try emulator.secrets().contains("secret-1"))
    }

    @Test func issuedTokensOpenDriveAndTheLeakScanFindsThem() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let tokens = try emulator.issueTokens()
        let refreshToken = try #require(tokens.refreshToken)
        let listing = try LoopbackHTTP.request(
            port: emulator.port, method: "GET", path: "/drive/v3/files?spaces=appDataFolder",
            headers: ["Authorization": "Bearer \(tokens.accessToken)"])
        #expect(listing.status == 200)

        let output = ["all fine", "token=\(refreshToken)"]
        let leaked = try emulator.leakedSecrets(in: output)
        #expect(leaked.map(emulatorSecretKind) == ["refresh token"])
        #expect(try emulator.leakedSecrets(in: ["all fine"]).isEmpty)
    }

    @Test func browserCommandRunsTheStandInBrowser() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("browser.log")
        var environment = emulator.environment(for: folder, browserMode: "ignore", browserLog: log)
        environment["FAKE_BROWSER_FOREGROUND"] = "1"
        let result = try run(
            URL(fileURLWithPath: emulator.browserCommand), [emulator.baseURL + "/o/oauth2/v2/auth"],
            environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOf: log, encoding: .utf8).contains("\"ignored\""))
    }

    @Test func stopEndsTheProcessAndFreesThePort() throws {
        let emulator = try Emulator()
        let port = emulator.port
        emulator.stop()
        #expect(!emulator.isRunning)
        #expect(throws: LoopbackHTTPError.self) {
            try LoopbackHTTP.request(port: port, method: "GET", path: "/__emulator/log")
        }
    }
}
