"""Polar PMD benchmark (issue 26): rawble next to a Python reference on the same work, in one go.
  Scripts/benchmark-pmd [--quick] [--skip-stream] [--results [PATH]]

1. Decode rates. The same frames, built by the simulated H10's own frame builders
   (bumble_fixture/polar.py): ECG frames of 73 samples (an H10 at ATT MTU 232), raw acceleration
   frames of 36 vectors (frame type 01) and delta-compressed ones (0x81, blocks of 16). rawble:
   Benchmarks/Sources/PMDRates (release): the header, the samples and every sample's time
   (PMDSampleClock), as `rawble ecg` does per frame. Reference: Scripts/python/pmd_reference.py's
   decode(): the header and the samples, no times (less work than rawble's side). Samples per CPU
   second of one thread, median of RUNS runs of SECONDS CPU-seconds each.
2. `rawble ecg --acc` (.build/release/rawble) streaming ECG at 130 Hz and acceleration at 200 Hz
   from the simulated H10 (Scripts/bumble-peer --h10) for STREAM_SECONDS, every sample written
   to a --jsonl file: its CPU (user + system from /proc, the whole process), CPU per sample, peak
   RSS; the simulated H10's own CPU beside it (it builds and sends every frame, in Python).
   Then, FIRST_RUNS times, the time from `connected` to the first ECG sample (`rawble ecg --json
   --count 1`, the events' own times).
Settings (env): BENCH_RUNS (5), BENCH_SECONDS (2), BENCH_STREAM_SECONDS (300), BENCH_FIRST_RUNS
(5); --quick: 1 run of 0.5 s, 20 s of streaming, 2 first-sample runs. Machine load is printed:
figures from a busy machine are lower and noisier.
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
import benchlib  # noqa: E402
import pmd_reference  # noqa: E402
from bumble_fixture import polar  # noqa: E402

parser = benchlib.begin("benchmark-pmd", __doc__)
parser.add_argument("--quick", action="store_true", help="1 run of 0.5 s; 20 s of streaming")
parser.add_argument("--skip-stream", action="store_true", help="only the decode rates")
options = benchlib.parse(parser)

RUNS = benchlib.env_int("BENCH_RUNS", 5)
SECONDS = benchlib.env_float("BENCH_SECONDS", 2)
STREAM_SECONDS = benchlib.env_float("BENCH_STREAM_SECONDS", 300)
FIRST_RUNS = benchlib.env_int("BENCH_FIRST_RUNS", 5)
if options.quick:
    RUNS, SECONDS, STREAM_SECONDS, FIRST_RUNS = 1, 0.5, 20, 2
benchlib.settings(runs=RUNS, secondsPerRun=SECONDS, streamSeconds=STREAM_SECONDS, firstRuns=FIRST_RUNS)
FRAMES = 200  # of each kind


def frames_file():
    """The input frames, `FACTOR HEX` a line (pmd_reference.py's format): FRAMES of each kind."""
    series = polar.EcgSeries(7, 60)
    lines = []
    for n in range(FRAMES):
        first = n * 73
        lines.append("1 " + polar.ecg_frame(first, series.sample_block(first, 73)).hex())
    for n in range(FRAMES):
        first = n * 36
        lines.append("1 " + polar.acc_raw_frame(first, polar.acc_vectors(7, 200, 8, first, 36), 200).hex())
    for n in range(FRAMES):
        first = n * 36
        lines.append("1 " + polar.acc_delta_frame(first, polar.acc_vectors(7, 200, 8, first, 36), 200).hex())
    path = os.path.join(benchlib.LOGS, "frames.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def reference_rates(path):
    """pmd_reference.decode over each kind's frames: {name: samples per CPU second}."""
    kinds = {}
    for line in open(path):
        factor, _, text = line.strip().partition(" ")
        frame = bytes.fromhex(text)
        name = "ecg" if frame[0] & 0x3F == 0 else ("acc_delta" if frame[9] & 0x80 else "acc_raw")
        kinds.setdefault(name, []).append((frame, float(factor)))
    rates = {}
    for name, frames in kinds.items():
        samples_per_pass = sum(len(pmd_reference.decode(frame, factor)["samples"]) for frame, factor in frames)
        runs = []
        for _ in range(RUNS):
            done, start = 0, time.thread_time()
            while time.thread_time() - start < SECONDS:
                for frame, factor in frames:
                    decoded = pmd_reference.decode(frame, factor)
                    for _sample in decoded["samples"]:
                        pass
                done += samples_per_pass
            runs.append(done / (time.thread_time() - start))
        rates[name] = benchlib.median(runs)
    return rates


def rawble_rates(path):
    benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--package-path", "Benchmarks",
                    "--product", "PMDRates"])
    out = subprocess.run(["Benchmarks/.build/release/PMDRates", path, "--seconds", str(SECONDS), "--runs", str(RUNS)],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    return {f[0]: float(f[1]) for f in (line.split("\t") for line in out.splitlines() if line and line[0] != "#")}


def fmt_rate(rate):
    return f"{rate / 1e6:,.2f} M/s" if rate >= 1e6 else f"{rate / 1e3:,.1f} k/s"


def decode_section():
    print()
    print(f"== decode rates ({RUNS} runs x {SECONDS:g} CPU-s, median), load before: {benchlib.load(3)}", flush=True)
    path = frames_file()
    rawble = benchlib.record("rawbleDecode", rawble_rates(path))
    reference = benchlib.record("referenceDecode", reference_rates(path))
    labels = {"ecg": "ECG frames, 73 samples (per sample)", "acc_raw": "acceleration raw 01, 36 vectors (per vector)",
              "acc_delta": "acceleration delta 0x81, 36 vectors (per vector)"}
    rows = []
    for name, label in labels.items():
        r, p = rawble.get(name), reference.get(name)
        rows.append((label, fmt_rate(r) if r else "-", fmt_rate(p) if p else "-",
                     f"{r / p:,.0f}x" if r and p else "-"))
    benchlib.table(("metric", "rawble (with sample times)", "Python reference (no times)", "ratio"), rows,
                   title="decode rates, samples per CPU second of one thread")


def iso_seconds(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def stream_section():
    benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "rawble"])
    print()
    print(f"== rawble ecg --acc for {STREAM_SECONDS:g} s against the simulated H10, load before: {benchlib.load(3)}",
          flush=True)
    jsonl = os.path.join(benchlib.LOGS, "ecg.jsonl")
    with benchlib.Peer("--h10", lifetime=STREAM_SECONDS + 300, log="stream-peer.err") as peer:
        peer_before = benchlib.cpu_seconds(peer.pid)
        started = time.monotonic()
        process = subprocess.Popen([".build/release/rawble", "ecg", "--acc", "--quiet", "--jsonl", jsonl,
                                    "--duration", str(STREAM_SECONDS), "--transport", peer.transport],
                                   stdout=subprocess.DEVNULL, stderr=open(os.path.join(benchlib.LOGS, "ecg.err"), "w"))
        peak_rss = 0.0
        cpu = None
        while process.poll() is None:
            cpu = benchlib.cpu_seconds(process.pid) or cpu
            peak_rss = max(peak_rss, benchlib.rss_mib(process.pid) or 0)
            time.sleep(0.5)
        wall = time.monotonic() - started
        peer_cpu = benchlib.cpu_seconds(peer.pid) - peer_before
    if process.returncode != 0:
        benchlib.fail(f"rawble ecg exited {process.returncode} (log: {benchlib.LOGS}/ecg.err)")
    ecg = acc = 0
    for line in open(jsonl):
        kind = json.loads(line).get("type")
        ecg += kind == "ecg"
        acc += kind == "acc"
    samples = ecg + acc
    figures = benchlib.record("stream", {"seconds": STREAM_SECONDS, "wallSeconds": wall, "cpuSeconds": cpu,
                                         "ecgSamples": ecg, "accelerationVectors": acc, "peakRSSMiB": peak_rss,
                                         "peerCPUSeconds": peer_cpu})
    rows = [("rawble ecg --acc --jsonl", f"{cpu:.2f} s", f"{100 * cpu / wall:.2f} %",
             f"{1e6 * cpu / samples:.1f} µs", f"{peak_rss:.1f} MiB"),
            ("simulated H10 (Bumble, Python)", f"{peer_cpu:.2f} s", f"{100 * peer_cpu / wall:.2f} %",
             f"{1e6 * peer_cpu / samples:.1f} µs", "-")]
    print(f"{ecg} ECG samples and {acc} acceleration vectors in {wall:.1f} s")
    benchlib.table(("process", "CPU", "of one core", "CPU per sample", "peak RSS"), rows,
                   title=f"streaming ECG 130 Hz + acceleration 200 Hz for {STREAM_SECONDS:g} s")
    print()
    print(f"== connection to the first ECG sample, {FIRST_RUNS} runs", flush=True)
    delays = []
    for n in range(FIRST_RUNS):
        with benchlib.Peer("--h10", log=f"first-peer-{n}.err") as peer:
            out = subprocess.run([".build/release/rawble", "ecg", "--json", "--count", "1", "--transport", peer.transport],
                                 stdout=subprocess.PIPE, text=True, timeout=60).stdout
        events = benchlib.json_lines(out)
        connected = next((e for e in events if e.get("event") == "connected"), None)
        first = next((e for e in events if e.get("event") == "ecg"), None)
        if connected and first:
            delays.append(1000 * (iso_seconds(first["time"]) - iso_seconds(connected["time"])))
    benchlib.record("firstSampleMilliseconds", delays)
    benchlib.table(("measure", "median", "runs"),
                   [("connected → first ECG sample", f"{benchlib.median(delays):.0f} ms",
                     " ".join(f"{d:.0f}" for d in delays))])


benchlib.header()
decode_section()
if not options.skip_stream:
    stream_section()
benchlib.finish()
