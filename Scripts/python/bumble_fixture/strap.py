"""rawble-strap: the Heart Rate strap's GATT server, its test and realistic scripts, its log."""

import asyncio
import json
import logging
import struct
import time

from bumble import att, gatt, hci, smp

from bumble_fixture.pairing import STRAP_IRK, Security, address_text, be_hex, options_from

log = logging.getLogger("bumble-peer")

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


# --strap-hostile NUM:KIND (issue 41, bad input): one strap of several misbehaves.
HOSTILE_KINDS = ("flood", "garbage", "hostile-gatt", "drops")

# hostile-gatt's name, advertised and as its GAP Device Name: terminal escape sequences (clear
# the screen, set the window title), a C1 CSI, a carriage return and a newline; 20 UTF-8 bytes,
# as much as fits beside the flags and the two service UUIDs in 31 bytes of advertising data.
HOSTILE_NAME = "\x1b[2J\x1b]0;pwn\x07ev\u009bil\r\n"

# hostile-gatt: empty services before the real ones (a database that takes many requests to walk).
HOSTILE_FILLER_SERVICES = 200

# drops: the link is dropped this many seconds after each connection.
HOSTILE_DROP_PERIOD = 2.0


def garbage_items(hrm_handle):
    """garbage's cycle: (what, how, bytes); how "notify" sends the bytes as the Heart Rate
    Measurement's value (Bumble's notification), "raw" as a whole ATT PDU on the ATT channel,
    whatever it says.  Ends with one valid value (the link still carries good ones)."""
    h = struct.pack("<H", hrm_handle)
    items = [("invalid-" + why, "notify", value) for value, why in INVALID_VALUES]
    items += [
        ("oversized-value", "raw", b"\x1b" + h + b"\x16" + bytes(600)),  # past any MTU agreed
        ("truncated-no-handle", "raw", b"\x1b"),
        ("truncated-half-handle", "raw", b"\x1b" + h[:1]),
        ("empty-pdu", "raw", b""),
        ("wrong-handle", "raw", b"\x1b\x99\x09" + encode_hrm(70, "detected", None, [])),
        ("handle-zero", "raw", b"\x1b\x00\x00" + encode_hrm(70, "detected", None, [])),
        ("indication-wrong-handle", "raw", b"\x1d\x99\x09\x01"),
        ("unsolicited-read-response", "raw", b"\x0bjunk"),
        ("unsolicited-mtu-response", "raw", b"\x03\xff\xff"),
        ("unsolicited-error-response", "raw", b"\x01\x0a\x01\x00\x0a"),
        ("unsolicited-write-response", "raw", b"\x13"),
        ("mtu-request-65535", "raw", b"\x02\xff\xff"),
        ("unknown-opcode", "raw", b"\x7f\x00\x01"),
        ("unknown-command", "raw", b"\xff\x01\x02"),
    ]
    return items


class AppendLog:
    """A JSON-lines file opened for each line (as the strap always did): a test may replace the file.
    `fields` are added to every line (the strap's address, so several straps share one log)."""

    def __init__(self, path, **fields):
        self.path = path
        self.fields = fields

    def write(self, entry):
        if self.path:
            with open(self.path, "a") as f:
                f.write(json.dumps({**entry, **self.fields}) + "\n")


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


# --strap-encrypted-read: the service and characteristic that need an encrypted link, and its value;
# --strap-authenticated-read: the characteristic (same service, after it) that needs an
# authenticated key (Passkey Entry or Numeric Comparison), and its value.
ENCRYPTED_READ_SERVICE = "72617762-6C65-5345-4300-000000000000"
ENCRYPTED_READ_CHARACTERISTIC = "72617762-6C65-5345-4300-000000000001"
ENCRYPTED_READ_VALUE = b"sealed"
AUTHENTICATED_READ_CHARACTERISTIC = "72617762-6C65-5345-4300-000000000002"
AUTHENTICATED_READ_VALUE = b"attested"


def extra_strap_irk(number):
    """The IRK of strap `number` of `--straps` (1-20): "rawble-strap-iNN", distinct from the
    standard strap's and from each other's."""
    return b"rawble-strap-i%02d" % number


