"""Every pass a `cloudbackup backup` makes over the document's bytes, counted by callgrind
(issue 41, step 1: measurement only).

Part of `make bench`. Against a fresh emulator, set up as `requests.py` sets it up (login,
STATE settled by merging it with itself, a first backup, then one change so the next one is
not the first after a create), five backups run under `valgrind --tool=callgrind`:

  one change                  a day log edited (its note kept one length): parse STATE,
                              merge, encode, upload, ...
  first unchanged night       the next run with STATE's stamp over 2 s old, as on the night
                              after an upload (it runs the whole merge path before it finds
                              nothing to upload and settles the record)
  second unchanged night      the night after: the listing only
  one change, compressed      with "compress": true in the profile's config.json (a first run
                              rewrites Drive's file gzipped, then the one change)
  one change, encrypted       plain again, encrypting to an X25519 key (age-keygen's; skipped
                              when age-keygen is missing), likewise

Callgrind counts instructions, so its figures are the same on every run of the same build
and do not move with the load of this shared machine. Its call graph gives, for each function
that makes a pass (`BackupReader.read`, `merge(local:incoming:options:)`,
`BackupWriter.write`, the SHA-256 and MD5 of module Digests, gzip, the age envelope, the
curl upload, the atomic writes of LocalFiles), how often it ran and its inclusive
instructions, split by the named function that called it (closures, thunks and
specializations between them are looked through, their cost shared out by their calls'
costs). Rows list a pass once per caller, nested passes inside their callers' rows (the
validation inside the read), so the rows do not add up to the whole.

The backups run with a preloaded `pthread_create` that refuses (a few lines of C, built here
with cc): the code's documented fallback then runs both halves of each two-core pass in turn
on the calling thread, so a pass's whole cost lands under its caller instead of under an
anonymous thread; the work is the same, only not spread over two cores. Kernel work
(reading and writing files, sending on the socket) is not counted by callgrind: a file
write shows only its user-space part.

"≈ CPU" is a rough guide in milliseconds. For SHA-256 and MD5 it is their instructions at
the native time per instruction of OpenSSL's EVP_Digest (what Digests calls), from a few lines
of C built here hashing the file's size of bytes natively and under callgrind: valgrind's CPU
has no SHA extensions, so under it OpenSSL runs its generic SHA-256, ~15× slower than the
native one. For the other rows it is their share of the instructions outside the
digests, of the native CPU outside them: the median CPU (user + system, wait4) of the same
kind of run taken natively BENCH_BACKUP_RUNS times (default 5; the first unchanged night
half as often, each after an upload and 2 s), less the digests' time. Instructions differ
in cost, and the kernel's part is not shared out.

Usage: passes.py --bin .build/release/cloudbackup [--bench .build/release/backup-bench]
                 [--keep DIR] STATE
(STATE missing: generated with `backup-bench generate --seed 42 --day-logs 20000` when its
path is .build/bench-data/seedS-N/phone.json and --bench is given, else skipped with a note).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import requests as bench_requests  # noqa: E402  (Tests/Bench/requests.py, not the PyPI one)

RUNS = int(os.environ.get("BENCH_BACKUP_RUNS", "5"))

# The passes: a label, the demangled (simplified) name of the function making it, and
# optionally the callers counted (else all).
PASSES = [
    ("read file", r"^static LocalFile\.read\(_:maxBytes:\)$"),
    ("parse + validate", r"^static BackupReader\.read\(_:options:\)$"),
    ("  validator walk (in it)", r"^static BackupValidator\.walk\("),
    ("SHA-256", r"^static Digest\.sha256<A>\(_:\)$"),
    ("MD5", r"^static Digest\.md5<A>\(_:\)$"),
    ("merge", r"^merge\(local:incoming:options:\)$"),
    ("encode", r"^static BackupWriter\.write\(_:pretty:schema:\)$"),
    ("compare bytes", r"^Array<A>\.sameBytes\(as:\)$"),
    ("gzip", r"^static Gzip\.compress\("),
    ("gunzip", r"^static Gzip\.plain\("),
    ("encrypt", r"^static Envelope\.encrypt\("),
    ("decrypt", r"^static Envelope\.decrypt\("),
    ("upload (curl)", r"^DriveClient\.(update|create)\(id:|^DriveClient\.(update|create)\("),
    ("download (curl)", r"^DriveClient\.download\("),
    ("write kept copy", r"^KeptCopy\.save\(to:\)$"),
    ("write STATE", r"^StateWrite\.write\(_:warn:\)$"),
]
# Frames looked through to the named function that called a pass.
ANONYMOUS = re.compile(
    r"^(closure #|implicit closure|partial apply|thunk|reabstraction thunk|merged |outlined |"
    r"protocol witness|dispatch thunk|Optional\.map|Result\.|specialized closure|"
    r"specialized partial apply|specialized thunk|\?\?\?|0x)")
# Below this many instructions a caller's row is left out (calls from elsewhere that only
# touch a few values), except for the passes whose work is mostly the kernel's.
SMALL = 500_000
ALWAYS = {"write kept copy", "write STATE", "upload (curl)", "download (curl)", "read file"}


def parse_callgrind(path):
    """Self cost per function, and per (caller, callee) edge its calls and inclusive cost."""
    names, self_cost, edges, total = {}, defaultdict(int), {}, 0

    def name(text):
        match = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not match:
            return text
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
        return names[match.group(1)]

    function = callee = pending = None
    with open(path) as lines:
        for line in lines:
            line = line.rstrip("\n")
            if pending is not None:
                fields = line.split()
                edge = edges.setdefault((function, callee), [0, 0])
                edge[0] += pending
                edge[1] += int(fields[1]) if len(fields) > 1 else 0
                pending = None
            elif line.startswith("fn="):
                function = name(line[3:])
            elif line.startswith("cfn="):
                callee = name(line[4:])
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif line[:1].isdigit() or line[:1] in "+-*":
                fields = line.split()
                if function is not None and len(fields) > 1:
                    self_cost[function] += int(fields[1])
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
    return self_cost, edges, total


def demangled(symbols):
    swift = shutil.which("swift")
    if not swift:
        return {s: s for s in symbols}
    answer = subprocess.run([swift, "demangle", "--simplified"], input="\n".join(symbols),
                            capture_output=True, text=True, check=True).stdout.split("\n")
    return dict(zip(symbols, answer))


class Profile:
    def __init__(self, path):
        self_cost, edges, self.total = parse_callgrind(path)
        symbols = sorted(set(self_cost) | {f for edge in edges for f in edge})
        names = demangled(symbols)
        # Functions by demangled name: a name can stand for several symbols (the same
        # function in two files), their figures summed.
        self.into = defaultdict(list)  # callee -> [(caller, calls, cost)]
        self.inclusive = defaultdict(int)
        for symbol, cost in self_cost.items():
            self.inclusive[names[symbol]] += cost
        for (caller, callee), (calls, cost) in edges.items():
            a, b = names[caller], names[callee]
            if a != b:
                self.into[b].append((a, calls, cost))
                self.inclusive[a] += cost
        self.names = set(names.values())

    def callers(self, function, share=1.0, depth=0, seen=()):
        """(named caller, calls, cost) of `function`, through anonymous frames, a frame's
        calls and cost shared out among its own callers by their calls' costs."""
        found = defaultdict(lambda: [0.0, 0.0])
        edges = self.into.get(function, [])
        for caller, calls, cost in edges:
            bare = caller.removeprefix("specialized ").removeprefix("generic specialization ")
            if ANONYMOUS.match(bare) and depth < 8 and caller not in seen and self.into.get(caller):
                upper = self.callers(caller, 1.0, depth + 1, seen + (caller,))
                through = sum(c for _, c in upper.values()) or 1
                for name, (c_calls, c_cost) in upper.items():
                    part = c_cost / through
                    found[name][0] += calls * part
                    found[name][1] += cost * share * part
            else:
                found[bare][0] += calls
                found[bare][1] += cost * share
        return found

    def rows(self):
        rows = []
        for label, pattern, *only in PASSES:
            matcher = re.compile(pattern)
            wanted = re.compile(only[0] if only else "")
            for function in sorted(f for f in self.names if matcher.search(f)):
                for caller, (calls, cost) in sorted(self.callers(function).items(),
                                                    key=lambda item: -item[1][1]):
                    if cost < SMALL and label not in ALWAYS or not wanted.search(caller):
                        continue
                    rows.append((label, caller, round(calls), cost))
        return rows


