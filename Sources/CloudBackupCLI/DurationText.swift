/// `90`, `90s`, `10m`, `1h30m`, `2d`: the one reading of a DURATION option (`--wait-lock`,
/// `status --max-age`), so every option takes the same words.
enum DurationText {
    /// Days, hours, minutes and seconds in that order, each at most once, as Go's durations
    /// (restic's `--retry-lock`) read them, plus days for ages measured in them; a bare number
    /// is seconds. nil for anything else or more than `limit` seconds.
    static func seconds(in text: String, atMost limit: Int) -> Int? {
        if let plain = Int(text) { return (0...limit).contains(plain) ? plain : nil }
        var total = 0
        var number = ""
        var units = Array("dhms")[...]
        for character in text {
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            guard let value = Int(number), let at = units.firstIndex(of: character),
                value <= limit
            else {
                return nil
            }
            total += value * [86_400, 3_600, 60, 1][at]
            units = units[(at + 1)...]
            number = ""
        }
        guard number.isEmpty, !text.isEmpty, total <= limit else { return nil }
        return total
    }
}
