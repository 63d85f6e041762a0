"""check_h10_peer: proves bumble-peer's simulated Polar H10 (`--h10`, bumble_fixture/polar.py)
does what /work/shared/notes/polar-pmd.md says an H10 does, byte for byte, with no rawble
involved.

Each group of cases starts its own bumble_peer.py (`--port 0`, 127.0.0.1 only, `--no-standard
--h10`) and drives its served controller over TCP with an independent Bumble `Device` as the
outside host (the place rawble's host takes in the real tests), which connects to the H10 as a
central.  Frames are decoded by this file's own small decoders (written from the note's §3, not
shared with the fixture), which are first checked against the note's worked examples (§6).

Prints one line per case ("ok   NAME: what was seen (time)" or "FAIL NAME: why") and exits 0 only
when every case passed (1 otherwise, 3 when Bumble is missing).  Every wait is bounded; every
process it starts is stopped by its PID.  ~20 s on 2 cores:

    /work/venv-deb/bin/python Scripts/python/check_h10_peer.py [-k SUBSTRING] [-v] [--no-neurokit]
"""

import asyncio
import json
import os
import shutil
import struct
import sys
import tempfile
import time

try:
    from bumble import hci
    from bumble.device import Device, Peer
    from bumble.transport import open_transport
except ImportError:
    print("check_h10_peer: Bumble is not installed in this Python (run Scripts/bootstrap)", file=sys.stderr)
    sys.exit(3)

HERE = os.path.dirname(os.path.abspath(__file__))
PEER_SCRIPT = os.path.join(HERE, "bumble_peer.py")
sys.path.insert(0, HERE)

HOST_ADDRESS = "C4:11:22:33:44:66"
PMD_SERVICE = "FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_CP = "FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_DATA = "FB005C82-02E7-F387-1CAD-8ACD2D8DF0C8"
EPOCH_2019 = 599616000000000000
H = bytes.fromhex

# The note's §2 table (SPEC19), exactly.
TABLE = [
    ("ECG settings", "01 00", "F0 01 00 00 00 00 01 82 00 01 01 0E 00"),
    ("ACC settings", "01 02", "F0 01 02 00 00 00 04 19 00 32 00 64 00 C8 00 01 01 10 00 02 03 02 00 04 00 08 00"),
    ("start ECG", "02 00 00 01 82 00 01 01 0E 00", "F0 02 00 00 00 00"),
    ("start ACC 200 Hz 8 G", "02 02 00 01 C8 00 01 01 10 00 02 01 08 00", "F0 02 02 00 00 01"),
    ("stop ACC", "03 02", "F0 03 02 00 00"),
    ("stop ECG", "03 00", "F0 03 00 00 00"),  # SPEC19 prints the stop-ACC bytes here: a slip (note §2)
]
START_ECG = H("02 00 00 01 82 00 01 01 0E 00")
START_ACC = H("02 02 00 01 C8 00 01 01 10 00 02 01 08 00")

VERBOSE = False


from checklib import Failed, command_line, run_cases, run_main, stop_process


def expect(condition, why):
    if not condition:
        raise Failed(why)


# MARK: decoders (the note's §3, independent of the fixture)


def decode_frame(frame):
    """(measurement type, timestamp ns, frame type, payload)."""
    expect(len(frame) >= 10, f"frame of {len(frame)} bytes")
    return frame[0] & 0x3F, int.from_bytes(frame[1:9], "little"), frame[9], frame[10:]


def decode_ecg(payload):
    expect(len(payload) % 3 == 0, f"ECG payload of {len(payload)} bytes")
    return [int.from_bytes(payload[i:i + 3], "little", signed=True) for i in range(0, len(payload), 3)]


def decode_acc_raw(payload):
    expect(len(payload) % 6 == 0, f"ACC payload of {len(payload)} bytes")
    return [struct.unpack_from("<hhh", payload, i) for i in range(0, len(payload), 6)]


def decode_delta(payload, channels=3, reference_bytes=2):
    """Reference (channels x int LE), then [width][count][bits] blocks; LSB-first bits, channels
    interleaved, each delta sign-extended from its top bit and added to the previous sample."""
    size = channels * reference_bytes
    expect(len(payload) >= size, "delta frame shorter than its reference")
    current = [int.from_bytes(payload[i:i + reference_bytes], "little", signed=True) for i in range(0, size, reference_bytes)]
    out = [tuple(current)]
    offset = size
    while offset < len(payload):
        expect(len(payload) - offset >= 2, "delta block header cut")
        width, count = payload[offset], payload[offset + 1]
        offset += 2
        nbytes = (width * channels * count + 7) // 8
        expect(width >= 1 and len(payload) - offset >= nbytes, f"delta block (width {width}, count {count}) cut")
        bits = int.from_bytes(payload[offset:offset + nbytes], "little")
        offset += nbytes
        position = 0
        for _ in range(count):
            for c in range(channels):
                raw = (bits >> position) & ((1 << width) - 1)
                position += width
                if raw & (1 << (width - 1)):
                    raw -= 1 << width
                current[c] += raw
            out.append(tuple(current))
    return out