DIGEST_PROGRAM = r"""
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* digestcost ALG BYTES [time]: one EVP_Digest of BYTES bytes (counted under callgrind), or
   the median of 9 timed natively, in ns. */
static int order(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
    const EVP_MD *md = strcmp(argv[1], "md5") == 0 ? EVP_md5() : EVP_sha256();
    size_t n = strtoull(argv[2], 0, 10);
    unsigned char *bytes = malloc(n), out[EVP_MAX_MD_SIZE];
    unsigned int length;
    for (size_t i = 0; i < n; i++) bytes[i] = (unsigned char)(i * 131 + (i >> 9));
    if (argc < 4) { EVP_Digest(bytes, n, out, &length, md, NULL); return 0; }
    double times[9];
    for (int k = 0; k < 9; k++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        EVP_Digest(bytes, n, out, &length, md, NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        times[k] = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    }
    qsort(times, 9, sizeof times[0], order);
    printf("%.0f\n", times[4]);
    return 0;
}
"""


def native_digests(work, size):
    """Seconds per callgrind-counted instruction of OpenSSL's SHA-256 and MD5 (EVP_Digest,
    as Digests calls them), from `size` bytes hashed natively (median of 9) and under
    callgrind. Under valgrind OpenSSL finds no SHA extensions on the emulated CPU and runs its
    generic SHA-256, so its instructions overstate it; this turns them back into time."""
    source, program = work / "digestcost.c", work / "digestcost"
    source.write_text(DIGEST_PROGRAM)
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    subprocess.run([compiler, "-O2", "-o", str(program), str(source), "-lcrypto"], check=True)
    rates, natively = {}, {}
    for label, name in (("SHA-256", "sha256"), ("MD5", "md5")):
        out = work / f"callgrind.{name}.out"
        subprocess.run(["valgrind", "--tool=callgrind", "--quiet", "--toggle-collect=EVP_Digest",
                        f"--callgrind-out-file={out}", str(program), name, str(size)],
                       check=True)
        instructions = parse_callgrind(out)[2]
        seconds = int(subprocess.run([str(program), name, str(size), "time"], check=True,
                                     capture_output=True, text=True).stdout) / 1e9
        rates[label], natively[label] = seconds / instructions, seconds
    return rates, natively


