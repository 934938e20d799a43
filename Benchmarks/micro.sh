#!/usr/bin/env bash
# Trawl's micro-benchmarks (ordo-one/package-benchmark, malloc counts through its MallocInterposer
# trait: no jemalloc needed on Swift 6.3). A separate package: the main build and CI never build it.
#
#   Benchmarks/micro.sh              run every benchmark, print the tables
#   Benchmarks/micro.sh --check      run every benchmark and compare its p90s with the committed
#                                    Thresholds/ (tolerances in each benchmark's code); exit 1 on a
#                                    regression, 0 when within tolerance or only better
#   Benchmarks/micro.sh --check-mallocs   the same, but only malloc counts are compared (time
#                                    tolerance 100000%): for a busy or different machine
#   Benchmarks/micro.sh --update     run every benchmark and rewrite Thresholds/ from this run
#                                    (commit the result after checking it on a quiet machine)
#   Benchmarks/micro.sh [MODE] -- ARGS   extra arguments for `swift package benchmark`,
#                                    e.g. -- --filter 'LinkHeader.*' or -- --target JSONBenchmarks
set -euo pipefail
cd "$(dirname "$0")"

mode=run
if [ $# -gt 0 ]; then
    case "$1" in
        --check) mode=check; shift ;;
        --check-mallocs) mode=check; export TRAWL_BENCH_TIME_TOLERANCE=100000; shift ;;
        --update) mode=update; shift ;;
        --run) shift ;;
        --) ;;
        -h|--help) sed -n 2,16p "$0"; exit 0 ;;
        *) echo "usage: $0 [--check|--check-mallocs|--update] [-- ARGS]" >&2; exit 2 ;;
    esac
fi
[ "${1:-}" = "--" ] && shift

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
# The main package's build dependencies (libcurl, yajl, pkg-config, ...). package-benchmark's
# MallocInterposer trait replaces jemalloc, so libjemalloc-dev is not needed.
../scripts/ensure-deps

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "swift: $(swift --version 2>&1 | head -1)"
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l > n * 0.75) }'; then
    echo "warning: load average $load on $(nproc) cores: time-based results will be slow and noisy (--check-mallocs checks only malloc counts)" >&2
fi

rm -f .build/release.yaml  # re-plan, so that new files in the Trawl package (a path dependency) are seen
# The plugin builds the benchmark targets (release) itself: a plain `swift build` here would also
# build the main package's CLI and test server, which the benchmarks do not use.

case "$mode" in
    run)
        swift package benchmark --no-progress "$@"
        ;;
    update)
        swift package --allow-writing-to-package-directory benchmark thresholds update --no-progress "$@"
        # package-benchmark 1.38.1 writes the raw 90th percentile of every metric but checks
        # "larger is better" metrics (throughput, MB/s, items/s) at their 10th percentile (its p90
        # for such metrics), so they would always look regressed: keep only the "smaller is better"
        # ones (wall clock, malloc counts, mallocs per 1k items). Time regressions show in wall clock.
        python3 - <<'PY'
import glob, json
for path in glob.glob("Thresholds/*.p90.json"):
    with open(path) as f:
        values = json.load(f)
    kept = {k: v for k, v in values.items() if k not in ("throughput", "MB/s", "items/s")}
    with open(path, "w") as f:
        json.dump(kept, f, indent=2, sort_keys=True)
        f.write("\n")
PY
        ;;
    check)
        # The plugin turns every outcome but "equal" into exit 1, so read the verdict it prints.
        status=0
        log="$(mktemp)"
        swift package benchmark thresholds check --no-progress "$@" 2>&1 | tee "$log" || status=$?
        if grep -q "is WORSE than the defined thresholds" "$log"; then
            echo "micro-benchmarks: REGRESSION against the committed thresholds (see the tables above)" >&2
            status=1
        elif grep -q "is BETTER than the defined thresholds" "$log"; then
            echo "micro-benchmarks: better than the committed thresholds (consider --update)"
            status=0
        elif grep -q "is EQUAL to the defined thresholds" "$log"; then
            echo "micro-benchmarks: within the committed thresholds"
            status=0
        else
            echo "micro-benchmarks: the check did not run to a verdict (exit $status)" >&2
            status=1
        fi
        rm -f "$log"
        exit "$status"
        ;;
esac
