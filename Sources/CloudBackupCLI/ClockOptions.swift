import BackupKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `--now T` and `--window DAYS`: the clock the tombstone window and the guards are measured
/// against (FORMAT.md §8.2 "Reproducibility"). BackupKit never reads the clock; commands read it
/// here, once, unless `--now` fixes it.
struct ClockOptions: Sendable {
    var now: Timestamp
    var windowDays: Int

    static let windowRange = 1...36_500

    init(arguments: inout Arguments) throws(CLIError) {
        now = try Self.fixedNow(&arguments) ?? Self.systemNow()
        windowDays =
            try arguments.option(
                .window, expecting: "a number of days from 1 to 36500",
                { Int($0).flatMap { Self.windowRange.contains($0) ? $0 : nil } })
            ?? MergeOptions.defaultWindowDays
    }

    /// `--now T` when given: every command that takes it parses it here, with one message.
    static func fixedNow(_ arguments: inout Arguments) throws(CLIError) -> Timestamp? {
        try arguments.option(
            .now, expecting: "an RFC 3339 UTC time such as 2026-11-29T22:14:03Z",
            { Timestamp($0) })
    }

    /// The system clock, truncated to milliseconds like every stamp in a backup.
    static func systemNow() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(
            millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}
