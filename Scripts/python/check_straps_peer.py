"""check_straps_peer: proves bumble-peer's several straps (`--straps N`, `--strap-drops`,
`--max-links`, `--strap-hostile`; issue 41) do what bumble_peer.py's docstring says, with no rawble involved.

Each case starts its own bumble_peer.py (`--port 0`, 127.0.0.1 only) and drives its served
controller over TCP with an independent Bumble `Device` as the outside host (the place rawble's
host takes in the real tests), which connects to the straps as a central, subscribes to each
one's Heart Rate Measurement and keeps what each link delivers.

Prints one line per case ("ok   NAME: what was seen (time)" or "FAIL NAME: why") and exits 0 only
when every case passed (1 otherwise, 3 when Bumble is missing).  Every wait is bounded; every
process it starts is stopped by its PID.  ~20 s on 2 cores:

    Scripts/venv-python Scripts/python/check_straps_peer.py [-k SUBSTRING] [-v]
"""

import asyncio
import json
import os
import shutil
import sys
import tempfile
import time

try:
    from bumble import hci
    from bumble.core import UUID, BaseBumbleError
    from bumble.device import Device, Peer
    from bumble.transport import open_transport
except ImportError:
    print("check_straps_peer: Bumble is not installed in this Python (run Scripts/bootstrap)", file=sys.stderr)
    sys.exit(3)

HERE = os.path.dirname(os.path.abspath(__file__))
PEER_SCRIPT = os.path.join(HERE, "bumble_peer.py")
HOST_ADDRESS = "C4:11:22:33:44:77"
# A second host's, on another served controller of the same link (--ports 2).
SECOND_HOST_ADDRESS = "C4:11:22:33:44:78"
VERBOSE = False


from checklib import Failed, command_line, run_cases, run_main, stop_process


def expect(condition, why):
    if not condition:
        raise Failed(why)


class PeerProcess:
    def __init__(self, arguments):
        self.arguments = arguments
        self.directory = tempfile.mkdtemp(prefix="check-straps-")
        self.log_path = os.path.join(self.directory, "straps.jsonl")
        self.process = None
        self.ready = None

    async def __aenter__(self):
        stderr = open(os.path.join(self.directory, "stderr.log"), "wb")
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, PEER_SCRIPT, "--port", "0", "--lifetime", "60", "--log", self.log_path,
            *self.arguments, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr)
        stderr.close()
        line = await asyncio.wait_for(self.process.stdout.readline(), 20)
        if not line:
            raise Failed(f"bumble-peer exited before its ready line: {self.stderr_tail()}")
        self.ready = json.loads(line)
        return self

    async def __aexit__(self, *exc):
        await stop_process(self.process)
        if not VERBOSE:
            shutil.rmtree(self.directory, ignore_errors=True)

    @property
    def port(self):
        return int(self.ready["transport"].rsplit(":", 1)[1])

    def straps(self):
        return [d for d in self.ready["devices"] if d.get("heartRate") is not None]

    def log(self):
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path) as f:
            return [json.loads(line) for line in f if line.endswith("\n") and line.strip()]

    def sent(self, address):
        """The values the strap at `address` logged, in order: (position, bytes)."""
        return [(e["position"], bytes.fromhex(e["value"])) for e in self.log()
                if "kind" not in e and e.get("strap") == address]

    def stderr_tail(self):
        try:
            with open(os.path.join(self.directory, "stderr.log"), "rb") as f:
                return f.read()[-600:].decode("utf-8", "replace")
        except OSError:
            return ""


class Host:
    """A Bumble Device on the peer's served controller: connects to straps, keeps their values."""

    def __init__(self, address=HOST_ADDRESS):
        self.address = address
        self.transport = self.device = None
        self.received = {}  # strap address -> [bytes], over every link to it
        self.links = {}  # strap address -> its current Connection

    async def __aenter__(self):
        return self

    async def open(self, port):
        self.transport = await asyncio.wait_for(open_transport(f"tcp-client:127.0.0.1:{port}"), 10)
        self.device = Device.with_hci("check-host", hci.Address(self.address), self.transport.source,
                                      self.transport.sink)
        await asyncio.wait_for(self.device.power_on(), 10)
        return self

    async def __aexit__(self, *exc):
        if self.transport is not None:
            try:
                await asyncio.wait_for(self.transport.close(), 5)
            except Exception:
                pass

    async def connect(self, strap):
        address = strap["address"]
        connection = await asyncio.wait_for(self.device.connect(
            hci.Address(address), own_address_type=hci.OwnAddressType.RANDOM, timeout=10), 15)
        self.links[address] = connection
        return connection

    async def subscribe(self, strap):
        handles = strap["heartRate"]["handles"]
        address = strap["address"]
        peer = Peer(self.links[address])
        values = self.received.setdefault(address, [])
        peer.gatt_client.notification_subscribers.setdefault(handles["measurement"], set()).add(
            lambda value: values.append(bytes(value)))
        await asyncio.wait_for(peer.write_value(handles["measurementCCCD"], b"\x01\x00", with_response=True), 5)

    async def until(self, condition, within, what):
        """Waits (bounded) for `condition()`; the loop turns between looks, events drive it."""
        deadline = time.monotonic() + within
        while not condition():
            if time.monotonic() > deadline:
                raise Failed(f"{what} not within {within} s")
            await asyncio.sleep(0.02)


