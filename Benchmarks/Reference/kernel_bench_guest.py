"""kernel_bench_guest: the timer of Scripts/benchmark-kernel, run INSIDE the VM (Scripts/vm-test)
by the guest's /usr/bin/python3 as root, with hci0 backed by one Bumble peer (the strap).

  python3 kernel_bench_guest.py --rawble PATH [--rounds N] [--flows scan,hr] [--programs LIST]
                                --venv DIR [--baselines N] [--address ADDR]

For each flow (scan: start -> first advertising report of the strap; hr: start -> first Heart
Rate notification) it runs N rounds of every program (before the first flow, one warm-up run of
each, not counted: the first start reads its files over 9p; reported as "cold"), the order
rotated each round.
A run's time is CLOCK_MONOTONIC from just before fork/exec to the moment this timer reads the
program's first stdout line (the program's own flush: every program here writes and flushes one
JSON line at the event); tear-down is not timed. Before each run the adapter is put in the state
that program needs, untimed: up (HCIDEVUP) for the raw-channel programs, down (HCIDEVDOWN) for
the user-channel ones; then the timer waits until hci0 has no connection left (HCIGETCONNLIST,
up to 5 s) and SETTLE s more, so the strap is advertising again after the previous run's link.

Programs: rawble (`rawble scan --passive --address ADDR --json` / `rawble hr --count 1 --json`
on the default transport, hci0), socket (kernel_socket_hr.py, the standard-library script),
bumble (bumble_user_channel_hr.py, Bumble's host on hci-socket:0), rawble-user (rawble with
--transport user:hci0), rawble-down and socket-down (the raw-channel programs started with the
adapter down: raising it is then timed). --baselines N also times, in the first N rounds, the
bare process starts (exec -> exit):
`rawble --version`, `rawble adapters --json` (also opens an HCI socket and asks the kernel for
its adapters), `python3 -c pass` and `python3 -c 'import bumble.device, bumble.transport'`.

Output, one JSON line per run on stdout (the host checks and summarizes them):
  {"flow", "program", "round" (-1: warm-up), "ms" (start -> the first line for scan, the
   measurement line for hr), "status", "line", "lines", "marks": {event: ms}, "stderr": tail
   when it failed, "clock": s since the first run}
and {"guest": kernel, clocksource, ...} first, {"baseline": {...}} per timed round, and with
--stamp {"clock_check": guest s between the two stamp files}. The guest's clock must be a real
one: under TCG the kernel cannot calibrate the TSC without ACPI (vm-test boots acpi=off) and
falls back to refined-jiffies, 4 ms steps that lose ticks when the host is loaded (seen: 7.4 s
measured for 9.5 s); Scripts/benchmark-kernel boots with tsc_early_khz= the host's TSC rate.
"""

import argparse
import errno
import fcntl
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AF_BLUETOOTH, BTPROTO_HCI = 31, 1
HCIDEVUP, HCIDEVDOWN, HCIGETCONNLIST = 0x400448C9, 0x400448CA, 0x800448D4
SETTLE = 0.5


def control(request, index=0):
    sock = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
    try:
        fcntl.ioctl(sock.fileno(), request, index)
    except OSError as e:
        if e.errno != errno.EALREADY:
            raise
    finally:
        sock.close()


def connections(index=0):
    """Number of connections on hciN (HCIGETCONNLIST: dev_id u16, conn_num u16, 16-byte entries)."""
    sock = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
    try:
        buffer = bytearray(struct.pack("<HH", index, 8) + bytes(16 * 8))
        fcntl.ioctl(sock.fileno(), HCIGETCONNLIST, buffer)
        return struct.unpack_from("<H", buffer, 2)[0]
    except OSError:
        return 0  # down: the kernel holds none
    finally:
        sock.close()


