#!/usr/bin/env bash
# Small requests, side by side in interleaved rounds: `trawl bench` (its default --loops auto, and --loops 1)
# against wrk (the load-generator ceiling) and the plain C curl_multi loop (curl_multi_floor.c: the same libcurl,
# no Swift, no recording: the floor of what one loop thread over libcurl costs). nginx (one worker) serves a
# 591-byte JSON file on loopback; every client runs 64 in flight on the same cores as nginx.
#
# Usage: Benchmarks/peers/bench-wrk-floor.sh [ROUNDS=3] [REQUESTS=100000]
#   TRAWL=PATH  the trawl binary (default .build/release/trawl: swift build -c release --product trawl)
#   OUT=FILE    where the report goes (default results/bench-wrk-floor.txt, the committed run)
#   WRK_SECS=N  how long wrk runs per round (default 4)
# requests/s of trawl bench and the floor: REQUESTS / the wall time of the whole process, timed from outside
# (/usr/bin/time), start-up included; wrk's from its own report. CPU per request: user + system of the process /
# REQUESTS, start-up included (trawl's is 30-40 ms of CPU, the C loop's under 10: 1 us per request over 30k
# requests, hence 100k by default); trawl bench's own figure (cpu_us_per_request in its JSON: the measured requests
# only, without start-up and the report) is shown beside it. trawl bench keeps every recording feature it has on
# (latency histograms, phases, per-interval rows; --json is written). The report: one row per round, each round's
# ratios, then medians and ranges.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-3}; requests=${2:-100000}; conc=64; wrk_secs=${WRK_SECS:-4}
trawl=${TRAWL:-$root/.build/release/trawl}
[ -x "$trawl" ] || { echo "error: no trawl binary at $trawl: run 'swift build -c release --product trawl' or set TRAWL" >&2; exit 1; }
out=${OUT:-$here/results/bench-wrk-floor.txt}
"$root/scripts/ensure-deps" nginx-light wrk time curl gcc libcurl4-openssl-dev >/dev/null
. "$here/nginx.sh"
work=$(mktemp -d /tmp/trawl-bench-wrk-floor.XXXXXX)
trap 'nginx_stop "$work"; rm -rf "$work"' EXIT
floor=$work/curl_multi_floor
gcc -O2 -o "$floor" "$here/curl_multi_floor.c" $(pkg-config --cflags --libs libcurl)
mkdir -p "$work/www"
python3 - "$work/www/small.json" <<'PY'
import json, sys
items = [{"id": 1000 + i, "name": f"item-{i}", "active": i % 2 == 0, "score": i * 1.5,
          "tags": ["alpha", "beta"]} for i in range(6)]
open(sys.argv[1], "w").write(json.dumps({"items": items, "next_cursor": "abc123", "total_count": 6}))
PY
chmod -R a+rX "$work"
nginx_start "$work" '        location /s/ { try_files /small.json =404; }'
url="http://127.0.0.1:$nginx_port/s/a"
nginx_wait "$url"

rows=$work/rows
: > "$rows"
timed() {  # timed NAME COMMAND...: runs COMMAND under /usr/bin/time, leaves "wall user sys" in $work/NAME.time
    local name=$1
    shift
    /usr/bin/time -f "%e %U %S" -o "$work/$name.time" "$@"
}
for rd in $(seq 1 "$rounds"); do
    wrk_rps=$(wrk -c $conc -t 2 -d "${wrk_secs}s" "$url" | awk '/Requests\/sec/ {print $2}')
    timed trawl "$trawl" bench "$url" -c $conc -n "$requests" --json > "$work/trawl.json"
    timed loops1 "$trawl" bench "$url" -c $conc -n "$requests" --loops 1 --json > "$work/loops1.json"
    timed floor "$floor" "$url" "$requests" > "$work/floor.out"
    for name in trawl loops1; do  # every request answered 200, none failed
        python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
if r["failed"] or r["statuses"] != {"200": n}: raise SystemExit("error: trawl bench: %s %s" % (r["errors"], r["statuses"]))' \
            "$work/$name.json" "$requests"
    done
    own() { python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["cpu_us_per_request"], 2))' "$1"; }
    echo "$rd $wrk_rps $(cat "$work/trawl.time") $(cat "$work/loops1.time") $(cat "$work/floor.time")" \
        "$(own "$work/trawl.json") $(own "$work/loops1.json")" >> "$rows"
done
{
    echo "# bench-wrk-floor.sh $rounds $requests: $(date -u +%FT%TZ), commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- Sources || echo ' with uncommitted changes to Sources')"
    echo "# $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# nginx 1 worker, a $(stat -c %s "$work/www/small.json")-byte JSON file, $conc in flight; wrk -c $conc -t 2 -d ${wrk_secs}s;"
    echo "# trawl bench URL -c $conc -n $requests --json [--loops 1]; curl_multi_floor URL $requests; times: wall user sys (s)"
    echo "round wrk_rps trawl_wall trawl_user trawl_sys loops1_wall loops1_user loops1_sys floor_wall floor_user" \
        "floor_sys trawl_own_us loops1_own_us"
    cat "$rows"
    python3 - "$rows" "$requests" <<'PY'
import sys
n = int(sys.argv[2])
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
def stat(values, fmt):
    values = sorted(values)
    return f"{fmt.format(values[len(values) // 2])} ({fmt.format(values[0])}-{fmt.format(values[-1])})"
per_round = []
for rd, wrk, tw, tu, ts, lw, lu, ls, fw, fu, fs, town, lown in rows:
    r = {"wrk": wrk, "trawl": n / tw, "loops1": n / lw, "floor": n / fw,
         "trawl_us": (tu + ts) / n * 1e6, "loops1_us": (lu + ls) / n * 1e6, "floor_us": (fu + fs) / n * 1e6,
         "trawl_own_us": town, "loops1_own_us": lown}
    per_round.append(r)
    print(f"# round {int(rd)}: trawl/wrk {r['trawl'] / wrk:.2f}x, loops1/wrk {r['loops1'] / wrk:.2f}x, "
          f"floor/wrk {r['floor'] / wrk:.2f}x; CPU us/request trawl {r['trawl_us']:.1f}, loops1 "
          f"{r['loops1_us']:.1f}, floor {r['floor_us']:.1f}; loops1/floor CPU {r['loops1_us'] / r['floor_us']:.2f}x")
print(f"# medians (ranges) over {len(rows)} rounds:")
for key in ("wrk", "trawl", "loops1", "floor"):
    print(f"#   {key:7} {stat([r[key] for r in per_round], '{:,.0f}')} requests/s")
for key in ("trawl_us", "loops1_us", "floor_us", "trawl_own_us", "loops1_own_us"):
    print(f"#   {key:9} {stat([r[key] for r in per_round], '{:.1f}')} us CPU per request")
print(f"#   trawl bench / wrk requests/s: {stat([r['trawl'] / r['wrk'] for r in per_round], '{:.2f}x')} (target 0.8x)")
print(f"#   --loops 1 / wrk requests/s: {stat([r['loops1'] / r['wrk'] for r in per_round], '{:.2f}x')}")
print(f"#   --loops 1 / floor CPU per request: "
      f"{stat([r['loops1_us'] / r['floor_us'] for r in per_round], '{:.2f}x')} (target 1.1x); "
      f"without trawl's start-up (its own figure): {stat([r['loops1_own_us'] / r['floor_us'] for r in per_round], '{:.2f}x')}")
PY
} > "$out"
cat "$out"
