"""bumble-peer: a virtual Bluetooth LE controller with real peripherals, for rawble's tests.

What it serves: one Google Bumble (0.0.236) virtual `Controller`, whose HCI is offered to ONE
outside host as H4 on a TCP port (`--port`, 0 = pick a free one) or a unix socket (`--unix`).
On the same Bumble `LocalLink`, Bumble `Device`s act as LE peripherals, each with its own random
static address and its own Bumble host and controller:

  rawble-strap   connectable Heart Rate strap: AD flags, 16-bit UUIDs 180D 180F, complete name.
                 GATT: GAP name, Device Information (Manufacturer "rawble-sim", Model "HRM-1"),
                 Battery Level 87, Heart Rate (Measurement notify, Body Sensor Location 1 =
                 chest, Control Point write: 01 resets energy expended, others -> ATT error
                 0x80).  On subscription it notifies `--hr-count` scripted values every
                 `--hr-interval` s (the first at once) and appends each to `--log` as
                 {"time": t, "value": "hex", "position": p, "index": i} (p: place in the whole
                 sequence, i: index of the valid value; invalid ones carry "invalid": why instead).
                 Strap options (all off by default):
                   --hr-disconnect-after N: right after the N-th notification of a connection the
                     strap disconnects (HCI Disconnect, reason 0x13 remote user terminated; the
                     host sees Disconnection Complete with that reason), logs {"kind":
                     "disconnect", "after": total sent, "onConnection": N, "reason": 19}, advertises
                     again and on the next subscription continues where it stopped (every value
                     sent once overall).  `--hr-disconnects K` times (default 1, 0 = every N).
                   --hr-invalid: after valid values 0, 2, 4, ... (never after the last) one invalid
                     value from INVALID_VALUES; --hr-count still counts the valid ones.
                   --hr-refuse-cccd: a write of the measurement's CCCD -> ATT error 0xFD (logged
                     as {"kind": "cccd-refused", "value": hex}).
                   --hr-silent: the subscription is accepted, nothing is ever notified.
                   --strap-encrypted-read: a last service 72617762-6C65-5345-4300-000000000000
                     whose characteristic ...0001 (value "sealed") is readable only on an
                     encrypted link (Insufficient Encryption before); Just Works pairing accepted.
                   --hr-script realistic (`--hr-seed`): a seeded workout instead of the test
                     script (see RealisticScript: RR intervals with respiratory sinus arrhythmia,
                     a Mayer wave and noise, RMSSD ~50 ms at rest and ~9 ms at 140+ bpm);
                     `--hr-count 0` = endless.  Realistic sessions (and --hr-disconnect-after)
                     continue across connections; otherwise every subscription starts the
                     script again.  `--hr-artifacts PER_HOUR` (default 30, 0 = a clean series):
                     missed, extra and ectopic beats, a third each, seeded.  `--hr-summary
                     SECONDS` prints the realistic script's figures over that much session
                     (RMSSD at rest and at 140+ bpm, artifacts by kind, RR sum) as one JSON line
                     and exits, with no controller (a check for tests and people).
                 Also logged: {"kind": "subscription", "notify", "indicate"}, {"kind":
                 "energy-reset", "position"}, {"kind": "control-point-refused", "value"}.  After
                 an energy reset the test script's energy fields are sent minus the last energy
                 value sent before it (65535 stays 65535); the realistic one restarts from 0.
                 The ready line's strap entry has "heartRate": these settings and "handles"
                 (measurement, measurementCCCD, bodySensorLocation, controlPoint value handles).
  rawble-beacon  non-connectable: manufacturer data (company 0x0059), TX power, shortened name.
  rawble-thermo  connectable: 128-bit service UUID, service data 0x181A, appearance; its
                 complete name only in its SCAN RESPONSE (sent to active scans).
  rawble-lab     (only with `--lab`) connectable GATT test device: AD flags + 128-bit service
                 UUID LAB_SERVICE_128, complete name "rawble-lab" in its SCAN RESPONSE (all three
                 do not fit 31 bytes).  Database: GAP (name, appearance 0x0341), GATT (Service
                 Changed indicate + CCCD, Client Supported Features, Database Hash), Device
                 Information ("rawble-sim", "LAB-1"), Battery (Level 87, read+notify), Heart Rate
                 (Measurement notify, Body Sensor Location 1), and the lab service (includes
                 Battery): a 300-byte read-only value (byte i = i % 256), a writable value (read,
                 write, write without response, up to 512 bytes, each completed write logged to
                 `--write-log`), a stream (notify+indicate, user description) sending
                 `--stream-count` values at `--stream-rate` Hz of `--stream-size` bytes (4-byte LE
                 counter, then padding) on subscription, logged to `--stream-log`, and a
                 presented value (read; user description and a Presentation Format: sint16,
                 exponent -2, degree Celsius: 21.50 °C).  The ready
                 line's "gatt" field lists every service/include/characteristic/descriptor with
                 the handles Bumble assigned.  `--service-changed-after S`: S s after a client
                 connects (first connection only), a service is appended at the end of the database
                 and Service Changed indicated for its range once the client enabled indications.
  rawble-broken  a valid shortened-name AD structure, then one whose length runs past the end.
  --extra N      N more connectable advertisers "rawble-adv-0001"... (scale benchmark).
  --strap-only   of the standard four, only the strap (Scripts/sim-strap uses it, with
                 --announce: a how-to-connect line on stderr, and --ignore-stdin).

Several hosts on one link (`--ports N`): N served controllers on the same LocalLink, each for its
own outside host (the first on `--port`/`--unix`, the others on free TCP ports or PATH.2, PATH.3
...), each with its own public address (`--controller-address`, repeated in port order; default
52:41:57:42:4C:0k with N > 1).  A host on one port sees what a host on another advertises, and
connects to it: rawble's peripheral on one port, rawble's central on another.  The standard
devices stay on the link unless `--no-standard`.  A served controller's legacy advertising is
sent on the link for every undirected type (stock Bumble sends only ADV_IND), and reported to
scanners as what it is, scan response data included.

Bumble's own GATT client on the link (`--central TARGET`, or Scripts/bumble-central TARGET):
after the ready line a Bumble central on its own controller finds TARGET, connects, discovers,
reads, subscribes and writes, each step one JSON line on stdout, then the process exits; see
bumble_central.py for its options and events.

When everything advertises it prints ONE JSON line on stdout ({"ready": true, "transport": ...,
"transports": [every port's, in order], "controllers": [{"transport", "publicAddress"}],
"devices": [...]}: what each device advertises); logs go to stderr.  It exits after
`--lifetime` s, when stdin reaches EOF (its parent died; with --central, when the central's run
ends instead) and on SIGTERM/SIGINT.

Reset and LE Create Connection Cancel on a served controller do what the specification says
(stock Bumble 0.0.236 answered both with success and changed nothing): Reset stops advertising
and scanning, forgets a pending connection attempt and drops every connection (the peers see
reason 0x08); Cancel ends the pending attempt with LE Connection Complete, status 0x02.

Reports to the host: stock Bumble 0.0.236 reports every advertisement as connectable, twice
(the second "scan response" repeating the advertising data), and never sends scan response
data.  This fixture's served controller (ScannerController below) reports what the advertiser
really sends: the advertiser's event properties, and a scan response (with the advertiser's
scan response data) only to an active scan of a scannable advertiser.  Report format follows
the scan commands the host used: LE Advertising Report (0x02) after LE Set Scan Enable, LE
Extended Advertising Report (0x0D) after LE Set Extended Scan Enable.  `--stock-reports` keeps
Bumble's own reporting instead.

Run it by hand (from the repository root):

    Scripts/bumble-peer --port 9000 --lifetime 3600 < /dev/tty
    rawble scan --transport tcp:127.0.0.1:9000
    Scripts/bumble-peer --port 9000 --no-standard --lab --stream-log /tmp/stream.jsonl < /dev/tty
    Scripts/sim-strap     # the strap alone, a realistic session at 1 Hz on port 9000, until Ctrl-C

Needs `pip install bumble==0.0.236` (Scripts/bootstrap does it).
"""

