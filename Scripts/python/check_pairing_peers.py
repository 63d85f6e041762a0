"""check_pairing_peers: proves bumble-peer's pairing options do what bumble_peer.py and
bumble_central.py document, with no rawble involved.

Each case starts its own bumble_peer.py (`--port 0`, 127.0.0.1 only) and drives its served
controller over TCP with a second, independent Bumble `Device` as the outside host (the place
rawble's host takes in the real tests; bumble.transport tcp-client), configured here with
Bumble's own PairingConfig and a small delegate of this file's own (not the fixture's):

  strap cases     the host is a central: it connects to rawble-strap, pairs (or answers the
                  strap's Security Request), reads the strap's encrypted and authenticated
                  characteristics, reconnects and encrypts with Bumble's own key store;
  central cases   the host is a peripheral advertising "check-peripheral": bumble-peer's
                  `--central` finds it and pairs with the `--central-*` options.

Every case compares what the fixture logged (the strap's --log lines, the central's stdout
events) with what the host's Bumble computed: the LTK (big-endian hex), EDIV and Rand, the STK
(legacy), the IRKs and identity addresses each side distributed, the method, the passkey shown
and entered, the comparison number, the failure reasons.

Prints one line per case ("ok  NAME: what was seen" or "FAIL NAME: why") and exits 0 only when
every case behaved as documented (1 otherwise, 3 when Bumble is missing).  Every wait is
bounded; every process it starts is stopped by its PID.  Run it with the project's Python
(the peers it starts use the same interpreter), from anywhere; ~25 s on 2 cores:

    Scripts/venv-python Scripts/python/check_pairing_peers.py [-k SUBSTRING] [-v]
    RAWBLE_VENV=/path/to/venv Scripts/venv-python Scripts/python/check_pairing_peers.py

What Bumble itself gets wrong on the checking host's side is worked around here, not in the
fixture: CompletingSession (the end of a pairing survives a disconnection right after the last
key; passkey 000000 works) and Host.encrypt (a disconnection before Bumble's Device.encrypt waits is seen).  The
central re-encrypting a LEGACY bond is checked only as a failure: a stock Bumble peripheral
answers a legacy LTK request with the wrong key (bumble_fixture/pairing.py's docstring), and
the central must report that drop (encryption-failed, reason 0x3D).
"""

import asyncio
import json
import os
import secrets
import shutil
import sys
import tempfile
import time

try:
    from bumble import hci, smp
    from bumble.core import AdvertisingData
    from bumble.device import Device, Peer
    from bumble.pairing import PairingConfig, PairingDelegate
    from bumble.transport import open_transport
except ImportError:
    print("check_pairing_peers: Bumble is not installed in this Python (run Scripts/bootstrap)", file=sys.stderr)
    sys.exit(3)

HERE = os.path.dirname(os.path.abspath(__file__))
PEER_SCRIPT = os.path.join(HERE, "bumble_peer.py")

HOST_ADDRESS = "C4:11:22:33:44:55"       # the checking host's random static address
HOST_IRK_BE = "00112233445566778899aabbccddeeff"  # its IRK, as a big-endian number
STRAP_IRK_BE = b"rawble-strap-irk".hex()
STRAP_IDENTITY = "C0:B1:E0:00:00:01"
CENTRAL_ADDRESS = "F0:CE:17:4A:00:01"
CENTRAL_IRK_BE = (b"bumble-central-" + bytes([1])).hex()
ENCRYPTED_READ_VALUE = b"sealed"
AUTHENTICATED_READ_VALUE = b"attested"

IO = {
    "none": PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT,
    "display": PairingDelegate.IoCapability.DISPLAY_OUTPUT_ONLY,
    "keyboard": PairingDelegate.IoCapability.KEYBOARD_INPUT_ONLY,
    "yesno": PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
    "keyboard-display": PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
}

VERBOSE = False


from checklib import Failed, command_line, run_cases, run_main, stop_process


def expect(condition, why):
    if not condition:
        raise Failed(why)


def be(little_endian):
    return bytes(little_endian)[::-1].hex()


def number(rand):
    return int.from_bytes(bytes(rand or bytes(8)), "little")


# MARK: the peer process


class PeerProcess:
    """bumble_peer.py with `arguments`, its ready line, its --log and (with --central) its events."""

    def __init__(self, arguments):
        self.arguments = arguments
        self.directory = tempfile.mkdtemp(prefix="check-pairing-")
        self.log_path = os.path.join(self.directory, "strap.jsonl")
        self.process = None
        self.ready = None
        self.events = []
        self.reader = None

    async def start(self):
        stderr = open(os.path.join(self.directory, "stderr.log"), "wb")
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, PEER_SCRIPT, "--port", "0", "--lifetime", "60", "--log", self.log_path,
            *self.arguments, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr)
        stderr.close()
        line = await asyncio.wait_for(self.process.stdout.readline(), 20)
        if not line:
            raise Failed(f"bumble-peer exited before its ready line: {self.stderr_tail()}")
        self.ready = json.loads(line)
        self.reader = asyncio.ensure_future(self.read_events())
        return self

    async def read_events(self):
        while True:
            line = await self.process.stdout.readline()
            if not line:
                return
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass

    def write_line(self, request):
        """A JSON request on the peer's stdin (a passkey typed for the strap or the central)."""
        self.process.stdin.write((json.dumps(request) + "\n").encode())

    @property
    def port(self):
        return int(self.ready["transport"].rsplit(":", 1)[1])

    def strap(self):
        return next(d for d in self.ready["devices"] if d["name"] == "rawble-strap")

    def log(self):
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path) as f:
            return [json.loads(line) for line in f if line.endswith("\n") and line.strip()]

    def security_log(self):
        return [e for e in self.log() if "kind" in e and e["kind"] not in ("subscription",)]

    async def wait_log(self, predicate, within=10.0, what="a log line"):
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            found = [e for e in self.log() if predicate(e)]
            if found:
                return found[-1]
            await asyncio.sleep(0.05)
        raise Failed(f"no {what} in the strap's log within {within} s; log: {self.security_log()}")

    async def wait_event(self, predicate, within=20.0, what="an event"):
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            found = [e for e in self.events if predicate(e)]
            if found:
                return found[0]
            await asyncio.sleep(0.05)
        raise Failed(f"no {what} from the central within {within} s; events: "
                      f"{[e.get('event') for e in self.events]}")

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
        if self.reader is not None:
            try:
                await asyncio.wait_for(self.reader, 2)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self.reader.cancel()
        shutil.rmtree(self.directory, ignore_errors=True)  # a failure's message quotes what matters


