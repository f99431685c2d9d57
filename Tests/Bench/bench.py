"""The driver of `make bench`: BackupKit and its peers on the same files, in one run.

For each size it makes (or reuses) a seeded two-device pair with `backup-bench generate`,
then times first what a user runs, as whole processes started cold (a new process each run,
the files in the page cache): `cloudbackup validate`, `migrate` and `merge`, beside whole
Python processes that read and parse the same files with orjson, and with pysimdjson (parse
only: simdjson's document, no Python objects), the practical limit of parsing JSON. Each
child's wall time, user + system CPU, minor page faults and peak RSS come from the OS (see
`run_cold`). Then, inside one warm process, on those same files:
  ours   BackupReader.read (parse + validate), BackupWriter.write, and the full merge
         (read both files, validate, merge, write the result) in a child process whose peak
         resident memory GNU time reports; the age envelope's encrypt and decrypt of the
         file (X25519), against read + write, and the one scrypt 2^18 a passphrase adds;
         gzip (libdeflate) of the file at levels 1 (a backup's), 3 and 6 with the size each
         leaves, and the level-1 file inflated back;
  peers  Python json.loads and orjson.loads (parse only, from bytes in memory), `jq -S -c .`
         (a whole process: parse + sorted write to /dev/null), Foundation's JSONDecoder into
         an equivalent Codable model (in backup-bench), zlib's compress2 at level 1 and its
         uncompress of that (the system's libz.so.1 through ctypes, into a buffer made once).
Every figure is the median of several runs; the ratio column is ours / peer (below 1 means
BackupKit is faster). What runs inside one process (ours, the Python peers, Foundation) is
called once untimed first, so no size's figure carries what only a first call pays, then
timed at least BENCH_RUNS times and on until BENCH_BUDGET seconds have gone (Foundation:
its runs only), so a fast step is timed as often as a slow one has time for. Each result is
freed before the next clock starts; backup-bench also has glibc finish that free (fold its
fast bins), which it would otherwise leave to the next call's first large request. What runs as
a whole process (the full merge, jq) is timed cold, every run. Time per day log across
sizes, which the tables' being minutes apart would skew, is timed again in rounds that take
every size in turn (the read, and the cold merge). Timing happens here only, never in
`make test`. Each table ends with what schema 4's day logs kept under a tombstone cost the
merged file in bytes (`backup-bench keptcost`, untimed).

Environment: BENCH_SIZES (day logs per file, comma-separated; default 20000,200000,1000000),
BENCH_SEED (default 42), BENCH_RUNS (least runs per measurement; default 9, 5 and 3 by size),
BENCH_BUDGET (seconds, default 1), BENCH_ROUNDS (rounds of the time-per-day-log comparison,
default 5).
"""

import argparse
import ctypes
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
# Seconds each in-process measurement keeps running after its minimum of runs.
BUDGET = float(os.environ.get("BENCH_BUDGET", "1"))
GENERATOR_SOURCES = ROOT / "Sources" / "BenchDocuments"
DEVICES = ("phone", "laptop")
# Issue 40: libdeflate at a backup's level, at 20,000 day logs.
GZIP_BUDGET = 0.015
GUNZIP_BUDGET = 0.005


@dataclass
class Child:
    code: int
    stdout: bytes
    stderr: str
    wall: float
    peak_rss: int | None  # bytes


def spawn(argv, capture=True):
    """Runs argv to completion under GNU time for its peak RSS.

    Not wait4 from here: Linux counts the RSS a child had before exec, i.e. this driver's,
    which holds the files and the Python peers' results. GNU time is a small process, so what
    it reports is the program's own peak.
    """
    with tempfile.NamedTemporaryFile() as peak, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        completed = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", peak.name, *argv],
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL, stderr=err,
        )
        wall = time.perf_counter() - start
        err.seek(0)
        message = err.read().decode(errors="replace").strip()
        kilobytes = peak.read().decode().strip().splitlines()
    peak_rss = int(kilobytes[-1]) * 1024 if kilobytes and kilobytes[-1].isdigit() else None
    return Child(completed.returncode, completed.stdout or b"", message, wall, peak_rss)


