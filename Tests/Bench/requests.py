"""What `cloudbackup backup` costs: HTTP requests and body bytes per kind of run, and the
whole process's CPU (user + system) and wall time.

Part of `make bench`. Requests are counted from the Google emulator's log (every request it
served, with request and answer body sizes), so those figures are exact and the same on every
machine. CPU and wall time are the backup process's own, from wait4 (the emulator's work is
another process's); they are the medians of BENCH_BACKUP_RUNS runs (default 5) for the runs
that can repeat (no change; one change, a new edit each time), of one for the first backup.
One device, one state file, against a fresh emulator:

  first backup              empty app folder: list, reserve an id, create, and pin the new
                            revision (the first of its day: the "keep" policy)
  no change                 the profile's kept copy matches Drive's checksum: the listing only;
                            STATE was written just before, within the file system clock's tick,
                            so each run reads it to compare its SHA-256 (the quiet night's check)
                            while the runs stay within 2 s of that write (not at a million day
                            logs, whose first backup alone takes longer: there it is the next row)
  no change, a cron night   the same with STATE last written over 2 s before, as on a night when
                            the app wrote it hours earlier: its stamp alone proves it unchanged
  one change                a day log edited: the listing, a conditional upload, the
                            revision listing that checks it and the mark of that check on the
                            file; the first change after a create also asks for the etag (a
                            create's answer has none)
  ... without kept copy     the same runs with the kept copy deleted first (when there is one:
                            a quiet night neither needs it nor writes it): what every run cost
                            before it (list, etag, download, and the upload if needed)
  ..., encrypted            the profile switched to encrypting to an X25519 key (age-keygen's;
                            no scrypt per run): the first run rewrites Drive's file encrypted,
                            then one change a run, as above; its CPU over the plain one change
                            is what encryption adds to a nightly backup (issue 23: at most 1.3×)
  ..., compressed           before the encrypted runs, the profile's config.json set to
                            "compress": true: the first run rewrites Drive's file gzipped, then
                            one change a run; issue 40: its sent bytes at most 1/6 of the plain
                            one change's, its CPU at most 1.2×. Then "compress": false, so the
                            encrypted runs stay plain inside as before

"sent bytes" is every request body of the run (the upload's, and the metadata others carry:
a resumable session's, the PATCH after an upload); "revision" is the size Drive gives the head revision after the run's last upload
(files.list's `size`, asked with a token of the emulator's own after the timed runs), i.e.
what each revision of the backup keeps on Drive.

Usage: requests.py --bin .build/release/cloudbackup STATE... (a missing STATE is skipped with
a note, so `make bench` can name a generated file that a smaller run did not make).
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench import MERGE_CPU_FILE

ROOT = Path(__file__).resolve().parents[2]
EMULATOR = ROOT / "Tests" / "Emulator" / "google_emulator.py"
BROWSER = ROOT / "Tests" / "Emulator" / "fake_browser.py"
RUNS = int(os.environ.get("BENCH_BACKUP_RUNS", "5"))
# Issue 21: what a nightly backup that finds nothing to do may cost at 20,000 day logs.
NO_CHANGE_CPU_BUDGET = 0.020


class Emulator:
    """The emulator as a child whose stdin we hold: it exits when this script does."""

    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, str(EMULATOR)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)
        line = self.process.stdout.readline().strip()
        if not line.startswith("LISTENING "):
            self.stop()
            sys.exit(f"requests: the emulator did not start (it said {line!r})")
        self.url = line.removeprefix("LISTENING ")

    def log(self):
        with urllib.request.urlopen(self.url + "/__emulator/log") as answer:
            return json.load(answer)

    def head_size(self):
        """The backup's size on Drive: that of its head revision, the last upload's."""
        if not hasattr(self, "token"):
            grant = urllib.request.Request(self.url + "/__emulator/tokens", data=b"{}",
                                           headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(grant) as answer:
                self.token = json.load(answer)["access_token"]
        listing = urllib.request.Request(
            self.url + "/drive/v3/files?spaces=appDataFolder&fields=files(id,size)",
            headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(listing) as answer:
            files = json.load(answer)["files"]
        if len(files) != 1:
            sys.exit(f"requests: expected one file on Drive, found {len(files)}")
        return int(files[0]["size"])

    def stop(self):
        self.process.stdin.close()
        self.process.terminate()
        self.process.wait()


def kind(entry):
    """A request in a few words, e.g. 'list' or 'conditional upload'."""
    method, path, query = entry["method"], entry["path"], entry["query"]
    if method == "GET" and path == "/drive/v3/files":
        return "list"
    if method == "GET" and path.startswith("/drive/v2/files/"):
        return "etag"
    if method == "PATCH" and path.startswith("/drive/v2/files/"):
        return "mark checked"
    if method == "GET" and query.get("alt") == "media":
        return "download"
    if method == "GET" and path.endswith("/revisions"):
        return "revisions"
    if method == "PATCH" and "/revisions/" in path:
        return "pin"
    if method == "DELETE" and "/revisions/" in path:
        return "release"
    if method == "GET" and path.endswith("/generateIds"):
        return "reserve id"
    if method == "POST" and path == "/upload/drive/v3/files":
        return "create"
    if method == "PUT" and entry.get("ifMatch"):
        return "conditional upload"
    return f"{method} {path}"


def edited(document, step):
    """The document with its last day log's note changed and its stamp moved on `step` s."""
    key = max(document["dayLogs"])
    log = document["dayLogs"][key]
    stamp = datetime.datetime.fromisoformat(log["updatedAt"].replace("Z", "+00:00"))
    stamp += datetime.timedelta(seconds=step)
    log["updatedAt"] = stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
    log["note"] = f"edited {step}"
    return document