def sample_index(timestamp, rate):
    """The absolute sample index whose timestamp is `timestamp` (fixture: base + i * 1e9 // rate)."""
    i = round((timestamp - EPOCH_2019) * rate / 1e9)
    expect(EPOCH_2019 + i * 1_000_000_000 // rate == timestamp,
           f"timestamp {timestamp} is not on the {rate} Hz grid from 2019-01-01")
    return i


# MARK: the peer process


class PeerProcess:
    def __init__(self, arguments):
        self.arguments = arguments
        self.directory = tempfile.mkdtemp(prefix="check-h10-")
        self.log_path = os.path.join(self.directory, "h10.jsonl")
        self.truth_path = os.path.join(self.directory, "truth.json")
        self.process = None
        self.ready = None

    async def start(self):
        stderr = open(os.path.join(self.directory, "stderr.log"), "wb")
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, PEER_SCRIPT, "--port", "0", "--lifetime", "60", "--no-standard", "--h10",
            "--h10-log", self.log_path, "--h10-truth", self.truth_path, *self.arguments,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr)
        stderr.close()
        line = await asyncio.wait_for(self.process.stdout.readline(), 20)
        if not line:
            raise Failed(f"bumble-peer exited before its ready line: {self.stderr_tail()}")
        self.ready = json.loads(line)
        return self

    @property
    def port(self):
        return int(self.ready["transport"].rsplit(":", 1)[1])

    def h10(self):
        return self.ready["devices"][0]

    def truth(self):
        with open(self.truth_path) as f:
            return json.load(f)

    def log(self):
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path) as f:
            return [json.loads(line) for line in f if line.endswith("\n") and line.strip()]

    def stderr_tail(self):
        try:
            with open(os.path.join(self.directory, "stderr.log"), "rb") as f:
                return f.read()[-600:].decode("utf-8", "replace")
        except OSError:
            return ""

    async def stop(self):
        if self.process is None:
            return
        await stop_process(self.process)
        if not VERBOSE:
            shutil.rmtree(self.directory, ignore_errors=True)


# MARK: the checking host


class Host:
    """A Bumble Device on the peer's served controller, connected to the H10 as a central."""

    def __init__(self):
        self.transport = self.device = self.connection = self.peer = None
        self.indications = asyncio.Queue()
        self.data = []  # (arrival time, bytes)
        self.heart_rate = []

    async def open(self, port, address):
        self.transport = await asyncio.wait_for(open_transport(f"tcp-client:127.0.0.1:{port}"), 10)
        self.device = Device.with_hci("check-host", hci.Address(HOST_ADDRESS), self.transport.source,
                                      self.transport.sink)
        await asyncio.wait_for(self.device.power_on(), 10)
        self.connection = await asyncio.wait_for(
            self.device.connect(hci.Address(address), own_address_type=hci.OwnAddressType.RANDOM, timeout=10), 15)
        self.peer = Peer(self.connection)
        return self

    def listen(self, handles):
        """Take every indication of the control point and notification of data and Heart Rate,
        whatever the CCCDs say (the CCCDs are written by the cases themselves)."""
        client = self.peer.gatt_client
        client.indication_subscribers.setdefault(handles["controlPoint"], set()).add(
            lambda value: self.indications.put_nowait(bytes(value)))
        client.notification_subscribers.setdefault(handles["data"], set()).add(
            lambda value: self.data.append((time.monotonic(), bytes(value))))
        client.notification_subscribers.setdefault(handles["heartRateMeasurement"], set()).add(
            lambda value: self.heart_rate.append((time.monotonic(), bytes(value))))

    async def close(self):
        if self.transport is not None:
            try:
                await asyncio.wait_for(self.transport.close(), 5)
            except Exception:
                pass

    async def write(self, handle, value):
        try:
            await asyncio.wait_for(self.peer.write_value(handle, value, with_response=True), 5)
        except asyncio.TimeoutError:
            raise Failed(f"no response to a write of {value.hex()} at handle {handle}")

    async def read(self, handle):
        try:
            return bytes(await asyncio.wait_for(self.peer.read_value(handle), 5))
        except asyncio.TimeoutError:
            raise Failed(f"no answer to a read of handle {handle}")

    async def indication(self, within=2.0):
        try:
            return await asyncio.wait_for(self.indications.get(), within)
        except asyncio.TimeoutError:
            return None

    async def exchange(self, handle, command, within=2.0):
        """Writes `command` to the control point, returns the one indication that answers it."""
        while not self.indications.empty():
            self.indications.get_nowait()
        await self.write(handle, command)
        reply = await self.indication(within)
        if reply is None:
            raise Failed(f"no indication answered {command.hex(' ')} within {within} s")
        return reply

    async def mtu(self, value):
        return await asyncio.wait_for(self.peer.request_mtu(value), 5)


