"""bumble-central: Google Bumble's own GATT client, as a central on bumble-peer's virtual link.

The independent check of a GATT server (rawble's peripheral, or one of bumble-peer's devices):
a Bumble `Device` with its own controller joins the same Bumble `LocalLink` as bumble-peer's
served controllers and peripherals (a second process cannot share a LocalLink, so this is a
mode of bumble-peer: `bumble-peer --central TARGET ...`, or this file run as a program:
`bumble-central TARGET [bumble-peer options]`).  After bumble-peer's ready line it:

  1. scans (active) for TARGET: an address (AA:BB:CC:DD:EE:FF, public or random) or a local
     name (complete or shortened, advertising data or scan response);
  2. connects (own random static address `--central-address`); with `--central-pair` pairs
     at once (or, with `--central-expect-security-request`, waits for the peripheral's SMP
     Security Request and then pairs, or encrypts with a bond it already has); with
     `--central-reconnect-encrypt`, once paired and bonded: disconnects (event "reconnecting"),
     scans again for TARGET (or an address the bond resolves: a new RPA of the peer),
     reconnects ("found", "connected" again) and encrypts with the bond's key, no pairing
     (LE Enable Encryption: LE Secure Connections: the LTK, EDIV 0, Rand 0; legacy: the LTK the
     peripheral distributed, with its EDIV and Rand); a pairing that fails is reported and
     the run goes on; then exchanges MTU (`--central-mtu`, 0 = not);
  3. discovers every primary service, the secondary services they include, and every include,
     characteristic and descriptor (includes by its own Read By Type, so a 128-bit included
     service, whose UUID is read from its declaration, works: Bumble's own client fails there);
  4. reads every readable characteristic value and every descriptor;
  5. subscribes to every characteristic that notifies or indicates (notifications when it does
     both, unless `--central-indicate`) and prints each value received;
  6. writes each `--central-write TARGET=HEX` (with response) and `--central-write-command
     TARGET=HEX` (without), in order, TARGET a UUID (4 hex digits or the 36-character form)
     or a handle (0x0012); more requests come on stdin as JSON lines at any time after
     discovery: {"write": TARGET, "value": HEX, "withResponse": true}, {"read": TARGET},
     {"unsubscribe": TARGET}, {"disconnect": true}, {"end": true} (ends the run); and at any
     time {"passkey": N} (the passkey it types in a Passkey Entry, see below);
  7. ends once `--central-count` values were received (0: right after step 6 and the stdin
     requests already queued; with `--central-wait`, only at {"end": true}), the link dropped,
     or `--central-timeout` s passed since it started scanning; then it unsubscribes from everything
     (`--central-unsubscribe`), disconnects, prints "done" and the process exits (status 0 when
     it ended by count or completion, 1 otherwise).

Several centrals (`--centrals N`): each on its own controller (addresses `--central-address`,
then its last byte + 1 ...), all for TARGET, the next one scanning once the previous has
connected; a stdin request names its central ("central": k, default 1).

Pairing options (all off by default; bumble_fixture/pairing.py, as the strap's --strap-*):
`--central-io none|display|keyboard|yesno|keyboard-display`, `--central-legacy` (no LE Secure
Connections), `--central-mitm`, `--central-no-bonding` (no keys distributed, no bond kept),
`--central-passkey N` (0-999999: displayed when it displays, entered when it types; without it
a random one is displayed, and when it types it logs "passkey-requested" and waits up to 30 s
for the stdin request {"passkey": N} (or null: refuses), then fails with 0x01),
`--central-reject-comparison` (Pairing Failed 0x0C).  The central distributes EncKey (legacy:
its LTK, with a random EDIV and Rand) and IdKey: its IRK ("bumble-central-" and the byte k, as a
big-endian number: central 1's is 62756d626c652d63656e7472616c2d01) and its identity address
(its random static address).  Bonds live in memory for the run.

Every step is one JSON line on stdout after the ready line (bumble-peer's logs go to stderr),
each with "central": k (1 to N) besides the fields below:
  {"event": "scanning", "target": T}
  {"event": "found", "address": A, "addressType": "public"|"random", "name": N}
  {"event": "connected", "address": A, "handle": H}
  {"event": "mtu", "mtu": M}
  {"event": "discovered", "services": [...]}   (the layout of bumble-peer's ready line "gatt";
      primaries first, then the secondary services found through includes)
  {"event": "read", "uuid": U, "handle": H, "value": HEX, "descriptor": false|true}
  {"event": "subscribed", "uuid": U, "handle": H, "mode": "notification"|"indication"}
  {"event": "notification"|"indication", "uuid": U, "handle": H, "value": HEX, "index": i, "time": t}
      (i counts every value received, both kinds, from 0; t: seconds since 1970 at reception)
  {"event": "unsubscribed", "uuid": U, "handle": H}
  {"event": "write", "uuid": U, "handle": H, "value": HEX, "withResponse": B}
  {"event": "error", "during": "scan"|"connect"|"mtu"|"discover"|"read"|"subscribe"|"write"|"request",
   "message": M, "attError": code (ATT errors only), "uuid", "handle" (when known)}
  {"event": "disconnected", "reason": code}
  Pairing (the strap's log kinds, bumble_peer.py's docstring, byte order included; each with
  "time"): {"event": "pairing", "role": "central", "method", "secureConnections",
  "authenticated", "bonding", "keySize", "ltk", "ediv", "rand", ["stk", "centralLtk",
  "centralEdiv", "centralRand"], ["peerIrk"], "peerAddress", "peerAddressType",
  "peerConnectionAddress", "keysSent", "keysReceived", ["passkey"]}, {"event": "pairing-failed",
  "reason": n}, {"event": "encryption", "enabled", "authenticated", "keySize", "key":
  "pairing"|"bond"}, {"event": "encryption-failed", "status": n|null, "message", "reason": n
  (the link dropped while encrypting with the bond: 61 = 0x3D MIC failure, the keys differ)},
  {"event": "passkey-displayed", "passkey"}, {"event": "passkey-requested", "timeout": s},
  {"event": "passkey-entered", "passkey": n|null},
  {"event": "comparison", "number", "accepted"}, {"event": "security-request", "authReq": n}
  (received), {"event": "ltk-request", ...} (only if the central is ever asked for an LTK);
  {"event": "reconnecting", "reason": code} (--central-reconnect-encrypt's own disconnection:
  not "disconnected", the run goes on).
  {"event": "error", "during": "pair"|"reconnect", ...} as for the other steps.
  {"event": "done", "reason": "count"|"complete"|"timeout"|"disconnected"|"error", "values": n}
"""

