import TestSupport
import Testing

/// Each file command's `--help`, word for word.
@Suite struct FileCommandHelpTests {
    static let cases: [(command: String, help: String)] = [
        (
            "validate",
            """
            usage: cloudbackup validate FILE... [--json] [--quiet | --verbose] [--max-bytes N]

            Checks each backup FILE (any schema version) against every rule of the
            document format and prints every problem on stderr as FILE: /pointer: message,
            where /pointer is the JSON Pointer of the broken value. Prints nothing when
            all files are valid. A FILE of - is standard input, named <stdin> (a file
            called - is ./-); one FILE at most can be -. Any other FILE must be a regular
            file: a FIFO, socket or device (so a pipe such as <(zcat f.gz)) is refused at once;
            save it to a file, or give - and pipe it in.

            options:
              --json         print one JSON object on stdout instead: {"files": [...]}, each file's
                             name, "valid", and its "schemaVersion" or its "exitCode" and "problems"
                             (each a "pointer", the "rule" it breaks, a section of the format's
                             reference such as "3.6", and a "message"; a syntax error a "line" and
                             "column")
              -q, --quiet    print nothing but the problems, as without --verbose
              -v, --verbose  also say which files are valid, with their schema version, and note day
                             logs that do not fit their challenge (kept, but not counted for
                             streaks)
              --max-bytes N  refuse files larger than N bytes (default 268435456, 256 MiB)

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file
              7   refused: a file was written by a newer version
            With several files, the highest of their codes.

            """
        ),
        (
            "inspect",
            """
            usage: cloudbackup inspect FILE [--json] [--quiet] [--now T] [--today DAY | --at T]
                                       [--tz ZONE] [--max-bytes N]

            Shows what a backup FILE holds: its schema version, when it was exported and
            how long ago, by which device, and how many challenges, live tasks (not
            archived), day logs and tombstones it has. Day logs kept under a tombstone (a
            deleted challenge's, kept in case another device's later edit brings it back)
            are counted on their own and count for no streak. Older schema versions are
            migrated in memory first; the file is not changed. A FILE of - is standard
            input, named <stdin> (a file called - is ./-). Any other FILE must be a regular
            file: a pipe such as <(zcat f.gz) is refused (exit 3). A gzipped FILE is read as
            the document it holds, whatever its name, so no zcat is needed; or pipe into -.

            Then each challenge's streaks as of today: the current and the longest run of
            complete days, and how many of the days decided so far were complete. Today is
            the day of the clock in the time zone, with days starting at the file's
            dayStartHour (01:30 with a 2 a.m. start is still the night before). Paused days,
            dates the time zone skipped and an unfinished today never break a streak.

            options:
              --json         print one JSON object instead, with the same facts
              -q, --quiet    print nothing: the exit status tells whether FILE is valid
              --now T        measure "how long ago" from T (RFC 3339 UTC, e.g. 2026-11-30T08:00:00Z)
                             instead of the system clock
              --today DAY    count streaks as of DAY (YYYY-MM-DD)
              --at T         count streaks as of the day of T (RFC 3339 UTC); default: --now, else
                             the system clock
              --tz ZONE      the time zone that turns T into a day, e.g. America/New_York (default:
                             TZ, else the system's zone)
              --max-bytes N  refuse files larger than N bytes (default 268435456, 256 MiB)

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file
              7   refused: FILE was written by a newer version

            """
        ),
        (
            "migrate",
            """
            usage: cloudbackup migrate FILE -o OUT [--schema 3|4] [--pretty] [--json]
                                       [--quiet | --verbose] [--max-bytes N]

            Reads a backup FILE of any schema version, checks it, and writes it to OUT as
            schema 4 with sorted keys. The write is atomic: OUT is either left as it was or
            replaced whole, never half-written, so OUT may be FILE itself. An invalid FILE
            writes nothing. A FILE of - is standard input; an OUT of - is standard output,
            written as it goes (not atomically) and holding only the document: --verbose
            then speaks on stderr. A file called - is ./-. An OUT named *.gz is written as
            gzip (FILE may be gzip whatever its name). Any other FILE must be a regular file:
            a pipe such as <(zcat f.gz) is refused (exit 3); give - and pipe it in.

            options:
              -o, --output OUT  where to write (required)
              --schema 3|4      write schema 3, for an app that cannot read schema 4 yet: day logs
                                kept under a tombstone (schema 3 cannot hold them) are left out, and
                                a note on stderr says how many
              --pretty          indent the output for people (the default is compact)
              --json            say what was written as one JSON object (on stderr when OUT is -):
                                "file", "output", "fromSchema", "toSchema", "droppedKeptDayLogs" and
                                the "notes" --verbose gives
              -q, --quiet       say nothing on success, as without --verbose
              -v, --verbose     say what was written (silent on success otherwise)
              --max-bytes N     refuse files larger than N bytes (default 268435456, 256 MiB)

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: nothing written
              7   refused: FILE was written by a newer version

            """
        ),
        (
            "merge",
            """
            usage: cloudbackup merge LOCAL INCOMING -o OUT [--replace] [--dry-run] [--explain]
                                     [--json] [--quiet] [--allow-stale] [--clock-guard]
                                     [--window DAYS] [--now T] [--log FILE] [--max-bytes N]

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

            options:
              -o, --output OUT  where to write the result (LOCAL itself is fine)
              --replace         take INCOMING as it is (a restore, not a merge); premium, app lock
                                and device id still stay LOCAL's
              -n, --dry-run     show the counts, write no OUT (a --log line still says so)
              --explain         list every decision that was not trivial, and why
              --json            print only the report object on stdout
              -q, --quiet       no report, on stdout or stderr: the exit status tells
              --allow-stale     let in what the stale guard holds back: items missing here and older
                                than the window, from a file that predates it
              --clock-guard     hold back incoming items stamped more than 24 h after now (not with
                                --replace, which has no guards)
              --window DAYS     the tombstone window (default 90)
              --now T           the clock to measure against (default: the system clock)
              --log FILE        append one JSON line describing this merge to FILE
              --max-bytes N     refuse files larger than N bytes (default 268435456, 256 MiB)

            In the counts, day logs "kept under a tombstone" are those in OUT whose challenge is
            deleted; "dropped with an expired tombstone", those that went with a tombstone older
            than the window (with --replace: "dropped (not in the backup, or under an expired
            tombstone)", also LOCAL's day logs that INCOMING lacks). --explain lists a day log
            that became kept or came in kept, and one that returns with its revived challenge;
            --json and the --log line give both counts as keptUnderTombstone and droppedOrphans.

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: nothing written
              7   refused: a file was written by a newer version

            """
        ),
        (
            "verify",
            """
            usage: cloudbackup verify FILE [--against STATE] [--window DAYS] [--now T] [--json]
                                      [--quiet] [--max-bytes N]

            Says when FILE was exported (a schema-1 file: its newest stamp) and whether that is
            before the tombstone window. Deletes older than the window are forgotten, so an item
            in such a file may be a delete this device no longer remembers. FILE or STATE
            (not both) may be - for standard input; a file called - is ./-. Any other must
            be a regular file: a pipe such as <(zcat f.gz) is refused (exit 3), and a gzipped
            file is read as the document it holds, whatever its name.

            options:
              --against STATE  also list the challenges a merge of FILE into STATE would hold back
                               or revive, and why, and how many day logs kept under a revived
                               challenge's tombstone in STATE would come back with it
              --window DAYS    the tombstone window (default 90)
              --now T          the clock to measure against (default: the system clock)
              --json           print one JSON object instead of sentences
              -q, --quiet      print nothing: the exit status tells
              --max-bytes N    refuse files larger than N bytes (default 268435456, 256 MiB)

            exit status:
              0   done: FILE is inside the window
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: FILE or STATE is invalid or unreadable
              7   refused: FILE predates the window, or was written by a newer version

            """
        ),
        (
            "completion",
            """
            usage: cloudbackup completion bash|zsh|fish

            Prints a script that completes, for that shell, the commands after cloudbackup, each
            command's options after it, and file names where an option or argument is a file.
            'make install' installs all three where the shells look; for one session, run
            source <(cloudbackup completion bash) in bash or zsh, or
            cloudbackup completion fish | source in fish.

            'make install' puts them under PREFIX (default ~/.local; sudo make install
            PREFIX=/usr/local for everyone; DESTDIR stages the tree for a package), and 'make
            uninstall' with the same PREFIX removes them. bash loads its script by itself with
            the bash-completion package; without it, add source <(cloudbackup completion bash)
            to ~/.bashrc. zsh looks in /usr/local/share/zsh/site-functions already; for
            ~/.local, add fpath=(~/.local/share/zsh/site-functions $fpath) to ~/.zshrc before
            compinit, and run rm -f ~/.zcompdump once so it sees the new function. fish reads
            ~/.local/share/fish/vendor_completions.d by itself; with another PREFIX, run
            cloudbackup completion fish > ~/.config/fish/completions/cloudbackup.fish.

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage

            """
        ),
        (
            "manpage",
            """
            usage: cloudbackup manpage

            Prints the manual page cloudbackup(1) for man: every command with its usage,
            description and options (the same as its --help), the exit codes, the environment
            variables and the profile's files. 'make install' installs it; to read it in place,
            cloudbackup manpage > cloudbackup.1 && man -l cloudbackup.1.

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage

            """
        ),
    ]

    @Test(arguments: cases.map(\.command))
    func helpWordForWord(command: String) throws {
        let expected = try #require(Self.cases.first { $0.command == command }).help
        let result = try cloudbackup([command, "--help"])
        #expect(result.status == 0)
        #expect(result.stdout == expected)
        #expect(result.stderr == "")
    }
}
