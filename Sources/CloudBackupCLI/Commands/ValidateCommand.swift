import BackupKit
import BackupSync
import Gzip

/// `cloudbackup validate FILE…`: every problem of every file, one line each; silent when
/// all are valid unless `--verbose`.
struct ValidateCommand: QuietCommand {
    static let name = "validate"
    static let summary = "check backup files against every rule of the format"
    static let usage =
        "usage: cloudbackup validate FILE... [--json] [--quiet | --verbose] [--max-bytes N]"
    static let help = """
        \(usage)

        Checks each backup FILE (any schema version) against every rule of the
        document format and prints every problem on stderr as FILE: /pointer: message,
        where /pointer is the JSON Pointer of the broken value. Prints nothing when
        all files are valid. A FILE of - is standard input, named <stdin> (a file
        called - is ./-); one FILE at most can be -.

        options:
          --json         print one JSON object on stdout instead: {"files": [...]}, each
                         file's name, "valid", and its "schemaVersion" or its "exitCode"
                         and "problems" (each a "pointer", the "rule" it breaks, a
                         section of the format's reference such as "3.6", and a
                         "message"; a syntax error a "line" and "column")
          --quiet        print nothing but the problems, as without --verbose
          --verbose      also say which files are valid, with their schema version, and
                         note day logs that do not fit their challenge (kept, but not
                         counted for streaks)
        \(BackupFile.maxBytesHelp(column: 17))

        exit status: 0 all valid, 3 a file is invalid or unreadable, 7 a file was
        written by a newer version; with several files, the highest of their codes.
        """

    let files: [String]
    let json: Bool
    let quiet: Bool
    let verbose: Bool
    let options: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        json = arguments.flag("--json")
        (quiet, verbose) = try arguments.quietOrVerbose()
        var options = try BackupFile.readOptions(&arguments)
        // The notes look into every day log; only --verbose shows them.
        options.collectsNotes = verbose
        self.options = options
        files = try arguments.positionals()
        guard !files.isEmpty else { throw .usage("missing <FILE>", Self.usage) }
        try BackupFile.requireOneStandardInput(files, usage: Self.usage)
    }

    func run(in context: Context) throws {
        if json { return try report(in: context) }
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

    /// `--json`: every file's verdict in one object on stdout, nothing on stderr; the exit
    /// status is the same as without it.
    private func report(in context: Context) throws {
        var verdicts: [Verdict] = []
        var worst: Failure?
        for file in files {
            let name = BackupFile.shown(file)
            var verdict = Verdict(file: name, valid: false)
            let failure: CLIError
            do {
                let bytes = try BackupFile.loadBytes(file, options: options, in: context)
                verdict.schemaVersion =
                    try BackupReader.read(plainOrGzip: bytes, options: options).sourceVersion
                verdict.valid = true
                verdicts.append(verdict)
                continue
            } catch let error as BackupFileError {
                failure = BackupFile.describe(error, file: name)
                verdict.problems = Self.problems(error, file: name)
            } catch let error as GzipError {
                failure = BackupFile.describe(reading: error, file: name)
                verdict.problems = [Problem(message: error.description)]
            } catch {
                failure = CloudBackup.describe(error)
                verdict.problems = failure.lines.map { Problem(message: $0) }
            }
            verdict.exitCode = failure.exitCode.rawValue
            if failure.exitCode.rawValue > (worst?.exitCode.rawValue ?? 0) {
                worst = failure.failure
            }
            verdicts.append(verdict)
        }
        context.print(JSONLine.encode(["files": verdicts]))
        if let worst { throw CLIError([], worst) }
    }

    /// The problems of a file that is not a valid backup, each where it is.
    private static func problems(_ error: BackupFileError, file: String) -> [Problem] {
        switch error {
        case .invalid(let issues):
            issues.map { Problem(pointer: $0.pointer, rule: $0.rule.rawValue, message: $0.message) }
        case .syntax(let line, let column, let message):
            [Problem(line: line, column: column, message: message)]
        case .tooLarge, .notABackup, .newerSchema:
            BackupFile.describe(error, file: file).lines.map {
                Problem(message: String($0.dropFirst(file.count + 2)))
            }
        }
    }
}
