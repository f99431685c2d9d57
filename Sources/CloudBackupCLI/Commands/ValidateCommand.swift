import BackupKit
import BackupSync

/// `cloudbackup validate FILE…`: every problem of every file, one line each; silent when
/// all are valid unless `--verbose`.
struct ValidateCommand: QuietCommand {
    static let name = "validate"
    static let summary = "check backup files against every rule of the format"
    static let operands = ["FILE..."]
    static var options: [OptionGroup] {
        OptionSpec.json.described(
            #"print one JSON object on stdout instead: {"files": [...]}, each file's name, "valid", and its "schemaVersion" or its "exitCode" and "problems" (each a "pointer", the "rule" it breaks, a section of the format's reference such as "3.6", and a "message"; a syntax error a "line" and "column")"#
        )
        OptionGroup.verbosity(
            quiet: "print nothing but the problems, as without --verbose",
            verbose:
                "also say which files are valid, with their schema version, and note day logs that do not fit their challenge (kept, but not counted for streaks)"
        )
        OptionSpec.maxBytes
    }
    static let about = """
        Checks each backup FILE (any schema version) against every rule of the
        document format and prints every problem on stderr as FILE: /pointer: message,
        where /pointer is the JSON Pointer of the broken value. Prints nothing when
        all files are valid. A FILE of - is standard input, named <stdin> (a file
        called - is ./-); one FILE at most can be -. Any other FILE must be a regular
        file: a FIFO, socket or device (so a pipe such as <(zcat f.gz)) is refused at once;
        save it to a file, or give - and pipe it in.
        """
    static let exits =
        Exit.always + [
            Exit(.invalidFile),
            Exit(.refused, "a file was written by a newer version"),
        ]
    static let exitNote: String? = "With several files, the highest of their codes."

    let files: [String]
    let json: Bool
    let quiet: Bool
    let verbose: Bool
    let options: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        json = arguments.flag(.json)
        (quiet, verbose) = (arguments.flag(.quiet), arguments.flag(.verbose))
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
        // boundary prints them all (or `--json` shows them) and exits with the highest code.
        var failures: [String] = []
        var verdicts: [Verdict] = []
        var worst: Failure?
        // The latest file's document, freed when the next one is read; the last is left for
        // the process's end.
        var latest: ReadResult?
        defer { if let latest { context.leaveForExit(latest) } }
        for file in files {
            let name = BackupFile.shown(file)
            latest = nil
            do {
                let result = try BackupFile.read(file, options: options, in: context)
                latest = result
                verdicts.append(
                    Verdict(file: name, valid: true, schemaVersion: result.sourceVersion))
                if verbose { say(result, name: name.onOneLine, in: context) }
            } catch {
                let failure =
                    error as? CLIError
                    ?? BackupFile.describe(reading: error, file: name, limit: options.maxIssues)
                if failure.exitCode.rawValue > (worst?.exitCode.rawValue ?? 0) {
                    worst = failure.failure
                }
                failures += failure.lines
                verdicts.append(
                    Verdict(
                        file: name, valid: false, exitCode: failure.exitCode.rawValue,
                        problems: problems(error, shown: failure, file: name)))
            }
        }
        if json { context.print(JSONLine.encode(["files": verdicts])) }
        if let worst { throw CLIError.all(json ? [] : failures, worst: worst) }
    }

    /// `--verbose`'s lines for a valid file: its version, and its notes.
    private func say(_ result: ReadResult, name: String, in context: Context) {
        let migrated =
            result.sourceVersion == BackupDocument.currentSchemaVersion
            ? "" : ", migrates to schema \(BackupDocument.currentSchemaVersion)"
        context.print("\(name): valid (schema \(result.sourceVersion)\(migrated))")
        // A note points into the current-schema document. Versions 3 and 4 share their
        // pointers (3→4 changes only the number); an older file's notes point into the
        // migrated document, which has no file of its own to name.
        let place =
            result.sourceVersion >= 3
            ? name : "\(name) (as schema \(BackupDocument.currentSchemaVersion))"
        for note in result.notes { context.print("\(place): \(note)") }
    }

    /// One file's verdict in `--json`.
    private struct Verdict: Encodable {
        var file: String
        var valid: Bool
        var schemaVersion: Int?
        var exitCode: Int32?
        var problems: [Problem]?
    }

    private struct Problem: Encodable {
        var pointer: String?
        /// The section of FORMAT.md whose rule is broken.
        var rule: String?
        var line: Int?
        var column: Int?
        var message: String
    }

    /// The problems of a file that is not a valid backup, each where it is; where the reader
    /// gives no place, the lines the text output shows, without the file's name.
    private func problems(_ error: any Error, shown: CLIError, file: String) -> [Problem] {
        switch error {
        case BackupFileError.invalid(let issues):
            return issues.prefix(options.maxIssues).map {
                Problem(pointer: $0.pointer, rule: $0.rule.rawValue, message: $0.message)
            }
        case BackupFileError.syntax(let line, let column, let message):
            return [Problem(line: line, column: column, message: message)]
        default:
            let prefix = file + ": "
            return shown.lines.map {
                Problem(message: $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0)
            }
        }
    }
}
