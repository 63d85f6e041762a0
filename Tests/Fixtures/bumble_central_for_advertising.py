"""A Bumble central for rawble's advertising test (Tests/RawbleHostTests/AdapterAdvertisingBumbleTests).

Serves ONE Bumble virtual controller over H4 on TCP 127.0.0.1 (a free port) for rawble, on a
LocalLink with a Bumble Device as central.  Prints a JSON line {"ready": true, "port": N}, then
ROUNDS times: scans until an advertisement carries the complete local name NAME, connects to
it, exchanges the ATT MTU (asking 100), disconnects; one JSON line per step on stdout
({"found": ...}, {"connected": ...}, {"mtu": ...}, {"disconnected": ...}).  A step that takes
longer than 20 s ends the script with {"error": ...}.  With `--extended`, the controller rawble
drives lists the extended advertising commands (Bumble's implements them and has the feature, but
does not list them), so rawble advertises with them.
Usage: bumble_central_for_advertising.py NAME ROUNDS [--extended]
"""
import asyncio
import json
import socket
import sys

from bumble import hci
from bumble.controller import Controller
from bumble.device import Device, Peer
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport.common import AsyncPipeSink
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket


def say(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


EXTENDED_ADVERTISING_COMMANDS = set(range(0x2035, 0x203E))


async def run(name, rounds, extended):
    link = LocalLink()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    transport = await open_tcp_server_transport_with_socket(sock)
    rawble = Controller("rawble", host_source=transport.source, host_sink=transport.sink, link=link)
    if extended:
        rawble.supported_commands = set(rawble.supported_commands) | EXTENDED_ADVERTISING_COMMANDS
    controller = Controller("central", link=link)
    device = Device(name="central", address=hci.Address("F0:F1:F2:F3:F4:F5"),
                    host=Host(controller, AsyncPipeSink(controller)))
    await device.power_on()
    say(ready=True, port=sock.getsockname()[1])
    for round_index in range(rounds):
        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement):
            advertised = advertisement.data.get(0x09)
            if advertised is not None and str(advertised) == name and not found.done():
                found.set_result(advertisement)

        device.on("advertisement", on_advertisement)
        await device.start_scanning(active=True)
        advertisement = await asyncio.wait_for(found, 20)
        device.remove_listener("advertisement", on_advertisement)
        await device.stop_scanning()
        say(found=str(advertisement.address), connectable=bool(advertisement.is_connectable),
            scanResponse=advertisement.data.get(0x0A))
        connection = await asyncio.wait_for(device.connect(advertisement.address), 20)
        say(connected=connection.handle)
        mtu = await asyncio.wait_for(Peer(connection).request_mtu(100), 20)
        say(mtu=mtu)
        await asyncio.wait_for(connection.disconnect(), 20)
        say(disconnected=round_index)


def main():
    name, rounds = sys.argv[1], int(sys.argv[2])
    try:
        asyncio.run(run(name, rounds, "--extended" in sys.argv[3:]))
    except Exception as error:  # one line for the test to show
        say(error=f"{type(error).__name__}: {error}")
        sys.exit(1)


if __name__ == "__main__":
    main()
