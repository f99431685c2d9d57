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
                    .invalidBackup)
            }
            throw CLIError(error.description, .unreadableFile)
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
