"""
GATT client benchmarks (issue 4): rawble's GATT client (GATTClient on Adapter's ATT bearer,
Benchmarks/Sources/GATTTiming) next to Google Bumble's own GATT client
(Benchmarks/Reference/bumble_gatt.py), each against the rawble-lab device of the same Bumble
peer (Scripts/bumble-peer --lab, a FRESH process per run, on 127.0.0.1, killed by PID).
  Scripts/benchmark-gatt [--quick]

1. Full discovery, as `rawble gatt` does it: MTU exchange, every primary service, included
   services, characteristics, descriptors, a read of every readable characteristic. Wall time
   from process start and from connection established; ATT requests sent. Also the CLI end to
   end (`.build/release/rawble gatt ADDR --json`, start to exit).
2. Minimal path to the first Heart Rate notification: MTU, 0x180D by UUID, its Heart Rate
   Measurement, the CCCD, the write. Targets: fewer requests than Bumble, <= 1/4 of its time.
3. CPU per received notification: the lab stream at $BENCH_STREAM_RATE (1000) Hz,
   $BENCH_STREAM_COUNT (5000) notifications of 20 bytes, every counter checked in order;
   process CPU clock from the first notification to the last, divided by count - 1.
   Target: <= 1/10 of Bumble. Then rawble's heap allocations per notification (heaptrack,
   two runs of different lengths, the difference divided by the difference in count).
ATT requests are counted the same way for both: each writes a btsnoop file of its own HCI
traffic (rawble: CapturingTransport; Bumble: its snooper, BUMBLE_SNOOPER=btsnoop:file:PATH),
and one parser counts host-to-controller ATT request PDUs (first ACL fragments on CID 4).
Capturing is on in every run of 1 and 2 (both pay for it), off in 3.
"Start" is the script's CLOCK_MONOTONIC reading just before it starts the process; each
process prints the CLOCK_MONOTONIC time of its events (as Scripts/benchmark-host).
Runs alternate rawble/Bumble (order flipped each round) so they never overlap. Timings are
medians of $BENCH_RUNS (5) runs, CPU of $BENCH_CPU_RUNS (3); --quick: 3 runs, 1 CPU run.
"""

import collections
import json
import os
import re
import shutil
import struct
import subprocess
import sys

import benchlib
from benchlib import median, load

parser = benchlib.begin("benchmark-gatt", __doc__)
parser.add_argument("--quick", action="store_true", help="3 timing runs, 1 CPU run")
options = benchlib.parse(parser)

RUNS = benchlib.env_int("BENCH_RUNS", 5)
CPU_RUNS = benchlib.env_int("BENCH_CPU_RUNS", 3)
STREAM_COUNT = benchlib.env_int("BENCH_STREAM_COUNT", 5000)
STREAM_RATE = os.environ.get("BENCH_STREAM_RATE") or "1000"
if options.quick:
    RUNS, CPU_RUNS = 3, 1
benchlib.settings(runs=RUNS, cpuRuns=CPU_RUNS, streamCount=STREAM_COUNT, streamRate=STREAM_RATE)
HOSTS = {
    "rawble": ["Benchmarks/.build/release/GATTTiming"],
    "Bumble": [sys.executable, "Benchmarks/Reference/bumble_gatt.py"],
}
LOGS = benchlib.LOGS
ATT_REQUESTS = {0x02: "Exchange MTU", 0x04: "Find Information", 0x06: "Find By Type Value",
                0x08: "Read By Type", 0x0A: "Read", 0x0C: "Read Blob", 0x0E: "Read Multiple",
                0x10: "Read By Group Type", 0x12: "Write", 0x16: "Prepare Write", 0x18: "Execute Write",
                0x20: "Read Multiple Variable"}

benchlib.build(["swift", "build", "-c", "release", "--product", "GATTTiming"], cwd="Benchmarks")
benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "rawble"])
benchlib.header()


class Peer(benchlib.Peer):
    """A fresh Scripts/bumble-peer --lab: the address of rawble-lab from its ready line."""

    def __init__(self, *args, **keywords):
        super().__init__("--no-standard", "--lab", *args, **keywords)
        self.address = self.address_of("rawble-lab")


def run_client(host, mode, peer, *args, btsnoop=None, timeout=30.0):
    command = [*HOSTS[host], mode, "--transport", peer.transport, "--address", peer.address,
               "--timeout", str(timeout), *args]
    env = dict(os.environ)
    if btsnoop and host == "rawble":
        command += ["--btsnoop", btsnoop]
    elif btsnoop:
        env["BUMBLE_SNOOPER"] = f"btsnoop:file:{btsnoop}"
    start, _, lines, _ = benchlib.run_json(command, f"{host} {mode}", timeout, env)
    return start, lines


