"""Several straps benchmark (issue 41): `rawble hr --all --max N --json --quiet`
(.build/release/rawble) next to a monitor of N straps on Google Bumble's own host
(Benchmarks/Reference/bumble_hr_many.py: same steps, same JSON lines), against a fresh
Scripts/bumble-peer --strap-only --straps N per run (TCP H4 on 127.0.0.1, killed by PID).
  Scripts/benchmark-straps [--quick]

For N in 1, 5, 10, 20 straps, each sending at 1 Hz and at 4 Hz, each monitor follows every strap
to $BENCH_STRAP_SECONDS (20) seconds' worth of values per strap (--count), then exits:
- CPU per notification: the process's utime + stime (wait4's rusage) / the measurements it
  printed (setup included: connecting N straps is part of following them);
- peak memory: ru_maxrss;
- start -> all streaming: from just before the process starts to the first measurement line of
  the last strap to deliver one (CLOCK_MONOTONIC, when the script reads the line);
- every strap delivers --count measurements, checked per strap (a run that loses one fails).
Goals (issue 41): rawble's CPU per notification at 20 straps within 1.2x its own at 1 strap,
and <= 0.25x Bumble's at every size; all 10 streaming in <= 2x one strap's start plus the
connection intervals. --quick: 1 and 10 straps, 1 Hz only, 10 s.
"""

import os
import select
import subprocess
import sys
import time

import benchlib

parser = benchlib.begin("benchmark-straps", __doc__)
parser.add_argument("--quick", action="store_true", help="1 and 10 straps at 1 Hz, 10 s each")
options = benchlib.parse(parser)

SECONDS = benchlib.env_float("BENCH_STRAP_SECONDS", 20)
SIZES = [1, 5, 10, 20]
RATES = [1.0, 4.0]
if options.quick:
    SIZES, RATES, SECONDS = [1, 10], [1.0], 10.0
benchlib.settings(seconds=SECONDS, sizes=SIZES, rates=RATES)

MONITORS = {
    "rawble": lambda peer, n, count: [".build/release/rawble", "hr", "--all", "--max", str(n), "--count", str(count),
                                      "--json", "--quiet", "--timeout", "20", "--transport", peer.transport],
    "Bumble": lambda peer, n, count: [sys.executable, "Benchmarks/Reference/bumble_hr_many.py", "--transport",
                                      peer.transport, "--straps", str(n), "--count", str(count), "--timeout", "300"],
}

benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "rawble"])
benchlib.header()


def run(host, n, rate):
    """One monitor following n straps at `rate` Hz: (CPU s, measurements, µs per measurement,
    peak MiB, s from start until every strap streamed)."""
    count = max(2, int(SECONDS * rate))
    with benchlib.Peer("--strap-only", "--straps", str(n), "--hr-interval", str(1 / rate),
                       "--hr-count", str(count * 4 + 100), log=f"peer-{host}-{n}-{rate:g}.err") as peer:
        start = time.monotonic()
        stderr = open(os.path.join(benchlib.LOGS, f"{host}-{n}-{rate:g}.err"), "ab")
        process = subprocess.Popen(MONITORS[host](peer, n, count), stdout=subprocess.PIPE, stderr=stderr)
        first = {}
        counts = {}
        buffer = b""
        deadline = start + 120 + 2 * n
        while True:
            if time.monotonic() > deadline:
                benchlib.stop_process(process)
                benchlib.fail(f"{host} with {n} straps at {rate:g} Hz did not finish (log: {stderr.name})")
            ready, _, _ = select.select([process.stdout], [], [], 1)
            if not ready:
                continue
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            now = time.monotonic()
            for line in benchlib.json_lines(b"\n".join(lines).decode(errors="replace")):
                if "error" in line:
                    benchlib.fail(f"{host}: {line['error']}")
                if line.get("event") == "measurement":
                    address = line.get("address")
                    counts[address] = counts.get(address, 0) + 1
                    first.setdefault(address, now - start)
        _, status, usage = os.wait4(process.pid, 0)
        stderr.close()
        if status != 0:
            benchlib.fail(f"{host} with {n} straps exited with status {status >> 8} (log: {stderr.name})")
        if len(counts) != n or any(c < count for c in counts.values()):
            benchlib.fail(f"{host} with {n} straps: measurements per strap {sorted(counts.values())}, {count} each expected")
        total = sum(counts.values())
        cpu = usage.ru_utime + usage.ru_stime
        return cpu, total, cpu / total * 1e6, usage.ru_maxrss / 1024, max(first.values())


rows = []
figures = {}
for rate in RATES:
    for n in SIZES:
        result = {host: run(host, n, rate) for host in ["rawble", "Bumble"]}
        figures[f"{n}@{rate:g}Hz"] = result
        r, b = result["rawble"], result["Bumble"]
        rows.append((f"{n} × {rate:g} Hz", r[1], f"{r[2]:.0f}", f"{b[2]:.0f}", f"{r[2] / b[2]:.2f}",
                     f"{r[3]:.1f}", f"{b[3]:.1f}", f"{r[4]:.2f}", f"{b[4]:.2f}"))
benchlib.record("runs", {k: {h: dict(zip(["cpuSeconds", "measurements", "cpuMicrosecondsPerMeasurement",
                                            "peakMiB", "secondsUntilAllStream"], v)) for h, v in r.items()}
                         for k, r in figures.items()})
benchlib.table(["straps × rate", "values", "rawble µs/value", "Bumble µs/value", "rawble/Bumble",
                "rawble MiB", "Bumble MiB", "rawble s to all", "Bumble s to all"], rows,
               title="CPU per notification (setup included), peak memory, start until every strap streams")
for rate in RATES:
    one = figures.get(f"1@{rate:g}Hz", {}).get("rawble")
    most = figures.get(f"{SIZES[-1]}@{rate:g}Hz", {}).get("rawble")
    if one and most:
        print(f"rawble at {SIZES[-1]} straps vs 1, {rate:g} Hz: {most[2] / one[2]:.2f}x CPU per value (goal <= 1.2x)")
benchlib.finish()
