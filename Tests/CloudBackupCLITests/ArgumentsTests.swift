import Testing

@testable import CloudBackupCLI

@Suite struct ArgumentsTests {
    @Test func optionsInBothSpellingsAndFlagsAreTakenOut() throws {
        var arguments = Arguments(
            ["a", "--now", "2026-01-01T00:00:00Z", "--json", "--window=30", "b"], usage: "u")
        #expect(try arguments.option("--now") == "2026-01-01T00:00:00Z")
        #expect(try arguments.option("--window") == "30")
        let first = arguments.flag("--json")
        let second = arguments.flag("--json")
        #expect(first && !second)
        #expect(try arguments.positionals() == ["a", "b"])
    }

    @Test func anUnknownOptionIsAUsageError() throws {
        let error = parseError(["a", "--frobnicate"], usage: "usage: x") {
            _ = try $0.positionals()
        }
        #expect(error?.exitCode == .usage)
        #expect(error?.lines == ["unknown option '--frobnicate'"])
        #expect(error?.usage == "usage: x")
    }

    @Test func doubleDashMakesTheRestPositional() throws {
        var arguments = Arguments(["--", "--json", "-o"], usage: "u")
        let json = arguments.flag("--json")
        #expect(!json)
        #expect(try arguments.positionals() == ["--json", "-o"])
    }

    @Test func anOptionWithoutItsValueIsAUsageError() throws {
        let error = parseError(["--now"]) { _ = try $0.option("--now") }
        #expect(error?.lines == ["--now needs a value"])
    }

    @Test func convertedOptionsRejectBadValues() throws {
        let error = parseError(["--window", "ninety"]) {
            _ = try $0.option("--window", expecting: "a whole number of days") { Int($0) }
        }
        #expect(error?.lines == ["--window expects a whole number of days, not 'ninety'"])
    }

    @Test(arguments: [
        (["x"], "missing <FILE> <OUT>"),
        (["x", "y", "z"], "unexpected argument 'z'"),
    ])
    func positionalCountIsChecked(items: [String], message: String) throws {
        let error = parseError(items) { _ = try $0.positionals(exactly: ["FILE", "OUT"]) }
        #expect(error?.lines == [message])
    }
}

/// The usage error `parse` throws for `items`, or nil (recorded as a failure) if none.
private func parseError(
    _ items: [String], usage: String = "u", _ parse: (inout Arguments) throws -> Void
) -> CLIError? {
    var arguments = Arguments(items, usage: usage)
    do {
        try parse(&arguments)
    } catch let error as CLIError {
        return error
    } catch {
        Issue.record("expected a CLIError, got \(error)")
        return nil
    }
    Issue.record("expected a usage error for \(items)")
    return nil
}
