"""rawble-lab: the GATT test device (`--lab`), and describe_gatt for the ready line."""

import asyncio
import json
import logging
import struct
import time

from bumble import att, gatt

from .strap import hr_value

log = logging.getLogger("bumble-peer")


LAB_SERVICE_128 = "72617762-6c65-4c61-6200-000000000001"
LAB_LONG_READ_128 = "72617762-6c65-4c61-6200-000000000002"
LAB_WRITE_128 = "72617762-6c65-4c61-6200-000000000003"
LAB_STREAM_128 = "72617762-6c65-4c61-6200-000000000004"
LAB_PRESENTED_128 = "72617762-6c65-4c61-6200-000000000005"
# The presented value: sint16 2150 with a Presentation Format of exponent -2, unit degree
# Celsius (0x272F), Bluetooth SIG namespace, description "main" (0x0106): 21.50 °C.
LAB_PRESENTED_VALUE = struct.pack("<h", 2150)
LAB_PRESENTATION_FORMAT = struct.pack("<BbHBH", 0x0E, -2, 0x272F, 0x01, 0x0106)
LAB_ADDED_SERVICE_128 = "72617762-6c65-4c61-6200-000000000010"
LAB_ADDED_CHAR_128 = "72617762-6c65-4c61-6200-000000000011"
LAB_APPEARANCE = 0x0341  # Heart Rate Sensor: Heart Rate Belt
LAB_LONG_VALUE = bytes(i % 256 for i in range(300))
LAB_WRITE_MAX = 512


def uuid_text(uuid):
    """4 hex digits for 16-bit UUIDs, the 36-character upper-case form for 128-bit ones."""
    return uuid.to_hex_str(separator="-").upper()


class JsonLog:
    """An append-only JSON-lines file kept open (one open per run, not per line)."""

    def __init__(self, path):
        self.file = open(path, "a") if path else None

    def write(self, entry, flush=True):
        if self.file is None:
            return
        self.file.write(json.dumps(entry) + "\n")
        if flush:
            self.file.flush()

    def flush(self):
        if self.file is not None:
            self.file.flush()


def describe_gatt(server):
    """Every service of `server` with the handles Bumble assigned (attribute handle = index + 1)."""
    attributes = server.attributes
    services = []
    for service in server.services:
        entry = {"uuid": uuid_text(service.uuid), "primary": service.primary,
                 "start": service.handle, "end": service.end_group_handle,
                 "includes": [], "characteristics": []}
        current = None
        for handle in range(service.handle + 1, service.end_group_handle + 1):
            attribute = attributes[handle - 1]
            if isinstance(attribute, gatt.IncludedServiceDeclaration):
                entry["includes"].append({"handle": handle, "start": attribute.service.handle,
                                          "end": attribute.service.end_group_handle,
                                          "uuid": uuid_text(attribute.service.uuid)})
            elif isinstance(attribute, gatt.CharacteristicDeclaration):
                current = None
            elif isinstance(attribute, gatt.Characteristic):
                current = {"uuid": uuid_text(attribute.uuid), "declaration": handle - 1, "value": handle,
                           "end": attribute.end_group_handle, "properties": int(attribute.properties),
                           "descriptors": []}
                if isinstance(attribute.value, (bytes, bytearray)):
                    current["data"] = bytes(attribute.value).hex()
                entry["characteristics"].append(current)
            elif current is not None:
                descriptor = {"uuid": uuid_text(attribute.type), "handle": handle}
                if isinstance(attribute.value, (bytes, bytearray)):
                    descriptor["data"] = bytes(attribute.value).hex()
                current["descriptors"].append(descriptor)
        services.append(entry)
    return services


