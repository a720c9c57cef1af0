#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, after scripts/gpu-build.sh
# built gpubuild/ on the build machine (see docs/install.md).  Needs only
# python3 (>= 3.11) with numpy, pytest and cloudpickle there: no LLVM, no
# registry; the Dask and MPI tests also use the wheels of .whl/ when carried
# (scripts/gpu-wheels.sh).
#
# The tests run in parallel worker processes, one per core (pytest-xdist
# where it is installed; GJ_TEST_WORKERS chooses how many), then the few
# marked serial alone (scripts/pytest-parallel.sh); the examples and the
# notebooks run after them, one at a time, so that the times they print are
# not shared with other work.
#
# Writes into $OUT (default /tmp/gpujit-out): env.txt (GPU, driver, Python,
# the extension's libraries), pytest.log (both passes, each with its 30
# slowest tests) and pytest.xml and pytest-serial.xml, one log per example
# (vector_add, saxpy, heat, mandelbrot, matmul, reduction, histogram, and
# dask_blocks and heat_mpi where Dask and MPI are there) and mandelbrot.png,
# and notebooks/ (the example notebooks with outputs).  Arguments go to
# pytest (paths relative to tests/).  Each step prints its time; exits
# non-zero if any step failed.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-/tmp/gpujit-out}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
py="${PYTHON:-python3}"
export PYTHONPATH="$root/gpubuild${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1

# Wheels carried in .whl/ (scripts/gpu-wheels.sh made them): Dask and MPI
# for the scaling-out tests and pytest-xdist, installed into a prefix of
# their own (a --prefix install keeps MPICH's lib/ and bin/, which --target
# drops).
if compgen -G ".whl/*.whl" >/dev/null; then
    prefix=/tmp/gpujit-wheels
    "$py" -m pip install -q --no-index --no-deps --no-compile --prefix "$prefix" .whl/*.whl ||
        echo "gpu-test: installing the carried wheels failed" >&2
    # Where pip put them: the interpreter's scheme for a prefix, which is
    # <prefix>/local/lib/python3.X/dist-packages and <prefix>/local/bin for
    # Debian's and Ubuntu's python3, <prefix>/lib/python3.X/site-packages
    # and <prefix>/bin elsewhere.
    mapfile -t dirs < <("$py" - "$prefix" <<'PYEOF'
import sys, sysconfig
base = sys.argv[1]
paths = sysconfig.get_paths(sysconfig.get_preferred_scheme("prefix"),
                            vars={"base": base, "platbase": base})
print(paths["purelib"], paths["platlib"], paths["scripts"], paths["data"] + "/lib", sep="\n")
PYEOF
    )
    site="${dirs[0]}"
    [[ "${dirs[1]}" == "$site" ]] || site+=":${dirs[1]}"
    export PYTHONPATH="$PYTHONPATH:$site"
    export PATH="${dirs[2]}:$PATH" LD_LIBRARY_PATH="${dirs[3]}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

if [[ ! -f gpubuild/gpujit/_gpujit.abi3.so ]]; then
    echo "gpu-test: gpubuild/ is missing: run scripts/gpu-build.sh on the build machine" \
         "and carry gpubuild to this one" >&2
    exit 1
fi

failed=()
step() {   # step NAME LOG COMMAND...: runs COMMAND, tee'ing its output into LOG
    local name="$1" log="$2" started=$SECONDS
    shift 2
    echo "=== $name"
    "$@" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    echo "=== $name: exit $status, $((SECONDS - started)) s"
    if ((status != 0)); then
        failed+=("$name (exit $status)")
    fi
}

{
    nvidia-smi -L || echo "nvidia-smi failed"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    "$py" --version
    # -P everywhere: gpujit must come from gpubuild/, not from ./gpujit/.
    "$py" -P -c 'import gpujit, numpy; print("gpujit from", gpujit.__path__[0]); print("numpy", numpy.__version__)'
    "$py" -P -m gpujit   # versions, devices, and which libdevice the tests use
    ldd gpubuild/gpujit/_gpujit.abi3.so
} 2>&1 | tee "$out/env.txt"

step pytest "$out/pytest.log" env GJ_JUNIT="$out/pytest" bash scripts/pytest-parallel.sh "$py" \
    -q -ra -p no:cacheprovider --durations=30 "$@"
step vector_add "$out/vector_add.log" "$py" -P examples/vector_add.py
step saxpy "$out/saxpy.log" "$py" -P examples/saxpy.py
step heat "$out/heat.log" "$py" -P examples/heat.py
step mandelbrot "$out/mandelbrot.log" "$py" -P examples/mandelbrot.py "$out/mandelbrot.png"
step matmul "$out/matmul.log" "$py" -P examples/matmul.py
step reduction "$out/reduction.log" "$py" -P examples/reduction.py
step histogram "$out/histogram.log" "$py" -P examples/histogram.py
# Scaling out, at full size, where Dask and MPI are there (the carried .whl/):
# one worker, and one rank, per GPU.
if "$py" -P -c 'import dask.array, distributed' 2>/dev/null; then
    step dask_blocks "$out/dask_blocks.log" "$py" -P examples/dask_blocks.py
else
    echo "=== dask_blocks: skipped (dask or distributed missing)"
fi
# tests/mpi_launch.py, as for tests/scaling/test_mpi.py: the mpiexec of the MPI
# library mpi4py loads, with what its implementation needs (Open MPI run by
# root, as here: --allow-run-as-root), or why there is none.
why_no_mpi="$("$py" -P tests/mpi_launch.py --why-not 2>&1)" ||
    why_no_mpi="tests/mpi_launch.py failed: $why_no_mpi"
if [[ -z "$why_no_mpi" ]]; then
    ranks="$("$py" -P -c 'import gpujit; print(max(1, len(gpujit.gpus)))')"
    step heat_mpi "$out/heat_mpi.log" "$py" -P tests/mpi_launch.py "$ranks" \
        "$py" -P examples/heat_mpi.py --size 16384 --steps 500 --no-numpy
else
    echo "=== heat_mpi: skipped ($why_no_mpi)"
fi

# The notebooks at their full sizes, stored with outputs in $OUT/notebooks
# (the committed outputs come from here); skipped where nbclient is missing.
if "$py" -P -c 'import nbclient, nbformat, ipykernel' 2>/dev/null; then
    step notebooks "$out/notebooks.log" "$py" -P scripts/execute-notebooks.py "$out/notebooks"
else
    echo "=== notebooks: skipped (nbclient, nbformat or ipykernel missing)"
fi

if ((${#failed[@]})); then
    echo "gpu-test: FAILED: ${failed[*]} ($SECONDS s)" >&2
    exit 1
fi
echo "gpu-test: all steps passed ($SECONDS s)"
