import BackupKit

/// `cloudbackup verify FILE`: is a backup older than the tombstone window, and what would
/// merging it into STATE hold back or bring back?
struct VerifyCommand: QuietCommand {
    static let name = "verify"
    static let summary = "tell whether a backup predates the tombstone window"
    static let operands = ["FILE"]
    static var options: [OptionGroup] {
        OptionSpec.against
        OptionSpec.window
        OptionSpec.now.described("the clock to measure against (default: the system clock)")
        OptionSpec.json.described("print one JSON object instead of sentences")
        OptionSpec.quiet.described("print nothing: the exit status tells")
        OptionSpec.maxBytes
    }
    static let about = """
        Says when FILE was exported (a schema-1 file: its newest stamp) and whether that is
        before the tombstone window. Deletes older than the window are forgotten, so an item
        in such a file may be a delete this device no longer remembers. FILE or STATE
        (not both) may be - for standard input; a file called - is ./-. Any other must
        be a regular file: a pipe such as <(zcat f.gz) is refused (exit 3), and a gzipped
        file is read as the document it holds, whatever its name.
        """
    static let exits = [
        Exit(.success, "FILE is inside the window"), Exit(.failure), Exit(.usage),
        Exit(.invalidFile, "FILE or STATE is invalid or unreadable"),
        Exit(.refused, "FILE predates the window, or was written by a newer version"),
    ]

    var path: String
    var againstPath: String?
    var clock: ClockOptions
    var json: Bool
    let quiet: Bool
    var readOptions: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        readOptions = try BackupFile.readOptions(&arguments)
        json = arguments.flag(.json)
        quiet = arguments.flag(.quiet)
        againstPath = try arguments.option(.against)
        clock = try ClockOptions(arguments: &arguments)
        path = try arguments.positionals(exactly: ["FILE"])[0]
        try BackupFile.requireOneStandardInput([path, againstPath], usage: Self.usage)
    }

    /// A challenge a merge would hold back or revive.
    struct Finding {
        var id: ChallengeID
        var decision: MergeDecision
        var explanation: String
        /// Revived: the day logs kept under its tombstone in STATE, which come back with it.
        var keptDayLogs = 0
    }

    func run(in context: Context) throws {
        let file = try BackupFile.load(path, options: readOptions, in: context)
        let name = BackupFile.shown(path)
        let exportedAt = file.document.exportedAt
        let options = MergeOptions(now: clock.now, windowDays: clock.windowDays)
        let predates = exportedAt < options.windowStart
        let ageDays =
            (clock.now.millisecondsSince1970 - exportedAt.millisecondsSince1970)
            / Timestamp.millisecondsPerDay

        var heldBack: [Finding] = []
        var revived: [Finding] = []
        if let againstPath {
            let state = try BackupFile.load(againstPath, options: readOptions, in: context)
            let outcome = BackupKit.merge(
                local: state.document, incoming: file.document, options: options)
            // STATE holds the revived challenges' tombstones, so all their day logs there
            // are kept ones, and every one returns (as it is or as FILE's newer copy).
            let logs = state.document.dayLogs
            let keptHere = Dictionary(
                grouping: logs.indices.lazy.map { logs.key(at: $0).challengeID }, by: { $0 }
            ).mapValues(\.count)
            for decision in outcome.decisions {
                guard case .challenge(let id) = decision.item else { continue }
                switch decision.reason {
                case .stale:
                    let edited = decision.incoming.map { "last edited \($0.stamp)" } ?? "old"
                    heldBack.append(
                        Finding(
                            id: id, decision: decision,
                            explanation:
                                "missing here and \(edited), before the window: "
                                + MergeWarning.forgottenDeletes(1)
                        ))
                case .editedAfterDelete where decision.winner == .incoming:
                    let kept = keptHere[id] ?? 0
                    revived.append(
                        Finding(
                            id: id, decision: decision,
                            explanation: "edited after its delete here, so a merge brings it back"
                                + (kept > 0
                                    ? ", with the \(kept) day log(s) kept under its tombstone here"
                                    : ""),
                            keptDayLogs: kept))
                default:
                    continue
                }
            }
        }

        if json {
            var out = JSONOutput()
            out.beginObject()
            out.key("file")
            out.string(name)
            out.key("schemaVersion")
            out.integer(file.sourceVersion)
            out.key("exportedAt")
            out.timestamp(exportedAt)
            out.key("ageDays")
            out.integer(Int(ageDays))
            out.key("windowDays")
            out.integer(clock.windowDays)
            out.key("windowStart")
            out.timestamp(options.windowStart)
            out.key("predatesWindow")
            out.bool(predates)
            if againstPath != nil {
                for (name, findings) in [("heldBack", heldBack), ("revived", revived)] {
                    out.key(text: name)
                    out.beginArray()
                    for finding in findings {
                        out.beginObject()
                        out.key("id")
                        out.string(finding.id.rawValue)
                        out.key("reason")
                        out.string(finding.decision.reason.rawValue)
                        out.key("updatedAt")
                        out.timestamp(finding.decision.incoming?.stamp)
                        out.key("deletedAt")
                        out.timestamp(
                            finding.decision.local.flatMap { $0.isTombstone ? $0.stamp : nil })
                        if name == "revived" {
                            out.key("keptDayLogs")
                            out.integer(finding.keptDayLogs)
                        }
                        out.endObject()
                    }
                    out.endArray()
                }
            }
            out.endObject()
            context.print(String(decoding: out.bytes, as: UTF8.self))
        } else {
            let when = file.sourceVersion == 1 ? "newest stamp" : "exported"
            context.print(
                "\(name.onOneLine): \(when) \(WallTime.text(exportedAt)) (\(Self.age(days: ageDays))), by device \(file.document.deviceId)"
            )
            context.print(
                predates
                    ? "predates the \(clock.windowDays)-day window (which starts \(options.windowStart)): "
                        + "deletes older than the window are forgotten, so merging it can bring deleted items back"
                    : "inside the \(clock.windowDays)-day window (which starts \(options.windowStart))"
            )
            if let againstPath {
                context.print("merging it into \(BackupFile.shown(againstPath).onOneLine) would:")
                if heldBack.isEmpty && revived.isEmpty {
                    context.print("  hold back nothing and revive nothing")
                }
                for finding in heldBack {
                    context.print("  hold back challenge \(finding.id) (\(finding.explanation))")
                }
                for finding in revived {
                    let stamps = [finding.decision.local, finding.decision.incoming].compactMap {
                        $0?.description
                    }
                    context.print(
                        "  revive challenge \(finding.id) (\(finding.explanation); \(stamps.joined(separator: ", ")))"
                    )
                }
            }
        }
        if predates {
            throw CLIError.predatesWindow(name, windowDays: clock.windowDays)
        }
    }

    static func age(days: Int64) -> String {
        switch days {
        case ..<0: return "in the future"
        case 0: return "today"
        case 1: return "1 day ago"
        default: return "\(days) days ago"
        }
    }
}

/// The options only `verify` takes.
extension OptionSpec {
    fileprivate static let against = OptionSpec(
        name: "--against", value: "STATE",
        help:
            "also list the challenges a merge of FILE into STATE would hold back or revive, and why, and how many day logs kept under a revived challenge's tombstone in STATE would come back with it"
    )
}
