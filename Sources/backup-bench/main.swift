import BackupKit
import BenchDocuments
import CMalloc
import Envelope
import Foundation
import Gzip
import LocalFiles
import Parallel

// `backup-bench`: the timed half of `make bench`. Each subcommand does one job on files
// and prints one JSON line on stdout; Tests/Bench/bench.py runs them on the same files, takes
// medians, reads peak memory from the OS (wait4) and prints the table beside the peers.
// Loading a file is never timed: every timing starts from bytes in memory, as the Python
// peers' do, except `merge`, which times the whole job a user waits for.
//
//     backup-bench generate --seed 42 --day-logs 20000 -o DIR   DIR/phone.json, DIR/laptop.json
//     backup-bench read FILE [--runs N] [--budget-ms MS]   BackupReader.read (parse + validate)
//     backup-bench write FILE [--runs N] [--budget-ms MS]  BackupWriter.write of FILE's document
//     backup-bench merge LOCAL INCOMING -o OUT   read both, validate, merge, write OUT: once
//     backup-bench keptcost LOCAL INCOMING       untimed: the merged file's bytes with and
//                                                without its day logs kept under a tombstone
//     backup-bench foundation FILE [--runs N]    JSONDecoder into a Codable model
//     backup-bench envelope FILE [--runs N] [--budget-ms MS]   age encrypt and decrypt of
//                                                FILE (X25519), and one scrypt 2^18 wrap
//     backup-bench gzip FILE [--runs N] [--budget-ms MS]   Gzip.compress of FILE at levels
//                                                1, 3 and 6, and the level-1 file inflated

struct BenchError: Error {
    var message: String
    var isUsage = false
}

/// `NAME value` options and positional arguments, nothing more.
struct Options {
    var positional: [String] = []
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>) throws(BenchError) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument.hasPrefix("-") {
                guard let value = rest.popFirst() else {
                    throw BenchError(message: "\(argument) needs a value", isUsage: true)
                }
                values[argument] = value
            } else {
                positional.append(argument)
            }
        }
    }

    func integer(_ name: String, default fallback: Int? = nil) throws(BenchError) -> Int {
        guard let text = values[name] else {
            guard let fallback else {
                throw BenchError(message: "\(name) is required", isUsage: true)
            }
            return fallback
        }
        guard let value = Int(text), value > 0 else {
            throw BenchError(
                message: "\(name) wants a positive integer, not \(text)", isUsage: true)
        }
        return value
    }

    func string(_ name: String) throws(BenchError) -> String {
        guard let value = values[name] else {
            throw BenchError(message: "\(name) is required", isUsage: true)
        }
        return value
    }

    func has(_ name: String) -> Bool { values[name] != nil }

    func onlyFile() throws(BenchError) -> String {
        guard positional.count == 1 else {
            throw BenchError(message: "expected one FILE, got \(positional.count)", isUsage: true)
        }
        return positional[0]
    }
}

func inSeconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
}

/// How many times a measurement runs: at least `runs`, and on until `budget` seconds have
/// gone (`--runs N --budget-ms MS`), so a fast step is timed as many times as a slow one has
/// time for, the way hyperfine and criterion do.
struct Runs {
    var runs: Int
    /// Seconds.
    var budget: Double

    init(_ options: Options) throws(BenchError) {
        runs = try options.integer("--runs", default: 1)
        budget = Double(try options.integer("--budget-ms", default: 1)) / 1000
    }
}

/// What `time` measured: wall-clock seconds of each timed call, the pages the kernel handed
/// out during them (per call), the most freed bytes glibc had not yet folded when a clock
/// started (see `settleFreedMemory`; zero unless settling failed), and the last result.
struct Timed<Value> {
    var seconds: [Double] = []
    var freshPages = 0.0
    var unfoldedBytes = 0
    var last: Value?
}

