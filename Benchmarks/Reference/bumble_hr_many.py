"""bumble_hr_many: several straps followed at once on Google Bumble's own host, the reference for
`rawble hr --all --max N --json` in Scripts/benchmark-straps (issue 41).

  bumble_hr_many.py --transport tcp:127.0.0.1:PORT --straps N [--count C] [--timeout S]

What `rawble hr --all` does, in the same order per strap: one active scan; each connectable
device advertising Heart Rate (0x180D) is connected (one at a time, the scan stopped meanwhile
and started again after), MTU 517, the Heart Rate service and its characteristics, Device Name
read, then subscribes to Heart Rate Measurement and decodes every notification (bumble_hr.py's
decoder). Output: one JSON line per event, `rawble hr --json`'s, each naming its strap:
  {"event": "connected", "address", "name"}
  {"event": "measurement", "time", "address", "name", "bpm", "contact", "energyExpended", "rrIntervals", "raw"}
It exits 0 once N straps each sent C valid measurements (C = 0: never). Errors: {"error": why}, exit 1.
"""

import asyncio
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bumble_hr import HEART_RATE, MEASUREMENT, arguments, decode, emit, run_bounded  # noqa: E402  (the one-strap reference's)

from bumble import hci  # noqa: E402
from bumble.core import UUID, AdvertisingData  # noqa: E402
from bumble.device import Device, Peer  # noqa: E402
from bumble.transport import open_transport  # noqa: E402

OWN_ADDRESS = "F0:F1:F2:F3:F4:F6"


async def follow(device, address, name, args, counts, all_done):
    connection = await device.connect(address, own_address_type=hci.OwnAddressType.RANDOM, timeout=10)
    peer = Peer(connection)
    await peer.request_mtu(517)
    services = await peer.discover_service(HEART_RATE)
    characteristics = await peer.discover_characteristics(service=services[0])
    by_uuid = {c.uuid: c for c in characteristics}
    names = await peer.read_characteristics_by_uuid(UUID.from_16_bits(0x2A00))
    if names:
        name = names[0].decode("utf-8", "replace")
    key = str(address).split("/")[0]
    emit({"event": "connected", "address": key, "name": name})

    def on_value(value):
        value = bytes(value)
        try:
            fields = decode(value)
        except ValueError as error:
            emit({"event": "invalid", "address": key, "name": name, "raw": value.hex(), "error": str(error)})
            return
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
        emit({"event": "measurement", "time": now, "address": key, "name": name, **fields, "raw": value.hex()})
        counts[key] = counts.get(key, 0) + 1
        if args.count and len(counts) >= args.straps and all(c >= args.count for c in counts.values()) \
                and not all_done.done():
            all_done.set_result(None)

    await peer.subscribe(by_uuid[MEASUREMENT], on_value)


async def monitor(args):
    host, port = args.transport.split(":", 2)[1:]
    transport = await open_transport(f"tcp-client:{host}:{port}")
    device = Device.with_hci("bumble-hr-many", hci.Address(OWN_ADDRESS), transport.source, transport.sink)
    await device.power_on()
    found = asyncio.Queue()
    seen = set()

    def on_advertisement(advertisement):
        if not advertisement.is_connectable or len(seen) >= args.straps:
            return
        key = str(advertisement.address).split("/")[0]
        uuids = (advertisement.data.get(AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS) or []) + \
                (advertisement.data.get(AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS) or [])
        if HEART_RATE in uuids and key not in seen:
            seen.add(key)
            found.put_nowait((advertisement.address, advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME)))

    device.on("advertisement", on_advertisement)
    await device.start_scanning(active=True)
    counts = {}
    all_done = asyncio.get_running_loop().create_future()
    for _ in range(args.straps):
        address, name = await found.get()
        await device.stop_scanning()
        await follow(device, address, name, args, counts, all_done)
        await device.start_scanning(active=True)
    await device.stop_scanning()
    await all_done
    await transport.close()


def main():
    parser = arguments(__doc__, "stop once every strap sent N valid measurements")
    parser.add_argument("--straps", type=int, required=True, help="how many straps to follow")
    return run_bounded(monitor, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
