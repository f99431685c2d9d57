#!/usr/bin/env python3
"""Writes every file under Examples/ from one description, so the story and the fixtures agree.

Usage: python3 Examples/tools/make_examples.py [--check]
  Rewrites the files in place (from any folder); with --check, writes nothing and exits 1
  if a committed file differs from what the script would write (a test runs this).

Design note. The committed JSON is what matters; this script only keeps it consistent.
- phone.json and laptop.json tell SPEC §1's story: one user, two devices that last synced
  on 2026-11-19 and then went their own ways (see `story`). The laptop runs the newer app
  (schema 4) and keeps the day logs of the challenge it deleted under its tombstone; the
  phone's app still writes schema 3.
- old-v1.json and old-v2.json are the same user's older exports, schema 1 and 2.
- invalid/*.json are copies of a small valid document (`small_v3`, its schema-4 twin
  `small_v4`, or the old examples for schema 1 and 2) that break exactly one rule each; invalid/EXPECTED.tsv says, per file,
  the exit code, the JSON Pointer of the one error ("-" for syntax errors, which carry
  line:column instead) and whether a JSON Schema can express the rule.
Everything is deterministic: the same script writes the same bytes.
"""

import datetime
import json
import random
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent
INVALID = EXAMPLES / "invalid"

# Challenge ids shared by both devices (UUIDv7-shaped, as the app makes them).
WATER = "0193a5b2-0001-7000-8000-000000000001"
READING = "0193a5b2-0002-7000-8000-000000000002"
RUN = "0193a5b2-0003-7000-8000-000000000003"
SUGAR = "0193a5b2-0004-7000-8000-000000000004"
SPANISH = "0193a5b2-0005-7000-8000-000000000005"
SLEEP = "0193a5b2-0006-7000-8000-000000000006"
COLD_SHOWERS = "0193a5b2-0007-7000-8000-0000000000ff"

PHONE = "0193a5b2-7c1e-7d3a-9f00-3b2c1d0e4f5a"
LAPTOP = "0193a5b4-1d2e-7f00-8a11-5c6d7e8f9a0b"


def day(text):
    return datetime.date.fromisoformat(text)


def days(first, last):
    """Every day key from first to last, inclusive."""
    start, end = day(first), day(last)
    return [(start + datetime.timedelta(n)).isoformat() for n in range((end - start).days + 1)]


def stamp(day_key, time, millis=0):
    """An RFC 3339 UTC timestamp with exactly three fraction digits."""
    return f"{day_key}T{time}.{millis:03d}Z"


def rule(start, kind, target, unit=None):
    result = {"from": start, "type": kind, "target": target}
    if kind != "check":
        result["unit"] = unit
    return result


def task(title, rules, archived_from=None):
    return {"title": title, "rules": rules, "archivedFrom": archived_from}


def challenge(title, start, duration, tasks, created, updated, paused=()):
    return {
        "title": title,
        "startDate": start,
        "durationDays": duration,
        "tasks": tasks,
        "pausedDays": list(paused),
        "createdAt": created,
        "updatedAt": updated,
    }


def log(values, updated, note="", mood=None):
    return {"values": values, "note": note, "mood": mood, "updatedAt": updated}


def document(exported, device, settings, challenges, day_logs, tombstones, version=3):
    return {
        "format": "habit-backup",
        "schemaVersion": version,
        "exportedAt": exported,
        "deviceId": device,
        "settings": settings,
        "challenges": challenges,
        "dayLogs": day_logs,
        "tombstones": tombstones,
    }


def daily_logs(challenge_id, keys, values_for, rng, notes=None, evening="20:15:00"):
    """One log per day key, written the same evening; moods and values vary but are seeded."""
    notes = notes or {}
    return {
        f"{challenge_id}/{key}": log(
            values_for(key, rng),
            stamp(key, evening, rng.randrange(1000)),
            notes.get(key, ""),
            rng.choice([None, 2, 3, 3, 4, 4, 5]),
        )
        for key in keys
    }


# The water challenge as both devices had it at the last sync: the goal went from 6 to 8
# glasses on day 10, a rule each, so the first nine days keep the goal they were scored by.
def water_tasks():
    return {
        "water": task(
            "Drink water 💧",
            [rule("2026-11-01", "count", 6, "glasses"), rule("2026-11-10", "count", 8, "glasses")],
        ),
        "stretch": task("Stretch before bed", [rule("2026-11-01", "check", 1)]),
    }


