import BackupKit

/// `cloudbackup validate FILE…`: every problem of every file, one line each; silent when
/// all are valid unless `--verbose`.
struct ValidateCommand: Command {
    static let name = "validate"
    static let summary = "check backup files against every rule of the format"
    static let usage = "usage: cloudbackup validate FILE... [--verbose] [--max-bytes N]"
    static let help = """
        \(usage)

        Checks each backup FILE (any schema version) against every rule of the
        document format and prints every problem on stderr as FILE: /pointer: message,
        where /pointer is the JSON Pointer of the broken value. Prints nothing when
        all files are valid. A FILE of - is standard input, named <stdin> (a file
        called - is ./-); one FILE at most can be -.

        options:
          --verbose      also say which files are valid, with their schema version, and
                         note day logs that do not fit their challenge (kept, but not
                         counted for streaks)
        \(BackupFile.maxBytesHelp(column: 17))

        exit status: 0 all valid, 3 a file is invalid or unreadable, 7 a file was
        written by a newer version; with several files, the highest of their codes.
        """

    let files: [String]
    let verbose: Bool
    let options: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        verbose = arguments.flag("--verbose")
        var options = try BackupFile.readOptions(&arguments)
        // The notes look into every day log; only --verbose shows them.
        options.collectsNotes = verbose
        self.options = options
        files = try arguments.positionals()
        guard !files.isEmpty else { throw .usage("missing <FILE>", Self.usage) }
        try BackupFile.requireOneStandardInput(files, usage: Self.usage)
    }

    func run(in context: Context) throws {
        // Every file is checked; the failures are thrown together at the end, so the
        // boundary prints them all and exits with the highest code.
        var failures: [String] = []
        var worst: Failure?
        // The latest file's document, freed when the next one is read; the last is left for
        // the process's end.
        var latest: ReadResult?
        defer { if let latest { context.leaveForExit(latest) } }
        for file in files {
            let name = BackupFile.shown(file).onOneLine
            do {
                latest = nil
                let result = try BackupFile.load(file, options: options, in: context)
                latest = result
                guard verbose else { continue }
                let migrated =
                    result.sourceVersion == BackupDocument.currentSchemaVersion
                    ? "" : ", migrates to schema \(BackupDocument.currentSchemaVersion)"
                context.print(
                    "\(name): valid (schema \(result.sourceVersion)\(migrated))")
                // A note points into the current-schema document. Versions 3 and 4 share their
                // pointers (3→4 changes only the number); an older file's notes point into the
                // migrated document, which has no file of its own to name.
                let place =
                    result.sourceVersion >= 3
                    ? name : "\(name) (as schema \(BackupDocument.currentSchemaVersion))"
                for note in result.notes { context.print("\(place): \(note)") }
            } catch {
                failures += error.lines
                let code = error.exitCode.rawValue
                if code > (worst?.exitCode.rawValue ?? 0) { worst = error.failure }
            }
        }
        if let worst { throw CLIError(failures, worst) }
    }
}
