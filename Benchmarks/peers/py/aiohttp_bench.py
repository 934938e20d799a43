"""aiohttp_bench.py URL CONCURRENCY REQUESTS [-k]

GETs URL REQUESTS times from CONCURRENCY asyncio tasks sharing one aiohttp ClientSession whose connector
allows CONCURRENCY keep-alive connections (aiohttp speaks HTTP/1.1 only). Prints one JSON line.
"""
import asyncio
import json
import sys
import time

import aiohttp


async def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    url, concurrency, total = args[0], int(args[1]), int(args[2])
    insecure = "-k" in sys.argv
    tally = {"ok": 0, "errors": 0, "bytes": 0, "first_error": ""}
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=False if insecure else None)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def worker(count: int) -> None:
            for _ in range(count):
                try:
                    async with session.get(url) as response:
                        body = await response.read()
                        tally["ok" if response.status // 100 == 2 else "errors"] += 1
                        tally["bytes"] += len(body)
                except Exception as error:  # counted and reported, never fatal
                    tally["errors"] += 1
                    tally["first_error"] = tally["first_error"] or repr(error)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(total // concurrency + (i < total % concurrency))
                               for i in range(concurrency)))
        seconds = time.perf_counter() - t0
    print(json.dumps({"client": "aiohttp", "requests": total, **tally, "seconds": seconds,
                      "requests_per_s": tally["ok"] / seconds}))


if __name__ == "__main__":
    asyncio.run(main())
