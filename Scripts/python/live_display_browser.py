"""Opens rawble's live display (`rawble hr --serve`) in a real headless browser (Debian's
chromium) and reports what the page shows, for the tests (Tests/RawbleCLITests/LiveDisplayBrowserTests).

Input: one JSON line on stdin: {"url": "http://127.0.0.1:PORT/", "chromium": "/usr/bin/chromium",
"straps": N, "values": K, "seconds": S}. Chromium is driven over the Chrome DevTools Protocol
on a pipe (--remote-debugging-pipe: no port, nothing to poll for), with a user-data directory of
its own, in a process group of its own that is killed at the end. Before the page loads, a
MutationObserver is installed that notes every bpm the page shows: [Date.now(), strap id,
text]. The script waits (inside the page, bounded by S seconds) until N tiles have each shown K
values, then captures a PNG screenshot (at half scale) and decodes it (zlib, the PNG filters) to count the pixels
of each colour.

Then it reloads the page and notes its tiles once its first event (the snapshot) is shown.

Output: one JSON line: {"tiles": [{"id", "name", "bpm", "zoneClass", "battery", "link",
"trendPoints"}], "observed": [[ms, id, text], ...], "pixels": {"#rrggbb": count, ...},
"reloaded": [[id, bpm text], ...]}.
"""
import base64
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