def check_per_strap(peer, host, straps, count):
    """Every strap logged `count` values, positions 0..count-1 once each, and the host got the
    same bytes in the same order; the straps' values differ at each position."""
    for strap in straps:
        address = strap["address"]
        sent = peer.sent(address)
        expect([p for p, _ in sent] == list(range(count)),
               f"{strap['name']}: positions {[p for p, _ in sent]}, expected 0..{count - 1}")
        expect(host.received.get(address) == [v for _, v in sent],
               f"{strap['name']}: received {len(host.received.get(address, []))} values, sent {len(sent)}, or different")
    firsts = {peer.sent(s["address"])[0][1] for s in straps}
    expect(len(firsts) == len(straps), "two straps sent the same first value")


async def case_ready_line():
    async with PeerProcess(["--straps", "3"]) as peer:
        names = [d["name"] for d in peer.ready["devices"]]
        expect(names[:4] == ["rawble-strap", "rawble-strap-01", "rawble-strap-02", "rawble-strap-03"], f"names {names}")
        expect({"rawble-beacon", "rawble-thermo", "rawble-broken"} <= set(names), f"standard devices missing: {names}")
        straps = peer.straps()
        addresses = [s["address"] for s in straps]
        expect(addresses == ["C0:B1:E0:00:00:01", "C0:B1:E0:00:01:01", "C0:B1:E0:00:01:02", "C0:B1:E0:00:01:03"],
               f"addresses {addresses}")
        expect([s["heartRate"]["strap"] for s in straps] == [0, 1, 2, 3], "strap numbers")
        expect(len({s["pairing"]["irk"] for s in straps}) == 4, "the straps share an IRK")
    async with PeerProcess(["--strap-only", "--straps", "20"]) as peer:
        names = [d["name"] for d in peer.ready["devices"]]
        expect(names == ["rawble-strap-%02d" % k for k in range(1, 21)], f"--strap-only --straps 20: {names}")
        expect(peer.straps()[-1]["address"] == "C0:B1:E0:00:01:20", "strap 20's address")
    return "--straps 3 beside the standard devices, --strap-only --straps 20 alone; addresses, numbers, IRKs"


async def case_streaming():
    count = 8
    async with PeerProcess(["--strap-only", "--straps", "4", "--hr-count", str(count), "--hr-interval", "0.02"]) as peer, \
            Host() as host:
        await host.open(peer.port)
        straps = peer.straps()
        for strap in straps:
            await host.connect(strap)
        for strap in straps:
            await host.subscribe(strap)
        await host.until(lambda: all(len(host.received.get(s["address"], [])) >= count for s in straps), 10,
                         f"{count} values from each of 4 straps")
        check_per_strap(peer, host, straps, count)
        bpm = [host.received[s["address"]][1][1] for s in straps]
        expect(bpm == [64 + k for k in range(1, 5)], f"second value's bpm per strap {bpm}: expected 64 + NN")
        return f"4 links, {count} values each, logged with their strap, bpm {bpm}"


