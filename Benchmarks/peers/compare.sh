#!/usr/bin/env bash
# Trawl against its peers, every peer measured in the same run on this machine, in interleaved rounds:
#   (a) 50k GETs of a ~600-byte JSON file, HTTP/1.1 keep-alive, 64 in flight:
#       trawl bench · curl --parallel (same libcurl) · pycurl CurlMulti · aiohttp · httpx (async) ·
#       async-http-client · URLSession (FoundationNetworking) · wrk (ceiling, no parsing)
#   (b) one 1 GB JSON body {"items":[...]} streamed, the elements at `items` counted:
#       trawl extract --count URL (one process) · trawl get | trawl extract --count · raw yajl over the file (C, no
#       callbacks: the parse-speed ceiling) · python ijson (yajl2_c) · python json.loads (buffers) · curl | jq --stream
#   (c) a paginated walk of 10,000 static pages x 100 items (nginx), 16 in flight, items decoded into a struct or
#       record: Trawl's API (Benchmarks/json walk-bench) · trawl fetch (durable JSONL) · trawl bench --items (count
#       only) · python walkers building dataclasses: aiohttp + json.loads, pycurl + json.loads, pycurl + orjson;
#       pycurl + msgspec (typed Structs decoded straight from the bytes)
#   (d) (a) over TLS (self-signed), HTTP/1.1 and HTTP/2 (the peers that speak it)
# nginx (one worker) runs on loopback, on the same two cores as the clients.
# Prints a Markdown table (absolute numbers and each peer's ratio to Trawl within a round) and writes it
# to Benchmarks/peers/results/latest.md. A peer that fails is reported as "failed: reason".
#
# Usage: Benchmarks/peers/compare.sh [--quick] [ROUNDS]
#   --quick: 1 round (unless ROUNDS is given), 10k requests, a 100 MB body, a 2,000-page walk.
#   STREAM_ROUNDS=K runs (b) in the first K rounds (default 1: each 1 GB pass takes minutes).
#   TRAWL_BASE=PATH also runs an older trawl binary's fetch and bench --items in walk (c), in the same rounds.
#   SECTIONS=LETTERS runs only those sections (default abcd), e.g. SECTIONS=c for the walk alone; the table then
#   goes to results/latest-LETTERS.md.
#   PEERS_SWIFT_BUILD=0 skips the Swift peers (reported as not built); PEER_TIMEOUT (s, default 300) per run.
# Installs what it needs: Debian packages (nginx-light, wrk, jq, libcurl4-openssl-dev, libssl-dev), a
# virtualenv at Benchmarks/peers/.venv (aiohttp, httpx[http2], ijson, orjson, msgspec, pycurl built against the system
# libcurl), and builds trawl, walk-bench (Benchmarks/json) and the Swift peers (Benchmarks/peers/swift,
# async-http-client + URLSession).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
rounds=${1:-$([ "$quick" = 1 ] && echo 1 || echo 3)}
if [ "$quick" = 1 ]; then
    requests=10000; big_mb=100; walk_items=200000; wrk_secs=3
else
    requests=50000; big_mb=1024; walk_items=1000000; wrk_secs=5
fi
conc=64
walk_conc=16
peer_timeout=${PEER_TIMEOUT:-300}
sections=${SECTIONS:-abcd}  # SECTIONS=c measures only the paginated walk (the report's other tables are then empty)
stream_rounds=${STREAM_ROUNDS:-1}  # (b) takes minutes per round at 1 GB: by default it runs in round 1 only
export PATH="/opt/swift/usr/bin:$PATH"
t_start=$(date +%s)
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# ---------------------------------------------------------------------------------------------- setup
log "installing Debian packages when missing"
"$root/scripts/ensure-deps" nginx-light wrk jq time curl openssl libssl-dev python3-venv >/dev/null

