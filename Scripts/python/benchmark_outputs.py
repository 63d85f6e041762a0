"""Where the beats go (issue 42's benchmark): what `--lsl` and `--serve` add to a run of rawble
(.build/release/rawble), in CPU per sample and in latency from the strap's frame to the consumer.
  Scripts/benchmark-outputs [--quick] [--rounds N] [--seconds S] [--straps N] [--rate HZ] [--results [PATH]]

Each run gets a fresh Scripts/bumble-peer (TCP H4 on 127.0.0.1, killed by PID) started with
--log-sent-clock: every Heart Rate value and H10 frame it notifies is logged with "sent", the
CLOCK_MONOTONIC time just before the notification went to Bumble's stack. Consumers note
CLOCK_MONOTONIC (Python's time.monotonic(); liblsl's local_clock() is the same clock) when they
get each sample, so the latency is one clock's difference on one machine.

(a) `rawble ecg --acc --duration S --json --quiet` against --h10 --strap-only (ECG at 130 Hz in
    frames of 73 samples, acceleration at 200 Hz): plain; with `--lsl` and nobody listening; and
    with `--lsl` and a pylsl inlet in a process of its own (this program's --inlet mode, started
    before rawble), which resolves the strap's four streams (ECG, Accelerometer, HR, RR; by
    source ID, rawble:ADDRESS:TYPE, one after the other) and pulls each in a thread of its own
    (pull_sample, which returns as soon as a sample is there, then what else is there at once).
    liblsl is pylsl's (RAWBLE_LIBLSL = the venv's pylsl/lib/liblsl.so.2) under an lsl_api.cfg
    that keeps discovery on this machine and liblsl quiet (LSLAPICFG, as the tests use).
(b) `rawble hr --all --max N --count C --json --quiet` against --strap-only --straps N (N = 5
    straps at 4 Hz, C = S s of values each): plain; with `--serve 127.0.0.1:0` and no page open;
    and with `--serve 127.0.0.1:0` and a client on its event stream (this program's
    --sse-client mode: a raw HTTP/1.1 GET /events on a socket, connected as soon as rawble
    prints the URL, before the straps are found).
Rounds ($BENCH_RUNS, default 3; --rounds), each one run of each variant, the order rotated by
one each round. Per run:
- CPU per sample: rawble's utime + stime (wait4's rusage) / the samples it printed (ECG samples
  plus acceleration vectors; heart-rate values), setup included ("whole run"); and "streaming":
  the CPU from the moment the first sample line is read (the process's CPU-time clock,
  clock_getcpuclockid) to its exit, over the samples printed after that line. The consumer's
  own CPU is not counted (it is the user's program, not rawble). Added CPU = (with - plain) /
  plain, of the medians.
- Latency, per frame (ECG, acceleration: when its last sample reached the consumer) or per value
  (HR): the consumer's clock at reception - the fixture's "sent". Samples are matched to frames
  by their values (ECG samples, acceleration vectors: a contiguous run of what the strap sent);
  heart-rate values by their bpm, each to the latest value of that strap sent before it arrived.
  rawble's own stdout (this program reading the --json lines) is measured the same way in every
  run, as the baseline.
- Checks: exit status 0; every strap delivered its count (hr) and at least 90 % of S s of ECG;
  the consumer received samples of every stream. Samples or values received that match nothing
  the strap sent are counted ("unmatched") and left out of the latencies.
Goal (issue 42): added CPU per sample of --lsl and --serve (with their consumer) under 10 %. A Python bridge on bleak +
pylsl needs BlueZ's daemon (D-Bus): not run here (see docs/performance.md).
S = $BENCH_SECONDS, default 30 (--seconds). --quick: 1 round of 10 s.
"""

import glob
import json
import math
import os
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

LSL_TYPES = ["ECG", "Accelerometer", "HR", "RR"]


