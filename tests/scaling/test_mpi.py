"""examples/heat_mpi.py under MPI, run as a user runs it: the heat plate
split over two ranks (mpiexec -n 2), halo rows exchanged every step in
place or through pinned host buffers, and over one rank, with mpiexec and
without; on the CPU target and, on a GPU machine, on the GPU (one GPU per
rank where there are two).  The example checks the gathered plate against
the same kernel run in one process, bit for bit, and against NumPy, and
exits non-zero on a mismatch; these tests also check the rows each rank
reports, and that every run from the same seed ends with the same plate
(its digest), whatever the number of ranks and however the halos travel.

Needs mpi4py and an mpiexec of the MPI library it loads (tests/mpi_launch.py
finds it and says what its implementation needs); skipped without them.
The runs share one worker process under pytest-xdist, so the digest test
reuses the cached runs."""
import functools
import os
import re
import subprocess
import sys

import pytest

import gpujit
import mpi_launch
from conftest import TESTS_DIR

EXAMPLE = os.path.join(os.path.dirname(TESTS_DIR), "examples", "heat_mpi.py")
SIZE, STEPS = 35, 20     # 33 interior rows: 17 and 16 on two ranks
BANDS = {1: [(1, 33)], 2: [(1, 17), (18, 33)]}   # ranks -> each rank's first and last row
# One initial plate for every run of this file, so their digests compare:
# the session's seed, which conftest.py puts into GPUJIT_TEST_SEED (setting
# it reproduces a run; the example prints it).
SEED = int(os.environ["GPUJIT_TEST_SEED"])

# case -> (ranks, --staging); 0 ranks: `python heat_mpi.py`, without mpiexec
CASES = {
    "2 ranks": (2, "auto"),
    "2 ranks, host staging": (2, "host"),
    "2 ranks, cuda-aware": (2, "cuda-aware"),
    "1 rank": (1, "auto"),
    "no mpiexec": (0, "auto"),
}


WHY_NO_MPI = mpi_launch.launcher()[1]
pytestmark = [pytest.mark.skipif(WHY_NO_MPI is not None, reason=WHY_NO_MPI or ""),
              pytest.mark.xdist_group("mpi")]


@functools.cache
def run(target, ranks, staging, size=SIZE):
    """Runs the example on `target` over `ranks` ranks (cached: the digest test reuses runs)."""
    cmd = [sys.executable, "-P", EXAMPLE, "--size", str(size), "--steps", str(STEPS),
           "--seed", str(SEED), "--staging", staging]
    if ranks:
        cmd = mpi_launch.command(ranks, cmd)
    env = dict(os.environ, GPUJIT_TARGET=target)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=TESTS_DIR, timeout=300)


def why_not(target, staging):
    """Why the example cannot run on `target` with `staging` here, or None."""
    if target == "cuda" and not gpujit.is_available():
        return "no CUDA device available"
    if target == "cuda" and staging == "cuda-aware" and \
            "halo exchange: host" in run("cuda", 2, "auto").stdout:
        return "the MPI library does not report CUDA support: it cannot take GPU memory"
    return None


@pytest.mark.parametrize("target", ["cpu", "cuda"])
@pytest.mark.parametrize("case", list(CASES))
def test_split_plate_equals_one_process_bit_for_bit(case, target):
    ranks, staging = CASES[case]
    if why_not(target, staging):
        pytest.skip(why_not(target, staging))
    proc = run(target, ranks, staging)
    out = proc.stdout
    assert proc.returncode == 0, f"{case}:\n{out}\n{proc.stderr}"
    assert f"target: {target}" in out
    assert f" {max(ranks, 1)} rank(s), seed {SEED}" in out
    gpus = len(gpujit.gpus) if target == "cuda" else 0
    for rank, (first, last) in enumerate(BANDS[max(ranks, 1)]):
        where = f"GPU {rank % gpus} (" if gpus else "the CPU"   # one GPU per rank, where there are
        assert f"rank {rank}: rows {first}-{last} ({last - first + 1} rows) on {where}" in out, out
    used = re.search(r"halo exchange: (\S+),", out)[1]
    if staging != "auto":
        assert used == staging, out
    else:   # device memory is host memory on the CPU target; on a GPU, as the MPI library says
        assert (used == "cuda-aware") if target == "cpu" else (used in ("cuda-aware", "host")), out
    assert "bit for bit equal to the one-process run: yes" in out, out
    assert float(re.search(r"max abs error vs NumPy: (\S+)", out)[1]) <= 1e-9, out
    assert "heat_mpi: OK" in out
    assert "PerformanceWarning" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_the_plate_is_the_same_whatever_the_ranks_and_the_staging(target):
    if why_not(target, "auto"):
        pytest.skip(why_not(target, "auto"))
    digests = {}
    for case, (ranks, staging) in CASES.items():
        if why_not(target, staging) is None:
            proc = run(target, ranks, staging)
            assert proc.returncode == 0, f"{case}:\n{proc.stdout}\n{proc.stderr}"
            digests[case] = re.search(r"plate digest \(sha256\): (\w+)", proc.stdout)[1]
    assert len(set(digests.values())) == 1, digests


def test_a_plate_with_fewer_rows_than_ranks_is_a_usage_error():
    proc = run("cpu", 2, "auto", size=3)      # one interior row for two ranks
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--size must be at least ranks + 2 = 4" in proc.stderr
