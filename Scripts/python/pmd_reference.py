"""An independent, plain-Python decoder of Polar PMD data frames: the reference RawbleWire's PMD
decoder is tested against (and, later, benchmarked against).

Reads one frame a line on stdin: `FACTOR HEX`, where FACTOR is the float factor of the stream's
start reply (1 when it has none) and HEX the frame's bytes. Prints one JSON object a line, in the
same order: {"type", "timestamp", "frame_type", "samples"} with samples a list of lists (one value
for ECG, x y z for acceleration), or {"error": "..."} when the frame is malformed.

Layouts (docs: /work/shared/notes/polar-pmd.md §3): header = type (& 0x3F), u64 LE ns since
2000-01-01 (the last sample's time), frame type (bit 7 = delta-compressed). ECG frame type 0:
int24 LE µV. Acceleration raw frame types 0, 1, 2: three int8 / int16 LE / int24 LE, mG.
Acceleration delta frame types 0x80 and 0x81: 3 channels, 16-bit reference, blocks of
[width][count][ceil(width*3*count/8) bytes], bits LSB first; 0x81 values times the factor
(unchanged when the factor is 1), 0x80 values times factor * 1000, in float32, truncated.
Standard library only.
Run: Scripts/venv-python Scripts/python/pmd_reference.py < frames.txt
"""
import json
import math
import struct
import sys

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def f32(x):
    """x rounded to the nearest float32 (inf when out of range, NaN kept)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def to_int32(x):
    """Kotlin's Float.toInt(): NaN is 0, truncation toward zero, saturation."""
    if math.isnan(x):
        return 0
    if x >= 2147483648.0:
        return INT32_MAX
    if x <= -2147483648.0:
        return INT32_MIN
    return int(x)


def wrap32(x):
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def signed(data, width):
    value = int.from_bytes(data, "little")
    if value >= 1 << (8 * width - 1):
        value -= 1 << (8 * width)
    return value


def raw_samples(payload, channels, width):
    size = channels * width
    if len(payload) % size:
        raise ValueError("partial sample")
    return [[signed(payload[i + c * width:i + (c + 1) * width], width) for c in range(channels)]
            for i in range(0, len(payload), size)]


def delta_samples(payload, channels, resolution):
    ref_width = (resolution + 7) // 8
    if len(payload) < channels * ref_width:
        raise ValueError("short reference")
    current = [signed(payload[c * ref_width:(c + 1) * ref_width], ref_width) for c in range(channels)]
    samples = [list(current)]
    pos = channels * ref_width
    while pos < len(payload):
        if len(payload) - pos < 2:
            raise ValueError("short block header")
        width, count = payload[pos], payload[pos + 1]
        pos += 2
        if not 1 <= width <= 32:
            raise ValueError("bad width")
        nbytes = (width * channels * count + 7) // 8
        if len(payload) - pos < nbytes:
            raise ValueError("short block")
        bits = int.from_bytes(payload[pos:pos + nbytes], "little")
        pos += nbytes
        shift = 0
        for _ in range(count):
            for c in range(channels):
                delta = (bits >> shift) & ((1 << width) - 1)
                shift += width
                if delta >= 1 << (width - 1):
                    delta -= 1 << width
                current[c] = wrap32(current[c] + delta)
            samples.append(list(current))
    return samples


def decode(frame, factor):
    if len(frame) < 10:
        raise ValueError("short header")
    kind = frame[0] & 0x3F
    timestamp = int.from_bytes(frame[1:9], "little")
    frame_type = frame[9]
    payload = frame[10:]
    if kind == 0:
        if frame_type != 0:
            raise ValueError("ECG frame type")
        samples = raw_samples(payload, 1, 3)
    elif kind == 2:
        if frame_type in (0, 1, 2):
            samples = raw_samples(payload, 3, frame_type + 1)
        elif frame_type in (0x80, 0x81):
            samples = delta_samples(payload, 3, 16)
            factor = f32(factor)
            if frame_type == 0x81 and factor == 1.0:
                pass
            else:
                scale = f32(factor * 1000) if frame_type == 0x80 else factor
                samples = [[to_int32(f32(f32(v) * scale)) for v in s] for s in samples]
        else:
            raise ValueError("ACC frame type")
    else:
        raise ValueError("measurement type")
    return {"type": kind, "timestamp": timestamp, "frame_type": frame_type, "samples": samples}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        factor_text, _, hex_text = line.partition(" ")
        try:
            result = decode(bytes.fromhex(hex_text), float(factor_text))
        except ValueError as error:
            result = {"error": str(error)}
        print(json.dumps(result))


if __name__ == "__main__":
    main()