OBSERVER = r"""
window.__shown = [];
new MutationObserver(records => {
  const now = Date.now();
  for (const record of records) {
    const target = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    if (!target || !target.classList || !target.classList.contains("bpm")) continue;
    const tile = target.closest(".tile");
    if (tile) window.__shown.push([now, tile.dataset.id, target.textContent]);
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""

WAIT = r"""
new Promise((resolve, reject) => {
  const deadline = setTimeout(() => reject(new Error("the page did not show %(values)d values of %(straps)d straps in %(seconds)s s: "
    + JSON.stringify(window.__shown.slice(-20)))), %(seconds)d * 1000);
  const check = () => {
    const tiles = document.querySelectorAll(".tile");
    if (tiles.length >= %(straps)d) {
      const counts = {};
      for (const [, id, text] of window.__shown) if (/^[0-9]+$/.test(text)) counts[id] = (counts[id] || 0) + 1;
      if ([...tiles].every(t => (counts[t.dataset.id] || 0) >= %(values)d)) { clearTimeout(deadline); resolve(true); return; }
    }
    requestAnimationFrame(check);
  };
  check();
})
"""

RELOADED = r"""
new Promise((resolve, reject) => {
  const tiles = () => JSON.stringify([...document.querySelectorAll(".tile")].map(t => [t.dataset.id, t.querySelector(".bpm").textContent]));
  // Tiles come from the snapshot first: if there are any, it was shown already.
  if (document.querySelectorAll(".tile").length > 0) { resolve(tiles()); return; }
  const deadline = setTimeout(() => reject(new Error("the reloaded page did not show %(straps)d tiles")), 10000);
  events.addEventListener("snapshot", () => { clearTimeout(deadline); resolve(tiles()); });
})
"""

STATE = r"""
JSON.stringify({
  tiles: [...document.querySelectorAll(".tile")].map(t => ({
    id: t.dataset.id, name: t.querySelector(".name").textContent, bpm: t.querySelector(".bpm").textContent,
    zoneClass: [...t.classList].find(c => /^z[0-9]$/.test(c)) || null,
    battery: t.querySelector(".battery").textContent, link: t.querySelector(".link").textContent,
    trendPoints: (t.querySelector("polyline").getAttribute("points") || "").split(" ").filter(Boolean).length,
  })),
  observed: window.__shown,
})
"""


class DevTools:
    """The Chrome DevTools Protocol over chromium's pipe: JSON messages ended by a NUL byte."""

    def __init__(self, to_browser, from_browser):
        self.to_browser = to_browser
        self.from_browser = from_browser
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def wait_for(self, method):
        """Waits for the event `method` (bounded by the script's alarm), one already received included."""
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method:
                    del self.events[:index + 1]
                    return event
            self.events.clear()
            self.events.append(self.receive())

    def call(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            if "method" in reply:
                self.events.append(reply)

    def receive(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)


def png_pixels(data):
    """Counts the pixels of each colour in an 8-bit RGB or RGBA PNG (what chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat, width, height, kind = 8, b"", 0, 0, 0
    while position < len(data):
        length, chunk = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if chunk == b"IHDR":
            width, height, depth, kind, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and kind in (2, 6) and interlace == 0, f"PNG kind {kind}, depth {depth}"
        elif chunk == b"IDAT":
            idat += body
        position += 12 + length
    channels = 3 if kind == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    counts = {}
    offset = 0
    for _ in range(height):
        kind_of_filter = raw[offset]
        line = bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            upper_left = previous[i - channels] if i >= channels else 0
            if kind_of_filter == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind_of_filter == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind_of_filter == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind_of_filter == 4:
                p = left + up - upper_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else upper_left)
                line[i] = (line[i] + predictor) & 0xFF
        for x in range(0, stride, channels):
            colour = "#%02x%02x%02x" % (line[x], line[x + 1], line[x + 2])
            counts[colour] = counts.get(colour, 0) + 1
        previous = line
    return counts


def main():
    request = json.loads(sys.stdin.readline())
    profile = tempfile.mkdtemp(prefix="rawble-chromium-")
    # Chromium reads commands on its fd 3 and writes replies on its fd 4: the pipes are put
    # there in the child (and kept: pass_fds).
    command_read, command_write = os.pipe()
    reply_read, reply_write = os.pipe()

    def child_pipes():
        high_command, high_reply = os.dup(command_read), os.dup(reply_write)
        os.dup2(high_command, 3)
        os.dup2(high_reply, 4)

    arguments = [request["chromium"], "--headless=new", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                 "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=800,500", "--hide-scrollbars", "--force-device-scale-factor=1", "about:blank"]
    if os.geteuid() == 0:
        arguments.insert(1, "--no-sandbox")
    browser = subprocess.Popen(arguments, preexec_fn=child_pipes, pass_fds=(3, 4),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    os.close(command_read)
    os.close(reply_write)
    # Every wait below is bounded: past this, the browser's process group is killed and the
    # pipe reads end.
    signal.signal(signal.SIGALRM, lambda *_: os.killpg(browser.pid, signal.SIGKILL))
    signal.alarm(request["seconds"] + 30)
    try:
        tools = DevTools(command_write, reply_read)
        target = tools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = tools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        tools.call("Page.enable", session=session)
        tools.call("Emulation.setDeviceMetricsOverride",
                   {"width": 800, "height": 500, "deviceScaleFactor": 1, "mobile": False}, session=session)
        tools.call("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER}, session=session)
        tools.call("Page.navigate", {"url": request["url"]}, session=session)
        waited = tools.call("Runtime.evaluate", {
            "expression": WAIT % {"straps": request["straps"], "values": request["values"], "seconds": request["seconds"]},
            "awaitPromise": True, "returnByValue": True}, session=session)
        if "exceptionDetails" in waited:
            raise RuntimeError(waited["exceptionDetails"].get("exception", {}).get("description", "the wait failed"))
        # Frozen: the page's event stream closed, so its tiles stay as the screenshot shows them.
        tools.call("Runtime.evaluate", {"expression": "events.close(); true", "returnByValue": True}, session=session)
        # At half scale: the pixels of a tile's background stay that colour, and there are a
        # quarter as many to decode.
        shot = tools.call("Page.captureScreenshot", {
            "format": "png", "clip": {"x": 0, "y": 0, "width": 800, "height": 500, "scale": 0.5}}, session=session)
        state = tools.call("Runtime.evaluate", {"expression": STATE, "returnByValue": True}, session=session)
        result = json.loads(state["result"]["value"])
        result["pixels"] = png_pixels(base64.b64decode(shot["data"]))
        # Reloaded, the page is whole from the server's first event (the snapshot), before
        # any new value: every tile with its bpm.
        tools.events.clear()
        tools.call("Page.reload", session=session)
        tools.wait_for("Page.loadEventFired")
        reloaded = tools.call("Runtime.evaluate", {"expression": RELOADED % {"straps": request["straps"]},
                                                   "awaitPromise": True, "returnByValue": True}, session=session)
        if "exceptionDetails" in reloaded:
            raise RuntimeError(reloaded["exceptionDetails"].get("exception", {}).get("description", "the reload failed"))
        result["reloaded"] = json.loads(reloaded["result"]["value"])
        print(json.dumps(result))
    finally:
        signal.alarm(0)
        try:
            os.killpg(browser.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        browser.wait()
        subprocess.run(["rm", "-rf", profile], check=False)


if __name__ == "__main__":
    main()
