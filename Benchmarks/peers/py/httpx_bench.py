"""httpx_bench.py URL CONCURRENCY REQUESTS [--http2] [-k]

GETs URL REQUESTS times from CONCURRENCY asyncio tasks sharing one httpx.AsyncClient (pool of CONCURRENCY
connections; --http2 negotiates HTTP/2 through the h2 package). Prints one JSON line.
"""
import asyncio
import json
import sys
import time

import httpx


async def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    url, concurrency, total = args[0], int(args[1]), int(args[2])
    http2, insecure = "--http2" in sys.argv, "-k" in sys.argv
    tally = {"ok": 0, "errors": 0, "bytes": 0, "first_error": "", "http_version": ""}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(http2=http2, verify=not insecure, limits=limits, timeout=30) as client:
        async def worker(count: int) -> None:
            for _ in range(count):
                try:
                    response = await client.get(url)
                    tally["ok" if response.status_code // 100 == 2 else "errors"] += 1
                    tally["bytes"] += len(response.content)
                    tally["http_version"] = response.http_version
                except Exception as error:  # counted and reported, never fatal
                    tally["errors"] += 1
                    tally["first_error"] = tally["first_error"] or repr(error)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(total // concurrency + (i < total % concurrency))
                               for i in range(concurrency)))
        seconds = time.perf_counter() - t0
    print(json.dumps({"client": "httpx", "requests": total, **tally, "seconds": seconds,
                      "requests_per_s": tally["ok"] / seconds}))


if __name__ == "__main__":
    asyncio.run(main())
