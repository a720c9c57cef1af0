"""Signature matching (pymodule/sigmatch.c), numba's ranking of scalar
conversions that picks the explicit signature a call's arguments convert
to best: tests/c/test_sigmatch.c is compiled with the C compiler against
it, with no Python and no runtime, as the project's warnings make errors,
plainly and under AddressSanitizer/UBSan where the compiler can link
them."""
import os
import subprocess

import pytest

from conftest import C_COMPILER, C_FLAGS, C_SANITIZE, ROOT, build_c_test

PYMODULE = os.path.join(ROOT, "pymodule")
SOURCES = [os.path.join(ROOT, "tests", "c", "test_sigmatch.c"),
           os.path.join(PYMODULE, "sigmatch.c")]
CC, FLAGS, SANITIZE = C_COMPILER, C_FLAGS, C_SANITIZE
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_scalar_conversions_rank_as_numba(tmp_path, variant):
    exe = str(tmp_path / "test_sigmatch")
    cmd = [CC, *FLAGS, *(SANITIZE if variant == "asan" else []), "-I", PYMODULE, *SOURCES,
           "-lm", "-o", exe]
    build_c_test(cmd, sanitized=variant == "asan")
    run = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.endswith("0 failures\n")
