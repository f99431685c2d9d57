import BackupKit

/// `cloudbackup migrate FILE -o OUT`: any supported version in, canonical schema 3 out.
struct MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "rewrite a backup of any schema version as schema 3"
    static let usage =
        "usage: cloudbackup migrate FILE -o OUT [--pretty] [--verbose] [--max-bytes N]"
    static let help = """
        \(usage)

        Reads a backup FILE of any schema version, checks it, and writes it to OUT as
        schema 3 with sorted keys. The write is atomic: OUT is either left as it was or
        replaced whole, never half-written, so OUT may be FILE itself. An invalid FILE
        writes nothing.

        options:
          -o, --output OUT  where to write (required)
          --pretty          indent the output for people (the default is compact)
          --verbose         say what was written (silent on success otherwise)
        \(BackupFile.maxBytesHelp(column: 20))

        exit status: 0 written, 3 FILE is invalid or unreadable, 7 FILE was written by
        a newer version, 1 OUT could not be written.
        """

    let file: String
    let output: String
    let pretty: Bool
    let verbose: Bool
    let options: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        pretty = arguments.flag("--pretty")
        verbose = arguments.flag("--verbose")
        var options = try BackupFile.readOptions(&arguments)
        // The notes look into every day log; only --verbose shows them.
        options.collectsNotes = verbose
        self.options = options
        let short = try arguments.option("-o")
        let long = try arguments.option("--output")
        guard let output = long ?? short else { throw .usage("missing -o OUT", Self.usage) }
        self.output = output
        file = try arguments.positionals(exactly: ["FILE"])[0]
    }

    func run(in context: Context) throws {
        let result = try BackupFile.load(file, options: options)
        try BackupFile.save(result.document, to: output, pretty: pretty)
        guard verbose else { return }
        context.print(
            "\(file.onOneLine) (schema \(result.sourceVersion)) → \(output.onOneLine) (schema \(BackupDocument.currentSchemaVersion))"
        )
        // A note points into the schema-3 document, which is OUT.
        for note in result.notes { context.print("\(output.onOneLine): \(note)") }
    }
}