# MARK: the checking host


class HostDelegate(PairingDelegate):
    """The host's answers: its IO capability, the passkey it enters or shows, its comparison answer."""

    def __init__(self, io="none", passkey=None, accept_comparison=True):
        super().__init__(io_capability=IO[io])
        self.passkey, self.accept_comparison = passkey, accept_comparison
        self.displayed = self.compared = self.entered = None

    async def compare_numbers(self, number, digits):
        self.compared = number
        return self.accept_comparison

    async def get_number(self):
        self.entered = self.passkey
        return self.passkey

    async def generate_passkey(self):
        return self.passkey if self.passkey is not None else secrets.randbelow(1000000)

    async def display_number(self, number, digits):
        self.displayed = number


class CompletingSession(smp.Session):
    """Bumble's session, finishing a pairing the peer disconnects right after (Bumble cancels
    the end of a pairing, storing the bond included, when the link drops: a central that
    disconnects as soon as its last key is sent left this host without a bond), and able to use
    passkey 000000."""

    def __init__(self, manager, connection, pairing_config, is_initiator):
        super().__init__(manager, connection, pairing_config, is_initiator)
        connection.check_session = self  # Bumble forgets its sessions at disconnection

    def on_peer_key_distribution_complete(self):
        if self.is_initiator:
            self.distribute_keys()
        task = asyncio.ensure_future(asyncio.wait_for(self.on_pairing(), 10))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def send_pairing_confirm_command(self):
        """Bumble's, without its `assert self.passkey` (it stalls LE Secure Connections Passkey
        Entry with passkey 000000)."""
        if not self.sc or self.pairing_method != smp.PairingMethod.PASSKEY:
            return super().send_pairing_confirm_command()
        self.r = smp.crypto.r()

        async def confirm():
            await self.passkey_ready.wait()
            z = bytes([0x80 + ((self.passkey >> self.passkey_step) & 1)])
            ours, theirs = (self.pka, self.pkb) if self.is_initiator else (self.pkb, self.pka)
            self.send_command(smp.SMP_Pairing_Confirm_Command(confirm_value=smp.crypto.f4(ours, theirs, self.r, z)))

        self.connection.cancel_on_disconnection(confirm())


class Host:
    """A Bumble Device driving the peer's served controller over TCP, as rawble's host would."""

    def __init__(self, delegate, sc=True, mitm=False, bonding=True):
        self.delegate, self.sc, self.mitm, self.bonding = delegate, sc, mitm, bonding
        self.transport = self.device = None

    async def open(self, port):
        self.transport = await asyncio.wait_for(open_transport(f"tcp-client:127.0.0.1:{port}"), 10)
        self.device = Device.with_hci("check-host", hci.Address(HOST_ADDRESS), self.transport.source,
                                      self.transport.sink)
        self.device.irk = bytes.fromhex(HOST_IRK_BE)[::-1]
        self.device.pairing_config_factory = lambda connection: PairingConfig(
            sc=self.sc, mitm=self.mitm, bonding=self.bonding, delegate=self.delegate,
            identity_address_type=PairingConfig.AddressType.RANDOM)
        self.device.smp_session_proxy = CompletingSession
        await asyncio.wait_for(self.device.power_on(), 10)
        return self

    async def close(self):
        if self.transport is not None:
            try:
                await asyncio.wait_for(self.transport.close(), 5)
            except Exception:
                pass

    async def connect(self, address):
        return await asyncio.wait_for(
            self.device.connect(hci.Address(address), own_address_type=hci.OwnAddressType.RANDOM, timeout=10), 15)

    async def pair(self, connection):
        """(PairingKeys, None) or (None, reason) once pairing ends either way."""
        outcome = asyncio.get_running_loop().create_future()
        connection.on("pairing", lambda keys: outcome.done() or outcome.set_result((keys, None)))
        connection.on("pairing_failure", lambda reason: outcome.done() or outcome.set_result((None, int(reason))))
        try:
            await asyncio.wait_for(connection.pair(), 15)
        except asyncio.TimeoutError:
            raise Failed("pairing did not end within 15 s")
        except Exception:
            pass  # the failure's reason comes from the event
        return await asyncio.wait_for(outcome, 5)

    async def read(self, connection, handle):
        """The value at `handle`, or the ATT error code."""
        peer = Peer(connection)
        try:
            return bytes(await asyncio.wait_for(peer.read_value(handle), 10))
        except asyncio.TimeoutError:
            raise Failed(f"no answer to a read of handle {handle}")
        except Exception as error:
            code = getattr(error, "error_code", None)
            if code is None:
                raise Failed(f"read of handle {handle}: {error!r}")
            return int(code)

    async def disconnect(self, connection):
        gone = asyncio.get_running_loop().create_future()
        connection.on("disconnection", lambda reason: gone.done() or gone.set_result(int(reason)))
        await asyncio.wait_for(connection.disconnect(), 10)
        return await asyncio.wait_for(gone, 10)

    async def encrypt(self, connection):
        """Bumble's own encryption from its key store: True, or the error (a link that dropped:
        its reason as a string; Bumble's encrypt misses a disconnection that comes before it
        waits, as the virtual link's MIC failure can)."""
        gone = asyncio.get_running_loop().create_future()
        connection.on("disconnection", lambda reason: gone.done() or gone.set_result(int(reason)))
        task = asyncio.ensure_future(self.device.encrypt(connection))
        done, _ = await asyncio.wait([task, gone], timeout=10, return_when=asyncio.FIRST_COMPLETED)
        if task in done and not task.cancelled() and task.exception() is None:
            return True
        if gone.done():
            task.cancel()
            return f"disconnected, reason 0x{gone.result():02X}"
        if task in done:
            return task.exception() if not task.cancelled() else "cancelled"
        task.cancel()
        raise Failed("no Encryption Change within 10 s")


