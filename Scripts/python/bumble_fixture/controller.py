"""The served controllers: Bumble's virtual `Controller` as an outside host sees it over H4.

ScannerLink (the LocalLink every device is on), ScannerController (what a host drives: real
advertising reports and scan responses, Reset, LE Create Connection Cancel and the enhanced
connection event as the specification has them), ReportedLegacyAdvertiser, the
`--extended-controller` / `--legacy-controller` variants, and serve_controller (TCP or unix H4,
with an optional btsnoop trace of the host's traffic: `--snoop`, BUMBLE_SNOOPER).
"""

import asyncio
import contextlib
import logging
import os
import socket

from bumble import hci, ll
from bumble.controller import Controller, LegacyAdvertiser
from bumble.core import PhysicalTransport
from bumble.link import LocalLink
from bumble.snoop import BtSnooper, Snooper, create_snooper
from bumble.transport.common import SnoopingTransport
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket
from bumble.transport.unix import open_unix_server_transport

log = logging.getLogger("bumble-peer")


class ScannerLink(LocalLink):
    """LocalLink delivering advertisements only to scanning controllers (not O(n^2))."""

    def __init__(self):
        super().__init__()
        self.scanners = []
        self._sets = {}  # advertiser address -> AdvertisingSet (lazily indexed)

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        """LE ACL data comes from the sender's own address on that connection.  Stock Bumble uses
        the sender's random address, so a central that connected from its public address (the
        Linux kernel does) had all its data dropped by the peripheral ("no connection")."""
        if transport == PhysicalTransport.LE:
            connection = sender_controller.le_connections.get(destination_address)
            if connection is not None:
                destination = self.find_le_controller(destination_address)
                if destination is not None:
                    source = connection.self_address
                    asyncio.get_running_loop().call_soon(
                        lambda: destination.on_link_acl_data(source, transport, data))
                return
        super().send_acl_data(sender_controller, destination_address, transport, data)

    def send_advertising_pdu(self, sender_controller, packet):
        if isinstance(packet, (ll.AdvInd, ll.AdvExtInd)):
            loop = asyncio.get_running_loop()
            for c in self.scanners:
                if c is not sender_controller:
                    loop.call_soon(c.on_ll_advertising_pdu, packet)
        else:
            super().send_advertising_pdu(sender_controller, packet)

    def advertising_set_of(self, address):
        """The enabled advertiser (an extended advertising set, or a served controller's legacy
        advertiser) whose PDUs come from `address`: its `parameters` and `scan_response_data`."""
        found = self._sets.get(address)
        if found is not None and found.enabled:
            return found
        self._sets = {}
        for c in self.controllers:
            for s in c.advertising_sets.values():
                if s.enabled and s.parameters is not None and s.address is not None:
                    self._sets[s.address] = s
            legacy = c.le_legacy_advertiser
            if isinstance(legacy, ReportedLegacyAdvertiser) and legacy.enabled:
                self._sets[legacy.address] = legacy
        return self._sets.get(address)


# What `--extended-controller` adds to the served controller's Supported Commands: the LE
# extended advertising commands (Set Advertising Set Random Address 0x2035 to Clear Advertising
# Sets 0x203D, with Read Maximum Advertising Data Length 0x203A and Read Number of Supported
# Advertising Sets 0x203B) and the extended scanning and connection ones (0x2041-0x2043).
EXTENDED_CONTROLLER_COMMANDS = frozenset(range(0x2035, 0x203E)) | {0x2041, 0x2042, 0x2043}

# Legacy advertising type (LE Set Advertising Parameters) -> the extended event properties a
# scanner reports for it (bit 0 connectable, 1 scannable, 2 directed, 3 high duty, 4 legacy).
LEGACY_EVENT_PROPERTIES = {0: 0x13, 1: 0x1D, 2: 0x12, 3: 0x10, 4: 0x15}


class ReportedLegacyAdvertiser(LegacyAdvertiser):
    """A served controller's legacy advertiser: it sends a PDU on the link for every advertising
    type (stock Bumble sends only ADV_IND, so a host advertising non-connectable or scannable
    with the legacy commands was never seen), and ScannerController reports what it really is
    (`parameters.advertising_event_properties`, its scan response data)."""

    class Parameters:
        def __init__(self, advertiser):
            self.advertiser = advertiser

        @property
        def advertising_event_properties(self):
            return LEGACY_EVENT_PROPERTIES.get(self.advertiser.advertising_type, 0x10)

    @property
    def parameters(self):
        return ReportedLegacyAdvertiser.Parameters(self)

    def send_advertising_data(self):
        if self.enabled:
            self.controller.send_advertising_pdu(ll.AdvInd(advertiser_address=self.address,
                                                           data=self.advertising_data))