def prepare(up):
    """The adapter's state for the next program, then no connection left and SETTLE s."""
    control(HCIDEVUP if up else HCIDEVDOWN)
    deadline = time.monotonic() + 5
    if up:
        while connections() and time.monotonic() < deadline:
            time.sleep(0.05)
    time.sleep(SETTLE)


def programs(args):
    r, address = args.rawble, args.address
    py, venv = sys.executable, os.path.join(args.venv, "bin", "python")
    table = {
        "rawble": (True, {
            "scan": [r, "scan", "--passive", "--address", address, "--json", "--quiet"],
            "hr": [r, "hr", "--count", "1", "--json", "--quiet", "--timeout", "15", "--no-reconnect"]}),
        "socket": (True, {
            "scan": [py, os.path.join(HERE, "kernel_socket_hr.py"), "scan", "--address", address],
            "hr": [py, os.path.join(HERE, "kernel_socket_hr.py"), "hr", "--address", address]}),
        "bumble": (False, {
            "scan": [venv, os.path.join(HERE, "bumble_user_channel_hr.py"), "scan", "--address", address],
            "hr": [venv, os.path.join(HERE, "bumble_user_channel_hr.py"), "hr", "--address", address]}),
        # The default scan, active: on hciN the kernel's discovery (Start Discovery through the
        # management interface), not rawble's own scan commands as with --passive.
        "rawble-active": (True, {
            "scan": [r, "scan", "--address", address, "--json", "--quiet"],
            "hr": [r, "hr", "--count", "1", "--json", "--quiet", "--timeout", "15", "--no-reconnect"]}),
        "rawble-user": (False, {
            "scan": [r, "scan", "--passive", "--address", address, "--json", "--quiet", "--transport", "user:hci0"],
            "hr": [r, "hr", "--count", "1", "--json", "--quiet", "--timeout", "15", "--no-reconnect",
                   "--transport", "user:hci0"]}),
    }
    # The raw-channel programs again, started with the adapter down: raising it (HCIDEVUP, the
    # kernel's own initialization of the controller) is then part of the measured time.
    table["rawble-down"] = (False, table["rawble"][1])
    table["socket-down"] = (False, table["socket"][1])
    return {name: table[name] for name in args.programs.split(",")}


def run(command, first_event, exits, timeout=40.0, phases=None):
    """(ms to the `first_event` line, or to the first line when None; lines, marks, status,
    stderr tail). A program that does not exit by itself (`exits` False: rawble scan) gets
    SIGINT right after that line (rawble disables the scan and exits); the others 10 s.
    `phases`, a list: stderr is read live instead, each line appended as (ms of arrival, text)."""
    errors = open("/tmp/bench.err", "w+b")
    start = time.monotonic_ns()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               stderr=errors if phases is None else subprocess.PIPE)
    if phases is not None:
        def read_stderr():
            for text in process.stderr:
                phases.append(((time.monotonic_ns() - start) / 1e6, text.decode(errors="replace").rstrip()[:160]))
        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
    buffer, lines, marks, first = b"", [], {}, None
    deadline = time.monotonic() + timeout
    done = False
    while not done and time.monotonic() < deadline:
        if not select.select([process.stdout], [], [], max(0, deadline - time.monotonic()))[0]:
            break
        chunk = os.read(process.stdout.fileno(), 1 << 16)
        now = (time.monotonic_ns() - start) / 1e6
        if not chunk:
            break
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for text in complete:
            if first is None:
                first = now
            lines.append(text.decode(errors="replace"))
            try:
                event = json.loads(text).get("event", "device")
            except (ValueError, AttributeError):
                event = "unparsed"
            marks.setdefault(event, now)
            if first_event in (None, event) or event == "error" or "error" in lines[-1]:
                done = True
    if process.poll() is None:
        try:
            process.wait(10 if done and exits else 0)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)
    try:
        status = process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        status = process.wait()
    if phases is not None:
        reader.join(5)
    errors.seek(0)
    tail = errors.read()[-600:].decode(errors="replace")
    errors.close()
    return (first if first_event is None else marks.get(first_event)), lines, marks, status, tail


