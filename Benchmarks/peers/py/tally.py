"""tally.py: records and reports the measurements of compare.sh (standard library only).

  tally.py record RESULTS WORKLOAD ROUND PEER KIND N RC OUT ERR TIME [EXTRA_TIME...]
      Parses one peer run (its stdout OUT, stderr ERR, `/usr/bin/time -f '%e %U %S %M'` output TIME; for a
      pipeline, EXTRA_TIME files hold the %M of each stage, summed for the peak RSS) and appends one JSON
      line to RESULTS. Never fails: a run that did not work is recorded as failed, with the reason.
  tally.py report RESULTS META
      Prints the Markdown report: per workload, each peer's median (min-max over rounds), its ratio to
      Trawl (median of the per-round ratios: same run, same round), CPU per unit and peak RSS.
"""
import json
import os
import re
import statistics
import sys

WORKLOADS = {
    "a": ("(a) small JSON (%s B), HTTP/1.1 keep-alive, c=64", "requests/s"),
    "b": ("(b) one %s JSON body streamed, elements at `items` counted", "MB/s"),
    "c": ("(c) paginated walk: %s", "items/s"),
    "d1": ("(d) small JSON over TLS, HTTP/1.1, c=64", "requests/s"),
    "d2": ("(d) small JSON over TLS, HTTP/2, c=64", "requests/s"),
}


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def last_line(text):
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:160] if lines else ""


def json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    # trawl bench --json may pretty-print over several lines
    start = text.find("{")
    if start >= 0:
        try:
            return json.loads(text[start:])
        except ValueError:
            pass
    return None


def record(argv):
    results, workload, rnd, peer, kind, n, rc, out_path, err_path, time_path = argv[:10]
    extra = argv[10:]
    n, rc = int(n), int(rc)
    out, err, tm = read(out_path), read(err_path), read(time_path)
    rec = {"workload": workload, "round": int(rnd), "peer": peer, "kind": kind, "n": n, "ok": False,
           "error": "", "value": None, "cpu_s": None, "wall_s": None, "rss_kb": None, "note": ""}
    m = re.search(r"^([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$", tm, re.M)
    if m:
        rec["wall_s"] = float(m.group(1))
        rec["cpu_s"] = float(m.group(2)) + float(m.group(3))
        rec["rss_kb"] = int(m.group(4))
    if extra:
        rss = [int(x) for p in extra for x in re.findall(r"^(\d+)\s*$", read(p), re.M)]
        if rss:
            rec["rss_kb"] = sum(rss)
            rec["note"] = "RSS summed over the pipeline's stages"
    try:
        if rc == 199:  # compare.sh's fail_peer: the peer could not run at all
            raise RuntimeError(last_line(err))
        if rc == 124:
            raise RuntimeError(f"timed out ({last_line(err) or 'no output'})")
        if rc != 0:
            raise RuntimeError(f"exit {rc}: {last_line(err) or last_line(out) or 'no output'}")
        parse(kind, rec, out, err, n)
        rec["ok"] = True
    except Exception as error:  # the reason goes into the table
        rec["error"] = str(error).replace("|", "/")[:200]
    with open(results, "a") as f:
        f.write(json.dumps(rec) + "\n")
    status = f"{rec['value']:.0f}" if rec["ok"] else "failed: " + rec["error"]
    print(f"  [{workload} r{rnd}] {peer}: {status}", file=sys.stderr)


def check_count(rec, ok, n, errors=0):
    if ok < n * 0.99:
        raise RuntimeError(f"only {ok} of {n} requests succeeded ({errors} errors)")
    if errors:
        rec["note"] = f"{errors} errors"