class Session:
    """A peer process and a connected host, for a group of cases."""

    def __init__(self, arguments=()):
        self.peer = PeerProcess(list(arguments))
        self.host = Host()

    async def __aenter__(self):
        await self.peer.start()
        self.h10 = self.peer.h10()
        self.handles = self.h10["h10"]["handles"]
        await self.host.open(self.peer.port, self.h10["address"])
        self.host.listen(self.handles)
        return self

    async def __aexit__(self, *exc):
        await self.host.close()
        await self.peer.stop()

    async def cp(self, command, within=2.0):
        return await self.host.exchange(self.handles["controlPoint"], H(command) if isinstance(command, str) else command,
                                        within)

    async def enable(self, cccd, value):
        await self.host.write(self.handles[cccd], value)


def check_ecg_frames(frames, truth, per_frame, what):
    """Decodes `frames` and compares them with the ground truth: consecutive samples, 130 Hz
    timestamps, the truth's µV at each absolute index (mod the loop)."""
    expect(frames, f"no ECG frame {what}")
    samples = truth["ecgMicrovolts"]
    n_loop = truth["loopSamples"]
    expect(len(samples) == n_loop, f"truth: {len(samples)} samples for a loop of {n_loop}")
    previous_last = previous_t = None
    for frame in frames:
        kind, t, frame_type, payload = decode_frame(frame)
        expect(kind == 0 and frame_type == 0, f"ECG frame type {kind:02x}/{frame_type:02x}")
        values = decode_ecg(payload)
        expect(len(values) == per_frame, f"{len(values)} ECG samples in a frame, expected {per_frame}")
        last = sample_index(t, 130)
        first = last - len(values) + 1
        if previous_last is not None:
            expect(first == previous_last + 1, f"ECG frames not contiguous: {previous_last} then {first}")
            dt = (t - previous_t) / len(values)
            expect(abs(dt - 1e9 / 130) < 1.0, f"ECG sample spacing {dt} ns, not 1e9/130")
        expected = [samples[(first + k) % n_loop] for k in range(len(values))]
        expect(values == expected, f"ECG frame at sample {first}: {values[:4]}... != truth {expected[:4]}...")
        previous_last, previous_t = last, t
    return previous_last


def accel_expected(seed, rate, range_g, first, count):
    from bumble_fixture.polar import acc_vectors  # the generator (the decoders here stay independent)
    return [tuple(v) for v in acc_vectors(seed, rate, range_g, first, count).tolist()]


def check_acc_frames(frames, frame_type_wanted, rate, range_g, seed, log):
    expect(frames, "no ACC frame")
    logged = {e["timestamp"]: e for e in log if e.get("kind") == "h10-frame" and e["measurement"] == "acc"}
    previous_last = None
    total = 0
    for frame in frames:
        kind, t, frame_type, payload = decode_frame(frame)
        expect(kind == 2 and frame_type == frame_type_wanted, f"ACC frame type {kind:02x}/{frame_type:02x}")
        vectors = decode_acc_raw(payload) if frame_type == 0x01 else decode_delta(payload)
        last = sample_index(t, rate)
        first = last - len(vectors) + 1
        if previous_last is not None:
            expect(first == previous_last + 1, f"ACC frames not contiguous: {previous_last} then {first}")
        expect(vectors == accel_expected(seed, rate, range_g, first, len(vectors)),
               f"ACC frame at sample {first} decodes to {vectors[:2]}..., not the generator's vectors")
        entry = logged.get(t)
        expect(entry is not None and entry["value"] == frame.hex() and
               [tuple(v) for v in entry["samples"]] == vectors, f"ACC frame {t} not as logged")
        previous_last = last
        total += len(vectors)
    return total


# MARK: cases