venv=$here/.venv
py=$venv/bin/python
venv_error=""
setup_venv() {
    if [ ! -x "$py" ]; then python3 -m venv "$venv" || return 1; fi
    "$py" -c 'import aiohttp, httpx, h2, ijson, orjson, msgspec' 2>/dev/null \
        || "$venv/bin/pip" install -q 'aiohttp' 'httpx[http2]' 'ijson' 'orjson' 'msgspec' >&2 || return 1
    # pycurl from source, linked against the system libcurl (the one trawl's engine uses)
    "$py" -c 'import pycurl' 2>/dev/null \
        || "$venv/bin/pip" install -q --no-binary pycurl pycurl >&2 || return 1
}
log "python virtualenv at $venv"
setup_venv || venv_error="virtualenv setup failed (see above)"
pycurl_error=$venv_error
if [ -z "$venv_error" ]; then
    sys_curl=$(curl-config --version | awk '{print $2}')
    pyc=$("$py" -c 'import pycurl; print(pycurl.version)' 2>&1 || true)
    case "$pyc" in
        *"libcurl/$sys_curl"*) ;;
        *) pycurl_error="pycurl is not on the system libcurl $sys_curl: $pyc" ;;
    esac
fi

log "building trawl (release)"
t0=$(date +%s)
(cd "$root" && swift build -c release --product trawl >&2)
trawl=$root/.build/release/trawl
log "building walk-bench (Benchmarks/json, release) and the raw yajl baseline"
(cd "$root/Benchmarks/json" && rm -f .build/release.yaml && swift build -c release --product walk-bench >&2)
walk_bench=$(cd "$root/Benchmarks/json" && swift build -c release --show-bin-path)/walk-bench
yajl_raw=$(mktemp /tmp/trawl-yajl-raw.XXXXXX)
gcc -O2 -o "$yajl_raw" "$root/Benchmarks/json/yajl_baseline.c" $(pkg-config --cflags --libs yajl)
log "building the Swift peers (release)"
swift_error=""
if [ "${PEERS_SWIFT_BUILD:-1}" = 0 ]; then  # for a run while the Swift peers are still building elsewhere
    swift_error="not built (PEERS_SWIFT_BUILD=0)"
else
    (cd "$here/swift" && swift build -c release >&2) || swift_error="swift build of Benchmarks/peers/swift failed"
fi
swift_bin=$here/swift/.build/release
build_secs=$(( $(date +%s) - t0 ))

# ----------------------------------------------------------------------------------------------- data
data=${TRAWL_PEERS_DATA:-/tmp/trawl-peers-data}
mkdir -p "$data"
gen_doc() {  # gen_doc MB: data/big-MBm.json, generated once and reused by later runs
    local f=$data/big-$1m.json
    if [ ! -s "$f" ] || [ ! -s "$f.count" ]; then
        log "generating $f (once; reused by later runs)"
        python3 "$here/py/gen_items.py" "$f" "$1"
    fi
    echo "$f"
}
big=$(gen_doc "$big_mb")
big_items=$(cat "$big.count")
big_bytes=$(stat -c %s "$big")
# jq --stream runs at 1-5 MB/s: it gets a 20 MB document of the same kind of elements
mid=$(gen_doc 20)
mid_items=$(cat "$mid.count")
mid_bytes=$(stat -c %s "$mid")
walk_pages=$((walk_items / 100))
walk_dir=$data/walk-$walk_pages
if [ ! -s "$walk_dir/page-$walk_pages.json" ]; then
    log "generating $walk_pages pages of 100 items in $walk_dir (once; reused by later runs)"
    python3 "$here/py/gen_pages.py" "$walk_dir" "$walk_pages" 100
fi

