import BackupKit
import Digests
import LocalFiles
import Parallel

/// `cloudbackup merge LOCAL INCOMING -o OUT`: the sync of FORMAT.md §5.1 on two local files.
struct MergeCommand: QuietCommand {
    static let name = "merge"
    static let summary = "merge a backup into a local file: newest edit wins per item"
    static let operands = ["LOCAL", "INCOMING"]
    static var options: [OptionGroup] {
        OptionSpec.output.described("where to write the result (LOCAL itself is fine)")
        OptionSpec.replace.described(
            "take INCOMING as it is (a restore, not a merge); premium, app lock and device id still stay LOCAL's"
        )
        OptionSpec.dryRun.described("show the counts, write no OUT (a --log line still says so)")
        OptionSpec.explain
        OptionSpec.json.described("print only the report object on stdout")
        OptionSpec.quiet.described("no report, on stdout or stderr: the exit status tells")
        OptionSpec.allowStale.described(
            "let in what the stale guard holds back: items missing here and older than the window, from a file that predates it"
        )
        OptionSpec.clockGuard
        OptionSpec.window
        OptionSpec.now.described("the clock to measure against (default: the system clock)")
        OptionSpec.log
        OptionSpec.maxBytes
    }
    static let about = """
        Merges INCOMING (a backup) into LOCAL and writes the result to OUT atomically.
        Per challenge and per day log the copy with the newer updatedAt wins; a delete
        (tombstone) keeps an item deleted unless it was edited after the delete; the day
        logs of a deleted challenge are kept under its tombstone, and come back if an edit
        after the delete revives it; tombstones older than the window are forgotten, with
        the day logs kept under them; settings stay LOCAL's. Both files are validated
        first: an invalid one writes nothing (exit 3). LOCAL or INCOMING (not both) may
        be - for standard input; OUT may be - for standard output, written as it goes
        (not atomically) and holding only the document: the report goes to stderr. A
        file called - is ./-. An OUT named *.gz is written as gzip (LOCAL and INCOMING
        may be gzip whatever their names). Other than -, LOCAL and INCOMING must be
        regular files: a pipe such as <(zcat f.gz) is refused (exit 3).

        --log FILE must be a file of its own (not LOCAL, INCOMING or OUT). Each line goes in
        with one write, and one that does not fit (a full disk) is cut back off, so the log
        keeps whole lines; the run then says cannot append and exits 1, with OUT written.
        """
    static let note: String? = """
        In the counts, day logs "kept under a tombstone" are those in OUT whose challenge is
        deleted; "dropped with an expired tombstone", those that went with a tombstone older
        than the window (with --replace: "dropped (not in the backup, or under an expired
        tombstone)", also LOCAL's day logs that INCOMING lacks). --explain lists a day log
        that became kept or came in kept, and one that returns with its revived challenge;
        --json and the --log line give both counts as keptUnderTombstone and droppedOrphans.
        """
    static let exits =
        Exit.always + [
            Exit(.invalidFile, "nothing written"),
            Exit(.refused, "a file was written by a newer version"),
        ]

