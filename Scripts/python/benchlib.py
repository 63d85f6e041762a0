"""benchlib: what rawble's benchmark programs (Scripts/benchmark*, Scripts/python/benchmark_*.py)
share. Standard library only; every program runs from the repository root with the project's
Python (Scripts/venv-python), after its launcher ran Scripts/bootstrap.

  begin(name, ...)      the program's name (for its messages), its argument parser with the
                        shared --results option, and a log folder (LOGS)
  build(argv)           a build step, its last line on stderr (`... 2>&1 | tail -1 >&2`)
  step(argv), cc()      a step with its output shown (a C compile), the C compiler
  header()              the `== date, CPUs, load`, Swift and Bumble lines every run starts with
  Peer                  a fresh Scripts/bumble-peer: ready line read with a bounded wait, stopped
                        by PID (SIGTERM, then SIGKILL) with a bounded wait
  run_json(...)         one process whose stdout is JSON lines, timed from just before its start
  median, load, cpu_times, cpu_seconds, rss_mib, rotations, slope_per_minute
  guest_tsc_clock()     tsc_early_khz= for Scripts/vm-test's guest (a nanosecond clock under TCG)
  table(...)            a padded markdown table, printed and kept for the results file
  record(...), finish() the figures of a run, written as JSON: always LOGS/results.json, and
                        --results [PATH] (default docs/performance-data/NAME-YYYYMMDD-HHMMZ.json)
"""

import argparse
import datetime
import json
import os
import platform
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS_DIR = os.path.join("docs", "performance-data")
TICK = os.sysconf("SC_CLK_TCK")

NAME = "benchmark"
LOGS = None  # the run's log folder (begin(logs=True), made by parse)
_logs = True
RESULTS = {}  # what finish() writes: begin() and header() fill it in, record() and table() add to it
_results_path = None


def begin(name, doc, logs=True):
    """Names the program (messages start `NAME: `), changes to the repository root and returns
    an argument parser whose help is `doc` and which has --results; parse(parser) then parses
    the options and (with `logs`) makes the log folder LOGS, a fresh temporary one (prefix NAME-)."""
    global NAME, _logs
    NAME = name
    _logs = logs
    os.chdir(ROOT)
    RESULTS.update({"benchmark": name, "started": utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "cpus": cpus(), "loadBefore": load(3), "tables": [], "figures": {}})
    parser = argparse.ArgumentParser(prog=f"Scripts/{name}", description=doc, allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", nargs="?", metavar="PATH", const="",
                        help=f"also write the run's figures as JSON to PATH (without PATH: "
                             f"{RESULTS_DIR}/{name}-YYYYMMDD-HHMMZ.json); "
                             + ("they are always in the log folder's results.json" if logs else
                                "without it nothing is written"))
    return parser


def parse(parser, argv=None):
    """parser.parse_args (--help ends here), then the log folder; keeps --results' path and the
    options for the results file."""
    global _results_path, LOGS
    args = parser.parse_args(argv)
    if _logs:
        LOGS = tempfile.mkdtemp(prefix=f"{NAME}-")
    if args.results is not None:
        stamp = datetime.datetime.strptime(RESULTS["started"], "%Y-%m-%dT%H:%M:%SZ").strftime("%Y%m%d-%H%MZ")
        _results_path = args.results or os.path.join(RESULTS_DIR, f"{NAME}-{stamp}.json")
    RESULTS["options"] = {k: v for k, v in vars(args).items() if k != "results"}
    return args


def fail(message):
    """Ends the program: `NAME: message` on stderr, status 1."""
    raise SystemExit(f"{NAME}: {message}")


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def cpus():
    """CPUs this process may run on (as nproc counts them)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def load(fields=1):
    """The load average: the 1-minute figure, or the first `fields` of /proc/loadavg."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:fields])


def env_int(name, default):
    return int(os.environ.get(name) or default)


def env_float(name, default):
    return float(os.environ.get(name) or default)


def build(argv, cwd=None):
    """Runs a build step as `ARGV 2>&1 | tail -1 >&2` under `set -o pipefail` did: its last line of
    output on stderr; a failure ends the program with its status."""
    process = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = process.stdout.decode(errors="replace").splitlines()
    if lines:
        sys.stderr.write(lines[-1] + "\n")
        sys.stderr.flush()
    if process.returncode != 0:
        sys.exit(process.returncode)


def step(argv, cwd=None):
    """Runs a step with its output shown; a failure ends the program with its status."""
    status = subprocess.run(argv, cwd=cwd).returncode
    if status != 0:
        sys.exit(status)


