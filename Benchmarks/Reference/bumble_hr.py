"""bumble_hr: a minimal heart-rate monitor on Google Bumble's own host and GATT client, the
reference for `rawble hr --json` in Scripts/benchmark-hr (issue 5).

  bumble_hr.py --transport tcp:127.0.0.1:PORT [--count N] [--timeout S]

It does what `rawble hr` does, in the same order: opens the H4 transport (the Bumble virtual
controller of Scripts/bumble-peer), active scan until the first connectable device advertising
Heart Rate (0x180D, in its 16-bit service UUID list), connect (random static own address, as
rawble), MTU 517, Heart Rate service by UUID and its characteristics, a Read By Type over every
handle for Device Name, Manufacturer Name, Model Number and Battery Level, a read of Body Sensor
Location, then subscribes to Heart Rate Measurement (Bumble discovers the descriptors and writes
the CCCD) and decodes every notification with the small decoder below.

Output: the JSON lines of `rawble hr --json` (one `write` + flush per line, as rawble's), so
the benchmark times both the same way (when a line reaches the pipe):
  {"event": "connected", "address", "name", "manufacturer", "model", "battery", "bodySensorLocation"}
  {"event": "measurement", "time", "bpm", "contact", "energyExpended", "rrIntervals", "raw"}
  {"event": "invalid", "raw", "error"}
After --count valid measurements it disconnects and exits 0. Errors: {"error": why}, exit 1.

Imports are part of the measured start-up, as the Swift executable's loading is.
"""

import argparse
import asyncio
import datetime
import json
import struct
import sys

from bumble import hci
from bumble.core import UUID, AdvertisingData
from bumble.device import Device, Peer
from bumble.transport import open_transport

OWN_ADDRESS = "F0:F1:F2:F3:F4:F5"  # random static, as rawble's adapter uses one
HEART_RATE = UUID.from_16_bits(0x180D)
MEASUREMENT = UUID.from_16_bits(0x2A37)
BODY_SENSOR_LOCATION = UUID.from_16_bits(0x2A38)
LOCATIONS = ["other", "chest", "wrist", "finger", "hand", "ear lobe", "foot"]
CONTACT = {0: "unsupported", 1: "unsupported", 2: "not-detected", 3: "detected"}


def emit(fields):
    sys.stdout.write(json.dumps(fields, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def decode(value):
    """Heart Rate Measurement (HRS 1.0, 3.1): dict of the decoded fields; ValueError when the
    flags announce fields that are not there."""
    if len(value) < 2:
        raise ValueError(f"{len(value)} bytes, at least 2 needed")
    flags, offset = value[0], 1
    if flags & 0x01:
        if len(value) < 3:
            raise ValueError("u16 heart rate announced, 1 byte present")
        bpm = struct.unpack_from("<H", value, 1)[0]
        offset = 3
    else:
        bpm, offset = value[1], 2
    energy = None
    if flags & 0x08:
        if len(value) < offset + 2:
            raise ValueError(f"energy expended announced at byte {offset}, not present")
        energy = struct.unpack_from("<H", value, offset)[0]
        offset += 2
    rr = []
    if flags & 0x10:
        if (len(value) - offset) % 2:
            raise ValueError(f"odd RR-Interval bytes from byte {offset}")
        rr = [struct.unpack_from("<H", value, i)[0] / 1024 for i in range(offset, len(value), 2)]
    elif len(value) > offset:
        raise ValueError(f"{len(value) - offset} unannounced bytes at byte {offset}")
    return {"bpm": bpm, "contact": CONTACT[(flags >> 1) & 3], "energyExpended": energy, "rrIntervals": rr}


def text(values):
    return values[0].decode("utf-8", "replace") if values else None


async def monitor(args):
    host, port = args.transport.split(":", 2)[1:]
    transport = await open_transport(f"tcp-client:{host}:{port}")
    device = Device.with_hci("bumble-hr", hci.Address(OWN_ADDRESS), transport.source, transport.sink)
    await device.power_on()

    found = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement):
        if found.done() or not advertisement.is_connectable:
            return
        uuids = (advertisement.data.get(AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS) or []) + \
                (advertisement.data.get(AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS) or [])
        if HEART_RATE in uuids:
            found.set_result(advertisement.address)

    device.on("advertisement", on_advertisement)
    await device.start_scanning(active=True)
    address = await found
    await device.stop_scanning()
    connection = await device.connect(address, own_address_type=hci.OwnAddressType.RANDOM, timeout=10)
    peer = Peer(connection)
    await peer.request_mtu(517)
    services = await peer.discover_service(HEART_RATE)
    if not services:
        raise SystemExit(emit({"error": "no Heart Rate service"}))
    characteristics = await peer.discover_characteristics(service=services[0])
    by_uuid = {c.uuid: c for c in characteristics}
    if MEASUREMENT not in by_uuid:
        raise SystemExit(emit({"error": "no Heart Rate Measurement"}))
    info = {"event": "connected", "address": str(address).split("/")[0]}
    for key, uuid in [("name", 0x2A00), ("manufacturer", 0x2A29), ("model", 0x2A24)]:
        info[key] = text(await peer.read_characteristics_by_uuid(UUID.from_16_bits(uuid)))
    battery = await peer.read_characteristics_by_uuid(UUID.from_16_bits(0x2A19))
    info["battery"] = battery[0][0] if battery and len(battery[0]) == 1 else None
    if BODY_SENSOR_LOCATION in by_uuid:
        location = await peer.read_value(by_uuid[BODY_SENSOR_LOCATION])
        if len(location) == 1:
            info["bodySensorLocation"] = LOCATIONS[location[0]] if location[0] < len(LOCATIONS) else location[0]
    emit(info)

    done = asyncio.get_running_loop().create_future()
    state = {"valid": 0}

    def on_value(value):
        value = bytes(value)
        try:
            fields = decode(value)
        except ValueError as error:
            emit({"event": "invalid", "raw": value.hex(), "error": str(error)})
            return
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
        emit({"event": "measurement", "time": now.replace("+00:00", "Z"), **fields, "raw": value.hex()})
        state["valid"] += 1
        if args.count and state["valid"] >= args.count and not done.done():
            done.set_result(None)

    def on_disconnection(reason):
        emit({"event": "disconnected", "reason": reason})
        if not done.done():
            done.set_exception(SystemExit(1))  # before --count: the session failed

    connection.on("disconnection", on_disconnection)
    await peer.subscribe(by_uuid[MEASUREMENT], on_value)
    await done
    try:
        await asyncio.wait_for(connection.disconnect(), 2)
    except Exception:  # the measurements are in; a slow disconnect does not matter
        pass
    await transport.close()


def main():
    parser = arguments(__doc__, "stop after N valid measurements (0: never)")
    return run_bounded(monitor, parser.parse_args())


def arguments(doc, count_help):
    """The references' shared options: --transport, --count, --timeout."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--transport", required=True, help="tcp:HOST:PORT")
    parser.add_argument("--count", type=int, default=0, help=count_help)
    parser.add_argument("--timeout", type=float, default=0, help="give up after S seconds (0: never)")
    return parser


def run_bounded(monitor, args):
    """Runs `monitor(args)` bounded by --timeout: 0, or 1 with an error line when it ran out."""
    async def bounded():
        try:
            await asyncio.wait_for(monitor(args), args.timeout or None)
            return 0
        except asyncio.TimeoutError:
            emit({"error": f"timed out after {args.timeout} s"})
            return 1

    return asyncio.run(bounded())


if __name__ == "__main__":
    sys.exit(main())
