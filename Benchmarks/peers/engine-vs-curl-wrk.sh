#!/usr/bin/env bash
# Engine throughput against its peers, measured side by side in one run on this machine:
#   trawl bench -c 64 (its default --loops auto: one loop thread per core, at most 4; and --loops 1)  vs  curl --parallel --parallel-max 64 (same libcurl)
#   vs  wrk -c 64 -t 2 (ceiling)  vs  a plain C curl_multi_wait loop (the single-thread libcurl floor)
# over nginx on loopback serving a ~600-byte JSON file, in interleaved rounds (the machines are noisy;
# compare the per-round ratios, not absolute numbers). Also reports client CPU per request and the
# peak RSS of `trawl get` streaming a 1 GB body to a consumer that reads slowly (--limit-rate).
#
# Usage: Benchmarks/peers/engine-vs-curl-wrk.sh [ROUNDS] [REQUESTS]
# The report (stdout) is also written to Benchmarks/peers/results/engine-vs-curl-wrk.txt, with the date and
# the commit measured: docs/benchmarks.md's engine numbers quote that file.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
requests=${2:-50000}
exec > >(tee Benchmarks/peers/results/engine-vs-curl-wrk.txt)
echo "# Benchmarks/peers/engine-vs-curl-wrk.sh $rounds $requests, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo ' with uncommitted changes to Sources')"

scripts/ensure-deps nginx-light wrk time curl gcc >/dev/null
swift build -c release --product trawl >&2
trawl=$PWD/.build/release/trawl
floor_bin=$(mktemp /tmp/curl-multi-floor.XXXXXX)
gcc -O2 -o "$floor_bin" Benchmarks/peers/curl_multi_floor.c $(pkg-config --cflags --libs libcurl)

work=$(mktemp -d /tmp/trawl-bench.XXXXXX)
mkdir -p "$work/www" "$work/logs"
python3 - "$work/www/small.json" <<'PY'
import json, sys
items = [{"id": 1000 + i, "name": f"item-{i}", "active": i % 2 == 0, "score": i * 1.5,
          "tags": ["alpha", "beta"]} for i in range(6)]
doc = json.dumps({"items": items, "next_cursor": "abc123", "total_count": 6})
open(sys.argv[1], "w").write(doc)
print(f"small.json: {len(doc)} bytes", file=sys.stderr)
PY
truncate -s 1G "$work/www/big.bin"
chmod -R a+rX "$work"  # nginx workers drop root
. Benchmarks/peers/nginx.sh
nginx_start "$work" '        location /s/ { try_files /small.json =404; }'
trap 'nginx_stop "$work"; rm -rf "$work" "$floor_bin"' EXIT
base="http://127.0.0.1:$nginx_port"
nginx_wait "$base/s/1"

ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }
cpu_us() {  # user+sys microseconds of a finished command from /usr/bin/time output
    awk '/User time/ {u=$4} /System time/ {s=$4} END {printf "%.0f", (u+s)*1e6}' "$1"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "versions: $($trawl --help >/dev/null && echo trawl) · $(curl --version | head -1 | cut -d' ' -f1-2) · $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2) · nginx $(nginx -v 2>&1 | cut -d/ -f2)"
echo "workload: GET $(stat -c %s "$work/www/small.json")-byte JSON, HTTP/1.1 keep-alive, 64 concurrent, $requests requests per client, $rounds rounds"
printf "%-6s %10s %10s %10s %10s %10s %8s %8s %8s %8s %9s %9s %9s %9s\n" round trawl_rps t1_rps curl_rps wrk_rps floor_rps \
    "t/curl" "t/wrk" "t1/curl" "t1/wrk" t_us/req t1_us/req c_us/req f_us/req
for r in $(seq 1 "$rounds"); do
    /usr/bin/time -v -o "$work/t.time" "$trawl" bench -c 64 -n "$requests" --json "$base/s/a" > "$work/t.json"
    t_rps=$(python3 -c "import json;print(round(json.load(open('$work/t.json'))['requests_per_s']))")
    t_cpu=$(( $(cpu_us "$work/t.time") / requests ))

    /usr/bin/time -v -o "$work/t1.time" "$trawl" bench -c 64 --loops 1 -n "$requests" --json "$base/s/a" > "$work/t1.json"
    t1_rps=$(python3 -c "import json;print(round(json.load(open('$work/t1.json'))['requests_per_s']))")
    t1_cpu=$(( $(cpu_us "$work/t1.time") / requests ))

    start=$(date +%s.%N)
    /usr/bin/time -v -o "$work/c.time" curl -s --no-progress-meter --parallel --parallel-max 64 -o /dev/null "$base/s/[1-$requests]" 2>/dev/null
    end=$(date +%s.%N)
    c_rps=$(python3 -c "print(round($requests / ($end - $start)))")
    c_cpu=$(( $(cpu_us "$work/c.time") / requests ))

    w_rps=$(wrk -c 64 -t 2 -d 5s "$base/s/a" | awk '/Requests\/sec/ {printf "%.0f", $2}')
    read -r f_rps f_cpu < <("$floor_bin" "$base/s/a" "$requests" | awk '{printf "%.0f %.1f\n", $5, $7}')
    printf "%-6s %10s %10s %10s %10s %10s %8s %8s %8s %8s %9s %9s %9s %9s\n" "$r" "$t_rps" "$t1_rps" "$c_rps" "$w_rps" \
        "$f_rps" "$(ratio "$t_rps" "$c_rps")" "$(ratio "$t_rps" "$w_rps")" "$(ratio "$t1_rps" "$c_rps")" \
        "$(ratio "$t1_rps" "$w_rps")" "$t_cpu" "$t1_cpu" "$c_cpu" "$f_cpu"
done
# The loop threads trawl bench chose (--loops auto), as it reports them.
echo "trawl: $(python3 -c "import json;print(json.load(open('$work/t.json'))['loops'])") loop thread(s) (--loops auto); t1: --loops 1"

echo
echo "streaming 1 GB to a consumer reading at 200 MB/s (back-pressure pauses the transfer):"
/usr/bin/time -v -o "$work/g.time" "$trawl" get "$base/big.bin" -o /dev/null --limit-rate 200000000
awk '/Maximum resident/ {printf "  trawl get peak RSS: %.1f MB\n", $6/1024} /Elapsed/ {print "  elapsed: " $8}' "$work/g.time"