import argparse
import asyncio
import json
import logging
import os
import signal
import socket
import struct
import sys
import time

from bumble import att, gatt, hci, ll
from bumble.controller import Controller, LegacyAdvertiser
from bumble.core import UUID, AdvertisingData, PhysicalTransport
from bumble.device import AdvertisingType, Device
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket

import bumble_central

log = logging.getLogger("bumble-peer")

THERMO_SERVICE_128 = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"  # a vendor 128-bit UUID
BEACON_COMPANY = 0x0059  # Nordic Semiconductor
BEACON_DATA = bytes.fromhex("0215c0ffee")
BEACON_TX_POWER = -8
THERMO_APPEARANCE = 0x0300  # Generic Thermometer
THERMO_SERVICE_DATA = bytes.fromhex("e6091027")  # 0x181A service data payload

# Heart Rate Measurement script: (bpm, contact, energy, rr list), contact in
# "detected" / "not-detected" / "unsupported"; rr in 1/1024 s units.
DEFAULT_SCRIPT = [
    (62, "unsupported", None, []),
    (64, "detected", None, []),
    (66, "detected", None, [950]),
    (70, "detected", 12, [900, 880]),
    (75, "detected", None, [820, 815, 810]),
    (80, "not-detected", None, []),
    (90, "detected", 40, [683]),
    (255, "detected", None, [241]),
    (300, "detected", None, [205]),  # u16 format
    (160, "not-detected", 150, []),
    (128, "detected", None, [480, 482, 485, 490]),
    (72, "detected", 65535, [853, 1024]),
]


def encode_hrm(bpm, contact, energy, rr):
    """Heart Rate Measurement value (Heart Rate Service 3.1)."""
    flags, body = 0, b""
    if bpm > 0xFF:
        flags |= 0x01
        body += struct.pack("<H", bpm)
    else:
        body += struct.pack("<B", bpm)
    if contact != "unsupported":
        flags |= 0x04 | (0x02 if contact == "detected" else 0)
    if energy is not None:
        flags |= 0x08
        body += struct.pack("<H", energy)
    if rr:
        flags |= 0x10
        body += b"".join(struct.pack("<H", x) for x in rr)
    return bytes([flags]) + body


def hr_value(index):
    """The index-th scripted value (the script repeats, bpm shifted per round)."""
    bpm, contact, energy, rr = DEFAULT_SCRIPT[index % len(DEFAULT_SCRIPT)]
    shift = index // len(DEFAULT_SCRIPT)
    return encode_hrm(min(bpm + shift, 0xFFFF), contact, energy, rr)


def ad(*structures):
    return bytes(AdvertisingData(list(structures)))


class ScannerLink(LocalLink):
    """LocalLink delivering advertisements only to scanning controllers (not O(n^2))."""

    def __init__(self):
        super().__init__()
        self.scanners = []
        self._sets = {}  # advertiser address -> AdvertisingSet (lazily indexed)

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        """LE ACL data comes from the sender's own address on that connection.  Stock Bumble uses
        the sender's random address, so a central that connected from its public address (the
        Linux kernel does) had all its data dropped by the peripheral ("no connection")."""
        if transport == PhysicalTransport.LE:
            connection = sender_controller.le_connections.get(destination_address)
            if connection is not None:
                destination = self.find_le_controller(destination_address)
                if destination is not None:
                    source = connection.self_address
                    asyncio.get_running_loop().call_soon(
                        lambda: destination.on_link_acl_data(source, transport, data))
                return
        super().send_acl_data(sender_controller, destination_address, transport, data)

    def send_advertising_pdu(self, sender_controller, packet):
        if isinstance(packet, (ll.AdvInd, ll.AdvExtInd)):
            loop = asyncio.get_running_loop()
            for c in self.scanners:
                if c is not sender_controller:
                    loop.call_soon(c.on_ll_advertising_pdu, packet)
        else:
            super().send_advertising_pdu(sender_controller, packet)

    def advertising_set_of(self, address):
        """The enabled advertiser (an extended advertising set, or a served controller's legacy
        advertiser) whose PDUs come from `address`: its `parameters` and `scan_response_data`."""
        found = self._sets.get(address)
        if found is not None and found.enabled:
            return found
        self._sets = {}
        for c in self.controllers:
            for s in c.advertising_sets.values():
                if s.enabled and s.parameters is not None and s.address is not None:
                    self._sets[s.address] = s
            legacy = c.le_legacy_advertiser
            if isinstance(legacy, ReportedLegacyAdvertiser) and legacy.enabled:
                self._sets[legacy.address] = legacy
        return self._sets.get(address)


# What `--extended-controller` adds to the served controller's Supported Commands: the LE
# extended advertising commands (Set Advertising Set Random Address 0x2035 to Clear Advertising
# Sets 0x203D, with Read Maximum Advertising Data Length 0x203A and Read Number of Supported
# Advertising Sets 0x203B) and the extended scanning and connection ones (0x2041-0x2043).
EXTENDED_CONTROLLER_COMMANDS = frozenset(range(0x2035, 0x203E)) | {0x2041, 0x2042, 0x2043}

# Legacy advertising type (LE Set Advertising Parameters) -> the extended event properties a
# scanner reports for it (bit 0 connectable, 1 scannable, 2 directed, 3 high duty, 4 legacy).
LEGACY_EVENT_PROPERTIES = {0: 0x13, 1: 0x1D, 2: 0x12, 3: 0x10, 4: 0x15}


class ReportedLegacyAdvertiser(LegacyAdvertiser):
    """A served controller's legacy advertiser: it sends a PDU on the link for every advertising
    type (stock Bumble sends only ADV_IND, so a host advertising non-connectable or scannable
    with the legacy commands was never seen), and ScannerController reports what it really is
    (`parameters.advertising_event_properties`, its scan response data)."""

    class Parameters:
        def __init__(self, advertiser):
            self.advertiser = advertiser

        @property
        def advertising_event_properties(self):
            return LEGACY_EVENT_PROPERTIES.get(self.advertiser.advertising_type, 0x10)

    @property
    def parameters(self):
        return ReportedLegacyAdvertiser.Parameters(self)

    def send_advertising_data(self):
        if self.enabled:
            self.controller.send_advertising_pdu(ll.AdvInd(advertiser_address=self.address,
                                                           data=self.advertising_data))


