/// `--wait-lock DURATION`: how long a run waits for another run of its profile to finish
/// before it gives up with exit 6, so two cron jobs that overlap (a slow upload, a laptop
/// waking with two runs due) do one after the other instead of failing one of them.
enum WaitLock {
    static let option = "--wait-lock"

    /// The option's help lines, aligned at `column` like its neighbours.
    static func help(column: Int) -> String {
        HelpLine.option(
            "\(option) DURATION", column: column,
            "wait up to DURATION (90s, 10m, 1h30m) for another run of the",
            "profile to finish (default: exit 6 at once)")
    }

    /// Seconds to wait; 0 when the option is absent (exit 6 at once, as before).
    static func seconds(_ arguments: inout Arguments) throws(CLIError) -> Double {
        try arguments.option(
            option, expecting: "a duration such as 90s, 10m or 1h30m (at most 24h)", seconds(in:)
        ) ?? 0
    }

    /// `90`, `90s`, `10m`, `1h30m`: hours, minutes and seconds in that order, each at most
    /// once, as Go's durations (restic's `--retry-lock`) read them; at most a day.
    static func seconds(in text: String) -> Double? {
        if let plain = Int(text) { return (0...86_400).contains(plain) ? Double(plain) : nil }
        var total = 0
        var number = ""
        var units = Array("hms")[...]
        for character in text {
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            guard let value = Int(number), let at = units.firstIndex(of: character) else {
                return nil
            }
            total += value * [3_600, 60, 1][at]
            units = units[(at + 1)...]
            number = ""
        }
        guard number.isEmpty, !text.isEmpty, total <= 86_400 else { return nil }
        return Double(total)
    }
}
