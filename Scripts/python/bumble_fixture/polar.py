"""A simulated Polar H10 (`--h10`): Heart Rate with RR intervals, and Polar's PMD service with raw
ECG at 130 Hz and acceleration, as /work/shared/notes/polar-pmd.md (issue 26) describes the
protocol.  Written from that note's facts only (no code from Polar's SDK or elsewhere).

Several at once (`--h10s N`, issue 41): each `PolarH10` has a `number` (0 for --h10's, NN for
"Polar H10 5EED00NN"), its own seed (--h10-seed + NN: its own RR series, ECG and acceleration),
its own device clock and link; H10 NN's log lines carry "h10": NN and "address", its ECG frames'
lines also their "samples" (µV); --h10-stop-after applies to those --h10-stops lists (all
without it); only --h10's writes --h10-truth.

GATT (handles in the ready line's "h10" entry):
  180D Heart Rate: 2A37 Measurement (notify): once a second, flags 0x16 (u8 rate, contact
       detected, RR present; 0x06 in a second without a beat), the rate, the RR intervals (1/1024 s) of the beats whose R-peak fell
       in that second of the device's clock: the SAME beats as the ECG's (a real H10 derives both
       from one ECG).  2A38 Body Sensor Location 1 (chest).
  180A Device Information: "Polar Electro Oy", "H10", firmware "3.0.35".  180F Battery 100.
  PMD FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8:
    FB005C81 control point (read, write, indicate): read -> 0F 05 00 + 14 zeros (17 bytes: ECG and
             ACC).  Writes answered by ONE indication F0 op type status [more params] (see
             `PolarH10.command`), only when the control point's CCCD has indications on: without
             them a write is accepted at the ATT level and IGNORED (not executed, not answered:
             the note says writes get no answer; whether a real H10 still acts on them is not
             documented: ignoring keeps the client's view and the device's state the same).
    FB005C82 data (notify only; the note calls Indicate optional): ECG and ACC frames.

Device clock: starts at the H10's power-on (process start).  Absolute sample index i of a
stream at rate fs is the sample at device time i / fs; its timestamp (ns since 2000-01-01, the
frame carries the LAST sample's) is TIMESTAMP_BASE + i * 10**9 // fs, TIMESTAMP_BASE being
2019-01-01T00:00:00Z, the date an H10 whose clock was never set reports (note §4).  A start at
device time tau begins at sample ceil(tau * fs); a frame is notified when the device clock
reaches its last sample.

ECG ground truth (exact by construction, `EcgSeries`): a seeded RR series (ms, integers) with
respiratory sinus arrhythmia, a Mayer wave and noise; R-peaks at known times; the waveform is
McSharry's ECGSYN morphology (the P Q R S T angles, amplitudes and widths NeuroKit2's
ecg_simulate(method="ecgsyn") uses, rate-adjusted per beat as ECGSYN does) evaluated in closed
form for each beat's own RR, so the R wave's centre IS the R-peak time (no detector involved),
plus baseline wander and white noise, in µV (R ~ 1.2 mV).  NeuroKit2 itself is not imported
here (its import costs seconds); check_h10_peer.py runs its ecg_peaks on the served samples as an
independent check.  The series loops with period T = a whole number of samples (the last RR is
adjusted so T is a multiple of 100 ms = 13 samples): sample i = samples[i mod N], R-peaks at
rPeakIndices + m * N.  The R-peak index is the sample nearest the R-peak time:
(rPeakTimeMs * 13 + 50) // 100.  Every R-peak sample is the local maximum within ±1 sample (the
S wave's pull and the noise move some by one); NeuroKit2's ecg_peaks finds ~98 % within ±1.

Truth file (`--h10-truth PATH`, one JSON object, written at start and rewritten atomically at
every ECG start):
  device            "Polar H10 <id>"
  seed              --h10-seed
  samplingRate      130
  loopSamples       N, the samples of one loop (the series repeats after them)
  loopMs            N * 1000 / 130 = sum(rrMs), a multiple of 100 ms
  rrMs              M RR intervals, integer ms: rrMs[k] = R-peak k -> R-peak k+1 (the last one
                    closes the loop: R-peak M-1 -> R-peak 0 of the next loop)
  rr1024            the same in 1/1024 s, round(ms * 1.024): what Heart Rate notifications carry
                    (the RR ending at beat k, i.e. rr1024[(k-1) mod M], in the second beat k fell in)
  rPeakTimesMs      M R-peak times (ms of device time within a loop; the first is 300)
  rPeakIndices      M sample indices of the R-peaks: (rPeakTimesMs * 13 + 50) // 100
  ecgMicrovolts     N samples (µV, integers): absolute sample i of any ECG stream is
                    ecgMicrovolts[i mod N], and its R-peaks are rPeakIndices + m * N
  timestampBase     599616000000000000 (2019-01-01T00:00:00Z in ns since 2000-01-01)
  timestampOfSample "timestampBase + floor(i * 1e9 / 130)"
  firstFrameTimestamp, firstSampleIndex: of the first ECG start (null before one): the first
                    frame's timestamp (its LAST sample's) and its first sample's absolute index
  ecgStarts         every ECG start: firstSampleIndex, firstFrameTimestamp, samplesPerFrame, mtu
ACC has no truth file: its vectors are a pure function of (seed, rate, index) (`acc_vectors`) and
every frame sent is logged with its vectors ("samples").

Log lines (`--h10-log`, default `--log`; JSON lines, each with "kind" and "time"):
  h10-subscription {characteristic: heartRate|controlPoint|data, notify, indicate}
  h10-cp {value, reply} (hex) / h10-cp-ignored {value, why} (CP indications off)
  h10-start {measurement, rate, firstSampleIndex, samplesPerFrame, mtu, firstFrameTimestamp (ECG) |
             range, frameType (ACC)} / h10-stop {measurement, by: client|device|disconnection}
  h10-device-stop {value: "010002"..., indicated}   (--h10-stop-after)
  h10-frame {measurement, frameType, timestamp, firstSample, count, value (hex); ACC: rate, samples}
  h10-heart-rate {second, value (hex), beats (absolute beat indices), rrMs}
  h10-disconnection {reason}
With --log-sent-clock, h10-frame and h10-heart-rate lines also carry "sent": CLOCK_MONOTONIC in
seconds (time.monotonic(), liblsl's local_clock()) just before the notification went to Bumble.
"""

