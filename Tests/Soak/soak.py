#!/usr/bin/env python3
"""make soak: several devices editing and backing up at once through faults, under every
reading of Drive's undocumented If-Match, checked after every round.

Design note. Each device is a profile (its own XDG_CONFIG_HOME, login and STATE file) of the
real `cloudbackup` binary, against one bundled emulator. A round:
  1. switches the emulator's If-Match reading (honour, open-only, ignore, in turn, each also
     with only pinned revisions downloadable, as Google's guide may be read) and arms
     a few random faults (429/503 storms, connections cut before or after the request is
     handled, truncated downloads);
  2. lets each device edit its STATE at random (new and edited challenges and day logs,
     deletes, revivals of deleted challenges), stamped by one simulated clock;
  3. runs `backup` on a random subset of devices at the same time, and now and then a
     `restore --merge` on one, so devices learn of each other's edits;
  4. checks Drive against every STATE whose backup exited 0 ("promised" states): each of
     their challenges, tombstones and day logs must be on Drive, as that copy or a newer
     one, or beaten by a newer tombstone; no challenge may be live on Drive under a newer
     tombstone of a promised state.
At the end every device restores, backs up and restores again; all must hold the same items
as Drive. The same seed gives the same edits, faults and order of launches (the interleaving
of concurrent processes is the operating system's).

Drive's limits are set low enough that a run crosses each of them: pins per file
(`--pin-cap`, Google's is 200), unpinned revisions kept (`--revisions-kept`, 100), their age
(`--revision-max-age-days`, 30), the access token's life (`--token-lifetime`, an hour) and
the items a listing page holds (`--max-page-size`; Google accepts pageSize up to 1000 and
may answer fewer).
Time passes: rounds come in bursts (`--burst`, 5 minutes apart, so uploads pile up past
`--revisions-kept` before any can age) and pauses, `--hours-per-round` on average, moving
Drive's clock (the emulator's) and the devices' `--now` and edit stamps together; so
revisions age past the limit in every pause, tokens the client still believes in expire on
Drive (a 401, then a refresh), and the client's own retention ("keep" policy) pins daily
revisions and, after 30 days, releases (deletes) old pins. Simulated time starts at EPOCH, whatever the date: Drive's clock is set to it, so the
client warns on stderr that its clock is off Google's (a warning only; --now sets the run's
time) and, for that reason, never takes the steady-state shortcut. Past the 90-day
tombstone window a tombstone may rightly go: the oracle forgets promised tombstones older
than that.

Prints rounds, backups, the exit-code histogram, re-merge rounds (backups that found
another device's revision between their base and their upload), items lost (must be 0),
the seed, and what Drive saw (/__emulator/stats: pins made and refused, the most pins and
revisions the file held, revisions deleted, purged by count and by age, token refreshes).
Exit 1 when anything was lost or a device failed in a way no fault explains, or, with
`--require-limits`, when a limit was not crossed.

`--stop-at-first-loss` stops after the first round that lost an item or saw an unexplained
failure and keeps the work folder (`--keep` keeps it always): each device's STATE, profile
(XDG_CONFIG_HOME) and runs.log (every command's arguments, exit code, stdout and stderr,
by round), rounds.jsonl (each round's settings, devices and exit codes), and the
emulator's state (emulator-state.json), files.json, log.json (every request, with the login
that sent it: grant N is deviceN-1) and stats.json.

    python3 Tests/Soak/soak.py --bin .build/release/cloudbackup --rounds 200 --seed 7
"""

import argparse
import collections
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMULATOR = os.path.join(ROOT, "Tests", "Emulator", "google_emulator.py")
BROWSER = os.path.join(ROOT, "Tests", "Emulator", "fake_browser.py")
MODES = ["honour", "open-only", "ignore"]
EPOCH = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
# The merge's default tombstone window (MergeOptions.defaultWindowDays).
WINDOW_DAYS = 90
# Exit codes a fault may explain: 5 (network or Drive after retries, or another device kept
# writing). Anything else from a backup is a failure of the product.
EXPLAINED = {0, 5}


def stamp(seconds):
    instant = EPOCH + datetime.timedelta(seconds=seconds)
    return instant.strftime("%Y-%m-%dT%H:%M:%S.") + f"{instant.microsecond // 1000:03d}Z"


