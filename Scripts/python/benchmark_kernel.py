"""Kernel-path benchmark (issue 11): in the VM (Scripts/vm-test: Debian's kernel under qemu, TCG,
one vCPU), from process start to the first advertising report of the strap and to the first
Heart Rate notification, side by side in the same boot:
  rawble       .build/release/rawble on the default transport hci0 (raw HCI socket; the
               kernel's L2CAP socket for ATT): `scan --passive --address STRAP --json`, and
               `hr --count 1 --json` (its first measurement line)
  socket       Benchmarks/Reference/kernel_socket_hr.py: the same flows with Python's socket
               module only (what people write today), on the same kernel sockets
  Bumble       Benchmarks/Reference/bumble_user_channel_hr.py: Google Bumble's own host on the
               HCI user channel (transport hci-socket:0, the adapter down)
  rawble-user  rawble with --transport user:hci0 (its own host on the user channel, as Bumble)
  rawble-active  rawble's default active scan, on hci0 the kernel's discovery (management
               interface); its hr flow is rawble's again
  with --down also: rawble-down, socket-down (adapter down before the run: raising it timed)
hci0's controller is ONE Scripts/bumble-peer on this machine (--strap-only, --hr-interval 0.25;
the first value is notified at once on subscription), killed by PID at the end.
  Scripts/benchmark-kernel [--quick] [--down] [--rounds N] [--kernel K] [--bluetoothd idle|discovering]
--kernel K: the guest's kernel (vm-test --kernel: 6.1, 6.12, latest, ...; default the first
pin). --bluetoothd MODE: BlueZ's daemon runs in the guest (vm-test --bluetoothd), as on a
desktop; the user-channel programs cannot take an adapter the daemon holds, so only rawble
and the socket script run (BENCH_PROGRAMS overrides).

The timer runs in the guest (Benchmarks/Reference/kernel_bench_guest.py, /usr/bin/python3):
CLOCK_MONOTONIC just before fork/exec -> the moment it reads the program's line (first line
for scan; the measurement line for hr); tear-down is not timed. One uncounted warm-up run of
every program before the scan rounds (its figure is shown as "cold": the first start reads the files over 9p),
then $BENCH_RUNS (5) rounds, the order rotated each round. Before each run, untimed: the
adapter up (raw channel) or down (user channel), no connection left on hci0, 0.5 s settle.
Every run is checked here: the scan line is the strap's address; the measurement decodes as a
Heart Rate Measurement and is the value the strap sent first on a subscription (its --log).
A failed run is listed and left out of the medians. Targets: rawble <= 1/4 of Bumble and
<= 1.5x the socket script. --quick: 3 rounds. Takes ~4 min on a 2-core machine.
BENCH_RAWBLE=PATH: time that rawble binary instead of building .build/release/rawble.
Also (untimed, after the rounds): BENCH_BASELINES=1 round of bare process starts (exec -> exit
of `rawble --version`, `rawble adapters --json`, `python3 -c pass`, importing Bumble), BENCH_PHASES=1: one more run of
each program with its log read live (rawble -vv, the scripts' phase lines): where time goes.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import benchlib
from benchlib import load

PROGRAMS_SET = bool(os.environ.get("BENCH_PROGRAMS"))


class Down(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        namespace.programs += ",rawble-down,socket-down"


class Bluetoothd(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        namespace.bluetoothd = values
        if not PROGRAMS_SET:  # the user-channel programs cannot run beside the daemon
            namespace.programs = "rawble,socket,rawble-active"


parser = benchlib.begin("benchmark-kernel", __doc__)
parser.set_defaults(runs=benchlib.env_int("BENCH_RUNS", 5),
                    programs=os.environ.get("BENCH_PROGRAMS") or "rawble,socket,bumble,rawble-user,rawble-active",
                    bluetoothd=os.environ.get("BENCH_BLUETOOTHD") or None)
parser.add_argument("--quick", dest="runs", action="store_const", const=3, help="3 rounds")
parser.add_argument("--down", nargs=0, action=Down, help="also rawble-down and socket-down (hci0 down before the run)")
parser.add_argument("--rounds", dest="runs", type=int, metavar="N", help="N rounds (BENCH_RUNS, default 5)")
parser.add_argument("--kernel", metavar="K", help="the guest's kernel (vm-test --kernel; RAWBLE_VM_KERNEL)")
parser.add_argument("--bluetoothd", metavar="idle|discovering", action=Bluetoothd,
                    help="BlueZ's daemon runs in the guest (vm-test --bluetoothd)")
options = benchlib.parse(parser)

RUNS = options.runs
PROGRAMS = options.programs.split(",")
BASELINES = benchlib.env_int("BENCH_BASELINES", 1)
PHASES = (os.environ.get("BENCH_PHASES") or "1") == "1"
benchlib.settings(runs=RUNS, programs=PROGRAMS, baselines=BASELINES, phases=PHASES)
if options.kernel:
    os.environ["RAWBLE_VM_KERNEL"] = options.kernel
VENV = os.path.abspath(os.environ.get("RAWBLE_VENV") or ".build/venv")
os.environ["RAWBLE_VENV"] = VENV
STRAP = "C0:B1:E0:00:00:01"
CONTROLLER = "00:1B:DC:0F:00:01"
LOGS = benchlib.LOGS

RAWBLE_BINARY = os.environ.get("BENCH_RAWBLE")
if not RAWBLE_BINARY:
    benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "rawble"])
    RAWBLE_BINARY = ".build/release/rawble"
if subprocess.run(["Scripts/vm-test", "--prepare"], stdout=subprocess.DEVNULL).returncode != 0:
    sys.stderr.write("benchmark-kernel: the VM cannot run here (Scripts/vm-test --prepare)\n")
    sys.exit(77)
if subprocess.run([os.path.join(VENV, "bin", "python"), "-c", "import socket; socket.AF_BLUETOOTH"],
                  stderr=subprocess.DEVNULL).returncode != 0:
    sys.stderr.write(f"benchmark-kernel: {VENV}'s python has no AF_BLUETOOTH (Bumble's hci-socket transport needs it): "
                     "make the venv from Debian's /usr/bin/python3\n")
    sys.exit(77)

benchlib.guest_tsc_clock()
benchlib.header(bumble=False, swift_suffix=f"; rawble: {RAWBLE_BINARY}")
print(f"== guest kernel parameters added: {os.environ.get('RAWBLE_VM_CMDLINE') or 'none'}")
print(f"== bumble {benchlib.bumble_version()}, guest python {benchlib.first_line(['/usr/bin/python3', '--version'])}",
      flush=True)
LABELS = {"rawble": "rawble (hci0)", "socket": "socket script", "bumble": "Bumble (user channel)",
          "rawble-user": "rawble (user:hci0)", "rawble-down": "rawble (hci0 down)",
          "socket-down": "socket script (hci0 down)", "rawble-active": "rawble (hci0, active: the kernel's discovery)"}


def start_peer():
    """ONE Scripts/bumble-peer (the strap) for the whole boot, stdin ignored; its ready line gives
    the transport."""
    log = os.path.join(LOGS, "strap.jsonl")
    peer = benchlib.Peer("--controller-address", CONTROLLER, "--strap-only", "--hr-interval", "0.25", "--log", log,
                         lifetime=900, keep_stdin=False)
    address = peer.address_of("rawble-strap")
    if address != STRAP:
        peer.stop()
        benchlib.fail(f"the strap is {address}, expected {STRAP}")
    return peer, peer.transport, log


def first_values(log):
    """The values the strap notified first on a subscription (position 0 of its script)."""
    values = set()
    if os.path.exists(log):
        for text in open(log):
            entry = json.loads(text)
            if entry.get("position") == 0 and "value" in entry and "index" in entry:
                values.add(entry["value"])
    return values


def hrm_bpm(raw):
    """Heart Rate Measurement (HRS 1.0, 3.1): its bpm, or None when the value is not valid."""
    try:
        value = bytes.fromhex(raw)
    except (TypeError, ValueError):
        return None
    if len(value) < 2:
        return None
    flags = value[0]
    at = 3 if flags & 1 else 2
    if len(value) < at:
        return None
    bpm = int.from_bytes(value[1:at], "little")
    if flags & 0x08:
        at += 2
    if len(value) < at or (flags & 0x10 and (len(value) - at) % 2) or (not flags & 0x10 and len(value) != at):
        return None
    return bpm


def check(run, sent_first):
    """Why this run does not count, or None."""
    if run["ms"] is None:
        return f"no {'measurement' if run['flow'] == 'hr' else 'report'} line (status {run['status']}): " \
               f"{run['lines'][:2]} {run['stderr'].strip()[-300:]}"
    if run["status"] != 0:
        return f"exit status {run['status']}: {run['stderr'].strip()[-300:]}"
    lines = []
    for text in run["lines"]:
        try:
            lines.append(json.loads(text))
        except ValueError:
            return f"not JSON: {text[:120]}"
    if run["flow"] == "scan":
        if lines[0].get("address") != STRAP:
            return f"first line is not the strap's: {run['lines'][0][:160]}"
        return None
    measurement = next((l for l in lines if l.get("event") == "measurement"), None)
    if measurement is None or measurement.get("address", STRAP) != STRAP:
        return f"no measurement from the strap: {run['lines'][:2]}"
    bpm = hrm_bpm(measurement.get("raw"))
    if bpm is None or bpm != measurement.get("bpm"):
        return f"not a valid measurement: {measurement}"
    if measurement["raw"] not in sent_first:
        return f"{measurement['raw']} is not the strap's first value ({sorted(sent_first)})"
    return None


peer, transport, strap_log = start_peer()
print(f"== peer {transport} (pid {peer.pid}); guest timer: {RUNS} rounds of {', '.join(PROGRAMS)}; "
      f"load {load()}", flush=True)
stamps = os.path.join(LOGS, "stamps")
os.mkdir(stamps)
vm_options = ["--bluetoothd", options.bluetoothd] if options.bluetoothd else []
command = ["Scripts/vm-test", "--timeout", "900", "--controller", transport, "--writable", stamps] + vm_options + ["--",
           "/usr/bin/python3", "Benchmarks/Reference/kernel_bench_guest.py", "--rawble", RAWBLE_BINARY,
           "--rounds", str(RUNS), "--programs", ",".join(PROGRAMS), "--venv", VENV,
           "--baselines", str(BASELINES), "--stamp", stamps] + (["--phases"] if PHASES else [])
began = time.monotonic()
try:
    vm = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=960)
finally:
    peer.stop()
wall = time.monotonic() - began
open(os.path.join(LOGS, "guest.out"), "wb").write(vm.stdout)
open(os.path.join(LOGS, "guest.err"), "wb").write(vm.stderr)
if vm.returncode != 0:
    sys.stderr.write(vm.stderr.decode(errors="replace")[-3000:])
    benchlib.fail(f"vm-test exited {vm.returncode} (logs: {LOGS})")

sent_first = first_values(strap_log)
runs, baselines, guest, clock_check, phases = benchlib.record("runs", []), benchlib.record("baselines", []), {}, None, []
for text in vm.stdout.decode(errors="replace").splitlines():
    try:
        entry = json.loads(text)
    except ValueError:
        continue
    if "guest" in entry:
        guest = entry["guest"]
    elif "phases" in entry:
        phases.append(entry)
    elif "clock_check" in entry:
        clock_check = entry["clock_check"]
    elif "baseline" in entry:
        baselines.append(entry["baseline"])
    elif "flow" in entry:
        runs.append(entry)

print(f"== guest: kernel {guest.get('kernel')}, python {guest.get('python')}, {guest.get('cpus')} vCPU, "
      f"clocksource {guest.get('clocksource')} (CLOCK_MONOTONIC resolution {guest.get('resolution_ns')} ns); "
      f"VM wall time {wall:.0f} s; load after {load()}")
try:
    host_elapsed = os.stat(os.path.join(stamps, "end")).st_mtime - os.stat(os.path.join(stamps, "start")).st_mtime
except OSError:
    host_elapsed = None
if clock_check and host_elapsed:
    drift = clock_check / host_elapsed - 1
    print(f"== guest clock check: {clock_check:.2f} s in the guest for {host_elapsed:.2f} s on the host "
          f"(stamp files' mtimes): {drift:+.1%}" + ("" if abs(drift) < 0.02 else "  **the guest's clock is off: "
          "its times are not real milliseconds**"))
failed = 0
for run in runs:
    run["why"] = check(run, sent_first)
    marks = ", ".join(f"{k} {v:.0f} ms" for k, v in run["marks"].items())
    state = "ok" if run["why"] is None else f"FAILED: {run['why']}"
    tag = "cold" if run["round"] < 0 else f"r{run['round']}"
    ms = f"{run['ms']:8.1f} ms" if run["ms"] is not None else "       - ms"
    print(f"   {run['flow']:4} {tag:4} {LABELS.get(run['program'], run['program']):26} {ms}  ({marks}) {state}")
    failed += run["why"] is not None and run["round"] >= 0


def times(flow, program, mark=None):
    return [(r["marks"].get(mark) if mark else r["ms"]) for r in runs
            if r["flow"] == flow and r["program"] == program and r["round"] >= 0 and r["why"] is None]


def median(values):
    return benchlib.median(values, default=None)


def paired(flow, a, b):
    """Ratio a/b within each round (the two ran back to back): (median, min, max) or None."""
    rounds = {}
    for r in runs:
        if r["flow"] == flow and r["round"] >= 0 and r["why"] is None and r["program"] in (a, b):
            rounds.setdefault(r["round"], {})[r["program"]] = r["ms"]
    ratios = [v[a] / v[b] for v in rounds.values() if a in v and b in v and v[b]]
    return (statistics.median(ratios), min(ratios), max(ratios)) if ratios else None


def fmt(v):
    return f"{v:,.0f} ms" if v is not None else "-"


def span(values):
    values = [v for v in values if v is not None]
    return f"{min(values):,.0f}–{max(values):,.0f}" if values else "-"


print("\n== per program: median (range) of the checked runs, ms; cold = the warm-up run")
print("| flow | program | median | range | runs ok | cold |")
print("|---|---|---:|---:|---:|---:|")
for flow in ("scan", "hr"):
    for program in PROGRAMS:
        ok = times(flow, program)
        cold = [r["ms"] for r in runs if r["flow"] == flow and r["program"] == program and r["round"] < 0]
        print(f"| {flow} | {LABELS.get(program, program)} | {fmt(median(ok))} | {span(ok)} | {len(ok)}/{RUNS} | "
              f"{fmt(cold[0]) if cold and cold[0] is not None else '-'} |")

print(f"\n== side by side (medians of {RUNS} rounds; ratios of the medians, and within each round: median, range)")
print("| metric | rawble | socket script | Bumble 0.0.236 (user channel) | rawble / Bumble | rawble / socket | target |")
print("|---|---:|---:|---:|---:|---:|---|")
for flow, what in (("scan", "start → first advertising report of the strap"),
                   ("hr", "start → first Heart Rate notification")):
    r, s, b = (median(times(flow, p)) for p in ("rawble", "socket", "bumble"))
    rb = f"{r / b:.2f}" if r and b else "-"
    rs = f"{r / s:.2f}" if r and s else "-"
    pb, ps = paired(flow, "rawble", "bumble"), paired(flow, "rawble", "socket")
    if pb:
        rb += f" ({pb[0]:.2f}, {pb[1]:.2f}–{pb[2]:.2f})"
    if ps:
        rs += f" ({ps[0]:.2f}, {ps[1]:.2f}–{ps[2]:.2f})"
    # Beside bluetoothd Bumble does not run (it needs the adapter to itself): the socket target alone.
    if "bumble" in PROGRAMS:
        met = r is not None and b is not None and s is not None and r <= b / 4 and r <= 1.5 * s
        target = "≤ 1/4 of Bumble, ≤ 1.5× socket"
    else:
        met = r is not None and s is not None and r <= 1.5 * s
        target = "≤ 1.5× socket"
    print(f"| {what} | {fmt(r)} | {fmt(s)} | {fmt(b)} | {rb} | {rs} | {target}: "
          f"{'met' if met else '**MISSED**'} |")
    if flow == "hr":
        c = median(times("hr", "rawble", "connected"))
        if c is not None:
            print(f"| — of which start → rawble's `connected` line (after MTU, discovery and 5 reads) | {fmt(c)} | | | | | |")
    if "rawble-user" in PROGRAMS:
        u = median(times(flow, "rawble-user"))
        pu = paired(flow, "rawble-user", "bumble")
        ub = f"{u / b:.2f}" if u and b else "-"
        if pu:
            ub += f" ({pu[0]:.2f}, {pu[1]:.2f}–{pu[2]:.2f})"
        print(f"| — rawble's own host on the user channel (`user:hci0`), as Bumble | {fmt(u)} | | | {ub} | | ≤ 1/4 of Bumble: "
              f"{'met' if u is not None and b and u <= b / 4 else '**MISSED**'} |")
    if "rawble-active" in PROGRAMS and flow == "scan":
        a = median(times(flow, "rawble-active"))
        pa = paired(flow, "rawble-active", "bumble")
        ab = f"{a / b:.2f}" if a and b else "-"
        if pa:
            ab += f" ({pa[0]:.2f}, {pa[1]:.2f}–{pa[2]:.2f})"
        active_met = a is not None and s is not None and a <= 1.5 * s and (b is None or a <= b / 4)
        print(f"| — rawble's default active scan on hci0 (the kernel's discovery, management interface) | {fmt(a)} | | | {ab} | "
              f"{f'{a / s:.2f}' if a and s else '-'} | {target}: {'met' if active_met else '**MISSED**'} |")
    for program in ("rawble-down", "socket-down"):
        if program in PROGRAMS:
            print(f"| — {LABELS[program]}: raising hci0 timed | {fmt(median(times(flow, program)))} | | | | | |")
if baselines:
    print(f"\n== bare process starts in the guest, exec → exit (median of {len(baselines)}):")
    for name in baselines[0]:
        print(f"   {name:24} {median([b[name] for b in baselines]):8.0f} ms")
if phases:
    print("\n== where the time goes: one more run of each, its log on stderr read live as it arrives "
          "(rawble -vv; the Python scripts' phase lines), ms after exec (not in the medians)")
    for entry in phases:
        first = entry["marks"]
        print(f"   {entry['flow']} {LABELS.get(entry['program'], entry['program'])}: "
              + ", ".join(f"{k} {v:.0f} ms" for k, v in first.items()))
        for ms, text in entry["phases"][:60]:
            print(f"     {ms:8.1f}  {text}")
        if len(entry["phases"]) > 60:
            print(f"     ... {len(entry['phases']) - 60} more lines")
print(f"\n(guest output, the strap's log and the peer's stderr: {LOGS})")
benchlib.record("guest", guest)
benchlib.record("clockCheck", clock_check)
benchlib.finish()
if failed:
    benchlib.fail(f"{failed} run(s) failed (listed above; not in the medians)")
