/// The exit codes of FORMAT.md §8.1, which cron jobs and monitoring scripts rely on.
public enum ExitCode: Int32, Sendable {
    case success = 0
    case failure = 1
    case usage = 2
    case invalidFile = 3
    case notLoggedIn = 4
    case network = 5
    case locked = 6
    case refused = 7
}

/// An error that already knows what to say and which exit code it means. Commands throw
/// these (or library errors the boundary knows); only `CloudBackup.run` turns them into
/// output.
public struct CLIError: Error, Sendable {
    /// One line per problem, each already naming the file/place and the fix.
    public var lines: [String]
    public var exitCode: ExitCode
    /// Usage errors are followed by the command's usage line.
    public var usage: String?

    public init(_ lines: [String], exitCode: ExitCode, usage: String? = nil) {
        self.lines = lines
        self.exitCode = exitCode
        self.usage = usage
    }

    public init(_ line: String, exitCode: ExitCode, usage: String? = nil) {
        self.init([line], exitCode: exitCode, usage: usage)
    }

    public static func usage(_ line: String, _ usage: String) -> CLIError {
        CLIError(line, exitCode: .usage, usage: usage)
    }

    /// A private file that others may read, refused as ssh refuses a key: the token file,
    /// the identity file, config.json (it may hold the client secret).
    static func tooOpen(_ path: String, mode: UInt32, for file: String, holding what: String)
        -> CLIError
    {
        let octal = String(mode & 0o7777, radix: 8)
        return CLIError(
            "\(path): permissions \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal) are too open for \(file) (it holds \(what)); run `chmod 600 \(path)` and try again",
            exitCode: .invalidFile)
    }
}
