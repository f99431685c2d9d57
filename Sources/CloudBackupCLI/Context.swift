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
        stdinIsTerminal: Bool = false
    ) {
        self.init(
            environment: environment, stdout: stdout, stderr: stderr,
            stderrIsTerminal: stderrIsTerminal, stdinIsTerminal: stdinIsTerminal,
            leave: { _ in })
    }

    private init(
        environment: [String: String], stdout: @escaping (String) -> Void,
        stderr: @escaping (String) -> Void, stderrIsTerminal: Bool, stdinIsTerminal: Bool,
        leave: @escaping (Any) -> Void
    ) {
        self.environment = environment
        self.writeOut = stdout
        self.writeErr = stderr
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
            stderrIsTerminal: isatty(2) == 1,
            stdinIsTerminal: isatty(0) == 1,
            // Never released: `exit` follows the command.
            leave: { _ = Unmanaged.passRetained(Leftover($0)) })
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

/// What `Context.leaveForExit` keeps for the process's end.
private final class Leftover {
    let value: Any
    init(_ value: Any) { self.value = value }
}
