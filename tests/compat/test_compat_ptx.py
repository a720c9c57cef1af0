"""The compatibility kernels (test_compat_kernels.py) compiled for the GPU:
their PTX, for the signatures their tests launch, passes ptxas, so both
targets' code paths are covered where no GPU runs them."""
import subprocess

import pytest

from test_compat_kernels import PTX_CASES


@pytest.mark.parametrize("kernel,sig", PTX_CASES, ids=[k.__name__ for k, _ in PTX_CASES])
def test_ptx_passes_ptxas(kernel, sig, ptxas, tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(kernel.inspect_asm(sig))
    proc = subprocess.run([ptxas, "-arch=sm_90", "-c", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
