"""bumble_pairing: Google Bumble's own host pairing (LE Secure Connections, Just Works) on a Bumble
link, and Bumble's cryptography per pairing: the reference for Benchmarks/Sources/PairingTiming
(rawble) in Scripts/benchmark-pairing (issue 24).

Same modes, same output: one JSON object per line on stdout, times as CLOCK_MONOTONIC
nanoseconds (time.monotonic_ns).

  bumble_pairing.py pair   --transport tcp:127.0.0.1:PORT --address AA:BB:CC:DD:EE:FF --count N
                           [--pair-timeout S] [--timeout S]
  bumble_pairing.py crypto --count N --batches B [--timeout S]

`pair`: a Bumble Device (central, random static address) connects to the peripheral at --address
N times, and on each link pairs (`connection.pair()`, which always starts a pairing) with the
pairing rawble's host offers by default: LE Secure Connections, bonding, no MITM,
NoInputNoOutput (so Just Works), only the encryption key offered as initiator (with LE Secure
Connections that sends nothing), then disconnects. Per pairing one line
  {"event": "paired", "index": i, "connected": t, "encryptionChange": t, "paired": t, ...}
"connected": `connect` returned; "encryptionChange": the controller's Encryption Change event
reached the host (seen by a pass-through between the transport's source and the host, before
the host parses it); "paired": `pair()` returned (after the key distribution that follows
encryption, and the keys kept in the Device's in-memory key store).

`crypto`: what a pairing computes, each --count times in each of --batches batches, through
`bumble.crypto` (the `cryptography` package, OpenSSL, when importable, as here): P-256 key
generation (`EccKey.generate()` and its public key's x and y, as Pairing Public Key carries
them), ECDH (`EccKey.dh`: the peer's public numbers made a key, which checks the point, then
the exchange), f4, f5, f6, g2. Per operation one line {"op": NAME, "ns": [...], "wallNs": [...]}:
per call, each batch, the thread's CPU time and the wall time.
"""

import argparse
import asyncio
import json
import sys
import time

from bumble import crypto, hci
from bumble.device import Device
from bumble.pairing import PairingConfig, PairingDelegate
from bumble.transport import open_transport

OWN_ADDRESS = "F0:F1:F2:F3:F4:F5"  # random static, as rawble's adapter uses one


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class MarkingSource:
    """The transport's source with a pass-through in front of the host: notes when an
    Encryption Change (0x08) or Encryption Change v2 (0x59) event comes from the controller."""

    def __init__(self, source):
        self.source = source
        self.sink = None
        self.encryption_change = 0

    def set_packet_sink(self, sink):
        self.sink = sink
        self.source.set_packet_sink(self)

    def on_packet(self, packet):
        # H4: the packet type (0x04, an event), then the event code.
        if len(packet) > 1 and packet[0] == 0x04 and packet[1] in (0x08, 0x59):
            self.encryption_change = time.monotonic_ns()
        self.sink.on_packet(packet)

    def on_transport_lost(self):
        # Not forwarded by __getattr__: the source calls its sink's, which is this object.
        lost = getattr(self.sink, "on_transport_lost", None)
        if lost:
            lost()

    def __getattr__(self, name):
        return getattr(self.source, name)


def pairing_config(_connection):
    delegate = PairingDelegate(
        io_capability=PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT,
        local_initiator_key_distribution=PairingDelegate.KeyDistribution.DISTRIBUTE_ENCRYPTION_KEY,
    )
    return PairingConfig(sc=True, mitm=False, bonding=True, delegate=delegate)


