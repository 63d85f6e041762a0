"""Scripts/vm-test's self-test, run in the guest: the kernel's adapter works end to end.

    python3 selftest.py [hciN] [ADDRESS] [--connect]   (defaults: hci0, C0:B1:E0:00:00:01, the strap)

Raises the adapter (HCIDEVUP; EALREADY is success), opens a raw HCI socket bound to it with a
filter for HCI events, sets a passive LE scan with legacy HCI commands, and prints the first
LE (Extended) Advertising Report from ADDRESS; then disables the scan. With --connect it then
connects to ADDRESS (LE random) through the kernel's L2CAP ATT socket (non-blocking connect, own
10 s timeout), exchanges the ATT MTU and reads the primary services. Exit 0 when seen, 1 when
not within 10 s or on any error (one line on stderr). Plain Python on purpose: numeric
AF_BLUETOOTH (31) sockets and ctypes for bind(), so any Python 3 works, even one built without
Bluetooth support.
"""

import ctypes
import errno
import fcntl
import os
import select
import socket
import struct
import sys
import time

AF_BLUETOOTH, BTPROTO_HCI, SOL_HCI, HCI_FILTER = 31, 1, 0, 2
HCIDEVUP = 0x400448C9
HCI_CHANNEL_RAW = 0
EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META = 0x0E, 0x0F, 0x3E
LE_SET_SCAN_PARAMETERS, LE_SET_SCAN_ENABLE = 0x200B, 0x200C


def fail(message):
    sys.stderr.write(f"selftest: {message}\n")
    sys.exit(1)


def hci_socket(index):
    sock = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
    address = struct.pack("<HHH", AF_BLUETOOTH, index, HCI_CHANNEL_RAW)  # struct sockaddr_hci
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.bind(sock.fileno(), address, len(address)) != 0:
        e = ctypes.get_errno()
        fail(f"bind hci{index}: {os.strerror(e)}")
    # struct hci_filter: packet type mask, event mask (2 x u32), opcode; events only, all of them.
    sock.setsockopt(SOL_HCI, HCI_FILTER, struct.pack("<IIIH2x", 1 << 4, 0xFFFFFFFF, 0xFFFFFFFF, 0))
    return sock


def events(sock, deadline):
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        ready, _, _ = select.select([sock], [], [], left)
        if ready:
            packet = sock.recv(1024)
            if len(packet) >= 3 and packet[0] == 0x04:
                yield packet[1], packet[3:3 + packet[2]]


def command(sock, opcode, params):
    sock.send(struct.pack("<BHB", 0x01, opcode, len(params)) + params)
    for code, body in events(sock, time.monotonic() + 5):
        if code == EVT_CMD_COMPLETE and len(body) >= 4 and struct.unpack_from("<H", body, 1)[0] == opcode:
            if body[3] != 0:
                fail(f"command 0x{opcode:04x} failed with status 0x{body[3]:02x}")
            return
        if code == EVT_CMD_STATUS and len(body) >= 4 and struct.unpack_from("<H", body, 2)[0] == opcode:
            fail(f"command 0x{opcode:04x} answered with Command Status 0x{body[0]:02x}")
    fail(f"no Command Complete for 0x{opcode:04x} within 5 s")


def reports(body):
    """(address, event type, data) of each report in an LE Advertising / Extended Report."""
    if not body:
        return
    sub, rest = body[0], body[1:]
    if sub == 0x02 and rest:
        count, at = rest[0], 1
        for _ in range(count):
            if at + 9 > len(rest):
                return
            etype, atype, addr, dlen = rest[at], rest[at + 1], rest[at + 2:at + 8], rest[at + 8]
            yield addr, f"legacy type {etype}", rest[at + 9:at + 9 + dlen]
            at += 9 + dlen + 1
    elif sub == 0x0D and rest:
        count, at = rest[0], 1
        for _ in range(count):
            if at + 24 > len(rest):
                return
            etype = struct.unpack_from("<H", rest, at)[0]
            addr, dlen = rest[at + 3:at + 9], rest[at + 23]
            yield addr, f"extended type 0x{etype:04x}", rest[at + 24:at + 24 + dlen]
            at += 24 + dlen


