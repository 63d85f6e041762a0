"""What the fixture's self-checks share (check_*_peer.py): the failure a case raises and the
runner that prints one line per case ("ok   NAME: what was seen (time)" or "FAIL NAME: why"),
which TestPeerSelfCheckTests reads."""

import asyncio
import time


class Failed(Exception):
    """A case saw something other than what the fixture documents."""


async def run_cases(cases, selected, timeout):
    """Runs each (name, coroutine function) of `cases` whose name contains `selected` (all
    when None), each bounded by `timeout` seconds; prints a line per case and a total; returns
    the exit status (1 if any failed)."""
    failures = passed = 0
    began = time.monotonic()
    for name, case in cases:
        if selected and selected.lower() not in name.lower():
            continue
        started = time.monotonic()
        try:
            what = await asyncio.wait_for(case(), timeout)
            passed += 1
            print(f"ok   {name}: {what} ({time.monotonic() - started:.1f} s)", flush=True)
        except Failed as error:
            failures += 1
            print(f"FAIL {name}: {error}", flush=True)
        except asyncio.TimeoutError:
            failures += 1
            print(f"FAIL {name}: did not finish within {timeout} s", flush=True)
        except Exception as error:
            failures += 1
            print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
    print(f"{passed} passed, {failures} failed in {time.monotonic() - began:.1f} s", flush=True)
    return 1 if failures else 0


async def stop_process(process):
    """Stops a peer started with asyncio's subprocess: SIGTERM, then SIGKILL after 5 s."""
    if process is None or process.returncode is not None:
        return
    try:
        process.terminate()
    except ProcessLookupError:
        return
    try:
        await asyncio.wait_for(process.wait(), 5)
    except asyncio.TimeoutError:
        process.kill()
        await asyncio.wait_for(process.wait(), 5)


def command_line(description, verbose_help="Bumble's warnings on stderr"):
    """The check's arguments: -k SUBSTRING (only those cases) and -v (Bumble's warnings)."""
    import argparse
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-k", metavar="SUBSTRING", help="only the cases whose name contains SUBSTRING")
    parser.add_argument("-v", action="store_true", help=verbose_help)
    return parser


def run_main(arguments, main):
    """Runs `main(selected)` with Bumble's logging at the level -v asks for, and exits with its status."""
    import logging
    import sys
    logging.basicConfig(level=logging.WARNING if arguments.v else logging.CRITICAL)
    sys.exit(asyncio.run(main(arguments.k)))