def cc():
    """The C compiler: $CC, else cc, gcc or clang from the search path."""
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang") or "cc"


def first_line(argv):
    """The first line `ARGV 2>&1` prints ("" when it cannot run)."""
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
    except OSError:
        return ""
    return (out.decode(errors="replace").splitlines() or [""])[0]


def bumble_version():
    import importlib.metadata
    return importlib.metadata.version("bumble")


def header(swift=True, bumble=True, swift_suffix=""):
    """The lines a run starts with: time, CPUs and load; Swift's version; Bumble's and Python's."""
    print(f"== {utc_now():%Y-%m-%d %H:%M UTC}, {cpus()} CPUs, load average {load(3)}")
    if swift:
        RESULTS["swift"] = first_line(["swift", "--version"])
        print(f"== {RESULTS['swift']}{swift_suffix}")
    if bumble:
        RESULTS["bumble"] = bumble_version()
        RESULTS["python"] = platform.python_version()
        print(f"== bumble {RESULTS['bumble']}, Python {RESULTS['python']}")
    sys.stdout.flush()


def read_line(stream, timeout):
    """The first line of `stream` (a pipe), read within `timeout` s: bytes without its newline,
    None when none came in time, b"" when the stream ended first. Reads raw (os.read): what comes
    after the line in the same read is dropped."""
    deadline = time.monotonic() + timeout
    line = b""
    while b"\n" not in line:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            return None
        chunk = os.read(stream.fileno(), 1 << 20)
        if not chunk:
            return b""
        line += chunk
    return line.split(b"\n")[0]


def stop_process(process, sig=signal.SIGTERM, wait=5.0):
    """Stops a child by PID: `sig`, up to `wait` s, then SIGKILL and up to 5 s more."""
    if process.poll() is None:
        os.kill(process.pid, sig)
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(5)


class Peer:
    """A fresh Scripts/bumble-peer on 127.0.0.1 (`--port 0 --lifetime S` and `args`), its stderr
    appended to LOGS/`log`. Ready when its one JSON line arrives, within `ready_timeout` s (else
    the program ends, naming the log). Its stdin is a pipe kept open: it exits on EOF, so it
    never outlives the benchmark; with keep_stdin=False it gets /dev/null and --ignore-stdin.
    stop() (or leaving a `with`) ends it by PID: SIGTERM, then SIGKILL, each with a bounded wait."""

    def __init__(self, *args, ready_timeout=60.0, lifetime=300.0, log="peer.err", keep_stdin=True):
        self.log_path = os.path.join(LOGS, log)
        self.stderr = open(self.log_path, "ab")
        argv = ["Scripts/bumble-peer", "--port", "0", "--lifetime", str(lifetime), *args]
        if not keep_stdin:
            argv.append("--ignore-stdin")
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE if keep_stdin else subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=self.stderr)
        line = read_line(self.process.stdout, ready_timeout)
        if not line:
            self.stop()
            if line is None:
                fail(f"peer not ready within {ready_timeout:g} s (log: {self.log_path})")
            fail(f"peer exited (log: {self.log_path})")
        self.ready = json.loads(line)
        self.transport = self.ready["transport"]
        self.transports = self.ready.get("transports", [self.transport])

    @property
    def pid(self):
        return self.process.pid

    def address_of(self, name):
        """The address of the device `name` in the ready line."""
        return next(d["address"] for d in self.ready["devices"] if d["name"] == name)

    def stop(self, sig=signal.SIGTERM, wait=5.0):
        stop_process(self.process, sig, wait)
        if not self.stderr.closed:
            self.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.stop()


def json_lines(text):
    """The lines of `text` that are JSON objects, parsed; other lines are left out."""
    lines = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            lines.append(value)
    return lines


def run_json(command, what, timeout, env=None):
    """Runs one process whose stdout is JSON lines: (start, end in CLOCK_MONOTONIC ns, its JSON
    lines, its raw stdout). Killed by PID after `timeout` + 10 s. An `error` line or a non-zero
    status ends the program."""
    start = time.monotonic_ns()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = process.communicate(timeout=timeout + 10)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        out, err = process.communicate(timeout=5)
    end = time.monotonic_ns()
    lines = json_lines(out.decode(errors="replace"))
    errors = [line["error"] for line in lines if "error" in line]
    if errors or process.returncode != 0:
        fail(f"{what} failed ({process.returncode}): {errors} {err.decode(errors='replace')[-2000:]}")
    return start, end, lines, out


