"""stream_items.py MODE URL KEY

Counts the elements of the array at top-level key KEY of the JSON document at URL.
MODE ijson: streams the body through ijson's yajl2_c backend (falls back to the fastest available backend,
named in the output); MODE json: reads the whole body and json.loads it (buffers everything). Prints one
JSON line.
"""
import json
import sys
import time
import urllib.request


def main() -> None:
    mode, url, key = sys.argv[1], sys.argv[2], sys.argv[3]
    t0 = time.perf_counter()
    with urllib.request.urlopen(url) as response:
        if mode == "ijson":
            import ijson
            try:
                backend = ijson.get_backend("yajl2_c")
            except Exception:
                backend = ijson
            name = getattr(backend, "backend", "?")
            count = sum(1 for _ in backend.items(response, f"{key}.item", buf_size=256 * 1024))
        else:
            name = "json.loads"
            count = len(json.loads(response.read())[key])
    seconds = time.perf_counter() - t0
    print(json.dumps({"mode": mode, "backend": name, "items": count, "seconds": seconds}))


if __name__ == "__main__":
    main()
