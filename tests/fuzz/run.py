"""Running a generated program: in CPython (the reference) and with gpujit.

``check(program, target)`` launches the kernel twice, with its outputs
poisoned by two different byte patterns (so an element the kernel does not
write differs from the reference in at least one launch, whatever the
reference holds), runs the reference thread by thread, and compares every
element of every output.  It returns an ``Outcome``: "ok", or what went
wrong: "mismatch" (values), "compile" (gpujit refused the kernel),
"launch" (an error at run time), "warning" (gpujit warned about the
kernel), "reference" (CPython raised: a generator bug).
"""
import linecache
import math
import operator
import traceback
import warnings

import numpy as np

import gpujit

from .gen import tolerance
from .ref import Thread, Undefined, differ, reference_namespace


class Outcome:
    def __init__(self, kind, message="", output=None, threads=0, skipped=0, detail=None):
        self.kind = kind            # "ok", "mismatch", "compile", "launch", "warning", "reference"
        self.message = message
        self.output = output        # the first output that differs (mismatch)
        self.threads = threads      # threads whose outputs were compared
        self.skipped = skipped      # threads left unchecked (Undefined in the reference)
        self.detail = detail or {}  # expected and got arrays, by output name

    def signature(self):
        """What reduction keeps: the kind of failure, and which output (or exception class)."""
        if self.kind == "mismatch":
            return (self.kind, self.output)
        return (self.kind, self.message.split(":", 1)[0] if self.kind != "compile" else
                self.message.splitlines()[0].split(": ", 2)[-1][:40])

    def __repr__(self):
        return f"Outcome({self.kind}, {self.message[:200]!r})"


def poison(dtype, shape, variant):
    """An output filled with the byte 0x5A (variant 0) or 0xA5 (variant 1): no
    NaN in any float width, and the two differ in every element; bools False/True."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.full(shape, bool(variant))
    return np.full(shape, 0xA5 if variant else 0x5A, np.uint8).repeat(dtype.itemsize) \
        .view(dtype).reshape(shape)


def _compile(program, filename):
    source = program.source()
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return compile(source, filename, "exec")


def run_reference(program, code):
    """The reference outputs, and the threads whose outputs are Undefined."""
    thread = Thread()
    ns = reference_namespace(thread)
    exec(code, ns)
    kernel = ns["kernel"]
    outs = [poison(dt, shape, 0) for _, dt, shape, _ in program.outputs]
    args = [ref for _, _, ref in program.args]
    skipped = set()
    with np.errstate(all="ignore"):
        for tid in range(program.nthreads):
            thread.index = tid
            try:
                kernel(*args, *outs)
            except Undefined:
                skipped.add(tid)
    return outs, skipped


def run_gpujit(program, code):
    """gpujit's outputs of two launches, with each poison."""
    ns = {"gpujit": gpujit, "np": np, "math": math, "operator": operator}
    exec(code, ns)
    kernel = ns["kernel"]
    args = [value for _, value, _ in program.args]
    results = []
    for variant in (0, 1):
        outs = [poison(dt, shape, variant) for _, dt, shape, _ in program.outputs]
        kernel[program.griddim, program.blockdim](*args, *outs)
        results.append(outs)
    return results


def check(program, filename="<fuzz>"):
    """Runs program on gpujit's current target and in CPython; an Outcome."""
    try:
        code = _compile(program, filename)
        want, skipped = run_reference(program, code)
    except Exception:
        return Outcome("reference", traceback.format_exc(limit=-3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", gpujit.GpujitWarning)
        try:
            got = run_gpujit(program, code)
        except gpujit.GpujitError as e:
            kind = "launch" if isinstance(e, gpujit.CudaError) else "compile"
            return Outcome(kind, f"{type(e).__name__}: {e}")
        except Exception as e:
            return Outcome("launch", f"{type(e).__name__}: {e}")
    gj_warnings = [w for w in caught if issubclass(w.category, gpujit.GpujitWarning)]
    if gj_warnings:
        return Outcome("warning", str(gj_warnings[0].message))
    rows = np.array([t not in skipped for t in range(program.nthreads)], bool)
    checked = program.checked_outputs()
    for k in checked:
        name, dtype, shape, fn = program.outputs[k]
        ulps = tolerance(fn, dtype)
        bad = differ(got[0][k], want[k], ulps) | differ(got[1][k], want[k], ulps)
        if bad.ndim > 1:
            bad = bad.any(axis=tuple(range(1, bad.ndim)))
        bad &= rows
        if bad.any():
            first = np.flatnonzero(bad)[:5]
            lines = [f"{name}[{t}]: expected {want[k][t]!r}, got {got[0][k][t]!r}"
                     + (f" / {got[1][k][t]!r}" if differ(got[0][k][t:t + 1], got[1][k][t:t + 1])
                        .any() else "")
                     for t in first]
            tol = f" (tolerance {ulps} ulps)" if ulps else ""
            detail = {"threads": np.flatnonzero(bad)}
            for j in checked:
                detail[f"expected_{program.outputs[j][0]}"] = want[j]
                detail[f"got_{program.outputs[j][0]}"] = got[0][j]
            return Outcome("mismatch", f"{int(bad.sum())} of {program.nthreads} threads differ in "
                           f"{name}{tol}: " + "; ".join(lines), k, int(rows.sum()),
                           len(skipped), detail)
    return Outcome("ok", threads=int(rows.sum()), skipped=len(skipped))
