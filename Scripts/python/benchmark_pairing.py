"""
Pairing benchmark (issue 24): LE Secure Connections Just Works from connected to encrypted, rawble's
host (Adapter, Benchmarks/Sources/PairingTiming) beside Google Bumble's own host
(Benchmarks/Reference/bumble_pairing.py) on the same Bumble link in the same run; and the
cryptography's cost per pairing, rawble's (RawbleSMP on swift-crypto, release build) beside
Bumble's (bumble.crypto on the `cryptography` package).
  Scripts/benchmark-pairing [--quick]

1. Pairing time. ONE Bumble peer for the whole run (Scripts/bumble-peer --ports 2 --strap-only,
   TCP H4 on 127.0.0.1, killed by PID): rawble's host on controller 1, Bumble's on controller 2,
   both centrals of the same strap (rawble-strap: a Bumble SMP responder, NoInputNoOutput,
   LE Secure Connections, bonding; it hands out its IRK and identity address). Each host process
   connects, pairs (LE Secure Connections, bonding, no MITM, NoInputNoOutput: Just Works; a new
   pairing every time: rawble's `Connection.pair()`, Bumble's `connection.pair()`, with the
   previous bond in an in-memory store and never used to encrypt), disconnects, and again,
   $BENCH_RUNS / $BENCH_ROUNDS times per process; rounds alternate rawble/Bumble (order flipped
   each round) so they never overlap. Times per pairing, wall clock (CLOCK_MONOTONIC):
     connected -> Encryption Change: from `connect` returning to the controller's Encryption
       Change event reaching the host's side of the transport (a pass-through in each host's
       packet path notes it before the host parses it);
     connected -> paired: to `pair()` returning (the keys distributed after encryption, and kept).
   Median and p90 (statistics.quantiles, inclusive) of $BENCH_RUNS (20) pairings per host.
   The peer writes each controller's HCI trace (--snoop, in the log folder): from it, per
   pairing, Connection Complete -> Encryption Change split into the host's turn (gaps ending
   with a packet the host sent) and the controller's (gaps ending with one it received).
2. Cryptography per pairing: each operation $BENCH_CRYPTO_COUNT (200) times in each of
   $BENCH_CRYPTO_BATCHES (5) batches, in one process per stack; the thread's CPU time per call,
   median of the batches: P-256 key generation (with the public key exported), ECDH (the peer's
   key checked on the curve, then the DHKey), f4, f5, f6, g2. A Just Works initiator uses
   keygen, ECDH, f4 once (the responder's confirm), f5 once, f6 twice (its check and the
   responder's); g2 only for Numeric Comparison (Bumble computes it in Just Works too), and
   Bumble generates its key pair once per Device, not per pairing.
--quick: 6 pairings per host in 2 rounds, 50 x 3 crypto calls.
"""

import os
import statistics
import struct
import sys

import benchlib
from benchlib import load, median

parser = benchlib.begin("benchmark-pairing", __doc__)
parser.add_argument("--quick", action="store_true", help="6 pairings per host in 2 rounds, 50 x 3 crypto calls")
options = benchlib.parse(parser)

RUNS = benchlib.env_int("BENCH_RUNS", 20)
ROUNDS = benchlib.env_int("BENCH_ROUNDS", 4)
CRYPTO_COUNT = benchlib.env_int("BENCH_CRYPTO_COUNT", 200)
CRYPTO_BATCHES = benchlib.env_int("BENCH_CRYPTO_BATCHES", 5)
PAIR_TIMEOUT = benchlib.env_float("BENCH_PAIR_TIMEOUT", 10)
if options.quick:
    RUNS, ROUNDS, CRYPTO_COUNT, CRYPTO_BATCHES = 6, 2, 50, 3
ROUNDS = max(1, min(ROUNDS, RUNS))
benchlib.settings(runs=RUNS, rounds=ROUNDS, cryptoCount=CRYPTO_COUNT, cryptoBatches=CRYPTO_BATCHES,
                  pairTimeout=PAIR_TIMEOUT)
HOSTS = {
    "rawble": ["Benchmarks/.build/release/PairingTiming"],
    "Bumble": [sys.executable, "Benchmarks/Reference/bumble_pairing.py"],
}
LOGS = benchlib.LOGS

benchlib.build(["swift", "build", "-c", "release", "--product", "PairingTiming"], cwd="Benchmarks")
benchlib.header()