work=$(mktemp -d /tmp/trawl-peers.XXXXXX)
. "$here/nginx.sh"
cleanup() {
    nginx_stop "$work"
    rm -rf "$work" "$yajl_raw"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/www" "$work/logs"
python3 - "$work/www/small.json" <<'PY'
import json, sys
items = [{"id": 1000 + i, "name": f"item-{i}", "active": i % 2 == 0, "score": i * 1.5,
          "tags": ["alpha", "beta"]} for i in range(6)]
open(sys.argv[1], "w").write(json.dumps({"items": items, "next_cursor": "abc123", "total_count": 6}))
PY
small_bytes=$(stat -c %s "$work/www/small.json")
ln -s "$big" "$work/www/big.json"
ln -s "$mid" "$work/www/mid.json"
ln -s "$walk_dir" "$work/www/walk"
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 2 \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
chmod -R a+rX "$work" "$data"  # nginx workers drop root
port=$((20000 + RANDOM % 20000)); tls1=$((port + 1)); tls2=$((port + 2))
# sendfile only for the large bodies of (b): for 600-byte files it costs nginx a second system call per response,
# which on these two shared cores is taken from the clients being measured.
nginx_port=$port nginx_start "$work" "        listen 127.0.0.1:$tls1 ssl;
        location /s/ { try_files /small.json =404; }
        location ~ ^/(big|mid)\.json\$ { sendfile on; }
        location = /walk/page { try_files /walk/page-\$arg_page.json =404; }" "    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    server {
        listen 127.0.0.1:$tls2 ssl http2;
        root $work/www;
        location /s/ { try_files /small.json =404; }
    }"
base="http://127.0.0.1:$port"
nginx_wait "$base/s/1"
curl -sfk --http2 "https://127.0.0.1:$tls2/s/1" >/dev/null || { echo "error: nginx TLS/h2 listener failed" >&2; exit 1; }
curl -sf "$base/walk/page?page=$walk_pages" >/dev/null || { echo "error: nginx does not serve the walk pages" >&2; exit 1; }

# ------------------------------------------------------------------------------------------ measuring
results=$work/results.jsonl
: > "$results"
tally() { python3 "$here/py/tally.py" "$@"; }
# run_peer WORKLOAD ROUND PEER KIND N CMD...: runs CMD under /usr/bin/time and a timeout, records the result
run_peer() {
    local wl=$1 rd=$2 peer=$3 kind=$4 n=$5 rc=0
    shift 5
    rm -f "$work/time" "$work/time.1" "$work/time.2"
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" timeout "$peer_timeout" "$@" >"$work/out" 2>"$work/err" || rc=$?
    local extra=()
    for f in "$work/time.1" "$work/time.2"; do if [ -s "$f" ]; then extra+=("$f"); fi; done
    tally record "$results" "$wl" "$rd" "$peer" "$kind" "$n" "$rc" "$work/out" "$work/err" "$work/time" ${extra[@]+"${extra[@]}"}
}
# fail_peer WORKLOAD ROUND PEER REASON: records a peer that could not run
fail_peer() {
    echo "$4" > "$work/err"; : > "$work/out"; : > "$work/time"
    tally record "$results" "$1" "$2" "$3" none 0 199 "$work/out" "$work/err" "$work/time"
}
py_peer() {  # py_peer WL RD PEER KIND N SCRIPT ARGS...: a python driver, or failed when the venv is not there
    if [ -n "$venv_error" ]; then fail_peer "$1" "$2" "$3" "$venv_error"; return; fi
    local a=("$@"); run_peer "${a[@]:0:5}" "$py" "$here/py/${a[5]}" "${a[@]:6}"
}
swift_peer() {  # swift_peer WL RD PEER N BINARY ARGS...
    if [ -n "$swift_error" ]; then fail_peer "$1" "$2" "$3" "$swift_error"; return; fi
    local a=("$@"); run_peer "${a[@]:0:3}" json "$4" "$swift_bin/$5" "${a[@]:5}"
}

trawl_loops="?"
slow_n=$((requests / 10))      # aiohttp and URLSession: a fifth to a tenth of trawl's rate
httpx_n=$((requests / 50 > 640 ? requests / 50 : 640))  # httpx: ~100x slower; >= 10 per connection

small_round() {  # small_round WORKLOAD ROUND URL_BASE (h1 | h2)
    local wl=$1 rd=$2 u=$3 proto=$4 tlsflags=() h=()
    case "$u" in https*) tlsflags=(-k) ;; esac
    [ "$proto" = h2 ] && h=(--http2)
    run_peer "$wl" "$rd" "trawl bench" trawl-bench "$requests" \
        "$trawl" bench -c "$conc" -n "$requests" --json ${h[@]+"${h[@]}"} ${tlsflags[@]+"${tlsflags[@]}"} "$u/s/a"
    trawl_loops=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["loops"])' "$work/out" 2>/dev/null \
        || echo "$trawl_loops")  # the loop threads --loops auto chose, as bench reports them
    if [ "$proto" = h1 ]; then  # the default is a loop thread per core; one loop alone, for comparison
        run_peer "$wl" "$rd" "trawl bench --loops 1" trawl-bench "$requests" \
            "$trawl" bench -c "$conc" --loops 1 -n "$requests" --json ${tlsflags[@]+"${tlsflags[@]}"} "$u/s/a"
    fi
    run_peer "$wl" "$rd" "curl --parallel (same libcurl)" curl "$requests" \
        curl -s --no-progress-meter --parallel --parallel-max "$conc" $([ "$proto" = h2 ] && echo --http2 || echo --http1.1) \
        ${tlsflags[@]+"${tlsflags[@]}"} -o /dev/null -w '%{http_code}\n' "$u/s/[1-$requests]"
    if [ -n "$pycurl_error" ]; then fail_peer "$wl" "$rd" "pycurl CurlMulti" "$pycurl_error"; else
        py_peer "$wl" "$rd" "pycurl CurlMulti" json "$requests" pycurl_bench.py "$u/s/a" "$conc" "$requests" \
            ${h[@]+"${h[@]}"} ${tlsflags[@]+"${tlsflags[@]}"}
    fi
    if [ "$proto" = h1 ]; then
        py_peer "$wl" "$rd" "aiohttp" json "$slow_n" aiohttp_bench.py "$u/s/a" "$conc" "$slow_n" ${tlsflags[@]+"${tlsflags[@]}"}
    fi
    py_peer "$wl" "$rd" "httpx (async)" json "$httpx_n" httpx_bench.py "$u/s/a" "$conc" "$httpx_n" \
        ${h[@]+"${h[@]}"} ${tlsflags[@]+"${tlsflags[@]}"}
    swift_peer "$wl" "$rd" "async-http-client" "$requests" ahc-bench "$u/s/a" "$conc" "$requests" \
        ${h[@]+"${h[@]}"} ${tlsflags[@]+"${tlsflags[@]}"}
    if [ -z "${tlsflags[*]:-}" ]; then  # URLSession on Linux cannot skip verification of a self-signed cert
        swift_peer "$wl" "$rd" "URLSession" "$slow_n" urlsession-bench "$u/s/a" "$conc" "$slow_n"
    fi
    if [ "$proto" = h1 ]; then
        run_peer "$wl" "$rd" "wrk -t 2 (ceiling)" wrk 0 wrk -c "$conc" -t 2 -d "${wrk_secs}s" "$u/s/a"
    fi
}

