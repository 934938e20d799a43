"""gen_items.py PATH MEGABYTES

Writes {"items":[...],"total_count":N,"next_cursor":null} of about MEGABYTES MiB to PATH (elements of ~250
bytes: eight fields, a nested array; a block of 10,000 distinct elements repeated, so that 1 GB is written
in seconds) and the element count N to PATH.count.
"""
import os
import sys

path, mb = sys.argv[1], int(sys.argv[2])
limit = mb * 1024 * 1024
block_items = 10_000
block = ",".join(
    '{"id":%d,"name":"item-%d","tag":"bench","active":%s,"score":%d.%d,'
    '"created_at":"2024-%02d-%02dT12:%02d:%02dZ","tags":["alpha","beta","gamma"],'
    '"description":"a synthetic element of a large JSON document, number %d"}'
    % (i, i, "true" if i % 2 else "false", i % 1000, i % 10, i % 12 + 1, i % 28 + 1, i % 60, (i * 7) % 60, i)
    for i in range(block_items)).encode()
blocks = max(1, (limit - 64) // (len(block) + 1))
with open(path + ".tmp", "wb") as f:
    f.write(b'{"items":[')
    for b in range(blocks):
        if b:
            f.write(b",")
        f.write(block)
    f.write(b'],"total_count":%d,"next_cursor":null}' % (blocks * block_items))
os.replace(path + ".tmp", path)
with open(path + ".count", "w") as f:
    f.write(str(blocks * block_items))
