import BackupKit

/// `cloudbackup migrate FILE -o OUT`: any supported version in, canonical schema 4 out, or
/// schema 3 (`--schema 3`) for an app that cannot read 4 yet.
struct MigrateCommand: QuietCommand {
    static let name = "migrate"
    static let summary = "rewrite a backup of any schema version as schema 4 (or 3)"
    static let operands = ["FILE"]
    static var options: [OptionGroup] {
        OptionSpec.output.described("where to write (required)")
        OptionSpec.schema
        OptionSpec.pretty
        OptionSpec.json.described(
            #"say what was written as one JSON object (on stderr when OUT is -): "file", "output", "fromSchema", "toSchema", "droppedKeptDayLogs" and the "notes" --verbose gives"#
        )
        OptionGroup.verbosity(
            quiet: "say nothing on success, as without --verbose",
            verbose: "say what was written (silent on success otherwise)")
        OptionSpec.maxBytes
    }
    static let about = """
        Reads a backup FILE of any schema version, checks it, and writes it to OUT as
        schema 4 with sorted keys. The write is atomic: OUT is either left as it was or
        replaced whole, never half-written, so OUT may be FILE itself. An invalid FILE
        writes nothing. A FILE of - is standard input; an OUT of - is standard output,
        written as it goes (not atomically) and holding only the document: --verbose
        then speaks on stderr. A file called - is ./-. An OUT named *.gz is written as
        gzip (FILE may be gzip whatever its name). Any other FILE must be a regular file:
        a pipe such as <(zcat f.gz) is refused (exit 3); give - and pipe it in.
        """
    static let exits =
        Exit.always + [
            Exit(.invalidFile, "nothing written"),
            Exit(.refused, "FILE was written by a newer version"),
        ]

    let file: String
    let output: String
    let schema: BackupWriter.WrittenSchema
    let pretty: Bool
    let json: Bool
    let quiet: Bool
    let verbose: Bool
    let options: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        pretty = arguments.flag(.pretty)
        json = arguments.flag(.json)
        (quiet, verbose) = (arguments.flag(.quiet), arguments.flag(.verbose))
        schema =
            try arguments.option(
                .schema, expecting: "3 or 4, the versions cloudbackup writes",
                { Int($0).flatMap(BackupWriter.WrittenSchema.init(rawValue:)) }) ?? .current
        var options = try BackupFile.readOptions(&arguments)
        // The notes look into every day log; only --verbose and --json show them.
        options.collectsNotes = verbose || json
        self.options = options
        guard let output = try arguments.option(.output) else {
            throw .usage("missing -o OUT", Self.usage)
        }
        self.output = output
        file = try arguments.positionals(exactly: ["FILE"])[0]
    }

    func run(in context: Context) throws {
        let result = try BackupFile.load(file, options: options, in: context)
        defer { context.leaveForExit(result) }
        var document = result.document
        var dropped = 0
        if schema == .version3 {
            (document, dropped) = document.droppingKeptDayLogs()
        }
        try BackupFile.save(document, to: output, pretty: pretty, schema: schema, in: context)
        let (input, written) = (BackupFile.shown(file), BackupFile.shown(output: output))
        // Stdout holds the document when OUT is `-`: what is said of it goes to stderr.
        let say = output == BackupFile.standardStream ? context.printError : context.print
        if json {
            // Quiet says nothing, not even the object.
            guard !quiet else { return }
            return say(
                JSONLine.encode(
                    Summary(
                        file: input, output: written, fromSchema: result.sourceVersion,
                        toSchema: schema.rawValue, droppedKeptDayLogs: dropped,
                        notes: result.notes.map {
                            Note(pointer: $0.pointer, rule: $0.rule.rawValue, message: $0.message)
                        }))
            )
        }
        // Not silent: day logs that were in FILE are not in OUT.
        if dropped > 0 {
            context.printError(
                "cloudbackup: note: \(written) (schema 3) leaves out the \(dropped) day log(s) "
                    + "kept under a tombstone in \(input): schema 3 cannot hold them; an app that "
                    + "reads schema 4 keeps them")
        }
        guard verbose else { return }
        say(
            "\(input.onOneLine) (schema \(result.sourceVersion)) → \(written.onOneLine) (schema \(schema.rawValue))"
        )
        // A note points into the migrated document, which is OUT.
        for note in result.notes { say("\(written.onOneLine): \(note)") }
    }

    /// `--json`: what was written, from which version to which, and what was left out.
    private struct Summary: Encodable {
        var file: String
        var output: String
        var fromSchema: Int
        var toSchema: Int
        var droppedKeptDayLogs: Int
        var notes: [Note]
    }

    private struct Note: Encodable {
        var pointer: String
        /// The section of FORMAT.md that says why the note is not an error.
        var rule: String
        var message: String
    }
}

/// The options only `migrate` takes.
extension OptionSpec {
    fileprivate static let schema = OptionSpec(
        name: "--schema", value: "3|4",
        help:
            "write schema 3, for an app that cannot read schema 4 yet: day logs kept under a tombstone (schema 3 cannot hold them) are left out, and a note on stderr says how many"
    )
    fileprivate static let pretty = OptionSpec(
        name: "--pretty", help: "indent the output for people (the default is compact)")
}
