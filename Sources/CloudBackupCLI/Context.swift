import BackupKit
import LocalFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a command may touch of the outside world, so tests can run commands in-process.
public final class Context: @unchecked Sendable {
    public let environment: [String: String]
    private let writeOut: (String) -> Void
    private let writeErr: (String) -> Void
    /// A document on stdout (`-o -`): the errno of a failed write, or nil.
    private let writeOutBytes: (UnsafeRawBufferPointer) -> Int32?
    /// All of stdin, at most the given number of bytes and one more (`FILE` given as `-`).
    private let readIn: (Int) throws(LocalFileError) -> [UInt8]
    /// Whether stderr is a terminal (progress lines and prompts only then).
    public let stderrIsTerminal: Bool
    public let stdinIsTerminal: Bool
    /// Takes what a command is done with as it ends (see `leaveForExit`).
    private let leave: (Any) -> Void

    public convenience init(
        environment: [String: String],
        stdout: @escaping (String) -> Void,
        stderr: @escaping (String) -> Void,
        stderrIsTerminal: Bool = false,
        stdinIsTerminal: Bool = false,
        stdin: [UInt8] = []
    ) {
        self.init(
            environment: environment, stdout: stdout, stderr: stderr,
            // A test's documents are small enough to come as one chunk, whole characters.
            stdoutBytes: {
                stdout(String(decoding: $0, as: UTF8.self))
                return nil
            },
            stdin: { maxBytes in Array(stdin.prefix(maxBytes + 1)) },
            stderrIsTerminal: stderrIsTerminal, stdinIsTerminal: stdinIsTerminal,
            leave: { _ in })
    }

    private init(
        environment: [String: String], stdout: @escaping (String) -> Void,
        stderr: @escaping (String) -> Void,
        stdoutBytes: @escaping (UnsafeRawBufferPointer) -> Int32?,
        stdin: @escaping (Int) throws(LocalFileError) -> [UInt8],
        stderrIsTerminal: Bool, stdinIsTerminal: Bool,
        leave: @escaping (Any) -> Void
    ) {
        self.environment = environment
        self.writeOut = stdout
        self.writeErr = stderr
        self.writeOutBytes = stdoutBytes
        self.readIn = stdin
        self.stderrIsTerminal = stderrIsTerminal
        self.stdinIsTerminal = stdinIsTerminal
        self.leave = leave
    }

    /// Hands over the documents a command holds as it ends, for the process's end to take
    /// back with all its memory at once instead of freeing them piece by piece: a million
    /// day logs are two million allocations, and freeing them was 11–13% of a whole
    /// `validate`'s instructions and 6–8% of `migrate`'s and `merge`'s (callgrind, 20,000 and
    /// 200,000 day logs). Only the real process keeps them; a test's context lets them go.
    func leaveForExit(_ value: Any) { leave(value) }

    /// The real process: its environment and its standard streams.
    public static func process() -> Context {
        var environment: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return Context(
            environment: environment,
            // Unbuffered, so stdout and stderr lines keep their order and nothing is lost at
            // `exit`; a closed stream (EPIPE) has nobody left to tell.
            stdout: { LocalFile.writeAll($0.utf8, to: 1) },
            stderr: { LocalFile.writeAll($0.utf8, to: 2) },
            stdoutBytes: { LocalFile.writeAll($0, to: 1) },
            stdin: { maxBytes throws(LocalFileError) in
                try LocalFile.readStandardInput(maxBytes: maxBytes, naming: BackupFile.stdinName)
            },
            stderrIsTerminal: isatty(2) == 1,
            stdinIsTerminal: isatty(0) == 1,
            // Never released: `exit` follows the command.
            leave: { _ = Unmanaged.passRetained(Leftover($0)) })
    }

    /// This context less its lines on stdout, for `--quiet`: the exit status tells the
    /// outcome, and failures, warnings, a `[y/N]` question and a document written to stdout
    /// (`-o -`) still go out.
    func quieted() -> Context {
        Context(
            environment: environment, stdout: { _ in }, stderr: writeErr,
            stdoutBytes: writeOutBytes, stdin: readIn, stderrIsTerminal: stderrIsTerminal,
            stdinIsTerminal: stdinIsTerminal, leave: leave)
    }

    /// Prints a line (or lines) on stdout.
    public func print(_ line: String) { writeOut(line + "\n") }
    /// Prints a line on stderr: warnings and failures.
    public func printError(_ line: String) { writeErr(line + "\n") }
    /// Prints a warning on one line of stderr, whatever file names or ids it quotes hold.
    public func printWarning(_ line: String) {
        printError("cloudbackup: warning: " + ValidationIssue.escapingControls(line))
    }
    /// Raw stderr, for progress lines that rewrite themselves with `\r`.
    public func writeError(_ text: String) { writeErr(text) }
    /// Raw stdout, for a document written to `-o -`; the errno of a failed write, or nil.
    func writeOut(bytes: UnsafeRawBufferPointer) -> Int32? { writeOutBytes(bytes) }
    /// All of stdin, refusing (EFBIG) more than `maxBytes` after reading one byte more.
    func readStandardInput(maxBytes: Int) throws(LocalFileError) -> [UInt8] {
        let bytes = try readIn(maxBytes)
        guard bytes.count <= maxBytes else {
            throw LocalFileError(path: BackupFile.stdinName, operation: .read, errno: EFBIG)
        }
        return bytes
    }
}

/// What `Context.leaveForExit` keeps for the process's end.
private final class Leftover {
    let value: Any
    init(_ value: Any) { self.value = value }
}
