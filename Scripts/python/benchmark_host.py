"""
Host benchmarks (issue 3): rawble's host (Adapter, Benchmarks/Sources/HostTiming) next to
Google Bumble's own host (Benchmarks/Reference/bumble_host.py), each against the same Bumble
peer (Scripts/bumble-peer, a FRESH process per run, on 127.0.0.1, killed by PID).
  Scripts/benchmark-host [--quick]

1. Start -> first advertising report of rawble-strap (active scan), and the same minus the
   strap's advertising interval (50 ms), as issue 3 asks. Target: rawble <= 1/4 of Bumble.
2. Start -> connection established to rawble-strap (address from the peer's ready line).
3. CPU time per 1,000 advertising reports: peer --extra $BENCH_EXTRA (200) --no-standard,
   passive scan (one report per advertisement), duplicates on, every report delivered to the
   caller; process CPU clock over a $BENCH_CPU_SECONDS (10) s wall window after the first report.
4. Memory while scanning 1,000 distinct advertisers (--extra 1000 --no-standard, active scan,
   duplicates on): RSS every 5 s for $BENCH_MEMORY_SECONDS (60) s; first, last, max, slope.
"Start" is the script's CLOCK_MONOTONIC reading just before it execs the host process; each
process prints the CLOCK_MONOTONIC time of the event, so both hosts are timed the same way
(process creation, dynamic loading / interpreter start-up and imports included, tear-down
not). Runs alternate rawble/Bumble (order flipped each round) so they never overlap.
Timings are medians of $BENCH_RUNS (5) runs; --quick: 3 runs, 1 CPU run of 5 s, memory 15 s.
"""

import sys

import benchlib
from benchlib import median, load

parser = benchlib.begin("benchmark-host", __doc__)
parser.add_argument("--quick", action="store_true", help="3 timing runs, 1 CPU run of 5 s, 15 s of memory")
options = benchlib.parse(parser)

RUNS = benchlib.env_int("BENCH_RUNS", 5)
CPU_RUNS = benchlib.env_int("BENCH_CPU_RUNS", 3)
CPU_SECONDS = benchlib.env_float("BENCH_CPU_SECONDS", 10)
MEMORY_SECONDS = benchlib.env_float("BENCH_MEMORY_SECONDS", 60)
EXTRA = benchlib.env_int("BENCH_EXTRA", 200)
if options.quick:
    RUNS, CPU_RUNS, CPU_SECONDS, MEMORY_SECONDS = 3, 1, 5.0, 15.0
benchlib.settings(runs=RUNS, cpuRuns=CPU_RUNS, cpuSeconds=CPU_SECONDS, memorySeconds=MEMORY_SECONDS, extra=EXTRA)
STRAP_INTERVAL_MS = 50.0  # Scripts/bumble-peer: rawble-strap advertising_interval_min/max
HOSTS = {
    "rawble": ["Benchmarks/.build/release/HostTiming"],
    "Bumble": [sys.executable, "Benchmarks/Reference/bumble_host.py"],
}
LOGS = benchlib.LOGS

benchlib.build(["swift", "build", "-c", "release", "--product", "HostTiming"], cwd="Benchmarks")
benchlib.header()


def run_host(host, mode, peer, *args, timeout=30.0):
    """Starts one host process; returns (start time, parsed JSON lines)."""
    command = [*HOSTS[host], mode, "--transport", peer.transport, "--timeout", str(timeout), *args]
    start, _, lines, _ = benchlib.run_json(command, f"{host} {mode}", timeout)
    return start, lines


def timing(mode, event, *args, address=False):
    """Per host: list of dicts of ms since start for each phase and the event."""
    results = {"rawble": [], "Bumble": []}
    for host in benchlib.rotations(RUNS, ["rawble", "Bumble"]):
        with benchlib.Peer() as peer:
            extra = ["--address", peer.address_of("rawble-strap")] if address else list(args)
            start, lines = run_host(host, mode, peer, *extra)
        marks = {l.get("phase") or l.get("event"): (l["t"] - start) / 1e6 for l in lines if "t" in l}
        if event not in marks:
            benchlib.fail(f"{host} {mode}: no {event} in {lines}")
        results[host].append(marks)
        print(f"   {mode:12} {host:6} " + "  ".join(f"{k} {v:7.1f} ms" for k, v in marks.items()), flush=True)
    return benchlib.record(mode, results)


print(f"\n== 1. start -> first report of rawble-strap ({RUNS} runs each, fresh peer per run), load {load()}")
first = timing("first-report", "first-report", "--name", "rawble-strap")
print(f"\n== 2. start -> connected to rawble-strap ({RUNS} runs each), load {load()}")
connect = timing("connect", "connected", address=True)

print(f"\n== 3. CPU per 1,000 reports: --extra {EXTRA} --no-standard, passive, duplicates on, "
      f"{CPU_SECONDS:g} s window ({CPU_RUNS} runs each), load {load()}")
