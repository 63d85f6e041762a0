"""
SwiftNIO's read loop alone, next to a C blocking read (issue 10): how much of the gap between
`rawble hr --json` and the C floor (Benchmarks/Reference/hr_floor.c, which reads with plain
blocking read(2)) is the event loop itself, with nothing of rawble's stack in it.
  Scripts/benchmark-readloop [--rounds N] [--count N] [--size BYTES]
A C sender (Benchmarks/Reference/paced_sender.c) sends COUNT (5000) packets of SIZE (20) bytes
over TCP on 127.0.0.1, deadline-paced 1 ms apart (a strap at 1 kHz), to one reader:
  C read(2)         Benchmarks/Reference/read_floor.c: blocking read(2), nothing else;
  SwiftNIO handler  Benchmarks/Sources/ReadLoopFloor: ClientBootstrap, a handler counting bytes;
  SwiftNIO consumer the same, and each read resumes one consumer task on the loop
                    (rawble's EventLoopTaskExecutor), as `rawble hr` consumes its values.
Each reader reports its own CPU (CLOCK_PROCESS_CPUTIME_ID, user + system) from the first byte
to the last, per packet. The three run back to back in each round (order rotated); medians
over the rounds (default 7), and the median of the per-round ratios to C.
"""

import json
import os
import subprocess
import sys

import benchlib
from benchlib import median

parser = benchlib.begin("benchmark-readloop", __doc__, logs=False)
parser.add_argument("--rounds", type=int, default=7, metavar="N", help="rounds (default 7)")
parser.add_argument("--count", type=int, default=5000, metavar="N", help="packets per run (default 5000)")
parser.add_argument("--size", type=int, default=20, metavar="BYTES", help="bytes per packet (default 20)")
options = benchlib.parse(parser)
rounds, count, size = options.rounds, options.count, options.size

benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--package-path", "Benchmarks",
                "--product", "ReadLoopFloor"])
os.makedirs(".build/bench", exist_ok=True)
benchlib.step([benchlib.cc(), "-O2", "-Wall", "-o", ".build/bench/paced_sender", "Benchmarks/Reference/paced_sender.c"])
benchlib.step([benchlib.cc(), "-O2", "-Wall", "-o", ".build/bench/read_floor", "Benchmarks/Reference/read_floor.c"])
sys.stderr.write(f"== {benchlib.utc_now():%Y-%m-%d %H:%M UTC}, {benchlib.cpus()} CPUs, load average {benchlib.load(3)}; "
                 f"{count} packets of {size} bytes, 1 ms apart, {rounds} rounds\n")
READERS = {
    "c": lambda port: [".build/bench/read_floor", port, str(count), str(size)],
    "handler": lambda port: ["Benchmarks/.build/release/ReadLoopFloor", port, str(count), str(size), "handler"],
    "consumer": lambda port: ["Benchmarks/.build/release/ReadLoopFloor", port, str(count), str(size), "consumer"],
}


def run(reader):
    """One sender, one reader (the sender's port appended): the reader's JSON line."""
    sender = subprocess.Popen([".build/bench/paced_sender", "0", str(count), str(size)], stdout=subprocess.PIPE)
    try:
        port = benchlib.read_line(sender.stdout, 5.0)
        if not port:
            benchlib.fail("the sender did not start")
        process = subprocess.run(READERS[reader](port.decode().strip()), stdout=subprocess.PIPE, text=True)
        if process.returncode != 0:
            sys.exit(process.returncode)
        sender.wait()
        return process.stdout.strip()
    finally:
        benchlib.stop_process(sender)


rows = {}
names = ["c", "handler", "consumer"]
for round_ in range(1, rounds + 1):
    for reader in names[(round_ - 1) % 3:] + names[:(round_ - 1) % 3]:
        line = run(reader)
        rows.setdefault(round_, {})[reader] = json.loads(line)["cpuPerPacketMicros"]
        sys.stderr.write(f"round {round_}: {line}\n")
        sys.stderr.flush()
benchlib.record("cpuPerPacketMicros", rows)
labels = {"c": "C read(2)", "handler": "SwiftNIO handler", "consumer": "SwiftNIO handler + consumer task on the loop"}
print("| reader | CPU per packet (median, µs) | range | ratio to C within a round (median) |")
print("|---|---:|---:|---:|")
table = []
for reader in names:
    values = [r[reader] for r in rows.values()]
    ratios = [r[reader] / r["c"] for r in rows.values() if r["c"] > 0]
    table.append((labels[reader], f"{median(values):.1f}", f"{min(values):.1f}–{max(values):.1f}", f"{median(ratios):.2f}"))
    print("| " + " | ".join(table[-1]) + " |")
benchlib.record_table(("reader", "CPU per packet (median, µs)", "range", "ratio to C within a round (median)"), table)
benchlib.finish()
