"""Pairing and encryption for the fixture's Bumble devices (the strap as peripheral, Bumble's
central in bumble_central.py, the self-check's hosts): one `Security` per Device configures
Bumble's Security Manager from options, logs every step as a JSON object (strap: a line of
`--log` with "kind"; central: an event line on stdout with "event"), keeps the bonds, answers
the controller's LTK requests from them and encrypts with them.

Byte order of what is logged: every 128-bit value (ltk, stk, centralLtk, peerIrk, the ready
line's irk) is 32 lower-case hex digits of the key as ONE BIG-ENDIAN NUMBER, most significant
byte first (how the specification prints keys and how Swift prints a UInt128 with radix 16);
on the air and in HCI commands the same key travels least significant byte first, so the hex
is the air's bytes reversed.  "rand" is the 64-bit Rand as a number (the air's 8 bytes read
little-endian), "ediv" the 16-bit EDIV as a number.  Addresses are AA:BB:CC:DD:EE:FF, most
significant byte first, as everywhere in bumble-peer.

What Bumble 0.0.236 gets wrong here, and what this module does instead:
  - a Device made with `Device(name, address, host)` has an all-zero IRK (only a configuration
    file derives one): every Security here gives its device a fixed, distinct IRK;
  - `connection.authenticated` turns true on any encrypted LE link, Just Works included, so
    Bumble's READ_REQUIRES_AUTHENTICATION admits an unauthenticated key: `link_authenticated`
    says what the key encrypting the link really is (the strap's authenticated read uses it);
  - as a peripheral, Bumble answers an LTK request for a legacy bond with `ltk_peripheral`,
    which for a responder is the key the CENTRAL distributed (or an empty key when it sent
    none), never checks EDIV and Rand, and finds a bond only under the address the peer
    connects from: `long_term_key` here answers with the key this side distributed, matched
    by EDIV and Rand (legacy) or by the peer's identity, connection address or IRK (LE Secure
    Connections, EDIV = Rand = 0);
  - a numeric comparison answered "no" fails with reason 0x04 (Confirm Value Failed); the
    specification's reason is 0x0C (Numeric Comparison Failed), which FixtureSession sends;
  - a legacy LTK is distributed with EDIV 0 and Rand 0, the name of the STK: FixtureSession
    distributes it with a random EDIV and Rand;
  - the end of a pairing (storing the keys, the "pairing" event) is cancelled when the link
    drops, so a central that disconnects as soon as it has sent its last key leaves the
    peripheral without a bond: FixtureSession finishes it whatever the link does;
  - Bumble cannot do LE Secure Connections Passkey Entry with passkey 0 (an `assert passkey`
    stalls it): FixtureSession makes its confirm values itself, so 000000 works;
  - Bumble does not negotiate the encryption key size (it always offers 16 and never masks a
    key) and its virtual controller reports no key size: "keySize" is the smaller of the two
    Maximum Encryption Key Size fields of the Pairing Request and Response.
"""

import asyncio
import secrets

from bumble import hci, smp
from bumble.pairing import PairingConfig, PairingDelegate

IO_CAPABILITIES = {
    "none": PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT,
    "display": PairingDelegate.IoCapability.DISPLAY_OUTPUT_ONLY,
    "keyboard": PairingDelegate.IoCapability.KEYBOARD_INPUT_ONLY,
    "yesno": PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
    "keyboard-display": PairingDelegate.IoCapability.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
}

METHOD_NAMES = {
    smp.PairingMethod.JUST_WORKS: "just-works",
    smp.PairingMethod.NUMERIC_COMPARISON: "numeric-comparison",
    smp.PairingMethod.PASSKEY: "passkey",
    smp.PairingMethod.OOB: "oob",
}

# How long a device without a fixed passkey waits for the test to type one (`type_passkey`).
TYPING_TIMEOUT = 30.0

# SMP key distribution bits (Core Vol 3 Part H 3.6.1), as "keysSent" / "keysReceived" carry them.
ENC_KEY, ID_KEY, SIGN_KEY, LINK_KEY = 1, 2, 4, 8

# The fixed IRKs (as big-endian numbers: these 16 ASCII bytes, first byte most significant).
STRAP_IRK = b"rawble-strap-irk"


def central_irk(number):
    """The IRK of bumble_central's central `number` (1, 2 ...): "bumble-central-" and the number."""
    return b"bumble-central-" + bytes([number & 0xFF])