cpu = benchlib.record("cpu", {"rawble": [], "Bumble": []})
for host in benchlib.rotations(CPU_RUNS, ["rawble", "Bumble"]):
    with benchlib.Peer("--extra", str(EXTRA), "--no-standard") as peer:
        _, lines = run_host(host, "cpu", peer, "--seconds", str(CPU_SECONDS), timeout=CPU_SECONDS + 60)
    r = next(l for l in lines if l.get("event") == "cpu")
    per_thousand = r["cpu_ns"] / 1e6 / r["reports"] * 1000 if r["reports"] else float("nan")
    rate = r["reports"] / (r["wall_ns"] / 1e9)
    cpu[host].append((per_thousand, rate))
    print(f"   cpu {host:6} {r['reports']} reports in {r['wall_ns'] / 1e9:.2f} s ({rate:,.0f}/s), "
          f"CPU {r['cpu_ns'] / 1e6:.1f} ms -> {per_thousand:.2f} ms per 1,000", flush=True)

print(f"\n== 4. memory: --extra 1000 --no-standard, active, duplicates on, RSS every 5 s for "
      f"{MEMORY_SECONDS:g} s, load {load()}")
memory = benchlib.record("memory", {})
for host in ["rawble", "Bumble"]:
    with benchlib.Peer("--extra", "1000", "--no-standard", lifetime=MEMORY_SECONDS + 300, ready_timeout=120) as peer:
        _, lines = run_host(host, "memory", peer, "--seconds", str(MEMORY_SECONDS), "--every", "5",
                            timeout=MEMORY_SECONDS + 60)
    samples = [l for l in lines if "sample" in l]
    xs = [float(s["sample"]) for s in samples]
    ys = [s["rss"] / 1024 / 1024 for s in samples]
    # Least-squares slope from the 5 s sample on: the first one is taken before any report.
    slope = benchlib.slope_per_minute(xs[1:], ys[1:])
    memory[host] = (ys[0], ys[1], ys[-1], max(ys), slope, samples[-1]["devices"], samples[-1]["reports"])
    print(f"   memory {host:6} RSS MiB " + " ".join(f"{y:.2f}" for y in ys) +
          f"; {samples[-1]['devices']} devices, {samples[-1]['reports']} reports; slope {slope * 1024:+.0f} KiB/min",
          flush=True)

print(f"\n== side by side (medians; ms; load after: {load()})")
rows = []
def add(label, r, b, target=None, unit="ms", fmt="{:.1f}"):
    ratio = f"{r / b:.2f}x" if b else "-"
    rows.append((label, fmt.format(r) + f" {unit}", fmt.format(b) + f" {unit}", ratio, target or "-"))

fr = {h: median([m["first-report"] for m in first[h]]) for h in first}
add("start -> first report of rawble-strap", fr["rawble"], fr["Bumble"])
ex = {h: fr[h] - STRAP_INTERVAL_MS for h in fr}
ok = "ok" if ex["rawble"] <= ex["Bumble"] / 4 else "MISS"
add(f"  same, minus the strap's {STRAP_INTERVAL_MS:g} ms interval", ex["rawble"], ex["Bumble"], f"<= 1/4 of Bumble: {ok}")
sc = {h: median([m["scanning"] for m in first[h]]) for h in first}
add("  of which start -> scanning enabled", sc["rawble"], sc["Bumble"])
op = {h: median([m["opened"] for m in first[h]]) for h in first}
add("  of which start -> adapter open / powered on", op["rawble"], op["Bumble"])
tr = {h: median([m["transport"] for m in first[h]]) for h in first}
add("  of which start -> transport connected", tr["rawble"], tr["Bumble"])
co = {h: median([m["connected"] for m in connect[h]]) for h in connect}
add("start -> connected to rawble-strap", co["rawble"], co["Bumble"])
cw = {h: median([m["connected"] - m["opened"] for m in connect[h]]) for h in connect}
add("  of which open -> connected", cw["rawble"], cw["Bumble"])
cp = {h: median([c[0] for c in cpu[h]]) for h in cpu}
add("CPU time per 1,000 reports", cp["rawble"], cp["Bumble"], fmt="{:.2f}")
rt = {h: median([c[1] for c in cpu[h]]) for h in cpu}
add("  reports delivered per second", rt["rawble"], rt["Bumble"], unit="/s", fmt="{:,.0f}")
for i, what in [(0, "RSS when scanning starts"), (1, "RSS at 5 s"), (2, f"RSS at {MEMORY_SECONDS:g} s"), (3, "RSS max")]:
    add(f"{what}, 1,000 advertisers", memory["rawble"][i], memory["Bumble"][i], unit="MiB", fmt="{:.2f}")
add("RSS slope from 5 s on", memory["rawble"][4] * 1024, memory["Bumble"][4] * 1024, "flat", unit="KiB/min", fmt="{:+.0f}")
add("  distinct devices seen", memory["rawble"][5], memory["Bumble"][5], unit="", fmt="{:d}")
add("  items delivered (Bumble: advertisement + scan response merged)", memory["rawble"][6], memory["Bumble"][6], unit="", fmt="{:,d}")

benchlib.table(("metric", "rawble", "Bumble", "ratio", "target"), rows, title="side by side")
print(f"(peer logs: {LOGS})")
benchlib.finish()
