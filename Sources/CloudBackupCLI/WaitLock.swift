/// `--wait-lock DURATION`: how long a run waits for another run of its profile to finish
/// before it gives up with exit 6, so two cron jobs that overlap (a slow upload, a laptop
/// waking with two runs due) do one after the other instead of failing one of them.
enum WaitLock {
    /// Seconds to wait; 0 when the option is absent (exit 6 at once, as before).
    static func seconds(_ arguments: inout Arguments) throws(CLIError) -> Double {
        try arguments.option(
            .waitLock, expecting: "a duration such as 90s, 10m or 1h30m (at most 24h)",
            { DurationText.seconds(in: $0, atMost: 86_400).map(Double.init) }
        ) ?? 0
    }
}
