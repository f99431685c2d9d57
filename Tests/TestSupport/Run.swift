import Foundation

/// What a finished process said and how it ended.
public struct RunResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs a program to completion with the given arguments, environment and standard input,
/// collecting both streams (read concurrently, so a chatty process never blocks).
/// `whenStderrShows` runs its action once, as soon as its text has appeared on stderr: the
/// way a test acts at a moment of the run (the run is waiting for a lock) without sleeping.
public func run(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
    stdin: Data? = nil, workingDirectory: URL? = nil,
    whenStderrShows: (text: String, action: @Sendable () -> Void)? = nil
) throws -> RunResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let workingDirectory { process.currentDirectoryURL = workingDirectory }
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(stdin) }
    try input.fileHandleForWriting.close()
    let group = DispatchGroup()
    nonisolated(unsafe) var outData = Data()
    nonisolated(unsafe) var errData = Data()
    DispatchQueue.global().async(group: group) {
        outData = out.fileHandleForReading.readDataToEndOfFile()
    }
    DispatchQueue.global().async(group: group) {
        guard let (text, action) = whenStderrShows else {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            return
        }
        var waiting = true
        while case let chunk = err.fileHandleForReading.availableData, !chunk.isEmpty {
            errData.append(chunk)
            if waiting, String(decoding: errData, as: UTF8.self).contains(text) {
                waiting = false
                action()
            }
        }
    }
    group.wait()
    process.waitUntilExit()
    return RunResult(
        status: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}

/// The minimal, explicit environment of a test's `cloudbackup`, so the developer's own config
/// never leaks into a test.
public let testEnvironment = ["PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": "/nonexistent"]

/// Runs the built `cloudbackup` with `arguments` in `testEnvironment` plus
/// `extraEnvironment`.
public func cloudbackup(
    _ arguments: [String], environment extraEnvironment: [String: String] = [:],
    stdin: Data? = nil, workingDirectory: URL? = nil,
    whenStderrShows: (text: String, action: @Sendable () -> Void)? = nil
) throws -> RunResult {
    var environment = testEnvironment
    environment.merge(extraEnvironment) { _, new in new }
    return try run(
        Paths.binary, arguments, environment: environment, stdin: stdin,
        workingDirectory: workingDirectory, whenStderrShows: whenStderrShows)
}