async def case_worked_examples():
    """The decoders here and the fixture's delta encoder against the note's §6 examples."""
    kind, t, ft, payload = decode_frame(H("00 EA 1C AC CC 99 43 52 08 00 68 00 00 58 00 00 46 00 00 3D 00 00"))
    expect((kind, t, ft) == (0, 599616028236586218, 0) and decode_ecg(payload) == [104, 88, 70, 61],
           "ECG example (SPEC19)")
    kind, t, ft, payload = decode_frame(H("00 00 94 35 77 00 00 00 00 00 02 80 FF 02 80 00"))
    expect(t == 2000000000 and decode_ecg(payload) == [-32766, 32770], "ECG sign example (KT)")
    kind, t, ft, payload = decode_frame(H("02 EA 54 A2 42 8B 45 52 08 01 45 FF E4 FF B5 03"))
    expect(kind == 2 and ft == 1 and decode_acc_raw(payload) == [(-187, -28, 949)], "ACC raw example (SPEC19)")
    example = H("02 65 00 00 00 00 00 00 00 81 F1 FF 14 00 F0 03 06 01 7B 0F 08")
    kind, t, ft, payload = decode_frame(example)
    expect(kind == 2 and t == 0x65 and ft == 0x81, "ACC delta example header")
    expect(decode_delta(payload) == [(-15, 20, 1008), (-20, 17, 1008)],
           f"ACC delta example decodes to {decode_delta(payload)}")
    from bumble_fixture.polar import acc_delta_frame, delta_blocks, ecg_frame
    ours = delta_blocks([(-15, 20, 1008), (-20, 17, 1008)], width=6)
    note = H("06 01 7B 0F 08")
    # 3 deltas x 6 bits = 18 bits in 3 bytes: bits 18-23 are padding.  The example (KT
    # AccDataTest) has bit 19 set there; this encoder pads with zeros.
    expect(ours[:4] == note[:4] and ours[4] & 0x03 == note[4] & 0x03,
           f"encoder gives {ours.hex(' ')}, the note {note.hex(' ')} (meaningful bits differ)")
    padding = "identical" if ours == note else f"{ours.hex(' ')}: the note's last byte 08 is padding bit 19, ours 0"
    # The fixture's frame builders decode back with the decoders here.
    frame = acc_delta_frame(0, [(-15, 20, 1008), (-20, 17, 1008), (300, -400, 1000), (301, -401, 999)], 200)
    expect(decode_delta(decode_frame(frame)[3]) == [(-15, 20, 1008), (-20, 17, 1008), (300, -400, 1000),
                                                     (301, -401, 999)], "fixture's delta frame round trip")
    # The same vectors as a raw and as a delta frame decode alike (wide and narrow deltas, both ranges).
    from bumble_fixture.polar import acc_raw_frame, acc_vectors
    for rate, range_g, first in ((200, 8, 12345), (25, 2, 0)):
        vectors = acc_vectors(3, rate, range_g, first, 36)
        raw = decode_frame(acc_raw_frame(first, vectors, rate))
        delta = decode_frame(acc_delta_frame(first, vectors, rate))
        expect(raw[1] == delta[1] and raw[2] == 0x01 and delta[2] == 0x81, "raw/delta frame headers")
        expect(decode_acc_raw(raw[3]) == decode_delta(delta[3]) == [tuple(v) for v in vectors.tolist()],
               f"raw and delta frames of the same {rate} Hz vectors decode differently")
    expect(decode_ecg(decode_frame(ecg_frame(0, [-32766, 32770, 8388607, -8388608]))[3]) ==
           [-32766, 32770, 8388607, -8388608], "fixture's ECG frame round trip")
    return f"SPEC19/KT examples decode; delta block for (-15,20,1008)->(-20,17,1008) at width 6: {padding}"


async def case_advertising_and_gatt():
    async with Session() as s:
        h10 = s.h10
        expect(h10["name"] == "Polar H10 0A3B5C7D", f"name {h10['name']}")
        adv = H(h10["advertisingData"])
        expect(H("03 03 0D 18") in adv and b"\x13\x09Polar H10 0A3B5C7D" in adv, f"advertising data {adv.hex()}")
        expect(bytes.fromhex(PMD_SERVICE.replace("-", ""))[::-1] in H(h10["scanResponseData"]), "PMD UUID not in scan response")
        peer = s.host.peer
        await asyncio.wait_for(peer.discover_services(), 5)
        found = {}
        for service in peer.services:
            await asyncio.wait_for(service.discover_characteristics(), 5)
            for c in service.characteristics:
                found[c.uuid.to_hex_str("-").upper()] = (c.handle, int(c.properties))
        cp, data, hrm = found.get(PMD_CP), found.get(PMD_DATA), found.get("2A37")
        expect(cp == (s.handles["controlPoint"], 0x02 | 0x08 | 0x20), f"control point {cp} (read, write, indicate)")
        expect(data is not None and data[0] == s.handles["data"] and data[1] & 0x10, f"data {data} (notify)")
        expect(hrm is not None and hrm[0] == s.handles["heartRateMeasurement"] and hrm[1] & 0x10, f"2A37 {hrm}")
        value = await s.host.read(s.handles["controlPoint"])
        expect(value == bytes([0x0F, 0x05, 0x00]) + bytes(14), f"control point read {value.hex(' ')}")
        return f"advertises {h10['name']}, 180D + PMD; CP read {value.hex(' ')} ({len(value)} B); {len(found)} characteristics"


