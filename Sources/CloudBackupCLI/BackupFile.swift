import BackupKit
import BackupSync
import Gzip
import LocalFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reading and writing backup files for commands, with errors that name the file.
enum BackupFile {
    /// The FILE or OUT that stands for standard input or output, where a command takes it
    /// (it passes its context); a file of that name is `./-`.
    static let standardStream = "-"
    /// How messages name standard input and output.
    static let stdinName = "<stdin>"
    static let stdoutName = "<stdout>"

    /// How messages name an input of a command that takes `-`.
    static func shown(_ path: String) -> String { path == standardStream ? stdinName : path }
    /// How messages name an output of a command that takes `-`.
    static func shown(output path: String) -> String {
        path == standardStream ? stdoutName : path
    }

    /// Refuses a command line that gives `-` as more than one of its inputs: there is only
    /// one standard input.
    static func requireOneStandardInput(_ paths: [String?], usage: String) throws(CLIError) {
        guard paths.count(where: { $0 == standardStream }) <= 1 else {
            throw .usage("only one FILE can be - (standard input)", usage)
        }
    }

    /// Reads, validates and migrates `path`; every problem becomes one `FILE: …` line.
    /// With a context, `-` is its standard input.
    static func load(
        _ path: String, options: ReadOptions = ReadOptions(), in context: Context? = nil
    ) throws(CLIError) -> ReadResult {
        let bytes = try loadBytes(path, options: options, in: context)
        return try decode(
            consuming: bytes, file: context == nil ? path : shown(path), options: options)
    }

    /// `load` for a caller that shows the problems itself (`validate --json`): the file's
    /// content problems come out as the reader threw them (`BackupFileError`, `GzipError`),
    /// with one issue more than `options.maxIssues` as `decode` reads them; a file that cannot
    /// be read at all is a `CLIError`.
    static func read(_ path: String, options: ReadOptions, in context: Context) throws
        -> ReadResult
    {
        let bytes = try loadBytes(path, options: options, in: context)
        return try BackupReader.read(consumingPlainOrGzip: bytes, options: reading(options))
    }

    /// `load`, also handing back the file's bytes (restore keeps them as `.bak`).
    static func loadWithBytes(
        _ path: String, options: ReadOptions = ReadOptions()
    ) throws(CLIError) -> (result: ReadResult, bytes: [UInt8]) {
        let bytes = try loadBytes(path, options: options)
        return (try decode(bytes, file: path, options: options), bytes)
    }

    /// The file's bytes, refusing one over `options.maxBytes` before reading it. With a
    /// context, `-` is its standard input, refused when it is a terminal (nobody types a
    /// backup) and read no further than one byte over the limit.
    static func loadBytes(
        _ path: String, options: ReadOptions = ReadOptions(), in context: Context? = nil
    ) throws(CLIError) -> [UInt8] {
        do throws(LocalFileError) {
            guard path == standardStream, let context else {
                return try LocalFile.read(path, maxBytes: options.maxBytes)
            }
            guard !context.stdinIsTerminal else {
                throw LocalFileError(
                    path: stdinName, operation: .read, errno: ENOTTY,
                    reason: "it is a terminal; pipe a file into it (… - < FILE) "
                        + "or give the path of a file")
            }
            return try context.readStandardInput(maxBytes: options.maxBytes)
        } catch {
            guard error.errno != EFBIG else {
                throw .overLimit(error.path, size: nil, limit: options.maxBytes)
            }
            throw CloudBackup.describe(error)
        }
    }

    /// Reads, validates and migrates the bytes of `file`, plain or gzip.
    static func decode(_ bytes: [UInt8], file: String, options: ReadOptions = ReadOptions())
        throws(CLIError) -> ReadResult
    {
        do {
            return try BackupReader.read(plainOrGzip: bytes, options: reading(options))
        } catch {
            throw describe(reading: error, file: file, limit: options.maxIssues)
        }
    }

    /// `decode` for a caller that has no more use for the bytes: their memory goes back to
    /// the system as the document takes shape (`BackupReader.read(consuming:)`).
    static func decode(consuming bytes: consuming [UInt8], file: String, options: ReadOptions)
        throws(CLIError) -> ReadResult
    {
        do {
            return try BackupReader.read(consumingPlainOrGzip: bytes, options: reading(options))
        } catch {
            throw describe(reading: error, file: file, limit: options.maxIssues)
        }
    }

    /// One problem more than is shown, so a list that was cut can say so and one of exactly
    /// `maxIssues` problems does not.
    private static func reading(_ options: ReadOptions) -> ReadOptions {
        var reading = options
        reading.maxIssues = options.maxIssues + 1
        return reading
    }

    /// The read options a command takes: `--max-bytes N`.
    static func readOptions(_ arguments: inout Arguments) throws(CLIError) -> ReadOptions {
        var options = ReadOptions()
        if let maxBytes = try arguments.option(
            .maxBytes, expecting: "a positive number of bytes",
            { Int($0).flatMap { $0 > 0 ? $0 : nil } })
        {
            options.maxBytes = maxBytes
        }
        return options
    }

    /// Whether a file written to `path` is gzip: its name ends in `.gz`, as `gzip` names its
    /// files. Reading needs no such rule, the content decides.
    static func isGzipName(_ path: String) -> Bool { path.hasSuffix(".gz") }

    /// Writes the canonical bytes of `document` to `path`: `-` is the context's standard
    /// output, which cannot be written atomically (a failed write there leaves what was
    /// written so far); any other path is written by `saveFile`.
    static func save(
        _ document: BackupDocument, to path: String, pretty: Bool = false,
        schema: BackupWriter.WrittenSchema = .current, in context: Context
    ) throws(CLIError) {
        guard path == standardStream else {
            return try saveFile(
                document, to: path, pretty: pretty, schema: schema, warn: context.printWarning)
        }
        do {
            try BackupWriter.write(
                document, pretty: pretty, schema: schema,
                to: {
                    chunk throws(LocalFileError) in
                    if let code = context.writeOut(bytes: chunk) {
                        throw LocalFileError(path: stdoutName, operation: .write, errno: code)
                    }
                })
        } catch {
            throw failedWrite(error, leaving: "the document written there is incomplete")
        }
    }

    /// Writes the canonical bytes of `document` to the file `path` atomically, streamed: the
    /// bytes go to the file a few MB at a time and are never held whole. A path ending in
    /// `.gz` gets them gzipped, whole (libdeflate compresses whole buffers), the same
    /// document always the same bytes. A folder that cannot be synced after the rename is a
    /// warning: the file is written, but a power cut may still lose it.
    static func saveFile(
        _ document: BackupDocument, to path: String, pretty: Bool = false,
        schema: BackupWriter.WrittenSchema = .current, warn: (String) -> Void
    ) throws(CLIError) {
        do {
            let unsynced =
                if isGzipName(path) {
                    try LocalFile.writeAtomically(
                        Gzip.compress(BackupWriter.write(document, pretty: pretty, schema: schema)),
                        to: path)
                } else {
                    try LocalFile.writeAtomically(to: path) { write throws(LocalFileError) in
                        try BackupWriter.write(document, pretty: pretty, schema: schema, to: write)
                    }
                }
            if let unsynced { warn(unsynced.warning) }
        } catch {
            throw failedWrite(
                error,
                leaving: LocalFile.exists(path) ? "\(path) is unchanged" : "nothing was written")
        }
    }
}