def p90(values):
    return statistics.quantiles(values, n=10, method="inclusive")[8] if len(values) > 1 else values[0]


def ms(ns):
    return ns / 1e6


def snoop_windows(path):
    """The pairings in a btsnoop file (H4, as bumble-peer --snoop writes it for one served
    controller): per link, from the LE Connection Complete event to the Encryption Change event,
    (total, host, link) in ms. Every gap between two consecutive packets of the window counts
    for the side that sent the later one: "host" when the host sent it (its reaction, with the
    TCP hop), "link" when the controller did (the virtual controller, the link and the strap)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"btsnoop\0":
        return []
    records, offset = [], 16
    while offset + 24 <= len(data):
        _, length, flags, _, stamp = struct.unpack(">IIIIq", data[offset:offset + 24])
        records.append((stamp, bool(flags & 1), data[offset + 24:offset + 24 + length]))
        offset += 24 + length
    windows, start = [], None
    for i, (stamp, received, packet) in enumerate(records):
        event = packet[1] if received and len(packet) > 2 and packet[0] == 0x04 else None
        if event == 0x3E and packet[3] in (0x01, 0x0A):  # LE (Enhanced) Connection Complete
            start = i
        elif event in (0x08, 0x59) and start is not None:  # Encryption Change (v2)
            host = link = 0
            for (t0, _, _), (t1, rx, _) in zip(records[start:i], records[start + 1:i + 1]):
                if rx:
                    link += t1 - t0
                else:
                    host += t1 - t0
            windows.append(((stamp - records[start][0]) / 1e3, host / 1e3, link / 1e3))
            start = None
    return windows


# Pairings per process, spread over the rounds (the first rounds take one more when uneven).
per_round = [RUNS // ROUNDS + (1 if i < RUNS % ROUNDS else 0) for i in range(ROUNDS)]

print(f"\n== 1. pairing, LE Secure Connections Just Works: {RUNS} per host in {ROUNDS} rounds, "
      f"one peer (--ports 2 --strap-only), load {load()}", flush=True)
pairings = benchlib.record("pairings", {"rawble": [], "Bumble": []})
SNOOP = os.path.join(LOGS, "snoop")  # controller 1's trace; controller 2's is SNOOP.2
with benchlib.Peer("--ports", "2", "--strap-only", "--snoop", SNOOP, lifetime=600.0) as peer:
    if len(peer.transports) < 2:
        benchlib.fail(f"the peer serves {len(peer.transports)} controller(s), not 2")
    transport = {"rawble": peer.transports[0], "Bumble": peer.transports[1]}
    strap = peer.address_of("rawble-strap")
    order = list(benchlib.rotations(ROUNDS, ["rawble", "Bumble"]))
    for n, host in enumerate(order):
        count = per_round[n // 2]
        timeout = 15.0 + count * (PAIR_TIMEOUT + 12.0)
        command = [*HOSTS[host], "pair", "--transport", transport[host], "--address", strap, "--count", str(count),
                   "--pair-timeout", str(PAIR_TIMEOUT), "--timeout", str(timeout)]
        _, _, lines, _ = benchlib.run_json(command, f"{host} pair", timeout)
        rows = [l for l in lines if l.get("event") == "paired"]
        if len(rows) != count:
            benchlib.fail(f"{host}: {len(rows)} pairings of {count}: {lines}")
        for r in rows:
            pairings[host].append({"encrypted": ms(r["encryptionChange"] - r["connected"]),
                                   "paired": ms(r["paired"] - r["connected"])})
        recent = pairings[host][-count:]
        print(f"   round {n // 2 + 1} {host:6} connected -> Encryption Change "
              + " ".join(f"{p['encrypted']:.1f}" for p in recent) + " ms; -> paired "
              + " ".join(f"{p['paired']:.1f}" for p in recent) + " ms", flush=True)

traces = benchlib.record("trace", {"rawble": snoop_windows(SNOOP), "Bumble": snoop_windows(SNOOP + ".2")})
for host in traces:
    if len(traces[host]) != RUNS:
        print(f"   (the {host} trace has {len(traces[host])} pairings of {RUNS}: its split is left out)")
        traces[host] = []

print(f"\n== 2. cryptography: {CRYPTO_COUNT} calls x {CRYPTO_BATCHES} batches per operation, thread CPU time, "
      f"load {load()}", flush=True)
crypto = benchlib.record("crypto", {})
for host in ["rawble", "Bumble"]:
    timeout = 60.0 + CRYPTO_COUNT * CRYPTO_BATCHES * 0.05
    command = [*HOSTS[host], "crypto", "--count", str(CRYPTO_COUNT), "--batches", str(CRYPTO_BATCHES),
               "--timeout", str(timeout)]
    _, _, lines, _ = benchlib.run_json(command, f"{host} crypto", timeout)
    crypto[host] = {l["op"]: {"cpu": l["ns"], "wall": l["wallNs"]} for l in lines if "op" in l}
    print(f"   {host:6} " + "  ".join(f"{op} {median(v['cpu']) / 1e3:.1f} µs" for op, v in crypto[host].items()),
          flush=True)

# What one LE Secure Connections Just Works pairing computes, as initiator, in each stack.
USES = {
    "rawble": {"keygen": 1, "ecdh": 1, "f4": 1, "f5": 1, "f6": 2, "g2": 0},
    "Bumble": {"keygen": 0, "ecdh": 1, "f4": 1, "f5": 1, "f6": 2, "g2": 1},
}
SAME_WORK = {"keygen": 1, "ecdh": 1, "f4": 1, "f5": 1, "f6": 2, "g2": 0}
cost = {h: {op: median(v["cpu"]) / 1e3 for op, v in crypto[h].items()} for h in crypto}  # µs


def per_pairing(host, uses):
    return sum(cost[host][op] * n for op, n in uses.items())


print(f"\n== side by side (load after: {load()})")
rows = []


def add(label, r, b, unit, fmt):
    ratio = f"{r / b:.2f}" if b else "-"
    rows.append((label, fmt.format(r) + f" {unit}", fmt.format(b) + f" {unit}", ratio))


enc = {h: [p["encrypted"] for p in pairings[h]] for h in pairings}
done = {h: [p["paired"] for p in pairings[h]] for h in pairings}
tail = {h: [p["paired"] - p["encrypted"] for p in pairings[h]] for h in pairings}
add(f"connected → Encryption Change, median of {RUNS}", median(enc["rawble"]), median(enc["Bumble"]), "ms", "{:.1f}")
add("  p90", p90(enc["rawble"]), p90(enc["Bumble"]), "ms", "{:.1f}")
add("connected → pair() returned (keys distributed), median", median(done["rawble"]), median(done["Bumble"]), "ms", "{:.1f}")
add("  p90", p90(done["rawble"]), p90(done["Bumble"]), "ms", "{:.1f}")
add("  of which Encryption Change → pair() returned, median", median(tail["rawble"]), median(tail["Bumble"]), "ms", "{:.2f}")
if traces["rawble"] and traces["Bumble"]:
    for k, label in [(0, "HCI trace: Connection Complete → Encryption Change, median"),
                     (1, "  of which the host's turn (its reaction + TCP hop)"),
                     (2, "  of which the controller's turn (virtual link + strap)")]:
        add(label, median([w[k] for w in traces["rawble"]]), median([w[k] for w in traces["Bumble"]]), "ms", "{:.2f}")
names = {"keygen": "P-256 key generation", "ecdh": "ECDH (peer key checked, DHKey)", "f4": "f4", "f5": "f5",
         "f6": "f6", "g2": "g2"}
for op, name in names.items():
    add(f"{name}, CPU per call", cost["rawble"][op], cost["Bumble"][op], "µs", "{:.1f}")
add("crypto per pairing, as each does it (rawble: keygen+ECDH+f4+f5+2 f6; Bumble: ECDH+f4+f5+2 f6+g2)",
    per_pairing("rawble", USES["rawble"]), per_pairing("Bumble", USES["Bumble"]), "µs", "{:.1f}")
add("crypto per pairing, the same work (keygen+ECDH+f4+f5+2 f6)",
    per_pairing("rawble", SAME_WORK), per_pairing("Bumble", SAME_WORK), "µs", "{:.1f}")
share = {h: per_pairing(h, USES[h]) / 1e3 / median(enc[h]) * 100 for h in enc}
add("  as a share of connected → Encryption Change", share["rawble"], share["Bumble"], "%", "{:.2f}")
benchlib.record("perPairingMicroseconds", {h: per_pairing(h, USES[h]) for h in cost})

benchlib.table(("metric", "rawble", "Bumble", "rawble / Bumble"), rows, left={0}, title="side by side")
print(f"(logs: {LOGS})")
benchlib.finish()
