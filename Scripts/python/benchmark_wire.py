"""
Wire-layer benchmarks, rawble next to Google Bumble on the same inputs, in one go.
  Scripts/benchmark [--quick] [--skip-package-benchmark]

1. package-benchmark suite (Benchmarks/Benchmarks/WireBenchmarks): per-item percentiles of
   wall clock, throughput, CPU time and malloc counts, then malloc counts per 1,000 items
   exactly (the per-item view rounds them down).
2. WireRates (same loops, whole input files, thread CPU clock) and
   Benchmarks/Reference/bumble_decode.py --tsv (same inputs, same work per item), one after
   the other so they do not compete for the CPU.
3. A side-by-side table: metric, rawble rate, Bumble rate, ratio, target.
Rates are items per CPU second of one thread, median of RUNS runs of SECONDS CPU-seconds each
(env BENCH_RUNS, BENCH_SECONDS; --quick: 1 run of 0.5 s). Machine load is printed: numbers
from a busy machine are lower and noisier.
"""

import os
import re
import subprocess
import sys
import tempfile

import benchlib
from benchlib import load

parser = benchlib.begin("benchmark", __doc__, logs=False)
parser.add_argument("--quick", action="store_true", help="1 run of 0.5 s")
parser.add_argument("--skip-package-benchmark", action="store_true", help="only the rates and the side-by-side table")
options = benchlib.parse(parser)

RUNS = os.environ.get("BENCH_RUNS") or "5"
SECONDS_PER_RUN = os.environ.get("BENCH_SECONDS") or "2"
if options.quick:
    RUNS, SECONDS_PER_RUN = "1", "0.5"
benchlib.settings(runs=RUNS, secondsPerRun=SECONDS_PER_RUN)
OUT = tempfile.TemporaryDirectory()


def path(name):
    return os.path.join(OUT.name, name)


def package_benchmark():
    """package-benchmark's tables as they come (blank lines left out), then its exact malloc
    counts per 1,000 items: {benchmark name: count}."""
    print()
    print("== package-benchmark (per item: decode, report, PDU; 1,000 items per iteration)", flush=True)
    process = subprocess.Popen(["swift", "package", "benchmark", "--no-progress"], cwd="Benchmarks",
                               stdout=subprocess.PIPE, text=True)
    showing = False
    with open(path("pb.txt"), "w") as saved:
        for line in process.stdout:
            saved.write(line)
            text = line.rstrip("\n")
            showing = showing or re.fullmatch(r"=* *", text) is not None
            if showing and text:
                print(text, flush=True)
    process.wait()  # a failure here is not fatal: the rates below still run
    print()
    print("== package-benchmark mallocs per 1,000 items (outer loop, exact)", flush=True)
    with open(path("pb-malloc.txt"), "w") as saved:
        status = subprocess.run(["swift", "package", "benchmark", "--no-progress", "--scale", "--metric",
                                 "mallocCountTotal"], cwd="Benchmarks", stdout=saved).returncode
    if status != 0:
        sys.exit(status)
    mallocs = {}
    name = None
    for line in open(path("pb-malloc.txt"), encoding="utf-8"):
        line = line.rstrip("\n")
        if line and not line.startswith(("│", "╒", "╞", "├", "╘", "=")) and not line.startswith(" "):
            name = line.strip()
        m = re.match(r"│ Malloc \(total\)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)", line)
        if m and name:
            mallocs[name] = int(m.group(3))
            print(f"{name}: {m.group(3)} mallocs per 1,000 items (p50)")
    return mallocs


def read(text):
    rows = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = line.split("\t")
        rows[f[0]] = f
    return rows


def rates(title, argv, build=None):
    """One side's rates (after its build step): its TSV as printed, by metric."""
    print()
    print(f"== {title} ({RUNS} runs x {SECONDS_PER_RUN} CPU-s, median), load before: {load(3)}", flush=True)
    if build:
        benchlib.build(build, cwd="Benchmarks")
    process = subprocess.run(argv, stdout=subprocess.PIPE, text=True)
    sys.stdout.write(process.stdout)
    sys.stdout.flush()
    if process.returncode != 0:
        sys.exit(process.returncode)
    return read(process.stdout)


benchlib.header()
mallocs = benchlib.record("mallocsPer1000", package_benchmark() if not options.skip_package_benchmark else {})
rawble = benchlib.record("rawble", rates("rawble WireRates", ["Benchmarks/.build/release/WireRates", "--seconds",
                                                             SECONDS_PER_RUN, "--runs", RUNS],
                                         build=["swift", "build", "-c", "release", "--product", "WireRates"]))
bumble = benchlib.record("Bumble", rates("Bumble reference", [sys.executable, "Benchmarks/Reference/bumble_decode.py",
                                                             "--tsv", "--seconds", SECONDS_PER_RUN, "--runs", RUNS]))

print()
print(f"== side by side (items per CPU second of one thread; load after: {load(3)})")
metrics = [  # name, label, package-benchmark name, target (items/s)
    ("hrm_decode", "HRM decode (per value)", "HRM decode", 20e6),
    ("adv_event_parse", "Advertising reports, event parse (per report)", "Advertising reports (event parse)", 5e6),
    ("adv_event_ad", "Advertising reports, event + AD (per report)", "Advertising reports (event + AD)", None),
    ("att_decode", "ATT PDU decode (per PDU)", "ATT PDU decode", None),
]
def fmt(rate):
    return f"{rate / 1e6:,.2f} M/s" if rate >= 1e6 else f"{rate / 1e3:,.1f} k/s"
header = ("metric", "rawble", "Bumble", "ratio", "target", "mallocs/item")
print(f"| {'metric':48} | {'rawble':>22} | {'Bumble':>20} | {'ratio':>7} | {'target':>16} | mallocs/item |")
print(f"|{'-' * 50}|{'-' * 24}:|{'-' * 22}:|{'-' * 8}:|{'-' * 18}|{'-' * 14}|")
rows = []
for name, label, pb, target in metrics:
    r, b = rawble.get(name), bumble.get(name)
    rr = float(r[1]) if r else None
    br = float(b[1]) if b else None
    rs = f"{fmt(rr)} ({float(r[2]):.0f} ns)" if r else "-"
    bs = f"{fmt(br)} ({float(b[2]) / 1e3:.1f} µs)" if b else "-"
    ratio = f"{rr / br:,.0f}x" if rr and br else "-"
    if target:
        ts = f">= {target / 1e6:g} M/s " + ("ok" if rr and rr >= target else "MISS")
    else:
        ts = "-"
    ms = f"{mallocs[pb] / 1000:g}" if pb in mallocs else "-"
    rows.append((label, rs, bs, ratio, ts, ms))
    print(f"| {label:48} | {rs:>22} | {bs:>20} | {ratio:>7} | {ts:>16} | {ms:>12} |")
benchlib.record_table(header, rows, title="side by side")
benchlib.finish()
OUT.cleanup()