def sockaddr_l2(address, address_type):
    """struct sockaddr_l2 (14 bytes): family, psm, bdaddr (reversed), cid 4 (ATT), address type."""
    return struct.pack("<HH6sHBx", AF_BLUETOOTH, 0, bytes(int(x, 16) for x in reversed(address.split(":"))),
                       4, address_type)


def att_connect(address):
    libc = ctypes.CDLL(None, use_errno=True)
    sock = socket.socket(AF_BLUETOOTH, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC, 0)  # BTPROTO_L2CAP
    local = sockaddr_l2("00:00:00:00:00:00", 1)  # any adapter, LE public
    if libc.bind(sock.fileno(), local, len(local)) != 0:
        fail(f"bind L2CAP: {os.strerror(ctypes.get_errno())}")
    sock.setblocking(False)  # a blocking connect to an absent peer returns EINPROGRESS after ~40 s
    started = time.monotonic()
    peer = sockaddr_l2(address, 2)  # LE random
    if libc.connect(sock.fileno(), peer, len(peer)) != 0 and ctypes.get_errno() != errno.EINPROGRESS:
        fail(f"connect {address}: {os.strerror(ctypes.get_errno())}")
    _, writable, _ = select.select([], [sock], [], 10)
    if not writable:
        fail(f"connect {address}: no connection within 10 s")
    error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if error:
        fail(f"connect {address}: {os.strerror(error)}")
    print(f"connected to {address} over L2CAP ATT ({time.monotonic() - started:.2f} s)")

    def request(pdu):
        sock.send(pdu)
        ready, _, _ = select.select([sock], [], [], 5)
        if not ready:
            fail(f"no ATT response to {pdu.hex()} within 5 s")
        return sock.recv(1024)

    mtu = request(bytes([0x02]) + struct.pack("<H", 517))
    if len(mtu) != 3 or mtu[0] != 0x03:
        fail(f"unexpected answer to Exchange MTU: {mtu.hex()}")
    services = request(bytes([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]))  # Read By Group Type
    if len(services) < 2 or services[0] != 0x11:
        fail(f"unexpected answer to Read By Group Type: {services.hex()}")
    print(f"ATT MTU {struct.unpack_from('<H', mtu, 1)[0]}; primary services: {services[2:].hex()}")
    sock.close()


def main():
    args = [a for a in sys.argv[1:] if a != "--connect"]
    connect = len(args) != len(sys.argv) - 1
    name = args[0] if args else "hci0"
    wanted = (args[1] if len(args) > 1 else "C0:B1:E0:00:00:01").upper()
    if not name.startswith("hci") or not name[3:].isdigit():
        fail(f"not an adapter name: {name}")
    index = int(name[3:])
    started = time.monotonic()
    try:
        control = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
    except OSError as e:
        fail(f"no Bluetooth in this kernel: {e}")
    try:
        fcntl.ioctl(control.fileno(), HCIDEVUP, index)
    except OSError as e:
        if e.errno != errno.EALREADY:
            fail(f"HCIDEVUP {name}: {e.strerror} (errno {e.errno})")
    print(f"{name} is up ({time.monotonic() - started:.2f} s)")
    sock = hci_socket(index)
    command(sock, LE_SET_SCAN_PARAMETERS, struct.pack("<BHHBB", 0, 0x0010, 0x0010, 0, 0))
    command(sock, LE_SET_SCAN_ENABLE, bytes([1, 0]))
    found = None
    for code, body in events(sock, time.monotonic() + 10):
        if code != EVT_LE_META:
            continue
        for addr, kind, data in reports(body):
            text = ":".join(f"{b:02X}" for b in reversed(addr))
            if text == wanted:
                found = (text, kind, data)
                break
        if found:
            break
    command(sock, LE_SET_SCAN_ENABLE, bytes([0, 0]))
    if not found:
        fail(f"no advertising report from {wanted} within 10 s")
    text, kind, data = found
    print(f"LE Advertising Report from {text} ({kind}): {data.hex()} "
          f"({time.monotonic() - started:.2f} s after start)")
    if connect:
        att_connect(text)


if __name__ == "__main__":
    main()
