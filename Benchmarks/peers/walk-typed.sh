#!/usr/bin/env bash
# Walk (c) of compare.sh for the typed rows only, interleaved round by round: Trawl's API decoding each item into a
# struct through Decodable, through JSONFieldsDecodable and with @JSONFieldsDecodable (walk-bench api, api-fields and
# api-macro), an older walk-bench's Decodable (BASE_WALK, optional), python pycurl + orjson + dataclass and pycurl +
# msgspec (typed Structs, one Decoder per page type). nginx (one worker) serves PAGES static pages of 100 items, 16
# in flight; each client times its own walk (items/s) and /usr/bin/time gives its CPU.
#
# Usage: Benchmarks/peers/walk-typed.sh [ROUNDS=3] [PAGES=10000]
#   BASE_WALK=PATH   an older walk-bench binary, side by side (the Decodable path before a change)
#   PY=PATH          the python with pycurl and orjson (default: compare.sh's virtualenv, Benchmarks/peers/.venv)
# Writes Benchmarks/peers/results/walk-typed.txt: the rows, then per-round ratios (median and range).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-3}; pages=${2:-10000}; conc=16
py=${PY:-$here/.venv/bin/python}
"$py" -c 'import pycurl, orjson, msgspec' || {
    echo "error: $py lacks pycurl, orjson or msgspec (run compare.sh or walk-fetch.sh once, or set PY)" >&2; exit 1; }
"$root/scripts/ensure-deps" nginx-light time >/dev/null
(cd "$root/Benchmarks/json" && rm -f .build/release.yaml && swift build -c release --product walk-bench >&2)
walk_bench=$(cd "$root/Benchmarks/json" && swift build -c release --show-bin-path)/walk-bench
data=${PEERS_DATA:-/tmp/trawl-peers-data}
walk_dir=$data/walk-$pages
[ -s "$walk_dir/page-$pages.json" ] || python3 "$here/py/gen_pages.py" "$walk_dir" "$pages" 100
work=$(mktemp -d /tmp/trawl-walk-typed.XXXXXX)
. "$here/nginx.sh"
trap 'nginx_stop "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/www" "$work/logs"
ln -s "$walk_dir" "$work/www/walk"
chmod -R a+rX "$work" "$data"
nginx_start "$work" '        location = /walk/page { try_files /walk/page-$arg_page.json =404; }'
url="http://127.0.0.1:$nginx_port/walk/page"
nginx_wait "$url?page=1"
out=$here/results/walk-typed.txt
{
    echo "# walk-typed.sh: $pages pages x 100 items, $conc in flight, $rounds rounds, $(date -u +%FT%TZ), $(nproc) cores,"
    echo "# load $(cut -d' ' -f1-3 /proc/loadavg); commit $(git -C "$root" rev-parse --short HEAD); base ${BASE_WALK:-none}"
    echo "round client items_per_s cpu_s items"
} > "$out"
run() {  # run ROUND LABEL COMMAND...
    local rd=$1 label=$2 line
    shift 2
    line=$(PYTHONDONTWRITEBYTECODE=1 /usr/bin/time -f "%U %S" -o "$work/time" "$@")
    read -r user sys < "$work/time"
    python3 - "$rd" "$label" "$line" "$user" "$sys" >> "$out" <<'PY'
import json, sys
rd, label, line, user, sys_ = sys.argv[1:]
r = json.loads(line)
if r.get("errors"): raise SystemExit(f"{label}: {r.get('first_error')}")
print(rd, label, round(r["items_per_s"]), round(float(user) + float(sys_), 2), r["items"])
PY
}
for rd in $(seq 1 "$rounds"); do
    run "$rd" decodable "$walk_bench" "$url" $conc api
    run "$rd" fields "$walk_bench" "$url" $conc api-fields
    run "$rd" macro "$walk_bench" "$url" $conc api-macro
    [ -n "${BASE_WALK:-}" ] && run "$rd" base-decodable "$BASE_WALK" "$url" $conc api
    run "$rd" pycurl-orjson "$py" "$here/py/walk.py" pycurl "$url" $conc orjson
    run "$rd" pycurl-msgspec "$py" "$here/py/walk.py" pycurl "$url" $conc msgspec
done
python3 - "$out" <<'PY' >> "$out"
import sys, collections
rows = [l.split() for l in open(sys.argv[1]) if l[0].isdigit()]
by = collections.defaultdict(dict)
for rd, client, rate, cpu, items in rows:
    by[rd][client] = (float(rate), float(cpu) / int(items) * 1e6)
def stat(values):
    values = sorted(values)
    return f"{values[len(values) // 2]:.2f}x ({values[0]:.2f}-{values[-1]:.2f})"
for client in ("decodable", "fields", "macro", "base-decodable", "pycurl-orjson", "pycurl-msgspec"):
    rates = [r[client][0] for r in by.values() if client in r]
    cpus = [r[client][1] for r in by.values() if client in r]
    if rates:
        print(f"# {client}: {sorted(rates)[len(rates) // 2]:,.0f} items/s median, "
              f"CPU {sorted(cpus)[len(cpus) // 2]:.2f} us/item")
for client in ("decodable", "fields", "macro", "base-decodable"):
    ratios = [r[client][0] / r["pycurl-orjson"][0] for r in by.values() if client in r and "pycurl-orjson" in r]
    if ratios:
        print(f"# {client} / pycurl+orjson items/s: {stat(ratios)}")
    ratios = [r[client][0] / r["pycurl-msgspec"][0] for r in by.values() if client in r and "pycurl-msgspec" in r]
    if ratios:
        print(f"# {client} / pycurl+msgspec items/s: {stat(ratios)}")
for client in ("decodable", "fields", "macro"):
    ratios = [r["base-decodable"][1] / r[client][1] for r in by.values() if client in r and "base-decodable" in r]
    if ratios:
        print(f"# CPU per item base-decodable / {client}: {stat(ratios)}")
    ratios = [r[client][0] / r["base-decodable"][0] for r in by.values() if client in r and "base-decodable" in r]
    if ratios:
        print(f"# items/s {client} / base-decodable: {stat(ratios)}")
PY
cat "$out"