def inlet_main(source_ids):
    """--inlet SOURCE_ID...: a pylsl inlet per stream, one thread each; until stdin ends, then one
    JSON line: {sourceID: {"resolvedAt": t, "chunks": [[monotonic at reception, [sample, ...]], ...]}}."""
    import pylsl  # LSLAPICFG is in the environment: liblsl reads it on first use

    stop = threading.Event()
    results = {sid: {"resolvedAt": None, "chunks": []} for sid in source_ids}

    def pull(sid, info):
        inlet = pylsl.StreamInlet(info, max_buflen=60, recover=True)
        inlet.open_stream(timeout=10)
        results[sid]["resolvedAt"] = time.monotonic()
        chunks = results[sid]["chunks"]
        try:
            while not stop.is_set():
                # pull_sample returns as soon as a sample is there; pull_chunk with a timeout
                # would wait for the whole timeout unless its buffer fills (liblsl pulls sample
                # after sample until the deadline), so the rest is taken without waiting.
                sample, stamp = inlet.pull_sample(timeout=0.2)
                if stamp is None:
                    continue
                now = time.monotonic()
                samples, _ = inlet.pull_chunk(timeout=0.0, max_samples=4096)
                chunks.append([now, [list(map(float, s)) for s in [sample, *samples]]])
            inlet.close_stream()
        except Exception as error:  # the outlet went away for good: what came is kept
            results[sid]["error"] = str(error)

    # One stream resolved at a time, in this thread, each with a wait of seconds (as the tests'
    # lsl_inlet.py does): resolves of a fraction of a second, or several at once in threads,
    # missed streams that were there. Each stream found gets its puller thread at once.
    threads, pending, ended = [], list(source_ids), False
    while pending and not ended:
        found = pylsl.resolve_byprop("source_id", pending[0], 1, 2.0)
        if found:
            threads.append(threading.Thread(target=pull, args=(pending.pop(0), found[0]), daemon=True))
            threads[-1].start()
        ended = bool(select.select([sys.stdin], [], [], 0)[0])
    sys.stdin.read()  # the benchmark closes stdin once rawble exited
    stop.set()
    for thread in threads:
        thread.join(5)
    sys.stdout.write(json.dumps(results) + "\n")
    sys.stdout.flush()
    os._exit(0)  # liblsl's own threads do not hold the exit