def table(title, profile, cpu, digests):
    """The rows; "≈ CPU" is a digest's native time per call, and for the other rows their
    share of the instructions outside digests of the native CPU outside them."""
    rows = profile.rows()
    digest_cost = sum(cost for label, _, _, cost in rows if label in digests)
    digest_time = sum(cost * digests[label] for label, _, _, cost in rows if label in digests)
    rest_cost, rest_time = profile.total - digest_cost, max(0.0, cpu - digest_time)
    print(f"\n  {title}: {profile.total / 1e6:,.1f} M instructions in all,"
          f" {cpu * 1000:.1f} ms CPU natively (median)")
    header = ("pass", "called from", "calls", "M instr", "share", "≈ CPU")
    lines = [header]
    for label, caller, calls, cost in rows:
        share = cost / profile.total
        estimate = (f"{cost * digests[label] * 1000:.1f} ms*" if label in digests
                    else f"{cost / rest_cost * rest_time * 1000:.1f} ms ")
        lines.append((label, caller[:60], f"{calls:,}", f"{cost / 1e6:,.1f}",
                      f"{share * 100:.1f}%", estimate))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print(("    " + "  ".join(
            line[i].ljust(widths[i]) if i < 2 else line[i].rjust(widths[i])
            for i in range(len(header)))).rstrip())
    listed = sum(cost for label, _, _, cost in profile.rows() if not label.startswith(" "))
    print(f"    (the passes above, nested rows aside: {listed / 1e6:,.1f} M,"
          f" {listed / profile.total * 100:.1f}% of the process)")
    freed = profile.inclusive.get("destroy for DayLog", 0)
    calls = sum(c for _, c, _ in profile.into.get("destroy for DayLog", []))
    if freed:
        print(f"    (besides: freeing day logs, `destroy for DayLog`, {calls:,} calls,"
              f" {freed / 1e6:,.1f} M, {freed / profile.total * 100:.1f}%, all callers)")


