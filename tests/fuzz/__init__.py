"""Differential fuzzing of gpujit: random well-typed kernels (gen.py), checked
element by element against the same source run by CPython on NumPy scalars
(ref.py, run.py), failures reduced to small kernels (reduce.py).
docs/internals/testing.md describes it; scripts/fuzz.py runs it."""