def sse_main(url):
    """--sse-client URL: GET /events on a raw socket; until the server closes it or stdin ends,
    then one JSON line: {"events": [[monotonic at reception, strap id, bpm], ...], "snapshots": n}."""
    match = re.match(r"http://([^/:]+|\[[^\]]+\]):(\d+)", url)
    host, port = match.group(1).strip("[]"), int(match.group(2))
    sock = socket.create_connection((host, port), timeout=10)
    sock.sendall(f"GET /events HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    sock.setblocking(False)
    raw, body, head = b"", b"", None
    chunked = False
    events, snapshots = [], 0
    open_ = True
    while open_:
        ready, _, _ = select.select([sock, sys.stdin], [], [], 30)
        if not ready or sys.stdin in ready:
            break
        data = sock.recv(1 << 16)
        now = time.monotonic()
        if not data:
            break
        raw += data
        if head is None:
            if b"\r\n\r\n" not in raw:
                continue
            head, raw = raw.split(b"\r\n\r\n", 1)
            if not head.startswith(b"HTTP/1.1 200"):
                raise SystemExit(f"sse-client: {head[:200]!r}")
            chunked = b"transfer-encoding: chunked" in head.lower()
        if chunked:  # de-chunk: SIZE CRLF DATA CRLF ...
            while b"\r\n" in raw:
                size_line, rest = raw.split(b"\r\n", 1)
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    open_ = False
                    break
                if len(rest) < size + 2:
                    break
                body += rest[:size]
                raw = rest[size + 2:]
        else:
            body, raw = body + raw, b""
        while b"\n\n" in body:
            event, body = body.split(b"\n\n", 1)
            kind, data_line = None, None
            for line in event.decode(errors="replace").split("\n"):
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data_line = line[6:]
            if kind == "snapshot":
                snapshots += 1
            elif kind == "strap" and data_line:
                value = json.loads(data_line)
                if "point" in value and value.get("bpm") is not None:
                    events.append([now, value["id"], value["bpm"]])
    sys.stdout.write(json.dumps({"events": events, "snapshots": snapshots}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] in ("--inlet", "--sse-client"):
    if sys.argv[1] == "--inlet":
        inlet_main(sys.argv[2:])
    else:
        sse_main(sys.argv[2])
    sys.exit(0)

import benchlib  # noqa: E402 (the consumer modes above need none of it)

parser = benchlib.begin("benchmark-outputs", __doc__)
parser.set_defaults(rounds=benchlib.env_int("BENCH_RUNS", 3), seconds=benchlib.env_float("BENCH_SECONDS", 30))
parser.add_argument("--quick", action="store_true", help="1 round of 10 s")
parser.add_argument("--rounds", type=int, metavar="N", help="N rounds (BENCH_RUNS, default 3)")
parser.add_argument("--seconds", type=float, metavar="S", help="S s of streaming per run (BENCH_SECONDS, default 30)")
parser.add_argument("--straps", type=int, default=5, metavar="N", help="straps of the hr runs (default 5)")
parser.add_argument("--rate", type=float, default=4.0, metavar="HZ", help="values per second of each strap (default 4)")
options = benchlib.parse(parser)
if options.quick:
    options.rounds, options.seconds = 1, 10.0
ROUNDS, SECONDS, STRAPS, RATE = options.rounds, options.seconds, options.straps, options.rate
benchlib.settings(rounds=ROUNDS, seconds=SECONDS, straps=STRAPS, rate=RATE)

VENV = os.path.abspath(os.environ.get("RAWBLE_VENV") or ".build/venv")
LIBLSL = next(iter(sorted(glob.glob(os.path.join(VENV, "lib", "python3*", "site-packages", "pylsl", "lib", "liblsl.so.2")))), None)
if not LIBLSL:
    benchlib.fail(f"no pylsl (with its liblsl.so.2) in {VENV}: run Scripts/bootstrap")
CONFIG = os.path.join(benchlib.LOGS, "lsl_api.cfg")
with open(CONFIG, "w") as f:
    f.write("[ports]\nIPv6 = disable\n\n[multicast]\nResolveScope = machine\n\n[log]\nlevel = -3\n")
ENV = {**os.environ, "RAWBLE_LIBLSL": LIBLSL, "LSLAPICFG": CONFIG}
RAWBLE = ".build/release/rawble"
ME = os.path.abspath(__file__)

benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "rawble"])
benchlib.header()


def process_cpu(pid):
    """CPU seconds of a live process so far, to the nanosecond (its CPU-time clock: ~pid << 3 | 2,
    what glibc's clock_getcpuclockid returns); None once it is gone."""
    try:
        return time.clock_gettime((~pid << 3) | 2)
    except OSError:
        return None