# `--max-links K[:STATUS]`: the statuses a controller out of room for a link answers with.
LINK_LIMIT_STATUSES = {
    0x07: "Memory Capacity Exceeded",
    0x09: "Connection Limit Exceeded",
    0x0D: "Connection Rejected due to Limited Resources",
}


def parse_max_links(text):
    """`K[:STATUS][,K[:STATUS]...]` -> [(K, STATUS), ...], one per served controller in port
    order (the last applies to the controllers after it): K links at most (1-64), STATUS (hex,
    default 0x0D) one of LINK_LIMIT_STATUSES; ValueError saying what is wrong."""
    return [parse_link_limit(part) for part in text.split(",")]


def parse_link_limit(text):
    """`K[:STATUS]` -> (K, STATUS), see parse_max_links."""
    count, _, status = text.partition(":")
    try:
        limit = int(count)
    except ValueError:
        raise ValueError("expected K or K:STATUS, e.g. 4 or 4:0x0D") from None
    if not 1 <= limit <= 64:
        raise ValueError("K must be between 1 and 64")
    try:
        code = int(status, 16) if status else 0x0D
    except ValueError:
        raise ValueError(f"STATUS {status} is not hex (e.g. 0x0D)") from None
    if code not in LINK_LIMIT_STATUSES:
        raise ValueError("STATUS must be one of " + ", ".join(
            f"0x{c:02X} ({name})" for c, name in sorted(LINK_LIMIT_STATUSES.items())))
    return limit, code


