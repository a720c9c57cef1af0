"""Diagnostics: constructs outside the subset and typing conflicts raise
gpujit's exceptions with file:line, the source line and a caret."""
import inspect
import os
import re
import subprocess
import sys
import warnings

import pytest

import gpujit
from conftest import child_output, ROOT

SIG2 = "void(float32[:], float32[:])"
THIS_FILE = os.path.basename(__file__)


def line_of(func, text):
    """Absolute line number of the first source line of func containing text."""
    lines, start = inspect.getsourcelines(func)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {func.__name__}")


def compile_error(func, sig=SIG2, exc=gpujit.GpujitError):
    with pytest.raises(exc) as info:
        gpujit.compile_ptx(func, sig)
    return str(info.value)


def test_exception_hierarchy():
    assert issubclass(gpujit.TypingError, gpujit.GpujitError)
    assert issubclass(gpujit.UnsupportedError, gpujit.GpujitError)
    assert issubclass(gpujit.CudaError, gpujit.GpujitError)
    assert issubclass(gpujit.CudaOutOfMemoryError, gpujit.CudaError)
    assert issubclass(gpujit.CudaOutOfMemoryError, MemoryError)
    assert issubclass(gpujit.CudaSupportError, gpujit.CudaError)
    assert issubclass(gpujit.CudaCompileError, gpujit.CudaError)
    assert issubclass(gpujit.CudaKernelFault, gpujit.CudaError)
    # numba's classes where numba raises one: `except ImportError` / `except TypeError`
    assert issubclass(gpujit.CudaSupportError, ImportError)
    assert issubclass(gpujit.KernelReturnError, gpujit.UnsupportedError)
    assert issubclass(gpujit.KernelReturnError, TypeError)


def uses_try(x, out):
    i = gpujit.grid(1)
    try:
        out[i] = x[i]
    except Exception:
        pass


def uses_list(x, out):
    i = gpujit.grid(1)
    v = [x[i], x[i]]
    out[i] = v[0]


def uses_with(x, out):
    with open("f"):
        out[0] = x[0]


@pytest.mark.parametrize("func,marker", [
    (uses_try, "except Exception:"),
    (uses_list, "v = [x[i], x[i]]"),
    (uses_with, 'with open("f"):'),
])
def test_unsupported_construct_names_line(func, marker):
    msg = compile_error(func, exc=gpujit.UnsupportedError)
    line = line_of(func, marker)
    assert f"{THIS_FILE}:" in msg
    assert f":{line}:" in msg or f":{line + 1}:" in msg, msg
    assert "^" in msg, "diagnostic shows a caret under the source"


def test_unsupported_names_construct():
    msg = compile_error(uses_list, exc=gpujit.UnsupportedError)
    assert "list" in msg.lower()
    msg = compile_error(uses_try, exc=gpujit.UnsupportedError)
    assert "exception" in msg.lower() or "try" in msg.lower()


def array_then_scalar(x, out):
    i = gpujit.grid(1)
    v = x
    v = 1.5
    out[i] = v


def test_typing_conflict_at_second_assignment():
    msg = compile_error(array_then_scalar, exc=gpujit.TypingError)
    line = line_of(array_then_scalar, "v = 1.5")
    assert f"{THIS_FILE}:{line}:" in msg, msg
    assert "array(float32, 1d" in msg
    assert "v = 1.5" in msg, "the source line is shown"


def undefined_name(x, out):
    out[0] = no_such_global_xyz  # noqa: F821


def test_undefined_global():
    msg = compile_error(undefined_name, exc=gpujit.TypingError)
    assert "no_such_global_xyz" in msg
    assert f":{line_of(undefined_name, 'no_such_global_xyz')}:" in msg


def float_index(x, out):
    out[0] = x[1.5]


def test_float_index_is_typing_error():
    msg = compile_error(float_index, exc=gpujit.TypingError)
    assert "index" in msg and "float" in msg