def baseline(args):
    """Bare process starts, ms: exec -> exit."""
    out = {}
    for name, command in [("rawble --version", [args.rawble, "--version"]),
                          ("rawble adapters --json", [args.rawble, "adapters", "--json"]),
                          ("python3 -c pass", [sys.executable, "-c", "pass"]),
                          ("python3 import bumble", [os.path.join(args.venv, "bin", "python"), "-c",
                                                     "import bumble.device, bumble.transport"])]:
        start = time.monotonic_ns()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        out[name] = (time.monotonic_ns() - start) / 1e6
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rawble", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--flows", default="scan,hr")
    parser.add_argument("--programs", default="rawble,socket,bumble")
    parser.add_argument("--address", default="C0:B1:E0:00:00:01")
    parser.add_argument("--venv", required=True, help="Bumble's venv (its python needs AF_BLUETOOTH)")
    parser.add_argument("--phases", action="store_true",
                        help="after the rounds, one more run of each program with its log on stderr read live: "
                             "rawble -vv, the Python scripts with KERNEL_BENCH_PHASES=1")
    parser.add_argument("--stamp", help="a directory shared read-write with the host: files written at the "
                        "start and the end, whose host mtimes check this guest's clock")
    parser.add_argument("--baselines", type=int, default=0, help="time the bare process starts in this many rounds")
    args = parser.parse_args()
    table = programs(args)
    names = list(table)

    def emit(fields):
        sys.stdout.write(json.dumps(fields) + "\n")
        sys.stdout.flush()

    clocksource = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
    emit({"guest": {"kernel": os.uname().release, "python": sys.version.split()[0],
                    "clocksource": open(clocksource).read().strip() if os.path.exists(clocksource) else None,
                    "resolution_ns": time.clock_getres(time.CLOCK_MONOTONIC) * 1e9,
                    "cpus": os.cpu_count(), "programs": names}})
    if args.stamp:
        with open(os.path.join(args.stamp, "start"), "w") as f:
            f.write("start\n")
    began = time.monotonic()
    for flow in args.flows.split(","):
        first_event = "measurement" if flow == "hr" else None
        # The warm-up only before the first flow: the files are in the guest's page cache after it.
        for n in range(-1 if flow == args.flows.split(",")[0] else 0, args.rounds):
            order = names if n < 0 else names[n % len(names):] + names[:n % len(names)]
            for name in order:
                up, commands = table[name]
                prepare(up)
                exits = flow == "hr" or not name.startswith("rawble")
                ms, lines, marks, status, tail = run(commands[flow], first_event, exits)
                emit({"flow": flow, "program": name, "round": n, "ms": ms, "status": status,
                      "line": lines[0] if lines else None, "lines": lines[:4], "marks": marks,
                      "stderr": tail if (ms is None or status not in (0, -2, 130)) else "",
                      "clock": round(time.monotonic() - began, 1)})
            if 0 <= n < args.baselines and flow == args.flows.split(",")[0]:
                emit({"baseline": baseline(args), "round": n})
    if args.phases:
        os.environ["KERNEL_BENCH_PHASES"] = "1"
        for flow in args.flows.split(","):
            for name in names:
                up, commands = table[name]
                command = commands[flow] + (["-vv"] if name.startswith("rawble") else [])
                prepare(up)
                log = []
                ms, lines, marks, status, tail = run(command, "measurement" if flow == "hr" else None,
                                                     flow == "hr" or not name.startswith("rawble"), phases=log)
                emit({"phases": log, "flow": flow, "program": name, "ms": ms, "marks": marks, "status": status})
    control(HCIDEVDOWN)
    if args.stamp:
        elapsed = time.monotonic() - began
        with open(os.path.join(args.stamp, "end"), "w") as f:
            f.write("end\n")
        emit({"clock_check": elapsed})
    return 0


if __name__ == "__main__":
    sys.exit(main())