# MARK: comparisons


def record_matches_keys(record, keys, session):
    """The fixture's pairing record against the host's PairingKeys and SMP session."""
    if record["secureConnections"]:
        expect(keys.ltk is not None, "the host has no LTK")
        expect(record["ltk"] == be(keys.ltk.value),
               f"LTK: fixture logged {record['ltk']}, the host has {be(keys.ltk.value)}")
        expect(record["ediv"] == 0 and record["rand"] == 0, "LE Secure Connections: EDIV and Rand are 0")
    else:
        # The key for later links with these roles is the peripheral's: the host's ltk_central
        # either way (Bumble names a legacy key by the role that uses it to encrypt).
        peripheral_key = keys.ltk_central
        central_key = keys.ltk_peripheral
        expect(record["ltk"] == be(peripheral_key.value),
               f"legacy LTK: fixture {record['ltk']}, host {be(peripheral_key.value)}")
        expect(record["ediv"] == peripheral_key.ediv and record["rand"] == number(peripheral_key.rand),
               f"EDIV/Rand: fixture {record['ediv']}/{record['rand']}, host {peripheral_key.ediv}/"
               f"{number(peripheral_key.rand)}")
        expect(record["centralLtk"] == be(central_key.value),
               f"central's LTK: fixture {record['centralLtk']}, host {be(central_key.value)}")
        expect(record["centralEdiv"] == central_key.ediv and record["centralRand"] == number(central_key.rand),
               "the central's EDIV/Rand differ")
        expect(record["stk"] == be(session.stk), f"STK: fixture {record['stk']}, host {be(session.stk)}")
    expect(record["keySize"] == 16, f"key size {record['keySize']}")


def strap_keys_reached_host(keys):
    expect(keys.irk is not None and be(keys.irk.value) == STRAP_IRK_BE,
           f"the host got IRK {keys.irk and be(keys.irk.value)}, not the strap's {STRAP_IRK_BE}")


# MARK: strap cases (the host is the central)


STRAP_BASE = ["--strap-only", "--strap-encrypted-read", "--strap-authenticated-read", "--hr-silent"]


async def strap_case(strap_options, host, body):
    peer = await PeerProcess(STRAP_BASE + strap_options).start()
    try:
        await host.open(peer.port)
        try:
            return await asyncio.wait_for(body(peer, host), 40)
        except asyncio.TimeoutError:
            raise Failed(f"stuck; the strap's log: {peer.security_log()}; stderr: {peer.stderr_tail()[-300:]}")
        finally:
            await host.close()
    finally:
        await peer.stop()


async def pair_with_strap(peer, host, expect_failure=None):
    strap = peer.strap()
    connection = await host.connect(strap["address"])
    keys, reason = await host.pair(connection)
    if expect_failure is not None:
        expect(keys is None and reason == expect_failure,
               f"expected Pairing Failed 0x{expect_failure:02X}, the host saw keys={keys is not None} reason={reason}")
        failed = await peer.wait_log(lambda e: e.get("kind") == "pairing-failed", what="pairing-failed")
        expect(failed["reason"] == expect_failure, f"strap logged reason {failed['reason']}")
        expect(not [e for e in peer.log() if e.get("kind") == "pairing"], "a pairing record after a failure")
        return connection, None, None
    expect(keys is not None, f"pairing failed, reason {reason}; strap log {peer.security_log()}")
    record = await peer.wait_log(lambda e: e.get("kind") == "pairing", what="pairing record")
    record_matches_keys(record, keys, connection.check_session)
    expect(record["role"] == "peripheral", f"role {record['role']}")
    expect(record["peerAddress"] == HOST_ADDRESS and record["peerConnectionAddress"] == HOST_ADDRESS,
           f"peer address {record['peerAddress']} / {record['peerConnectionAddress']}")
    expect(record.get("peerIrk") == HOST_IRK_BE, f"strap logged peer IRK {record.get('peerIrk')}")
    strap_keys_reached_host(keys)
    return connection, keys, record


async def reads(peer, host, connection):
    handles = peer.strap()["heartRate"]["handles"]
    return (await host.read(connection, handles["encryptedRead"]),
            await host.read(connection, handles["authenticatedRead"]))


async def case_lesc_just_works():
    async def body(peer, host):
        connection = await host.connect(peer.strap()["address"])
        before = await reads(peer, host, connection)
        expect(before == (0x0F, 0x05), f"before pairing the reads gave {before}, not (0x0F, 0x05)")
        keys, reason = await host.pair(connection)
        expect(keys is not None, f"pairing failed 0x{reason or 0:02X}")
        record = await peer.wait_log(lambda e: e.get("kind") == "pairing", what="pairing record")
        record_matches_keys(record, keys, None)
        strap_keys_reached_host(keys)
        expect(record["method"] == "just-works" and record["secureConnections"] and not record["authenticated"],
               f"record {record}")
        expect(record["peerIrk"] == HOST_IRK_BE and record["keysSent"] == 3 and record["keysReceived"] == 3,
               f"keys: peerIrk {record.get('peerIrk')}, sent {record['keysSent']}, received {record['keysReceived']}")
        enc = await peer.wait_log(lambda e: e.get("kind") == "encryption", what="encryption")
        expect(enc["enabled"] and not enc["authenticated"] and enc["keySize"] == 16 and enc["key"] == "pairing",
               f"encryption {enc}")
        after = await reads(peer, host, connection)
        expect(after == (ENCRYPTED_READ_VALUE, 0x05), f"after Just Works the reads gave {after}")
        return f"LTK {record['ltk']} on both sides; strap IRK and identity reached the host; reads 0x0F/0x05 " \
               f"before, 'sealed'/0x05 after"
    return await strap_case([], Host(HostDelegate("none")), body)