def be_hex(little_endian):
    """A key as Bumble holds it (the air's order, least significant byte first) -> big-endian hex."""
    return bytes(little_endian)[::-1].hex()


def le_bytes(big_endian):
    """The inverse of be_hex for bytes given most significant first (the fixed IRKs above)."""
    return bytes(big_endian)[::-1]


def rand_number(rand):
    return int.from_bytes(bytes(rand or bytes(8)), "little")


def address_text(address):
    return str(address).split("/")[0].upper()


def address_type(address):
    return "public" if address.is_public else "random"


# What `--PREFIX-fault` makes a device do wrong in a pairing, for the other side's failures:
#   confirm      every Pairing Confirm it sends has its first byte flipped: the other side's
#                check of it fails (Confirm Value Failed, 0x04);
#   dhkey-check  every Pairing DHKey Check it sends has its first byte flipped (LE Secure
#                Connections): the other side's check fails (DHKey Check Failed, 0x0B);
#   silent       after its Pairing Request or Response it sends no SMP command at all (nor
#                Pairing Failed): the other side's 30 s SMP timeout runs out.
# and the published attacks on a host's Security Manager (every SMP command the device receives is
# then logged, {"kind": "smp-received", "code": n}, and each step of the attack, {"kind": "attack",
# "step": ...}), so a test sees how far the other side let it go:
#   reflect-public-key  (LE Secure Connections; CVE-2020-26558) the public key it sends is the
#                other side's own with Y negated, (X, p - Y): as responder the key just received;
#                as initiator the other side's key from an earlier pairing in this process (a
#                host that kept its key pair gives it away), else its own. f4 takes only X, so
#                in Passkey Entry it answers every round's Pairing Confirm and Random with the
#                initiator's own and learns the passkey bit by bit ("passkey-bit" steps, then
#                "passkey-learned"); it cannot compute the DHKey, so it stops at the DHKey check;
#   reflect-confirm  (LE legacy, as responder) its Pairing Confirm is the initiator's and its
#                Pairing Random the initiator's, so the initiator's c1 check holds; it answers the
#                LTK request with the STK those values give (s1 of TK, Mrand, Mrand);
#   key-size-17, key-size-7  its Pairing Request or Response offers that Maximum Encryption Key
#                Size (17: outside 7-16, SweynTooth CVE-2019-19196; 7: allowed by the
#                specification, below a host's minimum of 16: KNOB for LE);
#   encrypt-early  (central) LE Enable Encryption with an all-zero key right after the Pairing
#                Response, before any key exists (SweynTooth CVE-2019-19194, the zero LTK);
#   skip-dhkey-check  (central, LE Secure Connections) it starts encryption with the LTK it
#                computed instead of sending its DHKey Check (SweynTooth's DHCheck skip);
#                after either, once the controller says how encrypting went ("encrypted" or
#                "refused" steps), it drops the link;
#   bad-identity-address  it distributes an identity address that is neither public nor
#                static random (a resolvable private one, 0x4A...).
FAULTS = ("confirm", "dhkey-check", "silent")
ATTACKS = ("reflect-public-key", "reflect-confirm", "key-size-17", "key-size-7", "encrypt-early",
           "skip-dhkey-check", "bad-identity-address")
# P-256's prime: (X, P256_PRIME - Y) is the point with Y negated.
P256_PRIME = 2**256 - 2**224 + 2**192 + 2**96 - 1
# The public key each peer (by address) sent in this process's pairings, for reflect-public-key as
# initiator: (x, y) in the air's byte order.
SEEN_PUBLIC_KEYS = {}


class Options:
    """A side's pairing options: IO capability name, legacy (no LE Secure Connections), MITM,
    bonding, fixed passkey (None: random when displaying; when typing, the one the test types,
    Security.type_passkey), whether it answers a numeric comparison no, and a fault (FAULTS)."""

    def __init__(self, io="none", legacy=False, mitm=False, bonding=True, passkey=None,
                 reject_comparison=False, fault=None):
        if io not in IO_CAPABILITIES:
            raise ValueError(f"IO capability {io!r}: one of {', '.join(IO_CAPABILITIES)}")
        if passkey is not None and not 0 <= passkey <= 999999:
            raise ValueError("a passkey is 0 to 999999")
        if fault is not None and fault not in FAULTS + ATTACKS:
            raise ValueError(f"fault {fault!r}: one of {', '.join(FAULTS + ATTACKS)}")
        self.io, self.legacy, self.mitm, self.bonding = io, legacy, mitm, bonding
        self.passkey, self.reject_comparison = passkey, reject_comparison
        self.fault = fault

    def describe(self):
        return {"io": self.io, "secureConnections": not self.legacy, "mitm": self.mitm,
                "bonding": self.bonding, "passkey": self.passkey,
                "rejectComparison": self.reject_comparison, "fault": self.fault}