def percentile(values, fraction):
    """The value at `fraction` of the sorted values (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))] if ordered else float("nan")


def summary(milliseconds):
    """What the results file keeps of a list of latencies (ms): count, median, p95, max."""
    if not milliseconds:
        return {"count": 0}
    return {"count": len(milliseconds), "median": round(statistics.median(milliseconds), 3),
            "p95": round(percentile(milliseconds, 0.95), 3), "max": round(max(milliseconds), 3)}


def read_log(path):
    try:
        with open(path) as f:
            return benchlib.json_lines(f.read())
    except OSError:
        return []


def frame_latencies(sent, received):
    """Per frame, reception of its last sample - its "sent": `sent` [(sent, [sample, ...])] in the
    order notified, `received` [(reception, [sample, ...])] in the order received. The received
    samples are matched to runs of the sent ones: 20 in a row find where a run starts (of the
    places that fit, the one with the smallest latency that is not negative), and it goes on
    while they agree; a sample that does not fit is looked for afresh. Only frames whose every
    sample was received count. Returns (latencies in s, samples matched, samples received)."""
    flat = [(s, i) for i, (_, samples) in enumerate(sent) for s in samples]
    got = [(s, t) for t, samples in received for s in samples]
    places = {}
    for position in range(len(flat) - 3):
        places.setdefault(tuple(flat[position + j][0] for j in range(4)), []).append(position)

    def find(k):
        probe = [s for s, _ in got[k:k + 20]]
        best = None
        for start in places.get(tuple(probe[:4]), []):
            if start + len(probe) <= len(flat) and all(flat[start + j][0] == probe[j] for j in range(len(probe))):
                latency = got[k][1] - sent[flat[start][1]][0]
                if latency >= 0 and (best is None or latency < best[1]):
                    best = (start, latency)
        return best[0] if best else None

    per_frame = {}  # frame -> (its samples matched, the last one's reception)
    matched, k, position = 0, 0, None
    while k < len(got):
        sample, t = got[k]
        if position is None or position >= len(flat) or flat[position][0] != sample:
            position = find(k)
            if position is None:
                k += 1
                continue
        frame = flat[position][1]
        n, last = per_frame.get(frame, (0, t))
        per_frame[frame] = (n + 1, max(last, t))
        matched += 1
        position += 1
        k += 1
    return [last - sent[i][0] for i, (n, last) in per_frame.items() if n == len(sent[i][1])], matched, len(got)


def value_latencies(sent, received):
    """Per value: reception - "sent" of the latest value of the same key (strap, bpm) sent before
    it arrived and after the one matched before. `sent` [(sent, key)], `received` [(reception,
    key)], both in order. Returns (latencies in s, values matched, values received)."""
    latencies, cursor = [], {}
    by_key = {}
    for index, (t, key) in enumerate(sent):
        by_key.setdefault(key, []).append((t, index))
    for t, key in received:
        strap = key[0]
        candidates = [(s, i) for s, i in by_key.get(key, []) if s <= t and i >= cursor.get(strap, 0)]
        if candidates:
            s, i = candidates[-1]
            latencies.append(t - s)
            cursor[strap] = i + 1
    return latencies, len(latencies), len(received)


def bpm_of(hex_value):
    value = bytes.fromhex(hex_value)
    return value[1] | (value[2] << 8 if value[0] & 1 else 0)


def run_monitor(command, samples_of, consumer_start=None, serve=False, timeout=120):
    """Runs rawble: (CPU s from wait4, samples, CPU s after the first sample line, samples after
    it, [(reception, line)] of the JSON lines, stderr log, the consumer's JSON). `samples_of(line)`
    counts a line's samples; `consumer_start(url or None)` starts the consumer (a Popen), before
    rawble (LSL) or once rawble printed its URL (serve)."""
    name = f"rawble-{len(os.listdir(benchlib.LOGS))}"
    err_path = os.path.join(benchlib.LOGS, f"{name}.err")
    consumer = consumer_start(None) if consumer_start and not serve else None
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    url = []

    def drain_stderr():
        with open(err_path, "ab") as log:
            for line in iter(process.stderr.readline, b""):
                log.write(line)
                log.flush()
                found = re.search(rb"serving the live display at (http://\S+)", line)
                if found and not url:
                    url.append(found.group(1).decode())
    stderr_thread = threading.Thread(target=drain_stderr, daemon=True)
    stderr_thread.start()
    lines, buffer, samples, before, cpu_first = [], b"", 0, None, None
    deadline = time.monotonic() + timeout
    while True:
        if serve and consumer_start and consumer is None and url:
            consumer = consumer_start(url[0])
        if time.monotonic() > deadline:
            benchlib.stop_process(process)
            benchlib.fail(f"{' '.join(command[:3])} did not finish in {timeout} s (log: {err_path})")
        ready, _, _ = select.select([process.stdout], [], [], 0.05 if serve and consumer_start and consumer is None else 1)
        if not ready:
            continue
        chunk = os.read(process.stdout.fileno(), 1 << 20)
        if not chunk:
            break
        now = time.monotonic()
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in benchlib.json_lines(b"\n".join(complete).decode(errors="replace")):
            if "error" in line:
                benchlib.fail(f"rawble: {line['error']} (log: {err_path})")
            count = samples_of(line)
            if count and cpu_first is None:
                cpu_first = process_cpu(process.pid)
                before = samples + count
            samples += count
            lines.append((now, line))
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = status >> 8
    stderr_thread.join(5)
    if status != 0:
        benchlib.fail(f"{' '.join(command[:2])} exited with status {status >> 8} (log: {err_path})")
    out = None
    if consumer is not None:
        try:
            out, _ = consumer.communicate(b"", timeout=30)
        except subprocess.TimeoutExpired:
            benchlib.stop_process(consumer)
            benchlib.fail("the consumer did not finish within 30 s of rawble's exit")
        with open(err_path.replace(".err", ".consumer.json"), "wb") as f:
            f.write(out)
        text = out.decode(errors="replace").strip().splitlines()
        if not text:
            benchlib.fail(f"the consumer printed nothing (status {consumer.returncode}; log: {benchlib.LOGS})")
        out = json.loads(text[-1])
    elif consumer_start:
        benchlib.fail(f"rawble never printed its live display's URL (log: {err_path})")
    cpu = usage.ru_utime + usage.ru_stime
    return cpu, samples, cpu - (cpu_first or 0), samples - (before or 0), lines, err_path, out


def consumer(argv, name):
    def start(url):
        log = open(os.path.join(benchlib.LOGS, f"{name}.err"), "ab")
        return subprocess.Popen([sys.executable, ME, *argv, *([url] if url else [])], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=log, env=ENV)
    return start


def pmd_samples(line):
    if line.get("event") == "ecg":
        return len(line.get("uV", []))
    if line.get("event") == "acc":
        return len(line.get("mG", []))
    return 0


def run_ecg(variant, round_):
    """One `rawble ecg --acc` run, plain or --lsl: its figures and latencies."""
    log = os.path.join(benchlib.LOGS, f"h10-{variant}-{round_}.jsonl")
    with benchlib.Peer("--h10", "--strap-only", "--log-sent-clock", "--h10-log", log,
                       log=f"peer-ecg-{variant}-{round_}.err") as peer:
        address = next(d["address"] for d in peer.ready["devices"] if d["name"].startswith("Polar H10"))
        command = [RAWBLE, "ecg", "--acc", "--duration", f"{SECONDS:g}", "--json", "--quiet", "--transport", peer.transport]
        start = None
        if variant != "plain":
            command.insert(3, "--lsl")
        if variant == "lsl+inlet":
            start = consumer(["--inlet", *[f"rawble:{address}:{t}" for t in LSL_TYPES]], f"inlet-{round_}")
        cpu, samples, cpu_streaming, streaming, lines, err, received = run_monitor(command, pmd_samples, start,
                                                                                  timeout=SECONDS + 90)
    ecg_samples = sum(len(line.get("uV", [])) for _, line in lines if line.get("event") == "ecg")
    if ecg_samples < 0.9 * 130 * SECONDS:
        benchlib.fail(f"ecg {variant}: {ecg_samples} ECG samples in {SECONDS:g} s (log: {err})")
    sent = read_log(log)
    ecg_sent = [(e["sent"], [int.from_bytes(bytes.fromhex(e["value"])[10 + 3 * k:13 + 3 * k], "little", signed=True)
                             for k in range(e["count"])]) for e in sent if e.get("kind") == "h10-frame" and e["measurement"] == "ecg"]
    acc_sent = [(e["sent"], [tuple(v) for v in e["samples"]]) for e in sent
                if e.get("kind") == "h10-frame" and e["measurement"] == "acc"]
    hr_sent = [(e["sent"], ("h10", bpm_of(e["value"]))) for e in sent if e.get("kind") == "h10-heart-rate"]
    latency = {
        "ecg->stdout": frame_latencies(ecg_sent, [(t, line["uV"]) for t, line in lines if line.get("event") == "ecg"]),
        "acc->stdout": frame_latencies(acc_sent, [(t, [tuple(v) for v in line["mG"]]) for t, line in lines
                                                  if line.get("event") == "acc"]),
    }
    if variant == "lsl+inlet":
        streams = {t: received[f"rawble:{address}:{t}"] for t in LSL_TYPES}
        for t, stream in streams.items():
            if not stream["chunks"]:
                benchlib.fail(f"the inlet received nothing of {t} (resolved: {stream['resolvedAt'] is not None})")
        latency["ecg->lsl"] = frame_latencies(ecg_sent, [(t, [int(round(s[0])) for s in c]) for t, c in streams["ECG"]["chunks"]])
        latency["acc->lsl"] = frame_latencies(acc_sent, [(t, [tuple(int(round(v)) for v in s) for s in c])
                                                         for t, c in streams["Accelerometer"]["chunks"]])
        hr_received = [(t, ("h10", int(round(s[0])))) for t, c in streams["HR"]["chunks"] for s in c]
        latency["hr->lsl"] = value_latencies(hr_sent, hr_received)
        for key in ["ecg->lsl", "acc->lsl"]:
            _, matched, got = latency[key]
            if matched < got:
                print(f"benchmark-outputs: {key}: {got - matched} of {got} samples received do not match what the "
                      f"strap sent (left out)", file=sys.stderr)
    return cpu, samples, cpu_streaming, streaming, latency


def run_hr(variant, round_):
    """One `rawble hr --all` run, plain or --serve with a client on /events."""
    count = max(2, int(SECONDS * RATE))
    log = os.path.join(benchlib.LOGS, f"straps-{variant}-{round_}.jsonl")
    with benchlib.Peer("--strap-only", "--straps", str(STRAPS), "--hr-interval", str(1 / RATE),
                       "--hr-count", str(count * 4 + 100), "--log", log, "--log-sent-clock",
                       log=f"peer-hr-{variant}-{round_}.err") as peer:
        command = [RAWBLE, "hr", "--all", "--max", str(STRAPS), "--count", str(count), "--json", "--quiet",
                   "--timeout", "20", "--transport", peer.transport]
        start = None
        if variant != "plain":
            command[2:2] = ["--serve", "127.0.0.1:0"]
        if variant == "serve+client":
            start = consumer(["--sse-client"], f"sse-{round_}")
        cpu, values, cpu_streaming, streaming, lines, err, received = run_monitor(
            command, lambda line: 1 if line.get("event") == "measurement" else 0, start,
            serve=variant != "plain", timeout=120 + 2 * STRAPS)
    counts = {}
    for _, line in lines:
        if line.get("event") == "measurement":
            counts[line.get("address")] = counts.get(line.get("address"), 0) + 1
    if len(counts) != STRAPS or any(c < count for c in counts.values()):
        benchlib.fail(f"hr {variant}: values per strap {sorted(counts.values())}, {count} each expected (log: {err})")
    sent = [(e["sent"], (e["strap"].upper(), bpm_of(e["value"]))) for e in read_log(log)
            if "kind" not in e and "sent" in e and "invalid" not in e]
    latency = {"hr->stdout": value_latencies(sent, [(t, (line["address"].upper(), line["bpm"])) for t, line in lines
                                                    if line.get("event") == "measurement"])}
    if variant == "serve+client":
        if not received["events"]:
            benchlib.fail("the event stream's client received no value")
        latency["hr->sse"] = value_latencies(sent, [(t, (strap.upper(), bpm)) for t, strap, bpm in received["events"]])
    return cpu, values, cpu_streaming, streaming, latency


VARIANTS = {"ecg": ["plain", "lsl", "lsl+inlet"], "hr": ["plain", "serve", "serve+client"]}
runs = {command: {variant: [] for variant in variants} for command, variants in VARIANTS.items()}
for round_ in range(ROUNDS):
    for command, run in [("ecg", run_ecg), ("hr", run_hr)]:
        # Each round's order rotated by one: no variant always goes first.
        order = VARIANTS[command][round_ % 3:] + VARIANTS[command][:round_ % 3]
        for variant in order:
            runs[command][variant].append(run(variant, round_))
            print(f"{command} {variant} round {round_ + 1}: {runs[command][variant][-1][0]:.3f} s CPU, "
                  f"{runs[command][variant][-1][1]} samples", file=sys.stderr)


def spread(values, digits=0):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


rows, cpu_figures = [], {}
labels = {("ecg", "plain"): "ecg --acc", ("ecg", "lsl"): "ecg --acc --lsl, no inlet",
          ("ecg", "lsl+inlet"): "ecg --acc --lsl + pylsl inlet",
          ("hr", "plain"): f"hr --all, {STRAPS} straps × {RATE:g} Hz", ("hr", "serve"): "hr --all --serve, no client",
          ("hr", "serve+client"): "hr --all --serve + SSE client"}
for command, variants in runs.items():
    base = None
    for variant, results in variants.items():
        whole = [r[0] / r[1] * 1e6 for r in results]
        steady = [r[2] / r[3] * 1e6 for r in results if r[3]]
        medians = (statistics.median(whole), statistics.median(steady))
        added = ("", "") if base is None else tuple(f"{(m / b - 1) * 100:+.1f} %" for m, b in zip(medians, base))
        base = base or medians
        cpu_figures[f"{command}-{variant}"] = {
            "runs": [{"cpuSeconds": r[0], "samples": r[1], "streamingCpuSeconds": r[2], "streamingSamples": r[3]}
                     for r in results],
            "microsecondsPerSample": whole, "streamingMicrosecondsPerSample": steady}
        rows.append((labels[(command, variant)], len(results), int(statistics.median([r[1] for r in results])),
                     spread(whole, 1), added[0], spread(steady, 1), added[1]))
benchlib.record("cpu", cpu_figures)
benchlib.table(["run", "runs", "samples", "µs/sample, whole run: median (min–max)", "added",
                "µs/sample, streaming: median (min–max)", "added"], rows,
               title="CPU per sample (ECG samples + acceleration vectors; heart-rate values), rawble's own")

rows, latency_figures = [], {}
paths = [("ecg", "plain", "ecg->stdout", "ECG frame → stdout (plain)"),
         ("ecg", "lsl+inlet", "ecg->stdout", "ECG frame → stdout (--lsl + inlet)"),
         ("ecg", "lsl+inlet", "ecg->lsl", "ECG frame → LSL inlet"),
         ("ecg", "plain", "acc->stdout", "ACC frame → stdout (plain)"),
         ("ecg", "lsl+inlet", "acc->lsl", "ACC frame → LSL inlet"),
         ("ecg", "lsl+inlet", "hr->lsl", "H10 heart rate → LSL inlet"),
         ("hr", "plain", "hr->stdout", "strap value → stdout (plain)"),
         ("hr", "serve+client", "hr->stdout", "strap value → stdout (--serve + client)"),
         ("hr", "serve+client", "hr->sse", "strap value → SSE client")]
for command, variant, key, label in paths:
    per_run = [r[4][key][0] for r in runs[command][variant]]
    pooled = [x * 1000 for run_ in per_run for x in run_]
    if not pooled:
        benchlib.fail(f"{label}: nothing matched")
    unmatched = sum(r[4][key][2] - r[4][key][1] for r in runs[command][variant])
    latency_figures[key + ("" if key.endswith(("lsl", "sse")) else f"-{variant}")] = {
        "all": summary(pooled), "runs": [summary([x * 1000 for x in run_]) for run_ in per_run],
        "matched": [r[4][key][1] for r in runs[command][variant]],
        "received": [r[4][key][2] for r in runs[command][variant]]}
    run_medians = [statistics.median(x) * 1000 for x in per_run if x]
    rows.append((label, len(pooled), unmatched, f"{statistics.median(pooled):.2f}", f"{percentile(pooled, 0.95):.2f}",
                 f"{max(pooled):.2f}", " / ".join(f"{m:.2f}" for m in run_medians)))
benchlib.record("latency", latency_figures)
benchlib.table(["path", "frames/values", "unmatched", "median ms", "p95 ms", "max ms", "median per run, ms"], rows,
               title="Latency from the fixture's notification to the consumer (CLOCK_MONOTONIC)")
for command, variant, label in [("ecg", "lsl+inlet", "--lsl with an inlet"), ("hr", "serve+client", "--serve with a client")]:
    added = [statistics.median([r[i] / r[j] for r in runs[command][variant]]) /
             statistics.median([r[i] / r[j] for r in runs[command]["plain"]]) - 1 for i, j in [(0, 1), (2, 3)]]
    print(f"{label}: {added[0] * 100:+.1f} % CPU per sample over the whole run, {added[1] * 100:+.1f} % while "
          f"streaming (goal < 10 %)")
benchlib.finish()
