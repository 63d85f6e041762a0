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
                 sequence, i: index of the valid value; invalid ones carry "invalid": why instead;
                 with --log-sent-clock also "sent": CLOCK_MONOTONIC s just before the notification).
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
                     encrypted link (Insufficient Encryption 0x0F before); any pairing accepted.
                   --strap-authenticated-read: in that service, after ...0001 (or alone in it),
                     a characteristic ...0002 (value "attested") readable only on a link
                     encrypted with an AUTHENTICATED key (Passkey Entry or Numeric Comparison,
                     at pairing or from such a bond): Insufficient Authentication 0x05 before
                     encryption and with a Just Works key.  Handles: ready line, heartRate.handles
                     "encryptedRead" / "authenticatedRead" (earlier handles never move).
                 Strap pairing (issue 24; bumble_fixture/pairing.py).  The strap is always a
                 Bumble SMP responder; the options shape its answers (all off by default):
                   --strap-io none|display|keyboard|yesno|keyboard-display: IO capability
                     (default none = NoInputNoOutput: Just Works whatever the central has).
                   --strap-legacy: no LE Secure Connections bit (LE legacy pairing).
                   --strap-mitm: the MITM bit (before this option the strap always set it, as
                     Bumble does by default; with NoInputNoOutput it never changed the method).
                   --strap-no-bonding: the Bonding bit clear, NO keys distributed either way
                     (Initiator/Responder Key Distribution 0) and no bond kept.
                   --strap-passkey N (0-999999): the passkey it displays when it displays, and
                     enters when it must type (000000 works: the fixture's SMP session replaces
                     the Bumble code that stalled on it).  Without it: a random one displayed;
                     when it must type, it logs {"kind": "passkey-requested", "timeout": 30} and
                     waits up to 30 s for the test to type one on stdin: the line
                     {"strap": {"passkey": N}} (null: refuses); none typed: Pairing Failed 0x01
                     (Passkey Entry Failed).  A strap line it cannot read is logged as
                     {"kind": "request-refused", "line", "message"}.
                   --strap-reject-comparison: numeric comparison answered no (Pairing Failed
                     0x0C, Numeric Comparison Failed; stock Bumble would send 0x04).
                   --strap-security-request: an SMP Security Request (AuthReq from the options:
                     bonding, MITM, SC bits) as soon as a central connects.
                   --strap-privacy: advertises from a resolvable private address made from its
                     IRK (the ready line's "address" is the first one; identityAddress stays
                     C0:B1:E0:00:00:01); --strap-rpa-period S: a new one every S s while no
                     central is connected (logged as {"kind": "rpa", "address"}, the first one
                     too).  Bumble 0.0.236's own rotation (le_rpa_timeout) never rotates a device
                     that advertises, and sets the old address again: the strap rotates itself
                     (stop advertising, LE Set Random Address, advertise again).
                 Keys the strap distributes (when both sides bond; the intersection with what the
                 central asks): EncKey (legacy only: its LTK with a RANDOM EDIV and Rand; with LE
                 Secure Connections the bit sends nothing) and IdKey: its IRK (fixed, the 16 ASCII
                 bytes "rawble-strap-irk" as a big-endian number: 726177626c652d73747261702d69726b)
                 and its identity address C0:B1:E0:00:00:01 (random static).  It takes EncKey
                 and IdKey from the central when offered; SignKey neither way.
                 Bonds: in memory for the process's life.  A central that bonded reconnects and
                 encrypts without pairing: the strap answers the LTK request with its key of the
                 bond, found by EDIV and Rand (legacy) or by the central's identity address, the
                 address it paired from, or its IRK resolving the address it connects from (LE
                 Secure Connections: EDIV = Rand = 0); else a negative reply (the central's
                 encryption then fails with 0x06).  A wrong key drops the link with reason 0x3D
                 (MIC failure; Bumble's virtual link compares the two LTKs).
                 Security log lines (in --log, with "kind" and "time"):
                   {"kind": "pairing", "role": "peripheral", "method": "just-works"|"passkey"|
                    "numeric-comparison"|"oob", "secureConnections": B, "authenticated": B (not
                    Just Works), "bonding": B (both asked), "keySize": n (the smaller Maximum
                    Encryption Key Size of the two pairing PDUs; Bumble does not negotiate, it
                    always offers 16), "ltk": HEX|null, "ediv": n, "rand": n, "peerIrk": HEX
                    (only if the central distributed one), "peerAddress": its identity address
                    (else the address it paired from), "peerAddressType": "public"|"random",
                    "peerConnectionAddress": the address it paired from, "keysSent": n,
                    "keysReceived": n (the negotiated Key Distribution bits: 1 EncKey, 2 IdKey,
                    4 SignKey, 8 LinkKey), "passkey": n (Passkey Entry only); legacy also
                    "stk": HEX, "centralLtk": HEX|null, "centralEdiv": n, "centralRand": n}
                     "ltk"/"ediv"/"rand" name the key that encrypts a later link with the SAME
                     roles (central encrypts, peripheral answers): LE Secure Connections: the
                     pairing's LTK, EDIV 0, Rand 0; legacy: the LTK the PERIPHERAL distributed
                     (null if it sent none).  "centralLtk"...: the LTK the central distributed
                     (legacy; for links with the roles reversed).  The same record comes from
                     bumble_central.py (as {"event": "pairing", "role": "central", ...}).
                   {"kind": "pairing-failed", "reason": n}  (SMP reason, sent or received)
                   {"kind": "encryption", "enabled": B, "authenticated": B, "keySize": n,
                    "key": "pairing"|"bond", "refresh": true (a key refresh only)}
                   {"kind": "encryption-failed", "status": n}  (the central side; the strap's own
                    controller reports nothing after it answers an LTK request negatively)
                   {"kind": "ltk-request", "ediv": n, "rand": n, "answer": "pairing"|"bond"|"none"}
                   {"kind": "passkey-displayed", "passkey": n}, {"kind": "passkey-requested",
                    "timeout": s}, {"kind": "passkey-entered", "passkey": n|null},
                   {"kind": "comparison", "number": n, "accepted": B}
                   {"kind": "security-request-sent", "authReq": n}
                   {"kind": "disconnection", "reason": n}  (only links where SMP or encryption
                    happened: e.g. 61 = 0x3D MIC failure)
                   {"kind": "rpa", "address": A}  (--strap-privacy)
                   {"kind": "smp-received", "code": n}, {"kind": "attack", "step": S, ...}
                    (--strap-fault with an attack: every SMP command received, and each step of
                    the attack; bumble_fixture/pairing.py's ATTACKS)
                 BYTE ORDER: every 128-bit value (ltk, stk, centralLtk, peerIrk, the ready line's
                 irk) is 32 lower-case hex digits of the key as ONE BIG-ENDIAN NUMBER (most
                 significant byte first, as the specification prints keys and as Swift prints a
                 UInt128 with radix 16): the reverse of the bytes on the air and in HCI.  "rand" is
                 the 64-bit Rand as a number (the air's 8 bytes read little-endian), "ediv" the
                 16-bit EDIV as a number.  The ready line's strap entry has "pairing": the options
                 ("io", "secureConnections", "mitm", "bonding", "passkey", "rejectComparison",
                 "securityRequest", "privacy", "rpaPeriod") and its identity ("irk",
                 "identityAddress", "identityAddressType").
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
  rawble-strap-NN  (`--straps N`, 1-20; issue 41, several straps at once) N more straps, each a
                 rawble-strap with every strap option, on its own controller of the link: name
                 rawble-strap-01 ... rawble-strap-20, random static address C0:B1:E0:00:01:NN
                 (NN the number's decimal digits: rawble-strap-12 is C0:B1:E0:00:01:12), IRK
                 "rawble-strap-iNN", advertising flags, 180D 180F and its complete name every
                 50 ms.  Its values differ from the others': the test script with bpm + NN, the
                 realistic one seeded --hr-seed + NN.  They are in the ready line's devices after
                 the standard strap (heartRate: "strap": NN, "seed", "bpmOffset", and
                 "disconnectAfter" null for a strap that never drops).  With --strap-only only
                 the N straps are on the link (not rawble-strap); without it, beside the standard
                 devices.  Every strap's --log line (values, disconnects, subscriptions, security
                 steps) carries "strap": its identity address (the standard strap's too:
                 C0:B1:E0:00:00:01), so one log tells the straps apart.
                   --strap-drops LIST (with --hr-disconnect-after N, --hr-disconnects K): only the
                     straps listed (numbers 1-N, 0 = the standard strap) drop the link after N
                     values, K times, resuming where they stopped on the next subscription; the
                     others never drop (without --strap-drops every strap drops).
                   --strap-hostile NUM:KIND (issue 41, bad input; repeatable): strap NUM misbehaves,
                     the others stay as they are.  KIND:
                     flood: once subscribed, the script's valid values, endless (--hr-count
                       ignored), as fast as the link takes them; every 1000th logged as {"kind":
                       "flood", "sent": n} (values are not logged one by one).
                     garbage: once subscribed, one every --hr-interval s, endless, a cycle of
                       invalid Heart Rate Measurement values (INVALID_VALUES), a notification of
                       600 bytes past any MTU, truncated notifications (no handle, half a handle),
                       an empty ATT PDU, notifications and an indication on handles that do not
                       exist (0x0999, 0x0000), unsolicited responses (Read, Exchange MTU 65535,
                       Error, Write), an Exchange MTU Request for 65535, an unknown opcode and an
                       unknown command; then one valid value (logged as values are).  Each
                       logged {"kind": "garbage", "what", "pdu": hex}; the cycle goes on across
                       connections (strap.py's garbage_items).
                     hostile-gatt: a database that lies: 200 empty services (0xFD00...) before the
                       real ones, a Heart Rate Measurement whose declaration claims NOTIFY with
                       no CCCD (a subscription cannot be made), Device Information's range
                       running over Battery's; its advertised name and GAP Device Name are
                       terminal escape sequences (HOSTILE_NAME: clear screen, window title, a C1
                       CSI, CR LF).  Its ready line's handles.measurementCCCD is where a CCCD
                       would be: there is none.
                     drops: 2 s after each connection it drops the link (reason 0x13, logged as
                       {"kind": "disconnect", "hostile": "drops"}) and advertises again; its
                       values resume where they stopped.
                     The ready line's heartRate has "hostile": KIND (null for the others).
                   --max-links K[:STATUS]: the served controller(s) the outside host drives refuse
                     an LE (Extended) Create Connection while they hold K links (either role) with
                     Command Status STATUS (hex; 0x0D Connection Rejected due to Limited Resources,
                     the default, as the Marvell 88W8897 does after two; 0x07 Memory Capacity
                     Exceeded; 0x09 Connection Limit Exceeded): no attempt starts, the links it
                     holds are untouched.  Each served controller counts its own links; with
                     --ports N a comma-separated list gives each its own limit, in port order
                     (`--max-links 1,3`: the first full after one link, the second after three; the
                     last limit applies to the controllers after it).
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
  Polar H10      (only with `--h10`; bumble_fixture/polar.py, issue 26) a simulated Polar H10:
                 advertises "Polar H10 <--h10-id>" (flags, 16-bit UUID 180D, complete name; its scan
                 response lists the PMD service FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8).  GATT: Heart
                 Rate (Measurement notify, once a second, RR intervals of the ECG's own beats),
                 Device Information, Battery, PMD (control point FB005C81: read 0F 05 00 + zeros,
                 write, indicate; data FB005C82: notify).  The control point answers get settings,
                 start and stop of ECG (130 Hz, int24 µV frames) and ACC (25-200 Hz, int16 mG frames;
                 delta-compressed frames 0x81 with --h10-acc-delta) with the bytes of
                 /work/shared/notes/polar-pmd.md §2, status 10 below ATT MTU 232, nothing without
                 control point indications.  The ECG comes from a seeded RR series with an exact
                 ground truth (--h10-truth PATH: JSON with the RR intervals, R-peak sample indices,
                 every sample of the looped series and each ECG start's first frame timestamp).
                 Logged (--h10-log, default --log; every line has a "kind" starting "h10-"): each
                 control point exchange, start, stop, frame (hex) and Heart Rate value.  The ready
                 line's entry has "gatt" and "h10": its settings and "handles".
                 Options: --h10-id, --h10-name, --h10-seed, --h10-duration, --h10-truth, --h10-log,
                 --h10-acc-delta, --h10-stop-after, --h10-max-mtu.  Checked by
                 Scripts/python/check_h10_peer.py.
  Polar H10 5EED00NN  (`--h10s N`, 1-10; issue 41, several H10s at once) N more simulated
                 H10s, with or without --h10's: name "Polar H10 5EED00NN", random static address
                 C0:B1:E0:00:02:NN (NN the number's decimal digits), each with every H10 option
                 and its own signal (ECG, RR, acceleration seeded --h10-seed + NN; --h10-truth is
                 --h10's alone).  Every log line of H10 NN carries "h10": NN and "address"; an
                 ECG frame's line also its "samples" (µV).  --h10-stops LIST (with
                 --h10-stop-after): only the H10s listed (1-N, 0 = --h10's) stop their streams;
                 the others stream on.
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
bumble_central.py for its options and events (pairing: --central-pair, --central-io ...,
--central-reconnect-encrypt, --central-expect-security-request).

Scripts/python/check_pairing_peers.py proves the pairing options of the strap and the central
against an independent Bumble host on a served controller (no rawble needed): run it after
changing bumble_fixture/pairing.py, strap.py or bumble_central.py.  Scripts/python/check_h10_peer.py
does the same for the simulated Polar H10 (--h10, bumble_fixture/polar.py), and
Scripts/python/check_straps_peer.py for the several straps (--straps, --strap-drops, --max-links, --strap-hostile).  The first two run in
the test suite too (Tests/RawbleCLITests/TestPeerSelfCheckTests.swift).

When everything advertises it prints ONE JSON line on stdout ({"ready": true, "transport": ...,
"transports": [every port's, in order], "controllers": [{"transport", "publicAddress"}],
"devices": [...]}: what each device advertises); logs go to stderr.  It exits after
`--lifetime` s, when stdin reaches EOF (its parent died; with --central, when the central's run
ends instead) and on SIGTERM/SIGINT.  Lines on stdin are requests: {"strap": {...}} for the strap
(a passkey), any other JSON object for the central (bumble_central.py).

Reset and LE Create Connection Cancel on a served controller do what the specification says
(stock Bumble 0.0.236 answered both with success and changed nothing): Reset stops advertising
and scanning, forgets a pending connection attempt and drops every connection (the peers see
reason 0x08); Cancel ends the pending attempt with LE Connection Complete, status 0x02.

Reports to the host: stock Bumble 0.0.236 reports every advertisement as connectable, twice
(the second "scan response" repeating the advertising data), and never sends scan response
data.  This fixture's served controller (ScannerController, bumble_fixture/controller.py) reports what the advertiser
really sends: the advertiser's event properties, and a scan response (with the advertiser's
scan response data) only to an active scan of a scannable advertiser.  Report format follows
the scan commands the host used: LE Advertising Report (0x02) after LE Set Scan Enable, LE
Extended Advertising Report (0x0D) after LE Set Extended Scan Enable.  `--stock-reports` keeps
Bumble's own reporting instead.

An HCI trace of a served controller (`--snoop PATH`, or BUMBLE_SNOOPER=btsnoop:file:PATH): a
btsnoop file of what the outside host and the controller exchange, on TCP as on unix, written as
the host's side would record it (sent = host to controller); wireshark, tshark and btmon read it.

The code: this file is the entry point (options, the ready line, setting up the link);
bumble_fixture/ holds the parts: controller.py (the served controllers, ScannerLink, --snoop),
devices.py (advertisers and their descriptions), strap.py (rawble-strap, its scripts),
lab.py (rawble-lab), polar.py (the simulated Polar H10, --h10), pairing.py (the strap's and the central's Security Manager, their bonds).  Scripts/bumble-peer and rawble's tests run this file; its options stay.

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
import struct
import sys

from bumble import hci
from bumble.core import UUID, AdvertisingData
from bumble.device import AdvertisingType, Device
from bumble.host import Host
from bumble.transport.common import AsyncPipeSink

import bumble_central
from bumble_fixture.controller import (SNOOPS, ScannerController, ScannerLink, controller_addresses,
                                       parse_max_links, serve_controller)
import bumble_fixture.devices as fixture_devices
from bumble_fixture.devices import (BEACON_COMPANY, BEACON_DATA, BEACON_TX_POWER, THERMO_APPEARANCE,
                                    THERMO_SERVICE_128, THERMO_SERVICE_DATA, ad, advertising_interval, describe,
                                    make_device, start_peripheral, static_address)
from bumble_fixture.lab import LAB_SERVICE_128, Lab, describe_gatt
from bumble_fixture.pairing import add_options as add_pairing_options
from bumble_fixture.pairing import STRAP_IRK, options_from
from bumble_fixture.strap import (AUTHENTICATED_READ_CHARACTERISTIC, AUTHENTICATED_READ_VALUE, DEFAULT_SCRIPT,
                                  ENCRYPTED_READ_CHARACTERISTIC, ENCRYPTED_READ_VALUE, HOSTILE_KINDS,
                                  HOSTILE_NAME, RealisticScript, Strap,
                                  encode_hrm, extra_strap_irk, realistic_summary)

log = logging.getLogger("bumble-peer")

# Kept importable from here (Benchmarks/Reference/bumble_strap.py, Scripts/report-example).
__all__ = ["main", "RealisticScript", "encode_hrm"]


def serves_standard_strap(args):
    """Whether rawble-strap is on the link: with the standard devices, or alone with --strap-only,
    but not with --strap-only --straps N (then the N straps are alone)."""
    return (not args.no_standard or args.strap_only) and not (args.strap_only and args.straps)


def extra_strap_name(number):
    """The name of strap `number` of `--straps` (1-20): rawble-strap-01 ... rawble-strap-20."""
    return "rawble-strap-%02d" % number


def extra_h10_id(number):
    """The 8 hex digits of H10 `number` of `--h10s` (1-10): 5EED0001 ... 5EED0010."""
    return "5EED00%02d" % number


def extra_h10_address(number):
    """The random static address of H10 `number` of `--h10s`: C0:B1:E0:00:02:NN, NN the
    number's decimal digits (the fifth H10 is C0:B1:E0:00:02:05)."""
    return static_address(0x200 + int("%d" % number, 16))


def extra_strap_address(number):
    """The random static address of strap `number` of `--straps`: C0:B1:E0:00:01:NN, NN the
    number's decimal digits (rawble-strap-12 is C0:B1:E0:00:01:12)."""
    return static_address(0x100 + int("%d" % number, 16))


async def start_strap(link, args, keep, number, name, address, irk):
    """A heart-rate strap on the link, advertising (flags, 180D 180F, its complete name every
    50 ms): (its Strap, its Device, its ready line entry).  The standard strap (`number` 0) also
    takes the privacy options (--strap-privacy, --strap-rpa-period)."""
    if (args.strap_hostile or {}).get(number) == "hostile-gatt":
        name = HOSTILE_NAME
    strap_ad = ad(
        (AdvertisingData.FLAGS, bytes([0x06])),
        (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<HH", 0x180D, 0x180F)),
        (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()),
    )
    strap_device = make_device(link, name, address)
    strap = Strap(strap_device, args, number, irk)
    keep.append(strap)
    privacy = args.strap_privacy and number == 0
    if privacy:
        # Bumble makes the first resolvable private address from the IRK at power-on; its
        # own rotation stays off (le_rpa_timeout 0): Strap.rotate_addresses does it.
        strap_device.le_privacy_enabled = True
        strap_device.le_rpa_timeout = 0
    await strap_device.power_on()

    async def advertise_strap():
        await strap_device.start_advertising(
            advertising_data=strap_ad, advertising_interval_min=advertising_interval(50),
            advertising_interval_max=advertising_interval(50),
            auto_restart=True,
        )

    await advertise_strap()
    if privacy:
        strap.log_security("rpa", address=str(strap_device.random_address).split("/")[0])
        if args.strap_rpa_period > 0:
            keep.append(asyncio.ensure_future(strap.rotate_addresses(advertise_strap)))
    entry = describe(strap_device, True, True, name=name, advertisedName=name,
                     completeName=True, services=["180D", "180F"], flags=6,
                     advertisingData=strap_ad.hex(), scanResponseData="",
                     heartRate=strap.settings(), pairing=strap.pairing_settings())
    return strap, strap_device, entry


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
    if serves_standard_strap(args):
        strap, strap_device, entry = await start_strap(link, args, keep, 0, "rawble-strap", static_address(1), STRAP_IRK)
        holder["strap"] = strap
        described.append(entry)
        devices.append(strap_device)
    # --straps N: rawble-strap-01 ... -NN beside the standard strap (or instead of it, with --strap-only).
    for number in range(1, args.straps + 1):
        _, extra_device, entry = await start_strap(link, args, keep, number, extra_strap_name(number),
                                                   extra_strap_address(number), extra_strap_irk(number))
        described.append(entry)
        devices.append(extra_device)

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
            advertising_interval_min=advertising_interval(20), advertising_interval_max=advertising_interval(20),
            auto_restart=True,
        )
        described.append(describe(lab_device, True, True, name="rawble-lab", advertisedName="rawble-lab",
                                  completeName=True, nameInScanResponse=True, flags=6,
                                  services=[LAB_SERVICE_128.upper()],
                                  advertisingData=lab_ad.hex(), scanResponseData=lab_rsp.hex(),
                                  gatt=describe_gatt(lab_device.gatt_server), handles=lab.handles(),
                                  stream={"count": args.stream_count, "rate": args.stream_rate,
                                          "size": max(4, args.stream_size)}))
        devices.append(lab_device)

    if args.h10 or args.h10s:
        # Imported only here: it needs numpy, and other runs keep their start-up time.
        from bumble_fixture.polar import PMD_SERVICE, PolarH10
        h10s = ([(0, args.h10_id, static_address(6))] if args.h10 else []) + [
            (number, extra_h10_id(number), extra_h10_address(number)) for number in range(1, args.h10s + 1)]
        for number, h10_id, address in h10s:
            h10_name = args.h10_name if number == 0 and args.h10_name is not None else f"Polar H10 {h10_id}"
            h10_ad = ad(
                (AdvertisingData.FLAGS, bytes([0x06])),
                (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x180D)),
                (AdvertisingData.COMPLETE_LOCAL_NAME, h10_name.encode()),
            )
            h10_rsp = ad((AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, bytes(UUID(PMD_SERVICE))))
            h10_device = make_device(link, h10_name, address)
            h10 = PolarH10(h10_device, args, h10_name, number=number, address=address)
            keep.append(h10)
            await h10_device.power_on()
            h10.reset_clock()  # the device clock starts at power-on
            await h10_device.start_advertising(
                advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
                advertising_data=h10_ad, scan_response_data=h10_rsp,
                advertising_interval_min=advertising_interval(20), advertising_interval_max=advertising_interval(20),
            auto_restart=True,
            )
            described.append(describe(h10_device, True, True, name=h10_name, advertisedName=h10_name,
                                      completeName=True, flags=6, services=["180D", PMD_SERVICE],
                                      advertisingData=h10_ad.hex(), scanResponseData=h10_rsp.hex(),
                                      gatt=describe_gatt(h10_device.gatt_server), h10=h10.settings()))
            devices.append(h10_device)

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
    # --announce (Scripts/sim-strap) at a terminal: the how-to-connect line below is for the
    # person; the JSON ready line is for scripts, whose stdout is a file or a pipe.
    if not (args.announce and sys.stdout.isatty()):
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
    parser.add_argument("--log-sent-clock", action="store_true",
                        help="add \"sent\" to the --log / --h10-log line of each Heart Rate value and H10 frame: "
                             "CLOCK_MONOTONIC (Python's time.monotonic(), liblsl's local_clock()) in seconds just "
                             "before the notification is handed to Bumble, for latency benchmarks "
                             "(Scripts/benchmark-outputs); without it the lines are as always")
    parser.add_argument("--snoop", metavar="PATH",
                        help="write a btsnoop file (H4) of the HCI traffic between the outside host and the "
                             "served controller, TCP or unix, as seen from the host's side (sent = host to "
                             "controller); with --ports N, PATH for the first and PATH.2, PATH.3 ... for the "
                             "others.  Without it, the BUMBLE_SNOOPER environment variable (Bumble's snooper "
                             "spec, e.g. btsnoop:file:PATH; put {instance} in PATH with --ports N) does the same")
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
    parser.add_argument("--advertising-floor", type=int, default=0, metavar="MS",
                        help="the shortest advertising interval of any device (a guest under TCG pays for each report)")
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
    pairing = parser.add_argument_group("strap pairing (the strap's Security Manager; see bumble_fixture/pairing.py)")
    add_pairing_options(pairing, "strap", "strap")
    pairing.add_argument("--strap-security-request", action="store_true",
                         help="strap: send an SMP Security Request as soon as a central connects")
    pairing.add_argument("--strap-authenticated-read", action="store_true",
                         help=f"strap: a characteristic {AUTHENTICATED_READ_CHARACTERISTIC} (after --strap-encrypted-read's, "
                              f"same service) readable only on a link encrypted with an authenticated key "
                              f"(value {AUTHENTICATED_READ_VALUE!r}; Insufficient Authentication 0x05 before)")
    pairing.add_argument("--strap-privacy", action="store_true",
                         help="strap: advertise from a resolvable private address made with its IRK")
    pairing.add_argument("--strap-rpa-period", type=float, default=0.0, metavar="S",
                         help="strap with --strap-privacy: a new resolvable private address every S s while no "
                              "central is connected (0 = keep the first)")
    parser.add_argument("--strap-only", action="store_true",
                        help="of the standard devices, only the strap (with --straps N: only the N straps, not the standard one)")
    several = parser.add_argument_group("several straps (issue 41)")
    several.add_argument("--straps", type=int, default=0, metavar="N",
                         help="N more heart-rate straps (1-20) beside the standard devices, or alone with "
                              "--strap-only: rawble-strap-NN at C0:B1:E0:00:01:NN (NN = 01 ... 20), each with the "
                              "strap's options, its own values (test script bpm + NN, realistic script seeded "
                              "--hr-seed + NN) and its address in every --log line (\"strap\")")
    several.add_argument("--strap-drops", metavar="LIST",
                         help="with --hr-disconnect-after: only these straps drop the link (comma-separated "
                              "numbers, 1-N for rawble-strap-NN, 0 for the standard strap); the others never "
                              "do (without it every strap drops)")
    several.add_argument("--strap-hostile", metavar="NUM:KIND", action="append",
                         help="strap NUM misbehaves (repeatable): " + ", ".join(HOSTILE_KINDS)
                              + " (see the docstring)")
    several.add_argument("--max-links", metavar="K[:STATUS][,K[:STATUS]...]",
                         help="the served controller(s) refuse an LE (Extended) Create Connection while they "
                              "hold K links (each its own), with Command Status STATUS (hex: 0x0D Connection "
                              "Rejected due to Limited Resources, the default; 0x07 Memory Capacity Exceeded; "
                              "0x09 Connection Limit Exceeded), as real controllers do; with --ports N a list "
                              "gives each served controller its own, in port order")
    parser.add_argument("--ignore-stdin", action="store_true",
                        help="keep running at stdin EOF (stop with a signal or --lifetime)")
    parser.add_argument("--announce", action="store_true",
                        help="when ready, say on stderr how to connect (and, when stdout is a terminal, print no JSON ready line)")
    parser.add_argument("--background", action="store_true",
                        help="(Scripts/bumble-peer's own option) start detached from the terminal, wait until it serves, "
                             "print the ready line and how to stop it (kill PID), and return 0")
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
    h10 = parser.add_argument_group("Polar H10 (--h10; see bumble_fixture/polar.py)")
    h10.add_argument("--h10", action="store_true",
                     help="also run a simulated Polar H10: Heart Rate with RR, PMD ECG and ACC streams")
    h10.add_argument("--h10s", type=int, default=0, metavar="N",
                     help="N more simulated H10s (1-10; issue 41, several at once): \"Polar H10 5EED00NN\" at "
                          "C0:B1:E0:00:02:NN (NN = 01 ... 10), seeded --h10-seed + NN, each with the H10 options "
                          "and \"h10\": NN, \"address\" in its log lines (with or without --h10)")
    h10.add_argument("--h10-stops", metavar="LIST",
                     help="with --h10-stop-after: only these H10s stop their streams (comma-separated numbers, "
                          "1-N of --h10s, 0 for --h10's); the others never do (without it every H10 stops)")
    h10.add_argument("--h10-id", metavar="HEX8",
                     help="H10: the 8 hex digits of its name, \"Polar H10 HEX8\" (default 0A3B5C7D)")
    h10.add_argument("--h10-name", metavar="NAME",
                     help="H10 (--h10's): its whole name, advertised and in its GATT Device Name, instead of "
                          "\"Polar H10 HEX8\"; sent as given, control characters included (a hostile name, "
                          "for tests of what a terminal shows); at most 20 bytes")
    h10.add_argument("--h10-seed", type=int, metavar="N",
                     help="H10: seed of its RR series, ECG and acceleration (default 1)")
    h10.add_argument("--h10-duration", type=float, metavar="SECONDS",
                     help="H10: length of the ECG and RR series, which then loops (10-3600, default 300)")
    h10.add_argument("--h10-truth", metavar="PATH",
                     help="H10: write the ECG ground truth as JSON (RR, R-peak indices, samples), "
                          "rewritten at each ECG start with its first frame's timestamp")
    h10.add_argument("--h10-log", metavar="PATH",
                     help="H10: append its control point exchanges, frames and Heart Rate values (default: --log)")
    h10.add_argument("--h10-acc-delta", action="store_true",
                     help="H10: ACC in delta-compressed frames (frame type 0x81) instead of raw 0x01")
    h10.add_argument("--h10-stop-after", type=float, metavar="SECONDS",
                     help="H10: SECONDS after a connection's first start, stop every stream and indicate 01 + their types")
    h10.add_argument("--h10-max-mtu", type=int, metavar="N",
                     help="H10: the largest ATT MTU it accepts in an MTU exchange (23-517, default 232)")
    bumble_central.add_arguments(parser)
    args = parser.parse_args(argv)
    if not 0 <= args.advertising_floor <= 10240:
        parser.error("--advertising-floor must be between 0 and 10240 ms")
    fixture_devices.advertising_floor_ms = args.advertising_floor
    if args.background:
        parser.error("--background is Scripts/bumble-peer's option: run the peer through Scripts/bumble-peer")
    h10_options = ("h10_id", "h10_name", "h10_seed", "h10_duration", "h10_truth", "h10_log", "h10_acc_delta",
                   "h10_stop_after", "h10_max_mtu", "h10_stops")
    h10_given = [name for name in h10_options if getattr(args, name) not in (None, False)]
    if not 0 <= args.h10s <= 10:
        parser.error("--h10s must be between 0 and 10")
    if h10_given and not (args.h10 or args.h10s):
        parser.error(f"--{h10_given[0].replace('_', '-')} needs --h10 or --h10s")
    if args.h10_stops is not None:
        if args.h10_stop_after is None:
            parser.error("--h10-stops needs --h10-stop-after SECONDS")
        try:
            args.h10_stops = {int(part) for part in args.h10_stops.split(",") if part.strip()}
        except ValueError:
            parser.error(f"--h10-stops {args.h10_stops}: expected H10 numbers, e.g. 2,3")
        wrong = sorted(n for n in args.h10_stops if not (1 <= n <= args.h10s or (n == 0 and args.h10)))
        if wrong:
            parser.error(f"--h10-stops: no H10 {wrong[0]}")
    for name, default in (("h10_id", "0A3B5C7D"), ("h10_seed", 1), ("h10_duration", 300.0), ("h10_max_mtu", 232)):
        if getattr(args, name) is None:
            setattr(args, name, default)
    if len(args.h10_id) != 8 or not all(c in "0123456789abcdefABCDEF" for c in args.h10_id):
        parser.error(f"--h10-id {args.h10_id}: expected 8 hex digits, e.g. 0A3B5C7D")
    args.h10_id = args.h10_id.upper()
    if args.h10_name is not None and not 1 <= len(args.h10_name.encode()) <= 20:
        parser.error(f"--h10-name: 1 to 20 bytes (the advertisement holds it whole), not {len(args.h10_name.encode())}")
    if not 10 <= args.h10_duration <= 3600:
        parser.error("--h10-duration must be between 10 and 3600 seconds")
    if args.h10_stop_after is not None and not 0 < args.h10_stop_after < float("inf"):
        parser.error("--h10-stop-after must be a number of seconds above 0")
    if not 23 <= args.h10_max_mtu <= 517:
        parser.error("--h10-max-mtu must be between 23 and 517")
    if args.h10_truth and not os.path.isdir(os.path.dirname(os.path.abspath(args.h10_truth))):
        parser.error(f"--h10-truth {args.h10_truth}: its directory does not exist")
    bumble_central.check_arguments(parser, args)
    try:
        options_from(args, "strap")
    except ValueError as error:
        parser.error(f"strap pairing: {error}")
    if args.strap_rpa_period < 0 or (args.strap_rpa_period and not args.strap_privacy):
        parser.error("--strap-rpa-period needs --strap-privacy and cannot be negative")
    if args.hr_disconnect_after is not None and args.hr_disconnect_after < 1:
        parser.error("--hr-disconnect-after must be at least 1")
    if not 0 <= args.straps <= 20:
        parser.error("--straps must be between 0 and 20")
    if args.strap_drops is not None:
        if args.hr_disconnect_after is None:
            parser.error("--strap-drops needs --hr-disconnect-after N (how many values before each drop)")
        try:
            args.strap_drops = {int(part) for part in args.strap_drops.split(",") if part.strip()}
        except ValueError:
            parser.error(f"--strap-drops {args.strap_drops}: expected strap numbers, e.g. 2,5")
        standard = serves_standard_strap(args)
        wrong = sorted(n for n in args.strap_drops if not (1 <= n <= args.straps or (n == 0 and standard)))
        if wrong:
            parser.error(f"--strap-drops: no strap {wrong[0]} (straps 1-{args.straps} with --straps {args.straps}"
                         + (", 0 the standard strap)" if standard else ")"))
    if args.strap_hostile is not None:
        hostile = {}
        standard = serves_standard_strap(args)
        for item in args.strap_hostile:
            number, _, kind = item.partition(":")
            if not number.isdigit() or kind not in HOSTILE_KINDS:
                parser.error(f"--strap-hostile {item}: expected NUM:KIND, KIND one of {', '.join(HOSTILE_KINDS)}")
            if not (1 <= int(number) <= args.straps or (int(number) == 0 and standard)):
                parser.error(f"--strap-hostile {item}: no strap {number}")
            hostile[int(number)] = kind
        args.strap_hostile = hostile
    if args.max_links is not None:
        try:
            args.max_links = parse_max_links(args.max_links)
        except ValueError as error:
            parser.error(f"--max-links {args.max_links}: {error}")
        if len(args.max_links) > args.ports:
            parser.error(f"--max-links: {len(args.max_links)} limits for {args.ports} port(s)")
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
        # The running Central and the strap, once ready: stdin's request lines go to them.
        holder = {"central": None, "strap": None}
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
            pending.extend(data)
            while b"\n" in pending:
                line, _, rest = bytes(pending).partition(b"\n")
                pending[:] = rest
                text = line.decode("utf-8", "replace")
                if not text.strip():
                    continue
                try:
                    request = json.loads(text)
                except ValueError:
                    request = None
                if holder["strap"] is not None and isinstance(request, dict) and "strap" in request:
                    holder["strap"].request(request["strap"], text)
                elif holder["central"] is not None:
                    holder["central"].request(text)
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

    try:
        return asyncio.run(body())
    finally:
        SNOOPS.close()  # the traces' files, flushed and closed


if __name__ == "__main__":
    sys.exit(main())
