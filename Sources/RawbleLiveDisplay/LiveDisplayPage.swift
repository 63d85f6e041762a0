/// The live display's one page: HTML with its CSS and JavaScript inline, nothing fetched from
/// anywhere but `/events` on the same server (its Content-Security-Policy forbids the rest).
/// A tile per strap: name, bpm, the zone's colour, the last minute's trend (inline SVG), battery
/// and link state. Strap names are set as text, never as markup.
public enum LiveDisplayPage {
    /// A tile's background for each zone (0: below zone 1, then 1 to 5), as `#rrggbb`; a tile
    /// without a zone (no `--max-hr`) is ``noZoneColour``.
    public static let zoneColours: [Int: String] = [
        0: "#546e7a", 1: "#1e88e5", 2: "#43a047", 3: "#c0a000", 4: "#ef6c00", 5: "#d32f2f",
    ]
    /// A tile's background when its strap has no zone.
    public static let noZoneColour = "#37474f"

    /// The page's HTML.
    public static let html: String = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width,initial-scale=1">
        <title>rawble · live</title>
        <style>
        body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#121417;color:#f5f5f5}
        header{display:flex;justify-content:space-between;padding:10px 16px;font-size:15px;color:#b0bec5}
        #tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:12px;padding:0 12px 12px}
        .tile{border-radius:14px;padding:12px 16px;background:\(noZoneColour)}
        \(zoneColours.sorted { $0.key < $1.key }.map { ".tile.z\($0.key){background:\($0.value)}" }.joined(separator: "\n"))
        .tile.off{opacity:.55}
        .name{font-size:18px;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
        .bpm{font-size:76px;font-weight:700;line-height:1.05;font-variant-numeric:tabular-nums}
        .unit{font-size:18px;margin-left:6px}
        svg{display:block;width:100%;height:44px;margin:4px 0}
        polyline{fill:none;stroke:#fff;stroke-width:3;stroke-linejoin:round;vector-effect:non-scaling-stroke}
        .meta{display:flex;justify-content:space-between;gap:8px;font-size:14px}
        .link.reconnecting{color:#ffe082}.link.lost{color:#ffab91}
        #empty{padding:24px;color:#90a4ae}
        </style></head>
        <body>
        <header><span>rawble · live heart rate</span><span id="status">connecting…</span></header>
        <main id="tiles"></main>
        <div id="empty">No strap yet: the tiles appear as straps connect.</div>
        <script>
        "use strict";
        const WINDOW = 60000, SVG = "http://www.w3.org/2000/svg";
        const tiles = new Map(), box = document.getElementById("tiles");
        const statusLine = document.getElementById("status"), empty = document.getElementById("empty");
        const linkText = {connected: "connected", reconnecting: "reconnecting…", lost: "lost", ended: "ended"};
        function add(tag, cls, parent) {
          const e = document.createElement(tag); if (cls) e.className = cls; parent.appendChild(e); return e;
        }
        function tile(id) {
          let t = tiles.get(id); if (t) return t;
          const root = add("section", "tile", box); root.dataset.id = id;
          const name = add("div", "name", root), big = add("div", "", root);
          const bpm = add("span", "bpm", big); bpm.textContent = "–";
          add("span", "unit", big).textContent = "bpm";
          const svg = document.createElementNS(SVG, "svg");
          svg.setAttribute("viewBox", "0 0 600 100"); svg.setAttribute("preserveAspectRatio", "none");
          const line = document.createElementNS(SVG, "polyline"); svg.appendChild(line); root.appendChild(svg);
          const meta = add("div", "meta", root);
          const zone = add("span", "zone", meta), battery = add("span", "battery", meta), link = add("span", "link", meta);
          t = {root, name, bpm, line, zone, battery, link, trend: []};
          tiles.set(id, t); empty.hidden = true; return t;
        }
        function draw(t) {
          if (t.trend.length === 0) { t.line.setAttribute("points", ""); return; }
          const end = t.trend[t.trend.length - 1][0];
          t.trend = t.trend.filter(p => p[0] >= end - WINDOW);
          let lo = Infinity, hi = -Infinity;
          for (const p of t.trend) { lo = Math.min(lo, p[1]); hi = Math.max(hi, p[1]); }
          const span = Math.max(hi - lo, 10), base = (lo + hi - span) / 2;
          t.line.setAttribute("points", t.trend.map(p =>
            ((p[0] - end + WINDOW) / WINDOW * 600).toFixed(1) + "," + (95 - (p[1] - base) / span * 90).toFixed(1)).join(" "));
        }
        function show(s) {
          const t = tile(s.id);
          t.name.textContent = s.name || s.id; t.name.title = s.id;
          t.bpm.textContent = s.bpm == null ? "–" : String(s.bpm);
          t.root.className = "tile" + (s.zone == null ? "" : " z" + s.zone) + (s.link && s.link !== "connected" ? " off" : "");
          t.zone.textContent = s.zone == null ? "" : (s.zone === 0 ? "rest" : "zone " + s.zone);
          t.battery.textContent = s.battery == null ? "" : "battery " + s.battery + " %";
          t.link.textContent = linkText[s.link] || ""; t.link.className = "link " + (s.link || "");
          if (s.trend) t.trend = s.trend.slice();
          if (s.point) {
            const n = t.trend.length;
            if (n >= 2 && t.trend[n - 1][0] - t.trend[n - 2][0] < 500) t.trend.pop();
            t.trend.push(s.point);
          }
          draw(t);
        }
        const events = new EventSource("events");
        events.addEventListener("snapshot", e => {
          const straps = JSON.parse(e.data).straps, seen = new Set();
          for (const s of straps) { show(s); seen.add(s.id); }
          for (const [id, t] of tiles) if (!seen.has(id)) { t.root.remove(); tiles.delete(id); }
          empty.hidden = tiles.size > 0; statusLine.textContent = "live";
        });
        events.addEventListener("strap", e => show(JSON.parse(e.data)));
        events.onerror = () => { statusLine.textContent = "reconnecting to rawble…"; };
        events.onopen = () => { statusLine.textContent = "live"; };
        </script>
        </body></html>
        """
}
