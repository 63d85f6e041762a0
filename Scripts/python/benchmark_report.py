"""Session analysis benchmark (issue 13): `rawble report` (.build/release/rawble) on a 24-hour
session file, and what the live analysis adds to `rawble hr --json`.
  Scripts/benchmark-report [--quick]

1. A 24-hour session as `rawble hr --csv` writes it (86,400 measurements, one a second, about
   100,000 RR intervals: a day's heart rate from 50 to 160 bpm with respiratory and slower
   variability and a few hundred missed, extra and ectopic beats; seeded, made here in
   .build/bench/day.csv). `rawble report FILE --json`, then also with `--max-hr 185 --plot`:
   wall time, CPU (user + sys) and peak RSS of the process (wait4), medians of $BENCH_RUNS (5).
   Target: well under a second.
2. Live analysis: `rawble hr --json --count $BENCH_LIVE_COUNT` (20000) against the fixture's strap at
   1 kHz (Scripts/bumble-peer --strap-only --hr-script realistic --hr-interval 0.001, a fresh
   peer per run), with the analysis (`--hrv-every 5 --max-hr 185`: every measurement analysed,
   an hrv event every 5 s) and without it (`--hrv-every 0`), alternating, $BENCH_CPU_RUNS (8)
   pairs. CPU per measurement from /proc/PID/stat between the first and the last measurement
   line (10 ms ticks: under 1 % of a 20,000-value run), user and system time apart: the analysis
   is all user time, while system time (the socket and pipe I/O, the same work in both) varies
   from run to run by more than the analysis costs. Then the analysis alone, in one thread
   (Benchmarks' AnalysisRates on the simulated strap's workout stamped at 1 kHz).
   With perf (linux-perf) installed, $BENCH_PERF_RUNS (3) more runs with the analysis under
   `perf record`: the analysis' own share of the run's CPU (inclusive samples of
   LiveAnalysis.add), free of the I/O's run-to-run variation that the pairs carry.
   Target: the analysis adds less than 5 %.
"""

import json
import math
import os
import random
import select
import shutil
import statistics
import subprocess
import time

import benchlib
from benchlib import cpu_times as cpu_seconds

parser = benchlib.begin("benchmark-report", __doc__)
parser.add_argument("--quick", action="store_true", help="3 report runs, 2 pairs, 1 perf run")
options = benchlib.parse(parser)

RUNS = benchlib.env_int("BENCH_RUNS", 5)
CPU_RUNS = benchlib.env_int("BENCH_CPU_RUNS", 8)
PERF_RUNS = benchlib.env_int("BENCH_PERF_RUNS", 3)
LIVE_COUNT = benchlib.env_int("BENCH_LIVE_COUNT", 20000)
if options.quick:
    RUNS, CPU_RUNS, PERF_RUNS = 3, 2, 1
benchlib.settings(runs=RUNS, cpuRuns=CPU_RUNS, perfRuns=PERF_RUNS, liveCount=LIVE_COUNT)
RAWBLE = ".build/release/rawble"
DAY = ".build/bench/day.csv"
LOGS = benchlib.LOGS

benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "rawble"])
benchlib.build(["swift", "build", "-c", "release", "--product", "AnalysisRates"], cwd="Benchmarks")
os.makedirs(".build/bench", exist_ok=True)
benchlib.header(bumble=False)