async def case_lesc_passkey_strap_displays():
    async def body(peer, host):
        connection, keys, record = await pair_with_strap(peer, host)
        shown = await peer.wait_log(lambda e: e.get("kind") == "passkey-displayed", what="passkey-displayed")
        expect(shown["passkey"] == 123456 and host.delegate.entered == 123456, f"displayed {shown}")
        expect(record["method"] == "passkey" and record["authenticated"] and record["passkey"] == 123456,
               f"record {record}")
        after = await reads(peer, host, connection)
        expect(after == (ENCRYPTED_READ_VALUE, AUTHENTICATED_READ_VALUE), f"reads after passkey {after}")
        return f"strap displayed 123456, host entered it; LTK {record['ltk']} equal; authenticated read 'attested'"
    return await strap_case(["--strap-io", "display", "--strap-passkey", "123456"],
                            Host(HostDelegate("keyboard", passkey=123456), mitm=True), body)


async def case_lesc_passkey_strap_enters():
    async def body(peer, host):
        connection, keys, record = await pair_with_strap(peer, host)
        entered = await peer.wait_log(lambda e: e.get("kind") == "passkey-entered", what="passkey-entered")
        expect(entered["passkey"] == 654321 and host.delegate.displayed == 654321,
               f"strap entered {entered}, host displayed {host.delegate.displayed}")
        expect(record["method"] == "passkey" and record["authenticated"], f"record {record}")
        return f"host displayed 654321, strap entered it; LTK {record['ltk']} equal"
    return await strap_case(["--strap-io", "keyboard", "--strap-passkey", "654321", "--strap-mitm"],
                            Host(HostDelegate("display", passkey=654321), mitm=True), body)


async def case_lesc_passkey_mismatch():
    async def body(peer, host):
        await pair_with_strap(peer, host, expect_failure=0x04)
        return "strap entered 111111, host displayed 222222: Pairing Failed 0x04 (Confirm Value Failed) both sides"
    return await strap_case(["--strap-io", "keyboard", "--strap-passkey", "111111"],
                            Host(HostDelegate("display", passkey=222222), mitm=True), body)


async def case_fault(fault, reason, legacy=False):
    """--strap-fault confirm|dhkey-check: the host's check of the strap's corrupted value fails
    with `reason`, which the strap logs as the host's Pairing Failed."""
    async def body(peer, host):
        await pair_with_strap(peer, host, expect_failure=reason)
        return f"strap sent a corrupted {fault} value: the host failed with 0x{reason:02X}, the strap logged it"
    return await strap_case(["--strap-fault", fault] + (["--strap-legacy"] if legacy else []),
                            Host(HostDelegate("none")), body)


async def case_fault_silent():
    """--strap-fault silent: after its Pairing Response the strap sends no SMP command (nor
    Pairing Failed): 5 s into the pairing the host has received nothing, and the strap has
    logged no pairing step (its peer's 30 s timeout, not waited for here, ends it)."""
    async def body(peer, host):
        connection = await host.connect(peer.strap()["address"])
        received = []
        connection.on("pairing", lambda keys: received.append("pairing"))
        connection.on("pairing_failure", lambda reason: received.append(f"pairing-failed 0x{int(reason):02X}"))
        pairing = asyncio.ensure_future(connection.pair())
        await asyncio.sleep(5)
        expect(not pairing.done() and not received, f"the pairing ended: {received} {pairing}")
        logged = [e.get("kind") for e in peer.log() if e.get("kind") in ("pairing", "pairing-failed", "encryption")]
        expect(not logged, f"the strap logged {logged}")
        pairing.cancel()
        await host.disconnect(connection)
        return "5 s into the pairing: no SMP command from the strap, no outcome on either side"
    return await strap_case(["--strap-fault", "silent"], Host(HostDelegate("none")), body)


async def type_for_strap(peer, passkey_of):
    """Waits for the strap to ask for a passkey, then types passkey_of() on its stdin."""
    await peer.wait_log(lambda e: e.get("kind") == "passkey-requested", what="passkey-requested")
    peer.write_line({"strap": {"passkey": passkey_of()}})


async def case_passkey_typed_by_the_test():
    async def body(peer, host):
        typing = asyncio.ensure_future(type_for_strap(peer, lambda: host.delegate.displayed))
        connection, keys, record = await pair_with_strap(peer, host)
        await typing
        entered = await peer.wait_log(lambda e: e.get("kind") == "passkey-entered", what="passkey-entered")
        expect(entered["passkey"] == host.delegate.displayed == record["passkey"], f"entered {entered}")
        return (f"the host displayed a random {entered['passkey']:06d}, the check typed it on the strap's stdin; "
                f"LTK {record['ltk']} equal")
    return await strap_case(["--strap-io", "keyboard"], Host(HostDelegate("display"), mitm=True), body)


async def case_passkey_refused_by_the_test():
    async def body(peer, host):
        typing = asyncio.ensure_future(type_for_strap(peer, lambda: None))
        await pair_with_strap(peer, host, expect_failure=0x01)
        await typing
        entered = await peer.wait_log(lambda e: e.get("kind") == "passkey-entered", what="passkey-entered")
        expect(entered["passkey"] is None, f"entered {entered}")
        return "keyboard strap, the check typed null: Pairing Failed 0x01 (Passkey Entry Failed)"
    return await strap_case(["--strap-io", "keyboard"], Host(HostDelegate("display"), mitm=True), body)


async def case_passkey_zero():
    async def body(peer, host):
        connection, keys, record = await pair_with_strap(peer, host)
        expect(record["passkey"] == 0 and host.delegate.entered == 0, f"record {record}")
        return f"passkey 000000 (stock Bumble stalls on it): strap displayed it, host entered it; LTK {record['ltk']} equal"
    return await strap_case(["--strap-io", "display", "--strap-passkey", "0"],
                            Host(HostDelegate("keyboard", passkey=0), mitm=True), body)


