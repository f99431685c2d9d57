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

    @Test(arguments: [
        ("bakup", "cloudbackup: unknown command 'bakup'; did you mean 'backup'?\n"),
        ("restor", "cloudbackup: unknown command 'restor'; did you mean 'restore'?\n"),
        ("lgo", "cloudbackup: unknown command 'lgo'\n"),
    ])
    func anUnknownCommandNearARealOneNamesIt(typed: String, firstLine: String) throws {
        let result = try cloudbackup([typed])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix(firstLine))
    }

    @Test func helpWithACommandPrintsThatCommandsHelp() throws {
        let viaHelp = try cloudbackup(["help", "validate"])
        let viaFlag = try cloudbackup(["validate", "--help"])
        #expect(viaHelp.status == 0)
        #expect(viaHelp.stdout.hasPrefix("usage: cloudbackup validate "))
        #expect(viaHelp.stdout == viaFlag.stdout)
    }

    @Test func helpWithAnUnknownCommandIsAUsageError() throws {
        let result = try cloudbackup(["help", "bakup"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr.hasPrefix(
                "cloudbackup: unknown command 'bakup'; did you mean 'backup'?\n"))
    }

    @Test func helpListsTheExitCodes() throws {
        let result = try cloudbackup(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("6 another run holds the lock"))
    }

    @Test func helpNamesTheShortFlags() throws {
        let result = try cloudbackup(["help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("-q, -v and -n stand for --quiet, --verbose and --dry-run"))
    }
}
