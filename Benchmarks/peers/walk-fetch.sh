#!/usr/bin/env bash
# trawl fetch (durable JSONL, release build) against python pycurl + orjson + dataclasses and pycurl + msgspec
# (typed Structs decoded straight from the bytes), interleaved rounds, on two data sets of PAGES pages x 100 items:
#   walk: walk (c)'s 7-field items (~125 B); rich: 9 fields (~155 B: a nested object, unicode escapes, a float, a
#   bool, a null, an int array). gen_pages.py writes both, once, under /tmp/trawl-peers-data.
# Each round also runs `trawl extract --path items` over the same items concatenated into one document (written to
# a file, as fetch writes its items): the parse-and-write cost without HTTP or the job machinery; and the plain C
# curl_multi loop (curl_multi_floor.c, 16 in flight) fetching page 1 PAGES times, bodies discarded: the HTTP cost
# without parsing, output or Swift. Their CPU added is the least any fetch of these pages can cost on this machine
# ("floor + extract"), shown against fetch's CPU target of 1.5x extract's.
# nginx (one worker) serves the pages on loopback, 16 in flight; every client on the same cores.
#
# Usage: Benchmarks/peers/walk-fetch.sh [ROUNDS=3] [PAGES=4000]
#   TRAWL=PATH   the trawl binary (default .build/release/trawl, built with `swift build -c release --product trawl`)
#   KINDS="walk rich" (default both); PY=PATH a python with pycurl, orjson and msgspec (default .venv here, which
#   this script creates when missing: orjson, msgspec, pycurl built against the system libcurl);
#   OUT=FILE (default results/walk-fetch-peers.txt, the committed run)
# items/s: trawl fetch from the wall time of the whole process (/usr/bin/time); the python peers from their own
# timing (after start-up and imports), which favours them slightly. CPU: user + system of each process.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-3}; pages=${2:-4000}; conc=16
kinds=${KINDS:-walk rich}
trawl=${TRAWL:-$root/.build/release/trawl}
[ -x "$trawl" ] || { echo "error: no trawl binary at $trawl: run 'swift build -c release --product trawl' or set TRAWL" >&2; exit 1; }
"$root/scripts/ensure-deps" nginx-light time libcurl4-openssl-dev python3-venv gcc >/dev/null
py=${PY:-$here/.venv/bin/python}
if ! "$py" -c 'import pycurl, orjson, msgspec' 2>/dev/null; then
    [ -x "$py" ] || python3 -m venv "$here/.venv"
    "$here/.venv/bin/pip" install -q orjson msgspec >&2
    "$here/.venv/bin/pip" install -q --no-binary pycurl pycurl >&2
    py=$here/.venv/bin/python
fi
data=${TRAWL_PEERS_DATA:-/tmp/trawl-peers-data}
for kind in $kinds; do
    d=$data/$kind-$pages
    [ -s "$d/all.count" ] || { echo "generating $d (once)" >&2; python3 "$here/py/gen_pages.py" "$d" "$pages" 100 "$kind"; }
