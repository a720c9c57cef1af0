"""Shared fixtures: execution targets, the GPU marker, a freshly seeded
RNG, ptxas discovery; the serial marker and the option that runs the tests
in two passes (scripts/pytest-parallel.sh).

Execution tests use the ``target`` fixture (usually through
``pytestmark = pytest.mark.usefixtures("target")``): each such test runs
once per execution target gpujit has ("cuda" on a GPU, "cpu" where the
host-CPU target exists), with the same assertions.  Tests that only a GPU
can answer carry ``@pytest.mark.gpu`` and say why.  Everything else
(bytecode decoding, typing, diagnostics, PTX generation) runs anywhere.

Tests are independent, so pytest-xdist can run them in worker processes at
once; the few marked ``@pytest.mark.serial`` read the GPU's free memory or
time kernels or copies, which other processes disturb, and run in a pass
of their own (``--serial-tests=only``) after the others
(``--serial-tests=skip``).

The tests sit in folders by layer: compiler/ (frontend, typing, PTX, the
compile cache), language/ (what a kernel may use, checked against NumPy),
runtime/ (launching, memory, streams, the CPU target's executor), api/
(numba's dispatcher and type objects, signatures, misuse), scaling/
(pickling, Dask, MPI, several GPUs), docs/ (the documentation, examples and
notebooks run), compat/ (numba-cuda's own tests through a shim).  Helpers
shared by several folders stay here: this file, assert_kernels.py,
pickled_kernels.py, mpi_launch.py, fuzz/, c/ (the C unit tests' sources).
"""
import os
import shutil
import subprocess
import sys
import zlib

import numpy as np
import pytest

import gpujit

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))   # tests/, on sys.path
ROOT = os.path.dirname(TESTS_DIR)                        # the repository
LAYERS = ("compiler", "language", "runtime", "api", "scaling", "docs", "compat")
# A test module may use another's kernels (test_ptx.py reads the PTX of
# test_control_flow.py's): every layer's folder is importable from any.
sys.path[1:1] = [os.path.join(TESTS_DIR, layer) for layer in LAYERS
                 if os.path.join(TESTS_DIR, layer) not in sys.path]


def pytest_addoption(parser):
    parser.addoption("--serial-tests", choices=("run", "skip", "only"), default="run",
                     help="run the tests marked serial with the others (the default), leave "
                          "them out, or run only them (scripts/pytest-parallel.sh runs the "
                          "others in parallel first, then these alone)")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (skipped without one)")
    config.addinivalue_line("markers", "serial: reads the GPU's free memory or times kernels "
                            "or copies, so runs with no other test process beside it")
    # pytest-xdist's own, declared for runs without it: keeps a module's tests
    # on one worker where they share a costly fixture or cached runs
    config.addinivalue_line("markers", "xdist_group(name): tests run by one xdist worker")
    # The seed goes into the environment before pytest-xdist starts its
    # workers, which inherit it: they all draw from the seed the header
    # shows (test_mpi.py's plate too), so setting it reproduces a run.
    os.environ.setdefault("GPUJIT_TEST_SEED", str(int.from_bytes(os.urandom(4), "little")))


def pytest_collection_modifyitems(config, items):
    wanted = config.getoption("serial_tests")
    if wanted != "run":
        keep, drop = [], []
        for item in items:
            serial = item.get_closest_marker("serial") is not None
            (keep if serial == (wanted == "only") else drop).append(item)
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    if gpujit.is_available():
        return
    skip = pytest.mark.skip(reason="no CUDA device available")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    """One line per skip reason, with its count (pytest's -rs gives one per test location)."""
    reasons = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    if reasons:
        terminalreporter.section("skipped, by reason")
        for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
            terminalreporter.line(f"{count:6d}  {reason}")


def pytest_report_header(config):
    seed = _session_seed()
    return [f"gpujit: GPU available = {gpujit.is_available()}, random seed = {seed}"]


def _session_seed():
    return int(os.environ["GPUJIT_TEST_SEED"])   # pytest_configure set it if it was not


def execution_targets():
    """The targets execution tests run on: "cuda", plus "cpu" once gpujit has it."""
    targets = ["cuda"]
    if hasattr(gpujit, "set_target"):
        targets.insert(0, "cpu")
    return targets


