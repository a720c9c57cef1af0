#!/usr/bin/env bash
# Runs on the GPU machine, like scripts/gpu-test.sh (after scripts/gpu-build.sh
# built gpubuild/ here): NVIDIA's compute-sanitizer over the shared-memory
# examples, with each of its tools:
#
#   memcheck   out-of-bounds and misaligned accesses, leaks
#   racecheck  shared-memory data races (a missing syncthreads)
#   synccheck  barriers used wrongly (syncthreads in divergent code)
#
# Sizes are small: the sanitizer slows kernels by 10-1000x.  Writes one log
# per (example, tool) into $OUT (default /tmp/gpujit-out) and prints each
# run's summary line; exits non-zero if a tool reported an error or an
# example failed its own check.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-/tmp/gpujit-out}"
mkdir -p "$out"
py="${PYTHON:-python3}"
export PYTHONPATH="$root/gpubuild${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export GPUJIT_TARGET=cuda
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"

declare -A args=(
    [matmul]="--shape 100 70 90"
    [reduction]="--n 100003 --blocks 64"
    [histogram]="--n 200003 --blocks 64"
)
failed=()
for example in matmul reduction histogram; do
    for tool in memcheck racecheck synccheck; do
        log="$out/sanitize-$example-$tool.log"
        # shellcheck disable=SC2086
        "$sanitizer" --tool "$tool" --error-exitcode 99 \
            "$py" -P "examples/$example.py" ${args[$example]} >"$log" 2>&1
        status=$?
        echo "$example / $tool (exit $status): $(grep -E 'SUMMARY' "$log" | tail -1)"
        ((status == 0)) || failed+=("$example/$tool")
    done
done
if ((${#failed[@]})); then
    echo "gpu-sanitize: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "gpu-sanitize: no errors"
