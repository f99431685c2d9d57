import TestSupport
import Testing

/// The Drive commands' `--help`, word for word.
@Suite struct DriveCommandHelpTests {
    static let cases: [(command: String, help: String)] = [
        (
            "backup",
            """
            usage: cloudbackup backup --file STATE [--dry-run] [--profile NAME] [--now T]
                                      [--quiet | --verbose] [--json] [--wait-lock DURATION]
                                      [--max-bytes N]
                                      [--password-file FILE | --password-command CMD]

            Back up STATE to the Google Drive app folder: download the backup, merge STATE into it
            (so another device's items are kept) and upload the result only if it changed. STATE's
            settings go up when they changed here since this profile last backed up or restored,
            except premium, app lock and the device id, which stay as the backup has them. The upload is
            conditional, so a device writing at the same moment is merged, not lost. The profile
            keeps a copy of what is on Drive: while Drive's checksum still matches it, nothing is
            downloaded, and a run with nothing new sends one request. STATE is never modified.
            Silent on success unless --verbose. A profile that encrypts uploads an age file, which
            any age tool opens with the profile's passphrase or identity file.

            options:
              --file STATE          the local state file (required); an invalid file uploads nothing
              -n, --dry-run         download and merge, print what the upload would bring (the
                                    counts of restore --dry-run); upload, delete and write nothing
              --profile NAME        the profile to use (default: default)
              --now T               the time for the tombstone window, RFC 3339 (default: now)
              -q, --quiet           no progress line, only failures and warnings
              -v, --verbose         say what was done, and trace each HTTP exchange (tokens
                                    redacted)
              --json                print a summary: remote id, bytes, result, counts (day logs kept
                                    under a tombstone on their own)
              --wait-lock DURATION  wait up to DURATION (90s, 10m, 1h30m) for another run of the
                                    profile to finish (default: exit 6 at once)
              --max-bytes N         refuse files larger than N bytes (default 268435456, 256 MiB)
              --password-file FILE  the backup's passphrase (encrypted backups): FILE's first line
              --password-command CMD  the same, printed by the shell command CMD

            --json prints one line: fileId, name, bytes, result ("created", "uploaded" or
            "unchanged"), counts (challenges, dayLogs, keptDayLogs, tombstones), mergedRevisions
            (other devices' revisions found between the one this run merged into and its own
            upload, and merged in), deletedDuplicates (ids of duplicate backups merged and
            deleted) and sideFiles (names of copies kept aside in the app folder). With
            --dry-run it prints the merge report object instead.

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: STATE is invalid, or STATE or the backup is over
                  --max-bytes (nothing uploaded), or the profile's config.json, token, identity or
                  password file is broken or readable by others, or the backup is encrypted and no
                  key given opens it
              4   not logged in: no saved login, or it was revoked or does not allow Drive access
              5   network or server failure: the remote file is intact; after retries, and at a
                  terminal after 10 s of a network that cannot be reached (CLOUDBACKUP_OFFLINE_WAIT
                  seconds when set)
              6   another run holds the lock: still after --wait-lock's wait
              7   refused: STATE or the backup is from a newer version

            """
        ),
        (
            "restore",
            """
            usage: cloudbackup restore --file STATE (--merge | --replace)
                                       [--revision ID | --as-of TIME] [--dry-run] [--allow-stale]
                                       [--yes] [--json] [--profile NAME] [--now T]
                                       [--quiet | --verbose] [--wait-lock DURATION] [--max-bytes N]
                                       [--password-file FILE | --password-command CMD]

            Download the backup from the Google Drive app folder, validate and migrate it, show what
            it would change in STATE, then write STATE atomically, keeping the previous file as
            STATE.bak (replacing an older one; the profile's "previousCopies" keeps more, as
            STATE.bak.1, .2, …). A restore that would change nothing writes nothing and says so.
            A missing STATE is created. A broken one (empty, not JSON, invalid, of a newer schema) is kept as
            STATE.broken-<UTC time> by --replace, and refused by --merge (nothing to merge into).
            With --revision or --as-of, an older version of the backup from Drive's revision
            history ('cloudbackup history' lists them) instead of the latest. A STATE named
            *.gz is written as gzip. When standard input is a terminal it asks before writing
            unless --yes; the question goes to stderr, or to the terminal itself when stderr is
            redirected (2>log).

            options:
              --file STATE          the local state file to restore into
              --merge               newest edit wins per item; STATE's settings stay (a new STATE
                                    takes the backup's, without premium and app lock)
              --replace             STATE becomes the backup (premium, app lock and device id stay)
              --revision ID         that revision of the backup
              --as-of TIME          the newest revision written at or before TIME: RFC 3339, or a
                                    date YYYY-MM-DD meaning the end of that day in the local time
                                    zone
              -n, --dry-run         only show the counts; write nothing anywhere
              --allow-stale         let in items the stale guard holds back (a backup older than the
                                    window)
              --yes                 do not ask before writing (asked only on a terminal)
              --json                print the counts as the FORMAT.md §6.1 report object
              --profile NAME        the profile to use (default: default)
              --now T               the time for the tombstone window, RFC 3339 (default: now)
              -q, --quiet           print nothing on stdout: the exit status tells
              -v, --verbose         trace each HTTP exchange (tokens redacted)
              --wait-lock DURATION  wait up to DURATION (90s, 10m, 1h30m) for another run of the
                                    profile to finish (default: exit 6 at once)
              --max-bytes N         refuse files larger than N bytes (default 268435456, 256 MiB)
              --password-file FILE  the backup's passphrase (encrypted backups): FILE's first line
              --password-command CMD  the same, printed by the shell command CMD

            In a replace, day logs "dropped (not in the backup, or under an expired tombstone)"
            are STATE's day logs the backup lacks, also of challenges it keeps, and the backup's
            own kept day logs whose tombstone has expired.

            With --merge, a STATE exported before the 90-day tombstone window keeps the
            challenges the backup no longer has, as the merge rules say; those last edited before
            the window are named in one warning, since each may have been deleted on another
            device: if so, delete them again in the app.

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: STATE or the backup is invalid, or it is encrypted and
                  no key given opens it
              4   not logged in
              5   network or server failure
              6   another run holds the lock: still after --wait-lock's wait, or STATE changed while
                  restoring (nothing written; run again)
              7   refused: STATE or the backup is of a newer schema
              10  no backup on Drive yet: nothing written
            1 is also a question answered no; 2 also no such revision, or TIME before the oldest.

            """
        ),
        (
            "history",
            """
            usage: cloudbackup history [--profile NAME] [--contents] [--json] [--quiet | --verbose]
                                       [--max-bytes N]
                                       [--password-file FILE | --password-command CMD]

            Lists the revisions of the backup file in the Drive app folder, oldest first: the
            revision id, when it was written (local time and UTC), its size, and whether it is
            pinned (kept until deleted; the profile's "keep" policy pins the first backup of each
            of the last 7 days, 8 weeks and 12 months). Drive keeps an unpinned revision for about
            30 days, or until 100 newer ones. 'cloudbackup restore --revision ID' or '--as-of TIME'
            brings one back, with the same merge, replace and dry run as any restore.

            options:
              --profile NAME        the profile to use (default: default)
              --contents            also show what each revision holds: export time, device, counts
                                    (each revision is downloaded once, then remembered by checksum)
              --json                print one object with a "revisions" array, oldest first
              -q, --quiet           print nothing on stdout: the exit status tells
              -v, --verbose         trace each HTTP exchange (tokens redacted)
              --max-bytes N         refuse files larger than N bytes (default 268435456, 256 MiB)
              --password-file FILE  the backup's passphrase (encrypted backups): FILE's first line
              --password-command CMD  the same, printed by the shell command CMD

            --contents remembers what each revision held (export time, device, counts) by its
            checksum in the profile's history-cache.json, so the next call downloads only new
            revisions, and an encrypted one read once needs no key again; deleting the file is
            safe. A revision Drive no longer serves (purged, or refused) is listed as not
            readable, with why; it is not an error. --json gives "file" (id, name, otherFiles)
            and "revisions": id, modifiedTime (UTC), size, pinned, and with --contents
            "contents" (exportedAt, deviceId, challenges, dayLogs, keptDayLogs, tombstones), or
            null and "unreadable" with why.

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: the profile's files are broken
              4   not logged in
              5   network or server failure
              10  no backup on Drive yet

            """
        ),
        (
            "status",
            """
            usage: cloudbackup status [--profile NAME] [--remote] [--quiet | --verbose]
                                      [--file STATE] [--json] [--max-age DURATION] [--now T]
                                      [--max-bytes N]

            Shows the profile's login: whether it is logged in and when the saved access token
            expires (an expired one is refreshed by the next command that needs it), the
            profile's last successful backup, and how its last backup, restore or rollback
            ended. Works offline unless --remote is given.

            options:
              --profile NAME      the profile to use (default: default)
              --remote            also ask Drive for the backup file: id, size, modified, version
              -q, --quiet         print nothing: the exit status tells (with --max-age, for
                                  monitoring)
              -v, --verbose       with --remote, trace each HTTP exchange (tokens redacted)
              --file STATE        also count the challenges, day logs and tombstones in STATE, and
                                  those changed since the last backup or restore (offline); with
                                  --remote, also those on Drive that STATE lacks
              --json              print one JSON object instead of text
              --max-age DURATION  exit 9 when the last successful backup is older than DURATION
                                  (36h, 2d, 90m; at most 365d), or there is none
              --now T             measure --max-age and the token's expiry from T, RFC 3339
              --max-bytes N       refuse files larger than N bytes (default 268435456, 256 MiB)

            The last run is the profile's last backup, restore or rollback that tried: a dry run,
            a usage error and a question answered no are not recorded, and another run holding
            the lock (exit 6) counts as failed.

            --json prints one object: "profile", then "login" (loggedIn, accessTokenExpiresAt),
            "lastBackup" (time, fileId, uploaded, bytes; time null when there is none), "lastRun"
            (outcome "ok" or "failed", command, exitCode, at, reason: the failure's first line;
            outcome null before the first run); with --remote, "remote" (id, size, modified,
            version, revisions, pinnedRevisions, pinnedBytes; with --file, itemsNotInState; error
            when Drive failed); with --file, "local" (file, challenges, dayLogs, keptDayLogs,
            tombstones, changesNotBackedUp, changesNotBackedUpByKind, settingsNotBackedUp; the
            last three null before the profile's first backup or restore). Times are UTC.

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: the profile's config.json or token file is broken or
                  readable by others, or STATE is invalid
              4   not logged in: no saved login (with --remote, also one Google refused)
              5   network or server failure: only with --remote
              8   the last backup, restore or rollback failed
              9   no recent backup: the last successful backup is older than --max-age, or there is
                  none
            The first of these that applies, after the report.

            """
        ),
        (
            "rollback",
            """
            usage: cloudbackup rollback --file STATE (--revision ID | --as-of TIME) [--dry-run]
                                        [--allow-stale] [--yes] [--json] [--profile NAME] [--now T]
                                        [--quiet | --verbose] [--wait-lock DURATION] [--max-bytes N]
                                        [--password-file FILE | --password-command CMD]

            Make an older revision of the backup ('cloudbackup history' lists them) the state on
            every device: each item that differs from the backup on Drive now is written again at
            this run's time (changed or deleted since: the revision's version; a challenge added
            since: deleted; a day log added since: emptied), so every device's next merge ends on
            the revision's content. It goes up like a backup (another device's write meanwhile is
            merged, never lost), and STATE gets the same document, its previous file kept as
            STATE.bak. The revision it replaces is kept forever first, so the rollback itself can
            be undone with another rollback to it. The counts are shown before anything is
            written; a rollback that would change nothing writes nothing.

            options:
              --file STATE          the local state file, written with the rolled-back document
              --revision ID         roll back to that revision
              --as-of TIME          to the newest revision written at or before TIME: RFC 3339, or a
                                    date YYYY-MM-DD meaning the end of that day in the local time
                                    zone
              -n, --dry-run         only show the counts; write nothing anywhere
              --allow-stale         roll back to a revision older than the tombstone window
                                    (challenges deleted since may have lost their tombstones, and
                                    would come back)
              --yes                 do not ask before writing (asked only on a terminal)
              --json                print the counts as one JSON object
              --profile NAME        the profile to use (default: default)
              --now T               the time for the tombstone window, RFC 3339 (default: now)
              -q, --quiet           print nothing on stdout: the exit status tells
              -v, --verbose         trace each HTTP exchange (tokens redacted)
              --wait-lock DURATION  wait up to DURATION (90s, 10m, 1h30m) for another run of the
                                    profile to finish (default: exit 6 at once)
              --max-bytes N         refuse files larger than N bytes (default 268435456, 256 MiB)
              --password-file FILE  the backup's passphrase (encrypted backups): FILE's first line
              --password-command CMD  the same, printed by the shell command CMD

            The last line names the undo: cloudbackup rollback --revision ID. It works for at
            least 30 days: a pinned revision the "keep" policy does not name is deleted only once
            it is older than that (or when Drive's 200 pins run out and a backup needs one).

            --json prints the counts as one object before anything is written, and nothing else
            on stdout (no undo line): {"revision": ID, "challenges": {"changedBack", "revived",
            "removed"}, "dayLogs": {the same}, "changes": the total}.

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: STATE or the backup is invalid, or it is encrypted and
                  no key given opens it
              4   not logged in
              5   network or server failure
              6   another run holds the lock: still after --wait-lock's wait, or STATE changed while
                  rolling back (Drive is rolled back, STATE is not; run again)
              7   refused: STATE or the backup is of a newer schema
              10  no backup on Drive yet
            1 is also a question answered no; 2 also no such revision, TIME before the oldest, or a revision older than the tombstone window without --allow-stale.

            """
        ),
        (
            "log",
            """
            usage: cloudbackup log [--since TIME] [--item KEY] [--json] [--quiet] [--profile NAME]

            Every merge that backup and restore --merge make is logged in the profile
            (decisions.jsonl, the last 90 days and at most 10 MB): for each challenge and day log
            whose two copies differed, which copy won and by which rule (newer edit, a delete after
            the edit, an edit after the delete, held back as stale, ...). This prints them, newest
            first, with times in local time. Items the merge found equal are not logged.

            options:
              --since TIME    only merges at or after TIME: RFC 3339, or a date YYYY-MM-DD (the
                              start of that day in the local time zone)
              --item KEY      only decisions about this challenge id (and its day logs) or this day
                              log key (CHALLENGE/YYYY-MM-DD)
              --json          print the log's lines as stored, newest first
              -q, --quiet     print nothing on stdout: the exit status tells
              --profile NAME  the profile to use (default: default)

            exit status:
              0   done
              1   failure (a local write, a question answered no, or a bug)
              2   usage
              3   invalid or unreadable file: the log is damaged or others can read it

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

    @Test(arguments: [
        (["backup"], "--file STATE is required"),
        (
            ["backup", "--file", "s.json", "--quiet", "--verbose"],
            "--quiet and --verbose exclude each other"
        ),
        (
            ["backup", "--file", "s.json", "--now", "yesterday"],
            "--now expects an RFC 3339 UTC time"
        ),
        (["restore", "--file", "s.json"], "say --merge or --replace (exactly one)"),
        (
            ["restore", "--file", "s.json", "--merge", "--replace"],
            "say --merge or --replace (exactly one)"
        ),
        (["backup", "--file", "s.json", "extra"], "unexpected argument 'extra'"),
        (["login", "--quiet", "--verbose"], "--quiet and --verbose exclude each other"),
        (["logout", "-q", "-v"], "--quiet and --verbose exclude each other"),
    ])
    func usageErrorsExit2(arguments: [String], message: String) throws {
        let result = try cloudbackup(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message))
        #expect(result.stdout.isEmpty)
    }
}