def reading_challenge():
    return challenge(
        "Read every night",
        "2026-10-20",
        60,
        {
            "read": task("Read a book", [rule("2026-10-20", "minutes", 20, "minutes")]),
            # Archived: live until 2026-11-08, kept so old days still score against it.
            "journal": task(
                "One line in the journal", [rule("2026-10-20", "check", 1)], "2026-11-09"
            ),
        },
        stamp("2026-10-19", "21:03:11", 480),
        stamp("2026-11-08", "22:40:00", 17),
    )


def water_values(key, rng):
    target = 6 if key < "2026-11-10" else 8
    return {
        "water": target - rng.choice([0, 0, 0, 1, 2]) + rng.choice([0, 0, 1]),
        "stretch": rng.choice([0, 1, 1, 1]),
    }


def reading_values(key, rng):
    values = {"read": rng.choice([0, 15, 20, 25, 30, 45])}
    if key < "2026-11-09":
        values["journal"] = rng.choice([0, 1, 1])
    return values


# dayStartHour is 2 and the user lives in Europe/London (UTC+0 in November): the check-in
# at 01:30 on Sunday 22 November belongs to Saturday the 21st.
LATE_CHECK_IN = "2026-11-21"
LATE_NOTE = "Logged at 1:30 a.m. on Sunday; the day starts at 2 a.m., so it counts for Saturday"

SETTINGS_PHONE = {
    "dayStartHour": 2,
    "weekStartsOn": "monday",
    "theme": "dark",
    "reminderTime": "20:30",
    "premium": {
        "plan": "yearly",
        "validatedAt": stamp("2026-11-28", "08:00:00"),
        "expiresAt": stamp("2027-05-01", "00:00:00"),
    },
    "appLock": {"enabled": True, "method": "pin"},
}


