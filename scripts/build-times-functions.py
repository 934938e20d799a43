"""Reads `swift-frontend -Xllvm -sil-print-pass-name` output on stdin as it is printed and writes, per SIL
function, the seconds the optimizer spent on it (the time from one pass's line to the next) and the number of pass
runs, as `MODULE<TAB>SECONDS<TAB>RUNS<TAB>FUNCTION` lines for the 40 slowest. Used by scripts/build-times."""
import sys
import time

module = sys.argv[1]
seconds: dict[str, float] = {}
runs: dict[str, int] = {}
current = None
last = time.monotonic()
for line in sys.stdin:
    now = time.monotonic()
    if current is not None:
        seconds[current] = seconds.get(current, 0.0) + (now - last)
    last = now
    marker = line.rfind("Function: ")
    # Module passes name no function: their time is nobody's.
    current = line[marker + len("Function: "):].strip() if marker >= 0 and "Run #" in line else None
    if current is not None:
        runs[current] = runs.get(current, 0) + 1
if current is not None:
    seconds[current] = seconds.get(current, 0.0) + (time.monotonic() - last)
for name, value in sorted(seconds.items(), key=lambda item: -item[1])[:40]:
    print(f"{module}\t{value:.3f}\t{runs[name]}\t{name}")
