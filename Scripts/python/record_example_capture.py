"""Record a real HCI capture of a heart-rate strap session, made by Google Bumble.

Usage (from the repository root):

    Scripts/bootstrap                  # once: bumble 0.0.236 in the project's venv
    Scripts/record-example-capture [--out-dir Examples] [--timeout 30]

Writes two files:

    Examples/heart-rate-session.btsnoop        btsnoop, datalink 1002 (H4)
    Examples/heart-rate-session.expected.json  what the strap sent, for tests

Everything happens in this one process: no radio, no network, no BlueZ.  A Bumble
LocalLink joins two Bumble virtual Controllers.  Device B is a heart-rate strap
(random static address, legacy advertising of flags + complete 16-bit service UUID
list 180D + complete local name) with a GATT server: Heart Rate (Measurement
notify, Body Sensor Location read = chest, Control Point write), Device
Information (Manufacturer Name, Model Number) and Battery (Battery Level).
Device A is a central (random static address); only A's HCI traffic is recorded.

The central powers on, scans (legacy scan), connects to the strap, exchanges MTU,
discovers services, characteristics and descriptors, reads Body Sensor Location,
Manufacturer Name and Battery Level, subscribes to Heart Rate Measurement,
receives the fixed MEASUREMENTS script below, writes 01 (reset energy expended)
to the Control Point, unsubscribes and disconnects.

The capture is independent of rawble: it is what another stack (Bumble's host
and virtual controller) puts on the HCI.  Content is deterministic except the
timestamps and the number of advertising reports seen before the connection.
Notes on Bumble's virtual controller: each advertisement is delivered twice
(an ADV_IND report, then a SCAN_RSP report carrying the same advertising data);
the central's controller is made to claim no LE Extended Advertising, otherwise it
answers a legacy scan with LE Extended Advertising Reports; and with
Own_Address_Type public the controller silently drops the central's ACL data, so
the central uses a random static address.
"""

import argparse
import asyncio
import importlib.metadata
import json
import os
import struct
import sys

from bumble import gatt, hci
from bumble.controller import Controller
from bumble.core import AdvertisingData, UUID
from bumble.device import Device, Peer
from bumble.host import Host
from bumble.link import LocalLink
from bumble.snoop import BtSnooper
from bumble.transport.common import AsyncPipeSink

CENTRAL_ADDRESS = "C0:FF:EE:00:00:01"  # random static (two top bits set)
STRAP_ADDRESS = "D4:0B:5E:A7:00:01"  # random static
STRAP_NAME = "rawble HR demo"

# The script of Heart Rate Measurements the strap notifies, in order.
# contact: "detected" | "not-detected" | "unsupported"; rr in raw 1/1024 s units.
MEASUREMENTS = [
    dict(bpm=62, contact="unsupported", energy=None, rr=[]),
    dict(bpm=64, contact="detected", energy=None, rr=[]),
    dict(bpm=66, contact="detected", energy=None, rr=[950]),
    dict(bpm=70, contact="detected", energy=12, rr=[900, 880]),
    dict(bpm=75, contact="detected", energy=None, rr=[820, 815, 810]),
    dict(bpm=80, contact="not-detected", energy=None, rr=[]),
    dict(bpm=84, contact="detected", energy=25, rr=[]),
    dict(bpm=90, contact="detected", energy=None, rr=[683]),
    dict(bpm=101, contact="detected", energy=40, rr=[608, 600, 612]),
    dict(bpm=118, contact="unsupported", energy=None, rr=[520, 515]),
    dict(bpm=135, contact="detected", energy=None, rr=[455]),
    dict(bpm=152, contact="detected", energy=88, rr=[404]),
    dict(bpm=171, contact="detected", energy=None, rr=[360, 358, 356]),
    dict(bpm=190, contact="detected", energy=None, rr=[]),
    dict(bpm=255, contact="detected", energy=None, rr=[241]),
    dict(bpm=300, contact="detected", energy=None, rr=[205]),  # u16 format
    dict(bpm=160, contact="not-detected", energy=150, rr=[]),
    dict(bpm=128, contact="detected", energy=None, rr=[480, 482]),
    dict(bpm=96, contact="unsupported", energy=None, rr=[]),
    dict(bpm=72, contact="detected", energy=65535, rr=[853, 1024, 65535]),
]

