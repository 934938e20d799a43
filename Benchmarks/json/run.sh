#!/usr/bin/env bash
# JSON benchmark: TrawlJSON against raw yajl and Foundation's JSONDecoder on one generated file.
# Usage: Benchmarks/json/run.sh [ITEMS]   (default 700000 items, about 100 MB)
#        BASE_BENCH=PATH adds an older json-bench binary's extract, jsonl and decode to each round
#        OUT=results/NAME.txt writes there instead of results/latest.txt
# Prints one line per mode with throughput and peak RSS (from /usr/bin/time -v), and writes
# them to Benchmarks/json/results/latest.txt. Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")"
items="${1:-700000}"
work="${TMPDIR:-/tmp}/trawl-json-bench"
mkdir -p "$work" results
file="$work/items-$items.json"
out="${OUT:-results/latest.txt}"

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
    local rss_kb cpu
    rss_kb="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")"
    # CPU seconds (user + system): on a shared machine wall time swings with the load, CPU time much less
    cpu="$(awk -F': ' '/User time|System time/ {t += $2} END {printf "%.3f", t}' "$log")"
    printf '%-11s %s cpu=%s peakRSS=%.1fMB\n' "$name" "$line" "$cpu" "$(echo "$rss_kb / 1024" | bc -l)"
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
        measure fields "$bench" fields "$file"
        measure values "$bench" values "$file"
        measure foundation "$bench" foundation "$file"
        if [ -n "${BASE_BENCH:-}" ]; then  # an older json-bench, for a side-by-side comparison
            measure base-extract "$BASE_BENCH" extract "$file"
            measure base-jsonl "$BASE_BENCH" jsonl "$file"
            measure base-decode "$BASE_BENCH" decode "$file"
        fi
    done
} | tee "$out"

# Ratios within each round (this machine's speed drifts between runs), then their medians and ranges, by wall
# time and by CPU time (user + system, steadier when other work shares the cores).
awk '
    function field(line, key,   a, b) { split(line, a, key "="); split(a[2], b, " "); return b[1] }
    /^yajl-raw/ { yw = field($0, "seconds"); yc = field($0, "cpu") }
    /^(extract|lines|jsonl|base-extract|base-jsonl) / {
        k = $1; n[k]++; w[k, n[k]] = yw / field($0, "seconds"); c[k, n[k]] = yc / field($0, "cpu")
    }
    /^decode / { dec = field($0, "items/s"); dcpu = field($0, "cpu") }
    /^foundation / { m++; de[m] = dec / field($0, "items/s") }
    /^fields / { fcpu = field($0, "cpu"); f++; fd[f] = dcpu / fcpu }
    /^base-decode / { b++; bd[b] = field($0, "cpu") / dcpu; bf[b] = field($0, "cpu") / fcpu }
    function stats(arr, key, k,   v, i, j, t) {
        for (i = 1; i <= k; i++) v[i] = arr[key, i]
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return sprintf("%.2fx (%.2f-%.2f)", v[int((k + 1) / 2)], v[1], v[k])
    }
    function stats1(v, k,   i, j, t) {
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return sprintf("%.2fx (%.2f-%.2f)", v[int((k + 1) / 2)], v[1], v[k])
    }
    END {
        split("extract lines jsonl base-extract base-jsonl", modes, " ")
        for (i = 1; i <= 5; i++) if (n[modes[i]] > 0) {
            printf "%-12s / raw yajl: wall %s, CPU %s\n", modes[i], stats(w, modes[i], n[modes[i]]), \
                stats(c, modes[i], n[modes[i]])
        }
        printf "median decode / JSONDecoder items/s: %s (target >= 5x)\n", stats1(de, m)
        if (f > 0) printf "fields (JSONFieldsDecodable) speed-up over decode (CPU time): %s\n", stats1(fd, f)
        if (b > 0) printf "decode speed-up over base (CPU time): %s\n", stats1(bd, b)
        if (b > 0 && f > 0) printf "fields speed-up over base decode (CPU time): %s\n", stats1(bf, b)
    }
' "$out" | tee -a "$out"
