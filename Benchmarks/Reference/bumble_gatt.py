"""bumble_gatt: Google Bumble's own GATT client timed against the rawble-lab device of a Bumble
peer over TCP, the reference for Benchmarks/Sources/GATTTiming (rawble's GATT client) in
Scripts/benchmark-gatt (issue 4).

Same modes, same output: one JSON object per line on stdout, times as CLOCK_MONOTONIC
nanoseconds (time.monotonic_ns) so the script that started the process subtracts its own
exec-time reading.

  bumble_gatt.py discover           --transport tcp:127.0.0.1:PORT --address ADDR
  bumble_gatt.py first-notification --transport tcp:127.0.0.1:PORT --address ADDR
  bumble_gatt.py stream             --transport tcp:127.0.0.1:PORT --address ADDR --count N

discover: request_mtu, discover_services, per service discover_included_services and
discover_characteristics, per characteristic discover_descriptors, then read_value (long
reads included) of every readable characteristic.
first-notification: request_mtu, discover_service(0x180D) (Find By Type Value),
discover_characteristics(uuids=[0x2A37]), subscribe (which discovers the descriptors, then
writes the CCCD); until the first notification.
stream: subscribes to the lab's stream and receives N notifications, counters checked in order;
CPU clock (time.process_time_ns) from the first to the last.
ATT requests are counted from the btsnoop file Bumble writes when BUMBLE_SNOOPER is set
(btsnoop:file:PATH), as rawble's from its CapturingTransport's file.

Imports are part of the measured start-up, as the Swift executable's loading is.
"""

import argparse
import asyncio
import json
import sys
import time

from bumble import hci
from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.gatt import Characteristic
from bumble.transport import open_transport

OWN_ADDRESS = "F0:F1:F2:F3:F4:F5"  # random static, as rawble's adapter uses one
LAB_SERVICE = UUID("72617762-6c65-4c61-6200-000000000001")
LAB_STREAM = UUID("72617762-6c65-4c61-6200-000000000004")


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def mark(phase):
    emit(phase=phase, t=time.monotonic_ns())


async def open_peer(args):
    host, port = args.transport.split(":", 2)[1:]
    transport = await open_transport(f"tcp-client:{host}:{port}")
    mark("transport")
    device = Device.with_hci("bumble-gatt", hci.Address(OWN_ADDRESS), transport.source, transport.sink)
    await device.power_on()
    mark("opened")
    address = hci.Address(args.address, hci.Address.RANDOM_DEVICE_ADDRESS)
    connection = await device.connect(address, own_address_type=hci.OwnAddressType.RANDOM, timeout=10)
    mark("connected")
    return transport, connection, Peer(connection)


async def close(transport, connection):
    try:
        await asyncio.wait_for(connection.disconnect(), 2)
    except Exception:  # the measurement is taken; a slow disconnect does not matter
        pass
    await transport.close()


async def discover(args):
    transport, connection, peer = await open_peer(args)
    mtu = await peer.request_mtu(517)
    mark("mtu")
    services = await peer.discover_services()
    includes = characteristics = descriptors = 0
    readable = []
    for service in services:
        includes += len(await peer.discover_included_services(service))
        for characteristic in await peer.discover_characteristics(service=service):
            characteristics += 1
            descriptors += len(await peer.discover_descriptors(characteristic))
            if characteristic.properties & Characteristic.Properties.READ:
                readable.append(characteristic)
    mark("discovered")
    reads = failures = size = 0
    for characteristic in readable:
        try:
            size += len(await peer.read_value(characteristic))
            reads += 1
        except Exception:
            failures += 1
    emit(event="done", t=time.monotonic_ns(), mtu=mtu, services=len(services), includes=includes,
         characteristics=characteristics, descriptors=descriptors, reads=reads, read_failures=failures, bytes=size)
    await close(transport, connection)


async def first_notification(args):
    transport, connection, peer = await open_peer(args)
    await peer.request_mtu(517)
    services = await peer.discover_service(UUID.from_16_bits(0x180D))
    if not services:
        raise SystemExit(emit(error="no Heart Rate service"))
    found = await peer.discover_characteristics(uuids=[UUID.from_16_bits(0x2A37)], service=services[0])
    if not found:
        raise SystemExit(emit(error="no Heart Rate Measurement"))
    first = asyncio.get_running_loop().create_future()

    def on_value(value):
        if not first.done():
            first.set_result((time.monotonic_ns(), len(value)))

    await peer.subscribe(found[0], on_value)
    mark("subscribed")
    t, size = await first
    emit(event="done", t=t, bytes=size)
    await close(transport, connection)


async def stream(args):
    transport, connection, peer = await open_peer(args)
    await peer.request_mtu(517)
    services = await peer.discover_service(LAB_SERVICE)
    found = await peer.discover_characteristics(uuids=[LAB_STREAM], service=services[0]) if services else []
    if not found:
        raise SystemExit(emit(error="no lab stream"))
    state = {"received": 0, "out_of_order": 0, "wall": 0, "cpu": 0}
    done = asyncio.get_running_loop().create_future()

    def on_value(value):
        counter = int.from_bytes(value[:4], "little")
        if counter != state["received"]:
            state["out_of_order"] += 1
        if state["received"] == 0:
            state["wall"] = time.monotonic_ns()
            state["cpu"] = time.process_time_ns()
        state["received"] += 1
        if state["received"] == args.count and not done.done():
            done.set_result((time.monotonic_ns() - state["wall"], time.process_time_ns() - state["cpu"]))

    await peer.subscribe(found[0], on_value)
    wall, cpu_ns = await done
    emit(event="stream", received=state["received"], out_of_order=state["out_of_order"], dropped=0,
         wall_ns=wall, cpu_ns=cpu_ns)
    await close(transport, connection)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["discover", "first-notification", "stream"])
    parser.add_argument("--transport", required=True, help="tcp:HOST:PORT")
    parser.add_argument("--address", required=True)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    body = {"discover": discover, "first-notification": first_notification, "stream": stream}[args.mode]

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
