"""ECG beside bluetoothd (issue 26's benchmark, part 3): in the VM (Scripts/vm-test: Debian's
kernel under qemu, TCG, one vCPU) with BlueZ's bluetoothd running (idle, on the system D-Bus, as
on a desktop), rawble and bleakheart against the same simulated Polar H10, side by side in the
same boot, with a native floor beside them:
  rawble      `rawble ecg ADDR --json --transport hci0` (release build: BENCH_RAWBLE=PATH, else
              .build/release/rawble is built): the kernel's raw HCI socket and L2CAP ATT socket,
              beside the daemon
  bleakheart  Benchmarks/Reference/bleakheart_ecg.py: PyPI's bleakheart (PolarMeasurementData,
              as its ECG example uses it) on bleak over bluetoothd's D-Bus API; its venv is
              .build/venv-bleak (/usr/bin/python3, bleak and bleakheart pinned below), made here
              when missing (pip, from PyPI)
  floor       Benchmarks/Reference/ecg_floor.c, built here (.build/bench/ecg_floor, cc -O2): the
              same per-frame work as `rawble ecg --json` on the kernel path, the cheapest way
              Linux allows: the L2CAP ATT socket, then per ECG notification one epoll_wait, one
              read and one write(2) of the JSON line (its start-up: MTU 232, discovery by Read By
              Type, the PMD CCCDs, the start command and its indication)
hci0's controller is ONE Scripts/bumble-peer on this machine (--h10 --strap-only: the simulated
H10 advertising "Polar H10 0A3B5C7D", ECG at 130 Hz in frames of 73 samples at its MTU of 232,
one frame every 0.56 s), killed by PID at the end.
  Scripts/benchmark-ecg-vm [--quick] [--rounds N] [--seconds S] [--kernel K] [--results [PATH]]

The timer runs in the guest (Benchmarks/Reference/ecg_bench_guest.py, /usr/bin/python3): R rounds
($BENCH_RUNS, default 3), each one run of each program, the order rotated each round. A run:
CLOCK_MONOTONIC from just before fork/exec to the arrival of the program's `connected` line and
of its first ECG frame (the first samples); then S s of streaming ($BENCH_SECONDS, default 60;
--quick: 2 rounds of 20 s) during which the CPU time of the program (all its threads),
of bluetoothd and of dbus-daemon is read at the first frame and at the end: CPU / ECG samples in
that window = CPU per sample (bleak's data passes through bluetoothd and D-Bus, so theirs is
counted beside the program's; during rawble's and the floor's runs the daemons are measured
too). Then SIGINT: each stops ECG on the strap and disconnects. Checks: every run got ECG samples
(at least 90 % of 130/s over the window; a run without is a failure, listed, left out of the
medians), exited 0, and the strap's log has one ECG start and one stop by the client per run.
Targets (issue 26): rawble's first sample within 1 s of its connection; rawble's CPU per sample
(its own + the daemons' during its run) <= 1/10 of bleakheart's (bleakheart + bluetoothd + D-Bus).
The floor is not judged: it shows what the kernel path costs at the least (its CPU per sample,
with the idle daemons', beside rawble's and bleakheart's: the ratios rawble / floor and floor /
bleakheart), and where it stands against the 1/10 target in µs per sample. CPU time is each
process's CPU-time clock (clock_getcpuclockid: the scheduler's sum_exec_runtime, in ns), not
/proc/PID/stat's utime + stime: those round down to 10 ms ticks, and the floor's CPU in a window
is a few ticks at most.
--kernel K: the guest's kernel (vm-test --kernel; default 6.12). Takes ~13 min on a 2-core machine
(--quick ~4 min). BENCH_RAWBLE=PATH: time that rawble binary instead of building one.
"""

import json
import os
import subprocess
import sys
import time

import benchlib
from benchlib import load

BLEAK, BLEAKHEART = "3.1.0", "0.2.0"  # pinned: PyPI's newest on 2026-11-28
BLEAK_VENV = ".build/venv-bleak"