    var localPath: String
    var incomingPath: String
    var outputPath: String?
    var clock: ClockOptions
    var mode: MergeOptions.Mode
    var dryRun: Bool
    var explain: Bool
    var json: Bool
    let quiet: Bool
    var allowStale: Bool
    var clockGuard: Bool
    var logPath: String?
    var readOptions: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        readOptions = try BackupFile.readOptions(&arguments)
        mode = arguments.flag(.replace) ? .replace : .merge
        dryRun = arguments.flag(.dryRun)
        explain = arguments.flag(.explain)
        json = arguments.flag(.json)
        quiet = arguments.flag(.quiet)
        allowStale = arguments.flag(.allowStale)
        clockGuard = arguments.flag(.clockGuard)
        logPath = try arguments.option(.log)
        outputPath = try arguments.option(.output)
        clock = try ClockOptions(arguments: &arguments)
        let paths = try arguments.positionals(exactly: ["LOCAL", "INCOMING"])
        localPath = paths[0]
        incomingPath = paths[1]
        try BackupFile.requireOneStandardInput(paths, usage: Self.usage)
        if outputPath == nil, !dryRun {
            throw .usage("missing -o OUT (or --dry-run to write nothing)", Self.usage)
        }
        if explain, json {
            throw .usage(
                "--explain and --json do not mix: --json prints only the report", Self.usage)
        }
        // The log is appended to: naming a document there would break that document.
        if let logPath,
            let named = [localPath, incomingPath, outputPath].compactMap({ $0 }).first(where: {
                LocalFile.isSameFile(logPath, $0)
            })
        {
            throw .usage(
                "--log \(logPath) is also \(named), a backup; give the log a file of its own",
                Self.usage)
        }
        // FORMAT.md §5.2: a replace has no guard, so the flag would hold nothing back.
        if clockGuard, mode == .replace {
            throw .usage(
                "--clock-guard does not apply to --replace: a replace takes INCOMING as it is",
                Self.usage)
        }
    }

    func run(in context: Context) throws {
        // Both files are loaded at once, then decoded one after the other, each decode on
        // both cores. One at a time, each file's bytes are let go once decoded, so the two
        // inputs are never held beside both documents.
        let fileOptions = readOptions
        let load = { @Sendable [fileOptions] (path: String) in
            Result { () throws(CLIError) in
                try BackupFile.loadBytes(path, options: fileOptions, in: context)
            }
        }
        let (localPath, incomingPath) = (localPath, incomingPath)
        let (localBytes, incomingBytes) = concurrently(
            { load(localPath) }, { load(incomingPath) })
        let local = try input(
            (consume localBytes).get(), file: BackupFile.shown(localPath), options: fileOptions)
        let incoming = try input(
            (consume incomingBytes).get(), file: BackupFile.shown(incomingPath),
            options: fileOptions)
        let options = MergeOptions(
            now: clock.now, windowDays: clock.windowDays, mode: mode, allowStale: allowStale,
            clockGuard: clockGuard)
        let outcome = BackupKit.merge(
            local: local.result.document, incoming: incoming.result.document, options: options)
        defer { context.leaveForExit((local, incoming, outcome)) }

        for line in warnings(outcome, incoming: incoming.result.document) {
            context.printError(line)
        }
        // Written before anything goes to stdout: a run whose write fails prints its error
        // alone, not a report that reads like a success.
        if !dryRun, let outputPath {
            try BackupFile.save(outcome.document, to: outputPath, in: context)
        }
        // Stdout holds the document when OUT is `-`: the report goes to stderr.
        let toStdout = dryRun || outputPath != BackupFile.standardStream
        // Quiet: not on stderr either, where the report goes beside a document on stdout.
        let quiet = quiet
        func say(_ line: String) {
            guard !quiet else { return }
            if toStdout { context.print(line) } else { context.printError(line) }
        }
        if json {
            say(outcome.report.json)
        } else {
            for line in Self.plainWords(outcome.report, mode: mode) { say(line) }
            if explain {
                for decision in outcome.decisions { say("  \(decision)") }
            }
        }
        if dryRun {
            if !json { say("dry run: nothing written") }
        } else if let outputPath, !json, toStdout {
            say("wrote \(outputPath.onOneLine)")
        }
        if let logPath {
            let line = logLine(outcome, local: local, incoming: incoming)
            do {
                try LocalFile.appendLine(line, to: logPath)
            } catch {
                throw CLIError.logNotWritten(
                    error, path: logPath,
                    after: "the merge itself \(dryRun ? "was a dry run" : "was written")")
            }
        }
    }

    /// `challenges: 1 added, 2 updated, 1 kept deleted`: the non-zero counts in plain words.
    /// A merge drops a day log only when its challenge is neither live nor deleted (its
    /// tombstone expired); a replace also drops every local day log the backup lacks. The
    /// report has one count for both (`droppedOrphans`), so only the words differ.
    static func plainWords(_ report: MergeReport, mode: MergeOptions.Mode) -> [String] {
        let dropped =
            mode == .replace
            ? "dropped (not in the backup, or under an expired tombstone)"
            : "dropped with an expired tombstone"
        func line(_ noun: String, _ counts: [(Int, String)]) -> String {
            let parts = counts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            return "\(noun): " + (parts.isEmpty ? "none" : parts.joined(separator: ", "))
        }
        let challenges = report.challenges
        let dayLogs = report.dayLogs
        let tombstones = report.tombstones
        return [
            line(
                "challenges",
                [
                    (challenges.added, "added"), (challenges.updated, "updated"),
                    (challenges.unchanged, "unchanged"), (challenges.deleted, "deleted"),
                    (challenges.keptDeleted, "kept deleted"), (challenges.revived, "revived"),
                    (challenges.heldBack, "held back"),
                ]),
            line(
                "day logs",
                [
                    (dayLogs.added, "added"), (dayLogs.updated, "updated"),
                    (dayLogs.unchanged, "unchanged"),
                    (dayLogs.keptUnderTombstone, "kept under a tombstone"),
                    (dayLogs.droppedOrphans, dropped),
                    (dayLogs.heldBack, "held back"),
                ]),
            line(
                "tombstones",
                [
                    (tombstones.added, "added"), (tombstones.unchanged, "unchanged"),
                    (tombstones.expired, "expired"), (tombstones.heldBack, "held back"),
                ]),
        ]
    }

    /// What a person must see on stderr, one line each: stale items held back (and how to
    /// let them in), future-stamped items.
    func warnings(_ outcome: MergeOutcome, incoming: BackupDocument) -> [String] {
        var lines: [String] = []
        if let line = Self.heldBackAsStale(
            outcome, incoming: incoming, named: BackupFile.shown(incomingPath), now: clock.now,
            windowDays: clock.windowDays)
        {
            lines.append(line)
        }
        let shown = 10
        for item in outcome.futureStamped.prefix(shown) {
            let what = MergeWarning.futureStamped(item, in: BackupFile.shown(incomingPath))
            switch (mode, clockGuard) {
            case (.replace, _): lines.append("warning: \(what)")
            case (.merge, true): lines.append("held back \(what)")
            case (.merge, false):
                lines.append("warning: \(what) (--clock-guard holds such items back)")
            }
        }
        if let more = MergeWarning.andMore(
            shown, of: outcome.futureStamped.count, "future-stamped item(s)")
        {
            lines.append("…" + more)
        }
        return lines
    }

    /// The stale guard's line (FORMAT.md §5.3): what of `incoming` was held back, why, and how to
    /// let it in; nil when nothing was. `restore --json` says it too.
    static func heldBackAsStale(
        _ outcome: MergeOutcome, incoming: BackupDocument, named name: String, now: Timestamp,
        windowDays: Int
    ) -> String? {
        let stale = outcome.decisions.filter { $0.reason == .stale }
        guard !stale.isEmpty else { return nil }
        let challenges = stale.filter { if case .challenge = $0.item { true } else { false } }
            .count
        let age = now.millisecondsSince1970 - incoming.exportedAt.millisecondsSince1970
        return MergeWarning.heldBack(
            "\(challenges) challenge(s) and \(stale.count - challenges) day log(s) of \(name)",
            reason: MergeWarning.staleReason(
                "it", when: "\(age / Timestamp.millisecondsPerDay) days ago",
                windowDays: windowDays, missing: "missing here", count: stale.count),
            advice: MergeWarning.allowStale)
    }

    /// A decoded input, with what the `--log` line says of its bytes.
    struct Input {
        var result: ReadResult
        var size: Int
        /// Hex SHA-256 of the bytes, taken only when there is a log to write.
        var sha256: String?
    }

    private func input(_ bytes: consuming [UInt8], file: String, options: ReadOptions)
        throws(CLIError) -> Input
    {
        let size = bytes.count
        let sha256 = logPath == nil ? nil : Digest.hex(Digest.sha256(bytes))
        return Input(
            result: try BackupFile.decode(consuming: bytes, file: file, options: options),
            size: size, sha256: sha256)
    }

    /// One JSON line for `--log`: when, which inputs (device, size, SHA-256), the counts and
    /// every non-trivial decision with both sides' stamps.
    func logLine(
        _ outcome: MergeOutcome, local: Input, incoming: Input
    ) -> [UInt8] {
        var out = JSONOutput()
        out.beginObject()
        out.key("time")
        out.timestamp(clock.now)
        out.key("mode")
        out.string(mode.rawValue)
        out.key("dryRun")
        out.bool(dryRun)
        for (name, path, input) in [
            ("local", localPath, local), ("incoming", incomingPath, incoming),
        ] {
            out.key(text: name)
            out.beginObject()
            out.key("path")
            out.string(path)
            out.key("deviceId")
            out.string(input.result.document.deviceId.rawValue)
            out.key("exportedAt")
            out.timestamp(input.result.document.exportedAt)
            out.key("bytes")
            out.integer(input.size)
            out.key("sha256")
            out.string(input.sha256 ?? "")
            out.endObject()
        }
        out.key("output")
        if let outputPath, !dryRun { out.string(outputPath) } else { out.null() }
        out.key("report")
        outcome.report.write(into: &out)
        out.key("decisions")
        DecisionLog.write(outcome.decisions, into: &out)
        out.endObject()
        return out.bytes
    }
}

/// The options only `merge` takes.
extension OptionSpec {
    fileprivate static let explain = OptionSpec(
        name: "--explain", help: "list every decision that was not trivial, and why")
    fileprivate static let clockGuard = OptionSpec(
        name: "--clock-guard",
        help:
            "hold back incoming items stamped more than 24 h after now (not with --replace, which has no guards)"
    )
    fileprivate static let log = OptionSpec(
        name: "--log", value: "FILE", help: "append one JSON line describing this merge to FILE"
    )
}