def runs_of(kinds):
    """The kinds of requests in order, a run of the same one as "kind ×N" (a large upload's
    chunks)."""
    grouped = []
    for name in kinds:
        if grouped and grouped[-1][0] == name:
            grouped[-1][1] += 1
        else:
            grouped.append([name, 1])
    return ", ".join(name if count == 1 else f"{name} ×{count}" for name, count in grouped)


def logged_in(binary, emulator, work, state_source, caller):
    """A profile under `work` logged in to `emulator` through the stand-in browser, and STATE
    settled from `state_source`: the environment to run `binary` in, STATE's path, and the
    `--now` every run uses (its export time)."""
    browser = work / "browser"
    browser.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{BROWSER}' \"$1\"\n")
    browser.chmod(0o755)
    environment = dict(
        os.environ,
        XDG_CONFIG_HOME=str(work / "config"), BROWSER=str(browser),
        CLOUDBACKUP_CLIENT_ID="test-client-id", CLOUDBACKUP_CLIENT_SECRET="test-client-secret",
        CLOUDBACKUP_AUTH_URL=emulator.url + "/o/oauth2/v2/auth",
        CLOUDBACKUP_TOKEN_URL=emulator.url + "/token",
        CLOUDBACKUP_REVOKE_URL=emulator.url + "/revoke", CLOUDBACKUP_DRIVE_URL=emulator.url)
    login = subprocess.run([str(binary), "login"], env=environment, capture_output=True,
                           text=True)
    if login.returncode != 0:
        sys.exit(f"{caller}: login failed: {login.stderr.strip()}")
    now = json.loads(state_source.read_bytes())["exportedAt"]
    state = work / "state.json"
    # Settled first (merged with itself: tombstones past the window forgotten), else the
    # second run would upload once to forget them, and "no change" would not be one.
    settle = subprocess.run(
        [str(binary), "merge", str(state_source), str(state_source), "-o", str(state),
         "--now", now], capture_output=True, text=True)
    if settle.returncode != 0:
        sys.exit(f"{caller}: cannot settle {state_source}: {settle.stderr.strip()}")
    return environment, state, now