async def case_numeric_comparison_accept():
    async def body(peer, host):
        connection, keys, record = await pair_with_strap(peer, host)
        compared = await peer.wait_log(lambda e: e.get("kind") == "comparison", what="comparison")
        expect(compared["accepted"] and compared["number"] == host.delegate.compared,
               f"strap compared {compared}, host {host.delegate.compared}")
        expect(record["method"] == "numeric-comparison" and record["authenticated"], f"record {record}")
        after = await reads(peer, host, connection)
        expect(after == (ENCRYPTED_READ_VALUE, AUTHENTICATED_READ_VALUE), f"reads {after}")
        return f"both sides compared {compared['number']:06d}; LTK {record['ltk']} equal; authenticated read ok"
    return await strap_case(["--strap-io", "yesno", "--strap-mitm"], Host(HostDelegate("yesno"), mitm=True), body)


async def case_numeric_comparison_reject():
    async def body(peer, host):
        await pair_with_strap(peer, host, expect_failure=0x0C)
        compared = await peer.wait_log(lambda e: e.get("kind") == "comparison", what="comparison")
        expect(not compared["accepted"] and compared["number"] == host.delegate.compared, f"compared {compared}")
        return f"strap answered no to {compared['number']:06d}: Pairing Failed 0x0C (Numeric Comparison Failed)"
    return await strap_case(["--strap-io", "yesno", "--strap-mitm", "--strap-reject-comparison"],
                            Host(HostDelegate("yesno"), mitm=True), body)


async def case_legacy_just_works():
    async def body(peer, host):
        connection, keys, record = await pair_with_strap(peer, host)
        expect(not record["secureConnections"] and record["method"] == "just-works", f"record {record}")
        after = await reads(peer, host, connection)
        expect(after == (ENCRYPTED_READ_VALUE, 0x05), f"reads {after}")
        return (f"STK {record['stk']}, strap's LTK {record['ltk']} EDIV {record['ediv']} Rand {record['rand']}, "
                f"host's LTK {record['centralLtk']}: equal on both sides")
    return await strap_case(["--strap-legacy"], Host(HostDelegate("none")), body)


async def case_legacy_passkey():
    async def body(peer, host):
        connection, keys, record = await pair_with_strap(peer, host)
        shown = await peer.wait_log(lambda e: e.get("kind") == "passkey-displayed", what="passkey-displayed")
        expect(shown["passkey"] == 314159 and record["method"] == "passkey" and record["authenticated"]
               and not record["secureConnections"], f"record {record}")
        after = await reads(peer, host, connection)
        expect(after == (ENCRYPTED_READ_VALUE, AUTHENTICATED_READ_VALUE), f"reads {after}")
        return f"legacy passkey 314159 shown by the strap; STK {record['stk']} and LTK equal; authenticated read ok"
    return await strap_case(["--strap-legacy", "--strap-io", "display", "--strap-passkey", "314159", "--strap-mitm"],
                            Host(HostDelegate("keyboard", passkey=314159), mitm=True), body)


async def case_attack_reflected_public_key():
    """--strap-fault reflect-public-key against a stock Bumble host, which compares no public
    key (CVE-2020-26558): the strap reflects the host's key with Y negated and every round's
    confirm and random, and learns the passkey the host typed, bit by bit."""
    async def body(peer, host):
        connection = await host.connect(peer.strap()["address"])
        keys, reason = await host.pair(connection)
        expect(keys is None, "the host completed the pairing with a reflected key")
        learned = await peer.wait_log(lambda e: e.get("kind") == "attack" and e.get("step") == "passkey-learned",
                                      what="passkey-learned")
        bits = [e for e in peer.log() if e.get("kind") == "attack" and e.get("step") == "passkey-bit"]
        expect(learned["passkey"] == 271828 and len(bits) == 20, f"learned {learned}, {len(bits)} bits")
        expect([e for e in peer.log() if e.get("kind") == "attack" and e.get("step") == "reflected-public-key"],
               "no reflected-public-key step")
        return f"reflected the host's key; learned passkey {learned['passkey']:06d} in 20 rounds; pairing then failed (0x{reason or 0:02X})"
    return await strap_case(["--strap-io", "display", "--strap-passkey", "271828", "--strap-mitm",
                             "--strap-fault", "reflect-public-key"],
                            Host(HostDelegate("keyboard", passkey=271828), mitm=True), body)


async def case_attack_reflected_legacy_confirm():
    """--strap-fault reflect-confirm against a stock Bumble host (legacy Just Works), which does
    not compare the confirm and random it receives with its own: the link is encrypted with the
    STK the reflected values give."""
    async def body(peer, host):
        connection = await host.connect(peer.strap()["address"])
        await host.pair(connection)
        await peer.wait_log(lambda e: e.get("kind") == "attack" and e.get("step") == "reflected-confirm",
                            what="reflected-confirm")
        enc = await peer.wait_log(lambda e: e.get("kind") == "encryption" and e.get("enabled"), what="encryption")
        return f"reflected Mconfirm and Mrand; the host encrypted the link with s1(0, Mrand, Mrand) ({enc})"
    return await strap_case(["--strap-legacy", "--strap-fault", "reflect-confirm"], Host(HostDelegate("none")), body)


async def reconnect_and_encrypt(peer, host, connection, address=None):
    reason = await host.disconnect(connection)
    connection = await host.connect(address or peer.strap()["address"])
    result = await host.encrypt(connection)
    return connection, result, reason


async def case_reconnect_encrypt(legacy):
    async def body(peer, host):
        connection, keys, record = await pair_with_strap(peer, host)
        connection, result, _ = await reconnect_and_encrypt(peer, host, connection)
        expect(result is True, f"encryption with the bond failed: {result!r}; log {peer.security_log()}")
        request = await peer.wait_log(lambda e: e.get("kind") == "ltk-request" and e["answer"] == "bond",
                                      what="ltk-request answered from the bond")
        expect(request["ediv"] == record["ediv"] and request["rand"] == record["rand"],
               f"LTK request {request} is not the pairing's EDIV/Rand")
        enc = await peer.wait_log(lambda e: e.get("kind") == "encryption" and e.get("key") == "bond",
                                  what="encryption with the bond")
        expect(enc["enabled"], f"encryption {enc}")
        pairings = [e for e in peer.log() if e.get("kind") == "pairing"]
        expect(len(pairings) == 1, f"{len(pairings)} pairings: the reconnection paired again")
        after = await reads(peer, host, connection)
        expect(after[0] == ENCRYPTED_READ_VALUE, f"encrypted read after re-encryption: {after}")
        return (f"reconnected and encrypted with the bond (LTK request EDIV {request['ediv']} Rand "
                f"{request['rand']} answered from it), no second pairing; encrypted read ok")
    return await strap_case(["--strap-legacy"] if legacy else [], Host(HostDelegate("none")), body)


