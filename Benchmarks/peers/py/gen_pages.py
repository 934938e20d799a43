"""gen_pages.py DIR PAGES PER_PAGE

Writes DIR/page-P.json for P in 1..PAGES: {"page":P,"per_page":K,"total_pages":PAGES,"total_count":N,
"items":[...]} with K items of ~110 bytes each ({"id","name","tag","score","created_at","active","owner":{"id"}}),
deterministic, for the paginated walk (c). nginx serves them as /walk/page?page=P.
"""
import os
import sys

out, pages, per_page = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(out, exist_ok=True)
total = pages * per_page
for p in range(1, pages + 1):
    items = []
    for i in range((p - 1) * per_page, p * per_page):
        items.append(
            '{"id":%d,"name":"item-%d","tag":"walk","score":%d.%02d,"created_at":"2024-%02d-%02dT%02d:%02d:00Z",'
            '"active":%s,"owner":{"id":%d}}'
            % (i, i, i % 1000, i % 100, i % 12 + 1, i % 28 + 1, i % 24, i % 60, "true" if i % 3 else "false",
               i % 997))
    doc = '{"page":%d,"per_page":%d,"total_pages":%d,"total_count":%d,"items":[%s]}' % (
        p, per_page, pages, total, ",".join(items))
    with open(os.path.join(out, "page-%d.json" % p), "w") as f:
        f.write(doc)
