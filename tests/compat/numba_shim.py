"""The names a numba.cuda program imports from numba, bound to gpujit's.

The compatibility tests are written as numba.cuda code is written; their
``from numba import cuda, float32, void`` reads ``from numba_shim import
...``.  This module only binds names: each is gpujit's object of that name,
so the tests check gpujit's own behaviour, not an adapter's.
"""
import gpujit as cuda
from gpujit import (
    b1, boolean, c8, c16, complex64, complex128, f4, f8, float16, float32, float64, i1, i2,
    i4, i8, int8, int16, int32, int64, intp, u1, u2, u4, u8, uint8, uint16, uint32, uint64,
    void,
)
from gpujit import types
from gpujit.types import typeof
from gpujit import TypingError, UnsupportedError

__all__ = [
    "cuda", "types", "typeof", "TypingError", "UnsupportedError",
    "b1", "boolean", "c8", "c16", "complex64", "complex128", "f4", "f8", "float16", "float32",
    "float64", "i1", "i2", "i4", "i8", "int8", "int16", "int32", "int64", "intp", "u1", "u2",
    "u4", "u8", "uint8", "uint16", "uint32", "uint64", "void",
]
