#!/usr/bin/env bash
# What the live views and the per-interval recording of `trawl bench` cost the load generator (each within 3% of
# --quiet). Interleaved rounds over nginx on loopback serving a ~600-byte JSON file, -c 64:
#   quiet     trawl bench --quiet on a pseudo-terminal (`script`): recording on (intervals, phases), no panel
#   panel     trawl bench on the same pseudo-terminal, so the live panel is drawn 4 times a second
#   tui       trawl bench --tui on the same pseudo-terminal: the full live view (histogram, rates, statuses)
#   baseline  (with BASELINE=PATH to a trawl binary built before the recording existed, e.g. commit a771e0b)
# and prints requests/s per round and the ratios panel/quiet and quiet/baseline.
#
# Usage: Benchmarks/bench-cost.sh [ROUNDS] [REQUESTS]      (BASELINE=/path/to/old/trawl, SCRATCH=DIR optional)
# The report (stdout) is also written to Benchmarks/results/bench-cost.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
requests=${2:-200000}
mkdir -p Benchmarks/results
exec > >(tee Benchmarks/results/bench-cost.txt)
echo "# Benchmarks/bench-cost.sh $rounds $requests, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)"

scripts/ensure-deps nginx-light >/dev/null
scratch=${SCRATCH:-$PWD/.build}   # SCRATCH=another build directory, so a debug build can go on meanwhile
swift build -c release --product trawl --scratch-path "$scratch" >&2
trawl=$scratch/release/trawl

work=$(mktemp -d /tmp/trawl-bench-cost.XXXXXX)
. Benchmarks/peers/nginx.sh
mkdir -p "$work/www"
python3 - "$work/www/small.json" <<'PY'
import json, sys
items = [{"id": 1000 + i, "name": f"item-{i}", "active": i % 2 == 0, "score": i * 1.5,
          "tags": ["alpha", "beta"]} for i in range(6)]
open(sys.argv[1], "w").write(json.dumps({"items": items, "next_cursor": "abc123", "total_count": 6}))
PY
chmod -R a+rX "$work"
nginx_start "$work" 'location /s/ { try_files /small.json =404; }'
trap 'nginx_stop "$work"; rm -rf "$work"' EXIT
url="http://127.0.0.1:$nginx_port/s/a"
nginx_wait "$url"

rps_json() { python3 -c "import json,sys;print(round(json.load(open(sys.argv[1]))['requests_per_s']))" "$1"; }
cpu_json() { python3 -c "import json,sys;print(round(json.load(open(sys.argv[1]))['cpu_us_per_request'],1))" "$1"; }
rps_table() { tr -d '\r' <"$1" | awk '$1 == "requests/s" {print $2}'; }
cpu_table() { tr -d '\r' <"$1" | awk '$1 == "client" && $2 == "CPU" {print $3}'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "workload: GET ~600-byte JSON from nginx, -c 64, $requests requests per run, $rounds interleaved rounds"
# On a busy machine requests/s swings with the neighbours; the client's CPU per request (user+sys of the
# process over the measured span) is the steadier measure of what the recording and the panel cost.
printf "%-6s %10s %10s %10s %10s %12s %10s %14s %9s %9s %9s %9s %9s %9s\n" round quiet_rps panel_rps tui_rps \
    base_rps panel/quiet tui/quiet quiet/baseline q_us/req p_us/req t_us/req b_us/req p/q_cpu t/q_cpu
for r in $(seq 1 "$rounds"); do
    # Under the same pseudo-terminal as the panel run: `script` relaying the terminal costs a share of the 2 cores
    # itself, and that is not the panel's cost.
    script -qfec "$trawl bench -c 64 -n $requests --quiet $url" /dev/null >"$work/q.txt"
    q=$(rps_table "$work/q.txt"); qc=$(cpu_table "$work/q.txt")
    script -qfec "$trawl bench -c 64 -n $requests $url" /dev/null >"$work/p.txt"
    grep -q "in flight" "$work/p.txt" || { echo "the panel was not drawn" >&2; exit 1; }
    p=$(rps_table "$work/p.txt"); pc=$(cpu_table "$work/p.txt")
    script -qfec "$trawl bench -c 64 -n $requests --tui $url" /dev/null >"$work/t.txt"
    t=$(rps_table "$work/t.txt"); tc=$(cpu_table "$work/t.txt")
    b="-"; bc="-"
    if [ -n "${BASELINE:-}" ]; then
        "$BASELINE" bench -c 64 -n "$requests" --json "$url" >"$work/b.json"
        b=$(rps_json "$work/b.json"); bc=$(cpu_json "$work/b.json")
    fi
    pq=$(python3 -c "print(f'{$p/$q:.3f}')")
    qb=$([ "$b" = "-" ] && echo "-" || python3 -c "print(f'{$q/$b:.3f}')")
    tq=$(python3 -c "print(f'{$t/$q:.3f}')")
    pqc=$(python3 -c "print(f'{$pc/$qc:.3f}')")
    tqc=$(python3 -c "print(f'{$tc/$qc:.3f}')")
    printf "%-6s %10s %10s %10s %10s %12s %10s %14s %9s %9s %9s %9s %9s %9s\n" "$r" "$q" "$p" "$t" "$b" "$pq" "$tq" \
        "$qb" "$qc" "$pc" "$tc" "$bc" "$pqc" "$tqc"
done
