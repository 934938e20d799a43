"""aiohttp_walk.py URL CONCURRENCY

Walks a page-numbered listing (`{"items":[...],"total_pages":T}`, `&page=P` appended to URL): page 1 first
for T, then pages 2..T with CONCURRENCY requests in flight over one aiohttp session, json.loads of every page,
items counted. Prints one JSON line.
"""
import asyncio
import json
import sys
import time

import aiohttp


async def main() -> None:
    url, concurrency = sys.argv[1], int(sys.argv[2])
    sep = "&" if "?" in url else "?"
    tally = {"pages": 0, "items": 0, "errors": 0, "first_error": ""}
    connector = aiohttp.TCPConnector(limit=concurrency)
    t0 = time.perf_counter()
    async with aiohttp.ClientSession(connector=connector) as session:
        async def page(p: int) -> dict:
            for attempt in range(3):
                try:
                    async with session.get(f"{url}{sep}page={p}") as response:
                        body = await response.read()
                        if response.status == 200:
                            doc = json.loads(body)
                            tally["pages"] += 1
                            tally["items"] += len(doc["items"])
                            return doc
                        raise RuntimeError(f"status {response.status}")
                except Exception as error:
                    tally["first_error"] = tally["first_error"] or repr(error)
            tally["errors"] += 1
            return {}

        first = await page(1)
        total_pages = int(first.get("total_pages", 1))
        queue = iter(range(2, total_pages + 1))

        async def worker() -> None:
            for p in queue:
                await page(p)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - t0
    print(json.dumps({"client": "aiohttp+json.loads", **tally, "seconds": seconds,
                      "items_per_s": tally["items"] / seconds}))


if __name__ == "__main__":
    asyncio.run(main())