def make_day(path):
    """86,400 lines of `rawble hr --csv`, seeded: RR from a slowly varying heart rate with
    respiratory (0.25 Hz) and Mayer (0.1 Hz) modulation, and an artifact every ~5 minutes."""
    rng = random.Random(13)
    start = 1_795_000_000  # a fixed day
    beats = artifacts = 0
    phase = 0.0
    with open(path, "w") as f:
        f.write("time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n")
        for second in range(86_400):
            hour = second / 3600
            level = 62 + 40 * max(0.0, math.sin(math.pi * (hour - 7) / 14)) + 45 * (1 if 18 <= hour < 19 else 0)
            rr_list = []
            phase += 1000
            while True:
                t = second + phase / 1000
                mean = 60000 / level
                rr = mean * (1 + 0.04 * math.sin(2 * math.pi * 0.25 * t) * 70 / level
                             + 0.02 * math.sin(2 * math.pi * 0.1 * t)) + rng.gauss(0, 8)
                if phase < rr:
                    break
                phase -= rr
                rr_list.append(rr)
            if rr_list and rng.random() < 1 / 300:
                artifacts += 1
                kind = rng.choice(["missed", "extra", "ectopic"])
                if kind == "missed" and len(rr_list) >= 2:
                    rr_list[:2] = [rr_list[0] + rr_list[1]]
                elif kind == "extra":
                    rr_list[0:1] = [rr_list[0] * 0.4, rr_list[0] * 0.6]
                elif len(rr_list) >= 2:
                    rr_list[:2] = [rr_list[0] * 0.7, rr_list[1] + rr_list[0] * 0.3]
            beats += len(rr_list)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start + second))
            f.write(f"{stamp}.000000Z,{int(round(level))},detected,,{' '.join(str(int(round(r))) for r in rr_list)},00\n")
    return beats, artifacts