def nothreads_library(work):
    """A pthread_create that refuses: the code then runs each pair of halves in turn."""
    source = work / "nothreads.c"
    source.write_text(
        "#include <errno.h>\n#include <pthread.h>\n"
        "int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *),"
        " void *arg) { (void)t; (void)a; (void)f; (void)arg; return EAGAIN; }\n")
    library = work / "nothreads.so"
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not compiler:
        sys.exit("passes: no C compiler (cc) for the pthread_create stand-in")
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(source)],
                   check=True)
    return library


def measure(binary, state_source, keep=None):
    emulator = bench_requests.Emulator()
    work = Path(tempfile.mkdtemp())
    try:
        environment, state, now = bench_requests.logged_in(
            binary, emulator, work, state_source, "passes")
        document = json.loads(state.read_bytes())
        library = nothreads_library(work)
        digests = native_digests(work, state_source.stat().st_size)
        edits = iter(range(1, 1000))

        def backup(expected, profile=None):
            """One run, its result checked; its CPU (wait4), or under callgrind its Profile."""
            command = [str(binary), "backup", "--file", str(state), "--now", now, "--json"]
            env = environment
            if profile:
                out_file = work / f"callgrind.{profile}.out"
                command = ["valgrind", "--tool=callgrind", "--quiet",
                           f"--callgrind-out-file={out_file}"] + command
                env = dict(environment, LD_PRELOAD=str(library))
            with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
                child = subprocess.Popen(command, env=env, stdout=out, stderr=err)
                _, status, usage = os.wait4(child.pid, 0)
                out.seek(0)
                err.seek(0)
                code = os.waitstatus_to_exitcode(status)
                if code != 0:
                    sys.exit(f"passes: exit {code}: {err.read().decode().strip()[-2000:]}")
                result = json.loads(out.read())["result"]
            if result != expected:
                sys.exit(f"passes: expected {expected}, the backup said {result}")
            return Profile(out_file) if profile else usage.ru_utime + usage.ru_stime

        def edit():
            """requests.py's edit, its note of one length whatever the step: the merged
            document's encoding then has the head's length, and mergeAndUpload's comparison of
            the two runs to the first difference (a length apart, it stops at once)."""
            step = next(edits)
            changed = bench_requests.edited(document, step)
            changed["dayLogs"][max(changed["dayLogs"])]["note"] = f"edited {step:04d}"
            state.write_text(json.dumps(changed))

        def wait_settled():
            """Until STATE's stamp is 2 s old (FileStamp.isSettled), as on a later night."""
            written = os.stat(state)
            time.sleep(max(0, max(written.st_mtime_ns, written.st_ctime_ns) + 2_100_000_000
                           - time.time_ns()) / 1e9)

        backup("created")
        edit()
        backup("uploaded")  # the first change after a create also asks for the etag
        one_change = []
        for _ in range(RUNS):
            edit()
            one_change.append(backup("uploaded"))
        first_night = []
        for _ in range(max(1, (RUNS + 1) // 2)):
            edit()
            backup("uploaded")
            wait_settled()
            first_night.append(backup("unchanged"))
        second_night = [backup("unchanged") for _ in range(RUNS)]

        edit()
        profiles = [("one change", backup("uploaded", "one-change"), one_change)]
        wait_settled()
        profiles.append(("first unchanged night after it",
                         backup("unchanged", "first-night"), first_night))
        profiles.append(("second unchanged night",
                         backup("unchanged", "second-night"), second_night))

        # The same one change with gzip, then (plain inside again) with age encryption to an
        # X25519 key, as requests.py switches them: a first run rewrites Drive's file, then
        # native runs, then one under callgrind.
        def one_change_as(title, name):
            edit()
            backup("uploaded")
            cpus = []
            for _ in range(RUNS):
                edit()
                cpus.append(backup("uploaded"))
            edit()
            profiles.append((title, backup("uploaded", name), cpus))

        config = work / "config" / "cloudbackup" / "default" / "config.json"
        settings = json.loads(config.read_text()) if config.exists() else {}
        config.touch(mode=0o600)
        config.write_text(json.dumps(dict(settings, compress=True)))
        one_change_as("one change, compressed", "compressed")
        config.write_text(json.dumps(dict(settings, compress=False)))
        key = work / "key.txt"
        if shutil.which("age-keygen") and subprocess.run(
                ["age-keygen", "-o", str(key)], capture_output=True).returncode == 0:
            environment.update(CLOUDBACKUP_ENCRYPT="1", CLOUDBACKUP_IDENTITY_FILE=str(key))
            one_change_as("one change, encrypted", "encrypted")
        else:
            print("\n(the encrypted one change skipped: age-keygen is not installed)")
        return [(title, profile, statistics.median(cpus))
                for title, profile, cpus in profiles], digests
    finally:
        emulator.stop()
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
            for out in work.glob("callgrind.*.out"):
                shutil.copy(out, keep / out.name)
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the built cloudbackup (release)")
    parser.add_argument("--bench", help="the built backup-bench, to generate a missing STATE")
    parser.add_argument("--keep", type=Path,
                        help="a directory to keep the callgrind.*.out files in (for"
                             " callgrind_annotate)")
    parser.add_argument("state", type=Path, help="the state file to back up")
    options = parser.parse_args()
    if not shutil.which("valgrind"):
        print("\n(passes skipped: valgrind is not installed; apt-get install valgrind)")
        return
    state = options.state
    if not state.exists():
        size = re.fullmatch(r"seed(\d+)-(\d+)", state.parent.name)
        if not (options.bench and size and state.name == "phone.json"):
            print(f"\n(passes skipped: {state} is not there)")
            return
        subprocess.run([options.bench, "generate", "--seed", size.group(1), "--day-logs",
                        size.group(2), "-o", str(state.parent)], check=True,
                       stdout=subprocess.DEVNULL)
    binary = Path(options.bin).resolve()
    print(f"\npasses over the document in a backup of {state} ({state.stat().st_size:,} bytes),"
          f" counted by callgrind (instructions; each caller's calls and inclusive cost):")
    measured, (digests, natively) = measure(binary, state, options.keep)
    for title, profile, cpu in measured:
        table(title, profile, cpu, digests)
    print(f"\n  * a digest's instructions at OpenSSL's native time per instruction of it (hashing"
          f" {state.stat().st_size:,} bytes natively: SHA-256 {natively['SHA-256'] * 1000:.1f} ms,"
          f" MD5 {natively['MD5'] * 1000:.1f} ms); callgrind's CPU has no SHA extensions, so"
          " OpenSSL runs its generic SHA-256 there")
    first, second = measured[1][1], measured[2][1]
    print(f"\n  the first unchanged night over the second: {first.total / 1e6:,.1f} M against"
          f" {second.total / 1e6:,.1f} M instructions; the first's extra passes:")
    seconds = {(label, caller) for label, caller, _, _ in second.rows()}
    for label, caller, calls, cost in first.rows():
        if (label, caller) not in seconds:
            print(f"    {label.strip()} from {caller}: {calls:,} call(s), {cost / 1e6:,.1f} M")


if __name__ == "__main__":
    main()