@pytest.fixture(params=execution_targets())
def target(request):
    """Runs the test with gpujit's execution target set to the parameter."""
    name = request.param
    if name == "cuda" and not gpujit.is_available():
        pytest.skip("no CUDA device available")
    if not hasattr(gpujit, "set_target"):
        yield name
        return
    previous = gpujit.set_target(name)
    try:
        yield name
    finally:
        gpujit.set_target(previous)


@pytest.fixture
def cpu():
    """Runs the test on the CPU target, for what only that target has."""
    previous = gpujit.set_target("cpu")
    yield
    gpujit.set_target(previous)


@pytest.fixture
def rng(request):
    """A generator seeded freshly per run (GPUJIT_TEST_SEED reproduces one) and per test."""
    return np.random.default_rng([_session_seed(), zlib.crc32(request.node.nodeid.encode())])


def find_ptxas():
    exe = shutil.which("ptxas")
    if exe:
        return exe
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "bin", "ptxas")):
            return os.path.join(root, "bin", "ptxas")
    return None


@pytest.fixture
def ptxas():
    exe = find_ptxas()
    if exe is None:
        pytest.skip("ptxas not found")
    return exe


def assert_assembles(ptxas, ptx, tmp_path, what=""):
    """ptxas accepts the PTX text for sm_90 (its errors in the failure)."""
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    proc = subprocess.run([ptxas, "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, (what, proc.stderr)


def child_output(script, timeout=120, env=None):
    """The lines a Python script prints in a child process (`python -P -c`),
    which must exit 0: GPU tests whose kernels might end the CUDA context
    run there.  env: variables to set in the child, beside this process's."""
    proc = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, **(env or {})))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split("\n")


def poison(shape, dtype):
    """An output buffer filled with a value no kernel in the tests writes."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.full(shape, np.nan, dtype)
    if dtype.kind == "b":
        return np.zeros(shape, dtype)
    return np.full(shape, np.iinfo(dtype).max - 3, dtype)


def assert_fma_close(got, want, product):
    """Checks got, a * b + c computed by a kernel whose multiply may fuse with
    the add (gpujit's default contraction), against NumPy's unfused want =
    fl(fl(a * b) + c), where product is NumPy's fl(a * b).  They differ by at
    most half an ulp of the product (the rounding an FMA skips) plus one ulp
    of the result (each rounds the sum once): |got - want| <= spacing(product)
    / 2 + spacing(max(|got|, |want|)), elementwise."""
    got, want, product = (np.asarray(v) for v in (got, want, product))
    bound = (np.spacing(np.abs(product)).astype(np.float64) / 2 +
             np.spacing(np.maximum(np.abs(got), np.abs(want))))
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bad = np.flatnonzero(~(diff <= bound))   # a NaN (an unwritten element) is bad too
    assert bad.size == 0, (f"{bad.size} elements beyond half an ulp of the product plus one "
                           f"ulp of the result, first at {bad[0]}: got {got.flat[bad[0]]!r}, "
                           f"NumPy {want.flat[bad[0]]!r}")


def random_array(rng, n, dtype, low=-1000, high=1000):
    """Random values of dtype: floats in [low, high), ints in [low, high), no zeros-only arrays;
    complex: both parts in [low, high)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        parts = rng.random((2, n)) * (high - low) + low
        return (parts[0] + 1j * parts[1]).astype(dtype)
    if dtype.kind == "f":
        return (rng.random(n) * (high - low) + low).astype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind == "u":
        low = max(low, 0)
    info = np.iinfo(dtype)
    return rng.integers(max(low, info.min), min(high, info.max), size=n, dtype=dtype)


@gpujit.jit
def slow_store(out, value, rounds):
    """out[i] = value after `rounds` of dependent float32 arithmetic per
    thread: a kernel that runs a while (one block of 2,000,000 rounds takes
    some milliseconds on an H200), for tests of asynchrony and overlap."""
    i = gpujit.grid(1)
    acc = np.float32(value)
    for _ in range(rounds):
        acc = acc * np.float32(1.0000001) + np.float32(1e-7)
    if i < out.size:
        out[i] = value + (acc - acc)

