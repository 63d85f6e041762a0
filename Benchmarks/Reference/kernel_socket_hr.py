"""kernel_socket_hr: the plain-socket reference of Scripts/benchmark-kernel (issue 11): what a
person writes today with Python's `socket` module and nothing else, on the Linux kernel's
Bluetooth sockets, doing what `rawble scan` and `rawble hr` do on the default transport hciN.

  python3 kernel_socket_hr.py scan [--adapter hciN] [--address ADDR] [--timeout S]
  python3 kernel_socket_hr.py hr   [--adapter hciN] [--address ADDR] [--timeout S]

scan: raises the adapter (HCIDEVUP; EALREADY is success), opens a raw HCI socket bound to it
      with a filter for HCI events, sets a passive LE scan (LE Set Scan Parameters, LE Set Scan
      Enable with legacy commands), and at the first LE Advertising Report from ADDRESS (default
      the strap, C0:B1:E0:00:00:01) prints {"event": "report", "address", "rssi", "data"}, then
      disables the scan and exits 0.
hr:   the same scan until ADDRESS; then an L2CAP SOCK_SEQPACKET socket on the ATT channel (cid 4)
      with the LE random address type, a non-blocking connect (the kernel scans and connects;
      own timeout), ATT: Read By Group Type 0x2800 -> the Heart Rate service's range, Read By
      Type 0x2803 in it -> the 2A37 value handle, Find Information after it -> its CCCD (0x2902),
      a Write Request of 01 00 to the CCCD, and at the first Handle Value Notification of the
      measurement prints {"event": "measurement", "address", "bpm", "raw"} and exits 0.

Errors: {"error": why} on stdout, exit 1. Standard library only: numeric AF_BLUETOOTH (31)
sockets and ctypes for bind()/connect() (Python's socket module builds sockaddr_l2 without the
LE address type and sockaddr_hci without the channel), so any Python 3 on Linux runs it.
"""

import argparse
import ctypes
import errno
import fcntl
import json
import os
import select
import socket
import struct
import sys
import time

AF_BLUETOOTH, BTPROTO_L2CAP, BTPROTO_HCI = 31, 0, 1
SOL_HCI, HCI_FILTER, HCI_CHANNEL_RAW = 0, 2, 0
HCIDEVUP = 0x400448C9
EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META = 0x0E, 0x0F, 0x3E
LE_SET_SCAN_PARAMETERS, LE_SET_SCAN_ENABLE = 0x200B, 0x200C
ATT_CID, LE_PUBLIC, LE_RANDOM = 4, 1, 2
HEART_RATE, MEASUREMENT, CCCD = 0x180D, 0x2A37, 0x2902

libc = ctypes.CDLL(None, use_errno=True)


class Failure(Exception):
    pass


PHASES = os.environ.get("KERNEL_BENCH_PHASES") == "1"


def phase(name):
    """With KERNEL_BENCH_PHASES=1 (Scripts/benchmark-kernel's breakdown run): a line on stderr."""
    if PHASES:
        sys.stderr.write(f"phase {name}\n")
        sys.stderr.flush()