import asyncio
import json
import logging
import math
import os
import struct
import time

import numpy as np

from bumble import att, gatt

log = logging.getLogger("bumble-peer")

PMD_SERVICE = "FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_CONTROL_POINT = "FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8"
PMD_DATA = "FB005C82-02E7-F387-1CAD-8ACD2D8DF0C8"

TIMESTAMP_BASE = 599616000000000000  # 2019-01-01T00:00:00Z in ns since 2000-01-01 (note §4)
ECG_RATE = 130
REQUIRED_MTU = 232  # SPEC19: ATT MTU >= 232; below it, status 10 (invalid MTU)
CP_READ_VALUE = bytes([0x0F, 0x05, 0x00]) + bytes(14)  # ECG + ACC (note §1)

# Measurement types (note §2).  The H10 has ECG and ACC; the others exist on other Polar devices.
ECG, ACC = 0x00, 0x02
KNOWN_TYPES = {0x00, 0x01, 0x02, 0x03, 0x05, 0x06, 0x07, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E}
TYPE_NAMES = {ECG: "ecg", ACC: "acc"}

# Control point ops and statuses (note §2).
GET_SETTINGS, START, STOP = 0x01, 0x02, 0x03
SUCCESS, INVALID_OP, INVALID_TYPE, NOT_SUPPORTED, INVALID_LENGTH, INVALID_PARAMETER, \
    ALREADY_IN_STATE, INVALID_MTU = 0, 1, 2, 3, 4, 5, 6, 10

# Settings (note §2): id -> value size in bytes.
SETTING_SIZES = {0: 2, 1: 2, 2: 2, 3: 4, 4: 1, 5: 4, 6: 16}
SAMPLE_RATE, RESOLUTION, RANGE = 0, 1, 2

# The H10's exact replies (note §2 table, SPEC19).
ECG_SETTINGS_REPLY = bytes.fromhex("F0 01 00 00 00 00 01 82 00 01 01 0E 00")
ACC_SETTINGS_REPLY = bytes.fromhex("F0 01 02 00 00 00 04 19 00 32 00 64 00 C8 00 01 01 10 00 02 03 02 00 04 00 08 00")
START_REPLY = {ECG: bytes.fromhex("F0 02 00 00 00 00"), ACC: bytes.fromhex("F0 02 02 00 00 01")}
# What a start may ask (the values the settings replies offer); every one must be given, once.
OFFERED = {ECG: {SAMPLE_RATE: {130}, RESOLUTION: {14}},
           ACC: {SAMPLE_RATE: {25, 50, 100, 200}, RESOLUTION: {16}, RANGE: {2, 4, 8}}}