class Strap:
    """The Heart Rate strap's GATT server and notification script (see the module docstring).

    `number` 0 is the standard strap (rawble-strap); 1-20 the straps of `--straps N`
    (rawble-strap-NN), whose test script is the standard one with bpm + NN and whose realistic
    script is seeded with `--hr-seed` + NN, so the straps' values differ.  Only the straps in
    `--strap-drops` (all, without it) drop the link after `--hr-disconnect-after` values."""

    def __init__(self, device, args, number=0, irk=STRAP_IRK):
        self.device, self.args = device, args
        self.number = number
        self.task = None
        self.address = address_text(device.static_address)
        self.log = AppendLog(args.log, strap=self.address)
        drops = getattr(args, "strap_drops", None)
        self.disconnect_after = (args.hr_disconnect_after if drops is None or number in drops else None)
        self.hostile = (getattr(args, "strap_hostile", None) or {}).get(number)
        self.garbage_position = 0  # garbage: next item of the cycle (kept across connections)
        self.position = 0  # next entry of the sequence (kept across connections, see `resumes`)
        self.energy_base = None  # test script: last energy sent before a reset (None: no reset)
        self.last_energy = 0
        self.disconnects = 0
        self.realistic = (RealisticScript(args.hr_seed + number, args.hr_artifacts)
                          if args.hr_script == "realistic" else None)
        # hostile-gatt: declared READ here so Bumble adds no CCCD; its declaration is made to
        # claim NOTIFY below (a notifying characteristic with no CCCD).
        self.hrm = gatt.Characteristic(
            "2A37", gatt.Characteristic.Properties.READ if self.hostile == "hostile-gatt"
            else gatt.Characteristic.Properties.NOTIFY, gatt.Characteristic.Permissions(0), b"",
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
        if self.hostile == "hostile-gatt":
            device.add_services([gatt.Service("%04X" % (0xFD00 + k), []) for k in range(HOSTILE_FILLER_SERVICES)])
        services = [
            gatt.Service("180D", [self.hrm, self.body_sensor_location, control_point]),
            gatt.Service("180A", [readable("2A29", b"rawble-sim"), readable("2A24", b"HRM-1")]),
            gatt.Service("180F", [readable("2A19", bytes([87]))]),
        ]
        device.add_services(services)
        if self.hostile == "hostile-gatt":
            self.lie(device.gatt_server, services)
        if self.hostile == "drops":
            device.on("connection", self.drop_later)
        # Pairing (issue 24): Bumble's Security Manager set up from the --strap-* pairing options,
        # every step logged, bonds kept in memory for the process's life (a central that bonded
        # reconnects and encrypts without pairing again), the strap's fixed IRK.
        self.security = Security(device, options_from(args, "strap"), self.log_security, irk)
        if args.strap_security_request:
            device.on("connection", self.on_connection)
        # --strap-encrypted-read (issue 11, raising security): one more service, last (the
        # handles above do not move), whose characteristic reads only on an encrypted link
        # (Insufficient Encryption, 0x0F, before).  --strap-authenticated-read: a characteristic
        # after it (same service) that reads only on a link encrypted with an authenticated key
        # (Insufficient Authentication, 0x05, before and with a Just Works key).
        self.encrypted_read = self.authenticated_read = None
        characteristics = []
        if args.strap_encrypted_read:
            self.encrypted_read = gatt.Characteristic(
                ENCRYPTED_READ_CHARACTERISTIC, gatt.Characteristic.Properties.READ,
                gatt.Characteristic.READ_REQUIRES_ENCRYPTION, ENCRYPTED_READ_VALUE)
            characteristics.append(self.encrypted_read)
        if args.strap_authenticated_read:
            # Bumble's own READ_REQUIRES_AUTHENTICATION check passes on any encrypted link (it
            # counts Just Works as authenticated): the value's read checks the key itself.
            self.authenticated_read = gatt.Characteristic(
                AUTHENTICATED_READ_CHARACTERISTIC, gatt.Characteristic.Properties.READ,
                gatt.Characteristic.READ_REQUIRES_AUTHENTICATION,
                gatt.CharacteristicValue(read=self.read_authenticated))
            characteristics.append(self.authenticated_read)
        if characteristics:
            device.add_service(gatt.Service(ENCRYPTED_READ_SERVICE, characteristics))
        self.rotation = None
        device.on("characteristic_subscription", self.on_subscription)

    def lie(self, server, services):
        """hostile-gatt's lies, made in Bumble's database after it was built: the Heart Rate
        Measurement's declaration claims NOTIFY with no CCCD after its value, and Device
        Information's range runs over Battery's (overlapping services)."""
        declaration = next(a for a in server.attributes if isinstance(a, gatt.CharacteristicDeclaration)
                           and a.characteristic is self.hrm)
        declaration.value = (struct.pack("<BH", gatt.Characteristic.Properties.NOTIFY, self.hrm.handle)
                             + self.hrm.uuid.to_pdu_bytes())
        services[1].end_group_handle = services[2].end_group_handle

    def drop_later(self, connection):
        """drops: HOSTILE_DROP_PERIOD s after each connection the strap drops it (reason 0x13)."""
        if connection.role != hci.Role.PERIPHERAL:
            return

        start = self.position

        async def drop():
            await asyncio.sleep(HOSTILE_DROP_PERIOD)
            if connection.handle not in self.device.connections:
                return
            self.disconnects += 1
            self.log.write({"kind": "disconnect", "time": time.time(), "after": self.position,
                            "onConnection": self.position - start,
                            "reason": hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR, "hostile": "drops"})
            try:
                await connection.disconnect(reason=hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR)
            except Exception as error:  # already gone
                log.info("strap %s: drop skipped: %s", self.address, error)

        asyncio.ensure_future(drop())

    def log_security(self, kind, **fields):
        self.log.write({"kind": kind, "time": time.time(), **fields})

    def request(self, request, line):
        """A stdin line for the strap, {"strap": REQUEST}: {"passkey": N} types N in the Passkey
        Entry the strap waits in (no --strap-passkey); logged as {"kind": "request-refused"} if
        unreadable."""
        try:
            self.security.type_passkey(request["passkey"])
        except (ValueError, KeyError, TypeError) as error:
            self.log.write({"kind": "request-refused", "time": time.time(), "line": line[:200],
                            "message": str(error)})

    def read_authenticated(self, connection):
        if not self.security.link_authenticated(connection):
            raise att.ATT_Error(att.ErrorCode.INSUFFICIENT_AUTHENTICATION)
        return AUTHENTICATED_READ_VALUE

    def on_connection(self, connection):
        """--strap-security-request: an SMP Security Request as soon as a central connects."""
        if connection.role != hci.Role.PERIPHERAL:
            return
        config = self.security.pairing_config(connection)
        auth_req = int(smp.AuthReq.from_booleans(bonding=config.bonding, sc=config.sc, mitm=config.mitm))
        self.log_security("security-request-sent", authReq=auth_req)
        self.device.request_pairing(connection)

    def pairing_settings(self):
        """The strap's pairing options and identity, for the ready line."""
        d = self.device
        return {**self.security.options.describe(), "securityRequest": self.args.strap_security_request,
                "irk": be_hex(d.irk), "identityAddress": address_text(d.static_address),
                "identityAddressType": "random", "privacy": self.args.strap_privacy,
                "rpaPeriod": self.args.strap_rpa_period if self.args.strap_privacy else None}

    async def rotate_addresses(self, advertise):
        """--strap-privacy with --strap-rpa-period S: every S s, while no central is connected,
        a new resolvable private address from the strap's IRK, advertised from then on (logged
        as {"kind": "rpa", "address"}).  Bumble's own rotation (le_rpa_timeout) never rotates an
        advertising device and sets the old address again: not used."""
        period = self.args.strap_rpa_period
        while True:
            await asyncio.sleep(period)
            if self.device.connections:
                continue  # the link keeps its address; the next period rotates
            try:
                await self.device.stop_advertising()
                address = hci.Address.generate_private_address(self.device.irk)
                self.device.random_address = address
                await self.device.send_sync_command(hci.HCI_LE_Set_Random_Address_Command(random_address=address))
                await advertise()
                self.log_security("rpa", address=address_text(address))
            except Exception as error:  # a connection raced the rotation: the next period retries
                log.info("strap: RPA rotation skipped: %s", error)

    @property
    def resumes(self):
        """Whether a new subscription continues the sequence (else it starts again at 0)."""
        return (self.args.hr_disconnect_after is not None or self.realistic is not None
                or self.hostile is not None)

    def settings(self):
        """The strap's heart-rate options, for the ready line."""
        a = self.args
        handles = {"measurement": self.hrm.handle, "measurementCCCD": self.hrm.handle + 1,
                   "bodySensorLocation": self.body_sensor_location.handle,
                   "controlPoint": self.control_point.handle}
        if self.encrypted_read is not None:
            handles["encryptedRead"] = self.encrypted_read.handle
        if self.authenticated_read is not None:
            handles["authenticatedRead"] = self.authenticated_read.handle
        return {"strap": self.number, "script": a.hr_script, "count": a.hr_count, "interval": a.hr_interval,
                "seed": a.hr_seed + self.number, "bpmOffset": self.number if a.hr_script == "test" else 0,
                "artifacts": a.hr_artifacts, "disconnectAfter": self.disconnect_after,
                "disconnects": a.hr_disconnects, "invalid": a.hr_invalid,
                "refuseCCCD": a.hr_refuse_cccd, "silent": a.hr_silent, "hostile": self.hostile,
                "handles": handles}

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
            work = {"flood": self.flood, "garbage": self.garbage}.get(self.hostile, self.notify)
            self.task = asyncio.create_task(work(connection))

    async def flood(self, connection):
        """flood: the script's valid values, endless, as fast as the link takes them (one turn
        of the event loop between two); logged every 1000th ({"kind": "flood", "sent": n})."""
        try:
            while True:
                await self.device.notify_subscriber(connection, self.hrm, self.valid_value(self.position))
                self.position += 1
                if self.position % 1000 == 0:
                    self.log.write({"kind": "flood", "time": time.time(), "sent": self.position})
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the link went away
            log.info("flood stopped: %s", error)

    async def garbage(self, connection):
        """garbage: garbage_items' cycle, one every --hr-interval s, endless, each logged
        ({"kind": "garbage", "what", "pdu"}; the valid value as any value is)."""
        items = garbage_items(self.hrm.handle)
        try:
            while True:
                what, how, data = items[self.garbage_position % len(items)]
                self.garbage_position += 1
                if how == "notify":
                    await self.device.notify_subscriber(connection, self.hrm, data)
                else:
                    connection.send_l2cap_pdu(att.ATT_CID, data)
                self.log.write({"kind": "garbage", "time": time.time(), "what": what, "pdu": data.hex()})
                if self.garbage_position % len(items) == 0:
                    value = self.valid_value(self.position)
                    await self.device.notify_subscriber(connection, self.hrm, value)
                    self.log.write({"time": time.time(), "value": value.hex(), "position": self.position,
                                    "index": self.position})
                    self.position += 1
                await asyncio.sleep(self.args.hr_interval)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the link went away
            log.info("garbage stopped: %s", error)

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
        return encode_hrm(min(bpm + shift + self.number, 0xFFFF), contact, energy, rr)

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
                sent = time.monotonic()
                await self.device.notify_subscriber(connection, self.hrm, value)
                entry = {"time": time.time(), "value": value.hex(), "position": self.position}
                if a.log_sent_clock:
                    entry["sent"] = sent
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
                if (more and self.disconnect_after is not None and on_this_connection >= self.disconnect_after
                        and (a.hr_disconnects == 0 or self.disconnects < a.hr_disconnects)):
                    self.disconnects += 1
                    self.log.write({"kind": "disconnect", "time": time.time(), "after": self.position,
                                    "onConnection": on_this_connection,
                                    "reason": hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR})
                    log.info("strap %s: disconnecting after %d notifications", self.address, self.position)
                    await connection.disconnect(reason=hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR)
                    return
                delay = start + on_this_connection * a.hr_interval - time.monotonic()
                # Behind schedule: still yield once, so the link and the log get their turn.
                await asyncio.sleep(delay if delay > 0 else 0)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the link went away
            log.info("heart rate notifications stopped: %s", error)
