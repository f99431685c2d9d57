import BackupKit
import LocalFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A subcommand: a type that carries its own help, parses its own arguments and runs.
public protocol Command {
    /// The word after `cloudbackup`.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// `cloudbackup NAME …` synopsis, printed after a usage error.
    static var usage: String { get }
    /// The full `--help` text (tested word for word).
    static var help: String { get }

    /// Parses everything after the command name; throws `CLIError.usage` for bad input.
    init(arguments: inout Arguments) throws(CLIError)

    func run(in context: Context) throws
}

/// What a command may touch of the outside world, so tests can run commands in-process.
public final class Context: @unchecked Sendable {
    public let environment: [String: String]
    private let writeOut: (String) -> Void
    private let writeErr: (String) -> Void
    /// Whether stderr is a terminal (progress lines and prompts only then).
    public let stderrIsTerminal: Bool
    public let stdinIsTerminal: Bool

    public init(
        environment: [String: String],
        stdout: @escaping (String) -> Void,
        stderr: @escaping (String) -> Void,
        stderrIsTerminal: Bool = false,
        stdinIsTerminal: Bool = false
    ) {
        self.environment = environment
        self.writeOut = stdout
        self.writeErr = stderr
        self.stderrIsTerminal = stderrIsTerminal
        self.stdinIsTerminal = stdinIsTerminal
    }

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
            stderrIsTerminal: isatty(2) == 1,
            stdinIsTerminal: isatty(0) == 1)
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
}

extension String {
    /// A file name (or any text someone else chose) as put on one line of stdout: its control
    /// characters escaped, as on stderr, so a name holding a newline cannot add a line of its
    /// own and one holding an escape sequence cannot drive the terminal.
    var onOneLine: String { ValidationIssue.escapingControls(self) }
}
