import BackupKit
import LocalFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reading and writing backup files for commands, with errors that name the file.
enum BackupFile {
    /// Reads, validates and migrates `path`; every problem becomes one `FILE: …` line.
    static func load(_ path: String, options: ReadOptions = ReadOptions()) throws(CLIError)
        -> ReadResult
    {
        try decode(try loadBytes(path, options: options), file: path, options: options)
    }

    /// `load`, also handing back the file's bytes (restore keeps them as `.bak`).
    static func loadWithBytes(
        _ path: String, options: ReadOptions = ReadOptions()
    ) throws(CLIError) -> (result: ReadResult, bytes: [UInt8]) {
        let bytes = try loadBytes(path, options: options)
        return (try decode(bytes, file: path, options: options), bytes)
    }

    /// The file's bytes, refusing one over `options.maxBytes` before reading it.
    static func loadBytes(_ path: String, options: ReadOptions = ReadOptions()) throws(CLIError)
        -> [UInt8]
    {
        do {
            return try LocalFile.read(path, maxBytes: options.maxBytes)
        } catch {
            guard error.errno != EFBIG else {
                throw CLIError(
                    "\(path): the file is over the \(options.maxBytes)-byte limit; raise it with --max-bytes if the file is genuine",
                    exitCode: .invalidFile)
            }
            throw CLIError(error.description, exitCode: .invalidFile)
        }
    }

    /// Reads, validates and migrates the bytes of `file`.
    static func decode(_ bytes: [UInt8], file: String, options: ReadOptions = ReadOptions())
        throws(CLIError) -> ReadResult
    {
        // One problem more than is shown, so a list that was cut can say so and one of
        // exactly `maxIssues` problems does not.
        var reading = options
        reading.maxIssues = options.maxIssues + 1
        do {
            return try BackupReader.read(bytes, options: reading)
        } catch {
            throw describe(error, file: file, limit: options.maxIssues)
        }
    }

    /// `limit`: the most problems shown; a list longer than that (the reader was asked for
    /// one more) is cut there, and says so.
    static func describe(
        _ error: BackupFileError, file: String, limit: Int = ReadOptions().maxIssues
    ) -> CLIError {
        switch error {
        case .tooLarge(let size, let limit):
            return CLIError(
                "\(file): \(size) bytes is over the \(limit)-byte limit; raise it with --max-bytes if the file is genuine",
                exitCode: .invalidFile)
        case .syntax(let line, let column, let message):
            return CLIError("\(file):\(line):\(column): \(message)", exitCode: .invalidFile)
        case .notABackup(let message):
            return CLIError("\(file): \(message)", exitCode: .invalidFile)
        case .newerSchema(let version):
            return CLIError(
                "\(file): written by a newer version (schema \(ReadInteger.shown(version))); update cloudbackup",
                exitCode: .refused)
        case .invalid(let issues):
            var lines = issues.prefix(limit).map { "\(file): \($0)" }
            if issues.count > limit {
                lines.append(
                    "\(file): stopped after the first \(limit) problems; fix these and run again for the rest"
                )
            }
            return CLIError(lines, exitCode: .invalidFile)
        }
    }

    /// The `--max-bytes` line of a command's help, its text starting at `column`.
    static func maxBytesHelp(column: Int) -> String {
        HelpLine.option(
            "--max-bytes N", column: column,
            "refuse files larger than N bytes (default \(ReadOptions().maxBytes), 256 MiB)")
    }

    /// The read options a command takes: `--max-bytes N`.
    static func readOptions(_ arguments: inout Arguments) throws(CLIError) -> ReadOptions {
        var options = ReadOptions()
        if let maxBytes = try arguments.option(
            "--max-bytes", expecting: "a positive number of bytes",
            { Int($0).flatMap { $0 > 0 ? $0 : nil } })
        {
            options.maxBytes = maxBytes
        }
        return options
    }

    /// A write that failed: the OS's words, what was left as it was, and what to do about it
    /// when errno says.
    static func failedWrite(_ error: LocalFileError, leaving what: String) -> CLIError {
        CLIError(
            "\(error.description); \(what)" + (error.writeFix.map { "; \($0)" } ?? ""),
            exitCode: .failure)
    }

    /// Writes the canonical bytes of `document` to `path` atomically, streamed: the bytes
    /// go to the file a few MB at a time and are never held whole.
    static func save(
        _ document: BackupDocument, to path: String, pretty: Bool = false,
        schema: BackupWriter.WrittenSchema = .current
    ) throws(CLIError) {
        do {
            try LocalFile.writeAtomically(to: path) { write throws(LocalFileError) in
                try BackupWriter.write(document, pretty: pretty, schema: schema, to: write)
            }
        } catch {
            throw failedWrite(
                error,
                leaving: LocalFile.exists(path) ? "\(path) is unchanged" : "nothing was written")
        }
    }
}
