"""The C sources are in the house style of .clang-format.

scripts/format.sh applies it; this test runs the same script with --check,
so a change that drifts from the style fails here on any machine that has
clang-format 19 (apt install clang-format-19).  Elsewhere it is skipped:
the build itself never needs clang-format.
"""
import os
import shutil
import subprocess

import pytest
from conftest import ROOT



@pytest.mark.skipif(shutil.which("clang-format-19") is None,
                    reason="clang-format-19 is not installed")
def test_c_sources_follow_the_house_style():
    run = subprocess.run(["bash", os.path.join(ROOT, "scripts", "format.sh"), "--check"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
