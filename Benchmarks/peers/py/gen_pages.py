"""gen_pages.py DIR PAGES PER_PAGE [KIND]

Writes DIR/page-P.json for P in 1..PAGES: {"page":P,"per_page":K,"total_pages":PAGES,"total_count":N,
"items":[...]} with K items each, deterministic, for the paginated walk (c). nginx serves them as
/walk/page?page=P. Also writes DIR/all.json: every item of every page in one {"items":[...]} document (what
`trawl extract` reads for the parse-only baseline) and DIR/all.count.

KIND walk (the default): ~110-byte items of 7 fields ({"id","name","tag","score","created_at","active",
"owner":{"id"}}). KIND rich: ~155-byte items of 9 fields: a nested object, unicode text with escapes, a float,
a bool, a null, an int array ({"id","name","score","active","parent","tags","owner":{"id","login"},
"rank","note"}).
"""
import os
import sys

out, pages, per_page = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
kind = sys.argv[4] if len(sys.argv) > 4 else "walk"
NAMES = ("caf\\u00e9", "na\\u00efve", "\\u65e5\\u672c", "r\\u00e9sum\\u00e9", "\\u00fcber")


def walk_item(i):
    return ('{"id":%d,"name":"item-%d","tag":"walk","score":%d.%02d,"created_at":"2024-%02d-%02dT%02d:%02d:00Z",'
            '"active":%s,"owner":{"id":%d}}'
            % (i, i, i % 1000, i % 100, i % 12 + 1, i % 28 + 1, i % 24, i % 60, "true" if i % 3 else "false",
               i % 997))


def rich_item(i):
    return ('{"id":%d,"name":"%s","score":%d.%03d,"active":%s,"parent":null,"tags":[%d,%d,%d],'
            '"owner":{"id":%d,"login":"u%d"},"rank":%d,"note":"a\\"b\\\\c\\n"}'
            % (i, NAMES[i % 5], i % 1000, i % 1000, "true" if i % 3 else "false", i % 7, i % 11, i % 13,
               i % 997, i % 997, i % 100))


make = {"walk": walk_item, "rich": rich_item}[kind]
os.makedirs(out, exist_ok=True)
total = pages * per_page
with open(os.path.join(out, "all.json"), "w") as everything:
    everything.write('{"items":[')
    for p in range(1, pages + 1):
        items = ",".join(make(i) for i in range((p - 1) * per_page, p * per_page))
        doc = '{"page":%d,"per_page":%d,"total_pages":%d,"total_count":%d,"items":[%s]}' % (
            p, per_page, pages, total, items)
        with open(os.path.join(out, "page-%d.json" % p), "w") as f:
            f.write(doc)
        everything.write(("," if p > 1 else "") + items)
    everything.write("]}")
with open(os.path.join(out, "all.count"), "w") as f:
    f.write("%d\n" % total)