def story():
    """phone.json and laptop.json.

    Both devices synced on 2026-11-19. Since then:
    - the water challenge was edited on both (the phone paused 14–15 Nov again and renamed
      it; the laptop added a walk task two days later): same id, different updatedAt;
    - the laptop deleted "Morning run" on 25 Nov; the phone still has its older live copy;
    - 21 Nov was logged on both: the phone's 1:30 a.m. check-in, then a laptop edit;
    - "No sugar" is new on the phone, "Learn Spanish" and "Sleep by eleven" only on the laptop;
    - both still carry the tombstone of "Cold showers" (deleted in September);
    - the laptop (schema 4) keeps the run's day logs it had at the sync under the run's
      tombstone, so an edit after the delete on another device would bring them back.
    """
    rng = random.Random(20261130)
    synced = days("2026-11-01", "2026-11-19")
    paused = ["2026-11-14", "2026-11-15"]
    water_notes = {
        "2026-11-03": "Headache in the afternoon; more water helped",
        "2026-11-10": "New goal: 8 glasses from today",
        "2026-11-16": "Back from the weekend away",
    }
    shared_water_logs = daily_logs(
        WATER, [d for d in synced if d not in paused], water_values, rng, water_notes
    )
    shared_reading_logs = daily_logs(
        READING,
        days("2026-10-20", "2026-11-19"),
        reading_values,
        rng,
        {
            "2026-10-31": "Halloween: read ghost stories",
            "2026-11-09": "Journal archived, reading only",
        },
        evening="22:05:00",
    )
    tombstone_cold = {COLD_SHOWERS: {"deletedAt": stamp("2026-09-20", "07:30:00", 250)}}

    # Phone.
    phone_water = challenge(
        "30 days of water 💧",
        "2026-11-01",
        30,
        water_tasks(),
        stamp("2026-10-31", "18:20:00"),
        stamp("2026-11-20", "08:05:12", 300),
        paused,
    )
    run_challenge = challenge(
        "Morning run",
        "2026-11-02",
        28,
        {"run": task("Run before work", [rule("2026-11-02", "minutes", 20, "minutes")])},
        stamp("2026-11-01", "19:45:00"),
        stamp("2026-11-18", "07:00:00", 999),
    )
    sugar = challenge(
        "No sugar for three weeks",
        "2026-11-27",
        21,
        {"no-sugar": task("No added sugar", [rule("2026-11-27", "check", 1)])},
        stamp("2026-11-26", "20:00:00"),
        stamp("2026-11-26", "20:00:00"),
    )
    phone_logs = dict(shared_water_logs)
    phone_logs.update(shared_reading_logs)
    phone_logs.update(daily_logs(WATER, days("2026-11-20", "2026-11-29"), water_values, rng))
    phone_logs[f"{WATER}/{LATE_CHECK_IN}"] = log(
        {"water": 8, "stretch": 1}, stamp("2026-11-22", "01:30:00"), LATE_NOTE, 4
    )
    run_logs = daily_logs(
        RUN,
        [
            "2026-11-02",
            "2026-11-03",
            "2026-11-05",
            "2026-11-07",
            "2026-11-10",
            "2026-11-12",
            "2026-11-15",
            "2026-11-17",
        ],
        lambda key, rng: {"run": rng.choice([18, 20, 25, 32])},
        rng,
        {"2026-11-07": "Rain, but went anyway\nknee a bit sore"},
        evening="07:10:00",
    )
    phone_logs.update(run_logs)
    phone_logs.update(
        daily_logs(
            SUGAR,
            days("2026-11-27", "2026-11-29"),
            lambda key, rng: {"no-sugar": 1},
            rng,
            {"2026-11-29": "Birthday cake: said no 🎂"},
        )
    )
    phone = document(
        stamp("2026-11-29", "22:14:03", 120),
        PHONE,
        SETTINGS_PHONE,
        {WATER: phone_water, READING: reading_challenge(), RUN: run_challenge, SUGAR: sugar},
        phone_logs,
        tombstone_cold,
    )

    # Laptop.
    laptop_water = challenge(
        "30 days of water",
        "2026-11-01",
        30,
        dict(
            water_tasks(),
            walk=task("Walk after lunch", [rule("2026-11-20", "minutes", 20, "minutes")]),
        ),
        stamp("2026-10-31", "18:20:00"),
        stamp("2026-11-22", "09:02:44", 512),
        ["2026-11-14"],
    )
    spanish = challenge(
        "Learn Spanish",
        "2026-09-15",
        90,
        {
            "lesson": task(
                "One lesson",
                [
                    rule("2026-09-15", "minutes", 15, "minutes"),
                    rule("2026-10-15", "minutes", 20, "minutes"),
                ],
            ),
            "words": task("New words", [rule("2026-09-15", "count", 10, "words")], "2026-10-15"),
        },
        stamp("2026-09-14", "18:00:00"),
        stamp("2026-10-15", "18:30:00"),
    )
    sleep = challenge(
        "Sleep by eleven",
        "2026-11-16",
        14,
        {"lights-out": task("Lights out by 23:00", [rule("2026-11-16", "check", 1)])},
        stamp("2026-11-15", "22:00:00"),
        stamp("2026-11-15", "22:00:00"),
        ["2026-11-21"],
    )
    laptop_logs = dict(shared_water_logs)
    laptop_logs.update(shared_reading_logs)
    laptop_logs.update(
        daily_logs(
            WATER,
            days("2026-11-20", "2026-11-27"),
            lambda key, rng: dict(water_values(key, rng), walk=rng.choice([0, 20, 30])),
            rng,
            evening="17:40:00",
        )
    )
    laptop_logs[f"{WATER}/{LATE_CHECK_IN}"] = log(
        {"water": 8, "stretch": 1, "walk": 25},
        stamp("2026-11-22", "09:10:00"),
        LATE_NOTE + "; walk added later on the laptop",
        4,
    )
    laptop_logs.update(
        daily_logs(
            READING, days("2026-11-20", "2026-11-28"), reading_values, rng, evening="22:05:00"
        )
    )
    laptop_logs.update(
        daily_logs(
            SPANISH,
            days("2026-11-16", "2026-11-28"),
            lambda key, rng: {"lesson": rng.choice([0, 20, 25])},
            rng,
            evening="18:45:00",
        )
    )
    laptop_logs.update(
        daily_logs(
            SLEEP,
            [d for d in days("2026-11-16", "2026-11-28") if d != "2026-11-21"],
            lambda key, rng: {"lights-out": rng.choice([0, 1, 1, 1])},
            rng,
            {"2026-11-22": "Paused yesterday: friend's wedding"},
            evening="07:30:00",
        )
    )
    # The run's logs the laptop had from the sync stay under its tombstone (schema 4).
    laptop_logs.update(run_logs)
    laptop = document(
        stamp("2026-11-28", "23:02:47", 905),
        LAPTOP,
        {
            "dayStartHour": 2,
            "weekStartsOn": "monday",
            "theme": "light",
            "reminderTime": None,
            "premium": {
                "plan": "yearly",
                "validatedAt": stamp("2026-11-27", "09:12:30"),
                "expiresAt": stamp("2027-05-01", "00:00:00"),
            },
        },
        {WATER: laptop_water, READING: reading_challenge(), SPANISH: spanish, SLEEP: sleep},
        laptop_logs,
        dict(tombstone_cold, **{RUN: {"deletedAt": stamp("2026-11-25", "21:12:09", 4)}}),
        version=4,
    )
    return phone, laptop