/// Times `body` as `runs` asks. The untimed call takes what only a first call pays (code
/// paged in, the allocator getting memory from the system), as the Python peers' first call
/// does (bench.py), so no size's figure carries it. Each result is freed, wholly, after its
/// clock stops, as the Python peers' are (`del` after timing).
func time<Value, Failure: Error>(
    _ runs: Runs, _ body: () throws(Failure) -> Value
) throws(Failure) -> Timed<Value> {
    let clock = ContinuousClock()
    var timed = Timed<Value>()
    var pages = 0
    _ = try body()
    let begin = clock.now
    while timed.seconds.count < runs.runs || inSeconds(clock.now - begin) < runs.budget {
        // The previous result goes before the clock starts, so no call runs beside one.
        timed.last = nil
        timed.unfoldedBytes = max(timed.unfoldedBytes, settleFreedMemory())
        let pagesBefore = pageFaults()
        let start = clock.now
        let value = try body()
        timed.seconds.append(inSeconds(clock.now - start))
        pages += pageFaults() - pagesBefore
        timed.last = value
    }
    timed.freshPages = Double(pages) / Double(timed.seconds.count)
    return timed
}

/// Finishes freeing what earlier calls returned, so that none of it is done inside the next
/// clock, and returns the bytes still waiting to be folded: zero when this worked.
///
/// glibc keeps freed small blocks (a day log's values, its note) in per-arena fast bins and
/// folds them into free space only when a request of 1 KB or more reaches that arena. Nothing
/// between two timed calls made one, so the next call's first large request did the folding:
/// at a million day logs 26 MB of the previous result's blocks, about 35 ms inside the next
/// timed read (0.5 MB at 20,000). A request from this thread folds the main arena; one from a
/// short-lived thread folds the arena the reader's next second thread gets, as glibc hands a
/// new thread the arena an exited thread left.
func settleFreedMemory() -> Int {
    foldThisThreadsArena()
    var thread = pthread_t()
    // Should the thread not start, the bytes left say so.
    let started = pthread_create(
        &thread, nil,
        { _ in
            foldThisThreadsArena()
            return nil
        }, nil)
    if started == 0 { pthread_join(thread, nil) }
    return Int(mallinfo2().fsmblks)
}

private func foldThisThreadsArena() {
    let block = malloc(1 << 20)
    // Handing the block to a C function keeps the optimizer from dropping the pair as unused.
    _ = malloc_usable_size(block)
    free(block)
}

/// The process's minor page faults so far: each a page the kernel had to hand out (zeroed)
/// on first touch. Memory the allocator kept from an earlier call costs none; an array above
/// glibc's mmap threshold (32 MB at most) comes fresh, and is zeroed again, on every call.
func pageFaults() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_minflt
}

func load(_ path: String) throws(BenchError) -> [UInt8] {
    do {
        return try LocalFile.read(path)
    } catch {
        throw BenchError(message: error.description)
    }
}

func readDocument(
    _ bytes: [UInt8], path: String, options: ReadOptions = ReadOptions()
) throws(BenchError) -> BackupDocument {
    do {
        return try BackupReader.read(bytes, options: options).document
    } catch {
        throw BenchError(message: "\(path): \(error)")
    }
}

/// One line of JSON. Values are numbers, booleans, lists of numbers or ids already quoted, so
/// nothing needs escaping.
func report(_ fields: KeyValuePairs<String, Any>) {
    let members = fields.map { key, value in
        let text =
            switch value {
            case let list as [Double]: "[" + list.map { String($0) }.joined(separator: ",") + "]"
            default: "\(value)"
            }
        return "\"\(key)\":\(text)"
    }
    print("{" + members.joined(separator: ",") + "}")
}

func generate(_ options: Options) throws(BenchError) {
    let seed = UInt64(try options.integer("--seed", default: 42))
    let pair =
        options.has("--challenges")
        ? DocumentPair(seed: seed, challenges: try options.integer("--challenges"))
        : DocumentPair(seed: seed, dayLogs: try options.integer("--day-logs"))
    let folder = try options.string("-o")
    do {
        try LocalFile.makeDirectory(folder, mode: 0o755)
        for device in Device.allCases {
            let document = pair.document(for: device)
            try LocalFile.writeAtomically(document.bytes, to: "\(folder)/\(device.rawValue).json")
            report([
                "device": "\"\(device.rawValue)\"", "bytes": document.bytes.count,
                "challenges": document.challenges, "dayLogs": document.dayLogs,
                "tombstones": document.tombstones,
            ])
        }
    } catch {
        throw BenchError(message: error.description)
    }
}