# Bluetooth assigned numbers (Assigned Numbers document, 16-bit UUIDs).
HEART_RATE_SERVICE = UUID.from_16_bits(0x180D)
HEART_RATE_MEASUREMENT = UUID.from_16_bits(0x2A37)
BODY_SENSOR_LOCATION = UUID.from_16_bits(0x2A38)
HEART_RATE_CONTROL_POINT = UUID.from_16_bits(0x2A39)
DEVICE_INFORMATION_SERVICE = UUID.from_16_bits(0x180A)
MANUFACTURER_NAME = UUID.from_16_bits(0x2A29)
MODEL_NUMBER = UUID.from_16_bits(0x2A24)
BATTERY_SERVICE = UUID.from_16_bits(0x180F)
BATTERY_LEVEL = UUID.from_16_bits(0x2A19)
CCCD = UUID.from_16_bits(0x2902)

MANUFACTURER = "rawble project"
MODEL = "HR-1"
BATTERY_PERCENT = 87
BODY_SENSOR_LOCATION_CHEST = 1


def encode_hrm(m):
    """Heart Rate Measurement value per the Heart Rate Service spec, section 3.1."""
    flags = 0
    body = b""
    if m["bpm"] > 0xFF:
        flags |= 0x01
        body += struct.pack("<H", m["bpm"])
    else:
        body += struct.pack("<B", m["bpm"])
    if m["contact"] != "unsupported":
        flags |= 0x04
        if m["contact"] == "detected":
            flags |= 0x02
    if m["energy"] is not None:
        flags |= 0x08
        body += struct.pack("<H", m["energy"])
    if m["rr"]:
        flags |= 0x10
        body += b"".join(struct.pack("<H", rr) for rr in m["rr"])
    return bytes([flags]) + body


def make_device(link, name, address):
    controller = Controller(name, link=link)
    host = Host(controller, AsyncPipeSink(controller))
    device = Device(name=name, address=hci.Address(address), host=host)
    return device, controller