def returns_value(x, out):
    return x[0]


def test_kernel_returning_value():
    msg = compile_error(returns_value, exc=gpujit.UnsupportedError)
    assert "return" in msg


def bad_range(x, out):
    for k in range(1, 2, 3, 4):
        out[k] = x[k]


def test_range_arity():
    msg = compile_error(bad_range, exc=gpujit.TypingError)
    assert "range" in msg


def keyword_call(x, out):
    out[0] = min(x[0], x[1], key=abs)


def test_keyword_arguments_unsupported():
    compile_error(keyword_call, exc=gpujit.UnsupportedError)


def grid_bad_keyword(out):
    out[0] = gpujit.grid(dims=1)


def grid_twice(out):
    out[0] = gpujit.grid(1, ndim=1)


def test_intrinsic_keyword_arguments_checked():
    msg = compile_error(grid_bad_keyword, "void(int64[:])", exc=gpujit.TypingError)
    assert "unexpected keyword argument 'dims'" in msg
    msg = compile_error(grid_twice, "void(int64[:])", exc=gpujit.TypingError)
    assert "multiple values for argument 'ndim'" in msg


def test_wrong_parameter_count_in_signature():
    with pytest.raises((TypeError, gpujit.GpujitError)):
        gpujit.compile_ptx(uses_list, "void(float32[:])")


def test_errors_leave_compiler_usable():
    # A failure must not poison later compilations.
    compile_error(uses_try, exc=gpujit.UnsupportedError)

    def ok(x, out):
        i = gpujit.grid(1)
        if i < out.size:
            out[i] = x[i]
    ptx, _ = gpujit.compile_ptx(ok, SIG2)
    assert ".entry" in ptx


def test_calling_intrinsic_outside_kernel():
    with pytest.raises(Exception, match="kernel"):
        gpujit.grid(1)


def maybe_unbound(x, out):
    if x[0] > 0:
        q = 7
    out[0] = q


def assigned_on_every_path(x, out):
    if x[0] > 0:
        q = 7
    else:
        q = 8
    while True:
        r = q + 1
        if r > 0:
            break
    out[0] = r


def test_possibly_unbound_local_is_a_warning():
    with pytest.warns(gpujit.GpujitWarning) as record:
        ptx, _ = gpujit.compile_ptx(maybe_unbound, SIG2)
    assert ".entry" in ptx
    assert len(record) == 1
    msg = str(record[0].message)
    assert "local variable 'q' may be used before it is assigned" in msg
    assert "reads as zero" in msg
    assert f"{THIS_FILE}:{line_of(maybe_unbound, 'out[0] = q')}:" in msg
    assert issubclass(gpujit.GpujitWarning, UserWarning)


@gpujit.jit(device=True)
def first_positive(a, b):
    for v in (a, b):
        if v > 0:
            got = v
    return got


def two_specialisations(x, out):
    out[0] = first_positive(x[0], x[1]) + first_positive(1, 2)


def test_possibly_unbound_in_a_device_function_warns_once():
    with pytest.warns(gpujit.GpujitWarning) as record:
        gpujit.compile_ptx(two_specialisations, SIG2)
    assert len(record) == 1
    assert f"{THIS_FILE}:{line_of(first_positive.py_func, 'return got')}:" in str(record[0].message)


def never_assigned_before_read(x, out):
    if x[0] > 0:
        out[0] = q
    q = 1.0
    out[1] = q


def test_local_read_before_any_assignment_is_typing_error():
    msg = compile_error(never_assigned_before_read, exc=gpujit.TypingError)
    assert "local variable 'q' is read before it is assigned" in msg
    assert f"{THIS_FILE}:{line_of(never_assigned_before_read, 'out[0] = q')}:" in msg