async def case_drops():
    count, after = 10, 3
    async with PeerProcess(["--strap-only", "--straps", "3", "--hr-count", str(count), "--hr-interval", "0.02",
                            "--hr-disconnect-after", str(after), "--hr-disconnects", "2", "--strap-drops", "2"]) as peer, \
            Host() as host:
        await host.open(peer.port)
        straps = peer.straps()
        expect([s["heartRate"]["disconnectAfter"] for s in straps] == [None, after, None], "disconnectAfter per strap")
        dropping = straps[1]
        drops = asyncio.Queue()
        for strap in straps:
            connection = await host.connect(strap)
            if strap is dropping:
                connection.on("disconnection", lambda reason: drops.put_nowait(reason))
            await host.subscribe(strap)
        for _ in range(2):
            reason = await asyncio.wait_for(drops.get(), 10)
            expect(reason == hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR, f"drop reason {reason}")
            connection = await host.connect(dropping)
            connection.on("disconnection", lambda reason: drops.put_nowait(reason))
            await host.subscribe(dropping)
        await host.until(lambda: all(len(host.received.get(s["address"], [])) >= count for s in straps), 10,
                         f"{count} values from each of 3 straps")
        check_per_strap(peer, host, straps, count)
        disconnects = [e for e in peer.log() if e.get("kind") == "disconnect"]
        expect([(e["strap"], e["after"]) for e in disconnects] == [(dropping["address"], after), (dropping["address"], 2 * after)],
               f"disconnects {disconnects}")
        return f"strap 2 dropped after {after} and {2 * after} values and resumed; 1 and 3 never dropped"


async def case_max_links():
    results = []
    for status in ("", ":0x07", ":0x09"):
        async with PeerProcess(["--strap-only", "--straps", "3", "--max-links", "2" + status,
                                "--hr-count", "0", "--hr-script", "realistic", "--hr-interval", "0.02"]) as peer, \
                Host() as host:
            await host.open(peer.port)
            straps = peer.straps()
            for strap in straps[:2]:
                await host.connect(strap)
            try:
                await host.connect(straps[2])
                raise Failed(f"--max-links 2{status}: a third link was made")
            except hci.HCI_Error as error:
                code = error.error_code
            except BaseBumbleError as error:
                raise Failed(f"--max-links 2{status}: third connect failed otherwise: {error!r}")
            wanted = int(status[1:], 16) if status else 0x0D
            expect(code == wanted, f"status 0x{code:02X}, expected 0x{wanted:02X}")
            # The two links stay up and carry notifications.
            for strap in straps[:2]:
                await host.subscribe(strap)
            await host.until(lambda: all(len(host.received.get(s["address"], [])) >= 3 for s in straps[:2]), 10,
                             "values on the two links after the refusal")
            results.append(f"0x{code:02X}")
    return "the third Create Connection refused with " + ", ".join(results) + "; the two links kept streaming"


HOSTILE_NAME = "\x1b[2J\x1b]0;pwn\x07ev\u009bil\r\n"  # as bumble_peer.py's docstring gives it