class FixtureDelegate(PairingDelegate):
    """Bumble's pairing delegate answering as the options say, each answer logged."""

    def __init__(self, options, emit, typed=None):
        distribution = (PairingDelegate.DEFAULT_KEY_DISTRIBUTION if options.bonding
                        else PairingDelegate.KeyDistribution(0))
        super().__init__(io_capability=IO_CAPABILITIES[options.io],
                         local_initiator_key_distribution=distribution,
                         local_responder_key_distribution=distribution)
        self.options, self.emit, self.typed = options, emit, typed

    async def accept(self):
        return True

    async def confirm(self, auto=False):
        return True  # Just Works: nothing to show, nothing to refuse

    async def compare_numbers(self, number, digits):
        accepted = not self.options.reject_comparison
        self.emit("comparison", number=int(number), accepted=accepted)
        return accepted

    async def get_number(self):
        passkey = self.options.passkey
        if passkey is None and self.typed is not None:
            # No fixed passkey: the test types the one the other side shows (a stdin line), or
            # nothing within TYPING_TIMEOUT s.
            self.emit("passkey-requested", timeout=TYPING_TIMEOUT)
            try:
                passkey = await asyncio.wait_for(self.typed.get(), TYPING_TIMEOUT)
            except asyncio.TimeoutError:
                passkey = None
        self.emit("passkey-entered", passkey=passkey)
        return passkey  # None: Pairing Failed, Passkey Entry Failed (0x01)

    async def generate_passkey(self):
        if self.options.passkey is not None:
            return self.options.passkey
        return secrets.randbelow(1000000)

    async def display_number(self, number, digits):
        self.emit("passkey-displayed", passkey=int(number))


