"""walk.py CLIENT URL CONCURRENCY [PARSER] [KIND]

Walks a page-numbered listing ({"items":[...],"total_pages":T}; `page=P` appended to URL): page 1 first for T,
then pages 2..T with CONCURRENCY requests in flight. Every page is parsed whole and each item is built into a
typed record, the Python counterpart of decoding into a Swift struct. PARSER: json = json.loads (the default)
or orjson = orjson.loads, each followed by a slotted dataclass per item (and per nested object); msgspec = one
typed `msgspec.json.Decoder(Page)` that builds `msgspec.Struct`s straight from the response bytes (the fastest
typed decoding a Python user would pick). KIND: walk (the default, gen_pages.py's 7-field items) or rich
(gen_pages.py ... rich: 9 fields, a nested object, unicode escapes, a null, an int array). CLIENT: aiohttp
(asyncio) or pycurl (CurlMulti on the system libcurl, handles reused). Prints one JSON line.
"""
import asyncio
import json
import sys
import time
from dataclasses import dataclass
from typing import Optional

import msgspec


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


@dataclass(slots=True)
class RichOwner:
    id: int
    login: str


@dataclass(slots=True)
class RichItem:
    id: int
    name: str
    score: float
    active: bool
    parent: Optional[int]
    tags: list
    owner: RichOwner
    rank: int
    note: str


def walk_records(doc):
    return [Item(d["id"], d["name"], d["tag"], d["score"], d["created_at"], d["active"], Owner(d["owner"]["id"]))
            for d in doc["items"]]


def rich_records(doc):
    return [RichItem(d["id"], d["name"], d["score"], d["active"], d["parent"], d["tags"],
                     RichOwner(d["owner"]["id"], d["owner"]["login"]), d["rank"], d["note"])
            for d in doc["items"]]


# msgspec: Structs for the item and its nested object, one typed Decoder per page type
class MOwner(msgspec.Struct):
    id: int


class MItem(msgspec.Struct):
    id: int
    name: str
    tag: str
    score: float
    created_at: str
    active: bool
    owner: MOwner


class MPage(msgspec.Struct):
    items: list[MItem]
    total_pages: int


class MRichOwner(msgspec.Struct):
    id: int
    login: str


class MRichItem(msgspec.Struct):
    id: int
    name: str
    score: float
    active: bool
    parent: Optional[int]
    tags: list[int]
    owner: MRichOwner
    rank: int
    note: str


class MRichPage(msgspec.Struct):
    items: list[MRichItem]
    total_pages: int


class Page:
    """What every parser hands the walk: the typed items and total_pages."""
    __slots__ = ("items", "total_pages")

    def __init__(self, items, total_pages):
        self.items, self.total_pages = items, total_pages


def make_parser(name, kind):
    """A function from the response body (bytes-like) to a Page of typed items."""
    if name == "msgspec":
        decode = msgspec.json.Decoder({"walk": MPage, "rich": MRichPage}[kind]).decode
        return decode  # its Struct already has .items and .total_pages
    loads = json.loads
    if name == "orjson":
        import orjson
        loads = orjson.loads
    records = {"walk": walk_records, "rich": rich_records}[kind]

    def parse(body):
        doc = loads(body)
        return Page(records(doc), doc.get("total_pages", 1))
    return parse


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
                            tally.add(doc.items)
                            return doc
                    except Exception as error:
                        tally.first_error = tally.first_error or repr(error)
                tally.errors += 1
                return None

            first = await page(1)
            queue = iter(range(2, (first.total_pages if first else 1) + 1))

            async def worker():
                for p in queue:
                    await page(p)

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    asyncio.run(main())


def walk_pycurl(url, concurrency, parse, tally, raw_body=False):
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
                    doc = parse(c.buf if raw_body else bytes(c.buf))
                    tally.add(doc.items)
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
        return first_doc

    first = run([1])
    run(list(range(2, (first.total_pages if first else 1) + 1)))


def main():
    client, url, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
    parser_name = sys.argv[4] if len(sys.argv) > 4 else "json"
    kind = sys.argv[5] if len(sys.argv) > 5 else "walk"
    parse = make_parser(parser_name, kind)
    tally = Tally()
    t0 = time.perf_counter()
    if client == "pycurl":
        # msgspec decodes from any buffer: it reads the bytearray in place, without the bytes() copy
        walk_pycurl(url, concurrency, parse, tally, raw_body=parser_name == "msgspec")
    else:
        walk_aiohttp(url, concurrency, parse, tally)
    seconds = time.perf_counter() - t0
    print(json.dumps({"client": f"{client}+{parser_name}", "kind": kind, "pages": tally.pages, "items": tally.items,
                      "errors": tally.errors, "first_error": tally.first_error, "checksum": tally.checksum,
                      "seconds": seconds, "items_per_s": tally.items / seconds}))


if __name__ == "__main__":
    main()
