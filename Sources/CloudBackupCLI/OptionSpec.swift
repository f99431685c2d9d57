import BackupKit

/// One option of the command line, declared once: what the parser accepts, and what the usage
/// line, `--help`, the man page and the completion scripts say about it (all of them are made
/// from these declarations, so none can offer an option the parser refuses or miss one).
struct OptionSpec: Sendable, Equatable {
    /// Whether a command cannot run without the option.
    enum Presence: Sendable, Equatable {
        case optional
        /// Checked before the command runs: `--file STATE is required`.
        case required
        /// Shown as required, checked by the command, which knows when it may be left out
        /// (`merge` writes no OUT with `--dry-run`).
        case requiredUnlessSaid
    }

    /// The long name, `--output`.
    let name: String
    /// The one-letter name, `-o`, where the option has one.
    var short: String?
    /// The value's placeholder, `OUT`; nil for a flag.
    var value: String?
    /// What the option does, on one line: the help wraps it.
    var help: String
    var presence = Presence.optional
    /// Options that cannot be given with this one, and what the refusal says.
    var exclusion: Exclusion?

    /// Options that cannot come with this one, and the refusal's words.
    struct Exclusion: Sendable, Equatable {
        var others: [OptionSpec]
        var message: String
    }

    /// The placeholders that name a file, whose values completions offer file names for.
    static let fileValues: Set = ["FILE", "STATE", "OUT", "DIR"]

    var takesFile: Bool { value.map(Self.fileValues.contains) ?? false }

    /// Both names, short first, as the help and the man page list them.
    var names: [String] { [short, name].compactMap { $0 } }

    /// The option as the usage line spells it: a valued option with a one-letter name by that
    /// name (`-o OUT`), any other by its long one (`--file STATE`, `--quiet`).
    var spelledInUsage: String {
        let shown = value != nil ? short ?? name : name
        return value.map { "\(shown) \($0)" } ?? shown
    }

    /// The option as the help's first column spells it: `-o, --output OUT`.
    var spelledInHelp: String {
        names.joined(separator: ", ") + (value.map { " " + $0 } ?? "")
    }

    /// The same option with this command's own description.
    func described(_ help: String) -> OptionSpec {
        var option = self
        option.help = help
        return option
    }

    /// The same option, refused beside any of `others` with `message`.
    func excluding(_ others: OptionSpec..., message: String) -> OptionSpec {
        var option = self
        option.exclusion = Exclusion(others: others, message: message)
        return option
    }

    /// The same option, which the command cannot run without.
    var required: OptionSpec {
        var option = self
        option.presence = .required
        return option
    }
}

/// Options shown and checked together: one alone, or several that exclude each other
/// (`[--quiet | --verbose]`; `(--merge | --replace)` when exactly one must be given).
struct OptionGroup: Sendable {
    var members: [OptionSpec]
    /// Exactly one of several must be given.
    var isRequired = false
    /// What a conflict is called when the plain "--a and --b exclude each other" says too
    /// little.
    var conflict: String?

    init(_ option: OptionSpec) {
        members = [option]
    }

    private init(members: [OptionSpec], isRequired: Bool, conflict: String?) {
        self.members = members
        self.isRequired = isRequired
        self.conflict = conflict
    }

    /// Options of which at most one may be given, or, `required`, exactly one.
    static func oneOf(_ members: OptionSpec..., required: Bool = false, conflict: String? = nil)
        -> OptionGroup
    {
        OptionGroup(members: members, isRequired: required, conflict: conflict)
    }

    /// The group as the usage line shows it.
    var usage: String {
        let spelled = members.map(\.spelledInUsage).joined(separator: " | ")
        if members.count > 1 { return isRequired ? "(\(spelled))" : "[\(spelled)]" }
        return members[0].presence == .optional ? "[\(spelled)]" : spelled
    }

    /// The message for giving more than one, or none of a required group.
    var conflictMessage: String {
        if let conflict { return conflict }
        let names = members.map(\.name)
        return isRequired
            ? "say \(names.joined(separator: " or ")) (exactly one)"
            : "\(names.joined(separator: " and ")) exclude each other"
    }
}