async def case_reconnect_wrong_key():
    async def body(peer, host):
        connection, keys, record = await pair_with_strap(peer, host)
        stored = await host.device.keystore.get(STRAP_IDENTITY)
        expect(stored is not None and stored.ltk is not None, "the host's key store has no bond")
        stored.ltk.value = bytes(16)  # the host now holds a wrong key
        connection, result, _ = await reconnect_and_encrypt(peer, host, connection)
        expect(result is not True, "encryption with a wrong key succeeded")
        gone = await peer.wait_log(lambda e: e.get("kind") == "disconnection" and e["reason"] == 0x3D,
                                   what="disconnection 0x3D")
        return f"a wrong LTK: the strap answered from its bond and the link dropped, reason 0x{gone['reason']:02X} (MIC failure)"
    return await strap_case([], Host(HostDelegate("none")), body)


async def case_no_bonding():
    async def body(peer, host):
        connection, keys, record = await pair_with_strap_loose(peer, host)
        expect(not record["bonding"] and record["keysSent"] == 0 and record["keysReceived"] == 0,
               f"record {record}")
        connection, result, _ = await reconnect_and_encrypt_loose(peer, host, connection)
        request = await peer.wait_log(lambda e: e.get("kind") == "ltk-request", what="ltk-request")
        expect(request["answer"] == "none", f"the strap answered {request} without a bond")
        code = getattr(result, "error_code", None)
        expect(result is not True and code == 0x06, f"encryption without a bond: {result!r}")
        return (f"no keys distributed, no bond: the LTK request got a negative reply, the host's encryption "
                f"failed 0x{code:02X} (PIN or Key Missing)")
    return await strap_case(["--strap-no-bonding"], Host(HostDelegate("none")), body)


async def pair_with_strap_loose(peer, host):
    """Pairing without a key distribution (the strap's --strap-no-bonding): LTK only."""
    connection = await host.connect(peer.strap()["address"])
    keys, reason = await host.pair(connection)
    expect(keys is not None, f"pairing failed 0x{reason or 0:02X}")
    record = await peer.wait_log(lambda e: e.get("kind") == "pairing", what="pairing record")
    expect(record["ltk"] == be(keys.ltk.value), "LTK differs")
    return connection, keys, record


async def reconnect_and_encrypt_loose(peer, host, connection):
    # The host keeps its keys whatever the bonding flags (Bumble does): it still tries.
    return await reconnect_and_encrypt(peer, host, connection)


async def case_security_request():
    async def body(peer, host):
        strap = peer.strap()
        requested = asyncio.get_running_loop().create_future()

        def on_connection(connection):
            connection.on("security_request",
                          lambda auth_req: requested.done() or requested.set_result((connection, int(auth_req))))

        host.device.on("connection", on_connection)
        await host.connect(strap["address"])
        connection, auth_req = await asyncio.wait_for(requested, 10)
        sent = await peer.wait_log(lambda e: e.get("kind") == "security-request-sent", what="security-request-sent")
        expect(sent["authReq"] == auth_req, f"strap logged AuthReq {sent['authReq']:#x}, the host got {auth_req:#x}")
        keys, reason = await host.pair(connection)
        expect(keys is not None, f"pairing after the Security Request failed 0x{reason or 0:02X}")
        record = await peer.wait_log(lambda e: e.get("kind") == "pairing", what="pairing record")
        record_matches_keys(record, keys, None)
        return f"Security Request AuthReq {auth_req:#04x} (bonding, MITM, SC bits) reached the host; it paired; LTK equal"
    return await strap_case(["--strap-security-request", "--strap-mitm"], Host(HostDelegate("none")), body)


async def case_privacy():
    async def body(peer, host):
        strap = peer.strap()
        first = hci.Address(strap["address"])
        expect(first.is_resolvable and strap["pairing"]["identityAddress"] == STRAP_IDENTITY,
               f"the strap advertises {strap['address']} (resolvable: {first.is_resolvable})")
        connection = await host.connect(strap["address"])
        keys, reason = await host.pair(connection)
        expect(keys is not None, f"pairing failed 0x{reason or 0:02X}")
        record = await peer.wait_log(lambda e: e.get("kind") == "pairing", what="pairing record")
        record_matches_keys(record, keys, None)
        strap_keys_reached_host(keys)
        expect(str(connection.peer_address).split("/")[0] == STRAP_IDENTITY,
               f"the host resolved the strap to {connection.peer_address}")
        await host.disconnect(connection)
        rotated = await peer.wait_log(lambda e: e.get("kind") == "rpa" and e["address"] != strap["address"],
                                      within=5, what="a new RPA")
        second = hci.Address(rotated["address"])
        resolver = smp.AddressResolver([(bytes.fromhex(STRAP_IRK_BE)[::-1], hci.Address(STRAP_IDENTITY))])
        expect(second.is_resolvable and resolver.resolve(second) is not None and resolver.resolve(first) is not None,
               "the strap's RPAs do not resolve with its IRK")
        connection = await host.connect(rotated["address"])
        expect(str(connection.peer_address).split("/")[0] == STRAP_IDENTITY,
               f"Bumble's host did not resolve the new RPA: {connection.peer_address}")
        result = await host.encrypt(connection)
        expect(result is True, f"encryption with the bond failed: {result!r}")
        await peer.wait_log(lambda e: e.get("kind") == "ltk-request" and e["answer"] == "bond", what="bond answer")
        return (f"advertised {strap['address']}, then {rotated['address']} (both resolve with the strap's IRK to "
                f"{STRAP_IDENTITY}); bonded, reconnected to the new RPA and encrypted with the bond")
    return await strap_case(["--strap-privacy", "--strap-rpa-period", "0.5"], Host(HostDelegate("none")), body)


