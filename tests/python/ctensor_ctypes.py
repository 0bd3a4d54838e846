"""ctypes bindings to the ctensor shared library for the Python checks.

CT_LIBRARY (set by ctest) names the library file. Only the entry points the
checks need are bound; each returns numpy arrays."""
import ctypes
import os
import sys

import numpy as np

CT_OK = 0

TYPE_IDS = {
    "F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q8_1": 9,
    "Q2_K": 10, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "Q8_K": 15,
    "IQ4_NL": 20, "IQ4_XS": 23, "BF16": 30,
}


def load():
    path = os.environ.get("CT_LIBRARY")
    if not path:
        sys.exit("CT_LIBRARY is not set (run through ctest)")
    lib = ctypes.CDLL(path)
    lib.ct_quantize_row.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    lib.ct_quantize_row.restype = ctypes.c_int
    lib.ct_dequantize_row.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    lib.ct_dequantize_row.restype = ctypes.c_int
    lib.ct_type_block_size.argtypes = [ctypes.c_int]
    lib.ct_type_block_size.restype = ctypes.c_int64
    lib.ct_type_size.argtypes = [ctypes.c_int]
    lib.ct_type_size.restype = ctypes.c_size_t
    lib.ct_last_error.restype = ctypes.c_char_p
    return lib


class Lib:
    def __init__(self):
        self.lib = load()

    def block(self, type_name):
        t = TYPE_IDS[type_name]
        return int(self.lib.ct_type_block_size(t)), int(self.lib.ct_type_size(t))

    def quantize(self, type_name, x):
        """Quantizes a float32 array (length a multiple of the block) into bytes."""
        x = np.ascontiguousarray(x, dtype=np.float32).ravel()
        blck, size = self.block(type_name)
        out = np.zeros(len(x) // blck * size, dtype=np.uint8)
        st = self.lib.ct_quantize_row(TYPE_IDS[type_name], x.ctypes.data, out.ctypes.data, len(x))
        if st != CT_OK:
            raise RuntimeError(self.lib.ct_last_error().decode())
        return out

    def dequantize(self, type_name, raw, n):
        raw = np.ascontiguousarray(raw, dtype=np.uint8).ravel()
        out = np.zeros(n, dtype=np.float32)
        st = self.lib.ct_dequantize_row(TYPE_IDS[type_name], raw.ctypes.data, out.ctypes.data, n)
        if st != CT_OK:
            raise RuntimeError(self.lib.ct_last_error().decode())
        return out
