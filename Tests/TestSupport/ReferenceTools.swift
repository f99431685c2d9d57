import Foundation

/// The reference age implementations the interop tests run as subprocesses: Debian's `age`
/// and `age-keygen` (X25519) and PyPI's `pyrage` (passphrase), which `make test` installs.
public enum ReferenceTools {
    public static let age = URL(fileURLWithPath: "/usr/bin/age")
    public static let ageKeygen = URL(fileURLWithPath: "/usr/bin/age-keygen")

    /// A new key from `age-keygen -o keyFile` (mode 0600, as age-keygen writes it); its
    /// public key, which age-keygen says on stderr.
    public static func generateKey(at keyFile: URL) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: age.path) else {
            throw Failure(
                description:
                    "Debian's age is not installed (make test installs it: apt-get install age)")
        }
        let made = try run(ageKeygen, ["-o", keyFile.path])
        guard made.status == 0,
            let line = made.stderr.split(separator: "\n").first(where: {
                $0.hasPrefix("Public key: ")
            })
        else { throw Failure(description: "age-keygen failed: \(made.stderr)") }
        return String(line.dropFirst("Public key: ".count))
    }

    /// `pyrage.passphrase.encrypt|decrypt` of the file `input` into `output`; the passphrase
    /// reaches Python through its environment, never its arguments.
    public static func pyrage(_ verb: String, _ input: URL, _ output: URL, passphrase: String)
        throws -> RunResult
    {
        try run(
            URL(fileURLWithPath: Paths.python),
            [
                "-c",
                "import os, sys, pyrage; data = open(sys.argv[2], 'rb').read(); "
                    + "out = getattr(pyrage.passphrase, sys.argv[1])(data, os.environ['PASSPHRASE']); "
                    + "open(sys.argv[3], 'wb').write(out)",
                verb, input.path, output.path,
            ],
            environment: ["PASSPHRASE": passphrase, "PATH": "/usr/bin:/bin"])
    }

    /// Python's `gzip.compress(bytes, mtime=0)`: a reference writer of gzip (RFC 1952), one
    /// member, no name and no time, as `gzip -n` writes it.
    public static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        try filter(
            bytes, named: "python's gzip", Paths.python,
            ["-c", python("gzip.compress(sys.stdin.buffer.read(), mtime=0)")])
    }

    /// The reference readers of gzip: Python's `gzip.decompress` and the `gzip -d` command.
    public enum Gunzip: String, CaseIterable, Sendable {
        case python
        case command
    }

    /// `bytes` inflated by `reader`, which refuses anything but a whole, intact stream.
    public static func gunzip(_ bytes: [UInt8], with reader: Gunzip) throws -> [UInt8] {
        switch reader {
        case .python:
            try filter(
                bytes, named: "python's gunzip", Paths.python,
                ["-c", python("gzip.decompress(sys.stdin.buffer.read())")])
        case .command:
            try filter(bytes, named: "gzip -d", "/bin/sh", ["-c", "gzip -d -c > \"$0\""])
        }
    }

    /// A Python program that writes `expression`'s bytes to the file its first argument names.
    private static func python(_ expression: String) -> String {
        "import gzip, sys; open(sys.argv[1], 'wb').write(\(expression))"
    }

    /// `bytes` on the standard input of `executable`, which writes its result to the file
    /// named by the argument after `arguments`.
    private static func filter(
        _ bytes: [UInt8], named tool: String, _ executable: String, _ arguments: [String]
    ) throws -> [UInt8] {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out")
        let made = try run(
            URL(fileURLWithPath: executable), arguments + [output.path],
            environment: ["PATH": "/usr/bin:/bin"], stdin: Data(bytes))
        guard made.status == 0 else {
            throw Failure(description: "\(tool) failed: \(made.stderr)")
        }
        return try Array(Data(contentsOf: output))
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }
}