@dataclass
class Cold:
    wall: float
    cpu: float  # user + system, seconds
    faults: int  # minor page faults
    peak_rss: int  # bytes


def run_cold(argv):
    """Runs argv once as a fresh process; what it cost, from the OS.

    Under GNU time for the peak RSS (as `spawn`), and waited for with wait4, whose rusage
    covers GNU time and the program it waited for: CPU to the microsecond (GNU time prints
    hundredths) and minor faults. GNU time's own share is the `/usr/bin/time true` row."""
    with tempfile.NamedTemporaryFile() as peak, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", peak.name, *argv],
                                 stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        kilobytes = peak.read().decode().strip().splitlines()
        if child.returncode != 0:
            err.seek(0)
            message = err.read().decode(errors="replace").strip().splitlines()
            raise Failed(message[0] if message else f"exit {child.returncode}")
    return Cold(wall, usage.ru_utime + usage.ru_stime, usage.ru_minflt,
                int(kilobytes[-1]) * 1024)


def median_cold(samples):
    """The median of cold runs, field by field; peak RSS the highest."""
    return Cold(median_of([c.wall for c in samples]), median_of([c.cpu for c in samples]),
                int(median_of([c.faults for c in samples])), max(c.peak_rss for c in samples))


class Failed(Exception):
    pass


def bench_json(binary, *arguments):
    """Runs a backup-bench subcommand and returns its JSON line and peak RSS."""
    child = spawn([str(binary), *arguments])
    if child.code != 0:
        message = child.stderr.splitlines()[0] if child.stderr else f"exit {child.code}"
        raise Failed(message.removeprefix("backup-bench: "))
    return json.loads(child.stdout), child.peak_rss


