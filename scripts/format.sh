#!/bin/bash
# Apply the house C style (.clang-format) to every C file of the project.
# Usage: bash scripts/format.sh [--check]
#   --check   change nothing; exit 1 and name the files that differ.
# Needs clang-format 19 (apt install clang-format-19); the build does not.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-19 || command -v clang-format || true)
if [ -z "$fmt" ]; then
    echo "format.sh: clang-format-19 is not installed (apt install clang-format-19)" >&2
    exit 2
fi
files=$(git ls-files 'compiler/*.[ch]' 'runtime/*.[ch]' 'pymodule/*.[ch]' 'tests/c/*.[ch]')
if [ "${1:-}" = "--check" ]; then
    exec "$fmt" --dry-run --Werror $files
fi
exec "$fmt" -i $files
