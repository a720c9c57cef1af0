"""Runs tests/c/test_sha256 (its path the one argument) on messages of every
length up to 200 bytes and a few long ones, random but seeded, each line
"HEX-MESSAGE HEX-DIGEST" with hashlib's digest; exits with the program's
status, and 1 if it did not check every case."""
import hashlib
import random
import subprocess
import sys

rng = random.Random(20240611)
lengths = list(range(0, 200)) + [255, 256, 511, 512, 1000, 4095, 4096, 65537, 300_001]
cases = "".join(f"{m.hex()} {hashlib.sha256(m).hexdigest()}\n"
                for m in (rng.randbytes(n) for n in lengths))
run = subprocess.run([sys.argv[1]], input=cases, capture_output=True, text=True, timeout=300)
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
if run.returncode == 0 and not run.stdout.startswith(f"{len(lengths)} cases from hashlib, 0 failures"):
    sys.exit(1)
sys.exit(run.returncode)