def timestamp(index, rate):
    """ns since 2000-01-01 of absolute sample `index` of a stream at `rate` Hz."""
    return TIMESTAMP_BASE + index * 1_000_000_000 // rate


# MARK: frames


def ecg_frame(first_index, samples, rate=ECG_RATE):
    """ECG frame (type 00, frame type 00): n x int24 LE µV; timestamp of the last sample."""
    last = first_index + len(samples) - 1
    body = b"".join(int(v).to_bytes(3, "little", signed=True) for v in samples)
    return struct.pack("<BQB", ECG, timestamp(last, rate), 0x00) + body


def acc_raw_frame(first_index, vectors, rate):
    """ACC frame type 01: n x (x, y, z) int16 LE mG."""
    last = first_index + len(vectors) - 1
    body = b"".join(struct.pack("<hhh", *map(int, v)) for v in vectors)
    return struct.pack("<BQB", ACC, timestamp(last, rate), 0x01) + body


def signed_width(value):
    """Bits of the smallest two's complement field holding `value` (at least 1)."""
    width = 1
    while not -(1 << (width - 1)) <= value < (1 << (width - 1)):
        width += 1
    return width


def pack_block(deltas, width):
    """One delta block's bits: each value `width` bits, LSB first, in order (channels interleaved,
    sample after sample), packed from each byte's least significant bit; padding bits are 0."""
    bits, count = 0, 0
    for value in deltas:
        bits |= (value & ((1 << width) - 1)) << count
        count += width
    return bits.to_bytes((count + 7) // 8, "little")


def delta_blocks(vectors, block_size=16, width=None):
    """The blocks after a reference: [width u8][count u8][bits] for the deltas of `vectors`
    (vectors[0] is the reference; each later one is coded as its difference from the one before).
    Samples go in blocks of up to `block_size`, each with the smallest width holding its deltas
    (or `width` when given)."""
    out = b""
    deltas = [tuple(int(b) - int(a) for a, b in zip(p, q)) for p, q in zip(vectors, vectors[1:])]
    for start in range(0, len(deltas), block_size):
        block = deltas[start:start + block_size]
        flat = [d for sample in block for d in sample]
        w = width if width is not None else max(signed_width(d) for d in flat)
        out += bytes([w, len(block)]) + pack_block(flat, w)
    return out


def acc_delta_frame(first_index, vectors, rate, block_size=16):
    """ACC delta frame (frame type 0x81: bit 7 delta, 16-bit reference, FACTOR 1: the start reply
    has no FACTOR setting): reference x y z int16 LE, then delta blocks (note §3)."""
    last = first_index + len(vectors) - 1
    reference = struct.pack("<hhh", *map(int, vectors[0]))
    return (struct.pack("<BQB", ACC, timestamp(last, rate), 0x81) + reference
            + delta_blocks(vectors, block_size))


# MARK: the ECG ground truth


class EcgSeries:
    """The seeded RR series and its ECG, looped (see the module docstring)."""

    # ECGSYN (McSharry et al. 2003) P, Q, R, S, T: angles (degrees), amplitudes, widths (rad):
    # NeuroKit2's defaults for ecg_simulate(method="ecgsyn").
    ANGLES = (-70.0, -15.0, 0.0, 15.0, 100.0)
    AMPLITUDES = (1.2, -5.0, 30.0, -7.5, 0.75)
    WIDTHS = (0.25, 0.1, 0.1, 0.1, 0.4)
    FIRST_PEAK_MS = 300  # the first R-peak of the loop (before it: the previous beat's P and Q)
    MICROVOLTS_PER_UNIT = 4000.0  # ECGSYN's R (30 x 0.1^2 = 0.3) -> 1200 µV

    def __init__(self, seed, duration_s):
        rng = np.random.default_rng(seed)
        target_ms = int(duration_s * 1000)
        breathing = 0.2 + 0.1 * rng.random()  # Hz
        phase_b, phase_m = rng.random(2) * 2 * math.pi
        mean = 60000.0 / rng.uniform(58, 72)
        rr, t = [], 0.0
        while t < target_ms or len(rr) < 4:
            s = t / 1000.0
            value = (mean + 0.055 * mean * math.sin(2 * math.pi * breathing * s + phase_b)
                     + 0.02 * mean * math.sin(2 * math.pi * 0.1 * s + phase_m) + rng.normal(0, 12))
            value = int(round(min(1500, max(400, value))))
            rr.append(value)
            t += value
        # Loop period: a multiple of 100 ms (= 13 samples at 130 Hz) by adjusting the last RR.
        total = sum(rr)
        period = max(100, int(round(total / 100.0)) * 100)
        rr[-1] += period - total
        if not 400 <= rr[-1] <= 1500:  # could not absorb the rounding: adjust the one before too
            excess = rr[-1] - min(1500, max(400, rr[-1]))
            rr[-1] -= excess
            rr[-2] += excess
        self.seed = seed
        self.rr_ms = rr
        self.period_ms = sum(rr)
        self.loop_samples = self.period_ms * ECG_RATE // 1000
        assert self.loop_samples * 1000 == self.period_ms * ECG_RATE
        peaks = [self.FIRST_PEAK_MS]
        for value in rr[:-1]:
            peaks.append(peaks[-1] + value)
        self.peak_ms = peaks  # R-peak k at peak_ms[k] + m * period_ms; rr_ms[k] = peak k -> k+1
        self.peak_indices = [(p * 13 + 50) // 100 for p in peaks]
        self.samples = self._waveform(rng, breathing)

    def _waveform(self, rng, breathing):
        n = self.loop_samples
        t = np.arange(n) * (1000.0 / ECG_RATE)  # ms
        # R-peaks around the loop: the last one of the previous loop, this loop's, the next loop's first.
        peaks = np.array([self.peak_ms[-1] - self.period_ms] + self.peak_ms + [self.peak_ms[0] + self.period_ms],
                         dtype=float)
        k = np.searchsorted(peaks, t, side="right") - 1  # the beat whose R-peak is at or before t
        start, rr = peaks[k], peaks[k + 1] - peaks[k]
        theta = 2 * math.pi * (t - start) / rr
        theta = (theta + math.pi) % (2 * math.pi) - math.pi  # (-pi, pi]: R at 0, T after, P before the next R
        # ECGSYN's rate adjustment, per beat: widths x sqrt(hr/60), angles of P/T x (hr/60)^1/4, Q/S x sqrt.
        hrfact = np.sqrt(60000.0 / rr / 60.0)
        hrfact2 = np.sqrt(hrfact)
        z = np.zeros(n)
        for angle, a, b, f in zip(self.ANGLES, self.AMPLITUDES, self.WIDTHS,
                                  (hrfact2, hrfact, 1.0, hrfact, hrfact2)):
            centre = math.radians(angle) * f
            width = b * hrfact
            d = (theta - centre + math.pi) % (2 * math.pi) - math.pi
            # ECGSYN's z integrates -a * dtheta * omega * exp(-dtheta^2 / 2b^2): a * b^2 * exp(...).
            z += a * width ** 2 * np.exp(-d * d / (2 * width * width))
        cycles = max(1, int(round(breathing * self.period_ms / 1000.0)))  # whole cycles: the loop is seamless
        wander = 60.0 * np.sin(2 * math.pi * cycles * t / self.period_ms)
        noise = rng.normal(0, 6.0, n)
        return np.rint(z * self.MICROVOLTS_PER_UNIT + wander + noise).astype(np.int64)

    def sample_block(self, first, count):
        idx = (np.arange(first, first + count)) % self.loop_samples
        return self.samples[idx]

    def beat_time_ms(self, k):
        """Device time (ms) of absolute beat k's R-peak."""
        m, j = divmod(k, len(self.rr_ms))
        return self.peak_ms[j] + m * self.period_ms

    def rr_before(self, k):
        """The RR interval (ms) ending at absolute beat k's R-peak."""
        return self.rr_ms[(k - 1) % len(self.rr_ms)]

    def first_beat_after(self, ms):
        """The smallest absolute beat index whose R-peak is after device time `ms`."""
        m = max(0, int(ms // self.period_ms) - 1)
        k = m * len(self.rr_ms)
        while self.beat_time_ms(k) <= ms:
            k += 1
        return k

    def truth(self):
        return {
            "seed": self.seed,
            "samplingRate": ECG_RATE,
            "loopSamples": self.loop_samples,
            "loopMs": self.period_ms,
            "rrMs": self.rr_ms,
            "rr1024": [int(round(v * 1.024)) for v in self.rr_ms],
            "rPeakTimesMs": self.peak_ms,
            "rPeakIndices": self.peak_indices,
            "ecgMicrovolts": [int(v) for v in self.samples],
            "timestampBase": TIMESTAMP_BASE,
        }


def acc_vectors(seed, rate, range_g, first, count):
    """ACC vectors (mG) of absolute samples first ..< first+count at `rate` Hz: the strap lying on a
    breathing chest (z ~ 1 G, respiration 0.25 Hz, a little motion and noise), a pure function of
    (seed, rate, index): raw and delta frames of the same samples carry the same vectors."""
    j = np.arange(first, first + count, dtype=np.int64)
    t = j / float(rate)
    rng = np.random.default_rng([seed, rate])
    noise = rng.integers(-4, 5, size=(4096, 3))[j % 4096]
    phases = rng.random(3) * 2 * math.pi
    x = -15 + 40 * np.sin(2 * math.pi * 0.25 * t + phases[0]) + 12 * np.sin(2 * math.pi * 1.3 * t)
    y = 20 + 25 * np.sin(2 * math.pi * 0.25 * t + phases[1]) + 8 * np.sin(2 * math.pi * 0.7 * t + phases[2])
    z = 1008 + 30 * np.sin(2 * math.pi * 0.25 * t)
    v = np.rint(np.stack([x, y, z], axis=1)) + noise
    limit = range_g * 1000
    return np.clip(v, -limit, limit).astype(np.int64)


# MARK: the device


class JsonLines:
    """Appends JSON lines to `path` (none without one); `tags`: fields every line gets after its own."""

    def __init__(self, path, tags=None):
        self.path = path
        self.tags = tags or {}

    def write(self, entry):
        if self.path:
            with open(self.path, "a") as f:
                f.write(json.dumps({**entry, **self.tags}) + "\n")


def parse_settings(measurement, data):
    """(settings dict, None) or (None, status) for a start's parameters (note §2: repeated
    [id u8][count u8][count x LE value])."""
    settings, offset = {}, 0
    while offset < len(data):
        if len(data) - offset < 2:
            return None, INVALID_LENGTH  # a dangling byte
        sid, count = data[offset], data[offset + 1]
        offset += 2
        size = SETTING_SIZES.get(sid)
        if size is None:
            return None, INVALID_PARAMETER  # unknown setting id
        if len(data) - offset < count * size:
            return None, INVALID_LENGTH  # values run past the end
        if count != 1 or sid in settings or sid not in OFFERED[measurement]:
            return None, INVALID_PARAMETER  # a start gives each setting once, with one value
        settings[sid] = int.from_bytes(data[offset:offset + size], "little")
        offset += size
    for sid, allowed in OFFERED[measurement].items():
        if settings.get(sid) not in allowed:
            return None, INVALID_PARAMETER  # missing, or a value the settings reply does not offer
    return settings, None


class PolarH10:
    """The simulated H10's GATT server, control point and streams (see the module docstring)."""

    def __init__(self, device, args, name, number=0, address=None):
        """`number`: 0 for --h10's H10, NN for H10 NN of --h10s (seeded --h10-seed + NN, its
        log lines tagged "h10": NN and "address")."""
        self.device, self.args, self.name, self.number = device, args, name, number
        self.seed = args.h10_seed + number
        self.series = EcgSeries(self.seed, args.h10_duration)
        self.log = JsonLines(args.h10_log or args.log, {"h10": number, "address": address} if number else None)
        self.stops = args.h10_stop_after is not None and (args.h10_stops is None or number in args.h10_stops)
        self.epoch = time.monotonic()  # the device clock's zero (reset again at power-on)
        self.streams = {}  # type -> task
        self.stream_info = {}
        self.stop_timer = None
        self.stop_fired = False
        self.hr_task = None
        self.connection = None
        self.ecg_starts = []
        C, P = gatt.Characteristic, gatt.Characteristic.Properties

        def readable(uuid, value):
            return C(uuid, P.READ, C.READABLE, value)

        self.hrm = C("2A37", P.NOTIFY, C.Permissions(0), b"")
        self.control_point = C(PMD_CONTROL_POINT, P.READ | P.WRITE | P.INDICATE, C.READABLE | C.WRITEABLE,
                               gatt.CharacteristicValue(read=self.on_cp_read, write=self.on_cp_write))
        self.data = C(PMD_DATA, P.NOTIFY, C.Permissions(0), b"")
        device.add_services([
            gatt.Service("180D", [self.hrm, readable("2A38", bytes([1]))]),
            gatt.Service("180A", [readable("2A29", b"Polar Electro Oy"), readable("2A24", b"H10"),
                                  readable("2A26", b"3.0.35")]),
            gatt.Service("180F", [readable("2A19", bytes([100]))]),
            gatt.Service(PMD_SERVICE, [self.control_point, self.data]),
        ])
        device.gatt_server.max_mtu = args.h10_max_mtu
        device.on("connection", self.on_connection)
        device.on("characteristic_subscription", self.on_subscription)
        self.write_truth()

    # MARK: description

    def cccd(self, characteristic):
        for handle in range(characteristic.handle + 1, characteristic.end_group_handle + 1):
            attribute = self.device.gatt_server.get_attribute(handle)
            if attribute is not None and attribute.type == gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR:
                return handle
        return None

    def settings(self):
        a = self.args
        return {"id": self.name.split()[-1], "seed": self.seed, "number": self.number,
                "durationSeconds": self.series.period_ms / 1000,
                "accDelta": a.h10_acc_delta, "stopAfter": a.h10_stop_after if self.stops else None,
                "maxMtu": a.h10_max_mtu, "truth": None if self.number else a.h10_truth, "log": a.h10_log or a.log, "timestampBase": TIMESTAMP_BASE,
                "handles": {"heartRateMeasurement": self.hrm.handle, "heartRateMeasurementCCCD": self.cccd(self.hrm),
                            "controlPoint": self.control_point.handle,
                            "controlPointCCCD": self.cccd(self.control_point),
                            "data": self.data.handle, "dataCCCD": self.cccd(self.data)}}

    def write_truth(self):
        path = self.args.h10_truth
        if not path or self.number:
            return
        truth = {"device": self.name, **self.series.truth(),
                 "timestampOfSample": "timestampBase + floor(i * 1e9 / 130)",
                 "firstFrameTimestamp": self.ecg_starts[0]["firstFrameTimestamp"] if self.ecg_starts else None,
                 "firstSampleIndex": self.ecg_starts[0]["firstSampleIndex"] if self.ecg_starts else None,
                 "ecgStarts": self.ecg_starts}
        temporary = f"{path}.tmp{os.getpid()}"
        with open(temporary, "w") as f:
            json.dump(truth, f)
            f.write("\n")
        os.replace(temporary, path)

    # MARK: the clock

    def reset_clock(self):
        """The device clock's zero: the H10's power-on."""
        self.epoch = time.monotonic()

    def now(self):
        """Device time, seconds."""
        return time.monotonic() - self.epoch

    async def until(self, device_seconds):
        delay = self.epoch + device_seconds - time.monotonic()
        await asyncio.sleep(delay if delay > 0 else 0)

    # MARK: connections

    def on_connection(self, connection):
        self.connection = connection
        self.stop_fired = False
        connection.on("disconnection", lambda reason: self.on_disconnection(connection, reason))

    def on_disconnection(self, connection, reason):
        self.stop_all()
        if self.hr_task is not None:
            self.hr_task.cancel()
            self.hr_task = None
        if self.stop_timer is not None:
            self.stop_timer.cancel()
            self.stop_timer = None
        if self.connection is connection:
            self.connection = None
        self.log.write({"kind": "h10-disconnection", "time": time.time(), "reason": int(reason)})

    def on_subscription(self, connection, characteristic, notify_enabled, indicate_enabled):
        if characteristic not in (self.hrm, self.control_point, self.data):
            return
        which = {id(self.hrm): "heartRate", id(self.control_point): "controlPoint", id(self.data): "data"}
        self.log.write({"kind": "h10-subscription", "time": time.time(), "characteristic": which[id(characteristic)],
                        "notify": bool(notify_enabled), "indicate": bool(indicate_enabled)})
        if characteristic is self.hrm:
            if self.hr_task is not None:
                self.hr_task.cancel()
                self.hr_task = None
            if notify_enabled:
                self.hr_task = asyncio.create_task(self.send_heart_rate(connection))

    def cp_indications_on(self, connection):
        cccd = (self.device.gatt_server.subscribers.get(connection) or {}).get(self.control_point.handle)
        return bool(cccd) and len(cccd) == 2 and cccd[0] & 0x02 != 0

    # MARK: the control point

    def on_cp_read(self, connection):
        return CP_READ_VALUE

    def on_cp_write(self, connection, value):
        value = bytes(value)
        if not value:
            # No op to echo: refused at the ATT level (a choice: no source shows this case).
            raise att.ATT_Error(att.ATT_INVALID_ATTRIBUTE_LENGTH_ERROR)
        if not self.cp_indications_on(connection):
            self.log.write({"kind": "h10-cp-ignored", "time": time.time(), "value": value.hex(),
                            "why": "control point indications off"})
            return
        reply = self.command(connection, value)
        self.log.write({"kind": "h10-cp", "time": time.time(), "value": value.hex(), "reply": reply.hex()})
        asyncio.ensure_future(self.indicate(connection, reply))

    async def indicate(self, connection, value):
        try:
            await self.device.indicate_subscriber(connection, self.control_point, value)
        except Exception as error:  # the link went away or the client never confirmed
            log.info("h10: control point indication not confirmed: %s", error)

    def command(self, connection, value):
        """The indication answering control point write `value` (at least one byte).

        Checks, in order: op (01 get settings, 02 start, 03 stop; any other -> 1 invalid op: ops
        04-09 exist only on newer devices, the H10's answers to them are not documented), a type
        byte present (else 4), the type (not a PMD type -> 2 invalid type; a PMD type the H10 lacks,
        PPG, PPI, gyro ..., or any offline-recording type (bit 7) -> 3 not supported: the H10's
        answers to these are not documented, 3 is this simulation's choice), the link's ATT MTU
        (below 232 -> 10 invalid MTU, for every op), the length (get settings and stop: exactly 2
        bytes, else 4; start: settings that run past the end or a dangling byte -> 4), the start's
        settings (an unknown id, a count other than 1, a repeated or missing setting, or a value the
        settings reply does not offer -> 5 invalid parameter; statuses 7-9 are not used), the
        state (start of a running stream, stop of a stopped one -> 6 already in state).
        Errors: F0 op type status 00.  Successes: the note's table, byte for byte."""
        op = value[0]
        kind = value[1] if len(value) > 1 else 0

        def error(status):
            return bytes([0xF0, op, kind, status, 0x00])

        if op not in (GET_SETTINGS, START, STOP):
            return error(INVALID_OP)
        if len(value) < 2:
            return error(INVALID_LENGTH)
        if kind & 0x7F not in KNOWN_TYPES:
            return error(INVALID_TYPE)
        if kind not in (ECG, ACC):
            return error(NOT_SUPPORTED)
        if connection.att_mtu < REQUIRED_MTU:
            return error(INVALID_MTU)
        if op == GET_SETTINGS:
            if len(value) != 2:
                return error(INVALID_LENGTH)
            return ECG_SETTINGS_REPLY if kind == ECG else ACC_SETTINGS_REPLY
        if op == STOP:
            if len(value) != 2:
                return error(INVALID_LENGTH)
            if kind not in self.streams:
                return error(ALREADY_IN_STATE)
            self.stop(kind, "client")
            return bytes([0xF0, STOP, kind, SUCCESS, 0x00])
        settings, status = parse_settings(kind, value[2:])
        if status is not None:
            return error(status)
        if kind in self.streams:
            return error(ALREADY_IN_STATE)
        self.start(connection, kind, settings)
        return START_REPLY[kind]

    # MARK: streams

    def start(self, connection, kind, settings):
        mtu = connection.att_mtu
        rate = settings[SAMPLE_RATE]
        first = math.ceil(self.now() * rate)
        if kind == ECG:
            per_frame = (mtu - 13) // 3
            info = {"measurement": "ecg", "rate": rate, "firstSampleIndex": first, "samplesPerFrame": per_frame,
                    "mtu": mtu, "firstFrameTimestamp": timestamp(first + per_frame - 1, rate)}
            self.ecg_starts.append({k: info[k] for k in ("firstSampleIndex", "firstFrameTimestamp",
                                                         "samplesPerFrame", "mtu")})
            self.write_truth()
            task = self.send_ecg(connection, first, per_frame)
        else:
            delta = self.args.h10_acc_delta
            per_frame = (mtu - 13) // 6
            info = {"measurement": "acc", "rate": rate, "range": settings[RANGE], "firstSampleIndex": first,
                    "samplesPerFrame": per_frame, "mtu": mtu, "frameType": 0x81 if delta else 0x01}
            task = self.send_acc(connection, first, per_frame, rate, settings[RANGE], delta)
        self.log.write({"kind": "h10-start", "time": time.time(), **info})
        self.stream_info[kind] = info
        self.streams[kind] = asyncio.ensure_future(task)
        if self.stops and self.stop_timer is None and not self.stop_fired:
            self.stop_timer = asyncio.ensure_future(self.stop_later(connection))

    def stop(self, kind, why):
        task = self.streams.pop(kind, None)
        self.stream_info.pop(kind, None)
        if task is not None:
            task.cancel()
            self.log.write({"kind": "h10-stop", "time": time.time(), "measurement": TYPE_NAMES[kind], "by": why})

    def stop_all(self):
        for kind in list(self.streams):
            self.stop(kind, "disconnection")

    async def stop_later(self, connection):
        """--h10-stop-after: the device stops every stream itself and says so: 01 + their types."""
        try:
            await asyncio.sleep(self.args.h10_stop_after)
            self.stop_fired = True
            kinds = sorted(self.streams)
            for kind in kinds:
                self.stop(kind, "device")
            value = bytes([0x01] + kinds)
            self.log.write({"kind": "h10-device-stop", "time": time.time(), "value": value.hex(),
                            "indicated": self.cp_indications_on(connection)})
            if kinds:
                await self.indicate(connection, value)
        except asyncio.CancelledError:
            raise
        finally:
            self.stop_timer = None

    def sent_clock(self, sent):
        """{"sent": CLOCK_MONOTONIC s before the notification} with --log-sent-clock, else {}."""
        return {"sent": sent} if self.args.log_sent_clock else {}

    async def send_ecg(self, connection, first, per_frame):
        try:
            index = first
            while True:
                last = index + per_frame - 1
                await self.until((last + 1e-6) / ECG_RATE)
                frame = ecg_frame(index, self.series.sample_block(index, per_frame))
                sent = time.monotonic()
                await self.device.notify_subscriber(connection, self.data, frame)
                self.log.write({"kind": "h10-frame", "time": time.time(), **self.sent_clock(sent),
                                "measurement": "ecg", "frameType": 0,
                                "timestamp": timestamp(last, ECG_RATE), "firstSample": index,
                                "count": per_frame, "value": frame.hex(),
                                **({"samples": [int(v) for v in self.series.sample_block(index, per_frame)]}
                                   if self.number else {})})
                index += per_frame
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.info("h10: ECG stopped: %s", error)

    async def send_acc(self, connection, first, per_frame, rate, range_g, delta):
        try:
            index = first
            limit = connection.att_mtu - 3
            while True:
                count = per_frame
                vectors = acc_vectors(self.seed, rate, range_g, index, count)
                if delta:
                    frame = acc_delta_frame(index, vectors, rate)
                    while len(frame) > limit:  # wide deltas: fewer samples in this frame
                        count -= 1
                        vectors = vectors[:count]
                        frame = acc_delta_frame(index, vectors, rate)
                else:
                    frame = acc_raw_frame(index, vectors, rate)
                last = index + count - 1
                await self.until((last + 1e-6) / rate)
                sent = time.monotonic()
                await self.device.notify_subscriber(connection, self.data, frame)
                self.log.write({"kind": "h10-frame", "time": time.time(), **self.sent_clock(sent), "measurement": "acc",
                                "frameType": frame[9], "timestamp": timestamp(last, rate), "firstSample": index,
                                "count": count, "rate": rate, "value": frame.hex(),
                                "samples": vectors.tolist()})
                index += count
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.info("h10: ACC stopped: %s", error)

    async def send_heart_rate(self, connection):
        """Once a second of device time: the beats whose R-peak fell in that second, their RR
        intervals in 1/1024 s, the rate 60 / their mean RR (the last rate when none fell in it)."""
        series = self.series
        try:
            second = math.ceil(self.now())
            beat = series.first_beat_after((second - 1) * 1000)
            bpm = int(round(60000 / series.rr_before(beat)))
            while True:
                await self.until(second)
                beats = []
                while series.beat_time_ms(beat) <= second * 1000:
                    beats.append(beat)
                    beat += 1
                rr_ms = [series.rr_before(k) for k in beats]
                if rr_ms:
                    bpm = int(round(60000 * len(rr_ms) / sum(rr_ms)))
                units = [int(round(v * 1.024)) for v in rr_ms]
                # Flags: u8 rate, contact detected (and supported), RR present only when some beat
                # ended in this second (RR flag without RR values is invalid, HRS 3.1).
                value = bytes([0x16 if units else 0x06, min(255, bpm)]) + b"".join(struct.pack("<H", u) for u in units)
                sent = time.monotonic()
                await self.device.notify_subscriber(connection, self.hrm, value)
                self.log.write({"kind": "h10-heart-rate", "time": time.time(), **self.sent_clock(sent), "second": second,
                                "value": value.hex(), "beats": beats, "rrMs": rr_ms})
                second += 1
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.info("h10: heart rate stopped: %s", error)