stream_round() {  # stream_round ROUND
    local rd=$1 k="stream:$big_bytes:$big_items"
    run_peer b "$rd" "trawl extract --count URL (one process)" "$k" 0 \
        "$trawl" extract --path items --count "$base/big.json"
    run_peer b "$rd" "raw yajl, no callbacks, over the file (C)" "rate:$big_bytes" 0 "$yajl_raw" "$big"
    run_peer b "$rd" "trawl get | trawl extract --count" "$k" 0 bash -c \
        '/usr/bin/time -f %M -o "$1.1" "$2" get "$3" | /usr/bin/time -f %M -o "$1.2" "$2" extract --path items --count -' \
        _ "$work/time" "$trawl" "$base/big.json"
    py_peer b "$rd" "python ijson (yajl2_c)" "$k" 0 stream_items.py ijson "$base/big.json" items
    py_peer b "$rd" "python json.loads (buffers)" "$k" 0 stream_items.py json "$base/big.json" items
    run_peer b "$rd" "curl | jq --stream (20 MB doc)" "stream:$mid_bytes:$mid_items" 0 bash -c \
        '/usr/bin/time -f %M -o "$1.1" curl -s "$2" | /usr/bin/time -f %M -o "$1.2" jq -n --stream "reduce (inputs | select(.[0][0] == \"items\" and ((length == 1 and (.[0] | length) == 3) or (length == 2 and (.[0] | length) == 2)))) as \$e (0; . + 1)"' \
        _ "$work/time" "$base/mid.json"
}

