import Foundation

/// Runs two independent jobs at the same time, `first` on the calling thread and `second` on
/// a thread of its own, and returns both results once both have finished. For jobs that
/// share nothing, like reading the two files of a merge or the two halves of a file's day
/// logs: only `second` and its result cross to another thread, so only they must be Sendable.
///
/// A dedicated thread rather than a Dispatch queue, so the second job never waits for a
/// busy pool; it gets the main thread's stack size, as the reader's recursion may need it.
/// It starts on a core other than the caller's (`OtherCore`) and is then free to move.
public func concurrently<First, Second: Sendable>(
    _ first: () -> First, _ second: @escaping @Sendable () -> Second
) -> (First, Second) {
    let slot = Slot<Second>()
    guard let thread = startThread({ slot.value = second() }) else {
        // No thread to be had (the process is at its limit): the same work, in turn.
        return (first(), second())
    }
    let firstResult = first()
    // Joining orders the second job's write of its result before this read.
    pthread_join(thread, nil)
    guard let secondResult = slot.value else {
        preconditionFailure("the second job ran to completion before the join returned")
    }
    return (firstResult, secondResult)
}

/// `body` on the two halves of `range` at once, or on the whole of it when it is shorter
/// than `minimum`; the results in the order of their ranges. For passes over the day logs
/// whose results only need to be put one after the other (issues, notes).
public func inHalves<Result: Sendable>(
    _ range: Range<Int>, minimum: Int, _ body: @escaping @Sendable (Range<Int>) -> Result
) -> [Result] {
    guard range.count >= max(minimum, 2) else { return [body(range)] }
    let middle = range.lowerBound + range.count / 2
    let (first, second) = concurrently(
        { body(range.lowerBound..<middle) }, { body(middle..<range.upperBound) })
    return [first, second]
}

/// The second job's result: written by its thread only, read by the caller after the join.
private final class Slot<Value>: @unchecked Sendable {
    var value: Value?
}

/// What a new thread runs, handed over through `pthread_create`'s context pointer.
private final class Work: Sendable {
    let run: @Sendable () -> Void
    /// The cores to go back to once running, when the thread was started away from its
    /// caller's core.
    let unpin: cpu_set_t?

    init(_ run: @escaping @Sendable () -> Void, unpin: cpu_set_t?) {
        self.run = run
        self.unpin = unpin
    }
}

/// A joinable thread with an 8 MB stack running `run`, started where `pin` puts it (away from
/// the caller's core), or where the scheduler likes when that cannot be had (pthread_create
/// refuses a start pin to a core that went offline meanwhile); nil when no thread could be
/// made at all.
func startThread(
    _ run: @escaping @Sendable () -> Void,
    pin: @escaping (inout pthread_attr_t) -> cpu_set_t? = OtherCore.pin
) -> pthread_t? {
    startThread(run, pinnedBy: pin) ?? startThread(run, pinnedBy: nil)
}

/// A thread started where `pin` puts it, which returns the cores to go back to once running;
/// nil when `pin` cannot pin or the thread cannot be made so.
func startThread(
    _ run: @escaping @Sendable () -> Void,
    pinnedBy pin: ((inout pthread_attr_t) -> cpu_set_t?)?
) -> pthread_t? {
    var attributes = pthread_attr_t()
    guard pthread_attr_init(&attributes) == 0 else { return nil }
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, 8 << 20)
    let unpin = pin?(&attributes)
    guard pin == nil || unpin != nil else { return nil }
    let context = Unmanaged.passRetained(Work(run, unpin: unpin)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(
        &thread, &attributes,
        { context in
            guard let context else { return nil }
            let work = Unmanaged<Work>.fromOpaque(context).takeRetainedValue()
            if let cores = work.unpin { OtherCore.allow(cores) }
            work.run()
            return nil
        }, context)
    guard status == 0 else {
        Unmanaged<Work>.fromOpaque(context).release()
        return nil
    }
    return thread
}

