"""SHA-256 (compiler/sha256.c), which keys and checks the persistent kernel
cache's entries: tests/c/test_sha256.c is compiled with the C compiler
against it, as the project's warnings make errors, plainly and under
AddressSanitizer/UBSan where the compiler can link them, and checks FIPS
180-4's examples and the digests hashlib gives for random messages of
every length around the block size and a few long ones."""
import hashlib
import os
import random
import subprocess

import pytest

from conftest import C_COMPILER, C_FLAGS, C_SANITIZE, ROOT, build_c_test

COMPILER = os.path.join(ROOT, "compiler")
SOURCES = [os.path.join(ROOT, "tests", "c", "test_sha256.c"), os.path.join(COMPILER, "sha256.c")]
CC, FLAGS, SANITIZE = C_COMPILER, C_FLAGS, C_SANITIZE
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


def cases():
    rng = random.Random(20240611)
    lengths = list(range(0, 200)) + [255, 256, 511, 512, 1000, 4095, 4096, 65537, 300_001]
    lines = []
    for n in lengths:
        msg = rng.randbytes(n)
        lines.append(f"{msg.hex()} {hashlib.sha256(msg).hexdigest()}\n")
    return "".join(lines)


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_sha256_agrees_with_fips_and_hashlib(tmp_path, variant):
    exe = str(tmp_path / "test_sha256")
    cmd = [CC, *FLAGS, *(SANITIZE if variant == "asan" else []), "-I", COMPILER, *SOURCES,
           "-o", exe]
    build_c_test(cmd, sanitized=variant == "asan")
    run = subprocess.run([exe], input=cases(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("209 cases from hashlib, 0 failures")