class ScannerController(Controller):
    """Bumble's Controller, reporting each advertiser's real event type and scan response."""

    stock_reports = False
    extended_scan = False
    # `--max-links`: how many links (either role) it holds at most, and the Command Status that
    # refuses a Create Connection beyond them (None: Bumble's, no limit).
    max_links = None
    link_limit_status = 0x0D

    def link_limit_reached(self, command):
        """A real controller out of room for one more link (Marvell 88W8897 after two: Limited
        Resources) refuses the Create Connection with Command Status; no attempt starts."""
        if self.max_links is None or len(self.le_connections) < self.max_links:
            return False
        log.info("%s: refusing a link beyond %d with status 0x%02X", self.name, self.max_links,
                 self.link_limit_status)
        self._send_hci_command_status(self.link_limit_status, command.op_code)
        return True

    def on_hci_le_create_connection_command(self, command):
        if self.link_limit_reached(command):
            return None
        return super().on_hci_le_create_connection_command(command)

    def on_hci_le_extended_create_connection_command(self, command):
        if self.link_limit_reached(command):
            return None
        return super().on_hci_le_extended_create_connection_command(command)

    def __init__(self, *arguments, **keywords):
        super().__init__(*arguments, **keywords)
        self.le_legacy_advertiser = ReportedLegacyAdvertiser(self)

    def on_hci_le_set_scan_enable_command(self, command):
        self.extended_scan = False
        return super().on_hci_le_set_scan_enable_command(command)

    # LE event mask bit 9: LE Enhanced Connection Complete (subevent 0x0A).
    ENHANCED_CONNECTION_COMPLETE = 1 << 9

    def send_hci_packet(self, packet):
        """A connection's completion as the host asked for it: LE Enhanced Connection Complete
        (Core Vol 4 Part E 7.7.65.10) instead of LE Connection Complete when the host unmasked
        the enhanced event, as the specification says and real controllers do.  Stock Bumble
        0.0.236 always sent the legacy event; Linux 6.12, which unmasks and waits for the
        enhanced one, then held its command queue for its 20 s connection timeout after every
        connection (docs/kernel-findings.md, section 3)."""
        if (isinstance(packet, hci.HCI_LE_Connection_Complete_Event)
                and self.le_event_mask & self.ENHANCED_CONNECTION_COMPLETE):
            no_address = hci.Address(bytes(6), hci.Address.RANDOM_DEVICE_ADDRESS)
            packet = hci.HCI_LE_Enhanced_Connection_Complete_Event(
                status=packet.status, connection_handle=packet.connection_handle, role=packet.role,
                peer_address_type=packet.peer_address_type, peer_address=packet.peer_address,
                local_resolvable_private_address=no_address, peer_resolvable_private_address=no_address,
                connection_interval=packet.connection_interval, peripheral_latency=packet.peripheral_latency,
                supervision_timeout=packet.supervision_timeout,
                central_clock_accuracy=packet.central_clock_accuracy)
        return super().send_hci_packet(packet)

    def on_hci_reset_command(self, command):
        """Reset as a controller does it (Core Vol 4 Part E 7.3.2): advertising, scanning, a
        pending connection attempt and every connection end; each peer sees its link time out
        (reason 0x08), the host is told nothing.  Stock Bumble 0.0.236 kept them all, so a host
        that restarted on the same port stayed connected and its peer stopped advertising."""
        self.le_legacy_advertiser.stop()
        for advertising_set in self.advertising_sets.values():
            advertising_set.stop()
        self.advertising_sets.clear()
        self.le_scan_enable = False
        self.pending_le_connection = None
        for connection in list(self.le_connections.values()):
            connection.send_ll_control_pdu(ll.TerminateInd(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR))
        self.le_connections.clear()
        return super().on_hci_reset_command(command)

    def on_hci_le_create_connection_cancel_command(self, command):
        """LE Create Connection Cancel (Core Vol 4 Part E 7.8.13): the pending attempt ends with
        LE Connection Complete, status Unknown Connection Identifier (0x02), after the Command
        Complete; Command Disallowed without one.  Stock Bumble 0.0.236 answered success and
        kept the attempt, so the host's next LE Create Connection was disallowed."""
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        asyncio.get_running_loop().call_soon(self.send_hci_packet, hci.HCI_LE_Connection_Complete_Event(
            status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, connection_handle=0,
            role=hci.Role.CENTRAL, peer_address_type=pending.peer_address_type,
            peer_address=pending.peer_address, connection_interval=0, peripheral_latency=0,
            supervision_timeout=0, central_clock_accuracy=0))
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_le_set_extended_scan_parameters_command(self, command):
        if command.scan_types:
            self.le_scan_type = command.scan_types[0]
        return super().on_hci_le_set_extended_scan_parameters_command(command)

    def on_hci_le_set_extended_scan_enable_command(self, command):
        self.extended_scan = True
        return super().on_hci_le_set_extended_scan_enable_command(command)

    def on_advertising_pdu(self, pdu):
        adv_set = None
        if not self.stock_reports and isinstance(pdu, (ll.AdvExtInd, ll.AdvInd)):
            adv_set = self.link.advertising_set_of(pdu.advertiser_address)
        if adv_set is None or adv_set.parameters is None:
            return super().on_advertising_pdu(pdu)
        props = int(adv_set.parameters.advertising_event_properties)
        connectable, scannable, legacy = bool(props & 1), bool(props & 2), bool(props & 0x10)
        if self.le_scan_enable:
            self._report(pdu, props & 0x1F, bytes(pdu.data), False)
            if scannable and self.le_scan_type == 1:
                self._report(pdu, props & 0x1F, bytes(adv_set.scan_response_data), True)
        pending = self.pending_le_connection
        if connectable and pending and pending.peer_address == pdu.advertiser_address:
            self.create_le_connection(pdu.advertiser_address)

    def _report(self, pdu, props, data, scan_response):
        address = pdu.advertiser_address
        if self.extended_scan:
            event_type = props | (0x08 if scan_response else 0)
            report = hci.HCI_LE_Extended_Advertising_Report_Event.Report(
                event_type=event_type,
                address_type=address.address_type,
                address=address,
                primary_phy=hci.Phy.LE_1M,
                secondary_phy=0,
                advertising_sid=0xFF if props & 0x10 else pdu.sid,
                tx_power=0x7F,
                rssi=-50,
                periodic_advertising_interval=0,
                direct_address_type=0,
                direct_address=hci.Address.ANY,
                data=data,
            )
            self.send_hci_packet(hci.HCI_LE_Extended_Advertising_Report_Event([report]))
        else:
            T = hci.HCI_LE_Advertising_Report_Event.EventType
            if scan_response:
                event_type = T.SCAN_RSP
            elif props & 1:
                event_type = T.ADV_IND
            elif props & 2:
                event_type = T.ADV_SCAN_IND
            else:
                event_type = T.ADV_NONCONN_IND
            report = hci.HCI_LE_Advertising_Report_Event.Report(
                event_type=event_type,
                address_type=address.address_type,
                address=address,
                data=data,
                rssi=-50,
            )
            self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))


