"""Peripheral benchmark (issue 12): notification throughput from a heart-rate strap to rawble's
central over the project's virtual link, with the strap served by rawble's peripheral
(`rawble peripheral hr --rate 1000`, .build/release/rawble) and, side by side in the same run,
by Google Bumble's own host and GATT server in a process of its own (Benchmarks/Reference/bumble_strap.py).
  Scripts/benchmark-peripheral [--quick]

Both servers are processes of their own on the same kind of port: controller 1 of one Bumble
link (a FRESH `Scripts/bumble-peer --no-standard --ports 2` per run, TCP H4 on 127.0.0.1,
killed by PID), each advertising the Heart Rate service and notifying 1,000 values a second:
  rawble:  `rawble peripheral hr --rate 1000` (.build/release/rawble);
  Bumble:  Benchmarks/Reference/bumble_strap.py --rate 1000 (Bumble's host and GATT server,
           the fixture strap's realistic values, deadline-paced as the fixture's strap).
The central is the same in both: `rawble notify ADDRESS 2A37 --json --count $BENCH_COUNT`
(5000) on controller 2. Measured from the first value the central prints to the last, from
/proc/PID/stat (utime + stime, every thread) of each process at those two moments:
  - notifications per second received by the central ((count - 1) over the time between);
  - CPU per notification of the peripheral process and of the central;
  - the same of bumble-peer (the link and both controllers), for reference.
Every value the central printed must decode as a Heart Rate Measurement; --count of them.
Runs alternate rawble/Bumble (order flipped each round) so they never overlap. Medians of
$BENCH_RUNS (5) rounds, ratios within each round; --quick: 2 rounds.
"""

import os
import select
import signal
import statistics
import subprocess
import sys
import time

import benchlib
from benchlib import cpu_seconds

parser = benchlib.begin("benchmark-peripheral", __doc__)
parser.add_argument("--quick", action="store_true", help="2 rounds")
options = benchlib.parse(parser)

RUNS = benchlib.env_int("BENCH_RUNS", 5)
COUNT = benchlib.env_int("BENCH_COUNT", 5000)
if options.quick:
    RUNS = 2
benchlib.settings(runs=RUNS, count=COUNT)
LOGS = benchlib.LOGS
RAWBLE = ".build/release/rawble"

benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "rawble"])
benchlib.header()