class Lab:
    """rawble-lab: the GATT test device (see the module docstring)."""

    def __init__(self, device, args):
        self.device, self.args = device, args
        self.tasks = {}  # (connection handle, characteristic handle) -> task
        self.write_log = JsonLog(args.write_log or args.log)
        self.stream_log = JsonLog(args.stream_log or args.log)
        self.written = b""
        self.services_changed = False
        C, P = gatt.Characteristic, gatt.Characteristic.Properties
        gap = next(s for s in device.gatt_server.services if s.uuid == gatt.GATT_GENERIC_ACCESS_SERVICE)
        gap.appearance_characteristic.value = struct.pack("<H", LAB_APPEARANCE)

        def readable(uuid, value, properties=P.READ):
            return C(uuid, properties, C.READABLE, value)

        def user_description(text):
            return gatt.Descriptor(gatt.GATT_CHARACTERISTIC_USER_DESCRIPTION_DESCRIPTOR, gatt.Descriptor.READABLE,
                                   text.encode())

        self.battery_level = readable("2A19", bytes([87]), P.READ | P.NOTIFY)
        battery = gatt.Service("180F", [self.battery_level])
        self.hrm = C("2A37", P.NOTIFY, C.Permissions(0), b"")
        self.write_char = C(LAB_WRITE_128, P.READ | P.WRITE | P.WRITE_WITHOUT_RESPONSE,
                            C.READABLE | C.WRITEABLE,
                            gatt.CharacteristicValue(read=self.on_write_read, write=self.on_write),
                            descriptors=[user_description("lab write")])
        self.stream = C(LAB_STREAM_128, P.NOTIFY | P.INDICATE, C.Permissions(0), b"",
                        descriptors=[user_description("lab stream")])
        presented = C(LAB_PRESENTED_128, P.READ, C.READABLE, LAB_PRESENTED_VALUE,
                      descriptors=[user_description("lab temperature"),
                                   gatt.Descriptor(gatt.GATT_CHARACTERISTIC_PRESENTATION_FORMAT_DESCRIPTOR,
                                                   gatt.Descriptor.READABLE, LAB_PRESENTATION_FORMAT)])
        self.lab_service = gatt.Service(
            LAB_SERVICE_128,
            [readable(LAB_LONG_READ_128, LAB_LONG_VALUE), self.write_char, self.stream, presented],
            included_services=[battery],
        )
        device.add_services([
            gatt.Service("180A", [readable("2A29", b"rawble-sim"), readable("2A24", b"LAB-1")]),
            battery,
            gatt.Service("180D", [self.hrm, readable("2A38", bytes([1]))]),
            self.lab_service,
        ])
        self.service_changed = device.gatt_service.service_changed_characteristic
        device.on("characteristic_subscription", self.on_subscription)
        device.on("connection", self.on_connection)

    def handles(self):
        """Named handles the tests use most (all of them are also in describe_gatt)."""
        cccd = self.cccd_after
        return {
            "serviceChanged": self.service_changed.handle, "serviceChangedCCCD": cccd(self.service_changed),
            "batteryLevel": self.battery_level.handle, "batteryLevelCCCD": cccd(self.battery_level),
            "heartRateMeasurement": self.hrm.handle, "heartRateMeasurementCCCD": cccd(self.hrm),
            "longRead": self.lab_service.characteristics[0].handle,
            "write": self.write_char.handle, "stream": self.stream.handle, "streamCCCD": cccd(self.stream),
        }

    def cccd_after(self, characteristic):
        for handle in range(characteristic.handle + 1, characteristic.end_group_handle + 1):
            attribute = self.device.gatt_server.get_attribute(handle)
            if attribute is not None and attribute.type == gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR:
                return handle
        return None

    def on_write_read(self, connection):
        return self.written

    def on_write(self, connection, value):
        value = bytes(value)
        if len(value) > LAB_WRITE_MAX:
            raise att.ATT_Error(att.ATT_INVALID_ATTRIBUTE_LENGTH_ERROR)
        self.written = value
        self.write_log.write({"kind": "write", "time": time.time(), "handle": self.write_char.handle,
                              "value": value.hex()})

    def on_connection(self, connection):
        if self.args.service_changed_after is not None and not self.services_changed:
            self.services_changed = True  # once per process: the layout stays predictable
            asyncio.create_task(self.change_services(connection))

    def on_subscription(self, connection, characteristic, notify_enabled, indicate_enabled):
        if characteristic is self.stream:
            run = self.send_stream(connection, indicate=not notify_enabled)
        elif characteristic is self.hrm:
            run = self.send_heart_rate(connection)
        else:
            return
        key = (connection.handle, characteristic.handle)
        previous = self.tasks.pop(key, None)
        if previous is not None:
            previous.cancel()
        if notify_enabled or indicate_enabled:
            self.tasks[key] = asyncio.create_task(run)
        else:
            run.close()

    def stream_value(self, counter):
        size = max(4, self.args.stream_size)
        return struct.pack("<I", counter & 0xFFFFFFFF) + bytes((counter + i) & 0xFF for i in range(size - 4))

    async def send_stream(self, connection, indicate):
        """`--stream-count` values at `--stream-rate` Hz (deadline-paced: a late loop catches up)."""
        count, rate = self.args.stream_count, self.args.stream_rate
        kind = "indication" if indicate else "notification"
        start_wall, start_cpu, start = time.time(), time.process_time(), time.monotonic()
        sent, late = 0, 0.0
        try:
            for counter in range(count):
                if rate > 0:
                    due = start + counter / rate
                    delay = due - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    else:
                        late = max(late, -delay)
                value = self.stream_value(counter)
                if indicate:
                    await self.device.indicate_subscriber(connection, self.stream, value)
                else:
                    await self.device.notify_subscriber(connection, self.stream, value)
                sent += 1
                if self.args.stream_log_values:
                    self.stream_log.write({"kind": "stream", "time": time.time(), "counter": counter,
                                           "value": value.hex()}, flush=False)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the link went away
            log.info("stream stopped: %s", error)
        finally:
            elapsed = time.monotonic() - start
            self.stream_log.write({"kind": "stream-summary", "time": time.time(), "started": start_wall,
                                   "mode": kind, "count": sent, "first": 0 if sent else None,
                                   "last": sent - 1 if sent else None, "size": max(4, self.args.stream_size),
                                   "rate": rate, "elapsed": elapsed, "cpu": time.process_time() - start_cpu,
                                   "maxLate": late})
            log.info("stream: %d %ss in %.3f s", sent, kind, elapsed)

    async def send_heart_rate(self, connection):
        try:
            for i in range(self.args.hr_count):
                value = hr_value(i)
                await self.device.notify_subscriber(connection, self.hrm, value)
                self.stream_log.write({"kind": "heart-rate", "time": time.time(), "index": i, "value": value.hex()})
                await asyncio.sleep(self.args.hr_interval)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.info("lab heart rate notifications stopped: %s", error)

    async def change_services(self, connection):
        """Appends a service, then indicates Service Changed for its range once the client subscribed."""
        try:
            await asyncio.sleep(self.args.service_changed_after)
            added = gatt.Service(LAB_ADDED_SERVICE_128, [
                gatt.Characteristic(LAB_ADDED_CHAR_128, gatt.Characteristic.Properties.READ,
                                    gatt.Characteristic.READABLE, b"added")])
            self.device.add_service(added)
            start, end = added.handle, added.end_group_handle
            log.info("service added at 0x%04X-0x%04X", start, end)
            server = self.device.gatt_server
            sc_cccd = self.cccd_after(self.service_changed)
            for _ in range(6000):  # wait (bounded, 60 s) for the client to enable indications
                cccd = (server.subscribers.get(connection) or {}).get(self.service_changed.handle)
                if cccd and len(cccd) == 2 and cccd[0] & 0x02:
                    break
                await asyncio.sleep(0.01)
            else:
                self.write_log.write({"kind": "service-changed", "time": time.time(), "start": start,
                                      "end": end, "indicated": False, "cccd": sc_cccd})
                return
            await self.device.indicate_subscriber(connection, self.service_changed, struct.pack("<HH", start, end))
            self.write_log.write({"kind": "service-changed", "time": time.time(), "start": start, "end": end,
                                  "indicated": True, "confirmed": True,
                                  "service": describe_gatt(server)[-1]})
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.info("service changed not indicated: %s", error)
            self.write_log.write({"kind": "service-changed", "time": time.time(), "indicated": False,
                                  "error": str(error)})