def median(values, default=float("nan")):
    """The median of the values that are not None; `default` when there is none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else default


def cpu_times(pid):
    """(user, system) CPU seconds of a process so far, all its threads (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def cpu_seconds(pid):
    """utime + stime of the whole process (all its threads) so far; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def rss_mib(pid):
    """VmRSS of a process in MiB (/proc/PID/status); None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for text in f:
                if text.startswith("VmRSS:"):
                    return int(text.split()[1]) / 1024
    except OSError:
        pass
    return None


def rotations(rounds, names):
    """`names` once per round, rotated by one each round (two names: alternated), so runs never
    overlap and none always goes first."""
    for i in range(rounds):
        k = i % len(names)
        yield from names[k:] + names[:k]


def slope_per_minute(xs, ys):
    """Least-squares slope of ys over xs (seconds), per minute."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sum((x - mx) ** 2 for x in xs) or 1) * 60


TSC_KHZ_C = """#include <stdio.h>
#include <time.h>
#include <x86intrin.h>
static double ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC_RAW, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void) { double a = ns(), b; unsigned long long t0 = __rdtsc(); while ((b = ns()) - a < 2e8) {}
  printf("%.0f\\n", (double)(__rdtsc() - t0) / (b - a) * 1e6); return 0; }
"""


def guest_tsc_clock():
    """The guest's clock for Scripts/vm-test: under TCG the guest's TSC is the host's (qemu reads
    the host's counter), but the kernel cannot calibrate it with acpi=off (no HPET, no PM timer)
    and falls back to refined-jiffies: 4 ms steps that lose ticks when the host is loaded (a guest
    measured 7.4 s for 9.5 s). Adds tsc_early_khz= the host's TSC rate (measured here, 200 ms
    against CLOCK_MONOTONIC_RAW) to RAWBLE_VM_CMDLINE, which gives it a nanosecond clock; the
    benchmarks check it against the host's (stamp files). Returns the rate, or None (said on
    stderr) when it cannot be measured."""
    os.makedirs(".build/bench", exist_ok=True)
    tsc_khz = None
    if platform.machine() == "x86_64":
        with open(".build/bench/tsc_khz.c", "w") as f:
            f.write(TSC_KHZ_C)
        if subprocess.run([os.environ.get("CC") or "cc", "-O2", "-o", ".build/bench/tsc_khz", ".build/bench/tsc_khz.c"],
                          stderr=subprocess.DEVNULL).returncode == 0:
            tsc_khz = subprocess.run([".build/bench/tsc_khz"], stdout=subprocess.PIPE, text=True).stdout.strip()
    if tsc_khz:
        cmdline = os.environ.get("RAWBLE_VM_CMDLINE")
        os.environ["RAWBLE_VM_CMDLINE"] = f"{cmdline + ' ' if cmdline else ''}tsc_early_khz={tsc_khz}"
    else:
        sys.stderr.write(f"{NAME}: cannot measure the host's TSC rate: the guest keeps its jiffies clock (4 ms steps)\n")
    return tsc_khz


def record(key, value):
    """Keeps a figure (anything JSON can hold) for the results file."""
    RESULTS["figures"][key] = value
    return value


def settings(**values):
    """Keeps the run's settings (BENCH_* values as used) for the results file."""
    RESULTS["settings"] = values


def record_table(header, rows, title=None):
    """Keeps a table (header and rows as printed) for the results file."""
    RESULTS["tables"].append({"title": title, "header": list(header), "rows": [list(r) for r in rows]})


def table(header, rows, left=None, title=None):
    """Prints a markdown table padded to its widest cells (columns in `left` left-aligned, default
    the first and the last; the others right-aligned) and keeps it for the results file."""
    header = tuple(header)
    rows = [tuple(r) for r in rows]
    left = {0, len(header) - 1} if left is None else set(left)
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) if i in left else str(c).rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) if i in left else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|")
    for r in rows:
        print(line(r))
    record_table(header, rows, title)


def finish():
    """Writes the results: LOGS/results.json (when there is a log folder) and --results' PATH
    (said on stdout)."""
    RESULTS["finished"] = utc_now().strftime("%Y-%m-%dT%H:%M:%SZ")
    RESULTS["loadAfter"] = load(3)
    text = json.dumps(RESULTS, indent=1, default=str) + "\n"
    if LOGS:
        with open(os.path.join(LOGS, "results.json"), "w") as f:
            f.write(text)
    if _results_path:
        folder = os.path.dirname(_results_path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(_results_path, "w") as f:
            f.write(text)
        print(f"(results: {_results_path})")
