"""bumble_user_channel_hr: Google Bumble's own host over the Linux HCI user channel, the Bumble
reference of Scripts/benchmark-kernel (issue 11): the same two flows as kernel_socket_hr.py.

  python3 bumble_user_channel_hr.py scan [--transport hci-socket:0] [--address ADDR] [--timeout S]
  python3 bumble_user_channel_hr.py hr   [--transport hci-socket:0] [--address ADDR] [--timeout S]

Bumble's `hci-socket:N` transport binds the user channel of hciN (the adapter must be down and
the Python built with AF_BLUETOOTH: Debian's /usr/bin/python3 is); Bumble's `Device` then
starts the controller itself (HCI Reset and its whole initialization) with a random static own
address, as rawble's own host does.

scan: passive scan; at the first advertisement from ADDRESS (default the strap,
      C0:B1:E0:00:00:01) prints {"event": "report", "address", "rssi", "data"}, stops scanning
      and exits 0.
hr:   the same scan until ADDRESS, stop, connect (own address random), the Heart Rate service by
      UUID, its characteristics, subscribe to Heart Rate Measurement (Bumble discovers the
      descriptors and writes the CCCD); at the first notification prints {"event":
      "measurement", "address", "bpm", "raw"}, disconnects and exits 0.
Errors: {"error": why}, exit 1. Imports count in the measured time, as a Swift binary's loading.
"""

import argparse
import asyncio
import json
import os
import struct
import sys

from bumble import hci
from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.transport import open_transport

OWN_ADDRESS = "F0:F1:F2:F3:F4:F5"  # random static, as rawble's own host uses one
HEART_RATE = UUID.from_16_bits(0x180D)
MEASUREMENT = UUID.from_16_bits(0x2A37)


PHASES = os.environ.get("KERNEL_BENCH_PHASES") == "1"


def phase(name):
    """With KERNEL_BENCH_PHASES=1 (Scripts/benchmark-kernel's breakdown run): a line on stderr."""
    if PHASES:
        sys.stderr.write(f"phase {name}\n")
        sys.stderr.flush()


def emit(fields):
    sys.stdout.write(json.dumps(fields, separators=(",", ":")) + "\n")
    sys.stdout.flush()


async def run(args):
    wanted = args.address.upper()
    transport = await open_transport(args.transport)
    phase("transport open")
    try:
        device = Device.with_hci("bumble-uc", hci.Address(OWN_ADDRESS), transport.source, transport.sink)
        await device.power_on()
        phase("powered on (Reset and initialization)")
        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement):
            if not found.done() and str(advertisement.address).split("/")[0] == wanted:
                found.set_result(advertisement)

        device.on("advertisement", on_advertisement)
        await device.start_scanning(active=False)
        phase("scan enabled")
        advertisement = await found
        if args.mode == "scan":
            emit({"event": "report", "address": wanted, "rssi": advertisement.rssi,
                  "data": bytes(advertisement.data).hex()})
            await device.stop_scanning()
            return 0
        await device.stop_scanning()
        connection = await device.connect(advertisement.address, own_address_type=hci.OwnAddressType.RANDOM,
                                          timeout=10)
        phase("connected")
        peer = Peer(connection)
        services = await peer.discover_service(HEART_RATE)
        if not services:
            emit({"error": "no Heart Rate service"})
            return 1
        characteristics = await peer.discover_characteristics(uuids=[MEASUREMENT], service=services[0])
        if not characteristics:
            emit({"error": "no Heart Rate Measurement"})
            return 1
        phase("discovered")
        first = asyncio.get_running_loop().create_future()

        def on_value(value):
            if not first.done():
                first.set_result(bytes(value))

        await peer.subscribe(characteristics[0], on_value)
        phase("subscribed")
        raw = await first
        bpm = struct.unpack_from("<H", raw, 1)[0] if raw[0] & 1 and len(raw) >= 3 else raw[1]
        emit({"event": "measurement", "address": wanted, "bpm": bpm, "raw": raw.hex()})
        try:
            await asyncio.wait_for(connection.disconnect(), 2)
        except Exception:  # the measurement is in; a slow disconnect does not matter
            pass
        return 0
    finally:
        await transport.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["scan", "hr"])
    parser.add_argument("--transport", default="hci-socket:0")
    parser.add_argument("--address", default="C0:B1:E0:00:00:01")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    phase("imported")

    async def bounded():
        try:
            return await asyncio.wait_for(run(args), args.timeout)
        except asyncio.TimeoutError:
            emit({"error": f"timed out after {args.timeout} s"})
            return 1
        except Exception as error:  # one line, never a trace: the benchmark reports it
            emit({"error": f"{type(error).__name__}: {error}"})
            return 1

    return asyncio.run(bounded())


if __name__ == "__main__":
    sys.exit(main())
