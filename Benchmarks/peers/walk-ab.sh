#!/usr/bin/env bash
# Walk (c) of compare.sh for two trawl binaries only, interleaved round by round: did a change lose throughput on
# the main job? nginx (one worker) serves PAGES static pages of 100 items; each round runs, for each binary,
# `trawl fetch` (durable JSONL) and `trawl bench --items` (count only), 16 in flight, and records wall seconds and
# the client's CPU seconds (user + system, from /usr/bin/time).
#
# Usage: Benchmarks/peers/walk-ab.sh BASE_TRAWL NEW_TRAWL [ROUNDS=3] [PAGES=10000]
# Writes Benchmarks/peers/results/walk-ab.txt (the rows, then each measure's ratio NEW/BASE per round and range).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
base_bin=$1; new_bin=$2; rounds=${3:-3}; pages=${4:-10000}; conc=16
"$root/scripts/ensure-deps" nginx-light time >/dev/null
data=${PEERS_DATA:-/tmp/trawl-peers-data}
walk_dir=$data/walk-$pages
[ -s "$walk_dir/page-$pages.json" ] || python3 "$here/py/gen_pages.py" "$walk_dir" "$pages" 100
work=$(mktemp -d /tmp/trawl-walk-ab.XXXXXX)
. "$here/nginx.sh"
trap 'nginx_stop "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/www" "$work/logs"
ln -s "$walk_dir" "$work/www/walk"
chmod -R a+rX "$work" "$data"
nginx_start "$work" '        location = /walk/page { try_files /walk/page-$arg_page.json =404; }'
url="http://127.0.0.1:$nginx_port/walk/page"
nginx_wait "$url?page=1"
out=$here/results/walk-ab.txt
{
    echo "# walk-ab.sh: $pages pages x 100 items, $conc in flight, $rounds rounds, $(date -u +%FT%TZ), $(nproc) cores,"
    echo "# load $(cut -d' ' -f1-3 /proc/loadavg); base $base_bin; new $new_bin"
    echo "round binary mode wall_s cpu_s items"
} > "$out"
run() {  # run ROUND LABEL BINARY MODE
    local t="$work/time" items
    if [ "$4" = fetch ]; then
        /usr/bin/time -f "%e %U %S" -o "$t" "$3" fetch --url "$url" --items items --paginate page \
            --total-pages total_pages -c $conc --per-host $conc -o "$work/walk.jsonl" -q
        items=$(wc -l < "$work/walk.jsonl"); rm -f "$work/walk.jsonl"
    else
        /usr/bin/time -f "%e %U %S" -o "$t" "$3" bench "$url" --items items --paginate page \
            --total-pages total_pages -c $conc -n "$pages" --json > "$work/bench.json"
        items=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["items"])' "$work/bench.json")
    fi
    read -r wall user sys < "$t"
    echo "$1 $2 $4 $wall $(python3 -c "print(round($user + $sys, 2))") $items" >> "$out"
}
for rd in $(seq 1 "$rounds"); do
    for mode in fetch bench; do
        run "$rd" base "$base_bin" $mode
        run "$rd" new "$new_bin" $mode
    done
done
python3 - "$out" <<'PY' >> "$out"
import sys, collections
rows = [l.split() for l in open(sys.argv[1]) if l[0].isdigit()]
by = collections.defaultdict(dict)
for rd, binary, mode, wall, cpu, items in rows:
    by[(mode, rd)][binary] = (float(wall), float(cpu), int(items))
for mode in ("fetch", "bench"):
    walls, cpus = [], []
    for (m, rd), v in sorted(by.items()):
        if m != mode or "base" not in v or "new" not in v: continue
        walls.append(v["base"][0] / v["new"][0]); cpus.append(v["base"][1] / v["new"][1])
    if walls:
        print(f"# {mode}: throughput new/base {min(walls):.2f}-{max(walls):.2f}x (per round), "
              f"CPU per item base/new {min(cpus):.2f}-{max(cpus):.2f}x")
PY
cat "$out"