class ScannerController(Controller):
    """Bumble's Controller, reporting each advertiser's real event type and scan response."""

    stock_reports = False
    extended_scan = False

    def __init__(self, *arguments, **keywords):
        super().__init__(*arguments, **keywords)
        self.le_legacy_advertiser = ReportedLegacyAdvertiser(self)

    def on_hci_le_set_scan_enable_command(self, command):
        self.extended_scan = False
        return super().on_hci_le_set_scan_enable_command(command)

    # LE event mask bit 9: LE Enhanced Connection Complete (subevent 0x0A).
    ENHANCED_CONNECTION_COMPLETE = 1 << 9

    def send_hci_packet(self, packet):
        """A connection's completion as the host asked for it: LE Enhanced Connection Complete
        (Core Vol 4 Part E 7.7.65.10) instead of LE Connection Complete when the host unmasked
        the enhanced event, as the specification says and real controllers do.  Stock Bumble
        0.0.236 always sent the legacy event; Linux 6.12, which unmasks and waits for the
        enhanced one, then held its command queue for its 20 s connection timeout after every
        connection (docs/kernel-findings.md, section 3)."""
        if (isinstance(packet, hci.HCI_LE_Connection_Complete_Event)
                and self.le_event_mask & self.ENHANCED_CONNECTION_COMPLETE):
            no_address = hci.Address(bytes(6), hci.Address.RANDOM_DEVICE_ADDRESS)
            packet = hci.HCI_LE_Enhanced_Connection_Complete_Event(
                status=packet.status, connection_handle=packet.connection_handle, role=packet.role,
                peer_address_type=packet.peer_address_type, peer_address=packet.peer_address,
                local_resolvable_private_address=no_address, peer_resolvable_private_address=no_address,
                connection_interval=packet.connection_interval, peripheral_latency=packet.peripheral_latency,
                supervision_timeout=packet.supervision_timeout,
                central_clock_accuracy=packet.central_clock_accuracy)
        return super().send_hci_packet(packet)

    def on_hci_reset_command(self, command):
        """Reset as a controller does it (Core Vol 4 Part E 7.3.2): advertising, scanning, a
        pending connection attempt and every connection end; each peer sees its link time out
        (reason 0x08), the host is told nothing.  Stock Bumble 0.0.236 kept them all, so a host
        that restarted on the same port stayed connected and its peer stopped advertising."""
        self.le_legacy_advertiser.stop()
        for advertising_set in self.advertising_sets.values():
            advertising_set.stop()
        self.advertising_sets.clear()
        self.le_scan_enable = False
        self.pending_le_connection = None
        for connection in list(self.le_connections.values()):
            connection.send_ll_control_pdu(ll.TerminateInd(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR))
        self.le_connections.clear()
        return super().on_hci_reset_command(command)

    def on_hci_le_create_connection_cancel_command(self, command):
        """LE Create Connection Cancel (Core Vol 4 Part E 7.8.13): the pending attempt ends with
        LE Connection Complete, status Unknown Connection Identifier (0x02), after the Command
        Complete; Command Disallowed without one.  Stock Bumble 0.0.236 answered success and
        kept the attempt, so the host's next LE Create Connection was disallowed."""
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        asyncio.get_running_loop().call_soon(self.send_hci_packet, hci.HCI_LE_Connection_Complete_Event(
            status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, connection_handle=0,
            role=hci.Role.CENTRAL, peer_address_type=pending.peer_address_type,
            peer_address=pending.peer_address, connection_interval=0, peripheral_latency=0,
            supervision_timeout=0, central_clock_accuracy=0))
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_le_set_extended_scan_parameters_command(self, command):
        if command.scan_types:
            self.le_scan_type = command.scan_types[0]
        return super().on_hci_le_set_extended_scan_parameters_command(command)

    def on_hci_le_set_extended_scan_enable_command(self, command):
        self.extended_scan = True
        return super().on_hci_le_set_extended_scan_enable_command(command)

    def on_advertising_pdu(self, pdu):
        adv_set = None
        if not self.stock_reports and isinstance(pdu, (ll.AdvExtInd, ll.AdvInd)):
            adv_set = self.link.advertising_set_of(pdu.advertiser_address)
        if adv_set is None or adv_set.parameters is None:
            return super().on_advertising_pdu(pdu)
        props = int(adv_set.parameters.advertising_event_properties)
        connectable, scannable, legacy = bool(props & 1), bool(props & 2), bool(props & 0x10)
        if self.le_scan_enable:
            self._report(pdu, props & 0x1F, bytes(pdu.data), False)
            if scannable and self.le_scan_type == 1:
                self._report(pdu, props & 0x1F, bytes(adv_set.scan_response_data), True)
        pending = self.pending_le_connection
        if connectable and pending and pending.peer_address == pdu.advertiser_address:
            self.create_le_connection(pdu.advertiser_address)

    def _report(self, pdu, props, data, scan_response):
        address = pdu.advertiser_address
        if self.extended_scan:
            event_type = props | (0x08 if scan_response else 0)
            report = hci.HCI_LE_Extended_Advertising_Report_Event.Report(
                event_type=event_type,
                address_type=address.address_type,
                address=address,
                primary_phy=hci.Phy.LE_1M,
                secondary_phy=0,
                advertising_sid=0xFF if props & 0x10 else pdu.sid,
                tx_power=0x7F,
                rssi=-50,
                periodic_advertising_interval=0,
                direct_address_type=0,
                direct_address=hci.Address.ANY,
                data=data,
            )
            self.send_hci_packet(hci.HCI_LE_Extended_Advertising_Report_Event([report]))
        else:
            T = hci.HCI_LE_Advertising_Report_Event.EventType
            if scan_response:
                event_type = T.SCAN_RSP
            elif props & 1:
                event_type = T.ADV_IND
            elif props & 2:
                event_type = T.ADV_SCAN_IND
            else:
                event_type = T.ADV_NONCONN_IND
            report = hci.HCI_LE_Advertising_Report_Event.Report(
                event_type=event_type,
                address_type=address.address_type,
                address=address,
                data=data,
                rssi=-50,
            )
            self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))


def make_device(link, name, address):
    controller = Controller(name, link=link)
    host = Host(controller, AsyncPipeSink(controller))
    device = Device(name=name, address=hci.Address(address), host=host)
    return device


def static_address(index):
    """Random static address: two top bits set, distinct per index."""
    return "C%X:B1:E0:%02X:%02X:%02X" % (index >> 24 & 0xF, index >> 16 & 0xFF, index >> 8 & 0xFF, index & 0xFF)


