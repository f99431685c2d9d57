"""What `cloudbackup backup` costs on the wire: HTTP requests and body bytes per kind of run.

Part of `make bench`. Counted from the Google emulator's log (every request it served, with
request and answer body sizes), so the figures are exact and the same on every machine; no
timing here. One device, one state file, against a fresh emulator:

  first backup              empty app folder: list, reserve an id, create, and pin the new
                            revision (the first of its day: the "keep" policy)
  no change                 the profile's kept copy matches Drive's checksum: the listing only
  one change                a day log edited: the listing, a conditional upload and the
                            revision listing that checks it; the first change after a create
                            also asks for the etag (a create's answer has none)
  ... without kept copy     the same runs with the kept copy deleted first: what every run
                            cost before it (list, etag, download, and the upload if needed)

Usage: requests.py --bin .build/release/cloudbackup STATE... (a missing STATE is skipped with
a note, so `make bench` can name a generated file that a smaller run did not make).
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EMULATOR = ROOT / "Tests" / "Emulator" / "google_emulator.py"
BROWSER = ROOT / "Tests" / "Emulator" / "fake_browser.py"


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


def measure(binary, state_source):
    emulator = Emulator()
    work = Path(tempfile.mkdtemp())
    try:
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
        kept = work / "config" / "cloudbackup" / "default" / "kept-copy.json"
        login = subprocess.run([str(binary), "login"], env=environment, capture_output=True,
                               text=True)
        if login.returncode != 0:
            sys.exit(f"requests: login failed: {login.stderr.strip()}")

        now = json.loads(state_source.read_bytes())["exportedAt"]
        state = work / "state.json"
        # Settled first (merged with itself: tombstones past the window forgotten), else the
        # second run would upload once to forget them, and "no change" would not be one.
        settle = subprocess.run(
            [str(binary), "merge", str(state_source), str(state_source), "-o", str(state),
             "--now", now], capture_output=True, text=True)
        if settle.returncode != 0:
            sys.exit(f"requests: cannot settle {state_source}: {settle.stderr.strip()}")
        document = json.loads(state.read_bytes())
        rows = []

        def backup(name, expected, text=None, forget=False):
            if text is not None:
                state.write_text(text)
            if forget:
                kept.unlink()
            start = len(emulator.log())
            run = subprocess.run(
                [str(binary), "backup", "--file", str(state), "--now", now, "--json"],
                env=environment, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"requests: {name}: exit {run.returncode}: {run.stderr.strip()}")
            result = json.loads(run.stdout)["result"]
            if result != expected:
                sys.exit(f"requests: {name}: expected {expected}, the backup said {result}")
            entries = emulator.log()[start:]
            rows.append((name, len(entries), sum(e.get("requestBytes") or 0 for e in entries),
                         sum(e.get("responseBytes") or 0 for e in entries),
                         ", ".join(kind(e) for e in entries)))

        backup("first backup", "created")
        backup("no change", "unchanged")
        backup("one change (first after a create)", "uploaded", json.dumps(edited(document, 1)))
        backup("one change", "uploaded", json.dumps(edited(document, 2)))
        backup("no change, without kept copy", "unchanged", forget=True)
        backup("one change, without kept copy", "uploaded", json.dumps(edited(document, 3)),
               forget=True)
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
        print(f"\nbackup of {state} ({state.stat().st_size:,} bytes) against the emulator:")
        header = ("run", "requests", "sent bytes", "received bytes", "what")
        rows = [header] + [(n, f"{c}", f"{s:,}", f"{r:,}", w) for n, c, s, r, w in
                           measure(binary, state)]
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            cells = [row[0].ljust(widths[0])] + [row[i].rjust(widths[i]) for i in (1, 2, 3)]
            print("  " + "  ".join(cells) + "  " + row[4])


if __name__ == "__main__":
    main()