# The traces being written (`--snoop`, BUMBLE_SNOOPER): closed, so flushed, when the peer exits.
SNOOPS = contextlib.ExitStack()


class HostSideSnooper(Snooper):
    """Bumble's SnoopingTransport names directions as a host sees its own transport (what comes
    in is from the controller).  A served controller's transport has the host at its other end:
    what comes in is the host's (commands, ACL data out), so the directions are swapped, and the
    trace reads as one taken on the host's side (sent = host to controller)."""

    def __init__(self, snooper):
        self.snooper = snooper

    def snoop(self, hci_packet, direction):
        self.snooper.snoop(hci_packet, Snooper.Direction.HOST_TO_CONTROLLER
                           if direction == Snooper.Direction.CONTROLLER_TO_HOST
                           else Snooper.Direction.CONTROLLER_TO_HOST)


def snoop_path(path, index):
    """`--snoop PATH` for the index-th served controller: PATH, then PATH.2, PATH.3 ..."""
    return path if index == 0 else f"{path}.{index + 1}"


def snooped(transport, args, index):
    """`transport`, writing a btsnoop trace of its H4 traffic when asked: `--snoop PATH` (an
    unbuffered file: every record is on disk as soon as it is written), else BUMBLE_SNOOPER
    (Bumble's snooper spec, e.g. btsnoop:file:PATH, for every served controller: with --ports N
    put {instance} in PATH).  Stock Bumble applies BUMBLE_SNOOPER in open_transport only, so the
    TCP server, opened on a socket of ours, never had a trace."""
    if args.snoop:
        output = SNOOPS.enter_context(open(snoop_path(args.snoop, index), "wb", buffering=0))
        snooper = BtSnooper(output)
    elif os.environ.get("BUMBLE_SNOOPER"):
        snooper = SNOOPS.enter_context(create_snooper(os.environ["BUMBLE_SNOOPER"]))
    else:
        return transport
    return SnoopingTransport(transport, HostSideSnooper(snooper))


async def serve_controller(args, link, index, public_address):
    """The index-th controller served to an outside host (0 = `--port`/`--unix`; the others on
    free TCP ports, or `--unix` PATH.2, PATH.3 ...): (transport, its name, the controller)."""
    if args.unix:
        path = args.unix if index == 0 else f"{args.unix}.{index + 1}"
        if os.path.exists(path):
            os.unlink(path)
        transport = await open_unix_server_transport(path)
        transport_name = f"unix:{path}"
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit this.  asyncio's own TCP_NODELAY skips sockets made with
        # proto 0, and with Nagle on, a response written right after an event waits for the
        # host's delayed ACK: every ATT round trip took ~44 ms instead of ~2 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", args.port if index == 0 else 0))
        transport = await open_tcp_server_transport_with_socket(sock)
        transport_name = f"tcp:127.0.0.1:{sock.getsockname()[1]}"
    transport = snooped(transport, args, index)
    scanner = ScannerController("host" if index == 0 else f"host{index + 1}", host_source=transport.source,
                                host_sink=transport.sink, link=link, public_address=public_address)
    scanner.stock_reports = args.stock_reports
    if args.max_links is not None:
        # Its own limit: one adapter of a host that drives several can be full, the other not.
        scanner.max_links, scanner.link_limit_status = args.max_links[min(index, len(args.max_links) - 1)]
    if args.extended_controller:
        # Bumble's controller implements the extended advertising, scanning and connection
        # commands but does not list them: listed, the kernel and rawble use them as with a
        # Bluetooth 5 adapter.
        scanner.supported_commands = set(scanner.supported_commands) | EXTENDED_CONTROLLER_COMMANDS
    if args.legacy_controller:
        # A Bluetooth 4.2 controller: no LE Extended Advertising feature, and none of the
        # extended advertising, scanning or connection commands (0x2036-0x2043) in its table.
        scanner.le_features = scanner.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        scanner.supported_commands = {op for op in scanner.supported_commands if not 0x2036 <= op <= 0x2043}
    link.scanners.append(scanner)
    return transport, transport_name, scanner


def controller_addresses(args):
    """The public address of each served controller: `--controller-address` in order, then the
    defaults (one port: Bumble's 00:00:00:00:00:00; several: 52:41:57:42:4C:0k, distinct, so a
    host advertising or connecting from its public address is found on the link)."""
    given = args.controller_address or []
    if args.ports == 1:
        return [given[0] if given else None]
    return [given[k] if k < len(given) else "52:41:57:42:4C:%02X" % (k + 1) for k in range(args.ports)]
