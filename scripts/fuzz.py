#!/usr/bin/env python3
"""Differential fuzzing of gpujit: random kernels checked against CPython.

    python -P scripts/fuzz.py --count 10000 --seed 1 --target cpu
    python -P scripts/fuzz.py --seed 1 --start 4711 --count 1     # replay one kernel

Kernel number k of a seed is the same program on every machine
(tests/fuzz/gen.py).  Each is compiled and launched by gpujit on the
target and run by CPython on NumPy scalars, and every output element is
compared (docs/internals/testing.md, "Differential fuzzing").  Kernels are checked
in child processes (--jobs of them), so a crash or a hang is reported and
the run goes on.  A failing kernel is written to --out/seed<S>-<k>/
(kernel.py, args.pkl, expected.npz and got.npz, outcome.txt), reduced to
a small kernel that fails the same way (reduced.py, also printed), and
the run continues.  The exit status is 1 if any kernel failed.
"""
import argparse
import os
import pickle
import sys
import threading
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import numpy as np                              # noqa: E402

from fuzz.gen import make_program               # noqa: E402
from fuzz.isolate import Isolated               # noqa: E402
from fuzz.reduce import reduce                  # noqa: E402

REPRO = '''
if __name__ == "__main__":
    # Launches the kernel on the arguments of args.pkl and prints its outputs.
    import os
    import pickle
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "args.pkl"), "rb") as f:
        saved = pickle.load(f)
    outs = [np.zeros(shape, dtype) for _, dtype, shape, _ in saved["outputs"]]
    kernel[saved["griddim"], saved["blockdim"]](*[v for _, v, _ in saved["args"]], *outs)
    for (name, *_), out in zip(saved["outputs"], outs):
        print(name, repr(out[:{nthreads}]))
'''


def replay_command(seed, index, target):
    return f"python -P scripts/fuzz.py --seed {seed} --start {index} --count 1 --target {target}"


def module_text(program, header):
    return ("\n".join(f"# {h}" for h in header) + "\nimport math\nimport operator\n\n"
            "import numpy as np\n\n"
            "import gpujit\n\n\n" + program.source() +
            REPRO.replace("{nthreads}", str(program.nthreads)))


def write_failure(out, seed, index, target, program, outcome, reduced=None):
    """A directory with what it takes to look at the failure; its path."""
    path = os.path.join(out, f"seed{seed}-{index}")
    os.makedirs(path, exist_ok=True)
    header = [f"gpujit fuzz: seed {seed}, kernel {index}, target {target}: {outcome.kind}",
              *outcome.message.splitlines()[:20], "replay: " + replay_command(seed, index, target)]
    with open(os.path.join(path, "kernel.py"), "w") as f:
        f.write(module_text(program, header))
    with open(os.path.join(path, "outcome.txt"), "w") as f:
        f.write(outcome.message + "\n")
    with open(os.path.join(path, "args.pkl"), "wb") as f:
        pickle.dump({"args": program.args, "outputs": program.outputs,
                     "griddim": program.griddim, "blockdim": program.blockdim}, f)
    for what in ("expected", "got"):
        arrays = {k[len(what) + 1:]: v for k, v in outcome.detail.items()
                  if k.startswith(what + "_")}
        if arrays:
            np.savez(os.path.join(path, what + ".npz"), **arrays)
    if reduced is not None:
        with open(os.path.join(path, "reduced.py"), "w") as f:
            f.write(module_text(reduced, header[:1] + ["reduced from kernel.py"]))
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=1000, help="kernels to run (default 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="number of the first kernel")
    ap.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--jobs", type=int, default=1, help="child processes checking kernels")
    ap.add_argument("--out", default="fuzz-failures", help="directory for failing kernels")
    ap.add_argument("--no-reduce", action="store_true", help="do not reduce failing kernels")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds a kernel may take before it counts as a hang")
    ap.add_argument("--size", type=float, default=1.0, help="scales the statements per kernel")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="start no kernel after this many seconds (the summary says how many ran)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    opt = ap.parse_args(argv)

    kinds, stats, failures = Counter(), Counter(), []
    lock = threading.Lock()
    todo = iter(range(opt.start, opt.start + opt.count))
    reducing = 0.0

    def work():
        nonlocal reducing
        with Isolated(opt.target, opt.timeout) as iso:
            while True:
                with lock:   # kernels are taken in order, and each taken one is run
                    late = opt.max_seconds and time.time() - t0 > opt.max_seconds
                    k = None if late else next(todo, None)
                if k is None:
                    return
                o = iso.check_index(opt.seed, k, opt.size)
                with lock:
                    kinds[o.kind] += 1
                    stats["threads"] += o.threads
                    stats["skipped"] += o.skipped
                    done = sum(kinds.values())
                    if not opt.quiet and done % 500 == 0:
                        rate = done / (time.time() - t0 - reducing)
                        print(f"{done} kernels, {rate:.1f} kernels/s, {dict(kinds)}", flush=True)
                if o.kind != "ok":
                    report(iso, k, o)

    def report(iso, k, o):
        nonlocal reducing
        program = make_program(opt.seed, k, opt.size)
        print(f"FAIL seed {opt.seed} kernel {k}: {o.kind}: {o.message[:2000]}", flush=True)
        reduced = None
        if not opt.no_reduce:
            t = time.time()
            # a hang costs the whole timeout: reduce one with a short one
            checker = Isolated(opt.target, min(opt.timeout, 10)) if o.kind == "hang" else iso
            reduced, tries = reduce(program, o,
                                    lambda q: checker.check(q, f"<fuzz {opt.seed}:{k}>"))
            if checker is not iso:
                checker.stop()
            with lock:
                reducing += time.time() - t
            print(f"reduced in {tries} checks ({time.time() - t:.0f} s):\n{reduced.source()}",
                  flush=True)
        path = write_failure(opt.out, opt.seed, k, opt.target, program, o, reduced)
        with lock:
            failures.append((k, o.kind, path))
        print(f"written to {path}; replay: {replay_command(opt.seed, k, opt.target)}",
              flush=True)

    t0 = time.time()
    threads = [threading.Thread(target=work) for _ in range(max(1, opt.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - t0
    n = sum(kinds.values())
    checking = max(elapsed - reducing, 1e-9)
    print(f"seed {opt.seed}, kernels {opt.start}..{opt.start + n - 1} on {opt.target}: {n} in "
          f"{checking:.1f} s, {n / checking:.1f} kernels/s ({opt.jobs} job(s)); "
          + ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())))
    print(f"threads compared {stats['threads']}, left unchecked as undefined {stats['skipped']}")
    for k, kind, path in sorted(failures):
        print(f"  kernel {k}: {kind}: {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
