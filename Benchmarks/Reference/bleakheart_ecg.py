"""bleakheart_ecg: raw ECG from a Polar H10 the way bleakheart's own example does it
(examples/ecg_queue.py in fsmeraldi/bleakheart: BleakScanner, then `async with BleakClient`,
PolarMeasurementData with an ecg_queue, available_settings('ECG'), start_streaming('ECG'), a
consumer task taking the frames off the queue, stop_streaming('ECG') before leaving the client),
on bleak over BlueZ's bluetoothd (D-Bus). The reference of Scripts/benchmark-ecg-vm (issue 26):
rawble ecg beside it in the same VM boot.

  python bleakheart_ecg.py ADDRESS [--count N] [--duration S] [--scan-timeout S]

Run with the interpreter of a venv holding bleak and bleakheart (Scripts/benchmark-ecg-vm makes
.build/venv-bleak with pinned versions). The device is found by ADDRESS
(BleakScanner.find_device_by_address: a discovery through bluetoothd until its advertisement).

stdout, one JSON line each, flushed at once; "t" is CLOCK_MONOTONIC in seconds (time.monotonic,
the same clock as the guest's timer):
  {"event": "found", "t", "address"}              the scan saw the device
  {"event": "connected", "t", "mtu"}              BleakClient connected (bleak returns once
                                                   bluetoothd has resolved the services)
  {"event": "settings", "t", "settings"}          available_settings('ECG') answered
  {"event": "started", "t", "status"}             start_streaming('ECG') answered (status 0: ok)
  {"event": "ecg", "t", "deviceTime", "uV": [..]} one per ECG frame, as the consumer takes it
                                                   off bleakheart's queue (deviceTime: bleakheart's
                                                   timestamp, ns, its epoch-normalized last sample)
  {"event": "stopped", "t", "status", "samples"}  stop_streaming('ECG') answered
  {"event": "error", "t", "error"}                 then exit status 1
It stops after --count samples, --duration seconds from the first frame, or SIGINT/SIGTERM
(whichever first), stops ECG on the strap, then leaves the client (disconnects).
"""

import argparse
import asyncio
import json
import signal
import sys
import time

from bleak import BleakClient, BleakScanner
from bleakheart import PolarMeasurementData


def emit(event, **fields):
    sys.stdout.write(json.dumps({"event": event, "t": time.monotonic(), **fields}) + "\n")
    sys.stdout.flush()


async def main(args):
    quit = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, quit.set)
    device = await BleakScanner.find_device_by_address(args.address, timeout=args.scan_timeout)
    if device is None:
        emit("error", error=f"{args.address} not found within {args.scan_timeout:g} s")
        return 1
    emit("found", address=device.address)
    queue = asyncio.Queue()
    samples = 0

    async def consumer():
        nonlocal samples
        first = None
        while True:
            frame = await queue.get()
            if frame[0] == "QUIT":
                return
            kind, stamp, payload = frame
            if kind != "ECG":
                continue
            emit("ecg", deviceTime=stamp, uV=payload)
            samples += len(payload)
            if first is None:
                first = time.monotonic()
                if args.duration:
                    loop.call_later(args.duration, quit.set)
            if args.count and samples >= args.count:
                quit.set()

    async with BleakClient(device, disconnected_callback=lambda client: quit.set()) as client:
        emit("connected", mtu=client.mtu_size)
        task = asyncio.create_task(consumer())
        pmd = PolarMeasurementData(client, ecg_queue=queue)
        settings = await pmd.available_settings("ECG")
        emit("settings", settings={k: v for k, v in settings.items()})
        err_code, err_msg, _ = await pmd.start_streaming("ECG")
        emit("started", status=err_code, message=err_msg)
        if err_code != 0:
            emit("error", error=f"start_streaming: {err_msg}")
            return 1
        await quit.wait()
        status = None
        if client.is_connected:
            status, _ = await pmd.stop_streaming("ECG")
        queue.put_nowait(("QUIT", None, None))
        await task
        emit("stopped", status=status, samples=samples)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("address")
    parser.add_argument("--count", type=int, default=0, help="stop after N ECG samples (0: no limit)")
    parser.add_argument("--duration", type=float, default=0, help="stop S s after the first frame (0: no limit)")
    parser.add_argument("--scan-timeout", type=float, default=30.0)
    try:
        sys.exit(asyncio.run(main(parser.parse_args())))
    except Exception as e:  # one line, as the other reference scripts fail
        emit("error", error=f"{type(e).__name__}: {e}")
        sys.exit(1)
