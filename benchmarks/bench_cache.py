"""First launch of a new process: compiled from cold against loaded from the persistent cache.

Each run starts a fresh interpreter that imports gpujit, defines the vector
add of examples/vector_add.py with ``cache=True`` and times its first launch
(1,024 float32 values: the launch itself is negligible, so the time is the
code view, the compile or the cache lookup and load, and the JIT or module
load).  On a GPU the context is created before the timer starts, so both
columns leave out cuInit.  "cold" runs use an empty cache directory each;
"cached" runs share one filled by a first run.  A second pair of columns
launches another small kernel (not cached) first, so the process's one-time
set-up (LLVM's JIT, the CPU target's worker threads) is out of the timed
launch.  The medians of several runs are printed, and each run checks its
result against NumPy.

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
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import gpujit
gpujit.synchronize()   # a GPU's context, outside the timed launch
t1 = time.perf_counter()

if sys.argv[1] == "warm":   # the JIT and the workers up, outside the timed launch
    @gpujit.jit
    def fill(x):
        i = gpujit.grid(1)
        if i < x.size:
            x[i] = 1
    fill[1, 32](np.zeros(32, np.float32))

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


def run(target, cache_dir, warm):
    env = dict(os.environ, GPUJIT_TARGET=target, GPUJIT_CACHE_DIR=cache_dir)
    env.pop("GPUJIT_CACHE", None)
    proc = subprocess.run([sys.executable, "-P", "-c", CHILD, "warm" if warm else "new"],
                          env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"the child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for warm in (False, True):
            cold = [run(args.target, os.path.join(tmp, f"cold{warm}{i}"), warm)
                    for i in range(args.runs)]
            shared = os.path.join(tmp, f"shared{warm}")
            run(args.target, shared, warm)   # fills it
            cached = [run(args.target, shared, warm) for _ in range(args.runs)]
            assert all(r["misses"] == 1 and r["hits"] == 0 for r in cold)
            assert all(r["hits"] == 1 and r["misses"] == 0 for r in cached)
            for name, runs in (("cold", cold), ("cached", cached)):
                rows.setdefault(name, []).append(statistics.median(r["first_ms"] for r in runs))
                if not warm:
                    rows[name] += [statistics.median(r[k] for r in runs)
                                   for k in ("second_ms", "import_ms")]
    print(f"target {args.target}, median of {args.runs} processes each (ms)")
    print(f"{'':8} {'first launch':>13} {'second launch':>14} {'import':>8} "
          f"{'first launch after a warm-up kernel':>37}")
    for name, (first, second, imp, warm_first) in rows.items():
        print(f"{name:8} {first:13.2f} {second:14.3f} {imp:8.1f} {warm_first:37.2f}")


if __name__ == "__main__":
    main()
