"""Writes the benchmark inputs as hex lines (one packet or value per line), encoded with
Google Bumble's own encoders so the inputs do not come from the code under test.

  Scripts/venv-python Benchmarks/Reference/make_inputs.py      (writes Benchmarks/Inputs/*.hex)

The inputs are synthesized, with a fixed seed, from realistic content (names, 16- and 128-bit
service lists, manufacturer data of well-known companies, TX power, service data). They are
re-generated only when this script changes; both the Swift benchmarks and the Python
reference decoder (bumble_decode.py) read the same files.
"""
import os
import random
import struct

from bumble.hci import Address, HCI_LE_Advertising_Report_Event
from bumble.core import AdvertisingData, UUID
from bumble import att
from bumble.profiles.heart_rate_service import HeartRateService

OUT = os.path.join(os.path.dirname(__file__), "..", "Inputs")
rng = random.Random(20261122)

NAMES = ["Polar H10 8A1B2C3D", "HRM-Pro:123456", "Forerunner 255", "TICKR 6F2A", "Mi Smart Band 7",
         "Tile", "Galaxy Buds2", "LE-Bose QC35", "SensorTag", "Nordic_UART", "Charge 5",
         "Thingy", "ESP32", "iTAG", "MX Master 3", "Govee_H5075_1A2B"]
COMPANIES = [0x004C, 0x0006, 0x0075, 0x0059, 0x006B, 0x0087, 0x00E0, 0x02E5, 0x000D, 0x0157]


def advertising_data() -> bytes:
    fields = [(AdvertisingData.FLAGS, bytes([rng.choice([0x06, 0x05, 0x1A, 0x02])]))]
    if rng.random() < 0.6:
        uuids = rng.sample([0x180D, 0x180F, 0x180A, 0x1816, 0x181A, 0xFEAA, 0xFE9F], rng.randint(1, 3))
        fields.append((AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
                       b"".join(struct.pack("<H", u) for u in uuids)))
    if rng.random() < 0.2:
        fields.append((AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
                       bytes(UUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))))
    if rng.random() < 0.7:
        name = rng.choice(NAMES).encode()
        kind = AdvertisingData.COMPLETE_LOCAL_NAME if rng.random() < 0.8 else AdvertisingData.SHORTENED_LOCAL_NAME
        fields.append((kind, name))
    if rng.random() < 0.5:
        company = rng.choice(COMPANIES)
        fields.append((AdvertisingData.MANUFACTURER_SPECIFIC_DATA,
                       struct.pack("<H", company) + bytes(rng.randrange(256) for _ in range(rng.randint(2, 10)))))
    if rng.random() < 0.3:
        fields.append((AdvertisingData.TX_POWER_LEVEL, struct.pack("b", rng.randint(-20, 8))))
    if rng.random() < 0.1:
        fields.append((AdvertisingData.SERVICE_DATA_16_BIT_UUID, struct.pack("<H", 0x180D) + bytes([0x06, rng.randint(50, 180)])))
    # Legacy advertising data holds 31 bytes: drop whole structures from the end until it fits
    # (as an advertiser would), never cut one in half.
    while len(bytes(AdvertisingData(fields))) > 31:
        fields.pop()
    return bytes(AdvertisingData(fields))


def adv_events(count: int):
    events = []
    for _ in range(count):
        reports = []
        for _ in range(rng.randint(1, 6)):
            address = Address(bytes(rng.randrange(256) for _ in range(6)), rng.choice([0, 1]))
            reports.append(HCI_LE_Advertising_Report_Event.Report(
                event_type=rng.choice([0, 0, 2, 3, 4]), address_type=address.address_type,
                address=address, data=advertising_data(), rssi=rng.randint(-100, -30)))
        packet = bytes(HCI_LE_Advertising_Report_Event(reports=reports))
        if len(packet) - 3 > 255:  # an event carries at most 255 parameter bytes
            continue
        events.append(packet)
    return events


def hrm_values(count: int):
    values = []
    for _ in range(count):
        rr = [rng.uniform(0.3, 1.5) for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4]))]
        m = HeartRateService.HeartRateMeasurement(
            heart_rate=rng.choice([rng.randint(40, 200), rng.randint(256, 300)]) if rng.random() < 0.1 else rng.randint(40, 200),
            sensor_contact_detected=rng.choice([None, True, False]),
            energy_expended=rng.choice([None, rng.randint(0, 5000)]),
            rr_intervals=rr or None)
        values.append(bytes(m))
    return values


def att_pdus(count: int):
    makers = [
        lambda: att.ATT_Handle_Value_Notification(attribute_handle=rng.randint(1, 0x40),
                                                  attribute_value=bytes([0x16, rng.randint(50, 180), 0x00, 0x04])),
        lambda: att.ATT_Read_By_Group_Type_Response(length=6, attribute_data_list=b"".join(
            struct.pack("<HHH", h, h + 4, u) for h, u in [(1, 0x1800), (6, 0x1801), (12, 0x180D)])),
        lambda: att.ATT_Read_By_Type_Response(length=7, attribute_data_list=b"".join(
            struct.pack("<HBHH", h, 0x12, h + 1, u) for h, u in [(13, 0x2A37), (16, 0x2A38), (18, 0x2A39)])),
        lambda: att.ATT_Find_Information_Response(format=1, information_data=struct.pack("<HHHH", 15, 0x2902, 17, 0x2901)),
        lambda: att.ATT_Read_Response(attribute_value=bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))),
        lambda: att.ATT_Error_Response(request_opcode_in_error=0x08, attribute_handle_in_error=rng.randint(1, 100), error_code=0x0A),
        lambda: att.ATT_Exchange_MTU_Response(server_rx_mtu=517),
        lambda: att.ATT_Write_Response(),
    ]
    return [bytes(rng.choice(makers)()) for _ in range(count)]


def write(name, packets):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        for p in packets:
            f.write(p.hex() + "\n")
    print(f"{path}: {len(packets)} lines")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    write("adv-reports.hex", adv_events(2000))
    write("hrm.hex", hrm_values(1000))
    write("att.hex", att_pdus(1000))