class FixtureSession(smp.Session):
    """Bumble's SMP session with four changes: a legacy LTK distributed with a random EDIV and
    Rand (Bumble's are always 0, so its STK and its LTK had the same name); the STK given only
    for EDIV = Rand = 0; the pairing's end run to completion even when the peer disconnects
    right after its last key (Bumble cancels it on disconnection: no bond, no "pairing" event,
    when the central drops the link as soon as it has sent its keys); a numeric comparison
    refused with the specification's reason.  The session is kept on its connection
    (`fixture_session`): Bumble forgets it at disconnection."""

    def __init__(self, manager, connection, pairing_config, is_initiator):
        super().__init__(manager, connection, pairing_config, is_initiator)
        options = getattr(pairing_config.delegate, "options", None)
        self.fault = getattr(options, "fault", None)
        self.emit = getattr(pairing_config.delegate, "emit", lambda kind, **fields: None)
        self.reflected_x = None  # reflect-public-key: the X both public keys now have
        self.learned_passkey = 0
        if self.fault in ("key-size-17", "key-size-7"):
            self.maximum_encryption_key_size = int(self.fault.rsplit("-", 1)[1])
        self.ltk_ediv = secrets.randbelow(0x10000)
        self.ltk_rand = secrets.token_bytes(8)
        self.pairing_task = None
        connection.fixture_session = self

    def send_command(self, command):
        """Bumble's, with the fault the options ask for (FAULTS)."""
        if self.fault == "silent" and not isinstance(
                command, (smp.SMP_Pairing_Request_Command, smp.SMP_Pairing_Response_Command)):
            return
        if self.fault == "confirm" and isinstance(command, smp.SMP_Pairing_Confirm_Command):
            command = smp.SMP_Pairing_Confirm_Command(confirm_value=flipped(command.confirm_value))
        if self.fault == "dhkey-check" and isinstance(command, smp.SMP_Pairing_DHKey_Check_Command):
            command = smp.SMP_Pairing_DHKey_Check_Command(dhkey_check=flipped(command.dhkey_check))
        super().send_command(command)

    # MARK: the attacks (ATTACKS)

    def on_smp_command(self, command):
        if self.fault in ATTACKS:
            self.emit("smp-received", code=int(command.code))
        super().on_smp_command(command)

    def peer_key_name(self):
        return str(self.connection.peer_address).split("/")[0].upper()

    def send_public_key_command(self):
        if self.fault != "reflect-public-key":
            return super().send_public_key_command()
        if self.is_initiator:
            known = SEEN_PUBLIC_KEYS.get(self.peer_key_name())
        else:
            known = (bytes(self.peer_public_key_x), bytes(self.peer_public_key_y))
        if known is None:
            self.emit("attack", step="own-public-key", message="no key of this peer seen yet: this pairing learns it")
            return super().send_public_key_command()
        x, y = known
        negated = (P256_PRIME - int.from_bytes(y, "little")).to_bytes(32, "little")
        self.reflected_x = x
        self.emit("attack", step="reflected-public-key")
        self.send_command(smp.SMP_Pairing_Public_Key_Command(public_key_x=x, public_key_y=negated))

    def on_smp_pairing_public_key_command(self, command):
        SEEN_PUBLIC_KEYS[self.peer_key_name()] = (bytes(command.public_key_x), bytes(command.public_key_y))
        if self.fault == "reflect-public-key" and self.is_initiator and self.reflected_x is not None:
            # Its own key was the peer's reflected: there is no DHKey to compute, and in Passkey
            # Entry it cannot make a confirm value; it waits for the peer's answer.
            self.peer_public_key_x, self.peer_public_key_y = command.public_key_x, command.public_key_y
            return
        super().on_smp_pairing_public_key_command(command)

    def reflecting_rounds(self):
        return self.fault == "reflect-public-key" and self.reflected_x is not None and not self.is_initiator

    def on_smp_pairing_confirm_command(self, command):
        if self.reflecting_rounds() or (self.fault == "reflect-confirm" and not self.sc and not self.is_initiator):
            self.confirm_value = command.confirm_value
            self.send_command(smp.SMP_Pairing_Confirm_Command(confirm_value=command.confirm_value))
            return
        super().on_smp_pairing_confirm_command(command)

    def on_smp_pairing_random_command(self, command):
        if self.reflecting_rounds():
            # Which passkey bit makes the initiator's confirm: f4(X, X, Na, 0x80 | bit).
            for bit in (0, 1):
                if smp.crypto.f4(self.reflected_x, self.reflected_x, command.random_value, bytes([0x80 | bit])) == self.confirm_value:
                    self.learned_passkey |= bit << self.passkey_step
                    self.emit("attack", step="passkey-bit", round=self.passkey_step + 1, bit=bit)
            self.send_command(smp.SMP_Pairing_Random_Command(random_value=command.random_value))
            self.passkey_step += 1
            if self.passkey_step == 20:
                self.emit("attack", step="passkey-learned", passkey=self.learned_passkey)
            return
        if self.fault == "reflect-confirm" and not self.sc and not self.is_initiator:
            mrand = command.random_value
            self.stk = smp.crypto.s1(self.tk, mrand, mrand)
            self.ltk = smp.crypto.r()  # what Bumble's own legacy step makes here, for the key distribution
            self.emit("attack", step="reflected-confirm")
            self.send_command(smp.SMP_Pairing_Random_Command(random_value=mrand))
            return
        super().on_smp_pairing_random_command(command)

    def on_smp_pairing_dhkey_check_command(self, command):
        if self.reflecting_rounds():
            self.emit("attack", step="no-dhkey", message="the reflected key has no DHKey: the attack ends here")
            self.send_pairing_failed(smp.ErrorCode.UNSPECIFIED_REASON)
            return
        super().on_smp_pairing_dhkey_check_command(command)

    def encrypt_out_of_order(self, key):
        """Starts encryption with `key` out of the pairing's order; once the controller says
        how it went ("encrypted" or "refused"), drops the link: the attack is over either way
        (nothing waits out the 30 s SMP timeout)."""
        connection = self.connection

        def settle(step):
            if not getattr(connection, "attack_settled", False):
                connection.attack_settled = True
                self.emit("attack", step=step)
                asyncio.ensure_future(connection.disconnect())

        connection.on("connection_encryption_change",
                      lambda: settle("encrypted" if connection.is_encrypted else "refused"))
        connection.on("connection_encryption_failure", lambda status: settle("refused"))
        self.start_encryption(key)

    def on_smp_pairing_response_command(self, command):
        super().on_smp_pairing_response_command(command)
        if self.fault == "encrypt-early":
            self.emit("attack", step="encrypt-early")
            self.encrypt_out_of_order(bytes(16))

    def send_pairing_dhkey_check_command(self):
        if self.fault == "skip-dhkey-check" and self.is_initiator:
            self.emit("attack", step="skip-dhkey-check")
            self.encrypt_out_of_order(self.ltk)
            return
        super().send_pairing_dhkey_check_command()

    def send_identity_address_command(self):
        if self.fault != "bad-identity-address":
            return super().send_identity_address_command()
        from bumble.hci import Address
        address = Address("4A:52:41:57:42:4C", Address.RANDOM_DEVICE_ADDRESS)
        self.emit("attack", step="bad-identity-address", address=str(address).split("/")[0])
        self.send_command(smp.SMP_Identity_Address_Information_Command(addr_type=address.address_type, bd_addr=address))

    # MARK: keys

    def get_long_term_key(self, rand, ediv):
        if not self.sc and not self.completed:
            return self.stk if bytes(rand) == bytes(8) and ediv == 0 else None
        return getattr(self, "ltk", None)  # LE Secure Connections: none before it is computed

    def on_peer_key_distribution_complete(self):
        if self.is_initiator:
            self.distribute_keys()
        self.pairing_task = asyncio.ensure_future(asyncio.wait_for(self.on_pairing(), 10))
        self.pairing_task.add_done_callback(lambda task: task.cancelled() or task.exception())

    def send_pairing_confirm_command(self):
        """Bumble's, but a passkey of 0 (000000) works: Bumble's `assert self.passkey` stalled
        LE Secure Connections Passkey Entry there."""
        if not self.sc or self.pairing_method != smp.PairingMethod.PASSKEY:
            return super().send_pairing_confirm_command()
        self.r = smp.crypto.r()

        async def next_steps():
            await self.passkey_ready.wait()
            if self.passkey is None:
                return
            z = bytes([0x80 + ((self.passkey >> self.passkey_step) & 1)])
            if self.is_initiator:
                confirm_value = smp.crypto.f4(self.pka, self.pkb, self.r, z)
            else:
                confirm_value = smp.crypto.f4(self.pkb, self.pka, self.r, z)
            self.send_command(smp.SMP_Pairing_Confirm_Command(confirm_value=confirm_value))

        self.connection.cancel_on_disconnection(next_steps())

    def prompt_user_for_numeric_comparison(self, code, next_steps):
        async def prompt():
            try:
                accepted = await self.pairing_config.delegate.compare_numbers(code, digits=6)
            except Exception:  # the delegate failed: no
                accepted = False
            if accepted:
                next_steps()
            else:
                self.send_pairing_failed(smp.ErrorCode.NUMERIC_COMPARISON_FAILED)

        self.connection.cancel_on_disconnection(prompt())