done
work=$(mktemp -d /tmp/trawl-walk-fetch.XXXXXX)  # on disk: fetch's fsyncs are real
. "$here/nginx.sh"
trap 'nginx_stop "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/www" "$work/logs"
floor=$work/curl_multi_floor
gcc -O2 -o "$floor" "$here/curl_multi_floor.c" $(pkg-config --cflags --libs libcurl)
for kind in $kinds; do ln -s "$data/$kind-$pages" "$work/www/$kind"; done
chmod -R a+rX "$work" "$data"
nginx_start "$work" '        location ~ ^/(walk|rich)/page$ { try_files /$1/page-$arg_page.json =404; }'
base="http://127.0.0.1:$nginx_port"
for kind in $kinds; do nginx_wait "$base/$kind/page?page=$pages"; done
out=${OUT:-$here/results/walk-fetch-peers.txt}
rows=$work/rows
: > "$rows"
# row ROUND KIND CLIENT ITEMS ITEMS_PER_S: appends a row with the CPU of the last /usr/bin/time
row() {
    local wall user sys
    read -r wall user sys < "$work/time"
    echo "$1 $2 $3 $wall $user $sys $4 $5" >> "$rows"
}
for rd in $(seq 1 "$rounds"); do
    for kind in $kinds; do
        n=$(cat "$data/$kind-$pages/all.count")
        u="$base/$kind/page"
        rm -rf "$work/out"; mkdir "$work/out"
        /usr/bin/time -f "%e %U %S" -o "$work/time" "$trawl" fetch --url "$u" --items items --paginate page \
            --total-pages total_pages -c $conc --per-host $conc -o "$work/out/items.jsonl" -q
        got=$(wc -l < "$work/out/items.jsonl")
        [ "$got" = "$n" ] || { echo "error: trawl fetch wrote $got lines of $n ($kind)" >&2; exit 1; }
        row "$rd" "$kind" fetch "$n" "$(awk -v n="$n" '{print n / $1}' "$work/time")"
        rm -rf "$work/out"
        for parser in orjson msgspec; do
            line=$(PYTHONDONTWRITEBYTECODE=1 /usr/bin/time -f "%e %U %S" -o "$work/time" \
                "$py" "$here/py/walk.py" pycurl "$u" $conc $parser "$kind")
            read -r items rate errors <<<"$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["items"], r["items_per_s"], r["errors"])' "$line")"
            [ "$errors" = 0 ] && [ "$items" = "$n" ] || { echo "error: $parser peer: $line" >&2; exit 1; }
            row "$rd" "$kind" "pycurl-$parser" "$n" "$rate"
        done
        /usr/bin/time -f "%e %U %S" -o "$work/time" "$trawl" extract --path items "$data/$kind-$pages/all.json" \
            > "$work/extract.jsonl"
        got=$(wc -l < "$work/extract.jsonl"); rm -f "$work/extract.jsonl"
        [ "$got" = "$n" ] || { echo "error: trawl extract wrote $got lines of $n ($kind)" >&2; exit 1; }
        row "$rd" "$kind" extract "$n" "$(awk -v n="$n" '{print n / $1}' "$work/time")"
        FLOOR_CONC=$conc /usr/bin/time -f "%e %U %S" -o "$work/time" "$floor" "$u?page=1" "$pages" > /dev/null
        row "$rd" "$kind" floor "$n" "$(awk -v n="$n" '{print n / $1}' "$work/time")"
    done
done
{
    echo "# walk-fetch.sh $rounds $pages: $(date -u +%FT%TZ), $("$trawl" --version 2>/dev/null | head -1) (commit $(git -C "$root" rev-parse --short HEAD)),"
    echo "# $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# $pages pages x 100 items per data set, $conc in flight, nginx 1 worker; cpu = user + sys of the process"
    echo "round kind client wall_s user_s sys_s items items_per_s"
    cat "$rows"
    python3 - "$rows" <<'PY'
import sys, collections
rows = [l.split() for l in open(sys.argv[1])]
by = collections.defaultdict(dict)  # (kind, round) -> client -> (items/s, cpu us/item)
for rd, kind, client, wall, user, sys_, items, rate in rows:
    by[(kind, rd)][client] = (float(rate), (float(user) + float(sys_)) / int(items) * 1e6)
def stat(values, fmt):
    values = sorted(values)
    return f"{fmt.format(values[len(values) // 2])} ({fmt.format(values[0])}-{fmt.format(values[-1])})"
for kind in sorted({k for k, _ in by}, key=lambda k: k != "walk"):
    rounds = [r for (k, _), r in sorted(by.items()) if k == kind]
    print(f"# {kind}: median (range) over {len(rounds)} rounds")
    for client in ("fetch", "pycurl-orjson", "pycurl-msgspec", "extract", "floor"):
        rates = [r[client][0] for r in rounds]
        cpus = [r[client][1] for r in rounds]
        print(f"#   {client:15} {stat(rates, '{:,.0f}')} items/s, CPU {stat(cpus, '{:.2f}')} us/item")
    for peer in ("pycurl-orjson", "pycurl-msgspec"):
        print(f"#   fetch / {peer} items/s: {stat([r['fetch'][0] / r[peer][0] for r in rounds], '{:.2f}x')}")
    print(f"#   fetch CPU per item / extract's: {stat([r['fetch'][1] / r['extract'][1] for r in rounds], '{:.2f}x')}")
    least = [(r['floor'][1] + r['extract'][1]) / r['extract'][1] for r in rounds]
    print(f"#   (floor + extract) CPU per item / extract's: {stat(least, '{:.2f}x')} (the least a fetch can cost)")
PY
} > "$out"
cat "$out"
