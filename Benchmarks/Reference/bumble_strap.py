"""bumble_strap: a heart-rate strap on Google Bumble's own host and GATT server, as a process of
its own on an H4 transport, the reference for `rawble peripheral hr` in
Scripts/benchmark-peripheral (issue 12).

  bumble_strap.py --transport tcp:127.0.0.1:PORT [--rate HZ] [--name NAME]

Like `rawble peripheral hr`, it opens the H4 transport (one controller of Scripts/bumble-peer
--ports 2), serves the Heart Rate service (Measurement with notify, Body Sensor Location),
advertises connectable with its name and 0x180D from a random static address, and once a central
subscribes notifies `--rate` values a second (deadline-paced, as the fixture's strap: a loop
behind schedule catches up), the values of the fixture's realistic script
(Scripts/python/bumble_fixture/strap.py's RealisticScript, seed 1). Advertising restarts after a
disconnection.

Output: one JSON line when advertising, {"event": "advertising", "address", "addressType"};
SIGTERM or SIGINT ends it (exit 0).
"""

import argparse
import asyncio
import json
import os
import signal
import struct
import sys
import time

from bumble import gatt, hci
from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.transport import open_transport

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Scripts", "python"))
from bumble_fixture.strap import RealisticScript, encode_hrm  # noqa: E402  the fixture's own values

OWN_ADDRESS = "F2:F1:F2:F3:F4:F5"  # random static (the two top bits set)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", required=True)
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--name", default="bumble-strap")
    args = parser.parse_args()
    host, port = args.transport.removeprefix("tcp:").rsplit(":", 1)
    transport = await open_transport(f"tcp-client:{host}:{port}")
    device = Device.with_hci(args.name, hci.Address(OWN_ADDRESS), transport.source, transport.sink)
    measurement = gatt.Characteristic("2A37", gatt.Characteristic.Properties.NOTIFY,
                                      gatt.Characteristic.Permissions(0), b"")
    location = gatt.Characteristic("2A38", gatt.Characteristic.Properties.READ,
                                   gatt.Characteristic.READABLE, bytes([1]))
    device.add_service(gatt.Service("180D", [measurement, location]))
    script = RealisticScript(1)
    interval = 1 / args.rate
    sending = {}

    async def notify(connection):
        start, sent = time.monotonic(), 0
        try:
            while True:
                bpm, energy, rr = script.value(sent)
                await device.notify_subscriber(connection, measurement, encode_hrm(bpm, "detected", energy, rr))
                sent += 1
                delay = start + sent * interval - time.monotonic()
                await asyncio.sleep(delay if delay > 0 else 0)
        except asyncio.CancelledError:
            raise
        except Exception:  # the link went away
            pass

    def on_subscription(connection, characteristic, notify_enabled, indicate_enabled):
        if characteristic is not measurement:
            return
        task = sending.pop(connection, None)
        if task:
            task.cancel()
        if notify_enabled:
            sending[connection] = asyncio.create_task(notify(connection))

    device.on("characteristic_subscription", on_subscription)
    await device.power_on()
    advertising = bytes(AdvertisingData([
        (AdvertisingData.FLAGS, bytes([0x06])),
        (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x180D)),
        (AdvertisingData.COMPLETE_LOCAL_NAME, args.name.encode()),
    ]))
    await device.start_advertising(advertising_data=advertising, auto_restart=True)
    sys.stdout.write(json.dumps({"event": "advertising", "address": OWN_ADDRESS, "addressType": "random"}) + "\n")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for task in sending.values():
        task.cancel()
    await transport.close()


if __name__ == "__main__":
    asyncio.run(main())
