"""pycurl_bench.py URL CONCURRENCY REQUESTS [--http2] [-k]

GETs URL REQUESTS times with CONCURRENCY transfers in flight on one pycurl CurlMulti (the same libcurl as
trawl's engine), reusing easy handles so connections stay alive. Prints one JSON line.
"""
import json
import sys
import time

import pycurl


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    url, concurrency, total = args[0], int(args[1]), int(args[2])
    http2, insecure = "--http2" in sys.argv, "-k" in sys.argv
    multi = pycurl.CurlMulti()
    multi.setopt(pycurl.M_MAX_TOTAL_CONNECTIONS, concurrency)
    buffers = {}
    ok = errors = nbytes = started = done = 0
    first_error = ""

    def make():
        c = pycurl.Curl()
        buf = bytearray()
        buffers[c] = buf
        c.setopt(pycurl.URL, url)
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.WRITEFUNCTION, buf.extend)
        c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2TLS if http2 else pycurl.CURL_HTTP_VERSION_1_1)
        if http2:
            c.setopt(pycurl.PIPEWAIT, 1)
        if insecure:
            c.setopt(pycurl.SSL_VERIFYPEER, 0)
            c.setopt(pycurl.SSL_VERIFYHOST, 0)
        return c

    t0 = time.perf_counter()
    for _ in range(min(concurrency, total)):
        multi.add_handle(make())
        started += 1
    while done < total:
        while True:
            ret, _ = multi.perform()
            if ret != pycurl.E_CALL_MULTI_PERFORM:
                break
        while True:
            queued, ok_list, err_list = multi.info_read()
            finished = [(c, None) for c in ok_list] + [(c, msg) for c, _, msg in err_list]
            for c, msg in finished:
                done += 1
                buf = buffers[c]
                if msg is None and c.getinfo(pycurl.RESPONSE_CODE) // 100 == 2:
                    ok += 1
                else:
                    errors += 1
                    first_error = first_error or (msg or f"status {c.getinfo(pycurl.RESPONSE_CODE)}")
                nbytes += len(buf)
                del buf[:]
                multi.remove_handle(c)
                if started < total:
                    multi.add_handle(c)
                    started += 1
            if queued == 0:
                break
        if done < total:
            wait_ms = multi.timeout()  # libcurl's own timers (e.g. PIPEWAIT on HTTP/2) need their deadline
            multi.select(1.0 if wait_ms < 0 else min(1.0, wait_ms / 1000))
    seconds = time.perf_counter() - t0
    print(json.dumps({"client": "pycurl", "requests": total, "ok": ok, "errors": errors, "bytes": nbytes,
                      "seconds": seconds, "requests_per_s": ok / seconds, "first_error": first_error}))


if __name__ == "__main__":
    main()
