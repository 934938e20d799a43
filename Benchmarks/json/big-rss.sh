#!/usr/bin/env bash
# Peak RSS on a ~1 GB document (the 100 MB one's items repeated ten times): it should match the
# 100 MB figures, since memory is bounded by the largest element. Usage: Benchmarks/json/big-rss.sh
set -euo pipefail
cd "$(dirname "$0")"
work="${TMPDIR:-/tmp}/trawl-json-bench"
mkdir -p "$work" results
small="$work/items-700000.json"
big="$work/items-7000000.json"
[ -f "$small" ] || python3 generate.py "$small" 700000
[ -f "$big" ] || python3 - "$small" "$big" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
start = data.index(b'"items":[') + len(b'"items":[')
end = data.rindex(b'],"next_cursor"')
with open(sys.argv[2], "wb") as out:
    out.write(data[:start])
    out.write(b",".join([data[start:end]] * 10))
    out.write(data[end:])
PY
swift build -c release --product json-bench >&2
bench="$(swift build -c release --show-bin-path)/json-bench"
{
    echo "file: $big ($(stat -c %s "$big") bytes), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    for mode in extract jsonl decode; do
        line="$(/usr/bin/time -f "peakRSS=%MKB" "$bench" "$mode" "$big" 2>"$work/big.time")"
        echo "$line $(tail -1 "$work/big.time")"
    done
} | tee results/big.txt
