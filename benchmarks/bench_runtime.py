"""The runtime's asynchrony on a GPU, measured with CUDA events: what
tests/runtime/test_streams.py and tests/runtime/test_host_memory.py check, as figures.

overlap   Two Python threads, each launching a one-block kernel of some
          milliseconds on its own stream: each kernel's interval (ms after a
          common origin event) and how much of the shorter one the other
          overlaps (1.0: fully concurrent; 0: one after the other).
copies    Device-to-host copies of 256 MiB into pageable NumPy memory and
          into pinned memory (pinned_array), on a stream: the GPU's time for
          the copy (events) and the host's time for the call; a call much
          shorter than its copy is asynchronous.
zerocopy  A kernel writing a mapped and a managed array in place: the
          host's time for the launch call against the kernel's time.

    python -P benchmarks/bench_runtime.py [--json PATH]

Needs a CUDA GPU (gpujit's cuda target); prints "n/a (reason)" otherwise.
"""
import argparse
import json
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # see _common.py
import gpujit  # noqa: E402

ROUNDS = 2_000_000          # of slow_store's loop: some ms on one block
COPY_BYTES = 256 << 20


@gpujit.jit
def slow_store(out, value, rounds):
    i = gpujit.grid(1)
    acc = np.float32(value)
    for _ in range(rounds):
        acc = acc * np.float32(1.0000001) + np.float32(1e-7)
    if i < out.size:
        out[i] = value + (acc - acc)


def overlap():
    outs = [gpujit.device_array(32, np.float32) for _ in range(2)]
    slow_store[1, 32](outs[0], np.float32(0), 10)   # compiled before timing
    gpujit.synchronize()
    origin = gpujit.event()
    origin.record()
    origin.synchronize()
    spans = [None, None]
    barrier = threading.Barrier(2)

    def work(k):
        s = gpujit.stream()
        begin, end = gpujit.event(), gpujit.event()
        barrier.wait()
        begin.record(s)
        slow_store[1, 32, s](outs[k], np.float32(k + 1), ROUNDS)
        end.record(s)
        s.synchronize()
        spans[k] = (origin.elapsed_time(begin), origin.elapsed_time(end))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not all((outs[k].copy_to_host() == k + 1).all() for k in range(2)):
        return {"error": "WRONG results"}
    (b0, e0), (b1, e1) = spans
    shorter = min(e0 - b0, e1 - b1)
    return {"thread 0 ms": [round(b0, 3), round(e0, 3)],
            "thread 1 ms": [round(b1, 3), round(e1, 3)],
            "overlap of the shorter": round(max(0.0, min(e0, e1) - max(b0, b1)) / shorter, 3)}


def copy_into(host, d, s):
    begin, end = gpujit.event(), gpujit.event()
    begin.record(s)
    t0 = time.perf_counter()
    d.copy_to_host(host, stream=s)
    call_ms = (time.perf_counter() - t0) * 1e3
    end.record(s)
    s.synchronize()
    ok = bool((host == 3).all())
    return {"copy ms": round(begin.elapsed_time(end), 3), "call ms": round(call_ms, 3),
            "GB/s": round(COPY_BYTES / begin.elapsed_time(end) / 1e6, 1), "ok": ok}


def copies():
    n = COPY_BYTES // 4
    d = gpujit.device_array(n, np.float32)
    d[:] = 3.0
    s = gpujit.stream()
    pageable = np.zeros(n, np.float32)
    pinned = gpujit.pinned_array(n, np.float32)
    pinned[:] = 0
    copy_into(pinned, d, s)   # warm-up
    return {"pageable": copy_into(pageable, d, s), "pinned": copy_into(pinned, d, s)}


def zero_copy():
    out = {}
    for kind in ("mapped_array", "managed_array"):
        a = getattr(gpujit, kind)(32, np.float32)
        slow_store[1, 32](a, np.float32(1), 10)
        gpujit.synchronize()
        a[:] = 0
        begin, end = gpujit.event(), gpujit.event()
        begin.record()
        t0 = time.perf_counter()
        slow_store[1, 32](a, np.float32(2), ROUNDS)
        call_ms = (time.perf_counter() - t0) * 1e3
        end.record()
        end.synchronize()
        out[kind] = {"kernel ms": round(begin.elapsed_time(end), 3),
                     "launch call ms": round(call_ms, 3), "ok": bool((a == 2).all())}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", metavar="PATH", help="write the figures to PATH (JSON)")
    opts = parser.parse_args()
    results = {}
    if not gpujit.is_available():
        results["all"] = "n/a (no CUDA GPU)"
    else:
        gpujit.set_target("cuda")
        for name, fn in (("overlap", overlap), ("copies", copies), ("zerocopy", zero_copy)):
            try:
                results[name] = fn()
            except Exception as exc:   # a section that cannot run says why
                results[name] = f"n/a ({type(exc).__name__}: {exc})"
    for name, value in results.items():
        print(f"{name}: {json.dumps(value)}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