def parse(kind, rec, out, err, n):
    if kind == "trawl-bench":
        doc = json_line(out)
        if doc is None:
            raise RuntimeError("no JSON report: " + (last_line(err) or last_line(out)))
        check_count(rec, doc["requests"], n, doc.get("failed", 0))
        rec["value"] = doc["requests_per_s"]
        rec["cpu_per"] = doc.get("cpu_us_per_request")
    elif kind == "trawl-bench-items":
        doc = json_line(out)
        if doc is None:
            raise RuntimeError("no JSON report: " + (last_line(err) or last_line(out)))
        if not doc.get("items"):
            raise RuntimeError(f"no items counted ({doc.get('failed')} failed)")
        rec["value"] = doc["items_per_s"]
        rec["note"] = f"{doc['items']} items, {doc['requests']} pages, {doc.get('flows')} complete flows"
    elif kind == "json":  # the drivers under py/ and swift/
        doc = json_line(out)
        if doc is None:
            raise RuntimeError("no JSON line: " + (last_line(err) or last_line(out)))
        if "items_per_s" in doc:
            if doc.get("errors"):
                raise RuntimeError(f"{doc['errors']} pages failed: {doc.get('first_error')}")
            if n and doc["items"] != n:
                raise RuntimeError(f"counted {doc['items']} items, expected {n}")
            rec["value"] = doc["items_per_s"]
        else:
            if doc.get("ok", 0) < n * 0.99:
                raise RuntimeError(f"only {doc.get('ok')} of {n} ok: {doc.get('first_error')}"[:200])
            check_count(rec, doc["ok"], n, doc.get("errors", 0))
            rec["value"] = doc["requests_per_s"]
            if doc.get("http_version"):
                rec["note"] = doc["http_version"]
    elif kind == "curl":  # -w '%{http_code}\n' per transfer; rate from the process's wall time
        codes = out.split()
        ok = sum(1 for c in codes if c.startswith("2"))
        check_count(rec, ok, n, len(codes) - ok)
        rec["value"] = ok / rec["wall_s"]
        rec["note"] = (rec["note"] + "; " if rec["note"] else "") + "rate from process wall time"
    elif kind == "wrk":
        m = re.search(r"Requests/sec:\s+([\d.]+)", out)
        if not m:
            raise RuntimeError("no Requests/sec: " + (last_line(err) or last_line(out)))
        bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        if bad:
            raise RuntimeError(f"{bad.group(1)} non-2xx responses")
        rec["value"] = float(m.group(1))
        total = re.search(r"(\d+) requests in", out)
        rec["n"] = int(total.group(1)) if total else 0
        sock = re.search(r"Socket errors: (.*)", out)
        if sock:
            rec["note"] = "socket errors: " + sock.group(1)
    elif kind.startswith("stream:"):  # stream:BYTES:ITEMS -- the output's last number is the item count
        _, nbytes, items = kind.split(":")
        nbytes, items = int(nbytes), int(items)
        doc = json_line(out)
        counted = doc["items"] if doc and "items" in doc else None
        if counted is None:
            nums = re.findall(r"^\s*(\d+)\s*$", out, re.M)
            counted = int(nums[-1]) if nums else None
        if counted != items:
            raise RuntimeError(f"counted {counted} items, expected {items}: {last_line(err)}")
        rec["value"] = nbytes / 1e6 / rec["wall_s"]
        rec["items_per_s"] = items / rec["wall_s"]
        if doc and doc.get("backend"):
            rec["note"] = (rec["note"] + "; " if rec["note"] else "") + "backend " + doc["backend"]
    elif kind.startswith("rate:"):  # rate:BYTES -- a parser over a file: MB/s from the wall time
        nbytes = int(kind.split(":")[1])
        rec["value"] = nbytes / 1e6 / rec["wall_s"]
    elif kind.startswith("items:"):  # a walk whose item count is known: items/s from the wall time
        items = int(kind.split(":")[1])
        doc = json_line(out)
        if doc and "items" in doc and doc["items"] != items:
            raise RuntimeError(f"wrote {doc['items']} items, expected {items}")
        rec["value"] = items / rec["wall_s"]
    else:
        raise RuntimeError(f"unknown kind {kind}")