def flipped(value):
    """`value` with its first byte's bits inverted: a confirm or check value that cannot match."""
    value = bytes(value)
    return bytes([value[0] ^ 0xFF]) + value[1:]


class Bond:
    """What a bonded pairing left: the peer's identity (address, IRK), the address it paired
    from, and the key for each local role (as_central: the key this side encrypts with as
    central; as_peripheral: the key it answers an LTK request with), each (ltk LE bytes, ediv,
    rand LE bytes) or None."""

    def __init__(self, identity, connection_address, irk, as_central, as_peripheral, authenticated,
                 key_size, secure_connections):
        self.identity, self.connection_address, self.irk = identity, connection_address, irk
        self.as_central, self.as_peripheral = as_central, as_peripheral
        self.authenticated, self.key_size = authenticated, key_size
        self.secure_connections = secure_connections

    def matches(self, *addresses):
        for address in addresses:
            if address is None:
                continue
            if bytes(address) in (bytes(self.identity), bytes(self.connection_address)):
                return True
            if self.irk is not None and address.is_resolvable:
                if smp.AddressResolver([(self.irk, self.identity)]).resolve(address) is not None:
                    return True
        return False


class Link:
    """What is known of one connection's security."""

    def __init__(self):
        self.pending = None  # (authenticated, key size, source) of the key about to encrypt it
        self.encrypted = False
        self.authenticated = False
        self.key_size = None
        self.secured = False  # SMP or encryption happened: its end is logged


