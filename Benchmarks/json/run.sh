#!/usr/bin/env bash
# JSON benchmark: TrawlJSON against raw yajl and Foundation's JSONDecoder on one generated file.
# Usage: Benchmarks/json/run.sh [ITEMS]   (default 700000 items, about 100 MB)
# Prints one line per mode with throughput and peak RSS (from /usr/bin/time -v), and writes
# them to Benchmarks/json/results/latest.txt. Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")"
items="${1:-700000}"
work="${TMPDIR:-/tmp}/trawl-json-bench"
mkdir -p "$work" results
file="$work/items-$items.json"

[ -f "$file" ] || python3 generate.py "$file" "$items"
gcc -O2 -o "$work/yajl_baseline" yajl_baseline.c $(pkg-config --cflags --libs yajl)
rm -f .build/release.yaml  # re-plan, so that new files in the Trawl package are seen
swift build -c release --product json-bench >&2
bench="$(swift build -c release --show-bin-path)/json-bench"

measure() {
    local name="$1"; shift
    local log="$work/$name.time"
    local line
    line="$(/usr/bin/time -v "$@" 2>"$log")"
    local rss_kb
    rss_kb="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")"
    printf '%-11s %s peakRSS=%.1fMB\n' "$name" "$line" "$(echo "$rss_kb / 1024" | bc -l)"
}

{
    echo "file: $file ($(stat -c %s "$file") bytes), $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- ../../Sources || echo ' with uncommitted changes to Sources')"
    for round in 1 2 3; do
        echo "round $round"
        measure yajl-raw "$work/yajl_baseline" "$file"
        measure extract "$bench" extract "$file"
        measure jsonl "$bench" jsonl "$file"
        measure lines "$bench" lines "$file"
        measure decode "$bench" decode "$file"
        measure values "$bench" values "$file"
        measure foundation "$bench" foundation "$file"
    done
} | tee results/latest.txt

# Ratios within each round (this machine's speed drifts between runs), then their medians.
awk '
    / round / { }
    /^yajl-raw/ { split($0, a, "MB/s="); split(a[2], b, " "); yajl = b[1] }
    /^extract/ { split($0, a, "MB/s="); split(a[2], b, " "); ex[++n] = b[1] / yajl }
    /^decode/ { split($0, a, "items/s="); split(a[2], b, " "); dec = b[1] }
    /^foundation/ { split($0, a, "items/s="); split(a[2], b, " "); de[++m] = dec / b[1] }
    function median(v, k,   i, j, t) {
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return v[int((k + 1) / 2)]
    }
    END {
        printf "median extraction / raw yajl: %.2fx (target >= 0.8x)\n", median(ex, n)
        printf "median decode / JSONDecoder items/s: %.1fx (target >= 5x)\n", median(de, m)
    }
' results/latest.txt | tee -a results/latest.txt