def old_v1():
    """The same user's first phone, schema 1 (January 2025): arrays, one goal per challenge."""
    logs = []
    for n, key in enumerate(days("2025-01-01", "2025-01-06")):
        logs.append(
            {
                "challengeId": "pushups-2025",
                "date": key,
                "value": 15 + 2 * n,
                "note": "Sore arms" if n == 2 else "",
                "updatedAt": stamp(key, "19:30:00"),
            }
        )
        logs.append(
            {
                "challengeId": "floss",
                "date": key,
                "value": n % 2,
                "note": "",
                "updatedAt": stamp(key, "22:45:00"),
            }
        )
    logs.append(
        {
            "challengeId": "meditate",
            "date": "2025-01-05",
            "value": 12,
            "note": "Guided session",
            "updatedAt": stamp("2025-01-05", "07:05:00"),
        }
    )
    return {
        "schemaVersion": 1,
        "deviceId": "old-phone-2024",
        "settings": {"dayStartHour": 0, "theme": "light"},
        "challenges": [
            {
                "id": "pushups-2025",
                "title": "Push-ups in January",
                "startDate": "2025-01-01",
                "durationDays": 31,
                "goal": {"type": "count", "target": 20, "unit": "push-ups"},
                "updatedAt": stamp("2025-01-01", "09:00:00"),
            },
            {
                "id": "meditate",
                "title": "Meditate",
                "startDate": "2025-01-05",
                "durationDays": 30,
                "goal": {"type": "minutes", "target": 10, "unit": "minutes"},
                "updatedAt": stamp("2025-01-04", "21:00:00"),
            },
            {
                "id": "floss",
                "title": "Floss every night",
                "startDate": "2025-01-01",
                "durationDays": 90,
                "goal": {"type": "check", "target": 1},
                "updatedAt": stamp("2024-12-31", "23:10:00"),
            },
        ],
        "logs": logs,
        "deleted": [{"id": "dry-december", "deletedAt": stamp("2025-01-02", "10:00:00")}],
    }


def old_v2():
    """The same user in spring 2026, schema 2: maps keyed by id, tasks still an array."""
    yoga = "0192f000-aaaa-7000-8000-000000000001"
    steps = "0192f000-aaaa-7000-8000-000000000002"
    day_logs = {}
    for n, key in enumerate(days("2026-04-01", "2026-04-05")):
        day_logs[f"{yoga}/{key}"] = {
            "values": {"yoga": 1, "breathe": 5 + n},
            "note": "",
            "mood": [3, 4, None, 5, 4][n],
            "updatedAt": stamp(key, "07:40:00"),
        }
        day_logs[f"{steps}/{key}"] = {
            "values": {"steps": 6000 + 700 * n},
            "note": "Rainy day" if n == 3 else "",
            "mood": None,
            "updatedAt": stamp(key, "21:55:00"),
        }
    return {
        "schemaVersion": 2,
        "exportedAt": stamp("2026-04-06", "08:00:00"),
        "deviceId": PHONE,
        "settings": {
            "dayStartHour": 1,
            "theme": "system",
            "weekStartsOn": "sunday",
            "reminderTime": "07:30",
        },
        "challenges": {
            yoga: {
                "title": "Morning yoga",
                "startDate": "2026-04-01",
                "durationDays": 30,
                "tasks": [
                    {"id": "yoga", "title": "Yoga flow", "type": "check", "target": 1},
                    {
                        "id": "breathe",
                        "title": "Breathing",
                        "type": "minutes",
                        "target": 5,
                        "unit": "minutes",
                    },
                ],
                "createdAt": stamp("2026-03-31", "20:00:00"),
                "updatedAt": stamp("2026-04-02", "07:00:00"),
            },
            steps: {
                "title": "Walk 8,000 steps",
                "startDate": "2026-04-01",
                "durationDays": 14,
                "tasks": [
                    {
                        "id": "steps",
                        "title": "Steps",
                        "type": "count",
                        "target": 8000,
                        "unit": "steps",
                    }
                ],
                "createdAt": stamp("2026-03-31", "20:05:00"),
                "updatedAt": stamp("2026-03-31", "20:05:00"),
            },
        },
        "dayLogs": day_logs,
        "tombstones": {
            "0192f000-aaaa-7000-8000-0000000000aa": {"deletedAt": stamp("2026-03-30", "12:00:00")}
        },
    }