def test_possibly_unbound_warning_as_error_fails_the_compile():
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpujit.GpujitWarning)
        with pytest.raises(gpujit.GpujitWarning):
            gpujit.compile_ptx(maybe_unbound, SIG2)


def test_assigned_on_every_path_compiles():
    with warnings.catch_warnings():
        warnings.simplefilter("error", gpujit.GpujitWarning)
        ptx, _ = gpujit.compile_ptx(assigned_on_every_path, SIG2)
    assert ".entry" in ptx


def array_or_number(x, out):
    out[0] = x if out[1] > 0 else 1.0


def test_conditional_expression_of_incompatible_types():
    msg = compile_error(array_or_number, exc=gpujit.TypingError)
    assert "$s" not in msg, "internal variable names must not reach the user"
    # 3.11 joins the two values before the store; 3.12+ store in each branch
    assert "array(float32" in msg
    assert "cannot be combined" in msg or "cannot store" in msg


def star_args(*args):
    pass


def keyword_only(x, *, y):
    pass


@pytest.mark.parametrize("func,what", [(star_args, "*args"), (keyword_only, "keyword-only")])
def test_unsupported_parameters_reported_before_arity(func, what):
    msg = compile_error(func, exc=gpujit.UnsupportedError)
    assert what in msg


def test_dump_timing_prints_each_stage(tmp_path):
    # GPUJIT_DUMP=timing: one line per compile stage, with its milliseconds.
    script = tmp_path / "k.py"
    script.write_text(
        "import gpujit\n"
        "def scale(x, out):\n"
        "    i = gpujit.grid(1)\n"
        "    if i < out.size:\n"
        "        out[i] = x[i] * 2.0\n"
        "gpujit.compile_ptx(scale, 'void(float32[::1], float32[::1])')\n")
    env = dict(os.environ, GPUJIT_DUMP="timing")
    proc = subprocess.run([sys.executable, "-P", str(script)], capture_output=True, text=True,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stages = re.findall(r"^timing: scale: (.+) (\d+\.\d+) ms$", proc.stderr, re.M)
    names = [name for name, _ in stages]
    for want in ["build", "infer", "lower", "optimise", "NVPTX code generation"]:
        assert want in names, proc.stderr
    assert all(float(ms) >= 0 for _, ms in stages)


def test_importing_the_source_tree_says_so():
    """From the repository root the source package shadows the installed one;
    the ImportError says that, not 'circular import'."""
    root = ROOT
    proc = subprocess.run([sys.executable, "-c", "import gpujit"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "this is the source tree" in proc.stderr and "-P" in proc.stderr, proc.stderr


# ---- LLVM's fatal errors ----------------------------------------------------------------

FATAL = """
import threading
import gpujit

def shift(x):
    i = gpujit.threadIdx.x
    x[i] = gpujit.shfl_down_sync(0xffffffff, x[i], 1)

def attempt():
    try:
        gpujit.compile_ptx(shift, "void(float32[:])", cc=(6, 0))
    except gpujit.InternalError as e:
        print(e)

attempt()
attempt()
thread = threading.Thread(target=attempt)
thread.start()
thread.join()
print(".target sm_70" in gpujit.compile_ptx(shift, "void(float32[:])", cc=(7, 0))[0])
"""


def test_an_llvm_fatal_error_is_an_internal_error_and_the_process_goes_on():
    # LLVM 19's NVPTX backend cannot select shfl.sync at sm_60's default PTX
    # ISA (5.0): report_fatal_error, which used to end the process with
    # "LLVM ERROR: ..." (a child runs it, so that a regression cannot end
    # this one).  Again, on another thread, and a good compile after it.
    error = ("<string>: internal error: LLVM stopped with a fatal error in NVPTX code "
             "generation: Cannot select: intrinsic %llvm.nvvm.shfl.sync.down.i32 (gpujit goes "
             "on, leaving this compile's LLVM memory unfreed)")
    assert child_output(FATAL) == [error, error, error, "True", ""]
