#!/usr/bin/env python3
"""Writes the benchmark document: {"items": [...], "next_cursor": ..., "total_count": N}.

Usage: generate.py OUT [ITEMS]   (default 700000 items, about 100 MB)
Deterministic: the same arguments always give the same bytes.
"""
import random
import sys

out_path = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 700_000
rng = random.Random(42)
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]

with open(out_path, "w", encoding="utf-8") as out:
    out.write('{"meta":{"page":1,"items":"decoy"},"items":[')
    for i in range(count):
        if i:
            out.write(",")
        tags = ",".join('"%s"' % rng.choice(words) for _ in range(rng.randint(1, 2)))
        out.write(
            '{"id":%d,"name":"Item %d \u00e9t\u00e9","price":%d.%02d,"tags":[%s],"active":%s,'
            '"created_at":"2024-%02d-%02d","score":%.3f,"owner":{"id":%d}}'
            % (
                10_000_000_000 + i, i, rng.randint(0, 9999), rng.randint(0, 99), tags,
                "true" if rng.random() < 0.5 else "false",
                rng.randint(1, 12), rng.randint(1, 28),
                rng.random(), rng.randint(0, 99999),
            )
        )
    out.write('],"next_cursor":"c-%d","total_count":%d}\n' % (count, count))