import asyncio
import json
import struct
import sys
import time

from bumble import att, hci
from bumble.core import UUID, AdvertisingData
from bumble.device import Peer
from bumble.gatt import GATT_INCLUDE_ATTRIBUTE_TYPE, Characteristic
from bumble.gatt_client import ServiceProxy

from bumble_fixture.pairing import Security, central_irk, options_from
from bumble_fixture.pairing import add_options as add_pairing_options

DEFAULT_CENTRAL_ADDRESS = "F0:CE:17:4A:00:01"


def add_arguments(parser):
    """The `--central*` options of bumble-peer."""
    group = parser.add_argument_group("central (Bumble's GATT client on the link, see bumble_central.py)")
    group.add_argument("--central", metavar="TARGET", help="run the central against TARGET (address or local name)")
    group.add_argument("--centrals", type=int, default=1, metavar="N",
                       help="N centrals, each on its own controller, for the same TARGET: central k+1 starts "
                            "scanning once central k has connected (every event names its \"central\", 1 to N)")
    group.add_argument("--central-count", type=int, default=0, metavar="N",
                       help="end after N notified or indicated values (0: once everything was read and written)")
    group.add_argument("--central-timeout", type=float, default=30.0, metavar="S",
                       help="end after S s (from the start of the scan) whatever happened")
    group.add_argument("--central-indicate", action="store_true",
                       help="subscribe with indications where a characteristic offers both")
    group.add_argument("--central-write", action="append", default=[], metavar="TARGET=HEX",
                       help="write HEX to TARGET (UUID or 0xHANDLE) with response, after subscribing")
    group.add_argument("--central-write-command", action="append", default=[], metavar="TARGET=HEX",
                       help="write HEX to TARGET without response (Write Command), after subscribing")
    group.add_argument("--central-wait", action="store_true",
                       help="after the writes, keep serving stdin requests until {\"end\": true}, the count, the "
                            "link's end or the timeout")
    group.add_argument("--central-unsubscribe", action="store_true",
                       help="at the end, unsubscribe from everything (CCCDs written back to 0) before disconnecting")
    group.add_argument("--central-mtu", type=int, default=517, metavar="MTU", help="Exchange MTU (0 = do not)")
    group.add_argument("--central-address", default=DEFAULT_CENTRAL_ADDRESS, metavar="XX:XX:XX:XX:XX:XX",
                       help="the central's random static address")
    group.add_argument("--central-pair", action="store_true",
                       help="pair right after connecting (before discovery), as the --central-* pairing options say")
    group.add_argument("--central-expect-security-request", action="store_true",
                       help="after connecting, wait for the peripheral's SMP Security Request, then pair (or "
                            "encrypt, with a bond)")
    group.add_argument("--central-reconnect-encrypt", action="store_true",
                       help="after pairing: disconnect, find the peer again, reconnect and encrypt with the "
                            "bond's key (no pairing), then go on with discovery")
    add_pairing_options(group, "central", "central")


