"""walk.py CLIENT URL CONCURRENCY [PARSER]

Walks a page-numbered listing ({"items":[...],"total_pages":T}; `page=P` appended to URL): page 1 first for T,
then pages 2..T with CONCURRENCY requests in flight. Every page is parsed whole (PARSER: json = json.loads, the
default; orjson = orjson.loads) and each item is built into a typed record (a slotted dataclass), the Python
counterpart of decoding into a Swift struct. CLIENT: aiohttp (asyncio) or pycurl (CurlMulti on the system
libcurl, handles reused). Prints one JSON line.
"""
import asyncio
import json
import sys
import time
from dataclasses import dataclass


@dataclass(slots=True)
class Owner:
    id: int


@dataclass(slots=True)
class Item:
    id: int
    name: str
    tag: str
    score: float
    created_at: str
    active: bool
    owner: Owner


def make_parser(name):
    if name == "orjson":
        import orjson
        return orjson.loads
    return json.loads


def records(doc):
    return [Item(d["id"], d["name"], d["tag"], d["score"], d["created_at"], d["active"], Owner(d["owner"]["id"]))
            for d in doc["items"]]


class Tally:
    def __init__(self):
        self.pages = self.items = self.errors = self.checksum = 0
        self.first_error = ""

    def add(self, items):
        self.pages += 1
        self.items += len(items)
        for item in items:
            self.checksum = (self.checksum + (item.id & 0xFF)) & 0xFFFFFFFF


def walk_aiohttp(url, concurrency, parse, tally):
    import aiohttp

    sep = "&" if "?" in url else "?"

    async def main():
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            async def page(p):
                for _ in range(3):
                    try:
                        async with session.get(f"{url}{sep}page={p}") as response:
                            body = await response.read()
                            if response.status != 200:
                                raise RuntimeError(f"status {response.status}")
                            doc = parse(body)
                            tally.add(records(doc))
                            return doc
                    except Exception as error:
                        tally.first_error = tally.first_error or repr(error)
                tally.errors += 1
                return {}

            first = await page(1)
            queue = iter(range(2, int(first.get("total_pages", 1)) + 1))

            async def worker():
                for p in queue:
                    await page(p)

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    asyncio.run(main())


def walk_pycurl(url, concurrency, parse, tally):
    import pycurl

    sep = "&" if "?" in url else "?"
    multi = pycurl.CurlMulti()
    handles = []
    for _ in range(concurrency):
        c = pycurl.Curl()
        c.buf = bytearray()
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.WRITEFUNCTION, c.buf.extend)
        handles.append(c)

    def run(pages):
        pending = list(reversed(pages))
        free = list(handles)
        first_doc = None
        active = 0
        while pending or active:
            while pending and free:
                c, p = free.pop(), pending.pop()
                c.page = p
                del c.buf[:]
                c.setopt(pycurl.URL, f"{url}{sep}page={p}")
                multi.add_handle(c)
                active += 1
            while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
                pass
            while True:
                queued, ok, failed = multi.info_read()
                for c in ok:
                    multi.remove_handle(c)
                    active -= 1
                    free.append(c)
                    if c.getinfo(pycurl.RESPONSE_CODE) != 200:
                        tally.errors += 1
                        tally.first_error = tally.first_error or f"status {c.getinfo(pycurl.RESPONSE_CODE)}"
                        continue
                    doc = parse(bytes(c.buf))
                    tally.add(records(doc))
                    first_doc = first_doc or doc
                for c, _, message in failed:
                    multi.remove_handle(c)
                    active -= 1
                    free.append(c)
                    tally.errors += 1
                    tally.first_error = tally.first_error or message
                if queued == 0:
                    break
            if active:
                multi.select(0.1)
        return first_doc or {}

    first = run([1])
    run(list(range(2, int(first.get("total_pages", 1)) + 1)))


def main():
    client, url, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
    parser_name = sys.argv[4] if len(sys.argv) > 4 else "json"
    parse = make_parser(parser_name)
    tally = Tally()
    t0 = time.perf_counter()
    {"aiohttp": walk_aiohttp, "pycurl": walk_pycurl}[client](url, concurrency, parse, tally)
    seconds = time.perf_counter() - t0
    print(json.dumps({"client": f"{client}+{parser_name}", "pages": tally.pages, "items": tally.items,
                      "errors": tally.errors, "first_error": tally.first_error, "checksum": tally.checksum,
                      "seconds": seconds, "items_per_s": tally.items / seconds}))


if __name__ == "__main__":
    main()