def att_requests(path):
    """ATT PDUs the host sent, by opcode: H4 ACL records host -> controller, first fragments
    (packet boundary flag != 01) on CID 4; the ATT opcode is the first byte after L2CAP's header."""
    data = open(path, "rb").read()
    if data[:8] != b"btsnoop\0":
        benchlib.fail(f"{path} is not a btsnoop file")
    offset, sent = 16, collections.Counter()
    while offset + 24 <= len(data):
        _, included, flags, _, _ = struct.unpack(">IIIIQ", data[offset:offset + 24])
        packet = data[offset + 24:offset + 24 + included]
        offset += 24 + included
        if flags & 1 or len(packet) < 10 or packet[0] != 0x02:
            continue
        if (packet[2] >> 4) & 3 == 1:
            continue
        if packet[7] | packet[8] << 8 == 4:
            sent[packet[9]] += 1
    return sent


def request_count(sent):
    return sum(n for opcode, n in sent.items() if opcode in ATT_REQUESTS)


def describe(sent):
    return ", ".join(f"{ATT_REQUESTS.get(o, hex(o))} {n}" for o, n in sorted(sent.items()))


def timing(mode, rounds):
    """Per host: list of (marks in ms since start, ATT PDUs sent by opcode, done line)."""
    results = {"rawble": [], "Bumble": []}
    for n, host in enumerate(benchlib.rotations(rounds, ["rawble", "Bumble"])):
        snoop = os.path.join(LOGS, f"{mode}-{host}-{n}.btsnoop")
        with Peer() as peer:
            start, lines = run_client(host, mode, peer, btsnoop=snoop)
        marks = {l.get("phase") or l.get("event"): (l["t"] - start) / 1e6 for l in lines if "t" in l}
        done = next((l for l in lines if l.get("event") == "done"), None)
        if done is None:
            benchlib.fail(f"{host} {mode}: no result in {lines}")
        sent = att_requests(snoop)
        results[host].append((marks, sent, done))
        print(f"   {mode:18} {host:6} " + "  ".join(f"{k} {v:6.1f}" for k, v in marks.items()) +
              f" ms; {request_count(sent)} requests ({describe(sent)})", flush=True)
    benchlib.record(mode, {h: [{"marks": m, "attRequests": {f"0x{o:02X}": c for o, c in s.items()}, "done": d}
                               for m, s, d in runs] for h, runs in results.items()})
    return results


print(f"\n== 1. full discovery of rawble-lab ({RUNS} runs each, fresh peer per run), load {load()}")
discovery = timing("discover", RUNS)
for host in discovery:
    d = discovery[host][0][2]
    print(f"   {host}: {d['services']} services, {d['includes']} includes, {d['characteristics']} characteristics, "
          f"{d['descriptors']} descriptors, {d['reads']} values read ({d['bytes']} bytes), MTU {d['mtu']}")

cli = benchlib.record("cli", [])
print("   CLI: .build/release/rawble gatt ADDR --transport tcp:... --address-type random --json --btsnoop FILE")
for n in range(RUNS):
    snoop = os.path.join(LOGS, f"cli-{n}.btsnoop")
    with Peer() as peer:
        start, end, _, out = benchlib.run_json([".build/release/rawble", "gatt", peer.address, "--transport", peer.transport,
                                                "--address-type", "random", "--json", "--btsnoop", snoop], "rawble gatt", 30)
    document = json.loads(out)
    cli.append(((end - start) / 1e6, request_count(att_requests(snoop))))
    print(f"   cli    {cli[-1][0]:6.1f} ms start to exit, {cli[-1][1]} requests, "
          f"{len(document.get('services', []))} services in the JSON", flush=True)

print(f"\n== 2. start -> first Heart Rate notification ({RUNS} runs each), load {load()}")
first = timing("first-notification", RUNS)

print(f"\n== 3. CPU per notification: --stream-count {STREAM_COUNT} --stream-rate {STREAM_RATE} "
      f"({CPU_RUNS} runs each), load {load()}")
