"""Differential fuzzing: random well-typed kernels (tests/fuzz/) run by gpujit
and by CPython on NumPy scalars, every output element compared.

One seed is fixed, so the suite is reproducible; the other changes every
day, so CI keeps exploring.  A failure names the seed and the kernels;
`python -P scripts/fuzz.py --seed S --start K --count 1 --target T` replays
one (and reduces it).  docs/internals/testing.md describes the fuzzer.
"""
import datetime

from fuzz.gen import N, line, make_program
from fuzz.isolate import Isolated
from fuzz.reduce import reduce
from fuzz.run import Outcome

FIXED_SEED = 20250611
FIXED_COUNT = 300
ROTATING_COUNT = 300
# Kernels the fuzzer found wrong that are not fixed yet, each (seed, index,
# target) with what is wrong; they are left out of the run, not forgotten:
# replay each with the command run_kernels prints.
KNOWN_WRONG = {
    (20261205, 266, "cpu"): "int8 result wrong (90 or -91 for 44) in the CPU target's "
                            "one-thread-per-call tier only (GPUJIT_CPU_LOOP_THREADS=0)",
}


def run_kernels(target, seed, count):
    failures = []
    with Isolated(target, timeout=120) as iso:
        for k in range(count):
            if (seed, k, target) in KNOWN_WRONG:
                continue
            o = iso.check_index(seed, k)
            if o.kind != "ok":
                failures.append(f"kernel {k}: {o.kind}: {o.message[:1000]}\n  replay: python -P "
                                f"scripts/fuzz.py --seed {seed} --start {k} --count 1 "
                                f"--target {target}")
    assert not failures, f"seed {seed}: {len(failures)} of {count} kernels failed:\n" + \
        "\n".join(failures)


def test_fuzz_fixed_seed(target):
    run_kernels(target, FIXED_SEED, FIXED_COUNT)


def test_fuzz_seed_of_the_day(target):
    seed = int(datetime.date.today().strftime("%Y%m%d"))
    print(f"fuzz seed of the day: {seed}")
    run_kernels(target, seed, ROTATING_COUNT)


def test_reduction_keeps_the_failure():
    """The reducer shrinks a kernel to what makes it fail (here: a statement
    with a marker; the check is a stand-in that needs no gpujit) and keeps
    the thread guard and the store of the output that differs."""
    program = make_program(FIXED_SEED, 3)
    guard = next(s for s in program.kernel.body if s.tag == "guard")
    body = guard.clauses[0].body if guard.clauses[0].fmt.startswith("if i <") else \
        program.kernel.body
    body.insert(0, line("bug = {0}", N("np.int64(12345)", t="int64")))

    def check(q):
        src = q.source()
        compile(src, "<reduced>", "exec")      # still Python
        return Outcome("mismatch", output=0) if "12345" in src else Outcome("ok")
    reduced, tries = reduce(program, check(program), check)
    src = reduced.source()
    assert "bug = np.int64(12345)" in src and "out0[i] = " in src and "if i " in src
    assert not reduced.funcs and len(src.splitlines()) <= 8, src