async def case_control_point():
    """No answer without CP indications; status 10 below MTU 232; the §2 table; every error status."""
    results = []
    async with Session() as s:
        host = s.host
        cp = s.handles["controlPoint"]
        # 1. Without CP indications: accepted at the ATT level, never answered, not executed.
        await host.write(cp, H("01 00"))
        await host.write(cp, START_ECG)
        expect(await host.indication(0.8) is None, "an indication answered a write while CP indications were off")
        results.append("silent without CP indications")
        await s.enable("controlPointCCCD", H("02 00"))
        expect(host.connection.att_mtu == 23, f"MTU {host.connection.att_mtu} before the exchange")
        # 2. Default MTU 23: status 10.
        for command, want in (("01 00", "F0 01 00 0A 00"), (START_ECG, "F0 02 00 0A 00"), ("01 02", "F0 01 02 0A 00")):
            reply = await s.cp(command)
            expect(reply == H(want), f"at MTU 23 {command if isinstance(command, str) else command.hex(' ')} -> "
                                     f"{reply.hex(' ')}, expected {want}")
        results.append("status 10 at MTU 23")
        mtu = await host.mtu(232)
        expect(mtu == 232 and host.connection.att_mtu == 232, f"MTU exchange gave {mtu}")
        # 3. The §2 table, byte for byte (the streams started here are stopped here).
        for name, command, want in TABLE:
            reply = await s.cp(command)
            expect(reply == H(want), f"{name}: {command} -> {reply.hex(' ')}, expected {want}")
        results.append(f"{len(TABLE)} table exchanges exact")
        # 4. Errors.
        errors = [
            ("unknown op 0A", "0A 00", "F0 0A 00 01 00"),
            ("op 04 (SDK mode settings)", "04 00", "F0 04 00 01 00"),
            ("get PPG settings", "01 01", "F0 01 01 03 00"),
            ("get gyro settings", "01 05", "F0 01 05 03 00"),
            ("offline ECG", "01 80", "F0 01 80 03 00"),
            ("type 04 (no such type)", "01 04", "F0 01 04 02 00"),
            ("op without type", "01", "F0 01 00 04 00"),
            ("get settings with a stray byte", "01 00 00", "F0 01 00 04 00"),
            ("stop with a stray byte", "03 00 00", "F0 03 00 04 00"),
            ("start ECG, value cut", "02 00 00 01 82", "F0 02 00 04 00"),
            ("start ECG, dangling byte", "02 00 00 01 82 00 01 01 0E 00 01", "F0 02 00 04 00"),
            ("start ECG at 200 Hz", "02 00 00 01 C8 00 01 01 0E 00", "F0 02 00 05 00"),
            ("start ECG without resolution", "02 00 00 01 82 00", "F0 02 00 05 00"),
            ("start ECG, no settings", "02 00", "F0 02 00 05 00"),
            ("start ACC at 130 Hz", "02 02 00 01 82 00 01 01 10 00 02 01 08 00", "F0 02 02 05 00"),
            ("start ACC at 16 G", "02 02 00 01 C8 00 01 01 10 00 02 01 10 00", "F0 02 02 05 00"),
            ("start ACC, count 2", "02 02 00 02 C8 00 64 00 01 01 10 00 02 01 08 00", "F0 02 02 05 00"),
            ("start ACC with FACTOR", "02 02 00 01 C8 00 01 01 10 00 02 01 08 00 05 01 00 00 80 3F", "F0 02 02 05 00"),
            ("stop ECG, not running", "03 00", "F0 03 00 06 00"),
            ("start PPG", "02 01 00 01 87 00", "F0 02 01 03 00"),
        ]
        for name, command, want in errors:
            reply = await s.cp(command)
            expect(reply == H(want), f"{name}: {command} -> {reply.hex(' ')}, expected {want}")
        reply = await s.cp(START_ECG)
        expect(reply == H("F0 02 00 00 00 00"), f"start ECG {reply.hex(' ')}")
        reply = await s.cp(START_ECG)
        expect(reply == H("F0 02 00 06 00"), f"start ECG while running -> {reply.hex(' ')}, expected F0 02 00 06 00")
        reply = await s.cp("03 00")
        expect(reply == H("F0 03 00 00 00"), f"stop ECG {reply.hex(' ')}")
        results.append(f"{len(errors) + 1} error statuses exact")
        # Empty write: refused at the ATT level (0x0D), no indication.
        try:
            await host.peer.write_value(cp, b"", with_response=True)
            raise Failed("an empty control point write was accepted")
        except Failed:
            raise
        except Exception as error:
            expect(getattr(error, "error_code", None) == 0x0D, f"empty write: {error!r}")
        expect(await host.indication(0.3) is None, "an empty write was answered")
        results.append("empty write -> ATT 0x0D")
    return "; ".join(results)


