"""First launch of a new process: compiled from cold against loaded from the persistent cache.

Each run starts a fresh interpreter that imports gpujit, defines the vector
add of examples/vector_add.py with ``cache=True`` and times its first launch
(1,024 float32 values: the launch itself is negligible, so the time is the
code view, the compile or the cache lookup and load, and the JIT or module
load).  On a GPU the context is created before the timer starts, so both
columns leave out cuInit.  "cold" runs use an empty cache directory each;
"cached" runs share one filled by a first run.  The medians of several runs
are printed, with the second launch of the same process for scale, and each
run checks its result against NumPy.

    python -P benchmarks/bench_cache.py [--target cpu|cuda] [--runs 7]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import json, time
t0 = time.perf_counter()
import numpy as np
import gpujit
gpujit.synchronize()   # a GPU's context, outside the timed launch
t1 = time.perf_counter()

@gpujit.jit(cache=True)
def vector_add(a, b, out):
    i = gpujit.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]

rng = np.random.default_rng()
a = rng.random(1024, dtype=np.float32)
b = rng.random(1024, dtype=np.float32)
out = np.full_like(a, np.nan)
t2 = time.perf_counter()
vector_add[4, 256](a, b, out)
t3 = time.perf_counter()
vector_add[4, 256](a, b, out)
t4 = time.perf_counter()
assert (out == a + b).all()
info = gpujit.cache_info()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "first_ms": (t3 - t2) * 1e3,
                  "second_ms": (t4 - t3) * 1e3, "hits": info["hits"],
                  "misses": info["misses"]}))
"""


def run(target, cache_dir):
    env = dict(os.environ, GPUJIT_TARGET=target, GPUJIT_CACHE_DIR=cache_dir)
    env.pop("GPUJIT_CACHE", None)
    proc = subprocess.run([sys.executable, "-P", "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"the child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cold = []
        for i in range(args.runs):
            cold.append(run(args.target, os.path.join(tmp, f"cold{i}")))
        shared = os.path.join(tmp, "shared")
        run(args.target, shared)   # fills it
        cached = [run(args.target, shared) for _ in range(args.runs)]
    assert all(r["misses"] == 1 and r["hits"] == 0 for r in cold)
    assert all(r["hits"] == 1 and r["misses"] == 0 for r in cached)
    print(f"target {args.target}, median of {args.runs} processes each (ms)")
    print(f"{'':8} {'first launch':>13} {'second launch':>14} {'import':>8}")
    for name, rows in (("cold", cold), ("cached", cached)):
        med = {k: statistics.median(r[k] for r in rows) for k in ("first_ms", "second_ms",
                                                                  "import_ms")}
        print(f"{name:8} {med['first_ms']:13.2f} {med['second_ms']:14.3f} "
              f"{med['import_ms']:8.1f}")


if __name__ == "__main__":
    main()
