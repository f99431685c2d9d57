/// "Did you mean": the known word nearest a mistyped one, when it is near enough to be a
/// slip of the keys (`bakup`, `--dryrun`) and not a different word: at most two edits, and
/// no more than a third of what was typed, so `ls` does not become `login`.
enum Suggestion {
    /// The candidate nearest `typed`, or nil when none is near enough (ties: the first).
    static func nearest(to typed: String, among candidates: [String]) -> String? {
        let limit = min(2, typed.count / 3)
        var best: (word: String, distance: Int)?
        for candidate in candidates where candidate != typed {
            let distance = editDistance(Array(typed), Array(candidate))
            if distance <= limit, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.word
    }

    /// `message`, followed by the suggestion for `typed` when there is one.
    static func appending(to message: String, for typed: String, among candidates: [String])
        -> String
    {
        guard let word = nearest(to: typed, among: candidates) else { return message }
        return message + "; did you mean '\(word)'?"
    }

    /// Levenshtein distance: insertions, deletions and substitutions, one row at a time.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var row = [i + 1]
            for (j, y) in b.enumerated() {
                row.append(min(previous[j + 1] + 1, row[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = row
        }
        return previous[b.count]
    }
}
