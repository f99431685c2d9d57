import Foundation
import SeededRandom
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` at random moments of `merge -o` on files of a few MB and of an in-place
/// `migrate`: the output is byte for byte the old file or the complete new one every time,
/// and the next run leaves no temporary file behind. The moments come from a seeded
/// generator (the seed is in the failure message); each loop stops after 10 s.
@Suite(.serialized) final class CrashConsistencyTests {
    static let seed: UInt64 = 19
    static let budget: Double = 10
    let folder: URL

    init() throws {
        folder = try Paths.temporaryFolder()
        // Two devices' documents of ~3.5 MB each (the bench's seeded stories).
        let bench = Paths.binary.deletingLastPathComponent().appendingPathComponent("backup-bench")
        let made = try run(
            bench, ["generate", "--seed", "7", "--day-logs", "20000", "-o", folder.path])
        try #require(made.status == 0, "\(made.stderr)")
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func contents(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Starts `cloudbackup arguments`, kills it with SIGKILL after `delay` seconds unless it
    /// ended first, and waits for it to end.
    func runKilled(_ arguments: [String], after delay: Double) throws {
        let process = Process()
        process.executableURL = Paths.binary
        process.arguments = arguments
        process.environment = testEnvironment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The random moment of the kill, not a wait for anything.
        usleep(UInt32(delay * 1_000_000))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.contains(".tmp-")
        }
    }

    /// Kills `arguments`, which replace `output`'s `old` bytes, at random moments up to a bit
    /// past a whole run's time; returns how many kills left a temporary file (cut mid-write).
    func killAtRandom(_ arguments: [String], output: String, old: Data, named: String) throws
        -> (kills: Int, midWrite: Int)
    {
        try old.write(to: URL(fileURLWithPath: output))
        let started = Date()
        let whole = try cloudbackup(arguments)
        try #require(whole.status == 0, "\(whole.stderr)")
        let runTime = Date().timeIntervalSince(started)
        let new = try contents(output)
        try #require(new != old)
        var random = SeededRandom(seed: Self.seed)
        var (kills, midWrite) = (0, 0)
        let loop = Date()
        while Date().timeIntervalSince(loop) < Self.budget, kills < 40 {
            try old.write(to: URL(fileURLWithPath: output))
            let delay = Double.random(in: 0..<(runTime * 1.2), using: &random)
            let earlier = Set(try leftovers())
            try runKilled(arguments, after: delay)
            kills += 1
            let now = try contents(output)
            #expect(
                now == old || now == new,
                "\(named), seed \(Self.seed), kill \(kills) after \(delay) s: \(now.count) bytes, neither the old \(old.count) nor the new \(new.count)"
            )
            if try !Set(leftovers()).subtracting(earlier).isEmpty { midWrite += 1 }
        }
        // The next run removes what killed runs left, and leaves nothing of its own.
        let next = try cloudbackup(arguments)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try contents(output) == new)
        #expect(try leftovers() == [], "\(named)")
        return (kills, midWrite)
    }

    @Test func killedMergesAndMigratesLeaveTheOldOutputOrTheNew() throws {
        let merged = try killAtRandom(
            [
                "merge", path("phone.json"), path("laptop.json"), "-o", path("out.json"),
                "--now", "2026-11-30T12:00:00Z",
            ],
            output: path("out.json"), old: try contents(path("laptop.json")), named: "merge -o")
        // In place: FILE is OUT, compact before and pretty after.
        let migrated = try killAtRandom(
            ["migrate", path("phone.json"), "-o", path("phone.json"), "--pretty"],
            output: path("phone.json"), old: try contents(path("phone.json")),
            named: "migrate in place")
        print("crash consistency: merge \(merged), migrate \(migrated) (kills, mid-write)")
        // Some kills must have cut a write, or the loop tested only the reading.
        #expect(merged.midWrite + migrated.midWrite > 0)
    }
}