/// The options several commands take, each declared here once. A command may describe one in
/// its own words (`described`), never rename it or its value.
extension OptionSpec {
    static let profile = OptionSpec(
        name: "--profile", value: "NAME", help: "the profile to use (default: default)")
    static let file = OptionSpec(name: "--file", value: "STATE", help: "the local state file")
    static let now = OptionSpec(
        name: "--now", value: "T",
        help: "the time for the tombstone window, RFC 3339 (default: now)")
    static let quiet = OptionSpec(
        name: "--quiet", short: "-q", help: "print nothing on stdout: the exit status tells")
    static let verbose = OptionSpec(
        name: "--verbose", short: "-v", help: "trace each HTTP exchange (tokens redacted)")
    static let dryRun = OptionSpec(
        name: "--dry-run", short: "-n", help: "only show the counts; write nothing anywhere")
    static let json = OptionSpec(name: "--json", help: "print one JSON object instead of text")
    static let output = OptionSpec(
        name: "--output", short: "-o", value: "OUT", help: "where to write",
        presence: .requiredUnlessSaid)
    static let window = OptionSpec(
        name: "--window", value: "DAYS", help: "the tombstone window (default 90)")
    static let allowStale = OptionSpec(
        name: "--allow-stale",
        help: "let in items the stale guard holds back (a backup older than the window)")
    static let replace = OptionSpec(
        name: "--replace", help: "take the backup as it is (a restore, not a merge)")
    static let help = OptionSpec(name: "--help", short: "-h", help: "show the command's options")
    static let version = OptionSpec(name: "--version", short: "-V", help: "print the version")
    static let yes = OptionSpec(
        name: "--yes", help: "do not ask before writing (asked only on a terminal)")
    static let maxBytes = OptionSpec(
        name: "--max-bytes", value: "N",
        help: "refuse files larger than N bytes (default \(ReadOptions().maxBytes), 256 MiB)")
    static let waitLock = OptionSpec(
        name: "--wait-lock", value: "DURATION",
        help: "wait up to DURATION (90s, 10m, 1h30m) for another run of the profile to finish"
            + " (default: exit 6 at once)")
    static let passwordFile = OptionSpec(
        name: "--password-file", value: "FILE",
        help: "the backup's passphrase (encrypted backups): FILE's first line")
    static let passwordCommand = OptionSpec(
        name: "--password-command", value: "CMD",
        help: "the same, printed by the shell command CMD")
    static let revision = OptionSpec(
        name: "--revision", value: "ID", help: "that revision of the backup")
    static let asOf = OptionSpec(
        name: "--as-of", value: "TIME",
        help: "the newest revision written at or before TIME: RFC 3339, or a date YYYY-MM-DD"
            + " meaning the end of that day in the local time zone")
}

extension OptionGroup {
    /// `--quiet` and `--verbose`, which exclude each other.
    static func verbosity(quiet: String? = nil, verbose: String? = nil) -> OptionGroup {
        .oneOf(
            quiet.map(OptionSpec.quiet.described) ?? .quiet,
            verbose.map(OptionSpec.verbose.described) ?? .verbose)
    }

    /// The keys that open an encrypted backup: a passphrase from a file or a command.
    static let keys = OptionGroup.oneOf(.passwordFile, .passwordCommand)

    /// An older revision of the backup, by id or by time.
    static let revision = OptionGroup.oneOf(.revision, .asOf)

    /// The same, in a command's own words.
    static func revision(id: String, asOf: String, required: Bool) -> OptionGroup {
        .oneOf(
            OptionSpec.revision.described(id), OptionSpec.asOf.described(asOf), required: required)
    }
}

extension Array where Element == OptionGroup {
    /// Every option of the groups, in the order they are declared.
    var options: [OptionSpec] { flatMap(\.members) }
}

/// Lets a command list its options one per line, single options and groups alike.
@resultBuilder
enum OptionsBuilder {
    static func buildExpression(_ option: OptionSpec) -> [OptionGroup] { [OptionGroup(option)] }
    static func buildExpression(_ group: OptionGroup) -> [OptionGroup] { [group] }
    static func buildExpression(_ groups: [OptionGroup]) -> [OptionGroup] { groups }
    static func buildBlock(_ parts: [OptionGroup]...) -> [OptionGroup] { parts.flatMap { $0 } }
}
