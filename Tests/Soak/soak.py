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

Prints rounds, backups, the exit-code histogram, re-merge rounds (backups that found
another device's revision between their base and their upload), items lost (must be 0),
and the seed. Exit 1 when anything was lost or a device failed in a way no fault explains.

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
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMULATOR = os.path.join(ROOT, "Tests", "Emulator", "google_emulator.py")
BROWSER = os.path.join(ROOT, "Tests", "Emulator", "fake_browser.py")
MODES = ["honour", "open-only", "ignore"]
EPOCH = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
# Exit codes a fault may explain: 5 (network or Drive after retries, or another device kept
# writing). Anything else from a backup is a failure of the product.
EXPLAINED = {0, 5}


def stamp(seconds):
    instant = EPOCH + datetime.timedelta(seconds=seconds)
    return instant.strftime("%Y-%m-%dT%H:%M:%S.") + f"{instant.microsecond // 1000:03d}Z"


class Emulator:
    def __init__(self, python):
        self.process = subprocess.Popen(
            [python, EMULATOR, "--client-id", "soak-client", "--client-secret", "soak-secret"],
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

    def stop(self):
        self.process.stdin.close()
        self.process.terminate()
        self.process.wait()


class Device:
    def __init__(self, index, work, emulator, binary):
        self.name = f"device{index}"
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

    def run(self, arguments):
        process = self.start(arguments)
        out, err = process.communicate()
        return process.returncode, out, err

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


def losses(remote, promised, deleted, schema3=False):
    """What `remote` (Drive's document) lacks of the promised states, by kind. `deleted`: the
    ids of every challenge deleted at some point; a day log of such a challenge, lost while
    the challenge is live again, is counted apart (`dayLogsUnderUndoneDelete`): schema 3's
    merge drops a deleted challenge's day logs, and schema 4's keeps them."""
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
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    binary = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="soak-")
    emulator = Emulator(args.python)
    histogram = collections.Counter()
    remerged = 0
    backups = 0
    total_lost = collections.Counter()
    examples = []
    unexplained = []
    try:
        devices = [Device(i, work, emulator, binary) for i in range(args.devices)]
        for device in devices:
            status, _, err = device.run(["login"])
            if status != 0:
                raise SystemExit(f"{device.name}: login failed: {err}")
        clock = [0]
        counter = [0]
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
            for device in devices:
                if rng.random() < 0.7:
                    device.edit(rng, clock, counter)
            chosen = [d for d in devices if rng.random() < 0.6] or [rng.choice(devices)]
            clock[0] += 60
            now = stamp(clock[0])
            running = []
            for device in chosen:
                with open(device.state) as source:
                    snapshot = json.load(source)
                running.append((device, snapshot, device.start(
                    ["backup", "--file", device.state, "--now", now, "--json"])))
            for device, snapshot, process in running:
                out, err = process.communicate()
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
            if rng.random() < 0.5:
                device = rng.choice(devices)
                status, _, err = device.run(
                    ["restore", "--file", device.state, "--merge", "--yes", "--now", now, "--json"])
                if status == 0:
                    device.load()
                elif status not in EXPLAINED:
                    unexplained.append(f"round {round_number}: {device.name} restore exit "
                                       f"{status}: {err.strip()}")
            remote = emulator.backups()
            for state in list(promised.values()) + [json.loads(f["content"]) for f in remote]:
                deleted.update(state["tombstones"])
            if remote:
                lost, found = losses(combined(remote), promised.values(), deleted,
                                     args.schema3_day_logs)
                total_lost += lost
                examples += [f"round {round_number} ({mode}): {e}" for e in found[:3]]
                # A loss is counted once: the promise is kept from here on by what Drive holds.
                if found:
                    promised = {}
        # Convergence: everyone takes in everything, backs up, and takes in again.
        now = stamp(clock[0] + 3600)
        for step in ("restore", "backup", "restore"):
            for device in devices:
                arguments = (["restore", "--file", device.state, "--merge", "--yes", "--now", now]
                             if step == "restore" else ["backup", "--file", device.state, "--now", now])
                status, _, err = device.run(arguments)
                if status != 0:
                    unexplained.append(f"convergence {step}: {device.name} exit {status}: {err.strip()}")
                device.load()
        copies = emulator.backups()
        if len(copies) != 1:
            unexplained.append(f"{len(copies)} copies of the backup on Drive after convergence")
        remote = json.loads(copies[0]["content"])
        diverged = [d.name for d in devices if items(d.document) != items(remote)]
    finally:
        emulator.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"seed {args.seed}: {args.rounds} rounds, {args.devices} devices, {backups} backups")
    print("exit codes: " + ", ".join(f"{code}×{count}" for code, count in sorted(histogram.items())))
    print(f"re-merge rounds (another device's revision found between base and upload): {remerged}")
    print(f"items lost: challenges {total_lost['challenges']}, tombstones {total_lost['tombstones']}, "
          f"day logs {total_lost['dayLogs']} (+ {total_lost['dayLogsUnderUndoneDelete']} under a "
          f"delete another device undid), wrongly revived {total_lost['revived']}")
    print(f"devices converged: {'all' if not diverged else 'not ' + ', '.join(diverged)}")
    for line in examples[:10] + unexplained[:10]:
        print("  " + line)
    if args.schema3_day_logs:
        del total_lost["dayLogsUnderUndoneDelete"]
    failed = sum(total_lost.values()) > 0 or unexplained or diverged
    print(f"soak: {'FAILED' if failed else 'passed'} (seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
