#!/usr/bin/env python3
"""bench/engine/longest_gpu.py: its search (find_longest) against known boundaries, then --smoke
end to end (the engine on tiny-llama under an emulated 160 MiB device: 3072 tokens run, 4096 do
not). Usage: longest_gpu_test.py SOURCE_DIR SPPLAN_BINARY (a Python with torch: compare_gpu's)."""
import json
import os
import subprocess
import sys
import tempfile

src, spplan = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "bench", "engine"))
import longest_gpu  # noqa: E402


def search(boundary, start, granularity=1024, error_at=None, max_tries=longest_gpu.MAX_TRIES):
    def fits(seq):
        if error_at is not None and seq >= error_at:
            return None
        return seq <= boundary
    return longest_gpu.find_longest(fits, start, granularity, max_tries=max_tries)


# From below and from above (a start within 8x, as the costmodel's guess is), the answer is the
# last multiple of 1024 at or under the boundary, in at most MAX_TRIES distinct tries.
for boundary in (1024, 5000, 40960, 65535, 100000):
    for start in (boundary // 6, boundary // 2, boundary, boundary * 3, boundary * 8):
        fit, miss, tries = search(boundary, start)
        want = boundary // 1024 * 1024
        assert (fit, miss) == (want, want + 1024), (boundary, start, fit, miss, tries)
        assert len(tries) <= longest_gpu.MAX_TRIES and len({s for s, _ in tries}) == len(tries), tries
# Nothing fits: no longest, the shortest miss is one granularity.
fit, miss, tries = search(500, 8192)
assert fit is None and miss == 1024, (fit, miss, tries)
# An error stops the search where it happened; what was learnt before stays.
fit, miss, tries = search(10**6, 4096, error_at=6000)
assert fit == 4096 and miss is None and tries == [(4096, True), (8192, None)], (fit, miss, tries)
# Out of tries before a miss: the longest so far, no miss.
fit, miss, tries = search(10**9, 1024, max_tries=3)
assert fit == 4096 and miss is None and len(tries) == 3, (fit, miss, tries)
print("longest_gpu: find_longest right from 25 starts and in 3 edge cases")

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "longest.jsonl")
    p = subprocess.run([sys.executable, os.path.join(src, "bench", "engine", "longest_gpu.py"), "--smoke", "--spplan",
                        spplan, "--out", out], capture_output=True, text=True, timeout=600)
    print(p.stdout + p.stderr)
    assert p.returncode == 0, "longest_gpu.py --smoke exited %d" % p.returncode
    rows = [json.loads(line) for line in open(out)]
    assert [r["runner"] for r in rows] == ["engine"], rows
    r = rows[0]
    assert (r["longest_seq"], r["first_oom_seq"]) == (3072, 4096), r
    assert [(t["seq"], t["outcome"]) for t in r["tries"]] == [(3072, "ran"), (6144, "out of memory"), (4096, "out of memory")], r["tries"]
    assert r["tries"][0]["peak_allocated_bytes"] <= r["memory_limit_bytes"], r["tries"][0]
print("longest_gpu smoke: tiny-llama 3072 tokens ran, 4096 did not, under 160 MiB")

# A bad value: one line naming the flag, exit 2.
p = subprocess.run([sys.executable, os.path.join(src, "bench", "engine", "longest_gpu.py"), "--memory-gib", "0"],
                   capture_output=True, text=True, timeout=120)
assert p.returncode == 2 and "--memory-gib: value 0.0 is not valid (allowed: a positive number)" in p.stderr, (p.returncode, p.stderr)
print("longest_gpu: --memory-gib 0 refused")
