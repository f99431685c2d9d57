import Testing

@testable import CloudBackupCLI

@Suite struct ArgumentsTests {
    @Test func optionsInBothSpellingsAndFlagsAreTakenOut() throws {
        var arguments = Arguments(
            ["a", "--now", "2026-01-01T00:00:00Z", "--json", "--window=30", "b"], usage: "u")
        #expect(try arguments.option(.now) == "2026-01-01T00:00:00Z")
        #expect(try arguments.option(.window) == "30")
        let first = arguments.flag(.json)
        let second = arguments.flag(.json)
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

    @Test func shortNamesStandForTheLongOnesACommandDeclares() throws {
        var arguments = Arguments(
            ["-q", "a", "-v", "-n", "--", "-q"], usage: "u",
            groups: [OptionGroup(.quiet), OptionGroup(.verbose), OptionGroup(.dryRun)])
        let quiet = arguments.flag(.quiet)
        let verbose = arguments.flag(.verbose)
        let dryRun = arguments.flag(.dryRun)
        #expect(quiet && verbose && dryRun)
        #expect(try arguments.positionals() == ["a", "-q"])
    }

    @Test func aShortFlagIsUnknownWhereItsLongOneIs() throws {
        let error = parseError(["-n"]) {
            _ = $0.flag(.verbose)
            _ = try $0.positionals()
        }
        #expect(error?.lines == ["unknown option '-n'"])
    }

    @Test(arguments: [
        (["--dryrun"], "unknown option '--dryrun'; did you mean '--dry-run'?"),
        (["--max-byte=9"], "unknown option '--max-byte=9'; did you mean '--max-bytes'?"),
        (["--jsn"], "unknown option '--jsn'; did you mean '--json'?"),
        (["--js"], "unknown option '--js'"),
        (["--frobnicate"], "unknown option '--frobnicate'"),
    ])
    func anUnknownOptionNearAKnownOneNamesIt(items: [String], message: String) throws {
        let error = parseError(items) {
            _ = $0.flag(.dryRun)
            _ = $0.flag(.json)
            _ = try $0.option(.maxBytes)
            _ = try $0.positionals()
        }
        #expect(error?.lines == [message])
    }

    /// What `check()` finds from the declarations alone, before a command reads anything:
    /// the typo first, then a conflict, then what is missing.
    @Test(
        arguments: [
            (["--file", "s", "-q", "--verbose"], "--quiet and --verbose exclude each other"),
            (["--file", "s", "--merge"], nil),
            (["--file", "s", "--merge", "--replace"], "say --merge or --replace (exactly one)"),
            (["--file", "s"], "say --merge or --replace (exactly one)"),
            (["--merge"], "--file STATE is required"),
            (["--merge", "--fiel", "s"], "unknown option '--fiel'; did you mean '--file'?"),
            (["--file=s", "--replace", "--", "--merge"], nil),
            (
                ["--file", "s", "--merge", "--password-file", "f", "--password-command=c"],
                "--password-file and --password-command exclude each other"
            ),
        ] as [([String], String?)])
    func theDeclarationsAreCheckedFirst(items: [String], message: String?) throws {
        let groups: [OptionGroup] = [
            OptionGroup(OptionSpec.file.required), .verbosity(), .keys,
            .oneOf(
                OptionSpec(name: "--merge", help: "m"), OptionSpec(name: "--replace", help: "r"),
                required: true),
        ]
        let arguments = Arguments(items, usage: "u", groups: groups)
        do {
            try arguments.check()
            #expect(message == nil)
        } catch {
            #expect(error.lines == [message ?? "no error"])
        }
    }

    @Test func doubleDashMakesTheRestPositional() throws {
        var arguments = Arguments(["--", "--json", "-o"], usage: "u")
        let json = arguments.flag(.json)
        #expect(!json)
        #expect(try arguments.positionals() == ["--json", "-o"])
    }

    @Test func anOptionWithoutItsValueIsAUsageError() throws {
        let error = parseError(["--now"]) { _ = try $0.option(.now) }
        #expect(error?.lines == ["--now needs a value"])
    }

    @Test func convertedOptionsRejectBadValues() throws {
        let error = parseError(["--window", "ninety"]) {
            _ = try $0.option(.window, expecting: "a whole number of days") { Int($0) }
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