parser = benchlib.begin("benchmark-ecg-vm", __doc__)
parser.set_defaults(runs=benchlib.env_int("BENCH_RUNS", 3), seconds=benchlib.env_float("BENCH_SECONDS", 60))
parser.add_argument("--quick", action="store_true", help="2 rounds of 20 s")
parser.add_argument("--rounds", dest="runs", type=int, metavar="N", help="N rounds (BENCH_RUNS, default 3)")
parser.add_argument("--seconds", type=float, metavar="S", help="S s of streaming per run (BENCH_SECONDS, default 60)")
parser.add_argument("--kernel", metavar="K", default=os.environ.get("RAWBLE_VM_KERNEL") or "6.12",
                    help="the guest's kernel (vm-test --kernel; default 6.12)")
options = benchlib.parse(parser)
if options.quick:
    options.runs, options.seconds = 2, 20
RUNS, SECONDS = options.runs, options.seconds
PROGRAMS = ["rawble", "bleakheart", "floor"]
benchlib.settings(runs=RUNS, seconds=SECONDS, kernel=options.kernel, bleak=BLEAK, bleakheart=BLEAKHEART)
os.environ["RAWBLE_VM_KERNEL"] = options.kernel
VENV = os.path.abspath(os.environ.get("RAWBLE_VENV") or ".build/venv")
os.environ["RAWBLE_VENV"] = VENV
H10_NAME = "Polar H10 0A3B5C7D"
CONTROLLER = "00:1B:DC:0F:00:01"
LOGS = benchlib.LOGS

RAWBLE_BINARY = os.environ.get("BENCH_RAWBLE")
if not RAWBLE_BINARY:
    benchlib.build(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "rawble"])
    RAWBLE_BINARY = ".build/release/rawble"
RAWBLE_BINARY = os.path.abspath(RAWBLE_BINARY)
os.makedirs(".build/bench", exist_ok=True)
benchlib.step([benchlib.cc(), "-O2", "-Wall", "-o", ".build/bench/ecg_floor", "Benchmarks/Reference/ecg_floor.c"])
FLOOR_BINARY = os.path.abspath(".build/bench/ecg_floor")
if subprocess.run(["Scripts/vm-test", "--prepare"], stdout=subprocess.DEVNULL).returncode != 0:
    sys.stderr.write("benchmark-ecg-vm: the VM cannot run here (Scripts/vm-test --prepare)\n")
    sys.exit(77)