walk_round() {  # walk_round ROUND
    local rd=$1 u="$base/walk/page"
    run_peer c "$rd" "trawl: Trawl API, items decoded into a struct" json "$walk_items" "$walk_bench" "$u" "$walk_conc"
    run_peer c "$rd" "trawl: Trawl API, the struct through JSONFieldsDecodable" json "$walk_items" "$walk_bench" "$u" \
        "$walk_conc" api-fields
    run_peer c "$rd" "trawl: Trawl API, the struct with @JSONFieldsDecodable (one attribute)" json "$walk_items" \
        "$walk_bench" "$u" "$walk_conc" api-macro
    run_peer c "$rd" "trawl fetch (durable JSONL, no decoding)" "items:$walk_items" 0 "$trawl" fetch --url "$u" \
        --items items --paginate page --total-pages total_pages -c "$walk_conc" --per-host "$walk_conc" \
        -o "$work/walk.jsonl" -q
    rm -f "$work/walk.jsonl"
    run_peer c "$rd" "trawl bench --items (count only)" trawl-bench-items 0 "$trawl" bench "$u" --items items \
        --paginate page --total-pages total_pages -c "$walk_conc" -n "$walk_pages" --json
    if [ -n "${TRAWL_BASE:-}" ]; then  # an older trawl binary, side by side (a refactor must not lose throughput)
        run_peer c "$rd" "trawl fetch, TRAWL_BASE" "items:$walk_items" 0 "$TRAWL_BASE" fetch --url "$u" \
            --items items --paginate page --total-pages total_pages -c "$walk_conc" --per-host "$walk_conc" \
            -o "$work/walk.jsonl" -q
        rm -f "$work/walk.jsonl"
        run_peer c "$rd" "trawl bench --items, TRAWL_BASE" trawl-bench-items 0 "$TRAWL_BASE" bench "$u" \
            --items items --paginate page --total-pages total_pages -c "$walk_conc" -n "$walk_pages" --json
    fi
    py_peer c "$rd" "python aiohttp + json.loads + dataclass" json "$walk_items" walk.py aiohttp "$u" "$walk_conc" json
    if [ -n "$pycurl_error" ]; then fail_peer c "$rd" "python pycurl + json.loads + dataclass" "$pycurl_error"; else
        py_peer c "$rd" "python pycurl + json.loads + dataclass" json "$walk_items" walk.py pycurl "$u" "$walk_conc" json
        py_peer c "$rd" "python pycurl + orjson + dataclass" json "$walk_items" walk.py pycurl "$u" "$walk_conc" orjson
        py_peer c "$rd" "python pycurl + msgspec Structs" json "$walk_items" walk.py pycurl "$u" "$walk_conc" msgspec
    fi
}

setup_secs=$(( $(date +%s) - t_start ))
log "measuring: $rounds round(s), $requests requests per client (aiohttp/URLSession $slow_n, httpx $httpx_n)"
t_measure=$(date +%s)
for rd in $(seq 1 "$rounds"); do
    if [[ $sections == *a* ]]; then
        log "round $rd/$rounds: (a) small JSON, HTTP/1.1"
        small_round a "$rd" "$base" h1
    fi
    if [[ $sections == *d* ]]; then
        log "round $rd/$rounds: (d) TLS HTTP/1.1"
        small_round d1 "$rd" "https://127.0.0.1:$tls1" h1
        log "round $rd/$rounds: (d) TLS HTTP/2"
        small_round d2 "$rd" "https://127.0.0.1:$tls2" h2
    fi
    if [[ $sections != *b* ]]; then
        :
    elif [ "$rd" -le "$stream_rounds" ]; then
        log "round $rd/$rounds: (b) streaming $((big_bytes / 1048576)) MB"
        stream_round "$rd"
    fi
    if [[ $sections == *c* ]]; then
        log "round $rd/$rounds: (c) paginated walk"
        walk_round "$rd"
    fi
done
measure_secs=$(( $(date +%s) - t_measure ))

