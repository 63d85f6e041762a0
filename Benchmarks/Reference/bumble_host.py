"""bumble_host: Google Bumble's own host timed against a Bumble peer over TCP, the reference
for Benchmarks/Sources/HostTiming (rawble's host) in Scripts/benchmark-host (issue 3).

Same modes, same output: one JSON object per line on stdout, times as CLOCK_MONOTONIC
nanoseconds (time.monotonic_ns) so the script that started the process subtracts its own
exec-time reading.

  bumble_host.py first-report --transport tcp:127.0.0.1:PORT --name rawble-strap
  bumble_host.py connect      --transport tcp:127.0.0.1:PORT --address AA:BB:CC:DD:EE:FF
  bumble_host.py cpu          --transport tcp:127.0.0.1:PORT --seconds S
  bumble_host.py memory       --transport tcp:127.0.0.1:PORT --seconds S --every S

Imports are part of the measured start-up, as the Swift executable's loading is.
"""

import argparse
import asyncio
import json
import os
import sys
import time

from bumble import hci
from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.transport import open_transport

OWN_ADDRESS = "F0:F1:F2:F3:F4:F5"  # random static, as rawble's adapter uses one


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def resident_bytes():
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


async def open_device(args):
    host, port = args.transport.split(":", 2)[1:]
    transport = await open_transport(f"tcp-client:{host}:{port}")
    emit(phase="transport", t=time.monotonic_ns())
    device = Device.with_hci("bumble-host", hci.Address(OWN_ADDRESS), transport.source, transport.sink)
    await device.power_on()
    emit(phase="opened", t=time.monotonic_ns())
    return transport, device


async def first_report(args):
    transport, device = await open_device(args)
    found = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement):
        name = advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME)
        if isinstance(name, bytes):
            name = name.decode("utf-8", "replace")
        if name == args.name and not found.done():
            found.set_result(time.monotonic_ns())

    device.on("advertisement", on_advertisement)
    await device.start_scanning(active=True, filter_duplicates=False)
    emit(phase="scanning", t=time.monotonic_ns())
    t = await found
    emit(event="first-report", t=t)
    await device.stop_scanning()
    await transport.close()


async def connect(args):
    transport, device = await open_device(args)
    peer = hci.Address(args.address, hci.Address.RANDOM_DEVICE_ADDRESS)
    connection = await device.connect(peer, own_address_type=hci.OwnAddressType.RANDOM, timeout=10)
    emit(event="connected", t=time.monotonic_ns())
    try:
        await asyncio.wait_for(connection.disconnect(), 2)
    except Exception:  # the measurement is taken; a slow disconnect does not matter
        pass
    await transport.close()


async def cpu(args):
    """Reports delivered with duplicates on (passive scan: one HCI report per advertisement) for
    `seconds` of wall time after the first, and the process CPU time spent."""
    transport, device = await open_device(args)
    state = {"count": 0, "wall": 0, "cpu": 0}
    done = asyncio.get_running_loop().create_future()
    window = int(args.seconds * 1e9)

    def on_advertisement(_advertisement):
        if state["wall"] == 0:
            state["wall"] = time.monotonic_ns()
            state["cpu"] = time.process_time_ns()
            return
        state["count"] += 1
        if state["count"] & 63 == 0 and time.monotonic_ns() - state["wall"] >= window and not done.done():
            done.set_result((time.monotonic_ns() - state["wall"], time.process_time_ns() - state["cpu"], state["count"]))

    device.on("advertisement", on_advertisement)
    await device.start_scanning(active=False, filter_duplicates=False)
    wall, cpu_ns, count = await done
    emit(event="cpu", reports=count, wall_ns=wall, cpu_ns=cpu_ns)
    await device.stop_scanning()
    await transport.close()


async def memory(args):
    transport, device = await open_device(args)
    state = {"reports": 0, "seen": set()}

    def on_advertisement(advertisement):
        state["reports"] += 1
        state["seen"].add(str(advertisement.address))

    device.on("advertisement", on_advertisement)
    await device.start_scanning(active=True, filter_duplicates=False)
    start = time.monotonic_ns()
    emit(sample=0, rss=resident_bytes(), reports=0, devices=0)
    elapsed = 0.0
    while elapsed < args.seconds:
        await asyncio.sleep(args.every)
        elapsed = (time.monotonic_ns() - start) / 1e9
        emit(sample=elapsed, rss=resident_bytes(), reports=state["reports"], devices=len(state["seen"]))
    await device.stop_scanning()
    await transport.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["first-report", "connect", "cpu", "memory"])
    parser.add_argument("--transport", required=True, help="tcp:HOST:PORT")
    parser.add_argument("--name", default="rawble-strap")
    parser.add_argument("--address")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    body = {"first-report": first_report, "connect": connect, "cpu": cpu, "memory": memory}[args.mode]

    async def bounded():
        try:
            await asyncio.wait_for(body(args), args.timeout)
            return 0
        except asyncio.TimeoutError:
            emit(error=f"timed out after {args.timeout} s")
            return 1

    return asyncio.run(bounded())


if __name__ == "__main__":
    sys.exit(main())