# Invalid Heart Rate Measurement values (`--hr-invalid`), each with why it is invalid.  Every one is
# rejected by a decoder that follows Heart Rate Service 3.1 (rawble's included).
INVALID_VALUES = [
    (bytes.fromhex("1048"), "rr-missing"),      # u8 rate, RR-Interval flag, no RR-Interval
    (b"", "empty"),                             # zero-length value: not even the flags
    (bytes.fromhex("0148"), "rate-u16-short"),  # u16 rate flag, one byte of rate
    (bytes.fromhex("08480c"), "energy-short"),  # energy flag, one byte of energy
    (bytes.fromhex("104852"), "rr-odd"),        # RR flag, 1 byte of RR (intervals are 2 bytes)
    (bytes.fromhex("1148"), "rate-u16-short"),  # u16 rate + RR flags, one byte in all
]


class AppendLog:
    """A JSON-lines file opened for each line (as the strap always did): a test may replace the file."""

    def __init__(self, path):
        self.path = path

    def write(self, entry):
        if self.path:
            with open(self.path, "a") as f:
                f.write(json.dumps(entry) + "\n")


class RealisticScript:
    """A deterministic (seeded) workout with the RR series of a real person: rate drifting smoothly
    between ~60 and ~150 bpm (a new effort level every 45 s), contact detected, RR-Intervals that
    add up to the time each value covers (one value = 1 s of the session whatever `--hr-interval`
    is), energy expended (kJ) in every 10th value.

    Each normal RR is the mean RR of the rate (60/rate) plus respiratory sinus arrhythmia (a
    sinusoid of the breathing rate, 0.25 Hz at rest to ~0.37 Hz at 150 bpm), a 0.1 Hz Mayer wave and
    a little noise, all scaled by the cube of the mean RR: RMSSD of the normal beats ~50 ms at
    55-70 bpm, ~9 ms at 140 bpm and above (seeded 10-hour runs: 49-51 ms, 9.2-9.7 ms).  Artifacts (`artifacts_per_hour`, default 30 = one per 2 minutes on average, 0 = none;
    `--hr-artifacts`), a third each, chosen per beat with a probability proportional to its length:
    a missed beat (one RR spanning two beats), an extra beat (one RR split in two, at 35-65 %), an
    ectopic beat (a premature RR of 55-75 % of the normal one, then a compensatory pause: the two
    add up to two normal RRs).  Each keeps the RR sum equal to the time covered.  The value's bpm
    is the strap's smoothed rate: 60 / the mean RR of the second's beats (the last beat's when
    none ended in it), held within 60-150 bpm (a strap's plausibility limit).
    `last_kinds` says what each RR of the last value is ("normal", "missed", "extra", "ectopic",
    "compensatory"); `artifacts` counts them by kind.  Memory stays flat: the last value, the
    planned beats (at most two) and the last beat."""

    RATE_RANGE = (60.0, 150.0)

    def __init__(self, seed, artifacts_per_hour=30.0):
        import random
        self.seed = seed
        self.artifacts_per_hour = max(0.0, float(artifacts_per_hour))
        self.random = random.Random(seed)
        self.generated = 0  # values made so far; only the last is kept (memory stays flat)
        self.last = None
        self.last_kinds = []
        self.rate = 68.0
        self.target = 68.0
        self.phase = 0  # 1/1024 s since the last R-wave sent
        self.energy = 0.0
        self.breathing = self.random.random()  # phases, in turns
        self.mayer = self.random.random()
        self.planned = []  # (interval in 1/1024 s, kind): the next beat, or an artifact's two
        self.last_beat = None  # the last RR sent, for a second without beats
        self.artifacts = {"missed": 0, "extra": 0, "ectopic": 0}

    def reset_energy(self):
        self.energy = 0.0

    def value(self, index):
        """(bpm, energy or None, RR list) of the index-th second; asked in increasing order."""
        if index < self.generated - 1:
            self.__init__(self.seed, self.artifacts_per_hour)  # going back: replay from the start
        while self.generated <= index:
            self.last = self._step(self.generated)
            self.generated += 1
        return self.last

    def _normal(self):
        """One normal RR in 1/1024 s: mean RR, breathing and Mayer waves and noise, scaled by mean RR cubed."""
        import math
        mean = 60.0 / self.rate
        scale = mean ** 3
        effort = min(1.0, max(0.0, (self.rate - 60) / 110))
        seconds = (mean + (0.008 + 0.060 * scale) * math.sin(2 * math.pi * self.breathing)
                   + (0.005 + 0.020 * scale) * math.sin(2 * math.pi * self.mayer)
                   + self.random.gauss(0, 0.003 + 0.010 * scale))
        units = min(2048, max(256, int(round(seconds * 1024))))
        self.breathing = (self.breathing + (0.25 + 0.15 * effort) * units / 1024) % 1.0
        self.mayer = (self.mayer + 0.1 * units / 1024) % 1.0
        return units

    def _plan(self):
        """The next beat, or an artifact's beats (made of one or two normal beats: time stays covered)."""
        r = self.random
        first = self._normal()
        chance = self.artifacts_per_hour / 3600 * first / 1024
        if chance <= 0 or r.random() >= chance:
            self.planned.append((first, "normal"))
            return
        kind = r.random() * 3
        if kind < 1:
            self.planned.append((first + self._normal(), "missed"))
            self.artifacts["missed"] += 1
        elif kind < 2:
            part = int(round(first * (0.35 + 0.3 * r.random())))
            self.planned += [(part, "extra"), (first - part, "extra")]
            self.artifacts["extra"] += 1
        else:
            second = self._normal()
            premature = int(round(first * (0.55 + 0.2 * r.random())))
            self.planned += [(premature, "ectopic"), (first + second - premature, "compensatory")]
            self.artifacts["ectopic"] += 1

    def _step(self, index):
        r = self.random
        if index % 45 == 0:  # a new effort level every 45 s
            self.target = r.uniform(60, 150)
        low, high = self.RATE_RANGE
        self.rate += (self.target - self.rate) * 0.04 + r.gauss(0, 0.3)
        self.rate = min(high, max(low, self.rate))
        # The beats that end in this second.
        rr, kinds = [], []
        self.phase += 1024
        while True:
            if not self.planned:
                self._plan()
            interval, kind = self.planned[0]
            if self.phase < interval:
                break
            self.planned.pop(0)
            self.phase -= interval
            rr.append(interval)
            kinds.append(kind)
        if rr:
            self.last_beat = rr[-1]
        window = rr or ([self.last_beat] if self.last_beat else [])
        bpm = 60 * 1024 * len(window) / sum(window) if window else self.rate
        bpm = int(round(min(high, max(low, bpm))))
        self.energy += self.rate * 0.007  # ~0.4-1 kJ/s
        energy = min(0xFFFF, int(self.energy)) if index % 10 == 0 else None
        self.last_kinds = kinds[:9]
        return bpm, energy, rr[:9]  # 9 RR fit a 23-byte MTU with energy