async def case_ecg_and_heart_rate():
    async with Session() as s:
        host = s.host
        await s.enable("controlPointCCCD", H("02 00"))
        await host.mtu(232)
        await s.enable("dataCCCD", H("01 00"))
        await s.enable("heartRateMeasurementCCCD", H("01 00"))
        started = time.monotonic()
        reply = await s.cp(START_ECG)
        expect(reply == H("F0 02 00 00 00 00"), f"start ECG {reply.hex(' ')}")
        deadline = time.monotonic() + 4
        while len([d for _, d in host.data if d[0] == 0]) < 4 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        frames = [d for _, d in host.data if d[0] == 0]
        truth = s.peer.truth()
        last = check_ecg_frames(frames, truth, 73, "within 4 s of the start")
        first_t = decode_frame(frames[0])[1]
        expect(truth["firstFrameTimestamp"] == first_t,
               f"truth's firstFrameTimestamp {truth['firstFrameTimestamp']} != first frame's {first_t}")
        expect(truth["firstSampleIndex"] == sample_index(first_t, 130) - 72, "truth's firstSampleIndex")
        # Frames arrive when the device clock reaches their last sample: 73 samples = 0.56 s apart.
        times = [t for t, d in host.data if d[0] == 0]
        spacing = (times[-1] - times[0]) / (len(times) - 1)
        expect(0.4 < spacing < 0.75, f"ECG frames {spacing:.3f} s apart (73 samples at 130 Hz = 0.562 s)")
        # Heart Rate: RR (1/1024 s) are consecutive beats of the truth's series.
        deadline = time.monotonic() + 3
        while len(host.heart_rate) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        expect(len(host.heart_rate) >= 2, f"{len(host.heart_rate)} Heart Rate notifications in {time.monotonic() - started:.1f} s")
        rr = []
        for _, value in host.heart_rate:
            expect((value[0], len(value) % 2) in ((0x16, 0), (0x06, 0)) and (value[0] == 0x16) == (len(value) > 2),
                   f"Heart Rate value {value.hex(' ')}: flags 0x16 with RR, 0x06 without")
            rr += [struct.unpack_from("<H", value, i)[0] for i in range(2, len(value), 2)]
        cycle = truth["rr1024"]
        expect(rr, "no RR in the Heart Rate notifications")
        matches = [k for k in range(len(cycle)) if all(cycle[(k + j) % len(cycle)] == v for j, v in enumerate(rr))]
        expect(matches, f"RR {rr} is not a run of the truth's series")
        # The same beats as the ECG: the log's beats map to the truth's R-peaks.
        log = s.peer.log()
        beats = [b for e in log if e.get("kind") == "h10-heart-rate" for b in e["beats"]]
        m = len(truth["rrMs"])
        expect(beats and all(cycle[(b - 1) % m] == v for b, v in zip(beats, rr)), "Heart Rate RR vs logged beats")
        # Stop: no more ECG frames.
        reply = await s.cp("03 00")
        expect(reply == H("F0 03 00 00 00"), f"stop ECG {reply.hex(' ')}")
        count = len(host.data)
        await asyncio.sleep(0.8)
        expect(len(host.data) == count, "ECG frames after the stop")
        return (f"{len(frames)} ECG frames x 73 samples = truth (samples {sample_index(first_t, 130) - 72}..{last}), "
                f"frames {spacing:.3f} s apart; {len(host.heart_rate)} HR values, RR {rr} = truth beats {beats}")