class Security:
    """One Bumble Device's pairing side (see the module docstring). `emit(kind, **fields)` logs."""

    def __init__(self, device, options, emit, irk, log_disconnections=True):
        self.device, self.options, self.emit = device, options, emit
        self.log_disconnections = log_disconnections
        self.bonds = []
        self.links = {}  # Connection -> Link
        self.security_requests = asyncio.Queue()
        self.typed = asyncio.Queue()  # passkeys the test typed (type_passkey), for the next Passkey Entry
        device.irk = le_bytes(irk)
        device.pairing_config_factory = self.pairing_config
        device.smp_session_proxy = FixtureSession
        device.host.long_term_key_provider = self.long_term_key
        device.on("connection", self.on_connection)

    def pairing_config(self, connection):
        o = self.options
        return PairingConfig(sc=not o.legacy, mitm=o.mitm, bonding=o.bonding,
                             delegate=FixtureDelegate(o, self.emit, self.typed),
                             identity_address_type=PairingConfig.AddressType.RANDOM)

    def link(self, connection):
        return self.links.setdefault(connection, Link())

    def type_passkey(self, passkey):
        """The test types `passkey` (0-999999; None: refuses to type one): the answer of the next
        Passkey Entry in which this device types and has no fixed passkey (it waits for one,
        logged as "passkey-requested")."""
        if passkey is not None and (not isinstance(passkey, int) or isinstance(passkey, bool)
                                    or not 0 <= passkey <= 999999):
            raise ValueError(f"a passkey is 0 to 999999 (or null), not {passkey!r}")
        self.typed.put_nowait(passkey)

    def link_authenticated(self, connection):
        """Whether `connection` is encrypted with an authenticated key (MITM-protected pairing)."""
        link = self.links.get(connection)
        return bool(link and link.encrypted and connection.is_encrypted and link.authenticated)

    # MARK: events

    def on_connection(self, connection):
        link = self.link(connection)

        def on_pairing(keys):
            self.on_pairing(connection, keys)

        def on_pairing_failure(reason):
            link.secured = True
            self.emit("pairing-failed", reason=int(reason))

        def on_encryption_change():
            link.secured = True
            info = link.pending or self.session_info(connection)
            link.pending = None
            link.encrypted = bool(connection.encryption)
            link.authenticated = bool(info and info[0]) and link.encrypted
            link.key_size = info[1] if info else None
            fields = {"enabled": link.encrypted, "authenticated": link.authenticated}
            if link.key_size is not None:
                fields["keySize"] = link.key_size
            if info:
                fields["key"] = info[2]
            self.emit("encryption", **fields)

        def on_encryption_failure(status):
            link.secured = True
            link.pending = None
            self.emit("encryption-failed", status=int(status))

        def on_key_refresh():
            link.secured = True
            info = link.pending or self.session_info(connection)
            link.pending = None
            if info:
                link.authenticated, link.key_size = bool(info[0]), info[1]
            self.emit("encryption", enabled=True, refresh=True, authenticated=link.authenticated,
                      **({"keySize": link.key_size} if link.key_size is not None else {}))

        def on_security_request(auth_req):
            link.secured = True
            self.emit("security-request", authReq=int(auth_req))
            self.security_requests.put_nowait((connection, int(auth_req)))

        def on_disconnection(reason):
            if link.secured and self.log_disconnections:
                self.emit("disconnection", reason=int(reason))
            self.links.pop(connection, None)

        connection.on("pairing", on_pairing)
        connection.on("pairing_failure", on_pairing_failure)
        connection.on("connection_encryption_change", on_encryption_change)
        connection.on("connection_encryption_failure", on_encryption_failure)
        connection.on("connection_encryption_key_refresh", on_key_refresh)
        connection.on("security_request", on_security_request)
        connection.on("disconnection", on_disconnection)

    def session(self, connection):
        return getattr(connection, "fixture_session", None)

    @staticmethod
    def key_size(session):
        preq, pres = getattr(session, "preq", None), getattr(session, "pres", None)
        if preq and pres and len(preq) > 4 and len(pres) > 4:
            return min(preq[4], pres[4])
        return None

    def session_info(self, connection):
        """(authenticated, key size, "pairing") of the pairing under way on `connection`."""
        session = self.session(connection)
        if session is None or getattr(session, "pres", None) is None:
            return None
        return (session.pairing_method != smp.PairingMethod.JUST_WORKS, self.key_size(session), "pairing")

    def on_pairing(self, connection, keys):
        link = self.link(connection)
        link.secured = True
        session = self.session(connection)
        if session is None:
            self.emit("pairing-unrecorded", message="no SMP session for the connection")
            return
        initiator = session.is_initiator
        sc = bool(session.sc)
        method = session.pairing_method
        authenticated = method != smp.PairingMethod.JUST_WORKS
        key_size = self.key_size(session)
        own = int(session.initiator_key_distribution if initiator else session.responder_key_distribution)
        peer = int(session.responder_key_distribution if initiator else session.initiator_key_distribution)
        identity = session.peer_bd_addr
        connected_from = connection.peer_resolvable_address or connection.peer_address
        peer_address = identity if identity is not None else connected_from
        record = {"role": "central" if initiator else "peripheral", "method": METHOD_NAMES.get(method, str(method)),
                  "secureConnections": sc, "authenticated": authenticated, "bonding": bool(session.bonding),
                  "keySize": key_size}
        if sc:
            key = (session.ltk, 0, bytes(8))
            same_roles, reversed_roles = key, key
        else:
            mine = (session.ltk, session.ltk_ediv, session.ltk_rand) if own & ENC_KEY else None
            theirs = ((session.peer_ltk, session.peer_ediv or 0, session.peer_rand or bytes(8))
                      if session.peer_ltk else None)
            # The key for a later link with this pairing's roles is the one the PERIPHERAL distributed.
            same_roles, reversed_roles = (theirs, mine) if initiator else (mine, theirs)
            record["stk"] = be_hex(session.stk) if session.stk else None
        record["ltk"] = be_hex(same_roles[0]) if same_roles else None
        record["ediv"] = int(same_roles[1]) if same_roles else 0
        record["rand"] = rand_number(same_roles[2]) if same_roles else 0
        if not sc:
            record["centralLtk"] = be_hex(reversed_roles[0]) if reversed_roles else None
            record["centralEdiv"] = int(reversed_roles[1]) if reversed_roles else None
            record["centralRand"] = rand_number(reversed_roles[2]) if reversed_roles else None
        if session.peer_identity_resolving_key is not None:
            record["peerIrk"] = be_hex(session.peer_identity_resolving_key)
        record.update({"peerAddress": address_text(peer_address), "peerAddressType": address_type(peer_address),
                       "peerConnectionAddress": address_text(connected_from),
                       "keysSent": own, "keysReceived": peer})
        if method == smp.PairingMethod.PASSKEY and session.passkey is not None:
            record["passkey"] = int(session.passkey)
        if session.bonding:
            as_central, as_peripheral = (same_roles, reversed_roles) if initiator else (reversed_roles, same_roles)
            bond = Bond(peer_address, connected_from, session.peer_identity_resolving_key, as_central,
                        as_peripheral, authenticated, key_size, sc)
            self.bonds = [b for b in self.bonds if bytes(b.identity) != bytes(peer_address)] + [bond]
        self.emit("pairing", **record)

    # MARK: keys

    def bond_for(self, connection):
        addresses = (connection.peer_address, connection.peer_resolvable_address)
        return next((b for b in reversed(self.bonds) if b.matches(*addresses)), None)

    async def long_term_key(self, connection_handle, rand, ediv):
        """The host's answer to LE Long Term Key Request: the pairing's key while it runs, else
        this side's key of a bond with the peer (None: a negative reply)."""
        connection = self.device.lookup_connection(connection_handle)
        if connection is None:
            return None
        link = self.link(connection)
        link.secured = True
        answer, key = "none", None
        session = self.session(connection)
        key = session.get_long_term_key(rand, ediv) if session is not None else None
        if key is not None:
            answer = "pairing"
            link.pending = self.session_info(connection)
        else:
            for bond in reversed(self.bonds):
                k = bond.as_peripheral
                if k is None or k[1] != ediv or bytes(k[2]) != bytes(rand):
                    continue
                if ediv == 0 and rand_number(rand) == 0 and not bond.matches(
                        connection.peer_address, connection.peer_resolvable_address):
                    continue  # LE Secure Connections keys are found by the peer, not by EDIV/Rand
                key, answer = k[0], "bond"
                link.pending = (bond.authenticated, bond.key_size, "bond")
                break
        self.emit("ltk-request", ediv=int(ediv), rand=rand_number(rand), answer=answer)
        return key

    async def encrypt_with_bond(self, connection, timeout):
        """As central: LE Enable Encryption with the bond's key, without pairing. True once the
        link is encrypted; False (logged) when there is no bond, the peer refused or the link dropped."""
        bond = self.bond_for(connection)
        if bond is None or bond.as_central is None:
            self.emit("encryption-failed", status=None, message="no bond with this peer")
            return False
        ltk, ediv, rand = bond.as_central
        link = self.link(connection)
        link.secured = True
        link.pending = (bond.authenticated, bond.key_size, "bond")
        done = asyncio.get_running_loop().create_future()

        def settle(result):
            if not done.done():
                done.set_result(result)

        def dropped(reason):
            if not done.done():
                self.emit("encryption-failed", status=None, reason=int(reason),
                          message=f"the link dropped, reason 0x{int(reason):02X}"
                                  + (" (MIC failure: the two keys differ)" if int(reason) == 0x3D else ""))
            settle(False)

        handlers = [("connection_encryption_change", lambda: settle(bool(connection.is_encrypted))),
                    ("connection_encryption_failure", lambda status: settle(False)),
                    ("disconnection", dropped)]
        for name, handler in handlers:
            connection.on(name, handler)
        try:
            await self.device.send_async_command(hci.HCI_LE_Enable_Encryption_Command(
                connection_handle=connection.handle, random_number=bytes(rand), encrypted_diversifier=ediv,
                long_term_key=ltk))
            return await asyncio.wait_for(done, timeout)
        except asyncio.TimeoutError:
            self.emit("encryption-failed", status=None, message=f"no Encryption Change within {timeout} s")
            return False
        except hci.HCI_Error as error:
            self.emit("encryption-failed", status=int(error.error_code), message=str(error))
            return False
        finally:
            for name, handler in handlers:
                connection.remove_listener(name, handler)