# The small valid document the schema-3 fixtures break, one rule each.
C = WATER
T = COLD_SHOWERS
LOG = f"{C}/2026-11-08"


def small_v3():
    return document(
        stamp("2026-11-29", "21:00:00"),
        PHONE,
        {
            "dayStartHour": 2,
            "weekStartsOn": "monday",
            "theme": "system",
            "reminderTime": "20:30",
            "premium": {
                "plan": "yearly",
                "validatedAt": stamp("2026-11-28", "08:00:00"),
                "expiresAt": None,
            },
        },
        {
            C: challenge(
                "30 days of water",
                "2026-11-01",
                30,
                dict(
                    water_tasks(),
                    read=task("Read", [rule("2026-11-01", "minutes", 20, "minutes")], "2026-11-20"),
                ),
                stamp("2026-10-31", "18:20:00"),
                stamp("2026-11-16", "08:05:12", 300),
                ["2026-11-14", "2026-11-15"],
            )
        },
        {LOG: log({"water": 8, "stretch": 1}, stamp("2026-11-09", "06:40:00"), "Late one", 4)},
        {T: {"deletedAt": stamp("2026-09-20", "07:30:00")}},
    )


def small_v4():
    """small_v3 as schema 4, with a day log kept under the Cold showers tombstone."""
    doc = small_v3()
    doc["schemaVersion"] = 4
    doc["dayLogs"][KEPT] = log({"shower": 1}, stamp("2026-09-19", "07:10:00"), "Brr", None)
    return doc


KEPT = f"{T}/2026-09-19"


def pretty(value):
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def pointer(*tokens):
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


class Case:
    """One invalid fixture: which document, one edit, and what a reader must say about it."""

    def __init__(self, name, at, schema, edit=None, text=None, base=small_v3, exit=3):
        self.name, self.pointer, self.schema = name, at, schema
        self.edit, self.text, self.base, self.exit = edit, text, base, exit

    def render(self):
        doc = self.base()
        if self.edit:
            self.edit(doc)
        rendered = pretty(doc)
        return self.text(rendered) if self.text else rendered.encode()


def replace_once(old, new):
    """A byte edit on the pretty-printed document; the anchor must occur exactly once."""
    old = old.encode()
    new = new if isinstance(new, bytes) else new.encode()

    def apply(text):
        data = text.encode()
        assert data.count(old) == 1, f"anchor {old!r} occurs {data.count(old)} times"
        return data.replace(old, new)

    return apply


def setter(*path, value):
    def apply(doc):
        node = doc
        for token in path[:-1]:
            node = node[token]
        node[path[-1]] = value

    return apply


def water(doc):
    return doc["challenges"][C]["tasks"]["water"]


def extra_tasks(count, archived):
    def apply(doc):
        tasks = doc["challenges"][C]["tasks"]
        for n in range(count):
            tasks[f"extra-{n:02d}"] = task(
                f"Extra {n}", [rule("2026-11-01", "check", 1)], "2026-11-02" if archived else None
            )

    return apply


