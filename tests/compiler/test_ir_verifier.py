"""The IR verifier over a broad set of this suite's kernels.

The verifier (compiler/irverify.c) is off in release builds, so this runs
the kernels of several test files (control flow, loops, device functions,
raise/assert, tuples, arithmetic, bounds checks, the examples) in a
subprocess with GPUJIT_VERIFY_IR=1: a pass that breaks the IR fails there
with an InternalError.  The front end's stages and the verifier's own
checks are tests/c/test_frontend.c, a C unit test that `meson test` builds
and runs (tests/c/meson.build)."""
import os
import re
import subprocess
import sys

from conftest import TESTS_DIR

# Test files whose kernels together use every op and every kind of variable.
VERIFIED = ["language/test_control_flow.py", "language/test_iteration.py",
            "language/test_device_functions.py", "language/test_raise_assert.py",
            "language/test_tuple_args.py", "language/test_arithmetic.py",
            "language/test_boundscheck.py", "docs/test_examples.py"]


def test_the_ir_verifier_passes_a_broad_set_of_kernels():
    env = dict(os.environ, GPUJIT_VERIFY_IR="1")
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         "-k", "not cuda", *VERIFIED],
        capture_output=True, text=True, env=env, cwd=TESTS_DIR, timeout=900)
    tail = proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, tail
    assert "InternalError" not in proc.stdout, tail
    assert re.search(r"\d+ passed", proc.stdout), tail