def check_arguments(parser, args):
    if args.central is None:
        return
    for spec in args.central_write + args.central_write_command:
        try:
            parse_write(spec)
        except ValueError as error:
            parser.error(f"--central-write {spec}: {error}")
    if not 1 <= args.centrals <= 8:
        parser.error("--centrals must be between 1 and 8")
    if args.central_count < 0 or args.central_timeout <= 0:
        parser.error("--central-count cannot be negative and --central-timeout must be positive")
    try:
        options_from(args, "central")
    except ValueError as error:
        parser.error(f"central pairing: {error}")
    if args.central_reconnect_encrypt and not (args.central_pair or args.central_expect_security_request):
        parser.error("--central-reconnect-encrypt needs a pairing first: --central-pair or "
                     "--central-expect-security-request")


def parse_write(spec):
    """TARGET=HEX -> (TARGET, bytes)."""
    target, separator, value = spec.partition("=")
    if not separator or not target:
        raise ValueError("expected TARGET=HEX")
    return target, bytes.fromhex(value)


def uuid_text(uuid):
    """4 hex digits for 16-bit UUIDs, the 36-character upper-case form for 128-bit ones."""
    return uuid.to_hex_str(separator="-").upper()


def address_text(address):
    return str(address).split("/")[0].upper()


class Central:
    """One run of the central (see the module docstring). `emit` prints one event line."""

    def __init__(self, device, args, finish, number=1):
        self.device, self.args, self.finish, self.number = device, args, finish, number
        self.values = 0
        self.ended = asyncio.get_running_loop().create_future()
        self.started = asyncio.get_running_loop().create_future()  # connected, or the run ended
        self.requests = asyncio.Queue()
        self.connection = None
        self.peer = None
        self.characteristics = []
        self.descriptors = []
        self.subscriptions = {}  # value handle -> (characteristic, subscriber)
        self.failed = False
        self.reconnecting = False  # --central-reconnect-encrypt's own disconnection: the run goes on
        self.security = Security(device, options_from(args, "central"), self.emit_security, central_irk(number),
                                 log_disconnections=False)  # "disconnected" says it

    def emit_security(self, kind, **fields):
        self.emit(kind, time=time.time(), **fields)

    def emit(self, event, **fields):
        try:
            sys.stdout.write(json.dumps({"event": event, "central": self.number, **fields}) + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):  # nobody reads stdout any more: the run goes on, unseen
            pass

    def error(self, during, error, **fields):
        entry = {"during": during, "message": str(error) or type(error).__name__}
        if isinstance(error, att.ATT_Error):
            code = int(error.error_code)
            try:
                name = att.ErrorCode(code).name
            except ValueError:
                name = "application error" if 0x80 <= code <= 0x9F else "unknown"
            entry["message"] = f"ATT error 0x{code:02X} ({name})"
            entry["attError"] = code
        self.emit("error", **entry, **fields)

    def end(self, reason):
        if not self.ended.done():
            self.ended.set_result(reason)

    def request(self, request):
        """A request (a JSON object from stdin), handled in order once discovery is done; a
        passkey ({"passkey": N}) at once: the Passkey Entry the central waits in."""
        if "passkey" in request:
            try:
                self.security.type_passkey(request["passkey"])
            except ValueError as error:
                self.error("request", error)
            return
        self.requests.put_nowait(request)

    async def run(self):
        reason = "error"
        try:
            reason = await asyncio.wait_for(self.steps(), self.args.central_timeout)
        except asyncio.TimeoutError:
            reason = "timeout"
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a step failed: reported, the run ends
            self.error(getattr(error, "during", "central"), error)
        if self.device.is_scanning:  # ended while scanning (the timeout): the next central scans alone
            try:
                await asyncio.wait_for(self.device.stop_scanning(), 5)
            except Exception as error:
                self.error("scan", error)
        if self.connection is not None and reason != "disconnected" and self.args.central_unsubscribe:
            for handle in list(self.subscriptions):
                try:
                    await asyncio.wait_for(self.unsubscribe(handle), 5)
                except Exception as error:
                    self.error("unsubscribe", error, handle=handle)
        if self.connection is not None and reason != "disconnected":
            try:
                await asyncio.wait_for(self.connection.disconnect(), 5)
            except Exception:  # already gone, or the peer never answered: the process ends anyway
                pass
        self.failed = reason not in ("count", "complete")
        self.emit("done", reason=reason, values=self.values)
        if not self.started.done():
            self.started.set_result(None)
        self.finish("central done")

    async def scan(self, bond_peer=False):
        """Scans until TARGET advertises (with `bond_peer`, also a peer the bond matches: a new
        resolvable private address); returns (advertisement, its local name)."""
        target = self.args.central
        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement):
            if found.done():
                return
            address = address_text(advertisement.address)
            names = [advertisement.data.get(AdvertisingData.COMPLETE_LOCAL_NAME),
                     advertisement.data.get(AdvertisingData.SHORTENED_LOCAL_NAME)]
            bonded = bond_peer and any(b.matches(advertisement.address) for b in self.security.bonds)
            if target.upper() == address or target in names or bonded:
                found.set_result((advertisement, next((n for n in names if n), None)))

        self.device.on("advertisement", on_advertisement)
        try:
            await self.device.start_scanning(active=True, filter_duplicates=False)
            advertisement, name = await found
        finally:
            self.device.remove_listener("advertisement", on_advertisement)
        await self.device.stop_scanning()
        return advertisement, name

    async def connect(self, bond_peer=False):
        """Scans for TARGET and connects: the new connection, or None (reported)."""
        advertisement, name = await self.scan(bond_peer)
        address = advertisement.address
        self.emit("found", address=address_text(address),
                  addressType="public" if address.is_public else "random", name=name)
        try:
            connection = await self.device.connect(address, own_address_type=hci.OwnAddressType.RANDOM,
                                                   timeout=self.args.central_timeout)
        except Exception as error:
            self.error("connect", error)
            return None
        self.connection = connection
        connection.on("disconnection", lambda reason: self.on_disconnection(connection, reason))
        self.emit("connected", address=address_text(address), handle=connection.handle)
        return connection

    def on_disconnection(self, connection, reason):
        if connection is not self.connection or self.reconnecting:
            return
        self.emit("disconnected", reason=int(reason))
        self.end("disconnected")

    async def secure(self):
        """--central-pair / --central-expect-security-request: pairs (or, with a bond and a
        Security Request, encrypts). A failure is logged ("pairing-failed") and the run goes on."""
        connection = self.connection
        if self.args.central_expect_security_request:
            while True:
                requester, _ = await self.security.security_requests.get()
                if requester is connection:
                    break
            if self.security.bond_for(connection) is not None:
                return await self.security.encrypt_with_bond(connection, self.args.central_timeout)
        try:
            await connection.pair()
            return True
        except asyncio.CancelledError:
            raise
        except Exception as error:  # Pairing Failed (either side) or the link's end: logged already
            if not self.ended.done():
                self.error("pair", error)
            return False

    async def reconnect_encrypt(self):
        """--central-reconnect-encrypt: drops the link, finds the bonded peer again, reconnects
        and encrypts with the bond's key (no pairing)."""
        if self.security.bond_for(self.connection) is None:
            self.error("reconnect", "no bond to encrypt with (pairing failed or was not bonding)")
            return False
        old = self.connection
        gone = asyncio.get_running_loop().create_future()
        old.on("disconnection", lambda reason: gone.done() or gone.set_result(int(reason)))
        self.reconnecting = True
        try:
            await old.disconnect()
            reason = await asyncio.wait_for(gone, 10)
            self.emit("reconnecting", reason=reason)
            connection = await self.connect(bond_peer=True)
        finally:
            self.reconnecting = False
        if connection is None:
            return False
        return await self.security.encrypt_with_bond(connection, self.args.central_timeout)

    async def steps(self):
        target = self.args.central
        self.emit("scanning", target=target)
        if await self.connect() is None:
            return "error"
        self.started.set_result(None)
        if self.args.central_pair or self.args.central_expect_security_request:
            paired = await self.secure()
            if paired and self.args.central_reconnect_encrypt and not self.ended.done():
                await self.reconnect_encrypt()
            if self.ended.done():
                return await self.ended
        self.peer = Peer(self.connection)

        if self.args.central_mtu:
            try:
                self.emit("mtu", mtu=await self.peer.request_mtu(self.args.central_mtu))
            except Exception as error:
                self.error("mtu", error)

        try:
            services = await self.discover()
        except Exception as error:
            self.error("discover", error)
            return "error"
        self.emit("discovered", services=services)

        for characteristic in self.characteristics:
            if characteristic.properties & Characteristic.Properties.READ:
                await self.read(characteristic, descriptor=False)
        for descriptor in self.descriptors:
            await self.read(descriptor, descriptor=True)

        for characteristic in self.characteristics:
            if characteristic.properties & (Characteristic.Properties.NOTIFY | Characteristic.Properties.INDICATE):
                await self.subscribe(characteristic)

        for spec in self.args.central_write:
            await self.write(*parse_write(spec), with_response=True)
        for spec in self.args.central_write_command:
            await self.write(*parse_write(spec), with_response=False)

        serving = asyncio.ensure_future(self.serve_requests())
        try:
            if self.args.central_wait:
                return await self.ended
            if self.args.central_count == 0:
                await self.requests.join()
                if not self.ended.done():
                    return "complete"
            elif self.values >= self.args.central_count:
                return "count"
            return await self.ended
        finally:
            serving.cancel()

    async def discover(self):
        """Every primary service, then every secondary service they include, each with its
        includes, characteristics and descriptors, laid out as bumble-peer's ready line "gatt"."""
        layout = []
        await self.peer.discover_services()
        services = [(service, True) for service in self.peer.services]
        seen = {service.handle for service in self.peer.services}
        index = 0
        while index < len(services) and index < 256:  # bounded: a hostile database cannot loop it
            service, primary = services[index]
            index += 1
            try:
                includes = await self.discover_includes(service)
            except Exception as error:
                self.error("discover", error, handle=service.handle, uuid=uuid_text(service.uuid))
                includes = []
            for _, start, end, uuid in includes:
                if start not in seen:
                    seen.add(start)
                    services.append((ServiceProxy(self.peer.gatt_client, start, end, uuid, False), False))
            characteristics = await self.peer.discover_characteristics(service=service)
            entry = {"uuid": uuid_text(service.uuid), "primary": primary, "start": service.handle,
                     "end": service.end_group_handle,
                     "includes": [{"handle": handle, "start": start, "end": end, "uuid": uuid_text(uuid)}
                                  for handle, start, end, uuid in includes],
                     "characteristics": []}
            for characteristic in characteristics:
                descriptors = await self.peer.discover_descriptors(characteristic)
                self.characteristics.append(characteristic)
                self.descriptors += descriptors
                entry["characteristics"].append({
                    "uuid": uuid_text(characteristic.uuid), "declaration": characteristic.handle - 1,
                    "value": characteristic.handle, "end": characteristic.end_group_handle,
                    "properties": int(characteristic.properties),
                    "descriptors": [{"uuid": uuid_text(d.type), "handle": d.handle} for d in descriptors]})
            layout.append(entry)
        return layout

    async def discover_includes(self, service):
        """(declaration handle, start, end, UUID) of each include of `service` (Core Vol 3 Part G
        4.5.1), reading the included service's declaration for its UUID when the include carries
        none (a 128-bit service): Bumble 0.0.236's own discover_included_services fails on those
        and keeps no declaration handle."""
        client, found = self.peer.gatt_client, []
        start, end = service.handle, service.end_group_handle
        while start <= end and len(found) < 256:
            response = await client.send_request(att.ATT_Read_By_Type_Request(
                starting_handle=start, ending_handle=end, attribute_type=GATT_INCLUDE_ATTRIBUTE_TYPE))
            if response is None:
                raise TimeoutError("no answer to Read By Type (includes)")
            if response.op_code == att.Opcode.ATT_ERROR_RESPONSE:
                if response.error_code == att.ATT_ATTRIBUTE_NOT_FOUND_ERROR:
                    break
                raise att.ATT_Error(error_code=response.error_code, message="Read By Type (includes)")
            if not response.attributes:
                break
            for handle, value in response.attributes:
                value = bytes(value)
                if handle < start or len(value) not in (4, 6):
                    raise ValueError(f"include declaration at 0x{handle:04X}: {value.hex()} is malformed")
                included_start, included_end = struct.unpack_from("<HH", value)
                if len(value) == 6:
                    uuid = UUID.from_bytes(value[4:])
                else:
                    declaration = bytes(await self.peer.read_value(included_start))
                    if len(declaration) != 16:
                        raise ValueError(f"included service declaration at 0x{included_start:04X}: "
                                         f"{declaration.hex()} is not a 128-bit UUID")
                    uuid = UUID.from_bytes(declaration)
                found.append((handle, included_start, included_end, uuid))
            start = response.attributes[-1][0] + 1
        return found

    def find(self, target):
        """The characteristic (or descriptor) named by a UUID or a handle."""
        attributes = self.characteristics + self.descriptors
        if target.lower().startswith("0x"):
            handle = int(target, 16)
            return next((a for a in attributes if a.handle == handle), None)
        uuid = UUID(target)
        return next((c for c in self.characteristics if c.uuid == uuid), None)

    async def read(self, attribute, descriptor):
        uuid = uuid_text(attribute.type if descriptor else attribute.uuid)
        try:
            value = await self.peer.read_value(attribute)
            self.emit("read", uuid=uuid, handle=attribute.handle, value=bytes(value).hex(), descriptor=descriptor)
        except Exception as error:
            self.error("read", error, uuid=uuid, handle=attribute.handle)

    async def subscribe(self, characteristic):
        both = (characteristic.properties & Characteristic.Properties.NOTIFY
                and characteristic.properties & Characteristic.Properties.INDICATE)
        notify = bool(characteristic.properties & Characteristic.Properties.NOTIFY) and not (
            both and self.args.central_indicate)
        mode = "notification" if notify else "indication"
        uuid = uuid_text(characteristic.uuid)

        def on_value(value):
            self.emit(mode, uuid=uuid, handle=characteristic.handle, value=bytes(value).hex(), index=self.values,
                      time=time.time())
            self.values += 1
            if self.args.central_count and self.values >= self.args.central_count:
                self.end("count")

        # Bumble's client calls a subscriber per value (the proxy's decode is the identity here).
        try:
            await characteristic.subscribe(on_value, prefer_notify=notify)
            self.subscriptions[characteristic.handle] = (characteristic, on_value)
            self.emit("subscribed", uuid=uuid, handle=characteristic.handle, mode=mode)
        except Exception as error:
            self.error("subscribe", error, uuid=uuid, handle=characteristic.handle)

    async def unsubscribe(self, handle):
        """Writes the CCCD of the characteristic at `handle` back to 0 (Bumble's unsubscribe)."""
        characteristic, subscriber = self.subscriptions.pop(handle)
        await characteristic.unsubscribe(subscriber, force=True)
        self.emit("unsubscribed", uuid=uuid_text(characteristic.uuid), handle=handle)

    async def write(self, target, value, with_response):
        attribute = self.find(target)
        if attribute is None:
            self.error("write", f"no characteristic or descriptor {target}")
            return
        uuid = uuid_text(getattr(attribute, "uuid", None) or attribute.type)
        try:
            await self.peer.write_value(attribute, value, with_response=with_response)
            self.emit("write", uuid=uuid, handle=attribute.handle, value=value.hex(), withResponse=with_response)
        except Exception as error:
            self.error("write", error, uuid=uuid, handle=attribute.handle)

    async def serve_requests(self):
        while True:
            request = await self.requests.get()
            try:
                if "write" in request:
                    await self.write(str(request["write"]), bytes.fromhex(str(request.get("value", ""))),
                                     with_response=bool(request.get("withResponse", True)))
                elif "read" in request:
                    attribute = self.find(str(request["read"]))
                    if attribute is None:
                        self.error("read", f"no characteristic or descriptor {request['read']}")
                    else:
                        await self.read(attribute, descriptor=not hasattr(attribute, "uuid"))
                elif "unsubscribe" in request:
                    attribute = self.find(str(request["unsubscribe"]))
                    if attribute is None or attribute.handle not in self.subscriptions:
                        self.error("unsubscribe", f"no subscription to {request['unsubscribe']}")
                    else:
                        await self.unsubscribe(attribute.handle)
                elif request.get("end"):
                    self.end("complete")
                elif request.get("disconnect"):
                    await self.connection.disconnect()
                else:
                    self.error("request", f"unknown request {json.dumps(request)[:100]}")
            except Exception as error:
                self.error("request", error)
            finally:
                self.requests.task_done()