# MARK: central cases (the host is the peripheral, bumble-peer's --central pairs with it)


CHECK_NAME = "check-peripheral"


async def central_case(central_options, host, body, security_request=False):
    peer = await PeerProcess(["--no-standard", "--central", CHECK_NAME, "--central-timeout", "20",
                              "--central-mtu", "0"] + central_options).start()
    try:
        await host.open(peer.port)
        if security_request:
            host.device.on("connection", lambda connection: host.device.request_pairing(connection))
        pairing = asyncio.get_running_loop().create_future()
        failure = asyncio.get_running_loop().create_future()

        def on_connection(connection):
            connection.on("pairing", lambda keys: pairing.done() or pairing.set_result((connection, keys)))
            connection.on("pairing_failure", lambda reason: failure.done() or failure.set_result(int(reason)))

        host.device.on("connection", on_connection)
        data = bytes(AdvertisingData([(AdvertisingData.FLAGS, bytes([0x06])),
                                      (AdvertisingData.COMPLETE_LOCAL_NAME, CHECK_NAME.encode())]))
        await asyncio.wait_for(host.device.start_advertising(advertising_data=data, auto_restart=True,
                                                             advertising_interval_min=20,
                                                             advertising_interval_max=20), 10)
        try:
            return await asyncio.wait_for(body(peer, host, pairing, failure), 40)
        except asyncio.TimeoutError:
            raise Failed(f"stuck; the central's events: {[e for e in peer.events if e.get('event') not in ('discovered', 'read')]}; "
                         f"stderr: {peer.stderr_tail()[-300:]}")
        finally:
            await host.close()
    finally:
        await peer.stop()


async def central_pairing(peer, host, pairing):
    record = await peer.wait_event(lambda e: e["event"] in ("pairing", "pairing-failed"), what="pairing")
    expect(record["event"] == "pairing", f"the central's pairing failed: {record}")
    connection, keys = await asyncio.wait_for(pairing, 10)
    record_matches_keys(record, keys, connection.check_session)
    expect(record["role"] == "central" and record["peerAddress"] == HOST_ADDRESS
           and record.get("peerIrk") == HOST_IRK_BE, f"record {record}")
    expect(keys.irk is not None and be(keys.irk.value) == CENTRAL_IRK_BE,
           f"the host got the central's IRK {keys.irk and be(keys.irk.value)}")
    return record, keys


async def central_done(peer):
    done = await peer.wait_event(lambda e: e["event"] == "done", what="done")
    expect(done["reason"] == "complete", f"the central's run ended: {done}")


async def case_central_just_works():
    async def body(peer, host, pairing, failure):
        record, keys = await central_pairing(peer, host, pairing)
        expect(record["method"] == "just-works" and record["secureConnections"], f"record {record}")
        await central_done(peer)
        return f"central paired Just Works; LTK {record['ltk']} equal; IRKs and identities exchanged"
    return await central_case(["--central-pair"], Host(HostDelegate("none")), body)


async def case_central_passkey():
    async def body(peer, host, pairing, failure):
        record, keys = await central_pairing(peer, host, pairing)
        entered = await peer.wait_event(lambda e: e["event"] == "passkey-entered", what="passkey-entered")
        expect(entered["passkey"] == 246810 and host.delegate.displayed == 246810 and record["authenticated"]
               and record["method"] == "passkey", f"record {record}, entered {entered}")
        await central_done(peer)
        return f"host displayed 246810, the central entered it; LTK {record['ltk']} equal"
    return await central_case(["--central-pair", "--central-io", "keyboard", "--central-passkey", "246810",
                               "--central-mitm"], Host(HostDelegate("display", passkey=246810), mitm=True), body)


async def case_central_passkey_typed():
    async def body(peer, host, pairing, failure):
        await peer.wait_event(lambda e: e["event"] == "passkey-requested", what="passkey-requested")
        deadline = time.monotonic() + 10
        while host.delegate.displayed is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        peer.write_line({"passkey": host.delegate.displayed, "central": 1})
        record, keys = await central_pairing(peer, host, pairing)
        expect(record["passkey"] == host.delegate.displayed, f"record {record}")
        await central_done(peer)
        return f"the host displayed a random {record['passkey']:06d}, the check typed it on the central's stdin"
    return await central_case(["--central-pair", "--central-io", "keyboard", "--central-mitm"],
                              Host(HostDelegate("display"), mitm=True), body)


async def case_central_passkey_display():
    async def body(peer, host, pairing, failure):
        record, keys = await central_pairing(peer, host, pairing)
        shown = await peer.wait_event(lambda e: e["event"] == "passkey-displayed", what="passkey-displayed")
        expect(shown["passkey"] == 135790 and host.delegate.entered == 135790, f"shown {shown}")
        await central_done(peer)
        return f"the central displayed 135790, the host entered it; LTK {record['ltk']} equal"
    return await central_case(["--central-pair", "--central-io", "display", "--central-passkey", "135790"],
                              Host(HostDelegate("keyboard", passkey=135790), mitm=True), body)


