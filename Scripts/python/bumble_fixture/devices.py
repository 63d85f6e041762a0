"""The advertisers on the link: the standard devices' data, and how a peripheral is made,
started and described in the ready line."""

from bumble import hci
from bumble.controller import Controller
from bumble.core import AdvertisingData
from bumble.device import AdvertisingType, Device
from bumble.host import Host
from bumble.transport.common import AsyncPipeSink

THERMO_SERVICE_128 = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"  # a vendor 128-bit UUID
BEACON_COMPANY = 0x0059  # Nordic Semiconductor
BEACON_DATA = bytes.fromhex("0215c0ffee")
BEACON_TX_POWER = -8
THERMO_APPEARANCE = 0x0300  # Generic Thermometer
THERMO_SERVICE_DATA = bytes.fromhex("e6091027")  # 0x181A service data payload


def ad(*structures):
    return bytes(AdvertisingData(list(structures)))


def make_device(link, name, address):
    controller = Controller(name, link=link)
    host = Host(controller, AsyncPipeSink(controller))
    device = Device(name=name, address=hci.Address(address), host=host)
    return device


def static_address(index):
    """Random static address: two top bits set, distinct per index."""
    return "C%X:B1:E0:%02X:%02X:%02X" % (index >> 24 & 0xF, index >> 16 & 0xFF, index >> 8 & 0xFF, index & 0xFF)


# The shortest advertising interval of any device this peer starts (bumble_peer.py's
# --advertising-floor; 0: each device's own). A guest under qemu's TCG pays dearly for every
# advertising report its kernel and rawble decode (the kernel-path tests in Scripts/vm-test
# raise it); on the host the fast intervals keep scans short.
advertising_floor_ms = 0


def advertising_interval(interval_ms):
    """The interval a device advertises at: its own, or the floor when that is longer."""
    return max(interval_ms, advertising_floor_ms)


async def start_peripheral(link, index, name, adv_data, *, connectable=True, scannable=None,
                           scan_response=b"", interval_ms=100):
    device = make_device(link, name, static_address(index))
    await device.power_on()
    if connectable:
        kind = AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE
    elif scannable:
        kind = AdvertisingType.UNDIRECTED_SCANNABLE
    else:
        kind = AdvertisingType.UNDIRECTED
    await device.start_advertising(
        advertising_type=kind,
        advertising_data=adv_data,
        scan_response_data=scan_response,
        advertising_interval_min=advertising_interval(interval_ms),
        advertising_interval_max=advertising_interval(interval_ms),
    )
    return device


def describe(device, connectable, scannable, **fields):
    entry = {
        "name": fields.pop("name"),
        "address": str(device.random_address).split("/")[0],
        "addressType": "random",
        "connectable": connectable,
        "scanResponse": scannable,
        "services": [],
        "manufacturerData": [],
    }
    entry.update(fields)
    return entry