class Emulator:
    def __init__(self, python, limits, state_file):
        self.process = subprocess.Popen(
            [python, EMULATOR, "--client-id", "soak-client", "--client-secret", "soak-secret",
             "--state-file", state_file] + limits,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().split()
        if len(line) != 2 or line[0] != "LISTENING":
            raise SystemExit(f"the emulator did not start: {line}")
        self.url = line[1]

    def control(self, path, body=None, method="POST"):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}/__emulator/{path}", data=data, method=method,
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"null")

    def backups(self):
        return [f for f in self.control("files", method="GET")
                if f["name"] == "habit-backup.json"]

    def set_time(self, seconds):
        """Drive's clock to EPOCH + `seconds` (simulated), from the machine's clock now."""
        self.control("clock", {"offset": EPOCH.timestamp() + seconds - time.time()})

    def dump(self, work):
        for name in ("files", "log", "stats", "settings"):
            with open(os.path.join(work, f"{name}.json"), "w") as out:
                json.dump(self.control(name, method="GET"), out, indent=1)

    def stop(self):
        self.process.stdin.close()
        self.process.terminate()
        self.process.wait()


class Device:
    def __init__(self, index, work, emulator, binary, journal, pin_cap):
        self.name = f"device{index}"
        # When set, every command's exit code, stdout and stderr are appended to runs.log.
        self.journal = journal
        self.folder = os.path.join(work, self.name)
        os.makedirs(self.folder)
        self.state = os.path.join(self.folder, "state.json")
        self.binary = binary
        self.environment = {
            "PATH": "/usr/bin:/bin", "TZ": "UTC", "HOME": self.folder,
            "XDG_CONFIG_HOME": os.path.join(self.folder, "config"),
            "CLOUDBACKUP_CLIENT_ID": "soak-client", "CLOUDBACKUP_CLIENT_SECRET": "soak-secret",
            "CLOUDBACKUP_AUTH_URL": emulator.url + "/o/oauth2/v2/auth",
            "CLOUDBACKUP_TOKEN_URL": emulator.url + "/token",
            "CLOUDBACKUP_REVOKE_URL": emulator.url + "/revoke",
            "CLOUDBACKUP_DRIVE_URL": emulator.url,
            "CLOUDBACKUP_RETRY_BASE_MS": "5",
            # The client keeps its reserve of read pins under the emulator's lowered cap.
            "CLOUDBACKUP_PIN_LIMIT": str(pin_cap),
            "BROWSER": browser_command(work),
        }
        self.document = {
            "format": "habit-backup", "schemaVersion": 3, "exportedAt": stamp(0),
            "deviceId": self.name,
            "settings": {"dayStartHour": 0, "weekStartsOn": "monday", "theme": "system",
                         "reminderTime": None},
            "challenges": {}, "dayLogs": {}, "tombstones": {},
        }
        self.save()

    def save(self):
        with open(self.state, "w") as out:
            json.dump(self.document, out)

    def load(self):
        with open(self.state) as source:
            self.document = json.load(source)

    def start(self, arguments):
        return subprocess.Popen([self.binary] + arguments, env=self.environment,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def run(self, arguments, label=""):
        process = self.start(arguments)
        out, err = process.communicate()
        self.note(label, arguments, process.returncode, out, err)
        return process.returncode, out, err

    def note(self, label, arguments, status, out, err):
        if not self.journal:
            return
        with open(os.path.join(self.folder, "runs.log"), "a") as log:
            log.write(f"=== {label} {' '.join(arguments)} -> exit {status}\n"
                      f"--- stdout\n{out}--- stderr\n{err}")

    # --- edits --------------------------------------------------------------------------

    def edit(self, rng, clock, counter):
        document = self.document
        challenges, logs, tombstones = (document["challenges"], document["dayLogs"],
                                        document["tombstones"])
        for _ in range(rng.randint(1, 3)):
            clock[0] += 1
            now = stamp(clock[0])
            choice = rng.random()
            live = sorted(challenges)
            if choice < 0.25 or not live:
                counter[0] += 1
                cid = f"c{counter[0]:04d}-{self.name}"
                challenges[cid] = challenge(cid, now)
            elif choice < 0.45:
                cid = rng.choice(live)
                challenges[cid]["title"] = f"{cid} edited {clock[0]}"
                challenges[cid]["updatedAt"] = now
            elif choice < 0.8:
                cid = rng.choice(live)
                day = (EPOCH.date() - datetime.date(2026, 1, 1)).days - rng.randint(0, 60)
                key = f"{cid}/{(datetime.date(2026, 1, 1) + datetime.timedelta(days=day)).isoformat()}"
                logs[key] = {"values": {"t": rng.randint(0, 3)}, "note": f"{self.name} {clock[0]}",
                             "mood": None, "updatedAt": now}
            elif choice < 0.93:
                cid = rng.choice(live)
                del challenges[cid]
                for key in [k for k in logs if k.split("/")[0] == cid]:
                    del logs[key]
                tombstones[cid] = {"deletedAt": now}
            elif tombstones:
                # Revived on purpose: an edit made after the delete.
                cid = rng.choice(sorted(tombstones))
                del tombstones[cid]
                challenges[cid] = challenge(cid, now)
        document["exportedAt"] = stamp(clock[0])
        self.save()


def challenge(cid, now):
    return {"title": cid, "startDate": "2026-01-01", "durationDays": 365,
            "tasks": {"t": {"title": "Task",
                            "rules": [{"from": "2026-01-01", "type": "count", "target": 2,
                                       "unit": "times"}],
                            "archivedFrom": None}},
            "pausedDays": [], "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": now}


def browser_command(work):
    path = os.path.join(work, "browser")
    if not os.path.exists(path):
        with open(path, "w") as out:
            out.write(f"#!/bin/sh\nexec '{sys.executable}' '{BROWSER}' \"$1\"\n")
        os.chmod(path, 0o755)
    return path


# --- the oracle -------------------------------------------------------------------------


def losses(remote, promised, deleted, schema3=False, horizon=""):
    """What `remote` (Drive's document) lacks of the promised states, by kind. `deleted`: the
    ids of every challenge deleted at some point; a day log of such a challenge, lost while
    the challenge is live again, is counted apart (`dayLogsUnderUndoneDelete`): schema 3's
    merge drops a deleted challenge's day logs, and schema 4's keeps them. A tombstone
    deleted before `horizon` (the start of the tombstone window) may rightly be gone."""
    lost = collections.Counter()
    examples = []
    r_challenges, r_logs, r_tombs = remote["challenges"], remote["dayLogs"], remote["tombstones"]

    def beaten(cid, updated):
        tomb = r_tombs.get(cid)
        return tomb is not None and tomb["deletedAt"] >= updated

    for state in promised:
        for cid, item in state["challenges"].items():
            have = r_challenges.get(cid)
            if (have is None or have["updatedAt"] < item["updatedAt"]) and not beaten(cid, item["updatedAt"]):
                lost["challenges"] += 1
                examples.append(f"challenge {cid}@{item['updatedAt']}")
        for cid, tomb in state["tombstones"].items():
            have = r_tombs.get(cid)
            live = r_challenges.get(cid)
            revived = live is not None and live["updatedAt"] > tomb["deletedAt"]
            if tomb["deletedAt"] < horizon:
                continue
            if (have is None or have["deletedAt"] < tomb["deletedAt"]) and not revived:
                lost["tombstones"] += 1
                examples.append(f"tombstone {cid}@{tomb['deletedAt']}")
        for key, log in state["dayLogs"].items():
            have = r_logs.get(key)
            cid = key.split("/")[0]
            if have is not None and have["updatedAt"] >= log["updatedAt"]:
                continue
            if schema3 and cid not in r_challenges:
                continue  # schema 3 drops the day logs of a challenge deleted on Drive
            kind = "dayLogsUnderUndoneDelete" if cid in deleted else "dayLogs"
            lost[kind] += 1
            examples.append(f"day log {key}@{log['updatedAt']}" + (
                " (its challenge was deleted and revived)" if cid in deleted else ""))
    # No challenge live on Drive under a newer tombstone a promised state holds.
    for state in promised:
        for cid, tomb in state["tombstones"].items():
            live = r_challenges.get(cid)
            if live is not None and live["updatedAt"] <= tomb["deletedAt"]:
                lost["revived"] += 1
                examples.append(f"revived {cid}")
    return lost, examples


def combined(files):
    """Every copy of the backup on Drive as one (names are not unique: devices that create
    the file at once make several, merged by the next backup): the newest copy of each item."""
    result = {"challenges": {}, "dayLogs": {}, "tombstones": {}}
    for file in files:
        document = json.loads(file["content"])
        for kind, stamp_key in (("challenges", "updatedAt"), ("dayLogs", "updatedAt"),
                                ("tombstones", "deletedAt")):
            for key, item in document[kind].items():
                have = result[kind].get(key)
                if have is None or have[stamp_key] < item[stamp_key]:
                    result[kind][key] = item
    return result


def items(document):
    return (
        {k: v["updatedAt"] for k, v in document["challenges"].items()},
        {k: v["updatedAt"] for k, v in document["dayLogs"].items()},
        {k: v["deletedAt"] for k, v in document["tombstones"].items()},
    )


def stats_line(stats):
    return (f"drive saw: pins made {stats['pinsMade']}, pins refused {stats['pinsRefused']} "
            f"(cap), most pins held by the file {stats['maxPinnedSeen']}, revisions deleted "
            f"{stats['revisionsDeleted']}, purged by count {stats['purgedByCount']}, purged by "
            f"age {stats['purgedByAge']}, most revisions held {stats['maxRevisionsSeen']}, "
            f"token refreshes {stats['tokenRefreshes']} (expired tokens refused "
            f"{stats['expiredTokensRefused']}), downloads refused {stats['downloadsRefused']}, "
            f"listing pages cut {stats['pagesCut']}")


def uncrossed(stats, args):
    """The limits this run did not reach, in words."""
    missed = []
    # The client keeps a reserve under the cap for its read pins, so a run crosses the cap
    # when the file holds all it allows (the reserve in use), or when Drive refuses a pin.
    if stats["pinsRefused"] == 0 and stats["maxPinnedSeen"] < args.pin_cap:
        missed.append(f"pin cap (no pin refused; most pins {stats['maxPinnedSeen']} of "
                      f"{args.pin_cap})")
    if stats["purgedByCount"] == 0:
        missed.append(f"revisions kept ({args.revisions_kept})")
    if stats["purgedByAge"] == 0:
        missed.append(f"revision age ({args.revision_max_age_days} days)")
    if stats["expiredTokensRefused"] == 0:
        missed.append(f"token lifetime ({args.token_lifetime} s)")
    if stats["pagesCut"] == 0:
        missed.append(f"page size ({args.max_page_size} a page)")
    return missed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--devices", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument(
        "--schema3-day-logs", action="store_true",
        help="judge day logs by schema 3's merge, which drops a deleted challenge's day logs: "
             "do not fail on those, nor on those lost under a delete another device undid "
             "(schema 4 keeps both; for measuring an older build)")
    limits = parser.add_argument_group(
        "Drive's limits, low so that a run crosses each (Google's in brackets)")
    limits.add_argument("--pin-cap", type=int, default=20, metavar="N",
                        help="keepForever revisions a file may hold (200); default %(default)s")
    limits.add_argument("--revisions-kept", type=int, default=10, metavar="N",
                        help="unpinned revisions a file keeps (100); default %(default)s")
    limits.add_argument("--revision-max-age-days", type=float, default=0.25, metavar="DAYS",
                        help="age past which an unpinned revision goes, fractions allowed "
                             "(30); default %(default)s: crossed in every pause")
    limits.add_argument("--token-lifetime", type=int, default=1800, metavar="SECONDS",
                        help="an access token's life on Drive's clock (3600); default "
                             "%(default)s: crossed within a burst and in every pause")
    limits.add_argument("--max-page-size", type=int, default=3, metavar="N",
                        help="the most items one page of files.list or revisions.list holds "
                             "(1000); default %(default)s: every revision listing pages")
    limits.add_argument("--hours-per-round", type=float, default=1.0, metavar="HOURS",
                        help="how far Drive's clock and the devices' stamps move per round on "
                             "average; default %(default)s (1,500 rounds span 62 days)")
    limits.add_argument("--burst", type=int, default=12, metavar="ROUNDS",
                        help="rounds come in bursts of this many, 5 minutes apart (so more "
                             "than --revisions-kept uploads land before any can age), then a "
                             "pause that makes up the average (past --revision-max-age-days); "
                             "default %(default)s")
    limits.add_argument("--require-limits", action="store_true",
                        help="fail when the run did not cross every limit above")
    kept = parser.add_argument_group("the work folder")
    kept.add_argument("--stop-at-first-loss", action="store_true",
                      help="stop after the first round that lost an item or saw an "
                           "unexplained failure, and keep the work folder")
    kept.add_argument("--keep", action="store_true", help="keep the work folder always")
    args = parser.parse_args(argv)
    if args.hours_per_round < 0 or args.burst < 1:
        parser.error("--hours-per-round must be 0 or more, --burst 1 or more")
    rng = random.Random(args.seed)
    binary = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="soak-")
    journal = args.keep or args.stop_at_first_loss
    emulator = Emulator(args.python, [
        "--max-pinned-revisions", str(args.pin_cap), "--revisions-kept", str(args.revisions_kept),
        "--revision-max-age-days", str(args.revision_max_age_days),
        "--access-token-lifetime", str(args.token_lifetime),
        "--max-page-size", str(args.max_page_size)],
        os.path.join(work, "emulator-state.json"))
    histogram = collections.Counter()
    remerged = 0
    backups = 0
    total_lost = collections.Counter()
    examples = []
    unexplained = []
    diverged = []
    stopped = None
    stats = None
    # A burst's rounds `within` seconds apart, then a `pause` so the average is kept.
    mean = args.hours_per_round * 3600
    within = min(300, mean)
    pause = int(args.burst * mean - (args.burst - 1) * within)
    within = int(within)
    rounds_log = open(os.path.join(work, "rounds.jsonl"), "w") if journal else None
    try:
        clock = [0]
        counter = [0]
        emulator.set_time(clock[0])
        devices = [Device(i, work, emulator, binary, journal, args.pin_cap)
                   for i in range(args.devices)]
        for device in devices:
            status, _, err = device.run(["login"], "login")
            if status != 0:
                raise SystemExit(f"{device.name}: login failed: {err}")
        promised = {}
        deleted = set()
        for round_number in range(args.rounds):
            mode = MODES[round_number % len(MODES)]
            # Both readings of which old revisions Drive serves, in turn with every If-Match one.
            downloads = "pinned-only" if (round_number // len(MODES)) % 2 else "any"
            emulator.control("settings", {"ifMatch": mode, "revisionDownloads": downloads})
            faults = []
            for _ in range(rng.randint(0, 2)):
                kind = rng.random()
                if kind < 0.05:
                    # A storm longer than a run's retries: some backups give up (exit 5).
                    faults.append({"status": rng.choice([429, 503]), "next": rng.randint(8, 20)})
                elif kind < 0.35:
                    faults.append({"status": rng.choice([429, 500, 503]), "next": rng.randint(1, 3)})
                elif kind < 0.7:
                    faults.append({"cut": 1, "when": rng.choice(["before", "after"])})
                else:
                    faults.append({"truncate": 1})
            if faults:
                emulator.control("faults", faults)
            # Time passes between rounds: the edits below are stamped after it.
            clock[0] += pause if round_number and round_number % args.burst == 0 else within
            for device in devices:
                if rng.random() < 0.7:
                    device.edit(rng, clock, counter)
            chosen = [d for d in devices if rng.random() < 0.6] or [rng.choice(devices)]
            clock[0] += 60
            now = stamp(clock[0])
            # Drive's clock reads `now` as the backups start (it runs on from there).
            emulator.set_time(clock[0])
            running = []
            label = f"round {round_number} ({mode}, {downloads})"
            for device in chosen:
                with open(device.state) as source:
                    snapshot = json.load(source)
                arguments = ["backup", "--file", device.state, "--now", now, "--json"]
                running.append((device, snapshot, arguments, device.start(arguments)))
            exits = {}
            for device, snapshot, arguments, process in running:
                out, err = process.communicate()
                device.note(label, arguments, process.returncode, out, err)
                exits[device.name] = process.returncode
                backups += 1
                histogram[process.returncode] += 1
                if process.returncode == 0:
                    promised[device.name] = snapshot
                    summary = json.loads(out or "{}")
                    if summary.get("mergedRevisions", 0) > 0:
                        remerged += 1
                elif process.returncode not in EXPLAINED:
                    unexplained.append(f"round {round_number}: {device.name} exit "
                                       f"{process.returncode}: {err.strip()}")
            emulator.control("faults", {"clear": True})
            # Now and then a device takes in what the others backed up.
            restored = None
            if rng.random() < 0.5:
                device = rng.choice(devices)
                status, _, err = device.run(
                    ["restore", "--file", device.state, "--merge", "--yes", "--now", now, "--json"],
                    label)
                restored = {device.name: status}
                if status == 0:
                    device.load()
                elif status not in EXPLAINED:
                    unexplained.append(f"round {round_number}: {device.name} restore exit "
                                       f"{status}: {err.strip()}")
            remote = emulator.backups()
            for state in list(promised.values()) + [json.loads(f["content"]) for f in remote]:
                deleted.update(state["tombstones"])
            found = []
            if remote:
                horizon = stamp(clock[0] - WINDOW_DAYS * 86400)
                lost, found = losses(combined(remote), promised.values(), deleted,
                                     args.schema3_day_logs, horizon)
                total_lost += lost
                examples += [f"round {round_number} ({mode}, {downloads}): {e}" for e in found[:3]]
                # A loss is counted once: the promise is kept from here on by what Drive holds.
                if found:
                    promised = {}
            if rounds_log:
                rounds_log.write(json.dumps({
                    "round": round_number, "ifMatch": mode, "revisionDownloads": downloads,
                    "now": now, "faults": faults, "backups": exits, "restore": restored,
                    "lost": found}) + "\n")
                rounds_log.flush()
            if args.stop_at_first_loss and (found or unexplained):
                stopped = round_number
                break
        if stopped is None:
            # Convergence: everyone takes in everything, backs up, and takes in again.
            clock[0] += 3600
            now = stamp(clock[0])
            emulator.set_time(clock[0])
            for step_name in ("restore", "backup", "restore"):
                for device in devices:
                    arguments = (["restore", "--file", device.state, "--merge", "--yes", "--now", now]
                                 if step_name == "restore"
                                 else ["backup", "--file", device.state, "--now", now])
                    status, _, err = device.run(arguments, f"convergence {step_name}")
                    if status != 0:
                        unexplained.append(
                            f"convergence {step_name}: {device.name} exit {status}: {err.strip()}")
                    device.load()
            copies = emulator.backups()
            if len(copies) != 1:
                unexplained.append(f"{len(copies)} copies of the backup on Drive after convergence")
            remote = json.loads(copies[0]["content"])
            diverged = [d.name for d in devices if items(d.document) != items(remote)]
        stats = emulator.control("stats", method="GET")
        if journal:
            emulator.dump(work)
    finally:
        if rounds_log:
            rounds_log.close()
        emulator.stop()
        if not (args.keep or stopped is not None):
            shutil.rmtree(work, ignore_errors=True)
    ran = args.rounds if stopped is None else stopped + 1
    print(f"seed {args.seed}: {ran} rounds, {args.devices} devices, {backups} backups")
    print("exit codes: " + ", ".join(f"{code}×{count}" for code, count in sorted(histogram.items())))
    print(f"re-merge rounds (another device's revision found between base and upload): {remerged}")
    print(f"items lost: challenges {total_lost['challenges']}, tombstones {total_lost['tombstones']}, "
          f"day logs {total_lost['dayLogs']} (+ {total_lost['dayLogsUnderUndoneDelete']} under a "
          f"delete another device undid), wrongly revived {total_lost['revived']}")
    if stopped is None:
        print(f"devices converged: {'all' if not diverged else 'not ' + ', '.join(diverged)}")
    else:
        print(f"stopped after round {stopped}, the first that failed (no convergence run)")
    for line in examples[:10] + unexplained[:10]:
        print("  " + line)
    print(stats_line(stats))
    missed = uncrossed(stats, args)
    if missed:
        print("limits not crossed: " + "; ".join(missed))
    if args.schema3_day_logs:
        del total_lost["dayLogsUnderUndoneDelete"]
    failed = (sum(total_lost.values()) > 0 or unexplained or diverged
              or (args.require_limits and missed))
    if args.keep or stopped is not None:
        print(f"work folder kept: {work}")
    print(f"soak: {'FAILED' if failed else 'passed'} (seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
