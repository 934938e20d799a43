#!/usr/bin/env bash
# walk (c) side by side: trawl fetch (release build) against python pycurl + orjson + dataclass, interleaved rounds.
# Needs nginx serving the walk pages at $URL (as compare.sh sets up; SECTIONS=c compare.sh builds everything).
# Usage: Benchmarks/peers/walk-fetch.sh [ROUNDS]; prints wall, user and system seconds per client per round.
U=${URL:-http://127.0.0.1:28123/walk/page}
root=$(cd "$(dirname "$0")/../.." && pwd)
T=${TRAWL:-$root/.build/release/trawl}
PY=$root/Benchmarks/peers/.venv/bin/python
for r in $(seq 1 ${1:-3}); do
  a=$(/usr/bin/time -f "%e %U %S" $T fetch --url "$U" --items items --paginate page --total-pages total_pages -c 16 --per-host 16 -o /tmp/walk.jsonl -q 2>&1 | tail -1); rm -f /tmp/walk.jsonl
  b=$(/usr/bin/time -f "%e %U %S" $PY $root/Benchmarks/peers/py/walk.py pycurl "$U" 16 orjson 2>&1 >/tmp/walkpy.out | tail -1)
  echo "round $r fetch(wall user sys)=$a  pycurl+orjson(wall user sys)=$b  py-self=$(cat /tmp/walkpy.out | head -c 200)"
done
