import TestSupport
import Testing

/// The top level of the binary: version, help, unknown commands.
@Suite struct BoundaryTests {
    @Test func versionPrintsOneLine() throws {
        let result = try cloudbackup(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("cloudbackup "))
        #expect(result.stdout.split(separator: "\n").count == 1)
    }

    @Test func noArgumentsIsAUsageError() throws {
        let result = try cloudbackup([])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("usage: cloudbackup <command>"))
    }

    @Test func unknownCommandIsAUsageErrorNamingIt() throws {
        let result = try cloudbackup(["frobnicate"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("cloudbackup: unknown command 'frobnicate'\n"))
    }

    @Test func helpListsTheExitCodes() throws {
        let result = try cloudbackup(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("6 another run holds the lock"))
    }
}