def realistic_summary(seed, seconds, artifacts_per_hour):
    """The realistic script's figures over `seconds` of session (`--hr-summary`): RMSSD of normal
    beats at rest (55-70 bpm) and at 140 bpm and above, artifacts by kind and per hour, the RR
    sum against the time covered, and how many values' bpm is 60 / their beats' mean RR."""
    script = RealisticScript(seed, artifacts_per_hour)
    beats, total, agreeing, with_beats, longest_value = [], 0, 0, 0, 0
    squares = {"rest": [0.0, 0], "high": [0.0, 0]}
    previous = None
    for index in range(seconds):
        bpm, energy, rr = script.value(index)
        longest_value = max(longest_value, len(encode_hrm(bpm, "detected", energy, rr)))
        total += sum(rr)
        if rr and all(kind == "normal" for kind in script.last_kinds):
            with_beats += 1
            low, high = RealisticScript.RATE_RANGE
            expected = int(round(min(high, max(low, 60 * 1024 * len(rr) / sum(rr)))))
            agreeing += bpm == expected
        for interval, kind in zip(rr, script.last_kinds):
            if previous is not None and previous[1] == "normal" and kind == "normal":
                rate = 120 * 1024 / (previous[0] + interval)
                band = "rest" if 55 <= rate <= 70 else "high" if rate >= 140 else None
                if band:
                    difference = (interval - previous[0]) * 1000 / 1024
                    squares[band][0] += difference * difference
                    squares[band][1] += 1
            previous = (interval, kind)
    rmssd = {band: (s / n) ** 0.5 if n else None for band, (s, n) in squares.items()}
    return {"seed": seed, "seconds": seconds, "artifactsPerHourAsked": artifacts_per_hour,
            "rmssdRestMs": rmssd["rest"], "restPairs": squares["rest"][1],
            "rmssdHighMs": rmssd["high"], "highPairs": squares["high"][1],
            "artifacts": script.artifacts, "artifactsPerHour": sum(script.artifacts.values()) * 3600 / seconds,
            "rrSeconds": total / 1024, "bpmAgreeing": agreeing, "valuesCompared": with_beats,
            "longestValue": longest_value}


# --strap-encrypted-read: the service and characteristic that need an encrypted link, and its value.
ENCRYPTED_READ_SERVICE = "72617762-6C65-5345-4300-000000000000"
ENCRYPTED_READ_CHARACTERISTIC = "72617762-6C65-5345-4300-000000000001"
ENCRYPTED_READ_VALUE = b"sealed"