TASKS = ("challenges", C, "tasks")
CH = ("challenges", C)
SYNTAX = "-"
# Multi-byte on purpose: lengths count Unicode scalars, not bytes or UTF-16 units.
TITLE_121 = ("Drink water 💧 " * 9)[:121]
UNIT_25 = "glasses of 250 mℓ, please"
NOTE_2001 = ("Très bien!\n" * 182)[:2001]
assert (len(TITLE_121), len(UNIT_25), len(NOTE_2001)) == (121, 25, 2001)

CASES = [
    Case("format-wrong", pointer("format"), True, setter("format", value="habit-backup-v3")),
    Case("schema-version-0", pointer("schemaVersion"), True, setter("schemaVersion", value=0)),
    Case(
        "schema-version-5-newer",
        pointer("schemaVersion"),
        True,
        setter("schemaVersion", value=5),
        exit=7,
    ),
    Case("not-a-backup", "", True, text=lambda _: b"[1,2,3]\n"),
    Case("unknown-field-top-level", pointer("comment"), True, setter("comment", value="hi")),
    Case(
        "unknown-field-in-task",
        pointer(*TASKS, "water", "color"),
        True,
        (lambda d: water(d).update(color="blue")),
    ),
    Case(
        "missing-reminder-time",
        pointer("settings", "reminderTime"),
        True,
        (lambda d: d["settings"].pop("reminderTime")),
    ),
    Case(
        "duplicate-key",
        pointer("settings", "theme"),
        False,
        text=replace_once(
            '    "theme": "system",\n', '    "theme": "dark",\n    "theme": "system",\n'
        ),
    ),
    Case(
        "integer-8.5",
        pointer(*TASKS, "water", "rules", 1, "target"),
        True,
        (lambda d: water(d)["rules"][1].update(target=8.5)),
    ),
    # The note holds 30 nested arrays: levels 4…33 (the root object is level 1).
    Case(
        "depth-33",
        SYNTAX,
        False,
        text=replace_once('"note": "Late one"', '"note": ' + "[" * 30 + "]" * 30),
    ),
    Case("bom", SYNTAX, False, text=lambda t: b"\xef\xbb\xbf" + t.encode()),
    Case("trailing-comma", SYNTAX, False, text=replace_once('"2026-11-15"\n', '"2026-11-15",\n')),
    Case("nan", SYNTAX, False, text=replace_once('"mood": 4', '"mood": NaN')),
    Case(
        "leading-zero",
        SYNTAX,
        False,
        text=replace_once('"durationDays": 30', '"durationDays": 030'),
    ),
    Case("invalid-utf8", SYNTAX, False, text=replace_once('"Late one"', b'"Late \xff one"')),
    Case(
        "lone-surrogate-escape",
        SYNTAX,
        False,
        text=replace_once('"Late one"', '"Late \\ud83d one"'),
    ),
    Case(
        "timestamp-without-z",
        pointer("exportedAt"),
        True,
        setter("exportedAt", value="2026-11-29T21:00:00.000"),
    ),
    Case(
        "timestamp-year-1999",
        pointer("tombstones", T, "deletedAt"),
        True,
        setter("tombstones", T, "deletedAt", value="1999-12-31T23:00:00.000Z"),
    ),
    Case(
        "timestamp-leap-second",
        pointer("settings", "premium", "validatedAt"),
        True,
        setter("settings", "premium", "validatedAt", value="2016-12-31T23:59:60Z"),
    ),
    # A day log may lie outside its challenge's days (SPEC §2), so only the date is wrong.
    Case(
        "day-key-2026-02-30",
        pointer("dayLogs", f"{C}/2026-02-30"),
        False,
        (lambda d: d["dayLogs"].update({f"{C}/2026-02-30": d["dayLogs"].pop(LOG)})),
    ),
    Case(
        "day-key-2026-13-01",
        pointer(*TASKS, "read", "archivedFrom"),
        True,
        (lambda d: d["challenges"][C]["tasks"]["read"].update(archivedFrom="2026-13-01")),
    ),
    Case(
        "day-key-year-2200",
        pointer("dayLogs", f"{C}/2200-01-01"),
        True,
        (lambda d: d["dayLogs"].update({f"{C}/2200-01-01": d["dayLogs"].pop(LOG)})),
    ),
    Case(
        "id-bad-character",
        pointer(*TASKS, "morning stretch"),
        True,
        (
            lambda d: d["challenges"][C]["tasks"].update(
                {"morning stretch": d["challenges"][C]["tasks"].pop("stretch")}
            )
        ),
    ),
    Case("id-65-characters", pointer("deviceId"), True, setter("deviceId", value="d" * 65)),
    Case(
        "day-start-hour-5",
        pointer("settings", "dayStartHour"),
        True,
        setter("settings", "dayStartHour", value=5),
    ),
    Case(
        "week-starts-on-friday",
        pointer("settings", "weekStartsOn"),
        True,
        setter("settings", "weekStartsOn", value="friday"),
    ),
    Case(
        "theme-blue", pointer("settings", "theme"), True, setter("settings", "theme", value="blue")
    ),
    Case(
        "reminder-time-24-00",
        pointer("settings", "reminderTime"),
        True,
        setter("settings", "reminderTime", value="24:00"),
    ),
    Case(
        "title-control-character",
        pointer(*TASKS, "water", "title"),
        True,
        (lambda d: water(d).update(title="Drink\twater")),
    ),
    Case(
        "title-c1-control-character",
        pointer(*CH, "title"),
        True,
        setter(*CH, "title", value="30 days\u0085of water"),
    ),
    Case(
        "title-121-characters", pointer(*CH, "title"), True, setter(*CH, "title", value=TITLE_121)
    ),
    Case(
        "duration-days-366",
        pointer(*CH, "durationDays"),
        True,
        setter(*CH, "durationDays", value=366),
    ),
    Case("tasks-65", pointer(*TASKS), True, extra_tasks(62, archived=True)),
    Case("live-tasks-9", pointer(*TASKS), False, extra_tasks(7, archived=False)),
    Case(
        "paused-days-unsorted",
        pointer(*CH, "pausedDays", 1),
        False,
        setter(*CH, "pausedDays", value=["2026-11-15", "2026-11-14"]),
    ),
    Case(
        "paused-day-outside-challenge",
        pointer(*CH, "pausedDays", 2),
        False,
        setter(*CH, "pausedDays", value=["2026-11-14", "2026-11-15", "2026-12-01"]),
    ),
    Case(
        "updated-before-created",
        pointer(*CH, "updatedAt"),
        False,
        setter(*CH, "updatedAt", value="2026-10-31T18:19:59.999Z"),
    ),
    Case(
        "rules-unsorted",
        pointer(*TASKS, "water", "rules", 1, "from"),
        False,
        (lambda d: water(d)["rules"].reverse()),
    ),
    Case(
        "rules-same-from",
        pointer(*TASKS, "water", "rules", 1, "from"),
        False,
        (lambda d: water(d)["rules"][1].update({"from": "2026-11-01"})),
    ),
    Case(
        "first-rule-before-start",
        pointer(*TASKS, "water", "rules", 0, "from"),
        False,
        (lambda d: water(d)["rules"][0].update({"from": "2026-10-31"})),
    ),
    Case(
        "check-target-2",
        pointer(*TASKS, "stretch", "rules", 0, "target"),
        True,
        (lambda d: d["challenges"][C]["tasks"]["stretch"]["rules"][0].update(target=2)),
    ),
    Case(
        "target-10000",
        pointer(*TASKS, "water", "rules", 1, "target"),
        True,
        (lambda d: water(d)["rules"][1].update(target=10000)),
    ),
    Case(
        "unit-on-check-task",
        pointer(*TASKS, "stretch", "rules", 0, "unit"),
        True,
        (lambda d: d["challenges"][C]["tasks"]["stretch"]["rules"][0].update(unit="times")),
    ),
    Case(
        "unit-25-characters",
        pointer(*TASKS, "water", "rules", 1, "unit"),
        True,
        (lambda d: water(d)["rules"][1].update(unit=UNIT_25)),
    ),
    Case(
        "archived-not-after-first-rule",
        pointer(*TASKS, "read", "archivedFrom"),
        False,
        (lambda d: d["challenges"][C]["tasks"]["read"].update(archivedFrom="2026-11-01")),
    ),
    Case(
        "day-log-missing-challenge",
        pointer("dayLogs", f"{SPANISH}/2026-11-08"),
        False,
        (lambda d: d["dayLogs"].update({f"{SPANISH}/2026-11-08": d["dayLogs"].pop(LOG)})),
    ),
    # Schema 3 keeps no day logs under a tombstone; schema 4 does (SPEC §2c), but not of
    # a challenge that is neither live nor deleted.
    Case(
        "v3-day-log-under-tombstone",
        pointer("dayLogs", KEPT),
        False,
        (lambda d: d["dayLogs"].update(small_v4()["dayLogs"])),
    ),
    Case(
        "v4-day-log-missing-challenge",
        pointer("dayLogs", f"{SPANISH}/2026-09-19"),
        False,
        (lambda d: d["dayLogs"].update({f"{SPANISH}/2026-09-19": d["dayLogs"].pop(KEPT)})),
        base=small_v4,
    ),
    Case(
        "v4-kept-log-mood-6",
        pointer("dayLogs", KEPT, "mood"),
        True,
        setter("dayLogs", KEPT, "mood", value=6),
        base=small_v4,
    ),
    Case(
        "value-10000",
        pointer("dayLogs", LOG, "values", "water"),
        True,
        setter("dayLogs", LOG, "values", "water", value=10000),
    ),
    Case(
        "note-2001-characters",
        pointer("dayLogs", LOG, "note"),
        True,
        setter("dayLogs", LOG, "note", value=NOTE_2001),
    ),
    Case("mood-6", pointer("dayLogs", LOG, "mood"), True, setter("dayLogs", LOG, "mood", value=6)),
    Case(
        "tombstone-for-live-challenge",
        pointer("tombstones", C),
        False,
        (lambda d: d["tombstones"].update({C: d["tombstones"].pop(T)})),
    ),
    Case(
        "v1-goal-target-10000",
        pointer("challenges", 0, "goal", "target"),
        True,
        setter("challenges", 0, "goal", "target", value=10000),
        base=old_v1,
    ),
    Case(
        "v1-log-date-2025-02-30",
        pointer("logs", 0, "date"),
        False,
        setter("logs", 0, "date", value="2025-02-30"),
        base=old_v1,
    ),
    Case(
        "v1-with-format",
        pointer("format"),
        True,
        setter("format", value="habit-backup"),
        base=old_v1,
    ),
    Case(
        "v2-task-type-timer",
        pointer("challenges", "0192f000-aaaa-7000-8000-000000000001", "tasks", 1, "type"),
        True,
        setter(
            "challenges", "0192f000-aaaa-7000-8000-000000000001", "tasks", 1, "type", value="timer"
        ),
        base=old_v2,
    ),
    Case(
        "v2-mood-0",
        pointer("dayLogs", "0192f000-aaaa-7000-8000-000000000001/2026-04-01", "mood"),
        True,
        setter("dayLogs", "0192f000-aaaa-7000-8000-000000000001/2026-04-01", "mood", value=0),
        base=old_v2,
    ),
]