async def run(out_dir):
    link = LocalLink()
    central, central_controller = make_device(link, "central", CENTRAL_ADDRESS)
    # The central's controller claims no LE Extended Advertising, so the whole capture
    # uses legacy scanning consistently: LE Set Scan Parameters/Enable and LE
    # Advertising Report events (subevent 0x02).  With the feature on, Bumble's
    # controller answers a legacy scan with LE Extended Advertising Reports whose
    # event types lack the Legacy bit, and Bumble's host stops the scan with the
    # extended command, which a real controller would disallow (Core Vol 4 Part E 3.1.1).
    central_controller.le_features = type(central_controller).le_features & ~(
        hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
    )
    strap, _ = make_device(link, STRAP_NAME, STRAP_ADDRESS)

    # ---- the strap's GATT server ----
    control_point_writes = []

    def on_control_point_write(connection, value):
        control_point_writes.append(bytes(value))

    hrm = gatt.Characteristic(
        HEART_RATE_MEASUREMENT,
        gatt.Characteristic.Properties.NOTIFY,
        gatt.Characteristic.Permissions(0),
        b"",
    )
    bsl = gatt.Characteristic(
        BODY_SENSOR_LOCATION,
        gatt.Characteristic.Properties.READ,
        gatt.Characteristic.READABLE,
        bytes([BODY_SENSOR_LOCATION_CHEST]),
    )
    hrcp = gatt.Characteristic(
        HEART_RATE_CONTROL_POINT,
        gatt.Characteristic.Properties.WRITE,
        gatt.Characteristic.WRITEABLE,
        gatt.CharacteristicValue(write=on_control_point_write),
    )
    strap.add_services(
        [
            gatt.Service(HEART_RATE_SERVICE, [hrm, bsl, hrcp]),
            gatt.Service(
                DEVICE_INFORMATION_SERVICE,
                [
                    gatt.Characteristic(
                        MANUFACTURER_NAME,
                        gatt.Characteristic.Properties.READ,
                        gatt.Characteristic.READABLE,
                        MANUFACTURER.encode(),
                    ),
                    gatt.Characteristic(
                        MODEL_NUMBER,
                        gatt.Characteristic.Properties.READ,
                        gatt.Characteristic.READABLE,
                        MODEL.encode(),
                    ),
                ],
            ),
            gatt.Service(
                BATTERY_SERVICE,
                [
                    gatt.Characteristic(
                        BATTERY_LEVEL,
                        gatt.Characteristic.Properties.READ,
                        gatt.Characteristic.READABLE,
                        bytes([BATTERY_PERCENT]),
                    )
                ],
            ),
        ]
    )
    strap.advertising_data = bytes(
        AdvertisingData(
            [
                (AdvertisingData.FLAGS, bytes([0x06])),  # LE General Discoverable, no BR/EDR
                (
                    AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
                    struct.pack("<H", 0x180D),
                ),
                (AdvertisingData.COMPLETE_LOCAL_NAME, STRAP_NAME.encode()),
            ]
        )
    )

    subscribed = asyncio.get_running_loop().create_future()

    def on_subscription(connection, characteristic, notify_enabled, indicate_enabled):
        if characteristic is hrm and notify_enabled and not subscribed.done():
            subscribed.set_result(connection)

    strap.on("characteristic_subscription", on_subscription)

    await strap.power_on()
    await strap.start_advertising(advertising_interval_min=100, advertising_interval_max=100)

    # ---- the central, recorded ----
    capture_path = os.path.join(out_dir, "heart-rate-session.btsnoop")
    with open(capture_path, "wb") as capture:
        central.host.snooper = BtSnooper(capture)
        await central.power_on()

        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement):
            name = advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME)
            if name == STRAP_NAME and not found.done():
                found.set_result(advertisement.address)

        central.on("advertisement", on_advertisement)
        await central.start_scanning(legacy=True, active=True, filter_duplicates=True)
        strap_address = await found
        await central.stop_scanning()

        connection = await central.connect(strap_address)
        peer = Peer(connection)
        await peer.request_mtu(185)
        await peer.discover_services()
        for service in peer.services:
            await service.discover_characteristics()
            for characteristic in service.characteristics:
                await characteristic.discover_descriptors()

        def one(uuid):
            found = peer.get_characteristics_by_uuid(uuid)
            assert len(found) == 1, f"{uuid}: {found}"
            return found[0]

        location = await one(BODY_SENSOR_LOCATION).read_value()
        assert location == bytes([BODY_SENSOR_LOCATION_CHEST]), location
        manufacturer = await one(MANUFACTURER_NAME).read_value()
        assert manufacturer == MANUFACTURER.encode(), manufacturer
        battery = await one(BATTERY_LEVEL).read_value()
        assert battery == bytes([BATTERY_PERCENT]), battery

        received = []
        all_received = asyncio.get_running_loop().create_future()

        def on_measurement(value):
            received.append(bytes(value))
            if len(received) == len(MEASUREMENTS) and not all_received.done():
                all_received.set_result(None)

        hrm_proxy = one(HEART_RATE_MEASUREMENT)
        await hrm_proxy.subscribe(on_measurement)
        strap_connection = await subscribed

        sent = []
        for m in MEASUREMENTS:
            value = encode_hrm(m)
            sent.append(value)
            await strap.notify_subscriber(strap_connection, hrm, value)
            await asyncio.sleep(0.01)
        await all_received
        assert received == sent, (received, sent)

        await one(HEART_RATE_CONTROL_POINT).write_value(bytes([0x01]), with_response=True)
        assert control_point_writes == [b"\x01"], control_point_writes

        await hrm_proxy.unsubscribe(on_measurement)
        await connection.disconnect()
        await asyncio.sleep(0.05)
        central.host.snooper = None

    expected = {
        "source": f"Bumble {importlib.metadata.version('bumble')} virtual controllers"
        " (Scripts/record-example-capture)",
        "capture": "heart-rate-session.btsnoop",
        "recorded": "central's HCI (host side), btsnoop datalink 1002 (H4)",
        "central": {"address": CENTRAL_ADDRESS, "addressType": "random"},
        "strap": {
            "address": STRAP_ADDRESS,
            "addressType": "random",
            "name": STRAP_NAME,
            "services": ["180D"],
            "bodySensorLocation": BODY_SENSOR_LOCATION_CHEST,
            "manufacturerName": MANUFACTURER,
            "modelNumber": MODEL,
            "batteryLevel": BATTERY_PERCENT,
        },
        "controlPointWrite": "01",
        "measurements": [
            {
                "bpm": m["bpm"],
                "contact": m["contact"],
                "energyExpended": m["energy"],
                "rrIntervals": m["rr"],
                "value": encode_hrm(m).hex(),
            }
            for m in MEASUREMENTS
        ],
    }
    with open(os.path.join(out_dir, "heart-rate-session.expected.json"), "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")
    return capture_path


def main():
    parser = argparse.ArgumentParser(prog="record-example-capture", description=__doc__.split("\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # Scripts/python/..
    parser.add_argument("--out-dir", default=os.path.join(root, "Examples"))
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    try:
        path = asyncio.run(asyncio.wait_for(run(args.out_dir), args.timeout))
    except asyncio.TimeoutError:
        print(f"record-example-capture: timed out after {args.timeout} s", file=sys.stderr)
        return 1
    print(f"{path}: {os.path.getsize(path)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
