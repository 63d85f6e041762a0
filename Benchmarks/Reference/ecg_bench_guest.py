"""ecg_bench_guest: the timer of Scripts/benchmark-ecg-vm, run INSIDE the VM (Scripts/vm-test
--bluetoothd idle) by the guest's /usr/bin/python3 as root, with hci0 backed by one Bumble peer
(the simulated Polar H10) and BlueZ's bluetoothd holding hci0 (powered) on the system D-Bus.

  python3 ecg_bench_guest.py --rawble PATH --bleak-python PATH [--floor PATH] --address ADDR
                             [--rounds N] [--seconds S] [--programs rawble,bleakheart[,floor]]
                             [--stamp DIR]

Programs (each told the H10's address, each stopping its stream on the strap before it leaves):
  rawble      `rawble ecg ADDR --json --quiet --transport hci0 --no-reconnect` (the kernel's raw
              HCI socket and L2CAP ATT socket, beside the daemon)
  bleakheart  Benchmarks/Reference/bleakheart_ecg.py ADDR with the bleak venv's python (bleak over
              bluetoothd's D-Bus API; bleakheart's PolarMeasurementData as its example uses it)
  floor       the --floor binary (Benchmarks/Reference/ecg_floor.c) ADDR: the native floor, the
              kernel's L2CAP ATT socket, one epoll_wait + read + write per ECG frame
N rounds, the order rotated each round; before each run, untimed: hci0 up, no connection left on
it (HCIGETCONNLIST, up to 5 s), 0.5 s settle (kernel_bench_guest.prepare).

A run: CLOCK_MONOTONIC just before fork/exec = 0; the timer reads the program's stdout lines as
they come and keeps the arrival of each event's first line: `connected` (rawble and the floor:
after the MTU exchange and discovery; bleak: BleakClient's connect, which returns once bluetoothd
has resolved the services), `started`, and the first `ecg` line (the first frame of samples).
From the first ECG frame on it streams S seconds; at the first frame and S s later it reads
the CPU time (cpu_seconds: the process CPU-time clock, ns) of the program, of bluetoothd (/run/rawble-vm/bluetoothd.pid) and of
dbus-daemon (found by name in /proc): CPU in that window / ECG samples that arrived in it = CPU
per sample, steady state. Then SIGINT (each program stops ECG on the strap and disconnects), up
to 20 s for the exit (then SIGKILL); the program's whole CPU (start to exit, os.wait4's rusage) is
reported too. No ECG frame within --first-timeout s (default 90: bleakheart's start is known to
take ~30 s on some setups) fails the run.

Output, one JSON line per run on stdout:
  {"program", "round", "marks": {event: ms after exec}, "samples" (all ECG samples received),
   "window": {"seconds", "samples", "cpu": {"program", "bluetoothd", "dbus"}} or null,
   "cpuTotal" (the program, exec -> exit), "status", "lines": the first 3 non-ecg lines,
   "stderr": tail, "clock": s since the first run}
and {"guest": {...}} first; with --stamp {"clock_check": guest s between the stamp files}.
"""

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from kernel_bench_guest import control, HCIDEVUP, prepare  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """The CPU time of a whole process so far (all its threads, exited ones included), in
    seconds to the nanosecond: its process CPU-time clock (clock_getcpuclockid(3): the
    scheduler's sum_exec_runtime, what utime + stime in /proc/PID/stat round down to 10 ms
    ticks); /proc/PID/stat's ticks where that clock cannot be read. None once it is gone."""
    if pid is None:
        return None
    try:
        # The kernel's clock id for a process's CPU time: ~pid << 3 | CPUCLOCK_SCHED (2),
        # what glibc's clock_getcpuclockid returns (Python has no binding for it).
        return time.clock_gettime((~pid << 3) | 2)
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def pid_named(name):
    """The PID of the first process whose comm is `name`, or None."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() == name:
                        return int(entry)
            except OSError:
                continue
    return None


def daemons():
    try:
        bluetoothd = int(open("/run/rawble-vm/bluetoothd.pid").read().strip())
    except (OSError, ValueError):
        bluetoothd = pid_named("bluetoothd")
    return {"bluetoothd": bluetoothd, "dbus": pid_named("dbus-daemon")}


def commands(args):
    a = args.address
    return {
        "rawble": [args.rawble, "ecg", a, "--json", "--quiet", "--transport", "hci0", "--no-reconnect",
                   "--timeout", "60"],
        "bleakheart": [args.bleak_python, os.path.join(HERE, "bleakheart_ecg.py"), a, "--scan-timeout", "60"],
        "floor": [args.floor, a, "--timeout", "60"],
    }


def run(command, seconds, first_timeout, pids):
    errors = open("/tmp/ecg-bench.err", "w+b")
    start = time.monotonic_ns()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=errors)
    pids = dict(pids, program=process.pid)
    buffer, marks, others, samples = b"", {}, [], 0
    window, at_first, first_time, samples_at_first = None, None, None, 0
    deadline = time.monotonic() + first_timeout
    stopping = False
    while True:
        timeout = max(0.0, deadline - time.monotonic())
        if not select.select([process.stdout], [], [], timeout)[0]:
            if not stopping:  # no first frame in time, or the window is over (a silent stream)
                if first_time is not None and window is None:
                    window = close_window(pids, at_first, first_time, samples - samples_at_first)
                process.send_signal(signal.SIGINT)
                stopping, deadline = True, time.monotonic() + 20
                continue
            break
        chunk = os.read(process.stdout.fileno(), 1 << 16)
        now = (time.monotonic_ns() - start) / 1e6
        if not chunk:
            break
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for text in complete:
            try:
                line = json.loads(text)
                event = line.get("event", "unparsed")
            except (ValueError, AttributeError):
                line, event = {}, "unparsed"
            marks.setdefault(event, now)
            if event == "ecg":
                samples += len(line.get("uV") or [])
                if first_time is None:
                    first_time = time.monotonic()
                    at_first = {k: cpu_seconds(p) for k, p in pids.items()}
                    samples_at_first = samples
                    deadline = first_time + seconds
            elif len(others) < 3:
                others.append(text.decode(errors="replace")[:300])
        if not stopping and first_time is not None and time.monotonic() >= first_time + seconds:
            window = close_window(pids, at_first, first_time, samples - samples_at_first)
            process.send_signal(signal.SIGINT)
            stopping, deadline = True, time.monotonic() + 20
    # Reaped here with os.wait4 (not Popen.wait, which would reap it first): its rusage is the
    # program's whole CPU, exec -> exit.
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() >= deadline:
            process.kill()
            pid, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)
    errors.seek(0)
    tail = errors.read()[-800:].decode(errors="replace")
    errors.close()
    return {"marks": marks, "samples": samples, "window": window, "status": process.returncode,
            "cpuTotal": usage.ru_utime + usage.ru_stime, "lines": others, "stderr": tail}


def close_window(pids, at_first, first_time, samples):
    now = {k: cpu_seconds(p) for k, p in pids.items()}
    cpu = {k: (now[k] - at_first[k]) if now[k] is not None and at_first[k] is not None else None for k in pids}
    return {"seconds": time.monotonic() - first_time, "samples": samples, "cpu": cpu}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rawble", required=True)
    parser.add_argument("--bleak-python", required=True)
    parser.add_argument("--floor", help="the ecg_floor binary (for the program `floor`)")
    parser.add_argument("--address", default="C0:B1:E0:00:00:06")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--first-timeout", type=float, default=90)
    parser.add_argument("--programs", default="rawble,bleakheart")
    parser.add_argument("--stamp")
    args = parser.parse_args()
    table = commands(args)
    names = args.programs.split(",")
    if "floor" in names and not args.floor:
        parser.error("the program floor needs --floor PATH")

    def emit(fields):
        sys.stdout.write(json.dumps(fields) + "\n")
        sys.stdout.flush()

    clocksource = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
    pids = daemons()
    emit({"guest": {"kernel": os.uname().release, "python": sys.version.split()[0],
                    "clocksource": open(clocksource).read().strip() if os.path.exists(clocksource) else None,
                    "cpus": os.cpu_count(), "programs": names, "daemons": pids, "tick": TICK}})
    if args.stamp:
        with open(os.path.join(args.stamp, "start"), "w") as f:
            f.write("start\n")
    began = time.monotonic()
    for n in range(args.rounds):
        for name in names[n % len(names):] + names[:n % len(names)]:
            prepare(True)
            result = run(table[name], args.seconds, args.first_timeout, daemons())
            emit(dict(program=name, round=n, clock=round(time.monotonic() - began, 1), **result))
    control(HCIDEVUP)
    if args.stamp:
        elapsed = time.monotonic() - began
        with open(os.path.join(args.stamp, "end"), "w") as f:
            f.write("end\n")
        emit({"clock_check": elapsed})
    return 0


if __name__ == "__main__":
    sys.exit(main())
