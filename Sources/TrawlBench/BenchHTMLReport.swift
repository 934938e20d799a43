import Foundation
import Trawl

/// `--report FILE.html`: one self-contained page (no network, no external script or font) drawing one or more
/// bench results on the same axes: requests/s, p50/p99/max and status codes over time, the percentile
/// distribution on a log scale (as HdrHistogram's plotter draws it) and each run's parameters.
///
/// The results are embedded as JSON and drawn as inline SVG by the page's own script, which reads them as data
/// only (text nodes and attributes, never markup): a result file is input from outside.
package enum BenchHTMLReport {
    package struct Run {
        /// The legend's name: the file's name, or "this run".
        package var label: String
        package var object: [String: Any]

        package init(label: String, object: [String: Any]) {
            self.label = label
            self.object = object
        }
    }

    package struct ReadError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Reads a result written by `trawl bench --json`.
    package static func read(_ path: String) throws(ReadError) -> Run {
        guard let data = (try? DurableFiles.read(path, limit: 64 << 20)).map({ Data($0) }) else {
            throw ReadError(description: "--report: cannot read '\(path)' (give result files of trawl bench --json)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            object["requests_per_s"] is NSNumber, object["intervals"] is [Any]
        else {
            throw ReadError(
                description:
                    "--report: '\(path)' is not a result of trawl bench --json (no requests_per_s or intervals)")
        }
        return Run(label: URL(fileURLWithPath: path).lastPathComponent, object: object)
    }

    /// The page. URLs are redacted (credentials, secret query parameters) before they are embedded.
    package static func html(_ runs: [Run]) -> String {
        let embedded: [[String: Any]] = runs.map { run in
            var object = run.object
            if let urls = object["urls"] as? [String] {
                object["urls"] = urls.map { Redaction.url($0, names: Redaction.defaultQueryNames) }
            }
            return ["label": run.label, "result": object]
        }
        let data = (try? JSONSerialization.data(withJSONObject: embedded, options: [.sortedKeys])) ?? Data("[]".utf8)
        // Inside <script>, "<" could close the element: JSON allows it escaped.
        let json = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
        return page.replacingOccurrences(of: "__TRAWL_DATA__", with: json)
    }

    private static let page = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; \
        style-src 'unsafe-inline'">
        <title>trawl bench report</title>
        <style>
        * { box-sizing: border-box; }
        body { font: 14px system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }
        h1 { font-size: 20px; } h2 { font-size: 16px; margin: 24px 0 4px; }
        .headline { display: flex; flex-wrap: wrap; gap: 8px; margin: 4px 0 8px; }
        .card { border: 1px solid #ddd; border-radius: 4px; padding: 6px 10px; min-width: 0; }
        .card b { display: block; font-size: 18px; white-space: nowrap; }
        .card span { font-size: 12px; color: #555; white-space: nowrap; }
        .run { font-weight: 600; margin-top: 8px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        table { border-collapse: collapse; font-size: 12px; width: 100%; table-layout: fixed; }
        td, th { border: 1px solid #ccc; padding: 3px 6px; text-align: left; overflow: hidden;
          text-overflow: ellipsis; white-space: nowrap; }
        svg { display: block; width: 100%; height: auto; background: #fafafa; border: 1px solid #ddd; }
        .axis { stroke: #555; } .grid { stroke: #e2e2e2; } text { font-size: 11px; fill: #333; }
        #errors { color: #b00; }
        </style></head>
        <body>
        <h1>trawl bench report</h1>
        <div id="errors"></div>
        <div id="headline"></div>
        <h2>Requests/s over time</h2><div id="rps"></div>
        <h2>Latency over time (ms): p50, p99, max</h2><div id="latency"></div>
        <h2>Latency histogram (requests per latency bucket, ms, log scale)</h2><div id="histogram"></div>
        <h2>Latency by percentile (ms), log scale as HdrHistogram's plotter</h2><div id="distribution"></div>
        <h2>Status classes over time (responses/s, stacked)</h2><div id="statuses"></div>
        <h2>Runs</h2><table id="params"></table>
        <script type="application/json" id="trawl-data">__TRAWL_DATA__</script>
        <script>
        "use strict";
        (function () {
          const NS = "http://www.w3.org/2000/svg";
          const colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
          const runs = JSON.parse(document.getElementById("trawl-data").textContent);
          const num = (v) => (typeof v === "number" && isFinite(v) ? v : 0);
          const el = (name, attrs, parent) => {
            const node = document.createElementNS(NS, name);
            for (const key in attrs) node.setAttribute(key, String(attrs[key]));
            if (parent) parent.appendChild(node);
            return node;
          };
          const text = (parent, x, y, content, anchor) => {
            const node = el("text", { x: x, y: y, "text-anchor": anchor || "middle" }, parent);
            node.textContent = content;
            return node;
          };
          const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(1) : v.toPrecision(2));
          // Round steps of 1, 2 or 5 times a power of ten, about `count` of them up to `max`.
          function niceStep(max, count) {
            const raw = Math.max(1e-9, max) / count, power = Math.pow(10, Math.floor(Math.log10(raw)));
            const unit = raw / power;
            return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
          }
          const tickText = (v) => String(Number(v.toPrecision(6)));
          // series: [{name, color, dash, points: [[x, y]...], fill?, draw?}]; xScale maps a data x to [0, 1] (log axes).
          function chart(id, series, options) {
            const W = 900, H = 300, L = 60, R = 150, T = 12, B = 36;
            const svg = el("svg", { viewBox: "0 0 " + W + " " + H, "data-chart": id });
            document.getElementById(id).appendChild(svg);
            const all = series.flatMap((s) => s.draw || s.points);
            const xs = all.map((p) => options.xScale ? options.xScale(p[0]) : p[0]);
            const xMin = 0;
            const xMax = options.xMax ? options.xMax : Math.max(1e-9, ...xs);
            const yStep = niceStep(Math.max(1e-9, ...all.map((p) => p[1])), 5);
            const yMax = Math.max(yStep, Math.ceil(Math.max(1e-9, ...all.map((p) => p[1])) / yStep) * yStep);
            const px = (x) => L + ((options.xScale ? options.xScale(x) : x) - xMin) / (xMax - xMin || 1) * (W - L - R);
            const py = (y) => H - B - y / yMax * (H - T - B);
            for (let y = 0; y <= yMax + yStep / 2; y += yStep) {
              el("line", { x1: L, x2: W - R, y1: py(y), y2: py(y), class: "grid" }, svg);
              text(svg, L - 6, py(y) + 4, tickText(y), "end");
            }
            let ticks = options.xTicks;
            if (!ticks) {
              const step = niceStep(xMax, 6);
              ticks = [];
              for (let x = 0; x <= xMax + step * 1e-6; x += step) ticks.push(x);
            }
            for (const t of ticks) {
              const x = Array.isArray(t) ? t[0] : t;
              text(svg, px(x), H - B + 16, Array.isArray(t) ? t[1] : tickText(x));
            }
            text(svg, (L + W - R) / 2, H - 4, options.xLabel);
            el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }, svg);
            el("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }, svg);
            series.forEach((s, i) => {
              const shape = s.draw || s.points;
              if (s.fill) {
                const base = s.base || shape.map((p) => [p[0], 0]);
                const outline = shape.concat(base.slice().reverse());
                el("polygon", { points: outline.map((p) => px(p[0]).toFixed(1) + "," + py(p[1]).toFixed(1)).join(" "),
                  fill: s.color, "fill-opacity": 0.35, stroke: "none" }, svg);
              }
              el("polyline", {
                points: shape.map((p) => px(p[0]).toFixed(1) + "," + py(p[1]).toFixed(1)).join(" "),
                fill: "none", stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash || "",
                "data-series": s.name, "data-points": JSON.stringify(s.points),
              }, svg);
              el("line", { x1: W - R + 10, x2: W - R + 30, y1: T + 10 + i * 16, y2: T + 10 + i * 16,
                stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash || "" }, svg);
              const label = s.name.length > 18 ? s.name.slice(0, 17) + "…" : s.name;
              const legend = text(svg, W - R + 34, T + 14 + i * 16, label, "start");
              el("title", {}, legend).textContent = s.name;
            });
          }
          const many = runs.length > 1;
          const name = (run, what) => (many ? run.label + " " : "") + what;
          const rows = (r) => (Array.isArray(r.result.intervals) ? r.result.intervals : []);
          const mid = (row) => (num(row.start_s) + num(row.end_s)) / 2;
          const span = (row) => Math.max(1e-9, num(row.end_s) - num(row.start_s));
          // Rates: a last interval cut shorter than half of --interval is left out (too few requests to be a
          // rate); a longer partial one is drawn at its rate over its true length.
          const rateRows = (r) => rows(r).filter((row) =>
            !(row.partial === true && span(row) < 0.5 * Math.max(1e-9, num(r.result.interval_s))));
          // The time axis covers the whole run (the longest one), not only the middles of its intervals.
          const runEnd = Math.max(1e-9, ...runs.map((run) => Math.max(num(run.result.duration_s),
            ...rows(run).map((row) => num(row.end_s)))));
          const percent = (part, whole) => (whole > 0 ? (100 * part / whole).toPrecision(2) + "%" : "0%");
          const headline = document.getElementById("headline");
          for (const run of runs) {
            const r = run.result, lat = r.latency_ms || {}, service = r.service_latency_ms;
            if (many) { const d = document.createElement("div"); d.className = "run"; d.textContent = run.label;
              d.title = run.label; headline.appendChild(d); }
            const box = document.createElement("div");
            box.className = "headline";
            const cards = [["requests/s", num(r.requests_per_s).toFixed(0)],
              ["p50 ms", fmt(num(lat.p50))], ["p99 ms", fmt(num(lat.p99))], ["p99.9 ms", fmt(num(lat.p999))],
              ["max ms", fmt(num(lat.max))],
              ["errors", num(r.failed) + " (" + percent(num(r.failed), num(r.failed) + num(r.requests)) + ")"]];
            if (service && typeof service === "object") {
              cards.push(["service p50 ms", fmt(num(service.p50))], ["service p99 ms", fmt(num(service.p99))]);
            }
            for (const [label, value] of cards) {
              const card = document.createElement("div"); card.className = "card";
              const b = document.createElement("b"); b.textContent = value;
              const sp = document.createElement("span");
              sp.textContent = label + (label.startsWith("p") && r.mode === "open" ? " (from intended send)" : "");
              card.appendChild(b); card.appendChild(sp); box.appendChild(card);
            }
            headline.appendChild(box);
          }
          chart("rps", runs.map((run, i) => ({ name: name(run, "requests/s"), color: colors[i % 8],
            points: rateRows(run).map((row) => [mid(row), num(row.requests) / span(row)]) })),
            { xLabel: "seconds", xMax: runEnd });
          const dashes = { p50: "", p99: "6 3", max: "2 3" };
          chart("latency", runs.flatMap((run, i) => ["p50", "p99", "max"].map((key) => ({
            name: name(run, key), color: colors[i % 8], dash: dashes[key],
            points: rows(run).map((row) => [mid(row), num(row[key + "_ms"])]) }))), { xLabel: "seconds", xMax: runEnd });
          // The histogram: one step line per run over the log buckets (x: the bucket's upper edge, log scale).
          const buckets = (run) => (Array.isArray(run.result.histogram_ms) ? run.result.histogram_ms : [])
            .filter((b) => num(b.to) > 0);
          const lowest = Math.min(...runs.flatMap((run) => buckets(run).map((b) => Math.max(1e-6, num(b.from)))), 1e9);
          const highest = Math.max(...runs.flatMap((run) => buckets(run).map((b) => num(b.to))), 1e-6);
          const logX = (v) => Math.log10(Math.max(1e-6, v) / lowest);
          const edges = [];
          for (let e = Math.pow(10, Math.floor(Math.log10(lowest))); e <= highest * 1.0001; e *= 10) {
            for (const k of [1, 2, 5]) { const v = e * k; if (v >= lowest * 0.9999 && v <= highest * 1.0001) edges.push(v); }
          }
          chart("histogram", runs.map((run, i) => ({ name: name(run, "requests"), color: colors[i % 8], fill: true,
            points: buckets(run).map((b) => [num(b.to), num(b.count)]),
            draw: buckets(run).flatMap((b) => [[num(b.from), num(b.count)], [num(b.to), num(b.count)]]) })),
            { xLabel: "latency ms (bucket edges)", xScale: logX, xMax: Math.max(1e-9, logX(highest)),
              xTicks: edges.map((v) => [v, tickText(v)]) });
          const toX = (p) => Math.log10(1 / Math.max(1e-7, 1 - p / 100));
          const dist = (run) => (Array.isArray(run.result.distribution_ms) ? run.result.distribution_ms : [])
            .filter((d) => num(d.percentile) < 100).map((d) => [num(d.percentile), num(d.ms)]);
          const distTicks = [[0, "0%"], [90, "90%"], [99, "99%"], [99.9, "99.9%"], [99.99, "99.99%"], [99.999, "99.999%"]]
            .filter((t) => runs.some((run) => dist(run).some((p) => p[0] >= t[0])));
          chart("distribution", runs.map((run, i) => ({ name: name(run, "latency"), color: colors[i % 8],
            points: dist(run) })), { xLabel: "percentile", xScale: toX,
            xMax: Math.max(1e-9, ...runs.flatMap((run) => dist(run).map((p) => toX(p[0])))), xTicks: distTicks });
          // Status classes stacked: each class's band sits on the ones below it (2xx at the bottom).
          const classes = ["2xx", "3xx", "4xx", "5xx", "1xx"];
          const classColors = { "2xx": "#2ca02c", "3xx": "#1f77b4", "4xx": "#ff7f0e", "5xx": "#d62728", "1xx": "#7f7f7f" };
          const stacked = [];
          runs.forEach((run) => {
            const rs = rateRows(run);
            let below = rs.map((row) => [mid(row), 0]);
            classes.filter((c) => rs.some((row) => num((row.statuses || {})[c]) > 0)).forEach((c) => {
              const own = rs.map((row) => [mid(row), num((row.statuses || {})[c]) / span(row)]);
              const top = own.map((p, k) => [p[0], below[k][1] + p[1]]);
              stacked.push({ name: name(run, c), color: classColors[c], dash: runs.indexOf(run) ? "4 2" : "",
                points: own, draw: top, base: below, fill: true });
              below = top;
            });
          });
          chart("statuses", stacked, { xLabel: "seconds", xMax: runEnd });
          const table = document.getElementById("params");
          const head = table.insertRow();
          ["run", "URLs", "-c", "model", "duration s", "loops", "HTTP", "trawl", "cores", "requests", "requests/s",
            "p99 ms", "errors"].forEach((h) => { const th = document.createElement("th"); th.textContent = h;
            th.title = h; head.appendChild(th); });
          for (const run of runs) {
            const r = run.result, row = table.insertRow();
            const ramp = r.ramp && typeof r.ramp === "object" ? r.ramp : null;
            const model = r.mode !== "open" ? "closed" : ramp
              ? "open, " + num(r.rate) + "→" + num(ramp.to_rate) + " req/s over " + num(ramp.seconds) + " s"
              : "open, " + num(r.rate) + " req/s";
            [run.label, (Array.isArray(r.urls) ? r.urls : []).join(" "), num(r.concurrency), model,
              num(r.duration_s).toFixed(2), num(r.loops), String(r.http_version || "?"), String(r.trawl_version || "?"),
              num(r.cores), num(r.requests), num(r.requests_per_s).toFixed(0),
              num((r.latency_ms || {}).p99).toFixed(2), num(r.failed)]
              .forEach((v) => { const cell = row.insertCell(); cell.textContent = String(v); cell.title = String(v); });
          }
          document.body.setAttribute("data-drawn", String(runs.length));
          // For the layout check: the page's width against the window's (no horizontal scrolling).
          document.body.setAttribute("data-scroll-width", String(document.documentElement.scrollWidth));
          document.body.setAttribute("data-inner-width", String(window.innerWidth));
        })();
        </script>
        </body></html>

        """
}