class Centrals:
    """`--centrals N` Centrals, each on its own controller of the link, one after another:
    central k+1 starts scanning once central k has connected (or ended), so no two ever connect
    on the same advertisement (Bumble's virtual controller would complete both connections,
    and the advertiser would know only one).  A stdin request goes to its "central" (1 to N,
    default 1).  The process ends when every central has."""

    def __init__(self, devices, args, finish):
        self.finish = finish
        self.members = [Central(device, args, self.member_finished, number=k + 1)
                        for k, device in enumerate(devices)]
        self.remaining = len(self.members)

    @property
    def failed(self):
        return any(member.failed for member in self.members)

    def member_finished(self, why):
        self.remaining -= 1
        if self.remaining == 0:
            self.finish(why if len(self.members) == 1 else "centrals done")

    def request(self, line):
        """A stdin line: a JSON request for one central."""
        first = self.members[0]
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("not a JSON object")
            number = request.pop("central", 1)
            if not isinstance(number, int) or not 1 <= number <= len(self.members):
                raise ValueError(f"no central {number!r}")
        except ValueError as error:
            first.error("request", f"unreadable request {line[:100]!r}: {error}")
            return
        self.members[number - 1].request(request)

    async def run(self):
        tasks = []
        for member in self.members:
            tasks.append(asyncio.ensure_future(member.run()))
            await member.started
        await asyncio.gather(*tasks)


def central_addresses(args):
    """The random static address of each central: `--central-address`, then its last byte + 1, + 2 ..."""
    base = hci.Address(args.central_address)
    text = address_text(base)
    return [text[:-2] + "%02X" % ((int(text[-2:], 16) + k) & 0xFF) for k in range(args.centrals)]


def main():
    """`bumble-central TARGET [bumble-peer options]`: bumble-peer with `--central TARGET`."""
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.stderr.write("usage: bumble-central TARGET [bumble-peer options, e.g. --ports 2 --no-standard "
                         "--central-count 5]\n  TARGET: an address (AA:BB:CC:DD:EE:FF) or a local name\n")
        return 2
    import bumble_peer
    return bumble_peer.main(["--central", sys.argv[1]] + sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