async def case_truth_file():
    """The truth file: consistent with itself and (NeuroKit2's ecg_peaks) with its samples."""
    async with Session(["--h10-seed", "7", "--h10-duration", "60"]) as s:
        truth = s.peer.truth()
    rr, peaks, indices = truth["rrMs"], truth["rPeakTimesMs"], truth["rPeakIndices"]
    expect(truth["seed"] == 7 and truth["samplingRate"] == 130, "seed, rate")
    expect(sum(rr) == truth["loopMs"] and truth["loopSamples"] * 1000 == truth["loopMs"] * 130, "loop length")
    expect(all(b - a == r for a, b, r in zip(peaks, peaks[1:], rr)), "R-peak times vs RR")
    expect(indices == [(p * 13 + 50) // 100 for p in peaks], "R-peak indices vs times")
    expect(truth["rr1024"] == [round(v * 1.024) for v in rr], "rr1024")
    expect(len(truth["ecgMicrovolts"]) == truth["loopSamples"], "samples")
    lo, hi = min(truth["ecgMicrovolts"]), max(truth["ecgMicrovolts"])
    expect(-1000 < lo < 0 < 800 < hi < 2500, f"µV range {lo}..{hi}")
    x = truth["ecgMicrovolts"]
    near = sum(1 for i in indices[1:-1] if max(x[i - 1:i + 2]) == max(x[i - 3:i + 4]))
    expect(near == len(indices) - 2, f"only {near}/{len(indices) - 2} R-peaks are the local maximum within 1 sample")
    what = f"{len(rr)} beats over {truth['loopMs'] / 1000} s, µV {lo}..{hi}, every R-peak the maximum within ±1 sample"
    if NEUROKIT:
        import numpy as np
        import neurokit2 as nk
        _, info = nk.ecg_peaks(np.array(x, dtype=float), sampling_rate=130)
        found = np.array(info["ECG_R_Peaks"])
        matched = sum(1 for i in indices if found.size and np.min(np.abs(found - i)) <= 1)
        expect(matched >= 0.97 * len(indices) and abs(len(found) - len(indices)) <= 2,
               f"NeuroKit2 ecg_peaks found {len(found)} peaks, {matched}/{len(indices)} within 1 sample of the truth")
        what += f"; NeuroKit2 ecg_peaks: {matched}/{len(indices)} within ±1 sample ({len(found)} found)"
    return what


async def case_acc_raw():
    async with Session(["--h10-seed", "5"]) as s:
        host = s.host
        await s.enable("controlPointCCCD", H("02 00"))
        await host.mtu(232)
        await s.enable("dataCCCD", H("01 00"))
        reply = await s.cp(START_ACC)
        expect(reply == H("F0 02 02 00 00 01"), f"start ACC {reply.hex(' ')}")
        deadline = time.monotonic() + 3
        while len(host.data) < 5 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        frames = [d for _, d in host.data]
        expect(all(len(f) == 10 + 36 * 6 for f in frames), f"ACC frame sizes {[len(f) for f in frames]} (36 samples)")
        total = check_acc_frames(frames, 0x01, 200, 8, 5, s.peer.log())
        return f"{len(frames)} raw frames (type 01), {total} vectors = the generator's, 200 Hz timestamps"


async def case_acc_delta_and_device_stop():
    """--h10-acc-delta, --h10-stop-after, --h10-max-mtu: a 517 request gets 300; frames sized for 300."""
    async with Session(["--h10-seed", "5", "--h10-acc-delta", "--h10-stop-after", "2", "--h10-max-mtu", "300"]) as s:
        host = s.host
        await s.enable("controlPointCCCD", H("02 00"))
        mtu = await host.mtu(517)
        expect(mtu == 300 and host.connection.att_mtu == 300, f"MTU 517 asked, {mtu} agreed (max 300)")
        await s.enable("dataCCCD", H("01 00"))
        started = time.monotonic()
        reply = await s.cp(START_ACC)
        expect(reply == H("F0 02 02 00 00 01"), f"start ACC {reply.hex(' ')}")
        reply = await s.cp(START_ECG)
        expect(reply == H("F0 02 00 00 00 00"), f"start ECG {reply.hex(' ')}")
        stop = await host.indication(4)
        elapsed = time.monotonic() - started
        expect(stop == H("01 00 02"), f"device stop indication {stop.hex(' ') if stop else None}, expected 01 00 02")
        expect(1.7 < elapsed < 3.0, f"device stop after {elapsed:.2f} s, asked 2")
        await asyncio.sleep(0.6)
        count = len(host.data)
        await asyncio.sleep(0.6)
        expect(len(host.data) == count, "frames after the device stopped its streams")
        acc = [d for _, d in host.data if d[0] == 2]
        ecg = [d for _, d in host.data if d[0] == 0]
        total = check_acc_frames(acc, 0x81, 200, 8, 5, s.peer.log())
        check_ecg_frames(ecg, s.peer.truth(), (300 - 13) // 3, "at MTU 300")
        expect(all(len(f) <= 297 for f in acc), "a delta frame longer than MTU - 3")
        sizes = sorted({len(decode_delta(decode_frame(f)[3])) for f in acc})
        # After the device's stop, a start works again (the stop fires once per connection).
        reply = await s.cp(START_ECG)
        expect(reply == H("F0 02 00 00 00 00"), f"start ECG after the device stop {reply.hex(' ')}")
        return (f"MTU 300; {len(acc)} delta frames (0x81, {sizes} samples) = {total} generator vectors; "
                f"{len(ecg)} ECG frames x {(300 - 13) // 3}; device stop 01 00 02 after {elapsed:.2f} s, then silence")


async def case_several_h10s():
    """--h10s 2 beside --h10's: each its own name, address, seed and ECG; its log lines carry its
    address and its frames' samples; --h10-stops names which stop."""
    peer = PeerProcess(["--h10s", "2", "--h10-stop-after", "30", "--h10-stops", "1"])
    host = Host()
    try:
        await peer.start()
        devices = peer.ready["devices"]
        names = [d["name"] for d in devices]
        expect(names == ["Polar H10 0A3B5C7D", "Polar H10 5EED0001", "Polar H10 5EED0002"], f"names {names}")
        addresses = [d["address"] for d in devices]
        expect(addresses[1:] == ["C0:B1:E0:00:02:01", "C0:B1:E0:00:02:02"] and len(set(addresses)) == 3,
               f"addresses {addresses}")
        expect([d["h10"]["seed"] for d in devices] == [1, 2, 3], f"seeds {[d['h10']['seed'] for d in devices]}")
        expect([d["h10"]["stopAfter"] for d in devices] == [None, 30, None], "only H10 1 stops")
        last = devices[2]
        handles = last["h10"]["handles"]
        await host.open(peer.port, last["address"])
        host.listen(handles)
        await host.write(handles["controlPointCCCD"], H("02 00"))
        await host.mtu(232)
        await host.write(handles["dataCCCD"], H("01 00"))
        reply = await host.exchange(handles["controlPoint"], START_ECG)
        expect(reply == H("F0 02 00 00 00 00"), f"start ECG {reply.hex(' ')}")
        deadline = time.monotonic() + 4
        while len(host.data) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        received = [v for d in [d for _, d in host.data if d[0] == 0] for v in decode_ecg(decode_frame(d)[3])]
        logged = [e for e in peer.log() if e.get("kind") == "h10-frame"]
        expect(logged and all(e.get("address") == last["address"] and e.get("h10") == 2 for e in logged),
               "frame lines without H10 2's address")
        sent = [v for e in logged for v in e["samples"]]
        expect(len(received) >= 146 and received == sent[:len(received)], f"{len(received)} samples received vs logged")
        # Its own signal: not the --h10 H10's (seed 1, the truth file) at the same sample indices.
        first = sample_index(decode_frame([d for _, d in host.data if d[0] == 0][0])[1], 130) - 72
        truth = peer.truth()["ecgMicrovolts"]
        expect(received != [truth[(first + i) % len(truth)] for i in range(len(received))], "H10 2 sends H10 0's ECG")
        return f"3 H10s, seeds 1-3; H10 2 at {last['address']}: {len(received)} samples = its logged frames' samples"
    finally:
        await host.close()
        await peer.stop()


CASES = [
    ("worked examples and delta encoder", case_worked_examples),
    ("advertising, GATT, control point read", case_advertising_and_gatt),
    ("control point exchanges and statuses", case_control_point),
    ("ECG frames and Heart Rate RR vs truth", case_ecg_and_heart_rate),
    ("truth file", case_truth_file),
    ("ACC raw frames", case_acc_raw),
    ("ACC delta frames, MTU cap, device stop", case_acc_delta_and_device_stop),
    ("several H10s (--h10s)", case_several_h10s),
]

NEUROKIT = True


async def main(selected):
    return await run_cases(CASES, selected, 30)


if __name__ == "__main__":
    parser = command_line("check bumble-peer's simulated Polar H10 without rawble", verbose_help="Bumble's warnings on stderr; keep the peers' files")
    parser.add_argument("--no-neurokit", action="store_true", help="skip NeuroKit2's ecg_peaks on the truth (~5 s)")
    arguments = parser.parse_args()
    VERBOSE = arguments.v
    NEUROKIT = not arguments.no_neurokit
    run_main(arguments, main)