func read(_ options: Options) throws(BenchError) {
    let path = try options.onlyFile()
    let bytes = try load(path)
    let timed = try time(try Runs(options)) { () throws(BenchError) in
        try readDocument(bytes, path: path)
    }
    report([
        "seconds": timed.seconds, "bytes": bytes.count,
        "dayLogs": timed.last?.dayLogs.count ?? 0, "freshPages": timed.freshPages,
        "unfoldedBytes": timed.unfoldedBytes,
    ])
}

func write(_ options: Options) throws(BenchError) {
    let path = try options.onlyFile()
    let bytes = try load(path)
    let document = try readDocument(bytes, path: path)
    let timed = time(try Runs(options)) { BackupWriter.write(document) }
    // The generator writes canonical bytes, so writing its files back must change nothing.
    report([
        "seconds": timed.seconds, "bytes": timed.last?.count ?? 0,
        "identical": timed.last == bytes,
    ])
}

/// The whole job of `cloudbackup merge`, timed from the first byte read to the last written.
/// `now` is the later export, so the 90-day window drops the older tombstones as it would
/// on the day. The output is written without fsync: the disk is not what is measured.
func fullMerge(_ options: Options) throws(BenchError) {
    guard options.positional.count == 2 else {
        throw BenchError(message: "expected LOCAL INCOMING", isUsage: true)
    }
    let output = try options.string("-o")
    let clock = ContinuousClock()
    let start = clock.now
    // As `cloudbackup merge` reads: both files loaded at once, then decoded one after the
    // other (each decode uses both cores), each file's bytes freed once decoded.
    let (localPath, incomingPath) = (options.positional[0], options.positional[1])
    let (localBytes, incomingBytes) = concurrently(
        { Result { () throws(BenchError) in try load(localPath) } },
        { Result { () throws(BenchError) in try load(incomingPath) } })
    let readOptions = ReadOptions()
    let local = try readDocument(
        (consume localBytes).get(), path: localPath, options: readOptions)
    let incoming = try readDocument(
        (consume incomingBytes).get(), path: incomingPath, options: readOptions)
    let now = max(local.exportedAt, incoming.exportedAt)
    let merged = merge(local: local, incoming: incoming, options: MergeOptions(now: now)).document
    // Streamed, as `cloudbackup merge -o` saves: the written bytes are never held whole.
    let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
        throw BenchError(message: "\(output): cannot open: \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    var count = 0
    try BackupWriter.write(merged) { part throws(BenchError) in
        if let code = LocalFile.writeAll(part, to: fd) {
            throw BenchError(message: "\(output): cannot write: \(String(cString: strerror(code)))")
        }
        count += part.count
    }
    report([
        "seconds": inSeconds(clock.now - start),
        "bytes": count, "dayLogs": merged.dayLogs.count,
    ])
}

/// What schema 4's kept day logs cost in bytes (FORMAT.md §2.4): the merge of the pair at the later
/// export, written as schema 4, against the same document without its kept day logs, which
/// is what schema 3's rule 5 would have written. Also how many challenges carry a tombstone
/// on either device, the share the cost depends on. Nothing is timed.
func keptCost(_ options: Options) throws(BenchError) {
    guard options.positional.count == 2 else {
        throw BenchError(message: "expected LOCAL INCOMING", isUsage: true)
    }
    let (localPath, incomingPath) = (options.positional[0], options.positional[1])
    let local = try readDocument(try load(localPath), path: localPath)
    let incoming = try readDocument(try load(incomingPath), path: incomingPath)
    let merged = merge(
        local: local, incoming: incoming,
        options: MergeOptions(now: max(local.exportedAt, incoming.exportedAt))
    ).document
    let (withoutKept, kept) = merged.droppingKeptDayLogs()
    let ids = Set((local.challenges + incoming.challenges).map(\.id))
        .union((local.tombstones + incoming.tombstones).map(\.id))
    let deleted = Set((local.tombstones + incoming.tombstones).map(\.id))
    report([
        "bytes": BackupWriter.write(merged).count,
        "bytesWithoutKept": BackupWriter.write(withoutKept, schema: .version3).count,
        "keptDayLogs": kept, "dayLogs": merged.dayLogs.count,
        "tombstones": merged.tombstones.count, "challengeIds": ids.count,
        "deletedOnEitherDevice": deleted.count,
    ])
}

func foundation(_ options: Options) throws(BenchError) {
    let path = try options.onlyFile()
    let data: Data
    do {
        data = try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
        throw BenchError(message: "\(path): \(error.localizedDescription)")
    }
    let timed = try time(try Runs(options)) {
        () throws(BenchError) in
        do {
            return try JSONDecoder().decode(CodableBackup.self, from: data)
        } catch {
            throw BenchError(message: "\(path): JSONDecoder: \(error)")
        }
    }
    report([
        "seconds": timed.seconds, "bytes": data.count,
        "dayLogs": timed.last?.dayLogs.count ?? 0,
    ])
}

/// What encryption adds to a backup: the age payload of FILE's bytes (ChaCha20-Poly1305 in
/// 64 KiB chunks) both ways, to and from an X25519 key, whose wrap costs microseconds; and
/// apart, the one scrypt a passphrase costs per upload or download, at age's 2^18.
func envelope(_ options: Options) throws(BenchError) {
    let path = try options.onlyFile()
    let bytes = try load(path)
    let runs = try Runs(options)
    do throws(EnvelopeError) {
        let identity = try Identity.generate()
        // An X25519 identity always has a recipient; none would be refused by `encrypt`.
        let recipients = identity.recipient.map { [$0] } ?? []
        let encrypted = try time(runs) { () throws(EnvelopeError) in
            try Envelope.encrypt(bytes, to: recipients)
        }
        let sealed = encrypted.last ?? []
        let decrypted = try time(runs) { () throws(EnvelopeError) in
            try Envelope.decrypt(sealed, with: [identity])
        }
        let clock = ContinuousClock()
        let start = clock.now
        _ = try Envelope.encrypt([], to: [.scrypt(passphrase: Array("bench".utf8))])
        report([
            "encryptSeconds": encrypted.seconds, "decryptSeconds": decrypted.seconds,
            "bytes": bytes.count, "sealedBytes": sealed.count,
            "identical": decrypted.last == bytes, "scryptSeconds": inSeconds(clock.now - start),
        ])
    } catch {
        throw BenchError(message: "\(path): \(error.description)")
    }
}

/// What compression adds to a backup (issue 40): FILE gzipped by libdeflate at levels 1 (the
/// default, `Gzip.defaultLevel`), 3 and 6, with each output's size, and the default level's
/// output inflated back, as a restore or a merge of a compressed backup does.
func gzip(_ options: Options) throws(BenchError) {
    let path = try options.onlyFile()
    let bytes = try load(path)
    let runs = try Runs(options)
    let levels = [Gzip.defaultLevel, 3, 6].map { level in
        time(runs) { Gzip.compress(bytes, level: level) }
    }
    let compressed = levels[0].last ?? []
    let inflated = try time(runs) { () throws(BenchError) in
        do throws(GzipError) {
            return try Gzip.decompress(compressed, maxBytes: bytes.count)
        } catch {
            throw BenchError(message: "\(path): \(error.description)")
        }
    }
    report([
        "bytes": bytes.count, "level": Gzip.defaultLevel,
        "seconds1": levels[0].seconds, "bytes1": levels[0].last?.count ?? 0,
        "seconds3": levels[1].seconds, "bytes3": levels[1].last?.count ?? 0,
        "seconds6": levels[2].seconds, "bytes6": levels[2].last?.count ?? 0,
        "decompressSeconds": inflated.seconds, "identical": inflated.last == bytes,
    ])
}

let commands: [String: (Options) throws(BenchError) -> Void] = [
    "generate": generate, "read": read, "write": write, "merge": fullMerge,
    "keptcost": keptCost, "foundation": foundation, "envelope": envelope, "gzip": gzip,
]
let arguments = CommandLine.arguments.dropFirst()
do throws(BenchError) {
    guard let name = arguments.first, let command = commands[name] else {
        throw BenchError(
            message: "usage: backup-bench (\(commands.keys.sorted().joined(separator: "|"))) …",
            isUsage: true)
    }
    try command(try Options(arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("backup-bench: \(error.message)\n".utf8))
    exit(error.isUsage ? 2 : 1)
}