def emit(fields):
    sys.stdout.write(json.dumps(fields, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def raise_adapter(index):
    control = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
    try:
        fcntl.ioctl(control.fileno(), HCIDEVUP, index)
    except OSError as e:
        if e.errno != errno.EALREADY:
            raise Failure(f"HCIDEVUP hci{index}: {e.strerror}")
    finally:
        control.close()


def hci_socket(index):
    sock = socket.socket(AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, BTPROTO_HCI)
    address = struct.pack("<HHH", AF_BLUETOOTH, index, HCI_CHANNEL_RAW)  # struct sockaddr_hci
    if libc.bind(sock.fileno(), address, len(address)) != 0:
        raise Failure(f"bind hci{index}: {os.strerror(ctypes.get_errno())}")
    # struct hci_filter: HCI events only; Command Complete, Command Status, LE Meta.
    events = (1 << EVT_CMD_COMPLETE) | (1 << EVT_CMD_STATUS)
    sock.setsockopt(SOL_HCI, HCI_FILTER, struct.pack("<IIIH2x", 1 << 4, events, 1 << (EVT_LE_META - 32), 0))
    return sock


def events(sock, deadline):
    """(event code, parameters) of each HCI event until `deadline` (monotonic s)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure("timed out")
        if select.select([sock], [], [], left)[0]:
            packet = sock.recv(260)
            if len(packet) >= 3 and packet[0] == 0x04:
                yield packet[1], packet[3:3 + packet[2]]


def command(sock, opcode, params, deadline):
    sock.send(struct.pack("<BHB", 0x01, opcode, len(params)) + params)
    for code, body in events(sock, deadline):
        if code == EVT_CMD_COMPLETE and len(body) >= 4 and struct.unpack_from("<H", body, 1)[0] == opcode:
            if body[3] != 0:
                raise Failure(f"command 0x{opcode:04x}: status 0x{body[3]:02x}")
            return
        if code == EVT_CMD_STATUS and len(body) >= 4 and struct.unpack_from("<H", body, 2)[0] == opcode:
            raise Failure(f"command 0x{opcode:04x}: Command Status 0x{body[0]:02x}")


def text(address):
    return ":".join(f"{b:02X}" for b in reversed(address))


def scan(index, wanted, deadline):
    """Passive legacy scan until the first LE Advertising Report from `wanted`: (rssi, data)."""
    raise_adapter(index)
    phase("adapter up")
    sock = hci_socket(index)
    command(sock, LE_SET_SCAN_PARAMETERS, struct.pack("<BHHBB", 0, 0x0010, 0x0010, 0, 0), deadline)
    command(sock, LE_SET_SCAN_ENABLE, bytes([1, 0]), deadline)
    phase("scan enabled")
    found = None
    try:
        for code, body in events(sock, deadline):
            if code != EVT_LE_META or len(body) < 2 or body[0] != 0x02:
                continue
            at = 2
            for _ in range(body[1]):  # reports: type, address type, address, length, data, rssi
                if at + 9 > len(body) or at + 10 + body[at + 8] > len(body):
                    break
                length = body[at + 8]
                if text(body[at + 2:at + 8]) == wanted:
                    rssi = body[at + 9 + length]
                    found = (rssi - 256 if rssi > 127 else rssi, body[at + 9:at + 9 + length])
                    break
                at += 10 + length
            if found:
                return found
    finally:
        try:
            command(sock, LE_SET_SCAN_ENABLE, bytes([0, 0]), time.monotonic() + 2)
        except Failure:
            pass
        sock.close()


def sockaddr_l2(address, address_type):
    """struct sockaddr_l2 (14 bytes): family, psm 0, bdaddr (reversed), cid 4 (ATT), address type."""
    raw = bytes(int(x, 16) for x in reversed(address.split(":")))
    return struct.pack("<HH6sHBx", AF_BLUETOOTH, 0, raw, ATT_CID, address_type)


class ATT:
    """A connected L2CAP ATT socket; requests one at a time; notifications kept aside."""

    def __init__(self, address, deadline):
        self.sock = socket.socket(AF_BLUETOOTH, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC, BTPROTO_L2CAP)
        local = sockaddr_l2("00:00:00:00:00:00", LE_PUBLIC)
        if libc.bind(self.sock.fileno(), local, len(local)) != 0:
            raise Failure(f"bind L2CAP: {os.strerror(ctypes.get_errno())}")
        self.sock.setblocking(False)  # a blocking connect to an absent peer returns after ~40 s
        peer = sockaddr_l2(address, LE_RANDOM)
        if libc.connect(self.sock.fileno(), peer, len(peer)) != 0 and ctypes.get_errno() != errno.EINPROGRESS:
            raise Failure(f"connect {address}: {os.strerror(ctypes.get_errno())}")
        if not select.select([], [self.sock], [], max(0, deadline - time.monotonic()))[1]:
            raise Failure(f"connect {address}: timed out")
        error = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            raise Failure(f"connect {address}: {os.strerror(error)}")
        self.deadline = deadline
        self.notifications = []

    def receive(self):
        if not select.select([self.sock], [], [], max(0, self.deadline - time.monotonic()))[0]:
            raise Failure("ATT: timed out")
        return self.sock.recv(517)

    def request(self, pdu, response):
        """Sends `pdu`; the response with opcode `response`, None for an Error Response."""
        self.sock.send(pdu)
        while True:
            answer = self.receive()
            if not answer:
                raise Failure("ATT: link closed")
            if answer[0] == 0x1B:
                self.notifications.append(answer)
            elif answer[0] == response:
                return answer
            elif answer[0] == 0x01 and len(answer) == 5 and answer[1] == pdu[0]:
                return None
            else:
                raise Failure(f"ATT: unexpected {answer.hex()} to {pdu.hex()}")

    def notification(self):
        while not self.notifications:
            answer = self.receive()
            if not answer:
                raise Failure("ATT: link closed")
            if answer[0] == 0x1B:
                self.notifications.append(answer)
        return self.notifications.pop(0)


def heart_rate(att):
    """(measurement value handle, its CCCD handle) by the three discovery requests."""
    start, service = 0x0001, None
    while service is None and start <= 0xFFFF:  # Read By Group Type, primary services
        answer = att.request(struct.pack("<BHHH", 0x10, start, 0xFFFF, 0x2800), 0x11)
        if answer is None or len(answer) < 2 or answer[1] < 6:
            break
        size, last = answer[1], start
        for at in range(2, len(answer) - size + 1, size):
            first, end = struct.unpack_from("<HH", answer, at)
            if size == 6 and struct.unpack_from("<H", answer, at + 4)[0] == HEART_RATE:
                service = (first, end)
            last = end
        start = last + 1
    if service is None:
        raise Failure("no Heart Rate service")
    start, value, after = service[0], None, service[1]
    while value is None and start <= service[1]:  # Read By Type, characteristic declarations
        answer = att.request(struct.pack("<BHHH", 0x08, start, service[1], 0x2803), 0x09)
        if answer is None or len(answer) < 2 or answer[1] < 7:
            break
        size = answer[1]
        for at in range(2, len(answer) - size + 1, size):
            declaration, _, handle = struct.unpack_from("<HBH", answer, at)
            if value is not None:
                after = declaration - 1  # the measurement's descriptors end before the next one
                break
            if size == 7 and struct.unpack_from("<H", answer, at + 5)[0] == MEASUREMENT:
                value = handle
            start = declaration + 1
    if value is None:
        raise Failure("no Heart Rate Measurement")
    answer = att.request(struct.pack("<BHH", 0x04, value + 1, after), 0x05)  # Find Information
    if answer is not None and len(answer) >= 2 and answer[1] == 1:
        for at in range(2, len(answer) - 3, 4):
            handle, uuid = struct.unpack_from("<HH", answer, at)
            if uuid == 0x2803:
                break  # the next characteristic: the measurement has no CCCD
            if uuid == CCCD:
                return value, handle
    raise Failure("no CCCD for the Heart Rate Measurement")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["scan", "hr"])
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--address", default="C0:B1:E0:00:00:01")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    phase("imported")
    deadline = time.monotonic() + args.timeout
    wanted = args.address.upper()
    try:
        if not args.adapter.startswith("hci") or not args.adapter[3:].isdigit():
            raise Failure(f"not an adapter name: {args.adapter}")
        rssi, data = scan(int(args.adapter[3:]), wanted, deadline)
        if args.mode == "scan":
            emit({"event": "report", "address": wanted, "rssi": rssi, "data": data.hex()})
            return 0
        phase("scan disabled")
        att = ATT(wanted, deadline)
        phase("connected")
        value, cccd = heart_rate(att)
        phase("discovered")
        if att.request(struct.pack("<BHH", 0x12, cccd, 0x0001), 0x13) is None:
            raise Failure("the CCCD write was refused")
        phase("subscribed")
        while True:
            pdu = att.notification()
            if len(pdu) >= 5 and struct.unpack_from("<H", pdu, 1)[0] == value:
                raw = pdu[3:]
                bpm = struct.unpack_from("<H", raw, 1)[0] if raw[0] & 1 and len(raw) >= 3 else raw[1]
                emit({"event": "measurement", "address": wanted, "bpm": bpm, "raw": raw.hex()})
                att.sock.close()
                return 0
    except (Failure, OSError) as e:
        emit({"error": str(e)})
        return 1


if __name__ == "__main__":
    sys.exit(main())