def outputs():
    """Every file this script owns, by path, with its bytes."""
    phone, laptop = story()
    files = {
        EXAMPLES / "phone.json": pretty(phone).encode(),
        EXAMPLES / "laptop.json": pretty(laptop).encode(),
        EXAMPLES / "old-v1.json": pretty(old_v1()).encode(),
        EXAMPLES / "old-v2.json": pretty(old_v2()).encode(),
    }
    rows = ["file\texit\tpointer\tschema"]
    for case in CASES:
        files[INVALID / f"{case.name}.json"] = case.render()
        rows.append(
            f"{case.name}.json\t{case.exit}\t{case.pointer}\t{'yes' if case.schema else 'no'}"
        )
    files[INVALID / "EXPECTED.tsv"] = ("\n".join(rows) + "\n").encode()
    return files


def main(arguments):
    files = outputs()
    stale = [path for path in INVALID.glob("*.json") if path not in files]
    if arguments == ["--check"]:
        differ = [
            path for path, data in files.items() if not path.exists() or path.read_bytes() != data
        ]
        for path in sorted(differ + stale):
            print(f"{path.relative_to(EXAMPLES.parent)}: not what make_examples.py writes")
        return 1 if differ or stale else 0
    if arguments:
        print(__doc__.strip())
        return 2
    INVALID.mkdir(exist_ok=True)
    for path in stale:
        path.unlink()
    for path, data in files.items():
        path.write_bytes(data)
    print(f"wrote {len(files)} files under {EXAMPLES}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