def timed(argv):
    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        benchlib.fail(f"{' '.join(argv)} failed: {err.decode(errors='replace')[-1000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


beats, injected = make_day(DAY)
size = os.path.getsize(DAY) / 1e6
print(f"day.csv: 86,400 measurements, {beats:,} RR intervals, {injected} artifacts injected, {size:.1f} MB")
svg = os.path.join(LOGS, "day.svg")
for label, argv in [("report --json", [RAWBLE, "report", DAY, "--json"]),
                    ("report --json --max-hr 185 --plot", [RAWBLE, "report", DAY, "--json", "--max-hr", "185", "--plot", svg])]:
    runs = [timed(argv) for _ in range(RUNS)]
    benchlib.record(label, [{"wall": r[0], "cpu": r[1], "maxRSSMiB": r[2]} for r in runs])
    report = json.loads(runs[-1][3])
    print(f"{label}: wall {statistics.median(r[0] for r in runs) * 1000:.0f} ms, "
          f"CPU {statistics.median(r[1] for r in runs) * 1000:.0f} ms, peak RSS {statistics.median(r[2] for r in runs):.1f} MiB "
          f"(medians of {RUNS}; {report['hrv']['beats']:,} beats, {report['artifacts']['total']} artifacts corrected)")
print(f"plot: {os.path.getsize(svg) / 1e3:.0f} kB of SVG")


def live(extra, count=LIVE_COUNT, wrapper=()):
    strap = benchlib.Peer("--strap-only", "--hr-script", "realistic", "--hr-interval", "0.001", "--hr-count", "0")
    transport = strap.transport
    try:
        process = subprocess.Popen(list(wrapper) + [RAWBLE, "hr", "--json", "--quiet", "--count", str(count), "--transport", transport] + extra,
                                   stdout=subprocess.PIPE, stderr=open(os.path.join(LOGS, "hr.err"), "ab"))
        seen = hrv = 0
        first = last = None
        buffer = b""
        deadline = time.monotonic() + count / 100 + 120
        while seen < count and time.monotonic() < deadline:
            if not select.select([process.stdout], [], [], 5)[0]:
                continue
            chunk = os.read(process.stdout.fileno(), 1 << 20)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for text in lines:
                if b'"measurement"' in text:
                    seen += 1
                    if seen == 1:
                        first = cpu_seconds(process.pid)
                    if seen == count:
                        last = cpu_seconds(process.pid)
                elif b'"hrv"' in text:
                    hrv += 1
        process.wait(30)
        if last is None:
            benchlib.fail(f"hr got {seen} of {count} (logs: {LOGS})")
        user = (last[0] - first[0]) / (count - 1) * 1e6
        system = (last[1] - first[1]) / (count - 1) * 1e6
        return {"cpu": user + system, "user": user, "system": system, "hrv": hrv}
    finally:
        strap.stop()


pairs = benchlib.record("pairs", [])
for i in range(CPU_RUNS):
    order = [True, False] if i % 2 == 0 else [False, True]
    result = {}
    for analysed in order:
        result[analysed] = live(["--hrv-every", "5", "--max-hr", "185"] if analysed else ["--hrv-every", "0"])
    pairs.append(result)
    w, wo = result[True], result[False]
    print(f"pair {i + 1} (load {benchlib.load()}): with the analysis {w['cpu']:.1f} µs "
          f"(user {w['user']:.1f}, system {w['system']:.1f}; {w['hrv']} hrv events), "
          f"without {wo['cpu']:.1f} µs (user {wo['user']:.1f}, system {wo['system']:.1f})", flush=True)


def median_of(key, analysed):
    return statistics.median(p[analysed][key] for p in pairs)


ratio = statistics.median(p[True]["cpu"] / p[False]["cpu"] for p in pairs)
user_added = statistics.median(p[True]["user"] - p[False]["user"] for p in pairs)
print(f"hr --json, CPU per measurement: with the live analysis {median_of('cpu', True):.1f} µs, "
      f"without {median_of('cpu', False):.1f} µs: {(ratio - 1) * 100:+.1f} % (median of the pairs' ratios; target < 5 %)")
print(f"  user time only (the analysis is all user time; system time is the I/O's, the same work in both): "
      f"with {median_of('user', True):.1f} µs, without {median_of('user', False):.1f} µs, "
      f"added {user_added:+.1f} µs (median of the pairs' differences) = "
      f"{user_added / median_of('cpu', False) * 100:+.1f} % of the CPU per measurement without")
# The analysis' own share of the CPU of a run with it, from perf's samples (every function
# under LiveAnalysis.add, the one entry of the analysis, counted with what it calls): one run
# measures it, without the run-to-run variation of the I/O that the pairs above carry.
PERF = shutil.which("perf")
if PERF and PERF_RUNS > 0:
    shares = []
    for i in range(PERF_RUNS):
        data = os.path.join(LOGS, f"perf-{i}.data")
        live(["--hrv-every", "5", "--max-hr", "185"], wrapper=[PERF, "record", "-q", "-F", "2000", "-g", "-o", data, "--"])
        report = subprocess.run([PERF, "report", "-i", data, "--children", "-g", "none", "--sort", "sym", "--stdio"],
                                capture_output=True, text=True).stdout
        share = next((float(line.split()[0].rstrip("%")) for line in report.splitlines()
                      if "LiveAnalysisC3add" in line and line.strip()[:1].isdigit()), None)
        if share is not None:
            shares.append(share)
    benchlib.record("perfShares", shares)
    if shares:
        added = [s / (100 - s) * 100 for s in shares]
        print(f"  the analysis' share of hr's CPU (perf record, inclusive samples of LiveAnalysis.add, {len(shares)} runs): "
              + ", ".join(f"{s:.2f} %" for s in shares) + " of the run's CPU = "
              + ", ".join(f"+{a:.1f} %" for a in added) + f" over the rest (median +{statistics.median(added):.1f} %; target < 5 %)")
    else:
        print("  perf record: no samples of LiveAnalysis.add (perf not permitted? see perf_event_paranoid)")
else:
    print("  perf not installed (linux-perf): the analysis' share by samples not measured")
isolated = subprocess.run(["Benchmarks/.build/release/AnalysisRates", "--values", "20000", "--runs", "5", "--rate", "1000"],
                          capture_output=True, text=True, check=True)
for line in isolated.stdout.splitlines():
    name, per_value, beats = line.split("\t")
    if name == "live":
        print(f"  the analysis alone (Benchmarks' AnalysisRates, the simulated strap's workout at 1 kHz, this thread's CPU): "
              f"{float(per_value):.2f} µs per measurement = {float(per_value) / median_of('cpu', False) * 100:.1f} % "
              f"of hr's CPU per measurement without it")
print(isolated.stderr.strip())
benchlib.finish()
