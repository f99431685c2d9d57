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
            called - is ./-); one FILE at most can be -.

            options:
              --json         print one JSON object on stdout instead: {"files": [...]}, each
                             file's name, "valid", and its "schemaVersion" or its "exitCode"
                             and "problems" (each a "pointer", the "rule" it breaks, a
                             section of the format's reference such as "3.6", and a
                             "message"; a syntax error a "line" and "column")
              --quiet        print nothing but the problems, as without --verbose
              --verbose      also say which files are valid, with their schema version, and
                             note day logs that do not fit their challenge (kept, but not
                             counted for streaks)
              --max-bytes N  refuse files larger than N bytes (default 268435456, 256 MiB)

            exit status: 0 all valid, 3 a file is invalid or unreadable, 7 a file was
            written by a newer version; with several files, the highest of their codes.

            """
        ),
        (
            "inspect",
            """
            usage: cloudbackup inspect FILE [--json] [--quiet] [--now T] [--today DAY | --at T] [--tz ZONE] [--max-bytes N]

            Shows what a backup FILE holds: its schema version, when it was exported and
            how long ago, by which device, and how many challenges, live tasks (not
            archived), day logs and tombstones it has. Day logs kept under a tombstone (a
            deleted challenge's, kept in case another device's later edit brings it back)
            are counted on their own and count for no streak. Older schema versions are
            migrated in memory first; the file is not changed. A FILE of - is standard
            input, named <stdin> (a file called - is ./-).

            Then each challenge's streaks as of today: the current and the longest run of
            complete days, and how many of the days decided so far were complete. Today is
            the day of the clock in the time zone, with days starting at the file's
            dayStartHour (01:30 with a 2 a.m. start is still the night before). Paused days,
            dates the time zone skipped and an unfinished today never break a streak.

            options:
              --json         print one JSON object instead, with the same facts
              --quiet        print nothing: the exit status tells whether FILE is valid
              --now T        measure "how long ago" from T (RFC 3339 UTC, e.g.
                             2026-11-30T08:00:00Z) instead of the system clock
              --today DAY    count streaks as of DAY (YYYY-MM-DD)
              --at T         count streaks as of the day of T (RFC 3339 UTC); default: --now,
                             else the system clock
              --tz ZONE      the time zone that turns T into a day, e.g. America/New_York
                             (default: TZ, else the system's zone)
              --max-bytes N  refuse files larger than N bytes (default 268435456, 256 MiB)

            exit status: 0 shown, 3 FILE is invalid or unreadable, 7 FILE was written by a
            newer version.

            """
        ),
        (
            "migrate",
            """
            usage: cloudbackup migrate FILE -o OUT [--schema 3|4] [--pretty] [--json] [--quiet | --verbose] [--max-bytes N]

            Reads a backup FILE of any schema version, checks it, and writes it to OUT as
            schema 4 with sorted keys. The write is atomic: OUT is either left as it was or
            replaced whole, never half-written, so OUT may be FILE itself. An invalid FILE
            writes nothing. A FILE of - is standard input; an OUT of - is standard output,
            written as it goes (not atomically) and holding only the document: --verbose
            then speaks on stderr. A file called - is ./-. An OUT named *.gz is written as
            gzip (FILE may be gzip whatever its name).

            options:
              -o, --output OUT  where to write (required)
              --schema 3        write schema 3, for an app that cannot read schema 4 yet:
                                day logs kept under a tombstone (schema 3 cannot hold them)
                                are left out, and a note on stderr says how many
              --pretty          indent the output for people (the default is compact)
              --json            say what was written as one JSON object (on stderr when OUT
                                is -): "file", "output", "fromSchema", "toSchema",
                                "droppedKeptDayLogs" and the "notes" --verbose gives
              --quiet           say nothing on success, as without --verbose
              --verbose         say what was written (silent on success otherwise)
              --max-bytes N     refuse files larger than N bytes (default 268435456, 256 MiB)

            exit status: 0 written, 2 --schema is not 3 or 4, 3 FILE is invalid or unreadable,
            7 FILE was written by a newer version, 1 OUT could not be written.

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