/// Starting the second job's thread on a core other than its creator's.
///
/// Left to the scheduler, a new thread is now and then queued on its creator's core and does
/// not run until the creator blocks, which is when the first job is done: measured on a
/// 2-core VM, the second half of a cold 20,000-log merge's steps started 1–3 ms late, as long
/// as the halves take, so two cores did the work of one. Started on the creator's other
/// cores, it ran within 0.1 ms. Once running it may use every core its creator may, so a busy
/// core does not hold it back, and `taskset` or cgroup limits still hold.
///
/// These and pthreads are the only calls below Foundation in this module (BackupKit's rule,
/// Foundation only and no C, holds here too): Foundation's `Thread` cannot be started with a
/// core set. The
/// affinity calls are GNU extensions that Swift's Glibc module does not import, so they are
/// looked up by name once; where one is missing (another C library) threads start unpinned.
enum OtherCore {
    private typealias GetCPU = @convention(c) () -> Int32
    private typealias GetAffinity =
        @convention(c) (pid_t, Int, UnsafeMutablePointer<cpu_set_t>) -> Int32
    private typealias SetAttributeAffinity =
        @convention(c) (UnsafeMutablePointer<pthread_attr_t>, Int, UnsafePointer<cpu_set_t>)
        -> Int32
    private typealias SetThreadAffinity =
        @convention(c) (pthread_t, Int, UnsafePointer<cpu_set_t>) -> Int32

    private struct Calls {
        let getCPU: GetCPU
        let getAffinity: GetAffinity
        let setAttributeAffinity: SetAttributeAffinity
        let setThreadAffinity: SetThreadAffinity
    }

    private static let calls: Calls? = {
        func find<Function>(_ name: String, as type: Function.Type) -> Function? {
            // RTLD_DEFAULT, the global search order, is the null handle in glibc.
            guard let address = dlsym(nil, name) else { return nil }
            return unsafeBitCast(address, to: type)
        }
        guard let getCPU = find("sched_getcpu", as: GetCPU.self),
            let getAffinity = find("sched_getaffinity", as: GetAffinity.self),
            let setAttributeAffinity = find(
                "pthread_attr_setaffinity_np", as: SetAttributeAffinity.self),
            let setThreadAffinity = find("pthread_setaffinity_np", as: SetThreadAffinity.self)
        else { return nil }
        return Calls(
            getCPU: getCPU, getAffinity: getAffinity,
            setAttributeAffinity: setAttributeAffinity, setThreadAffinity: setThreadAffinity)
    }()

    /// Starts a thread made with `attributes` on the caller's cores other than the one it
    /// runs on (all of them, so that threads started at once from several cores spread out);
    /// the caller's cores, for the thread to go back to, or nil when it stays unpinned (one
    /// core only, or the calls are missing).
    static func pin(_ attributes: inout pthread_attr_t) -> cpu_set_t? {
        guard let calls, let allowed = cores() else { return nil }
        let current = Int(calls.getCPU())
        let others = numbers(of: allowed).filter { $0 != current }
        guard current >= 0, !others.isEmpty else { return nil }
        return start(on: set(of: others), &attributes) ? allowed : nil
    }

    /// Makes threads created with `attributes` start on `cores`; false when that cannot be
    /// set.
    static func start(on cores: cpu_set_t, _ attributes: inout pthread_attr_t) -> Bool {
        guard let calls else { return false }
        var cores = cores
        return calls.setAttributeAffinity(&attributes, MemoryLayout<cpu_set_t>.size, &cores) == 0
    }

    /// Lets the calling thread run on `cores` (again).
    static func allow(_ cores: cpu_set_t) {
        guard let calls else { return }
        var cores = cores
        _ = calls.setThreadAffinity(pthread_self(), MemoryLayout<cpu_set_t>.size, &cores)
    }

    /// The cores the calling thread may run on, or nil when that cannot be told.
    static func cores() -> cpu_set_t? {
        guard let calls else { return nil }
        var cores = cpu_set_t()
        return calls.getAffinity(0, MemoryLayout<cpu_set_t>.size, &cores) == 0 ? cores : nil
    }

    /// The numbers of the cores in `set`, lowest first.
    static func numbers(of set: cpu_set_t) -> [Int] {
        withUnsafeBytes(of: set.__bits) { raw in
            let words = raw.bindMemory(to: UInt.self)
            return (0..<words.count * UInt.bitWidth).filter { core in
                words[core / UInt.bitWidth] & (1 << (core % UInt.bitWidth)) != 0
            }
        }
    }

    static func set(of numbers: [Int]) -> cpu_set_t {
        var set = cpu_set_t()
        withUnsafeMutableBytes(of: &set.__bits) { raw in
            let words = raw.bindMemory(to: UInt.self)
            for core in numbers { words[core / UInt.bitWidth] |= 1 << (core % UInt.bitWidth) }
        }
        return set
    }
}