stream_args = ["--stream-count", str(STREAM_COUNT), "--stream-rate", STREAM_RATE, "--no-stream-log-values"]
cpu = benchlib.record("cpu", {"rawble": [], "Bumble": []})
for host in benchlib.rotations(CPU_RUNS, ["rawble", "Bumble"]):
    with Peer(*stream_args) as peer:
        _, lines = run_client(host, "stream", peer, "--count", str(STREAM_COUNT), timeout=float(STREAM_COUNT) / 100 + 60)
    r = next(l for l in lines if l.get("event") == "stream")
    if r["received"] != STREAM_COUNT or r["out_of_order"] or r["dropped"]:
        benchlib.fail(f"{host} stream lost or reordered values: {r}")
    per = r["cpu_ns"] / 1e3 / (r["received"] - 1)
    cpu[host].append(per)
    print(f"   stream {host:6} {r['received']} in order in {r['wall_ns'] / 1e9:.2f} s, CPU {r['cpu_ns'] / 1e6:.1f} ms "
          f"-> {per:.1f} us per notification", flush=True)

allocations = None
if shutil.which("heaptrack") and shutil.which("heaptrack_print"):
    totals = {}
    for count in (1000, STREAM_COUNT):
        output = os.path.join(LOGS, f"heaptrack-{count}")
        with Peer("--stream-count", str(count), "--stream-rate", STREAM_RATE, "--no-stream-log-values") as peer:
            benchlib.run_json(["heaptrack", "-o", output, *HOSTS["rawble"], "stream", "--transport", peer.transport,
                               "--address", peer.address, "--count", str(count), "--timeout", str(count / 100 + 60)],
                              "heaptrack rawble stream", count / 100 + 60)
        report = subprocess.run(["heaptrack_print", output + ".zst"], capture_output=True, text=True, timeout=120).stdout
        match = re.search(r"calls to allocation functions: (\d+)", report)
        totals[count] = int(match.group(1)) if match else None
    if None not in totals.values() and STREAM_COUNT > 1000:
        allocations = benchlib.record("allocationsPerNotification", (totals[STREAM_COUNT] - totals[1000]) / (STREAM_COUNT - 1000))
        print(f"   heaptrack: {totals[1000]} allocations for 1000 notifications, {totals[STREAM_COUNT]} for "
              f"{STREAM_COUNT} -> {allocations:.2f} per notification (reports in {LOGS})")

print(f"\n== side by side (medians; load after: {load()})")
rows = []
def add(label, r, b, target=None, unit="ms", fmt="{:.1f}", check=None):
    ratio = f"{r / b:.2f}" if b else "-"
    if check is not None:
        target = f"{target}: {'met' if check(r, b) else 'MISSED'}"
    rows.append((label, fmt.format(r) + (f" {unit}" if unit else ""), fmt.format(b) + (f" {unit}" if unit else ""),
                 ratio, target or "-"))

def med(results, host, key):
    return median([m[key] for m, _, _ in results[host]])

def med_since(results, host, key, since):
    return median([m[key] - m[since] for m, _, _ in results[host]])

def med_requests(results, host):
    return median([request_count(s) for _, s, _ in results[host]])

add("full discovery + reads: start -> done", med(discovery, "rawble", "done"), med(discovery, "Bumble", "done"))
add("  connected -> done", med_since(discovery, "rawble", "done", "connected"), med_since(discovery, "Bumble", "done", "connected"))
add("  connected -> discovered (before the reads)", med_since(discovery, "rawble", "discovered", "connected"),
    med_since(discovery, "Bumble", "discovered", "connected"))
add("  ATT requests", med_requests(discovery, "rawble"), med_requests(discovery, "Bumble"), unit="", fmt="{:.0f}")
rows.append(("`rawble gatt --json` (CLI): start -> exit; requests",
             f"{median([c[0] for c in cli]):.1f} ms; {median([c[1] for c in cli]):.0f}", "-", "-", "-"))
add("first HR notification: start -> notification", med(first, "rawble", "done"), med(first, "Bumble", "done"),
    "<= 1/4 of Bumble", check=lambda r, b: r <= b / 4)
add("  connected -> notification", med_since(first, "rawble", "done", "connected"),
    med_since(first, "Bumble", "done", "connected"))
add("  ATT requests", med_requests(first, "rawble"), med_requests(first, "Bumble"), "fewer than Bumble",
    unit="", fmt="{:.0f}", check=lambda r, b: r < b)
add(f"CPU per notification ({STREAM_COUNT:,} at {STREAM_RATE} Hz, none lost)", median(cpu["rawble"]), median(cpu["Bumble"]),
    "<= 1/10 of Bumble", unit="us", check=lambda r, b: r <= b / 10)
if allocations is not None:
    rows.append(("  heap allocations per notification (heaptrack)", f"{allocations:.2f}", "-", "-", "-"))

benchlib.table(("metric", "rawble", "Bumble", "ratio", "target"), rows, title="side by side")
print(f"(btsnoop files and peer logs: {LOGS})")
benchlib.finish()