def add_options(group, prefix, who):
    """`--PREFIX-io`, `--PREFIX-legacy`, `--PREFIX-mitm`, `--PREFIX-no-bonding`, `--PREFIX-passkey`,
    `--PREFIX-reject-comparison` in an argparse group."""
    group.add_argument(f"--{prefix}-io", choices=list(IO_CAPABILITIES), default="none",
                       help=f"{who}: SMP IO capability (none = NoInputNoOutput: Just Works whatever the peer has)")
    group.add_argument(f"--{prefix}-legacy", action="store_true",
                       help=f"{who}: LE legacy pairing only (no LE Secure Connections bit)")
    group.add_argument(f"--{prefix}-mitm", action="store_true",
                       help=f"{who}: set the MITM bit (a method with the IO capabilities that protects against MITM)")
    group.add_argument(f"--{prefix}-no-bonding", action="store_true",
                       help=f"{who}: no bonding: no keys distributed, no bond kept")
    group.add_argument(f"--{prefix}-passkey", type=int, metavar="N",
                       help=f"{who}: the passkey (0-999999) it displays, or enters when it must type one "
                            "(without it: a random one displayed; when it must type, it waits for the test to "
                            "type one on stdin, then fails with Passkey Entry Failed)")
    group.add_argument(f"--{prefix}-reject-comparison", action="store_true",
                       help=f"{who}: answer a numeric comparison no (Pairing Failed 0x0C)")
    group.add_argument(f"--{prefix}-fault", choices=list(FAULTS + ATTACKS),
                       help=f"{who}: pair wrongly: confirm (its Pairing Confirm values corrupted: the peer fails "
                            "with 0x04), dhkey-check (its DHKey Check corrupted: 0x0B), silent (no SMP command after "
                            "the Pairing Request/Response: the peer's 30 s SMP timeout); or an attack on the peer's Security Manager "
                            "(ATTACKS in bumble_fixture/pairing.py: reflect-public-key, reflect-confirm, key-size-17, "
                            "key-size-7, encrypt-early, skip-dhkey-check, bad-identity-address)")


def options_from(args, prefix):
    p = prefix.replace("-", "_")
    return Options(io=getattr(args, f"{p}_io"), legacy=getattr(args, f"{p}_legacy"),
                   mitm=getattr(args, f"{p}_mitm"), bonding=not getattr(args, f"{p}_no_bonding"),
                   passkey=getattr(args, f"{p}_passkey"),
                   reject_comparison=getattr(args, f"{p}_reject_comparison"),
                   fault=getattr(args, f"{p}_fault", None))