class Strap:
    """The Heart Rate strap's GATT server and notification script (see the module docstring)."""

    def __init__(self, device, args):
        self.device, self.args = device, args
        self.task = None
        self.log = AppendLog(args.log)
        self.position = 0  # next entry of the sequence (kept across connections, see `resumes`)
        self.energy_base = None  # test script: last energy sent before a reset (None: no reset)
        self.last_energy = 0
        self.disconnects = 0
        self.realistic = (RealisticScript(args.hr_seed, args.hr_artifacts)
                          if args.hr_script == "realistic" else None)
        self.hrm = gatt.Characteristic(
            "2A37", gatt.Characteristic.Properties.NOTIFY, gatt.Characteristic.Permissions(0), b"",
            descriptors=[self.refusing_cccd()] if args.hr_refuse_cccd else [],
        )
        control_point = gatt.Characteristic(
            "2A39",
            gatt.Characteristic.Properties.WRITE,
            gatt.Characteristic.WRITEABLE,
            gatt.CharacteristicValue(write=self.on_control_point),
        )

        def readable(uuid, value):
            return gatt.Characteristic(
                uuid, gatt.Characteristic.Properties.READ, gatt.Characteristic.READABLE, value
            )

        self.control_point = control_point
        self.body_sensor_location = readable("2A38", bytes([1]))
        device.add_services([
            gatt.Service("180D", [self.hrm, self.body_sensor_location, control_point]),
            gatt.Service("180A", [readable("2A29", b"rawble-sim"), readable("2A24", b"HRM-1")]),
            gatt.Service("180F", [readable("2A19", bytes([87]))]),
        ])
        # --strap-encrypted-read (issue 11, raising security): one more service, last (the
        # handles above do not move), whose characteristic reads only on an encrypted link
        # (Insufficient Encryption, 0x0F, before).  The strap accepts Just Works pairing: Bumble's
        # default pairing config (no input, no output; the delegate accepts).
        if args.strap_encrypted_read:
            device.add_service(gatt.Service(ENCRYPTED_READ_SERVICE, [gatt.Characteristic(
                ENCRYPTED_READ_CHARACTERISTIC, gatt.Characteristic.Properties.READ,
                gatt.Characteristic.READ_REQUIRES_ENCRYPTION, ENCRYPTED_READ_VALUE)]))
        device.on("characteristic_subscription", self.on_subscription)

    @property
    def resumes(self):
        """Whether a new subscription continues the sequence (else it starts again at 0)."""
        return self.args.hr_disconnect_after is not None or self.realistic is not None

    def settings(self):
        """The strap's heart-rate options, for the ready line."""
        a = self.args
        return {"script": a.hr_script, "count": a.hr_count, "interval": a.hr_interval,
                "seed": a.hr_seed, "artifacts": a.hr_artifacts, "disconnectAfter": a.hr_disconnect_after,
                "disconnects": a.hr_disconnects, "invalid": a.hr_invalid,
                "refuseCCCD": a.hr_refuse_cccd, "silent": a.hr_silent,
                "handles": {"measurement": self.hrm.handle, "measurementCCCD": self.hrm.handle + 1,
                            "bodySensorLocation": self.body_sensor_location.handle,
                            "controlPoint": self.control_point.handle}}

    def refusing_cccd(self):
        def write(connection, value):
            self.log.write({"kind": "cccd-refused", "time": time.time(), "value": bytes(value).hex()})
            raise att.ATT_Error(0xFD)  # Client Characteristic Configuration Descriptor Improperly Configured

        return gatt.Descriptor(
            gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
            gatt.Descriptor.READABLE | gatt.Descriptor.WRITEABLE,
            gatt.CharacteristicValue(read=lambda connection: bytes([0, 0]), write=write),
        )

    def on_control_point(self, connection, value):
        if bytes(value) == b"\x01":
            if self.realistic:
                self.realistic.reset_energy()
            self.energy_base = self.last_energy
            self.log.write({"kind": "energy-reset", "time": time.time(), "position": self.position})
            log.info("control point: energy expended reset")
            return
        self.log.write({"kind": "control-point-refused", "time": time.time(), "value": bytes(value).hex()})
        raise att.ATT_Error(0x80)

    def on_subscription(self, connection, characteristic, notify_enabled, indicate_enabled):
        if characteristic is not self.hrm:
            return
        self.log.write({"kind": "subscription", "time": time.time(), "notify": bool(notify_enabled),
                        "indicate": bool(indicate_enabled)})
        if self.task is not None:
            self.task.cancel()
            self.task = None
        if notify_enabled and not self.args.hr_silent:
            if not self.resumes:
                self.position = 0
            self.task = asyncio.create_task(self.notify(connection))

    def length(self):
        """Entries in the whole sequence (valid ones plus interleaved invalid ones); None = endless."""
        count = self.args.hr_count
        if count <= 0 and self.realistic:
            return None
        if count <= 0:
            return 0
        return count + (count // 2 if self.args.hr_invalid else 0)

    def entry(self, position):
        """(value, valid index or None, why invalid or None) at `position` of the sequence.
        With `--hr-invalid` one invalid value follows every even-indexed valid one (0, 2, 4...)
        unless it is the last: valid 0, invalid 0, valid 1, valid 2, invalid 1, valid 3, ..."""
        if self.args.hr_invalid:
            group, offset = divmod(position, 3)
            if offset == 1:
                value, why = INVALID_VALUES[group % len(INVALID_VALUES)]
                return value, None, why
            index = 2 * group + (1 if offset == 2 else 0)
        else:
            index = position
        return self.valid_value(index), index, None

    def valid_value(self, index):
        if self.realistic:
            bpm, energy, rr = self.realistic.value(index)  # a reset zeroed its accumulator
            return encode_hrm(bpm, "detected", energy, rr)
        bpm, contact, energy, rr = DEFAULT_SCRIPT[index % len(DEFAULT_SCRIPT)]
        shift = index // len(DEFAULT_SCRIPT)
        if energy is not None and self.energy_base is not None:
            energy = max(0, energy - self.energy_base) if energy != 0xFFFF else energy
        return encode_hrm(min(bpm + shift, 0xFFFF), contact, energy, rr)

    async def notify(self, connection):
        a = self.args
        on_this_connection = 0
        # Deadline-paced: value n of this subscription is due at start + n * interval, and a loop
        # that falls behind catches up without sleeping, so the strap really reaches the rate
        # asked (a plain sleep per value never exceeded ~570/s at a 1 ms interval here).
        start = time.monotonic()
        try:
            while True:
                total = self.length()
                if total is not None and self.position >= total:
                    break
                value, index, why = self.entry(self.position)
                await self.device.notify_subscriber(connection, self.hrm, value)
                entry = {"time": time.time(), "value": value.hex(), "position": self.position}
                if why is None:
                    entry["index"] = index
                    if value[0] & 0x08:
                        self.last_energy = struct.unpack_from("<H", value, 2 if value[0] & 1 == 0 else 3)[0]
                else:
                    entry["invalid"] = why
                self.log.write(entry)
                self.position += 1
                on_this_connection += 1
                more = total is None or self.position < total
                if (more and a.hr_disconnect_after is not None and on_this_connection >= a.hr_disconnect_after
                        and (a.hr_disconnects == 0 or self.disconnects < a.hr_disconnects)):
                    self.disconnects += 1
                    self.log.write({"kind": "disconnect", "time": time.time(), "after": self.position,
                                    "onConnection": on_this_connection,
                                    "reason": hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR})
                    log.info("strap: disconnecting after %d notifications", self.position)
                    await connection.disconnect(reason=hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR)
                    return
                delay = start + on_this_connection * a.hr_interval - time.monotonic()
                # Behind schedule: still yield once, so the link and the log get their turn.
                await asyncio.sleep(delay if delay > 0 else 0)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the link went away
            log.info("heart rate notifications stopped: %s", error)


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
        advertising_interval_min=interval_ms,
        advertising_interval_max=interval_ms,
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


async def serve_controller(args, link, index, public_address):
    """The index-th controller served to an outside host (0 = `--port`/`--unix`; the others on
    free TCP ports, or `--unix` PATH.2, PATH.3 ...): (transport, its name, the controller)."""
    if args.unix:
        path = args.unix if index == 0 else f"{args.unix}.{index + 1}"
        if os.path.exists(path):
            os.unlink(path)
        transport = await open_transport(f"unix-server:{path}")
        transport_name = f"unix:{path}"
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit this.  asyncio's own TCP_NODELAY skips sockets made with
        # proto 0, and with Nagle on, a response written right after an event waits for the
        # host's delayed ACK: every ATT round trip took ~44 ms instead of ~2 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", args.port if index == 0 else 0))
        transport = await open_tcp_server_transport_with_socket(sock)
        transport_name = f"tcp:127.0.0.1:{sock.getsockname()[1]}"
    scanner = ScannerController("host" if index == 0 else f"host{index + 1}", host_source=transport.source,
                                host_sink=transport.sink, link=link, public_address=public_address)
    scanner.stock_reports = args.stock_reports
    if args.extended_controller:
        # Bumble's controller implements the extended advertising, scanning and connection
        # commands but does not list them: listed, the kernel and rawble use them as with a
        # Bluetooth 5 adapter.
        scanner.supported_commands = set(scanner.supported_commands) | EXTENDED_CONTROLLER_COMMANDS
    if args.legacy_controller:
        # A Bluetooth 4.2 controller: no LE Extended Advertising feature, and none of the
        # extended advertising, scanning or connection commands (0x2036-0x2043) in its table.
        scanner.le_features = scanner.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        scanner.supported_commands = {op for op in scanner.supported_commands if not 0x2036 <= op <= 0x2043}
    link.scanners.append(scanner)
    return transport, transport_name, scanner


def controller_addresses(args):
    """The public address of each served controller: `--controller-address` in order, then the
    defaults (one port: Bumble's 00:00:00:00:00:00; several: 52:41:57:42:4C:0k, distinct, so a
    host advertising or connecting from its public address is found on the link)."""
    given = args.controller_address or []
    if args.ports == 1:
        return [given[0] if given else None]
    return [given[k] if k < len(given) else "52:41:57:42:4C:%02X" % (k + 1) for k in range(args.ports)]


async def run(args, finish, holder):
    link = ScannerLink()
    transports, names, served = [], [], []
    for index, address in enumerate(controller_addresses(args)):
        transport, transport_name, scanner = await serve_controller(args, link, index, address)
        transports.append(transport)
        names.append(transport_name)
        served.append(scanner)
    transport_name = names[0]

    devices, described, keep = [], [], []
    if not args.no_standard or args.strap_only:
        strap_ad = ad(
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<HH", 0x180D, 0x180F)),
            (AdvertisingData.COMPLETE_LOCAL_NAME, b"rawble-strap"),
        )
        strap_device = make_device(link, "rawble-strap", static_address(1))
        strap = Strap(strap_device, args)
        keep.append(strap)
        await strap_device.power_on()
        await strap_device.start_advertising(
            advertising_data=strap_ad, advertising_interval_min=50, advertising_interval_max=50,
            auto_restart=True,
        )
        described.append(describe(strap_device, True, True, name="rawble-strap", advertisedName="rawble-strap",
                                  completeName=True, services=["180D", "180F"], flags=6,
                                  advertisingData=strap_ad.hex(), scanResponseData="",
                                  heartRate=strap.settings()))
        devices.append(strap_device)

    if not args.no_standard and not args.strap_only:

        beacon_ad = ad(
            (AdvertisingData.FLAGS, bytes([0x04])),
            (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, struct.pack("<H", BEACON_COMPANY) + BEACON_DATA),
            (AdvertisingData.TX_POWER_LEVEL, struct.pack("<b", BEACON_TX_POWER)),
            (AdvertisingData.SHORTENED_LOCAL_NAME, b"rawble-b"),
        )
        beacon = await start_peripheral(link, 2, "rawble-beacon", beacon_ad, connectable=False,
                                        scannable=False, interval_ms=50)
        described.append(describe(beacon, False, False, name="rawble-beacon", advertisedName="rawble-b", completeName=False,
                                  flags=4, txPower=BEACON_TX_POWER,
                                  manufacturerData=[{"company": BEACON_COMPANY, "data": BEACON_DATA.hex()}],
                                  advertisingData=beacon_ad.hex(), scanResponseData=""))

        thermo_ad = ad(
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, bytes(UUID(THERMO_SERVICE_128))),
            (AdvertisingData.SERVICE_DATA_16_BIT_UUID, struct.pack("<H", 0x181A) + THERMO_SERVICE_DATA),
            (AdvertisingData.APPEARANCE, struct.pack("<H", THERMO_APPEARANCE)),
        )
        thermo_rsp = ad((AdvertisingData.COMPLETE_LOCAL_NAME, b"rawble-thermo"))
        thermo = await start_peripheral(link, 3, "rawble-thermo", thermo_ad, connectable=True,
                                        scan_response=thermo_rsp, interval_ms=50)
        described.append(describe(thermo, True, True, name="rawble-thermo", advertisedName="rawble-thermo", completeName=True,
                                  nameInScanResponse=True, flags=6,
                                  services=[THERMO_SERVICE_128.upper()],
                                  serviceData=[{"uuid": "181A", "data": THERMO_SERVICE_DATA.hex()}],
                                  appearance=THERMO_APPEARANCE,
                                  advertisingData=thermo_ad.hex(), scanResponseData=thermo_rsp.hex()))

        broken_ad = bytes([9, 0x08]) + b"rawble-b" + bytes([0x0A, 0xFF, 0x59, 0x00, 0x01])
        broken = await start_peripheral(link, 4, "rawble-broken", broken_ad, connectable=True,
                                        interval_ms=50)
        described.append(describe(broken, True, True, name="rawble-broken", advertisedName="rawble-b", completeName=False,
                                  malformed=True, advertisingData=broken_ad.hex(),
                                  scanResponseData=""))
        devices += [beacon, thermo, broken]

    if args.lab:
        lab_ad = ad(
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, bytes(UUID(LAB_SERVICE_128))),
        )
        lab_rsp = ad((AdvertisingData.COMPLETE_LOCAL_NAME, b"rawble-lab"))
        lab_device = make_device(link, "rawble-lab", static_address(5))
        lab = Lab(lab_device, args)
        keep.append(lab)
        await lab_device.power_on()
        await lab_device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
            advertising_data=lab_ad, scan_response_data=lab_rsp,
            advertising_interval_min=20, advertising_interval_max=20, auto_restart=True,
        )
        described.append(describe(lab_device, True, True, name="rawble-lab", advertisedName="rawble-lab",
                                  completeName=True, nameInScanResponse=True, flags=6,
                                  services=[LAB_SERVICE_128.upper()],
                                  advertisingData=lab_ad.hex(), scanResponseData=lab_rsp.hex(),
                                  gatt=describe_gatt(lab_device.gatt_server), handles=lab.handles(),
                                  stream={"count": args.stream_count, "rate": args.stream_rate,
                                          "size": max(4, args.stream_size)}))
        devices.append(lab_device)

    # Extra advertisers: interval grows with their number so the link carries ~1000 PDUs/s.
    extra_interval = max(100, args.extra)
    extras = []
    for i in range(1, args.extra + 1):
        name = "rawble-adv-%04d" % i
        data = ad((AdvertisingData.FLAGS, bytes([0x06])), (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()))
        extras.append((name, data, start_peripheral(link, 0x1000 + i, name, data, interval_ms=extra_interval)))
    for first in range(0, len(extras), 100):  # power on concurrently, 100 at a time
        batch = extras[first:first + 100]
        started = await asyncio.gather(*(start for _, _, start in batch))
        for (name, data, _), d in zip(batch, started):
            devices.append(d)
            described.append(describe(d, True, True, name=name, advertisedName=name, completeName=True,
                                      advertisingData=data.hex(), scanResponseData=""))

    central_devices = []
    if args.central is not None:
        # Bumble's GATT client (bumble_central.py), each central on its own controller of the link.
        for number, address in enumerate(bumble_central.central_addresses(args), start=1):
            controller = ScannerController(f"central{number}", link=link)
            link.scanners.append(controller)
            device = Device(name=f"bumble-central-{number}", address=hci.Address(address),
                            host=Host(controller, AsyncPipeSink(controller)))
            await device.power_on()
            central_devices.append(device)

    ready = {"ready": True, "transport": transport_name, "transports": names,
             "controllers": [{"transport": name, "publicAddress": str(c.public_address).split("/")[0]}
                             for name, c in zip(names, served)],
             "pid": os.getpid(), "log": args.log, "devices": described}
    if args.lab:
        ready["writeLog"] = args.write_log or args.log
        ready["streamLog"] = args.stream_log or args.log
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    log.info("ready: %d devices on %s", len(described), transport_name)
    if central_devices:
        holder["central"] = bumble_central.Centrals(central_devices, args, finish)
        keep.append(asyncio.ensure_future(holder["central"].run()))
    if args.announce:
        strap_address = static_address(1)
        sys.stderr.write(
            f"sim-strap: a simulated heart-rate strap (rawble-strap, {strap_address}) is serving H4 on "
            f"{transport_name}. Connect with:\n    rawble hr --transport {transport_name}\n"
            "Stop it with Ctrl-C.\n")
        sys.stderr.flush()
    return transports, devices, keep


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bumble-peer", description="Bumble virtual controller + LE peripherals for rawble tests", allow_abbrev=False)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = any free)")
    where.add_argument("--unix", help="unix socket path to serve H4 on")
    parser.add_argument("--log", help="append each Heart Rate value sent as a JSON line")
    parser.add_argument("--ports", type=int, default=1, metavar="N",
                        help="serve N controllers on the one link, each to its own host: the first on --port "
                             "(or --unix PATH), the others on free TCP ports (or PATH.2, PATH.3 ...); the ready "
                             "line's \"transports\" lists them in order")
    parser.add_argument("--controller-address", metavar="XX:XX:XX:XX:XX:XX", action="append",
                        help="public address of the controller the host drives; repeat for the second, "
                             "third ... port (default with one port 00:00:00:00:00:00, Bumble's: the Linux "
                             "kernel refuses to raise an adapter with it; with several 52:41:57:42:4C:0k)")
    parser.add_argument("--extended-controller", action="store_true",
                        help="the host's controller lists the LE extended advertising, scanning and "
                             "connection commands it implements (a Bluetooth 5 controller: hosts use them)")
    parser.add_argument("--legacy-controller", action="store_true",
                        help="the host's controller without LE Extended Advertising (a Bluetooth 4.2 "
                             "controller: legacy scanning, advertising and connection commands only)")
    parser.add_argument("--hr-count", type=int, default=len(DEFAULT_SCRIPT))
    parser.add_argument("--hr-interval", type=float, default=0.25)
    parser.add_argument("--hr-script", choices=["test", "realistic"], default="test",
                        help="strap: the built-in test script, or a seeded realistic session (--hr-count 0 = endless)")
    parser.add_argument("--hr-seed", type=int, default=1, help="strap: seed of the realistic script")
    parser.add_argument("--hr-artifacts", type=float, default=30.0, metavar="PER_HOUR",
                        help="strap: the realistic script's artifacts (missed, extra, ectopic beats) per hour; 0 = none")
    parser.add_argument("--hr-summary", type=int, metavar="SECONDS",
                        help="print the realistic script's figures over SECONDS (--hr-seed, --hr-artifacts) "
                             "as one JSON line and exit: RMSSD at rest and at 140+ bpm, artifacts by kind")
    parser.add_argument("--hr-disconnect-after", type=int, metavar="N",
                        help="strap: disconnect (reason 0x13) after N notifications, advertise, resume the script")
    parser.add_argument("--hr-disconnects", type=int, default=1, metavar="K",
                        help="strap: with --hr-disconnect-after, how many times (0 = after every N)")
    parser.add_argument("--hr-invalid", action="store_true",
                        help="strap: interleave invalid measurements (logged with \"invalid\": why)")
    parser.add_argument("--hr-refuse-cccd", action="store_true",
                        help="strap: answer a write of the measurement's CCCD with ATT error 0xFD")
    parser.add_argument("--hr-silent", action="store_true", help="strap: accept the subscription, never notify")
    parser.add_argument("--strap-encrypted-read", action="store_true",
                        help=f"strap: a last service with {ENCRYPTED_READ_CHARACTERISTIC}, readable only when encrypted "
                             f"(value {ENCRYPTED_READ_VALUE!r}; Just Works pairing accepted)")
    parser.add_argument("--strap-only", action="store_true", help="of the standard devices, only the strap")
    parser.add_argument("--ignore-stdin", action="store_true",
                        help="keep running at stdin EOF (stop with a signal or --lifetime)")
    parser.add_argument("--announce", action="store_true", help="when ready, say on stderr how to connect")
    parser.add_argument("--extra", type=int, default=0)
    parser.add_argument("--no-standard", action="store_true")
    parser.add_argument("--lifetime", type=float, default=300.0)
    parser.add_argument("--stock-reports", action="store_true",
                        help="Bumble's own advertising reports (all connectable, no scan response data)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--lab", action="store_true", help="also run rawble-lab, the GATT test device")
    parser.add_argument("--write-log", help="lab: append each completed write (default: --log)")
    parser.add_argument("--stream-log", help="lab: append each stream value sent (default: --log)")
    parser.add_argument("--stream-count", type=int, default=5000)
    parser.add_argument("--stream-rate", type=float, default=1000.0, help="Hz; 0 = as fast as possible")
    parser.add_argument("--stream-size", type=int, default=20, help="bytes per value (>= 4)")
    parser.add_argument("--no-stream-log-values", dest="stream_log_values", action="store_false",
                        help="lab: log only the per-run summary line, not every stream value")
    parser.add_argument("--service-changed-after", type=float,
                        help="lab: S s after a connection, append a service and indicate Service Changed")
    bumble_central.add_arguments(parser)
    args = parser.parse_args(argv)
    bumble_central.check_arguments(parser, args)
    if args.hr_disconnect_after is not None and args.hr_disconnect_after < 1:
        parser.error("--hr-disconnect-after must be at least 1")
    if args.hr_disconnects < 0 or args.hr_count < 0 or args.hr_interval < 0:
        parser.error("--hr-disconnects, --hr-count and --hr-interval cannot be negative")
    if not 0 <= args.hr_artifacts < float("inf"):
        parser.error("--hr-artifacts must be a number of artifacts per hour, 0 or more")
    if args.hr_summary is not None:
        if args.hr_summary < 1:
            parser.error("--hr-summary needs at least 1 second")
        sys.stdout.write(json.dumps(realistic_summary(args.hr_seed, args.hr_summary, args.hr_artifacts)) + "\n")
        return 0
    if args.extended_controller and args.legacy_controller:
        parser.error("--extended-controller and --legacy-controller exclude each other")
    if not 1 <= args.ports <= 16:
        parser.error("--ports must be between 1 and 16")
    for address in args.controller_address or []:
        parts = address.split(":")
        if len(parts) != 6 or not all(len(p) == 2 and all(c in "0123456789abcdefABCDEF" for c in p) for p in parts):
            parser.error(f"--controller-address {address}: expected six hex bytes, e.g. 00:1B:DC:00:00:01")
    if len(args.controller_address or []) > args.ports:
        parser.error(f"{len(args.controller_address)} --controller-address for {args.ports} port(s)")
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="bumble-peer %(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)

    async def body():
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def finish(why):
            if not done.done():
                log.info("exiting: %s", why)
                done.set_result(why)

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, finish, signal.Signals(sig).name)
        # A launcher's blocked signals are inherited (a test runner's threads block most): the
        # peer started from one would never see the SIGTERM that `kill PID` sends.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
        holder = {"central": None}  # the running Central, once ready (gets stdin's request lines)
        pending = bytearray()

        def on_stdin():
            data = os.read(sys.stdin.fileno(), 4096)
            if not data:
                if args.central is not None:
                    # The central's run ends the process (bounded by its timeout and --lifetime):
                    # `bumble-central ... < /dev/null` runs it whole.
                    loop.remove_reader(sys.stdin.fileno())
                    return
                finish("stdin EOF")
                return
            if args.central is None:
                return
            pending.extend(data)
            while b"\n" in pending:
                line, _, rest = bytes(pending).partition(b"\n")
                pending[:] = rest
                if line.strip() and holder["central"] is not None:
                    holder["central"].request(line.decode("utf-8", "replace"))
            del pending[65536:]  # a line without end is bounded

        try:
            if args.ignore_stdin:
                raise ValueError("stdin ignored")
            loop.add_reader(sys.stdin.fileno(), on_stdin)
        except (OSError, ValueError, NotImplementedError):
            pass
        loop.call_later(args.lifetime, finish, "lifetime over")
        setup = asyncio.ensure_future(run(args, finish, holder))
        await asyncio.wait([setup, done], return_when=asyncio.FIRST_COMPLETED)
        if not setup.done():
            setup.cancel()
            return 1
        try:
            setup.result()
        except OSError as error:  # e.g. the port is taken
            sys.stderr.write(f"bumble-peer: cannot serve H4: {error} (another peer running? pick another --port)\n")
            return 1
        await done
        central = holder["central"]
        if args.unix:
            for path in [args.unix] + [f"{args.unix}.{k}" for k in range(2, args.ports + 1)]:
                if os.path.exists(path):
                    os.unlink(path)
        return 1 if central is not None and central.failed else 0

    return asyncio.run(body())


if __name__ == "__main__":
    sys.exit(main())