def generator_digest():
    digest = hashlib.sha256()
    for source in sorted(GENERATOR_SOURCES.glob("*.swift")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def ensure_pair(binary, data_root, seed, size):
    """The pair for (seed, size), generated again only when the generator's code changed."""
    folder = data_root / f"seed{seed}-{size}"
    stamp = folder / "generator.sha"
    digest = generator_digest()
    files = [folder / f"{device}.json" for device in DEVICES]
    needed = [*files, folder / "contents.jsonl"]
    if not (stamp.exists() and stamp.read_text() == digest and all(f.exists() for f in needed)):
        print(f"generating {size:,} day logs (seed {seed}) into {folder}", flush=True)
        child = spawn([str(binary), "generate", "--seed", str(seed), "--day-logs", str(size),
                       "-o", str(folder)])
        if child.code != 0:
            sys.exit(f"bench: generate failed: {child.stderr}")
        (folder / "contents.jsonl").write_bytes(child.stdout)
        stamp.write_text(digest)
    return files


def contents(folder):
    """What generate said each file holds, e.g. 'phone.json 3.4 MB, 19,700 day logs'."""
    lines = (folder / "contents.jsonl").read_text().splitlines()
    return ", ".join(
        f"{entry['device']}.json {entry['bytes'] / 1e6:.1f} MB with {entry['dayLogs']:,} day logs"
        for entry in map(json.loads, lines)
    )


def median_of(seconds):
    return statistics.median(seconds)


def time_in_process(function, payload, runs):
    """The median of at least `runs` timed calls, and of as many as fit in BUDGET seconds,
    after one untimed call: as backup-bench times ours."""
    function(payload)
    seconds = []
    begin = time.perf_counter()
    while len(seconds) < runs or time.perf_counter() - begin < BUDGET:
        start = time.perf_counter()
        result = function(payload)
        seconds.append(time.perf_counter() - start)
        del result
    return median_of(seconds)


@dataclass
class Row:
    label: str
    seconds: float | None = None
    megabytes: float | None = None  # input size for MB/s
    peak_rss: int | None = None
    ratio: str = ""
    failure: str = ""


class Zlib:
    """zlib's one-call compress2 and uncompress, the peers of libdeflate's, from the system's
    libz.so.1 (what Python's zlib module links; its zlib.compress is deflate in steps). The
    output buffer is made once, outside the clock, so the peer pays no allocation."""

    def __init__(self):
        library = self.library = ctypes.CDLL("libz.so.1")
        library.zlibVersion.restype = ctypes.c_char_p
        library.compressBound.restype = ctypes.c_ulong
        library.compressBound.argtypes = [ctypes.c_ulong]
        for name in ("compress2", "uncompress"):
            getattr(library, name).argtypes = [
                ctypes.c_char_p, ctypes.POINTER(ctypes.c_ulong), ctypes.c_char_p, ctypes.c_ulong,
                *([ctypes.c_int] if name == "compress2" else [])]
        self.version = library.zlibVersion().decode()

    def compress2(self, data, level):
        """The compressed bytes, and a function that compresses `data` again (into the
        same buffer: what is timed)."""
        buffer = ctypes.create_string_buffer(self.library.compressBound(len(data)))

        def compress(payload):
            size = ctypes.c_ulong(len(buffer))
            if self.library.compress2(buffer, ctypes.byref(size), payload, len(payload), level):
                raise Failed("compress2 failed")
            return size.value

        size = compress(data)
        return buffer.raw[:size], compress

    def uncompress(self, data, size):
        buffer = ctypes.create_string_buffer(size)

        def uncompress(payload):
            out = ctypes.c_ulong(size)
            if self.library.uncompress(buffer, ctypes.byref(out), payload, len(payload)):
                raise Failed("uncompress failed")
            return out.value

        return uncompress


def measure(binary, files, runs, slow_runs, out_folder):
    """All rows for one size; a failing step (e.g. code not written yet) shows as failed."""
    phone, laptop = files
    phone_bytes, laptop_bytes = phone.read_bytes(), laptop.read_bytes()
    phone_mb = len(phone_bytes) / 1e6
    pair_mb = (len(phone_bytes) + len(laptop_bytes)) / 1e6
    rows, results = [], {}
    budget = ["--budget-ms", str(max(1, int(BUDGET * 1000)))]

    def ours(key, label, megabytes, step):
        row = Row(label, megabytes=megabytes)
        try:
            row.seconds, row.peak_rss, note = step()
            row.ratio = note
            results[key] = row.seconds
        except Failed as failure:
            row.failure = str(failure)
        rows.append(row)

    def read_step():
        report, peak = bench_json(binary, "read", str(phone), "--runs", str(runs), *budget)
        results["dayLogs"] = report["dayLogs"]
        return median_of(report["seconds"]), peak, ""

    def write_step():
        report, _ = bench_json(binary, "write", str(phone), "--runs", str(runs), *budget)
        return median_of(report["seconds"]), None, "" if report["identical"] else "NOT canonical"

    def merge_step():
        seconds, peak = [], 0
        output = out_folder / "merged.json"
        for _ in range(runs):
            report, rss = bench_json(binary, "merge", str(phone), str(laptop), "-o", str(output))
            seconds.append(report["seconds"])
            peak = max(peak, rss or 0)
        results["mergePeak"] = peak
        return median_of(seconds), peak, f"peak {peak / 1e6 / pair_mb:.2f}× inputs"

    ours("read", "BackupKit read + validate (phone)", phone_mb, read_step)
    ours("write", "BackupKit canonical write (phone)", phone_mb, write_step)
    ours("merge", "BackupKit full merge (phone + laptop)", pair_mb, merge_step)

    envelope = {}

    def envelope_step(direction):
        # One run of `backup-bench envelope` times both directions; the second row reuses it.
        if not envelope:
            report, _ = bench_json(binary, "envelope", str(phone), "--runs", str(runs), *budget)
            if not report["identical"]:
                raise Failed("decrypted bytes differ from the file")
            envelope.update(report)
        seconds = median_of(envelope[direction + "Seconds"])
        if direction == "encrypt":
            return seconds, None, f"scrypt 2^18 once: {envelope['scryptSeconds'] * 1000:.0f} ms"
        # A backup downloads (decrypts), reads, merges, writes and uploads (encrypts): read
        # + write stands for its plain work, what encryption adds is both directions.
        plain = results.get("read", 0) + results.get("write", 0)
        added = results.get("encrypt", 0) + seconds
        return seconds, None, f"(read+write+both) / (read+write) {(plain + added) / plain:.2f}×" if plain else ""

    ours("encrypt", "age encrypt, X25519 (phone)", phone_mb, lambda: envelope_step("encrypt"))
    ours("decrypt", "age decrypt, X25519 (phone)", phone_mb, lambda: envelope_step("decrypt"))

    gzip = {}

    def gzip_step(level):
        # One run of `backup-bench gzip` times every level and the inflate; the rows reuse it.
        if not gzip:
            report, _ = bench_json(binary, "gzip", str(phone), "--runs", str(runs), *budget)
            if not report["identical"]:
                raise Failed("inflated bytes differ from the file")
            gzip.update(report)
        if level == "inflate":
            return median_of(gzip["decompressSeconds"]), None, ""
        size = gzip[f"bytes{level}"]
        note = f"{size:,} bytes, {size / len(phone_bytes):.1%}"
        return median_of(gzip[f"seconds{level}"]), None, note

    for level in (1, 3, 6):
        ours(f"gzip{level}", f"gzip level {level}, libdeflate (phone)", phone_mb,
             lambda level=level: gzip_step(level))
    ours("gunzip", "gunzip, libdeflate (phone)", phone_mb, lambda: gzip_step("inflate"))

    def ratio(key, peer_seconds, what):
        mine = sum(results[k] for k in key) if all(k in results for k in key) else None
        return f"{what} {mine / peer_seconds:.3f}×" if mine is not None else ""

    json_seconds = time_in_process(json.loads, phone_bytes, runs)
    rows.append(Row("Python json.loads (phone)", json_seconds, phone_mb,
                    ratio=ratio(["read"], json_seconds, "read")))
    orjson_seconds = time_in_process(orjson.loads, phone_bytes, runs)
    results["orjson"] = orjson_seconds
    rows.append(Row("orjson.loads (phone)", orjson_seconds, phone_mb,
                    ratio=ratio(["read"], orjson_seconds, "read")))
    orjson_pair = orjson_seconds + time_in_process(orjson.loads, laptop_bytes, runs)
    results["orjsonPair"] = orjson_pair
    rows.append(Row("orjson.loads (phone + laptop)", orjson_pair, pair_mb,
                    ratio=ratio(["merge"], orjson_pair, "merge")))

    jq_runs = [spawn(["jq", "-S", "-c", ".", str(phone)], capture=False) for _ in range(slow_runs)]
    if any(run.code != 0 for run in jq_runs):
        rows.append(Row("jq -S -c . (phone)", failure=jq_runs[0].stderr or "jq failed"))
    else:
        jq_seconds = median_of([run.wall for run in jq_runs])
        rows.append(Row("jq -S -c . (phone, whole process)", jq_seconds, phone_mb,
                        max(run.peak_rss or 0 for run in jq_runs),
                        ratio(["read", "write"], jq_seconds, "read+write")))

    try:
        zlib = Zlib()
        deflated, compress = zlib.compress2(phone_bytes, 1)
        seconds = time_in_process(compress, phone_bytes, runs)
        rows.append(Row(f"zlib {zlib.version} compress2 level 1 (phone)", seconds, phone_mb,
                        ratio=f"{ratio(['gzip1'], seconds, 'gzip')}; {len(deflated):,} bytes,"
                              f" {len(deflated) / len(phone_bytes):.1%}"))
        seconds = time_in_process(zlib.uncompress(deflated, len(phone_bytes)), deflated, runs)
        rows.append(Row(f"zlib {zlib.version} uncompress (phone)", seconds, phone_mb,
                        ratio=ratio(["gunzip"], seconds, "gunzip")))
    except (OSError, Failed) as failure:
        rows.append(Row("zlib compress2 (phone)", failure=str(failure)))

    row = Row("Foundation JSONDecoder (phone)", megabytes=phone_mb)
    try:
        report, peak = bench_json(binary, "foundation", str(phone), "--runs", str(slow_runs))
        row.seconds, row.peak_rss = median_of(report["seconds"]), peak
        row.ratio = ratio(["read"], row.seconds, "read")
    except Failed as failure:
        row.failure = str(failure)
    rows.append(row)
    return rows, results, pair_mb


# Whole Python processes on the same files: read each file, parse it, exit.
ORJSON_PARSE = "import orjson, sys\nfor name in sys.argv[1:]: orjson.loads(open(name, 'rb').read())"
# A parser per file: one parser's document must be gone before it parses again.
SIMDJSON_PARSE = ("import simdjson, sys\n"
                  "for name in sys.argv[1:]: simdjson.Parser().parse(open(name, 'rb').read())")


def measure_cold(cli, files, runs, out_folder):
    """What a user waits for, one fresh process per run: our commands and the peers,
    interleaved run by run so that a slow stretch of this shared host slows them alike.
    Returns [(label, megabytes, Cold or failure text)] and the figures by key."""
    phone, laptop = files
    output = str(out_folder / "cold-out.json")
    python = sys.executable
    steps = [
        ("floor", "/usr/bin/time true (what every row includes)", None, ["true"]),
        ("validate", "cloudbackup validate (phone)", [phone], [cli, "validate", phone]),
        ("migrate", "cloudbackup migrate (phone) -o OUT", [phone],
         [cli, "migrate", phone, "-o", output]),
        ("merge", "cloudbackup merge (phone + laptop) -o OUT", files,
         [cli, "merge", phone, laptop, "-o", output]),
        ("orjson", "python -c orjson.loads (phone)", [phone], [python, "-c", ORJSON_PARSE, phone]),
        ("orjsonPair", "python -c orjson.loads (phone + laptop)", files,
         [python, "-c", ORJSON_PARSE, phone, laptop]),
        ("simdjson", "python -c simdjson parse (phone)", [phone],
         [python, "-c", SIMDJSON_PARSE, phone]),
    ]
    samples = {key: [] for key, *_ in steps}
    failures = {}
    for _ in range(runs):
        for key, _, _, argv in steps:
            if key in failures:
                continue
            try:
                samples[key].append(run_cold([str(part) for part in argv]))
            except Failed as failure:
                failures[key] = str(failure)
    rows, figures = [], {}
    for key, label, inputs, _ in steps:
        megabytes = sum(f.stat().st_size for f in inputs) / 1e6 if inputs else None
        if key in failures:
            rows.append((label, megabytes, failures[key]))
            continue
        cold = figures[key] = median_cold(samples[key])
        rows.append((label, megabytes, cold))
    return rows, figures


# Where this run leaves a whole `merge -o`'s CPU beside each pair, for requests.py to set a
# one-change backup of the same file against (issue 41: at most 1.5× of it).
MERGE_CPU_FILE = "merge-cpu.json"


def record_merge_cpu(folder, cold):
    path = Path(folder) / MERGE_CPU_FILE
    if "merge" in cold:
        path.write_text(json.dumps({"seconds": cold["merge"].cpu,
                                    "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}))
    elif path.exists():
        path.unlink()


def print_cold_table(size, rows, runs):
    print(f"\n{size:,} day logs, whole processes started cold (files in the page cache):"
          f" medians of {runs} runs, taken in turn; peak RSS the highest")
    print(f"  {'':44} {'wall':>11} {'MB/s':>7} {'user+sys':>11} {'minor faults':>12}"
          f" {'peak RSS':>9}")
    for label, megabytes, cold in rows:
        if isinstance(cold, str):
            print(f"  {label:44} failed: {cold}")
            continue
        rate = f"{megabytes / cold.wall:7.0f}" if megabytes else " " * 7
        print(f"  {label:44} {duration(cold.wall)} {rate} {duration(cold.cpu)} {cold.faults:12,}"
              f" {cold.peak_rss / 1e6:6.0f} MB")


def kept_cost_line(binary, files):
    """The file-size cost of kept day logs on this size's pair: the merge written as schema 4
    against the same document without them (what schema 3's rule 5 wrote)."""
    try:
        cost, _ = bench_json(binary, "keptcost", *map(str, files))
    except Failed as failure:
        return f"  kept day logs (schema 4): failed: {failure}"
    extra = cost["bytes"] - cost["bytesWithoutKept"]
    return (
        f"  kept day logs (schema 4): {cost['keptDayLogs']:,} of {cost['dayLogs']:,} in the merge,"
        f" under {cost['tombstones']:,} tombstones (challenges deleted on either device:"
        f" {cost['deletedOnEitherDevice'] / cost['challengeIds']:.1%}); merged file"
        f" {cost['bytes'] / 1e6:.2f} MB, {cost['bytesWithoutKept'] / 1e6:.2f} MB without them:"
        f" +{extra / 1e6:.2f} MB (+{extra / cost['bytesWithoutKept']:.1%})"
    )


def per_log_in_rounds(binary, pairs, rounds, runs_for):
    """Nanoseconds per day log of the read and of the full merge, for every size, each the
    median over `rounds` rounds that take every size in turn.

    The tables time one size after another, minutes apart, which is right for a size
    against its peers (timed right beside it) but not for sizes against each other: this
    host's speed drifts by a third from one minute to the next. Taken in rounds, a slow
    stretch slows every size alike. Read as in its table (in-process, after an untimed
    run, `runs_for(size)` runs and on for BENCH_BUDGET); the merge as one cold process. Both
    per day log of the phone file, as above."""
    samples = {size: {"read": [], "merge": [], "pages": [], "unfolded": []} for size in pairs}
    budget = ["--budget-ms", str(max(1, int(BUDGET * 1000)))]
    for number in range(rounds):
        # Every other round backwards, so no size always comes right after the same one.
        order = list(pairs.items())
        for size, (phone, laptop) in order if number % 2 == 0 else reversed(order):
            runs = ["--runs", str(runs_for(size))]
            report, _ = bench_json(binary, "read", str(phone), *runs, *budget)
            day_logs = report["dayLogs"]
            if day_logs == 0:
                raise Failed(f"{phone} holds no day logs to time per day log")
            samples[size]["read"].append(median_of(report["seconds"]) / day_logs * 1e9)
            samples[size]["pages"].append(report["freshPages"] / day_logs * 1000)
            samples[size]["unfolded"].append(report["unfoldedBytes"])
            output = phone.parent / "merged.json"
            report, _ = bench_json(binary, "merge", str(phone), str(laptop), "-o", str(output))
            samples[size]["merge"].append(report["seconds"] / day_logs * 1e9)
    # Leftover frees are a fault of the measurement, so any round's counts, not the median.
    return {size: {key: max(values) if key == "unfolded" else median_of(values)
                   for key, values in steps.items()}
            for size, steps in samples.items()}


def duration(seconds):
    return f"{seconds * 1000:8.1f} ms" if seconds < 1 else f"{seconds:8.2f} s "


def print_table(size, files, rows, runs, slow_runs):
    print(f"\n{size:,} day logs, in one warm process: medians of at least {runs} runs and of"
          f" {BUDGET:g} s, after an untimed run; full merge: {runs} fresh processes; jq,"
          f" Foundation: {slow_runs}")
    print(f"  {contents(files[0].parent)}")
    print(f"  {'':40} {'median':>11} {'MB/s':>8} {'peak RSS':>10}  ours / peer")
    for row in rows:
        if row.failure:
            print(f"  {row.label:40} failed: {row.failure}")
            continue
        rate = f"{row.megabytes / row.seconds:8.1f}" if row.megabytes else " " * 8
        peak = f"{row.peak_rss / 1e6:7.0f} MB" if row.peak_rss else " " * 10
        print(f"  {row.label:40} {duration(row.seconds)} {rate} {peak}  {row.ratio}")


def print_targets(all_results, per_log, rounds):
    """The goals of issue 7, item 3, read off this run; time per day log from the rounds."""
    if not all_results:
        return
    result, pair_mb = all_results[max(all_results)]
    lines = []

    def line(text, value, ok):
        lines.append(f"  {text:62} {value:>16}  {'yes' if ok else 'NO'}")

    if "read" in result:
        rate = result["phoneMB"] / result["read"]
        line("read + validate at least 200 MB/s", f"{rate:.0f} MB/s", rate >= 200)
        speedup = result["orjson"] / result["read"]
        line("read + validate at least 8× faster than orjson.loads", f"{speedup:.1f}×", speedup >= 8)
    if "merge" in result:
        share = result["merge"] / result["orjsonPair"]
        line("full merge under 1/3 of orjson.loads of both files", f"{share:.2f}", share < 1 / 3)
        peak = result["mergePeak"] / 1e6 / pair_mb
        line("merge peak memory at most 2.5× both inputs", f"{peak:.2f}×", peak <= 2.5)
    for key in ("read", "merge") if len(per_log) > 1 else ():
        # Every size against the smallest, not only the largest: a step in the middle
        # counts as much as one at the end.
        ordered = [steps[key] for _, steps in sorted(per_log.items())]
        changes = [value / ordered[0] for value in ordered[1:]]
        text = " / ".join(f"{value:.0f}" for value in ordered)
        line(f"{key}: ns per day log ({rounds} rounds), every size ±30% of smallest", text,
             all(0.7 <= change <= 1.3 for change in changes))
    if len(per_log) > 1:
        # Not a target: what the read's time per day log carries beyond BackupKit's own work.
        # Pages the kernel hands out zeroed on first touch; a result above glibc's mmap
        # threshold (32 MB at most) takes fresh ones on every read, a smaller one reuses them.
        text = " / ".join(f"{steps['pages']:.1f}" for _, steps in sorted(per_log.items()))
        lines.append(f"  {'read: fresh 4 KB pages from the kernel per 1,000 day logs':62} {text:>16}")
        # Not a target either: what backup-bench's settling left of earlier results' frees
        # for a timed read to finish (glibc's unfolded fast-bin bytes); zero when it worked.
        text = " / ".join(f"{steps['unfolded']:.0f}" for _, steps in sorted(per_log.items()))
        lines.append(f"  {'read: bytes of earlier frees left for the clock (want 0)':62} {text:>16}")
    smallest, _ = all_results[min(all_results)]
    if min(all_results) == 20000 and "read" in smallest and "write" in smallest:
        total = smallest["read"] + smallest["write"]
        line("20,000 day logs read + validate + write under 20 ms", f"{total * 1000:.1f} ms",
             total < 0.020)
    if lines:
        print("\nTargets (issue 7), at the largest size measured and across sizes:")
        print("\n".join(lines))


def print_gzip_targets(all_results):
    """The goals of issue 40, item 3: libdeflate at a backup's level, at 20,000 day logs."""
    if 20000 not in all_results:
        return
    result, _ = all_results[20000]
    lines = []
    for key, text, budget in (("gzip1", "compress (level 1)", GZIP_BUDGET),
                              ("gunzip", "decompress", GUNZIP_BUDGET)):
        if key in result:
            seconds = result[key]
            lines.append(f"  {f'{text} at most {budget * 1000:.0f} ms':62}"
                         f" {f'{seconds * 1000:.1f} ms':>16}  {'yes' if seconds <= budget else 'NO'}")
    if lines:
        print("\nTargets (issue 40), gzip by libdeflate at 20,000 day logs (phone):")
        print("\n".join(lines))


def print_cold_targets(size, results, files):
    """The goals of issues 21 and 41 (which took over 21's open ones and tightened the
    merge's memory), read off this run at the largest size measured: ratios of whole
    processes timed side by side, so the host's load weighs on both sides alike. Issue 41's
    last goal, a one-change backup's CPU against `merge -o`'s, is requests.py's."""
    cold = results.get("cold", {})
    file_bytes = files[0].stat().st_size
    pair_bytes = file_bytes + files[1].stat().st_size
    lines = []

    def line(text, value, ok):
        lines.append(f"  {text:66} {value:>12}  {'yes' if ok else 'NO'}")

    if {"validate", "orjson", "simdjson"} <= cold.keys():
        validate = cold["validate"]
        speedup = cold["orjson"].wall / validate.wall
        line("validate at least 12× faster than a whole orjson process", f"{speedup:.1f}×",
             speedup >= 12)
        share = validate.wall / cold["simdjson"].wall
        line("validate at most 0.6× a whole pysimdjson process parsing", f"{share:.2f}×",
             share <= 0.6)
        share = validate.cpu / cold["simdjson"].cpu
        line("  the same in CPU (user + system), for the record", f"{share:.2f}×", share <= 0.6)
        peak = validate.peak_rss / file_bytes
        line("validate peak RSS at most 1.3× the file", f"{peak:.2f}×", peak <= 1.3)
    if {"merge", "orjsonPair"} <= cold.keys():
        speedup = cold["orjsonPair"].wall / cold["merge"].wall
        line("merge at least 5× faster than a whole orjson process on A and B",
             f"{speedup:.1f}×", speedup >= 5)
        peak = cold["merge"].peak_rss / pair_bytes
        line("merge peak RSS at most 1.6× the two inputs", f"{peak:.2f}×", peak <= 1.6)
    if "validate" in cold and "read" in results:
        ratio = cold["validate"].wall / results["read"]
        line("read + validate cold (whole validate) over warm at most 1.5×",
             f"{ratio:.2f}×", ratio <= 1.5)
    if lines:
        print(f"\nTargets (issues 21 and 41), whole processes at {size:,} day logs:")
        print("\n".join(lines))


def machine():
    model = "unknown CPU"
    try:
        for text in Path("/proc/cpuinfo").read_text().splitlines():
            if text.startswith("model name"):
                model = text.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}; load {load}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the release-built backup-bench")
    parser.add_argument("--cli", required=True, help="the release-built cloudbackup")
    parser.add_argument("--data", default=str(ROOT / ".build" / "bench-data"))
    options = parser.parse_args()
    binary = Path(options.bin).resolve()
    cli = Path(options.cli).resolve()
    data_root = Path(options.data)
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "20000,200000,1000000").split(",") if s]
    seed = int(os.environ.get("BENCH_SEED", "42"))
    print(f"make bench on {machine()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    all_results, pairs = {}, {}

    def runs_for(size):
        return int(os.environ.get("BENCH_RUNS", 9 if size <= 20000 else 5 if size <= 200000 else 3))

    for size in sizes:
        files = ensure_pair(binary, data_root, seed, size)
        pairs[size] = files
        runs = runs_for(size)
        # Foundation needs ~20 s and 6 GB at the top size; one run is all it gets there.
        slow_runs = runs if size <= 200000 else 1
        cold_rows, cold = measure_cold(cli, files, runs, files[0].parent)
        print_cold_table(size, cold_rows, runs)
        record_merge_cpu(files[0].parent, cold)
        rows, results, pair_mb = measure(binary, files, runs, slow_runs, files[0].parent)
        results["phoneMB"] = files[0].stat().st_size / 1e6
        results["cold"] = cold
        all_results[size] = (results, pair_mb)
        print_table(size, files, rows, runs, slow_runs)
        print(kept_cost_line(binary, files))
    rounds = int(os.environ.get("BENCH_ROUNDS", "5"))
    try:
        per_log = per_log_in_rounds(binary, pairs, rounds, runs_for) if len(pairs) > 1 else {}
    except Failed as failure:
        print(f"\ntime per day log in rounds: failed: {failure}")
        per_log = {}
    print_targets(all_results, per_log, rounds)
    print_gzip_targets(all_results)
    largest = max(all_results)
    print_cold_targets(largest, all_results[largest][0], pairs[largest])


if __name__ == "__main__":
    main()