class Process:
    """A child whose stdout is read as JSON lines; stopped with SIGINT/SIGTERM, then SIGKILL, by PID."""

    def __init__(self, name, argv, stdin=None):
        self.name = name
        self.stderr = open(os.path.join(LOGS, f"{name}.err"), "ab")
        self.process = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=self.stderr)
        self.buffer = b""

    @property
    def pid(self):
        return self.process.pid

    def lines(self, timeout):
        """The JSON lines printed within `timeout` s ([] at none); None at the end of output."""
        if not select.select([self.process.stdout], [], [], max(0.0, timeout))[0]:
            return []
        chunk = os.read(self.process.stdout.fileno(), 1 << 20)
        if not chunk:
            return None
        self.buffer += chunk
        *complete, self.buffer = self.buffer.split(b"\n")
        return benchlib.json_lines(b"\n".join(complete).decode(errors="replace"))

    def wait_for(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            batch = self.lines(deadline - time.monotonic())
            if batch is None:
                break
            for line in batch:
                if predicate(line):
                    return line
        self.stop()
        tail = open(os.path.join(LOGS, f"{self.name}.err"), errors="replace").read()[-1500:]
        benchlib.fail(f"{self.name}: no {what} within {timeout} s (logs: {LOGS}): {tail}")

    def stop(self, sig=signal.SIGTERM):
        benchlib.stop_process(self.process, sig, wait=10)
        self.stderr.close()


def run(server):
    """One run: the central's --count values; returns figures per notification."""
    link = benchlib.Peer("--no-standard", "--ports", "2", lifetime=600, log=f"peer-{server}.err")
    transports = link.transports
    if server == "rawble":
        argv = [RAWBLE, "peripheral", "hr", "--rate", "1000", "--json", "--quiet", "--name", "bench-strap"]
    else:
        argv = [sys.executable, "Benchmarks/Reference/bumble_strap.py", "--rate", "1000", "--name", "bench-strap"]
    strap = Process(f"peripheral-{server}", argv + ["--transport", transports[0]])
    advertising = strap.wait_for(lambda line: line.get("event") == "advertising", 60, "advertising event")
    address, address_type, central_transport = advertising["address"], advertising["addressType"], transports[1]
    central = Process(f"central-{server}", [RAWBLE, "notify", address, "2A37", "--json", "--quiet",
                                            "--address-type", address_type, "--transport", central_transport,
                                            "--count", str(COUNT), "--timeout", "60"])
    values, first, last = [], None, None
    watched = [central.pid, link.pid, strap.pid]
    deadline = time.monotonic() + COUNT / 100 + 120
    try:
        while len(values) < COUNT and time.monotonic() < deadline:
            batch = central.lines(deadline - time.monotonic())
            if batch is None:
                break
            for line in batch:
                if "value" not in line:
                    continue
                values.append(line["value"])
                if len(values) == 1:
                    first = (time.monotonic(), [cpu_seconds(pid) for pid in watched])
                if len(values) == COUNT:
                    last = (time.monotonic(), [cpu_seconds(pid) for pid in watched])
    finally:
        central.stop(signal.SIGINT)
        strap.stop(signal.SIGINT)
        link.stop(wait=10)
    if last is None:
        tail = open(os.path.join(LOGS, f"central-{server}.err"), errors="replace").read()[-1500:]
        benchlib.fail(f"{server}: {len(values)} of {COUNT} values (logs: {LOGS}): {tail}")
    bad = [v for v in values if not valid_measurement(bytes.fromhex(v))]
    if bad:
        benchlib.fail(f"{server}: {len(bad)} values do not decode, e.g. {bad[0]}")
    n = COUNT - 1
    seconds = last[0] - first[0]
    cpu = [(b - a) / n * 1e6 for a, b in zip(first[1], last[1])]
    return {"rate": n / seconds, "central": cpu[0], "link": cpu[1], "peripheral": cpu[2]}


def valid_measurement(raw):
    """Flags, then bpm (8 or 16 bit), energy if flagged, RR pairs if flagged, nothing else."""
    if not raw:
        return False
    flags, size = raw[0], 1 + (2 if raw[0] & 1 else 1) + (2 if raw[0] & 8 else 0)
    if len(raw) < size:
        return False
    rest = len(raw) - size
    return rest % 2 == 0 and (rest == 0 or flags & 0x10)


rounds = benchlib.record("rounds", [])
for i in range(RUNS):
    order = ["rawble", "Bumble"] if i % 2 == 0 else ["Bumble", "rawble"]
    result = {server: run(server) for server in order}
    rounds.append(result)
    print(f"round {i + 1} (load {benchlib.load()}): " + "; ".join(
        f"{s}: {r['rate']:.0f}/s, peripheral {r['peripheral']:.1f} µs, central {r['central']:.1f} µs, "
        f"bumble-peer {r['link']:.1f} µs" for s, r in result.items()), flush=True)


def median(server, key):
    return statistics.median(r[server][key] for r in rounds)


def ratio(key):
    return statistics.median(r["rawble"][key] / r["Bumble"][key] for r in rounds)


print(f"\n{COUNT} notifications, strap at 1 kHz, medians of {RUNS} rounds (µs of CPU per notification):")
print("| server | notifications/s at the central | peripheral CPU/notification | central CPU/notification |")
print("|---|---|---|---|")
for server in ("rawble", "Bumble"):
    print(f"| {server} | {median(server, 'rate'):.0f} | {median(server, 'peripheral'):.1f} µs | "
          f"{median(server, 'central'):.1f} µs |")
print(f"| rawble / Bumble | {ratio('rate'):.2f} | {ratio('peripheral'):.2f} | {ratio('central'):.2f} |")
print(f"| bumble-peer (link) | | rawble's run {median('rawble', 'link'):.1f} µs, Bumble's {median('Bumble', 'link'):.1f} µs | |")
benchlib.record_table(["server", "notifications/s at the central", "peripheral CPU/notification", "central CPU/notification"],
                      [[s, median(s, "rate"), median(s, "peripheral"), median(s, "central")] for s in ("rawble", "Bumble")]
                      + [["rawble / Bumble", ratio("rate"), ratio("peripheral"), ratio("central")]],
                      title=f"{COUNT} notifications, strap at 1 kHz, medians of {RUNS} rounds")
print(f"(logs: {LOGS})")
benchlib.finish()