def measure(binary, state_source):
    emulator = Emulator()
    work = Path(tempfile.mkdtemp())
    try:
        environment, state, now = logged_in(binary, emulator, work, state_source, "requests")
        kept = work / "config" / "cloudbackup" / "default" / "kept-copy.json"
        document = json.loads(state.read_bytes())
        rows = []

        def timed_backup(name, expected):
            """One backup run: its result checked, its CPU and wall time from wait4."""
            with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
                begin = time.perf_counter()
                child = subprocess.Popen(
                    [str(binary), "backup", "--file", str(state), "--now", now, "--json"],
                    env=environment, stdout=out, stderr=err)
                _, status, usage = os.wait4(child.pid, 0)
                wall = time.perf_counter() - begin
                code = os.waitstatus_to_exitcode(status)
                out.seek(0)
                err.seek(0)
                if code != 0:
                    sys.exit(f"requests: {name}: exit {code}: {err.read().decode().strip()}")
                result = json.loads(out.read())["result"]
            if result != expected:
                sys.exit(f"requests: {name}: expected {expected}, the backup said {result}")
            return usage.ru_utime + usage.ru_stime, wall

        edits = iter(range(1, 1000))

        def backup(name, expected, edit=False, forget=False, runs=1):
            """`runs` runs alike (each with a new edit when `edit`); the requests of the last,
            the medians of the times."""
            times = []
            for _ in range(runs):
                if edit:
                    state.write_text(json.dumps(edited(document, next(edits))))
                if forget:
                    kept.unlink(missing_ok=True)
                start = len(emulator.log())
                times.append(timed_backup(name, expected))
            entries = emulator.log()[start:]
            revision = emulator.head_size() if expected in ("created", "uploaded") else None
            rows.append((name, len(entries), sum(e.get("requestBytes") or 0 for e in entries),
                         sum(e.get("responseBytes") or 0 for e in entries), revision,
                         statistics.median(t[0] for t in times),
                         statistics.median(t[1] for t in times), runs,
                         runs_of(kind(e) for e in entries)))

        backup("first backup", "created")
        backup("no change", "unchanged", runs=RUNS)
        # Waited out, not synchronised on: the stamp is trusted alone 2 s past STATE's last
        # change (FileStamp.isSettled), and the first run after that settles the record.
        written = os.stat(state)
        time.sleep(max(0, max(written.st_mtime_ns, written.st_ctime_ns) + 2_100_000_000
                       - time.time_ns()) / 1e9)
        timed_backup("settling", "unchanged")
        backup("no change, a cron night", "unchanged", runs=RUNS)
        backup("one change (first after a create)", "uploaded", edit=True)
        backup("one change", "uploaded", edit=True, runs=RUNS)
        backup("no change, without kept copy", "unchanged", forget=True)
        backup("one change, without kept copy", "uploaded", edit=True, forget=True)
        # Private, as cloudbackup requires of a config.json.
        config = kept.parent / "config.json"
        settings = json.loads(config.read_text()) if config.exists() else {}
        config.touch(mode=0o600)
        config.write_text(json.dumps(dict(settings, compress=True)))
        backup("one change, now compressed", "uploaded", edit=True)
        backup("one change, compressed", "uploaded", edit=True, runs=RUNS)
        config.write_text(json.dumps(dict(settings, compress=False)))
        backup("one change, plain again", "uploaded", edit=True)
        key = work / "key.txt"
        if shutil.which("age-keygen") and subprocess.run(
                ["age-keygen", "-o", str(key)], capture_output=True).returncode == 0:
            environment.update(CLOUDBACKUP_ENCRYPT="1", CLOUDBACKUP_IDENTITY_FILE=str(key))
            backup("one change, now encrypted", "uploaded", edit=True)
            backup("one change, encrypted", "uploaded", edit=True, runs=RUNS)
        return rows
    finally:
        emulator.stop()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the built cloudbackup")
    parser.add_argument("states", nargs="+", type=Path, help="state files to back up")
    options = parser.parse_args()
    binary = Path(options.bin).resolve()
    for state in options.states:
        if not state.exists():
            print(f"\n(skipped {state}: not there; `make bench` at that size generates it)")
            continue
        print(f"\nbackup of {state} ({state.stat().st_size:,} bytes) against the emulator"
              f" (times: the backup process, median of the runs):")
        measured = measure(binary, state)
        header = ("run", "requests", "sent bytes", "received bytes", "revision", "CPU", "wall",
                  "runs", "what")
        rows = [header] + [
            (n, f"{c}", f"{s:,}", f"{r:,}", "" if v is None else f"{v:,}", f"{cpu * 1000:.1f} ms",
             f"{wall * 1000:.1f} ms", f"{runs}", w)
            for n, c, s, r, v, cpu, wall, runs, w in measured]
        widths = [max(len(row[i]) for row in rows) for i in range(8)]
        for row in rows:
            cells = [row[0].ljust(widths[0])] + [row[i].rjust(widths[i]) for i in range(1, 8)]
            print("  " + "  ".join(cells) + "  " + row[8])
        day_logs = len(json.loads(state.read_bytes()).get("dayLogs", {}))
        by_name = {row[0]: row for row in measured}
        plain, packed = by_name["one change"], by_name["one change, compressed"]
        share, ratio = packed[2] / plain[2], packed[5] / plain[5]

        def verdict(ok):
            # Issue 40 sets them for the 20,000 file and up; a small file's gzip header and
            # Huffman tables weigh more, and its runs are mostly start-up.
            return ("yes" if ok else "NO") if day_logs >= 10000 else "(a target from 20,000 day logs)"

        print(f"  target (issue 40): a compressed backup sends at most 1/6 of the bytes a plain"
              f" one sends (one change): {packed[2]:,} of {plain[2]:,}, 1/{1 / share:.1f}"
              f"  {verdict(share <= 1 / 6)}")
        print(f"    per revision on Drive: {packed[4]:,} bytes against {plain[4]:,},"
              f" 1/{plain[4] / packed[4]:.1f}")
        print(f"  target (issue 40): a compressed backup's CPU at most 1.2× a plain one's"
              f" (one change): {ratio:.2f}×  {verdict(ratio <= 1.2)}")
        cpu = {row[0]: row[5] for row in measured}
        merge_file = state.parent / MERGE_CPU_FILE
        if merge_file.exists():
            merge = json.loads(merge_file.read_text())
            ratio = cpu["one change"] / merge["seconds"]
            print(f"  target (issue 41): a one-change backup's CPU at most 1.5× a whole"
                  f" `merge -o` of this file and its pair ({merge['seconds'] * 1000:.1f} ms in"
                  f" bench.py's run of {merge['measured']}): {ratio:.2f}×"
                  f"  {'yes' if ratio <= 1.5 else 'NO'}")
        if "one change, encrypted" in cpu:
            ratio = cpu["one change, encrypted"] / cpu["one change"]
            print(f"  target (issue 23): an encrypted backup's CPU, scrypt aside, at most 1.3×"
                  f" a plain one's (one change): {ratio:.2f}×  {'yes' if ratio <= 1.3 else 'NO'}")
        else:
            print("  (encrypted runs skipped: age-keygen is not installed)")
        # The bench's 20,000 file holds a little under that many on one device.
        if 10000 <= day_logs <= 100000:
            cpu = next(row[5] for row in measured if row[0] == "no change, a cron night")
            verdict = "yes" if cpu <= NO_CHANGE_CPU_BUDGET else "NO"
            print(f"  target (issue 21): a no-change backup of {day_logs:,} day logs at most"
                  f" {NO_CHANGE_CPU_BUDGET * 1000:.0f} ms of CPU: {cpu * 1000:.1f} ms  {verdict}")


if __name__ == "__main__":
    main()