async def pair(args):
    host, port = args.transport.split(":", 2)[1:]
    transport = await open_transport(f"tcp-client:{host}:{port}")
    source = MarkingSource(transport.source)
    device = Device.with_hci("bumble-pairing", hci.Address(OWN_ADDRESS), source, transport.sink)
    device.pairing_config_factory = pairing_config
    await device.power_on()
    emit(phase="opened", t=time.monotonic_ns())
    peer = hci.Address(args.address, hci.Address.RANDOM_DEVICE_ADDRESS)
    for index in range(1, args.count + 1):
        connection = await device.connect(peer, own_address_type=hci.OwnAddressType.RANDOM, timeout=10)
        connected = time.monotonic_ns()
        source.encryption_change = 0
        keys = []
        connection.on("pairing", keys.append)
        try:
            await asyncio.wait_for(connection.pair(), args.pair_timeout)
        except asyncio.TimeoutError:
            emit(error=f"pairing {index}: timed out after {args.pair_timeout} s")
            return 1
        paired = time.monotonic_ns()
        encryption_change = source.encryption_change
        if not connection.is_encrypted:
            emit(error=f"pairing {index}: the link is not encrypted")
            return 1
        if not keys or keys[0].ltk is None or keys[0].ltk.authenticated:
            emit(error=f"pairing {index}: not LE Secure Connections Just Works ({keys})")
            return 1
        if encryption_change <= connected:
            emit(error=f"pairing {index}: no Encryption Change seen")
            return 1
        emit(event="paired", index=index, connected=connected, encryptionChange=encryption_change, paired=paired)
        await connection.disconnect()
    await transport.close()
    return 0


def timed(name, args, body):
    """Per call: the thread's CPU time (time.thread_time_ns, CLOCK_THREAD_CPUTIME_ID) and wall
    time, each batch."""
    body(0)  # warm-up
    cpu, wall = [], []
    for _ in range(args.batches):
        start_cpu, start_wall = time.thread_time_ns(), time.monotonic_ns()
        for i in range(args.count):
            body(i)
        cpu.append((time.thread_time_ns() - start_cpu) / args.count)
        wall.append((time.monotonic_ns() - start_wall) / args.count)
    emit(op=name, count=args.count, ns=cpu, wallNs=wall)


async def crypto_costs(args):
    # Inputs as a pairing has them (Bumble's byte order: least significant byte first, the keys'
    # coordinates most significant first as EccKey holds them).
    local = crypto.EccKey.generate()
    peers = [crypto.EccKey.generate() for _ in range(16)]
    peer_points = [(p.x, p.y) for p in peers]
    pka = local.x[::-1]
    pkbs = [x[::-1] for x, _ in peer_points]
    na = bytes.fromhex("d5cb8454d177733effffb2ec712baeab")[::-1]
    nb = bytes.fromhex("a6e8e7cc25a75f6e2163fee8ab9ab52f")[::-1]
    initiator = bytes.fromhex("f0f1f2f3f4f5")[::-1] + bytes([1])
    responder = bytes.fromhex("c0b1e0000001")[::-1] + bytes([1])
    io_cap = bytes([0x03, 0x00, 0x09])  # as the Pairing Request's bytes 1-3: IO, OOB, AuthReq
    dh_key = local.dh(*peer_points[0])[::-1]
    mac_key, _ = crypto.f5(dh_key, na, nb, initiator, responder)
    zero = bytes(16)
    z = bytes(1)

    def keygen(_i):
        key = crypto.EccKey.generate()
        return key.x, key.y

    timed("keygen", args, keygen)
    timed("ecdh", args, lambda i: local.dh(*peer_points[i & 15]))
    timed("f4", args, lambda i: crypto.f4(pka, pkbs[i & 15], nb, z))
    timed("f5", args, lambda i: crypto.f5(dh_key, na, nb, initiator, responder))
    timed("f6", args, lambda i: crypto.f6(mac_key, na, nb, zero, io_cap, initiator, responder))
    timed("g2", args, lambda i: crypto.g2(pka, pkbs[i & 15], na, nb))
    emit(event="crypto-done", backend=crypto.EccKey.__module__)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["pair", "crypto"])
    parser.add_argument("--transport", help="tcp:HOST:PORT")
    parser.add_argument("--address")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--pair-timeout", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    if args.mode == "pair" and not (args.transport and args.address):
        parser.error("pair needs --transport and --address")
    body = {"pair": pair, "crypto": crypto_costs}[args.mode]

    async def bounded():
        try:
            return await asyncio.wait_for(body(args), args.timeout)
        except asyncio.TimeoutError:
            emit(error=f"timed out after {args.timeout} s")
            return 1

    return asyncio.run(bounded())


if __name__ == "__main__":
    sys.exit(main())
