#!/usr/bin/env bash
# How long README's first command takes: `trawl demo` (injected faults, whose 429s pause the whole host) and
# `trawl demo --no-faults`, ROUNDS times each, interleaved, on the release build. Prints each run's wall time and
# the job's own "fetched" and "throughput" lines, then the min–max of both modes, and writes the report to
# Benchmarks/demo/results/latest.txt (README's demo numbers quote it). Not part of the test suite.
#
# Usage: Benchmarks/demo/run.sh [ROUNDS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"
scripts/ensure-deps >&2
swift build -c release --product trawl >&2
trawl="$PWD/.build/release/trawl"
work=$(mktemp -d /tmp/trawl-demo-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

exec > >(tee Benchmarks/demo/results/latest.txt)
echo "# Benchmarks/demo/run.sh $rounds, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo ' with uncommitted changes to Sources')"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
    for mode in faults no-faults; do
        flags=(--quiet)
        [ "$mode" = no-faults ] && flags+=(--no-faults)
        start=$(date +%s.%N)
        (cd "$work" && "$trawl" demo "${flags[@]}") > "$work/out.txt"
        end=$(date +%s.%N)
        wall=$(python3 -c "print(f'{$end - $start:.2f}')")
        echo "round $round $mode wall_s=$wall | $(grep -E '^(fetched|throughput|retries):' "$work/out.txt" | tr '\n' '|')"
    done
done | tee "$work/rounds.txt"
python3 - "$work/rounds.txt" <<'PY'
import re, sys
rows = open(sys.argv[1]).read().splitlines()
for mode in ("faults", "no-faults"):
    walls = [float(re.search(r"wall_s=([\d.]+)", r).group(1)) for r in rows if f" {mode} " in r]
    rates = [float(re.search(r"throughput: ([\d.]+) items/s", r).group(1)) for r in rows if f" {mode} " in r]
    print(f"{mode}: wall {min(walls):.2f}-{max(walls):.2f} s, throughput {min(rates):,.0f}-{max(rates):,.0f} items/s"
          f" over {len(walls)} runs")
PY