async def case_central_numeric_comparison(reject):
    async def body(peer, host, pairing, failure):
        if reject:
            failed = await peer.wait_event(lambda e: e["event"] == "pairing-failed", what="pairing-failed")
            compared = await peer.wait_event(lambda e: e["event"] == "comparison", what="comparison")
            expect(failed["reason"] == 0x0C and not compared["accepted"]
                   and compared["number"] == host.delegate.compared, f"failed {failed}, compared {compared}")
            expect(await asyncio.wait_for(failure, 10) == 0x0C, "the host saw another reason")
            await central_done(peer)
            return f"the central answered no to {compared['number']:06d}: Pairing Failed 0x0C; the run went on"
        record, keys = await central_pairing(peer, host, pairing)
        compared = await peer.wait_event(lambda e: e["event"] == "comparison", what="comparison")
        expect(compared["accepted"] and compared["number"] == host.delegate.compared
               and record["method"] == "numeric-comparison", f"compared {compared}")
        await central_done(peer)
        return f"both compared {compared['number']:06d}; LTK {record['ltk']} equal"
    options = ["--central-pair", "--central-io", "yesno", "--central-mitm"]
    return await central_case(options + (["--central-reject-comparison"] if reject else []),
                              Host(HostDelegate("yesno"), mitm=True), body)


async def case_central_legacy():
    async def body(peer, host, pairing, failure):
        record, keys = await central_pairing(peer, host, pairing)
        expect(not record["secureConnections"], f"record {record}")
        await central_done(peer)
        return (f"legacy: STK {record['stk']}, the host's LTK {record['ltk']} (EDIV {record['ediv']}), the "
                f"central's {record['centralLtk']}: equal")
    return await central_case(["--central-pair", "--central-legacy"], Host(HostDelegate("none")), body)


async def case_central_reconnect_encrypt():
    async def body(peer, host, pairing, failure):
        record, keys = await central_pairing(peer, host, pairing)
        await peer.wait_event(lambda e: e["event"] == "reconnecting", what="reconnecting")
        enc = await peer.wait_event(lambda e: e["event"] == "encryption" and e.get("key") == "bond",
                                    what="encryption with the bond")
        expect(enc["enabled"], f"encryption {enc}")
        expect(len([e for e in peer.events if e["event"] == "connected"]) == 2, "not two connections")
        expect(len([e for e in peer.events if e["event"] == "pairing"]) == 1, "paired again")
        await central_done(peer)
        return "central paired, disconnected, reconnected, encrypted with its bond (no second pairing)"
    return await central_case(["--central-pair", "--central-reconnect-encrypt"], Host(HostDelegate("none")), body)


async def case_central_wrong_key():
    async def body(peer, host, pairing, failure):
        record, keys = await central_pairing(peer, host, pairing)
        failed = await peer.wait_event(lambda e: e["event"] == "encryption-failed", what="encryption-failed")
        gone = await peer.wait_event(lambda e: e["event"] == "disconnected", what="disconnected")
        expect(failed["reason"] == 0x3D and gone["reason"] == 0x3D, f"failed {failed}, disconnected {gone}")
        done = await peer.wait_event(lambda e: e["event"] == "done", what="done")
        expect(done["reason"] == "disconnected", f"done {done}")
        return ("legacy bond, stock Bumble peripheral (answers with the wrong key): the central's re-encryption "
                "is reported as encryption-failed, reason 0x3D, and the run ends 'disconnected'")
    return await central_case(["--central-pair", "--central-legacy", "--central-reconnect-encrypt"],
                              Host(HostDelegate("none")), body)


async def case_central_security_request():
    async def body(peer, host, pairing, failure):
        request = await peer.wait_event(lambda e: e["event"] == "security-request", what="security-request")
        record, keys = await central_pairing(peer, host, pairing)
        await central_done(peer)
        return f"the host's Security Request (AuthReq {request['authReq']:#04x}) reached the central; it paired"
    return await central_case(["--central-expect-security-request"], Host(HostDelegate("none")), body,
                              security_request=True)


CASES = [
    ("strap LESC Just Works", case_lesc_just_works),
    ("strap LESC passkey, strap displays", case_lesc_passkey_strap_displays),
    ("strap LESC passkey, strap enters", case_lesc_passkey_strap_enters),
    ("strap LESC passkey mismatch", case_lesc_passkey_mismatch),
    ("strap passkey typed by the test", case_passkey_typed_by_the_test),
    ("strap passkey refused by the test", case_passkey_refused_by_the_test),
    ("strap passkey 000000", case_passkey_zero),
    ("strap numeric comparison accepted", case_numeric_comparison_accept),
    ("strap numeric comparison rejected", case_numeric_comparison_reject),
    ("strap fault: corrupted confirm (LESC)", lambda: case_fault("confirm", 0x04)),
    ("strap fault: corrupted confirm (legacy)", lambda: case_fault("confirm", 0x04, legacy=True)),
    ("strap fault: corrupted DHKey check", lambda: case_fault("dhkey-check", 0x0B)),
    ("strap fault: silent", case_fault_silent),
    ("strap attack: reflected public key learns the passkey", case_attack_reflected_public_key),
    ("strap attack: reflected legacy confirm encrypts", case_attack_reflected_legacy_confirm),
    ("strap legacy Just Works", case_legacy_just_works),
    ("strap legacy passkey", case_legacy_passkey),
    ("strap LESC reconnect + encrypt", lambda: case_reconnect_encrypt(False)),
    ("strap legacy reconnect + encrypt", lambda: case_reconnect_encrypt(True)),
    ("strap reconnect with a wrong key", case_reconnect_wrong_key),
    ("strap no bonding", case_no_bonding),
    ("strap security request", case_security_request),
    ("strap privacy (RPA)", case_privacy),
    ("central LESC Just Works", case_central_just_works),
    ("central passkey, central enters", case_central_passkey),
    ("central passkey, central displays", case_central_passkey_display),
    ("central passkey typed by the test", case_central_passkey_typed),
    ("central numeric comparison accepted", lambda: case_central_numeric_comparison(False)),
    ("central numeric comparison rejected", lambda: case_central_numeric_comparison(True)),
    ("central legacy Just Works", case_central_legacy),
    ("central reconnect + encrypt", case_central_reconnect_encrypt),
    ("central security request", case_central_security_request),
    ("central re-encryption with a key the peer lacks", case_central_wrong_key),
]


async def main(selected):
    return await run_cases(CASES, selected, 60)


if __name__ == "__main__":
    parser = command_line("check bumble-peer's pairing options without rawble", verbose_help="Bumble's warnings on stderr")
    arguments = parser.parse_args()
    run_main(arguments, main)
