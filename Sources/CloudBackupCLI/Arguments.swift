/// The one small argument parser: `check()` holds the command line against the command's
/// declared options (unknown ones, conflicts, required ones), then the command pulls the
/// flags and options it takes, and `positionals()` rejects anything left over. Options take
/// their value as `--name value` or `--name=value`; `--` ends options; an option declared with
/// a one-letter name (`-q`, `-o`) takes that too.
public struct Arguments: Sendable {
    private var items: [String]
    private var positionalOnlyFrom: Int?
    /// Every flag and option the command declares or asked for, so an unknown one can be told
    /// the nearest.
    private var known: [String]
    /// The command's option groups, as declared.
    private let groups: [OptionGroup]
    /// The one-letter name of each long one that has one.
    private let shortNames: [String: String]
    public let usage: String

    /// `groups`: every option the command takes, so a typo is told the nearest even before
    /// the command has asked for it.
    init(_ items: [String], usage: String, groups: [OptionGroup] = []) {
        self.items = items
        self.usage = usage
        self.groups = groups
        known = groups.options.map(\.name)
        shortNames = Dictionary(
            groups.options.compactMap { option in option.short.map { (option.name, $0) } },
            uniquingKeysWith: { first, _ in first })
        positionalOnlyFrom = items.firstIndex(of: "--")
    }

    /// The command line against the declarations, before the command reads it: an unknown
    /// option (told the nearest), then two options of a group that excludes them, then a
    /// required option or group that is missing.
    func check() throws(CLIError) {
        try refuseUnknownOptions()
        for group in groups {
            let given = group.members.filter(isGiven).count
            if given > 1 || (group.isRequired && given == 0) {
                throw .usage(group.conflictMessage, usage)
            }
            let option = group.members[0]
            if group.members.count == 1, option.presence == .required, given == 0 {
                throw .usage("\(option.spelledInUsage) is required", usage)
            }
            for member in group.members where isGiven(member) {
                if let exclusion = member.exclusion, exclusion.others.contains(where: isGiven) {
                    throw .usage(exclusion.message, usage)
                }
            }
        }
    }

    /// Whether the command line names `option`, in any of its spellings.
    private func isGiven(_ option: OptionSpec) -> Bool {
        items.indices.contains { index in
            guard isOptionIndex(index) else { return false }
            let item = items[index]
            return item == option.name || item == option.short
                || (option.value != nil && item.hasPrefix(option.name + "="))
        }
    }

    private func isOptionIndex(_ index: Int) -> Bool {
        positionalOnlyFrom.map { index < $0 } ?? true
    }

    /// True when `option` was given (once or more); removes it.
    mutating func flag(_ option: OptionSpec) -> Bool {
        let name = option.name
        known.append(name)
        let short = option.short
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
    mutating func option(_ option: OptionSpec) throws(CLIError) -> String? {
        let name = option.name
        known.append(name)
        let short = option.short
        var value: String?
        var index = 0
        while index < items.count {
            guard isOptionIndex(index) else { break }
            let item = items[index]
            if item == name || item == short {
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

    /// The value of an option declared required, which `check()` has found.
    mutating func required(_ option: OptionSpec) throws(CLIError) -> String {
        guard let value = try self.option(option) else {
            preconditionFailure("\(option.name) is declared required, and check() ran first")
        }
        return value
    }

    /// The one option of a required group that was given, which `check()` has found.
    mutating func one(of options: OptionSpec...) -> OptionSpec {
        guard let given = options.first(where: { flag($0) }) else {
            preconditionFailure("a required group was not given, and check() ran first")
        }
        return given
    }

    /// An option converted by `parse`, which returns nil for a value it does not accept.
    mutating func option<T>(
        _ option: OptionSpec, expecting what: String, _ parse: (String) -> T?
    ) throws(CLIError) -> T? {
        guard let text = try self.option(option) else { return nil }
        guard let value = parse(text) else {
            throw .usage("\(option.name) expects \(what), not '\(text)'", usage)
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
            let long = shortNames.first { $0.value == typed }?.key ?? typed
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
