/// The one small argument parser: commands pull the flags and options they know, then
/// `finish()` rejects anything left over. Options take their value as `--name value` or
/// `--name=value`; `--` ends options. `-q`, `-v` and `-n` are `--quiet`, `--verbose` and
/// `--dry-run` wherever a command takes the long flag.
public struct Arguments: Sendable {
    private var items: [String]
    private var positionalOnlyFrom: Int?
    /// Every flag and option a command asked for, so an unknown one can be told the nearest.
    private var known: [String] = []
    static let shortFlags = ["--quiet": "-q", "--verbose": "-v", "--dry-run": "-n"]
    public let usage: String

    /// `options`: every option the command takes (its help lists them), so a typo is told
    /// the nearest even before the command has asked for it.
    public init(_ items: [String], usage: String, options: [String] = []) {
        self.items = items
        self.usage = usage
        self.known = options
        self.positionalOnlyFrom = items.firstIndex(of: "--")
    }

    private func isOptionIndex(_ index: Int) -> Bool {
        positionalOnlyFrom.map { index < $0 } ?? true
    }

    /// True when `name` was given (once or more); removes it.
    public mutating func flag(_ name: String) -> Bool {
        known.append(name)
        let short = Self.shortFlags[name]
        var found = false
        var index = 0
        while index < items.count {
            if isOptionIndex(index), items[index] == name || items[index] == short {
                remove(at: index)
                found = true
            } else {
                index += 1
            }
        }
        return found
    }

    /// The value of `--name value` or `--name=value`; the last one wins.
    public mutating func option(_ name: String) throws(CLIError) -> String? {
        known.append(name)
        var value: String?
        var index = 0
        while index < items.count {
            guard isOptionIndex(index) else { break }
            let item = items[index]
            if item == name {
                guard index + 1 < items.count, isOptionIndex(index + 1) || items[index + 1] != "--"
                else { throw .usage("\(name) needs a value", usage) }
                value = items[index + 1]
                remove(at: index)
                remove(at: index)
            } else if item.hasPrefix(name + "=") {
                value = String(item.dropFirst(name.count + 1))
                remove(at: index)
            } else {
                index += 1
            }
        }
        return value
    }

    /// The value of an option the command cannot run without. When it is missing, an
    /// unknown option given instead is the likelier mistake (`--fiel x`), so that is named
    /// first, with its suggestion.
    public mutating func required(_ name: String, _ placeholder: String) throws(CLIError)
        -> String
    {
        if let value = try option(name) { return value }
        try refuseUnknownOptions()
        throw .usage("\(name) \(placeholder) is required", usage)
    }

    /// `--quiet` and `--verbose` (`-q`, `-v`), which exclude each other.
    public mutating func quietOrVerbose() throws(CLIError) -> (quiet: Bool, verbose: Bool) {
        let (quiet, verbose) = (flag("--quiet"), flag("--verbose"))
        guard !(quiet && verbose) else {
            throw .usage("--quiet and --verbose exclude each other", usage)
        }
        return (quiet, verbose)
    }

    /// An option converted by `parse`, which returns nil for a value it does not accept.
    public mutating func option<T>(
        _ name: String, expecting what: String, _ parse: (String) -> T?
    ) throws(CLIError) -> T? {
        guard let text = try option(name) else { return nil }
        guard let value = parse(text) else {
            throw .usage("\(name) expects \(what), not '\(text)'", usage)
        }
        return value
    }

    private mutating func remove(at index: Int) {
        items.remove(at: index)
        if let end = positionalOnlyFrom, index < end { positionalOnlyFrom = end - 1 }
    }

    /// Everything left, which must all be positional; an unknown option is a usage error.
    public mutating func positionals() throws(CLIError) -> [String] {
        try refuseUnknownOptions()
        let result = items.enumerated().filter { $0.offset != positionalOnlyFrom }.map(\.element)
        items.removeAll()
        return result
    }

    /// The first option left that the command does not take, refused with the nearest one
    /// it does. One it takes but has not asked for yet is left for it.
    func refuseUnknownOptions() throws(CLIError) {
        for (index, item) in items.enumerated() where index != positionalOnlyFrom {
            guard isOptionIndex(index), item.hasPrefix("-"), item != "-" else { continue }
            let typed = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? item
            let long = Self.shortFlags.first { $0.value == typed }?.key ?? typed
            if known.contains(long) { continue }
            throw .usage(
                Suggestion.appending(
                    to: "unknown option '\(item)'", for: typed,
                    among: known.filter { $0.hasPrefix("--") }),
                usage)
        }
    }

    /// Exactly `count` positionals named by `names` (for the message).
    public mutating func positionals(exactly names: [String]) throws(CLIError) -> [String] {
        let values = try positionals()
        guard values.count == names.count else {
            let expected = names.map { "<\($0)>" }.joined(separator: " ")
            throw .usage(
                values.count < names.count
                    ? "missing \(expected.isEmpty ? "argument" : expected)"
                    : "unexpected argument '\(values[names.count])'", usage)
        }
        return values
    }
}
