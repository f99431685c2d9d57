import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A power cut, not just a killed process: what is on disk afterwards is only what was
/// fsynced. An `LD_PRELOAD` shim (Fixtures/power-loss-shim.c, built here with the system's C
/// compiler) records every call of one write that changes the target's folder; the trace is
/// then replayed on a model disk that drops everything not yet fsynced, with the power cut
/// before each call in turn and once after the last. Every time, the target must read as
/// the old file or the complete new one; after the write returned, the new one.
///
/// The model is the strictest POSIX allows: a file's bytes are kept once it is fsynced, a
/// folder's entries (a file made, renamed or deleted) once the folder is.
@Suite final class PowerLossTests {
    let folder: URL
    let shim: String

    init() throws {
        folder = try Paths.temporaryFolder()
        shim = folder.appendingPathComponent("shim.so").path
        let built = try run(
            URL(fileURLWithPath: "/usr/bin/cc"),
            [
                "-shared", "-fPIC", "-O1", "-o", shim,
                Paths.file("Tests/CloudBackupCLITests/Fixtures/power-loss-shim.c").path, "-ldl",
            ])
        try #require(built.status == 0, "\(built.stderr)")
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// One recorded call.
    enum Call: Equatable {
        case open(fd: Int32, flags: Int32, path: String)
        case write(fd: Int32, count: Int)
        case fsync(fd: Int32)
        case close(fd: Int32)
        case rename(from: String, to: String)
        case unlink(path: String)

        init?(_ line: Substring) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(
                String.init)
            let number = { (index: Int) in fields.count > index ? Int32(fields[index]) : nil }
            switch fields.first {
            case "open":
                guard let fd = number(1), let flags = number(2), fields.count == 4 else {
                    return nil
                }
                self = .open(fd: fd, flags: flags, path: fields[3])
            case "write":
                guard let fd = number(1), let count = number(2) else { return nil }
                self = .write(fd: fd, count: Int(count))
            case "fsync":
                guard let fd = number(1) else { return nil }
                self = .fsync(fd: fd)
            case "close":
                guard let fd = number(1) else { return nil }
                self = .close(fd: fd)
            case "rename" where fields.count == 3: self = .rename(from: fields[1], to: fields[2])
            case "unlink" where fields.count == 2: self = .unlink(path: fields[1])
            default: return nil
            }
        }
    }

    /// The disk after the power went off just before `calls[cut]` (after all of them when
    /// `cut == calls.count`): which file the target's name leads to, and how many of its
    /// bytes were kept. File 0 is the one that was there before the run, all of it on disk.
    static func afterPowerCut(
        _ calls: [Call], cut: Int, folder: String, target: String, existed: Bool
    ) -> (file: Int, kept: Int)? {
        var names: [String: Int] = existed ? [target: 0] : [:]
        var written = [0]
        var durable = [0]
        var namesOnDisk = names
        var open: [Int32: Int] = [:]  // fd → file; -1 for the folder itself
        for call in calls.prefix(cut) {
            switch call {
            case .open(let fd, let flags, let path):
                if path == folder {
                    open[fd] = -1
                } else if let file = names[path], flags & O_EXCL == 0 {
                    open[fd] = file
                } else if flags & O_CREAT != 0 {
                    written.append(0)
                    durable.append(0)
                    names[path] = written.count - 1
                    open[fd] = written.count - 1
                }
            case .write(let fd, let count):
                if let file = open[fd], file >= 0 { written[file] += count }
            case .fsync(let fd):
                guard let file = open[fd] else { break }
                if file < 0 { namesOnDisk = names } else { durable[file] = written[file] }
            case .close(let fd):
                open[fd] = nil
            case .rename(let from, let to):
                names[to] = names.removeValue(forKey: from)
            case .unlink(let path):
                names[path] = nil
            }
        }
        return namesOnDisk[target].map { ($0, $0 == 0 ? Int.max : durable[$0]) }
    }

    /// Runs `arguments` under the shim; the calls it made in `folder`.
    func traced(_ arguments: [String]) throws -> [Call] {
        let trace = folder.appendingPathComponent("trace").path
        let result = try cloudbackup(
            arguments,
            environment: [
                "LD_PRELOAD": shim, "SHIM_DIR": folder.appendingPathComponent("disk").path,
                "SHIM_TRACE": trace,
            ])
        try #require(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        let calls = lines.compactMap(Call.init)
        try #require(calls.count == lines.count, "unreadable trace: \(lines)")
        return calls
    }

    /// Walks every crash point of one atomic write of `target` (made by `arguments`), which
    /// held `old` (nil: no file) and then holds `new`; returns how many points were walked.
    func walk(_ arguments: [String], target: String, old: Data?) throws -> Int {
        let calls = try traced(arguments)
        let new = try Data(contentsOf: URL(fileURLWithPath: target))
        let disk = folder.appendingPathComponent("disk").path
        for cut in 0...calls.count {
            let state = Self.afterPowerCut(
                calls, cut: cut, folder: disk, target: target, existed: old != nil)
            let shown = "power cut before call \(cut) of \(calls.count) (\(arguments[0]))"
            switch state {
            case nil:
                #expect(old == nil && cut < calls.count, "\(shown): no file")
            case (0, _)?:
                #expect(old != nil && cut < calls.count, "\(shown): the old file after the write")
            case (_, let kept)?:
                #expect(kept == new.count, "\(shown): \(kept) of \(new.count) bytes kept")
            }
        }
        // The write did what a power-safe write must: data, rename, then the folder.
        #expect(calls.contains { if case .rename = $0 { true } else { false } })
        return calls.count + 1
    }

    @Test func everyCrashPointOfAnAtomicWriteLeavesTheOldFileOrTheNew() throws {
        let disk = folder.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let input = disk.appendingPathComponent("old-v2.json").path
        try FileManager.default.copyItem(
            atPath: Paths.file("Examples/old-v2.json").path, toPath: input)
        let out = disk.appendingPathComponent("out.json").path
        // A new OUT, then one replacing an OUT that is there (in place: FILE is OUT).
        var points = try walk(["migrate", input, "-o", out], target: out, old: nil)
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        points += try walk(["migrate", input, "-o", input], target: input, old: before)
        print("power-loss walk: \(points) crash points")
        #expect(points > 10)
    }
}