def fmt(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def report(argv):
    results, meta_path = argv
    meta = json.load(open(meta_path))
    recs = [json.loads(l) for l in open(results) if l.strip()]
    out = []
    out.append(f"# Trawl vs peers, {meta['date']}")
    out.append("")
    out.append(f"Machine: {meta['nproc']} cores, {meta['cpu']}, {meta['mem']}, kernel {meta['kernel']}, "
               f"{meta['os']}. Server: nginx (1 worker) on loopback, sharing the same cores as the client. {meta['rounds']} interleaved round(s){' (--quick)' if meta['quick'] else ''}; "
               "each ratio is peer / Trawl computed within a round (median over rounds), so it compares runs "
               "made seconds apart. Absolute numbers swing between runs on this shared machine; "
               "ratios are the result.")
    out.append("")
    out.append("Versions: " + "; ".join(f"{k} {v}" for k, v in meta["versions"].items()))
    out.append("")
    for wl, (title, unit) in WORKLOADS.items():
        rows = [r for r in recs if r["workload"] == wl]
        if not rows:
            continue
        out.append("## " + (title % meta["titles"][wl] if "%s" in title else title))
        out.append("")
        if wl in meta.get("workload_notes", {}):
            out.append(meta["workload_notes"][wl])
            out.append("")
        peers = list(dict.fromkeys(r["peer"] for r in rows))
        ref = next((p for p in peers if p.startswith("trawl")), None)
        # With a one-loop Trawl row, a second ratio column compares every peer with it as well.
        ref2 = next((p for p in peers if p.startswith("trawl") and "--loops 1" in p), None)
        by_round = {}
        for r in rows:
            by_round.setdefault(r["round"], {})[r["peer"]] = r
        is_stream = wl == "b"
        per_unit = "CPU µs/req" if wl in ("a", "d1", "d2") else ("CPU s" if wl == "b" else "CPU µs/item")
        vs2 = " vs Trawl --loops 1 |" if ref2 else ""
        head = f"| peer | {unit} (median; min–max) | vs Trawl |{vs2} {per_unit} | peak RSS MB | N | notes |"
        if is_stream:
            head = f"| peer | MB/s (median; min–max) | items/s | vs Trawl | CPU s | peak RSS MB | notes |"
        out.append(head)
        out.append("|" + "---|" * (head.count("|") - 1))
        for p in peers:
            name = p.replace("|", "\\|")
            mine = [r for r in rows if r["peer"] == p]
            good = [r for r in mine if r["ok"]]
            if not good:
                out.append(f"| {name} | failed: {mine[0]['error']} |" + " |" * (head.count("|") - 3))
                continue
            vals = [r["value"] for r in good]
            med = statistics.median(vals)
            rng = f"{fmt(med)}" + (f" ({fmt(min(vals))}–{fmt(max(vals))})" if len(vals) > 1 else "")
            def ratio_to(reference):
                ratios = []
                for rd, peers_in_round in by_round.items():
                    a, b = peers_in_round.get(p), peers_in_round.get(reference)
                    if a and b and a["ok"] and b["ok"] and b["value"]:
                        ratios.append(a["value"] / b["value"])
                text = "1" if p == reference else (f"{statistics.median(ratios):.2f}x" if ratios else "-")
                if p != reference and len(ratios) > 1:
                    text += f" ({min(ratios):.2f}–{max(ratios):.2f})"
                return text
            ratio = ratio_to(ref)
            if ref2:
                ratio += " | " + ratio_to(ref2)
            rss = statistics.median([r["rss_kb"] for r in good if r["rss_kb"]] or [0]) / 1024
            notes = "; ".join(dict.fromkeys(r["note"] for r in good if r["note"]))
            failed = [r for r in mine if not r["ok"]]
            if failed:
                notes = (notes + "; " if notes else "") + f"{len(failed)} round(s) failed: {failed[0]['error']}"
            if is_stream:
                ips = statistics.median([r.get("items_per_s") or 0 for r in good])
                cpu = statistics.median([r["cpu_s"] for r in good if r["cpu_s"] is not None] or [0])
                out.append(f"| {name} | {rng} | {fmt(ips)} | {ratio} | {cpu:.1f} | {rss:.0f} | {notes} |")
            else:
                cpus = []
                for r in good:
                    units = r["n"] if wl != "c" else meta["walk_items"]
                    if r.get("cpu_per") is not None and wl != "c":
                        cpus.append(r["cpu_per"])
                    elif r["cpu_s"] is not None and units:
                        cpus.append(r["cpu_s"] * 1e6 / units)
                cpu = f"{statistics.median(cpus):.1f}" if cpus else "-"
                n = meta["walk_items"] if wl == "c" else statistics.median([r["n"] for r in good])
                out.append(f"| {name} | {rng} | {ratio} | {cpu} | {rss:.0f} | {n:,.0f} | {notes} |")
        out.append("")
    out.append(f"Run took {meta.get('elapsed', '?')}; setup (installs, builds, data) {meta.get('setup', '?')}.")
    print("\n".join(out))


if __name__ == "__main__":
    {"record": record, "report": report}[sys.argv[1]](sys.argv[2:])