async def case_hostile():
    """--strap-hostile: strap 1 floods, 2 sends garbage, 3 lies in its GATT database, 4 drops
    every 2 s; strap 5 is a good one beside them."""
    async with PeerProcess(["--strap-only", "--straps", "5", "--hr-interval", "0.01", "--hr-count", "20",
                            "--strap-hostile", "1:flood", "--strap-hostile", "2:garbage",
                            "--strap-hostile", "3:hostile-gatt", "--strap-hostile", "4:drops"]) as peer, \
            Host() as host:
        await host.open(peer.port)
        straps = peer.straps()
        expect([s["heartRate"]["hostile"] for s in straps] == ["flood", "garbage", "hostile-gatt", "drops", None],
               "hostile per strap")
        flood, garbage, lying, dropping, good = straps
        # hostile-gatt: its name is escape sequences, advertised and read; the database lies.
        expect(lying["name"] == HOSTILE_NAME and lying["advertisedName"] == HOSTILE_NAME, f"name {lying['name']!r}")
        connection = await host.connect(lying)
        peer_gatt = Peer(connection)
        await asyncio.wait_for(peer_gatt.request_mtu(247), 5)  # the whole name in one Read By Type
        services = await asyncio.wait_for(peer_gatt.discover_services(), 20)
        expect(len(services) >= 200 + 3, f"{len(services)} services")
        names = await asyncio.wait_for(peer_gatt.read_characteristics_by_uuid(UUID("2A00")), 5)
        expect([bytes(n) for n in names] == [HOSTILE_NAME.encode()], f"Device Name {names}")
        heart = next(s for s in services if s.uuid == UUID("180D"))
        info = next(s for s in services if s.uuid == UUID("180A"))
        battery = next(s for s in services if s.uuid == UUID("180F"))
        expect(info.end_group_handle == battery.end_group_handle and battery.handle <= info.end_group_handle,
               f"Device Information {info.handle:04X}-{info.end_group_handle:04X} over Battery "
               f"{battery.handle:04X}-{battery.end_group_handle:04X}")
        characteristics = await asyncio.wait_for(peer_gatt.discover_characteristics(service=heart), 5)
        measurement = next(c for c in characteristics if c.uuid == UUID("2A37"))
        expect(measurement.properties & 0x10, f"measurement properties 0x{int(measurement.properties):02X}: no NOTIFY")
        descriptors = await asyncio.wait_for(peer_gatt.discover_descriptors(measurement), 5)
        expect(not any(d.type == UUID("2902") for d in descriptors), f"a CCCD: {descriptors}")
        await connection.disconnect()
        # flood: values far faster than --hr-interval, valid, the script's (bpm + 1).
        await host.connect(flood)
        await host.subscribe(flood)
        await host.until(lambda: len(host.received.get(flood["address"], [])) >= 1000, 10, "1000 values from the flood")
        flooded = host.received[flood["address"]]
        expect(flooded[:2] == [bytes([0x00, 63]), bytes([0x06, 65])], f"first flood values {flooded[:2]}")
        await host.links[flood["address"]].disconnect()
        # garbage: every item of the cycle logged, the host still gets the valid value after.
        await host.connect(garbage)
        await host.subscribe(garbage)
        await host.until(lambda: len(host.received.get(garbage["address"], [])) >= 8, 10, "a whole garbage cycle")
        kinds = {e["what"] for e in peer.log() if e.get("kind") == "garbage" and e["strap"] == garbage["address"]}
        for expected in ("oversized-value", "truncated-no-handle", "wrong-handle", "unsolicited-mtu-response",
                         "mtu-request-65535", "invalid-empty", "unknown-opcode"):
            expect(expected in kinds, f"garbage never sent {expected}: {sorted(kinds)}")
        expect(any(v == bytes([0x00, 64]) for v in host.received[garbage["address"]]),
               "the valid value after the cycle not received")
        await host.links[garbage["address"]].disconnect()
        # drops: the strap drops the link about 2 s after each connection; a new one works.
        dropped = asyncio.Queue()
        for _ in range(2):
            connection = await host.connect(dropping)
            connection.on("disconnection", lambda reason: dropped.put_nowait(reason))
            reason = await asyncio.wait_for(dropped.get(), 10)
            expect(reason == hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR, f"drop reason {reason}")
        drops = [e for e in peer.log() if e.get("kind") == "disconnect" and e["strap"] == dropping["address"]]
        expect(len(drops) == 2 and all(e.get("hostile") == "drops" for e in drops), f"drops logged {drops}")
        # The good strap beside them: its 20 values, as logged.
        await host.connect(good)
        await host.subscribe(good)
        await host.until(lambda: len(host.received.get(good["address"], [])) >= 20, 10, "20 values from the good strap")
        check_per_strap(peer, host, [good], 20)
        return (f"flood {len(flooded)} values, garbage {len(kinds)} kinds, hostile-gatt {len(services)} services "
                f"and no CCCD, drops twice; the good strap's 20 values as logged")


async def case_max_links_per_port():
    """--ports 2 --max-links 1,2: each served controller counts its own links, with its own limit."""
    async with PeerProcess(["--ports", "2", "--strap-only", "--straps", "3", "--max-links", "1,2",
                            "--hr-count", "0", "--hr-script", "realistic", "--hr-interval", "0.02"]) as peer, \
            Host() as first, Host(SECOND_HOST_ADDRESS) as second:
        ports = [int(transport.rsplit(":", 1)[1]) for transport in peer.ready["transports"]]
        expect(len(ports) == 2, f"two served controllers: {peer.ready['transports']}")
        await first.open(ports[0])
        await second.open(ports[1])
        straps = peer.straps()
        await first.connect(straps[0])
        try:
            await first.connect(straps[1])
            raise Failed("--max-links 1,2: the first controller made a second link")
        except hci.HCI_Error as error:
            expect(error.error_code == 0x0D, f"status 0x{error.error_code:02X}, expected 0x0D")
        # The second counts only its own links: two, though the link layer holds three.
        await second.connect(straps[1])
        await second.connect(straps[2])
    return "the first controller refused its second link (0x0D); the second made two beside it"


CASES = [
    ("ready line", case_ready_line),
    ("several straps streaming, per-strap log", case_streaming),
    ("drops of chosen straps, resumed", case_drops),
    ("controller link limit", case_max_links),
    ("hostile straps (--strap-hostile)", case_hostile),
    ("a link limit per served controller", case_max_links_per_port),
]


async def main(selected):
    return await run_cases(CASES, selected, 60)


if __name__ == "__main__":
    parser = command_line("check bumble-peer's several straps without rawble", verbose_help="Bumble's warnings on stderr; keep the peers' files")
    arguments = parser.parse_args()
    VERBOSE = arguments.v
    run_main(arguments, main)
