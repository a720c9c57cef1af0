"""The examples run as a user runs them, on the CPU target (small sizes) and,
on a GPU machine, on the GPU: each checks its own result against NumPy and
exits non-zero when it differs, so a zero status is a checked result."""
import os
import subprocess
import sys

import pytest

import gpujit
from conftest import ROOT, TESTS_DIR


# example -> arguments that keep the CPU-target run short
EXAMPLES = {
    "vector_add.py": [],
    "saxpy.py": [],
    "heat.py": [],
    "matmul.py": ["--shape", "67", "45", "81"],
    "reduction.py": ["--n", "100003", "--blocks", "37"],
    "histogram.py": ["--n", "200003", "--blocks", "23"],
    # writes the PNG only where Pillow is installed; {tmp}: the test's own
    # folder, since runs on both targets (and other checkouts' suites) may overlap
    "mandelbrot.py": ["{tmp}/mandelbrot.png"],
}


@pytest.mark.parametrize("target", ["cpu", "cuda"])
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs_and_checks_itself(name, target, tmp_path):
    if target == "cuda" and not gpujit.is_available():
        pytest.skip("no CUDA device available")
    env = dict(os.environ, GPUJIT_TARGET=target)
    args = [arg.format(tmp=tmp_path) for arg in EXAMPLES[name]]
    proc = subprocess.run([sys.executable, "-P", os.path.join(ROOT, "examples", name),
                           *args], capture_output=True, text=True, env=env,
                          cwd=TESTS_DIR, timeout=600)
    assert proc.returncode == 0, f"{name}:\n{proc.stdout}\n{proc.stderr}"
    assert f"target: {target}" in proc.stdout
    # the examples show good practice: no warning of a slow launch
    assert "PerformanceWarning" not in proc.stderr, proc.stderr