# --------------------------------------------------------------------------------------------- report
pyver() { [ -z "$venv_error" ] && "$py" -c "$1" 2>/dev/null || echo "n/a"; }
ahc_ver=$(python3 -c "import json,sys
d=json.load(open(sys.argv[1])); pins={p['identity']:p['state'].get('version') for p in d['pins']}
print('async-http-client', pins.get('async-http-client'), '(swift-nio', pins.get('swift-nio'), ', swift-nio-ssl', pins.get('swift-nio-ssl'), ', swift-nio-http2', pins.get('swift-nio-http2') + ')')" \
    "$here/swift/Package.resolved" 2>/dev/null || echo "async-http-client ?")
python3 - "$work/meta.json" <<PY
import json, platform, sys, time, os
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "0")
osname = next((l.split("=", 1)[1].strip().strip('"') for l in open("/etc/os-release") if l.startswith("PRETTY_NAME")), "?")
meta = {
    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    "nproc": os.cpu_count(), "cpu": cpu, "mem": f"{int(mem) / 1048576:.0f} GiB", "kernel": platform.release(),
    "os": osname, "rounds": $rounds, "quick": bool($quick), "walk_items": $walk_items,
    "titles": {"a": "$small_bytes", "b": "$((big_bytes / 1048576)) MB",
               "c": "$walk_pages static pages x 100 items from nginx, $walk_conc in flight"},
    "workload_notes": {
        "a": "$requests requests per client (aiohttp and URLSession $slow_n, httpx $httpx_n: they are much slower; the rate is per request either way). The drivers time their own request loop; curl's rate is over its process's wall time; wrk runs ${wrk_secs} s. CPU is the client's user+sys per request. trawl bench runs its default --loops auto ($trawl_loops loop threads here, like wrk -t 2); the --loops 1 row is one loop thread. nginx serves these small files without sendfile (nginx's own default).",
        "d1": "Self-signed certificate (clients skip verification); the HTTP/1.1 listener offers no h2. URLSession is left out: FoundationNetworking on Linux cannot be told to trust a self-signed certificate.",
        "d2": "One HTTP/2 listener; clients multiplex 64 streams (aiohttp and wrk speak only HTTP/1.1).",
        "b": "Runs in the first $stream_rounds round(s) (STREAM_ROUNDS). Body from nginx over loopback HTTP/1.1. MB/s = body bytes / wall time of the whole command (pipelines: both stages). The raw yajl row parses the same file from the page cache with no callbacks at all: the ceiling for any yajl-based extractor. jq --stream is given a 20 MB document of the same elements: at its rate (1-5 MB/s) 1 GB would take minutes. Peak RSS: max resident set, summed over a pipeline's stages.",
        "c": "Pages are static files (gen_pages.py: page, per_page, total_pages, total_count and 100 items of 7 fields with a nested object) served by nginx as /walk/page?page=P. Each client reads page 1 for total_pages, then the rest with $walk_conc in flight. The decoded rows build one typed value per item (a Swift struct through Decodable, or through JSONFieldsDecodable, Trawl's fastest typed path, with init(fields:) written by hand or by the @JSONFieldsDecodable macro; a Python slotted dataclass) and time their own walk; trawl fetch (every item as durable JSONL, no decoding) and trawl bench --items (items counted as the bodies stream) are timed over the command.",
    },
    "versions": {
        "trawl": "$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo ?) (release build)",
        "swift": "$(swift --version 2>&1 | grep -o 'Swift version [^ ]*' | head -1 | cut -d' ' -f3)",
        "libcurl": "$(curl-config --version | cut -d' ' -f2) (curl CLI $(curl --version | head -1 | cut -d' ' -f2))",
        "pycurl": "$(pyver 'import pycurl; print(pycurl.version)')",
        "python": "$(pyver 'import sys; print(sys.version.split()[0])')",
        "aiohttp": "$(pyver 'import aiohttp; print(aiohttp.__version__)')",
        "httpx": "$(pyver 'import httpx, h2; print(httpx.__version__, "(h2", h2.__version__ + ")")')",
        "ijson": "$(pyver 'import ijson; print(ijson.__version__, "backend", ijson.get_backend("yajl2_c").backend)')",
        "AHC": "$ahc_ver",
        "URLSession": "FoundationNetworking of the Swift toolchain (over the system libcurl too)",
        "nginx": "$(nginx -v 2>&1 | cut -d/ -f2)",
        "wrk": "$(wrk -v 2>&1 | head -1 | cut -d' ' -f2)",
        "jq": "$(jq --version 2>&1)",
    },
    "elapsed": f"{$measure_secs // 60} min {$measure_secs % 60} s measuring",
    "setup": "$setup_secs s (of which builds $build_secs s)",
}
json.dump(meta, open(sys.argv[1], "w"))
PY
mkdir -p "$here/results"
# A run of some sections only writes results/latest-SECTIONS.md, leaving the full table in latest.md.
report=$here/results/latest.md
[ "$sections" = abcd ] || report=$here/results/latest-$sections.md
tally report "$results" "$work/meta.json" | tee "$report"
cp "$results" "$here/results/latest.jsonl"
log "written: $report (raw: results/latest.jsonl)"