def bleak_venv():
    """.build/venv-bleak with bleak and bleakheart at the pinned versions: the guest runs its
    python (/usr/bin/python3's venv, the host's files seen through 9p). Made or fixed here."""
    python = os.path.join(BLEAK_VENV, "bin", "python")
    probe = "import importlib.metadata as m; print(m.version('bleak'), m.version('bleakheart'))"
    have = subprocess.run([python, "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True).stdout.split() if os.path.exists(python) else []
    if have != [BLEAK, BLEAKHEART]:
        print(f"== making {BLEAK_VENV}: bleak {BLEAK}, bleakheart {BLEAKHEART} (pip, from PyPI)", flush=True)
        if not os.path.exists(python):
            benchlib.step(["/usr/bin/python3", "-m", "venv", BLEAK_VENV])
        benchlib.build([python, "-m", "pip", "install", "--quiet", f"bleak=={BLEAK}", f"bleakheart=={BLEAKHEART}"])
        have = subprocess.run([python, "-c", probe], stdout=subprocess.PIPE, text=True).stdout.split()
        if have != [BLEAK, BLEAKHEART]:
            benchlib.fail(f"{BLEAK_VENV} has bleak, bleakheart {have}, not {BLEAK}, {BLEAKHEART}")
    return os.path.abspath(python)


BLEAK_PYTHON = bleak_venv()
benchlib.guest_tsc_clock()
benchlib.header(bumble=False, swift_suffix=f"; rawble: {RAWBLE_BINARY}")
print(f"== guest kernel parameters added: {os.environ.get('RAWBLE_VM_CMDLINE') or 'none'}")
print(f"== bleak {BLEAK}, bleakheart {BLEAKHEART} ({BLEAK_PYTHON}); bluez "
      f"{benchlib.first_line(['/usr/libexec/bluetooth/bluetoothd', '--version'])}, "
      f"{benchlib.first_line(['dbus-daemon', '--version'])}; bumble {benchlib.bumble_version()}", flush=True)
LABELS = {"rawble": "rawble ecg (hci0)", "bleakheart": "bleakheart (bleak, bluetoothd)",
          "floor": "C floor (epoll, L2CAP socket)"}

peer_log = os.path.join(LOGS, "h10.jsonl")
peer = benchlib.Peer("--controller-address", CONTROLLER, "--h10", "--strap-only", "--h10-log", peer_log,
                     lifetime=3600, keep_stdin=False)
ADDRESS = peer.address_of(H10_NAME)
print(f"== peer {peer.transport} (pid {peer.pid}), {H10_NAME} at {ADDRESS}; guest timer: {RUNS} rounds of "
      f"{', '.join(PROGRAMS)}, {SECONDS:g} s of ECG each; load {load()}", flush=True)
stamps = os.path.join(LOGS, "stamps")
os.mkdir(stamps)
budget = int(120 + RUNS * len(PROGRAMS) * (SECONDS + 120))
command = ["Scripts/vm-test", "--timeout", str(budget), "--controller", peer.transport, "--writable", stamps,
           "--bluetoothd", "idle", "--",
           "/usr/bin/python3", "Benchmarks/Reference/ecg_bench_guest.py", "--rawble", RAWBLE_BINARY,
           "--bleak-python", BLEAK_PYTHON, "--floor", FLOOR_BINARY, "--address", ADDRESS, "--rounds", str(RUNS),
           "--seconds", str(SECONDS),
           "--programs", ",".join(PROGRAMS), "--stamp", stamps]
began = time.monotonic()
try:
    vm = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=budget + 60)
finally:
    peer.stop()
wall = time.monotonic() - began
open(os.path.join(LOGS, "guest.out"), "wb").write(vm.stdout)
open(os.path.join(LOGS, "guest.err"), "wb").write(vm.stderr)
if vm.returncode != 0:
    sys.stderr.write(vm.stderr.decode(errors="replace")[-3000:])
    benchlib.fail(f"vm-test exited {vm.returncode} (logs: {LOGS})")

runs, guest, clock_check = benchlib.record("runs", []), {}, None
for entry in benchlib.json_lines(vm.stdout.decode(errors="replace")):
    if "guest" in entry:
        guest = entry["guest"]
    elif "clock_check" in entry:
        clock_check = entry["clock_check"]
    elif "program" in entry:
        runs.append(entry)
kernel_line = next((l for l in vm.stderr.decode(errors="replace").splitlines() if l.startswith("vm-test: kernel")), "")
print(f"== guest: kernel {guest.get('kernel')} ({kernel_line.removeprefix('vm-test: kernel ').strip()}), "
      f"python {guest.get('python')}, {guest.get('cpus')} vCPU, clocksource {guest.get('clocksource')}, "
      f"CPU ticks {guest.get('tick')}/s; VM wall time {wall:.0f} s; load after {load()}")
try:
    host_elapsed = os.stat(os.path.join(stamps, "end")).st_mtime - os.stat(os.path.join(stamps, "start")).st_mtime
except OSError:
    host_elapsed = None
if clock_check and host_elapsed:
    drift = clock_check / host_elapsed - 1
    print(f"== guest clock check: {clock_check:.2f} s in the guest for {host_elapsed:.2f} s on the host "
          f"(stamp files' mtimes): {drift:+.1%}" + ("" if abs(drift) < 0.02 else "  **the guest's clock is off: "
          "its times are not real milliseconds**"))

# The strap's own account: ECG starts, and stops by the client (before the link went) or by the
# disconnection (the program left without stopping).
h10 = benchlib.json_lines(open(peer_log).read()) if os.path.exists(peer_log) else []
starts = sum(1 for e in h10 if e.get("kind") == "h10-start" and e.get("measurement") in ("ecg", "ECG", 0))
stops = {}
for e in h10:
    if e.get("kind") == "h10-stop":
        stops[e.get("by")] = stops.get(e.get("by"), 0) + 1
frames = [e for e in h10 if e.get("kind") == "h10-frame" and e.get("measurement") in ("ecg", "ECG", 0)]


def check(run):
    """Why this run does not count, or None."""
    window = run.get("window")
    if "ecg" not in run["marks"]:
        return f"no ECG sample (status {run['status']}): {run['lines'][:3]} {run['stderr'].strip()[-300:]}"
    if "connected" not in run["marks"]:
        return f"no connected line: {run['lines'][:3]}"
    if not window or window["samples"] < 0.9 * 130 * window["seconds"]:
        return f"too few ECG samples: {window}"
    if run["status"] != 0:
        return f"exit status {run['status']}: {run['stderr'].strip()[-300:]}"
    return None


failed = 0
for run in runs:
    run["why"] = check(run)
    marks = ", ".join(f"{k} {v:.0f} ms" for k, v in run["marks"].items() if k in ("found", "connected", "started", "ecg"))
    state = "ok" if run["why"] is None else f"FAILED: {run['why']}"
    window = run.get("window") or {}
    cpu = window.get("cpu") or {}
    print(f"   r{run['round']} {LABELS[run['program']]:31} {run['samples']:6} samples; {marks}; window "
          f"{window.get('seconds', 0):.1f} s, {window.get('samples', 0)} samples, CPU program "
          f"{cpu.get('program')} s, bluetoothd {cpu.get('bluetoothd')} s, dbus {cpu.get('dbus')} s; "
          f"whole run {run['cpuTotal']:.2f} s; {state}")
    failed += run["why"] is not None
print(f"   the strap: {starts} ECG starts, stops {stops or 'none'} ({len(runs)} runs; {len(frames)} ECG frames sent)")


def ok_runs(program):
    return [r for r in runs if r["program"] == program and r["why"] is None]


def median(values):
    return benchlib.median(values, default=None)


def span(values, scale=1.0, digits=0):
    values = [v * scale for v in values if v is not None]
    return f"{min(values):,.{digits}f}–{max(values):,.{digits}f}" if values else "-"


def ms(v):
    return f"{v:,.0f} ms" if v is not None else "-"


def per_sample(run, *who):
    """CPU µs per ECG sample in the run's window, of the processes `who` together."""
    cpu = run["window"]["cpu"]
    if any(cpu.get(w) is None for w in who):
        return None
    return 1e6 * sum(cpu[w] for w in who) / run["window"]["samples"]


def us(v):
    return f"{v:,.1f} µs" if v is not None else "-"


print(f"\n== start-up: median (range) of the checked runs; ms after exec, as the guest's timer read the lines")
rows, figures = [], {}
for program in PROGRAMS:
    ok = ok_runs(program)
    c = [r["marks"]["connected"] for r in ok]
    f = [r["marks"]["ecg"] for r in ok]
    d = [r["marks"]["ecg"] - r["marks"]["connected"] for r in ok]
    s = [r["marks"]["ecg"] - r["marks"]["started"] for r in ok if "started" in r["marks"]]
    figures[program] = {"connected": median(c), "firstSample": median(f), "connectedToFirst": median(d),
                        "startedToFirst": median(s)}
    rows.append((LABELS[program], f"{ms(median(c))} ({span(c)})", f"{ms(median(f))} ({span(f)})",
                 f"{ms(median(d))} ({span(d)})", f"{ms(median(s))} ({span(s)})", f"{len(ok)}/{RUNS}"))
benchlib.table(("program", "start → connected", "start → first ECG sample", "connected → first sample",
                "ECG started → first sample", "runs ok"), rows, left={0}, title="start-up")

print(f"\n== CPU per ECG sample over {SECONDS:g} s of streaming from the first frame (median (range) of the checked runs; "
      f"each process's CPU-time clock (ns), of the guest's one vCPU)")
rows = []
for program in PROGRAMS:
    ok = ok_runs(program)
    own = [per_sample(r, "program") for r in ok]
    bd = [per_sample(r, "bluetoothd") for r in ok]
    db = [per_sample(r, "dbus") for r in ok]
    total = [per_sample(r, "program", "bluetoothd", "dbus") for r in ok]
    load_pct = [100 * sum(v for v in r["window"]["cpu"].values() if v is not None) / r["window"]["seconds"] for r in ok]
    samples = [r["window"]["samples"] for r in ok]
    whole = [r["cpuTotal"] for r in ok]
    figures[program].update({"cpuPerSampleProgram": median(own), "cpuPerSampleBluetoothd": median(bd),
                             "cpuPerSampleDbus": median(db), "cpuPerSampleTotal": median(total),
                             "percentOfVCPU": median(load_pct), "wholeRunCPU": median(whole)})
    rows.append((LABELS[program], f"{us(median(own))} ({span(own, digits=1)})", f"{us(median(bd))} ({span(bd, digits=1)})",
                 f"{us(median(db))} ({span(db, digits=1)})", f"{us(median(total))} ({span(total, digits=1)})",
                 f"{median(load_pct):.2f} %" if load_pct else "-", f"{median(samples):,.0f}" if samples else "-",
                 f"{median(whole):.2f} s" if whole else "-"))
benchlib.table(("program", "program", "bluetoothd", "dbus-daemon", "sum", "of the vCPU", "samples", "whole run CPU"),
               rows, left={0}, title="CPU per ECG sample")

r, b, f = figures["rawble"], figures["bleakheart"], figures["floor"]


def ratio(x, y):
    return f"{x / y:.3f}" if x is not None and y else "-"


first_met = r["connectedToFirst"] is not None and r["connectedToFirst"] <= 1000
cpu_met = r["cpuPerSampleTotal"] is not None and b["cpuPerSampleTotal"] and r["cpuPerSampleTotal"] <= b["cpuPerSampleTotal"] / 10
print(f"\n== side by side (medians; kernel {guest.get('kernel')})")


def row(metric, key, show, target=""):
    return (metric, show(r[key]), show(b[key]), show(f[key]), ratio(r[key], b[key]), ratio(r[key], f[key]),
            ratio(f[key], b[key]), target)


benchlib.table(("metric", "rawble", "bleakheart", "C floor", "rawble / bleakheart", "rawble / floor",
                "floor / bleakheart", "target"), [
    row("start → first ECG sample", "firstSample", ms),
    row("connected → first ECG sample", "connectedToFirst", ms, f"rawble ≤ 1 s: {'met' if first_met else '**MISSED**'}"),
    row("CPU per sample, the program alone", "cpuPerSampleProgram", us),
    row("CPU per sample, with bluetoothd + dbus-daemon", "cpuPerSampleTotal", us,
        f"rawble ≤ 1/10 of bleakheart: {'met' if cpu_met else '**MISSED**'}"),
], title="side by side")
# The 1/10 target in µs per sample, and where the floor (the least the kernel path costs) stands.
target = b["cpuPerSampleTotal"] / 10 if b["cpuPerSampleTotal"] else None
if target:
    def against(who, x):
        return (f"{who} {us(x)} = {x / target:.2f}× the target ({'within' if x <= target else 'above'} it)"
                if x is not None else f"{who} -")
    print(f"\n== the 1/10 target: bleakheart's {us(b['cpuPerSampleTotal'])} per sample (with bluetoothd + dbus-daemon) "
          f"/ 10 = {us(target)} per sample; {against('the floor', f['cpuPerSampleTotal'])}, "
          f"{against('rawble', r['cpuPerSampleTotal'])}; the floor alone (without the daemons) "
          f"{us(f['cpuPerSampleProgram'])}")
benchlib.record("target", {"cpuPerSampleTotal": target})
benchlib.record("medians", figures)
benchlib.record("strap", {"ecgStarts": starts, "stops": stops, "ecgFrames": len(frames)})
benchlib.record("guest", guest)
benchlib.record("clockCheck", clock_check)
benchlib.record("hostElapsed", host_elapsed)
print(f"\n(guest output, the H10's log and the peer's stderr: {LOGS})")
benchlib.finish()
if failed:
    benchlib.fail(f"{failed} run(s) failed (listed above; not in the medians)")
