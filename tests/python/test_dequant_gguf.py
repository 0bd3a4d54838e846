"""ct_dequantize_row against gguf-py's numpy dequantizers (gguf.quants.dequantize)
for every type both implement, on uniformly random blocks, on blocks whose fp16
scale fields run through all 65536 bit patterns, and on blocks with scales
forced to NaN, +-inf, subnormals and zero. Bit patterns must be equal, except
that any NaN equals any NaN (numpy's float16 cast keeps a signalling NaN
signalling, ctensor's decode sets the quiet bit as ggml's does on x86/ARM).

gguf-py computes each type in float32 with the same operation order as ggml's
dequantize_row_* (d*q, (d*q)+m, (d*sc)*q - dmin*m, ...), one numpy ufunc per
operation (no FMA), so no case needs an exception. Q8_K has no gguf
dequantizer; it is checked against a float32 numpy formula here instead."""
import importlib.metadata
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ctensor_ctypes as ctc  # noqa: E402

import gguf  # noqa: E402
import gguf.quants  # noqa: E402
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as QT  # noqa: E402

SEED = int(os.environ.get("CT_TEST_SEED", "0") or 0) or int.from_bytes(os.urandom(4), "little")
RANDOM_BLOCKS = 10_000
CHUNK_BLOCKS = 8192  # keeps gguf's temporaries small for 256-blocks

# Byte offsets of the fp16 scale fields in each block (docs/QUANTIZATION.md, Block layouts).
SCALES = {
    "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "IQ4_NL": [0],
    "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208], "IQ4_XS": [0],
}
SPECIAL_H = np.array([0x7E00, 0x7C01, 0x7FFF, 0xFE00, 0x7C00, 0xFC00, 0x0001, 0x8001, 0x03FF, 0x0200,
                      0x0000, 0x8000, 0x0400, 0x7BFF, 0xFBFF], dtype=np.uint16)


def same_bits(got, want):
    g = got.view(np.uint32)
    w = want.view(np.uint32)
    return (g == w) | (np.isnan(got) & np.isnan(want))


def make_blocks(rng, size, offsets):
    """Random blocks; then, per scale field, 65536 blocks with that field
    enumerating every fp16 pattern; then blocks with special scales."""
    parts = [rng.integers(0, 256, size=(RANDOM_BLOCKS, size), dtype=np.uint8)]
    for o in offsets:
        b = rng.integers(0, 256, size=(65536, size), dtype=np.uint8)
        b[:, o:o + 2] = np.arange(65536, dtype=np.uint16).view(np.uint8).reshape(-1, 2)
        parts.append(b)
    for o in offsets:
        b = rng.integers(0, 256, size=(len(SPECIAL_H) * 64, size), dtype=np.uint8)
        b[:, o:o + 2] = np.repeat(SPECIAL_H, 64).view(np.uint8).reshape(-1, 2)
        parts.append(b)
    if len(offsets) == 2:  # both scales special at once (inf - inf, NaN + x, 0 * inf)
        b = rng.integers(0, 256, size=(len(SPECIAL_H) ** 2 * 8, size), dtype=np.uint8)
        pairs = np.array([(a, c) for a in SPECIAL_H for c in SPECIAL_H], dtype=np.uint16)
        pairs = np.repeat(pairs, 8, axis=0)
        b[:, offsets[0]:offsets[0] + 2] = pairs[:, 0].copy().view(np.uint8).reshape(-1, 2)
        b[:, offsets[1]:offsets[1] + 2] = pairs[:, 1].copy().view(np.uint8).reshape(-1, 2)
        parts.append(b)
    return np.concatenate(parts)


def ref_q8_k(raw):
    blocks = raw.reshape(-1, 292)
    d = blocks[:, 0:4].copy().view(np.float32)
    q = blocks[:, 4:260].view(np.int8).astype(np.float32)
    return (d * q).ravel()


def compare(lib, name, blocks, reference):
    """Dequantizes blocks (n_blocks x size uint8) with ctensor and reference in
    chunks; returns (blocks compared, mismatch descriptions)."""
    blck, size = lib.block(name)
    bad = []
    n_bad = 0
    for start in range(0, len(blocks), CHUNK_BLOCKS):
        chunk = np.ascontiguousarray(blocks[start:start + CHUNK_BLOCKS])
        raw = chunk.ravel()
        got = lib.dequantize(name, raw, len(chunk) * blck)
        with np.errstate(all="ignore"):
            want = np.asarray(reference(raw), dtype=np.float32).ravel()
        ok = same_bits(got, want)
        if not ok.all():
            idx = np.nonzero(~ok)[0]
            n_bad += len(idx)
            for i in idx[:5 - len(bad) if len(bad) < 5 else 0]:
                blk = start + i // blck
                bad.append(f"{name} block {blk} element {i % blck}: ctensor {got[i]!r} ({got.view(np.uint32)[i]:08x}) "
                           f"reference {want[i]!r} ({want.view(np.uint32)[i]:08x}); block bytes "
                           f"{chunk[i // blck].tobytes().hex()}")
    return len(blocks), n_bad, bad


def main():
    lib = ctc.Lib()
    rng = np.random.default_rng(SEED)
    print(f"test_dequant_gguf: seed {SEED} (set CT_TEST_SEED to repeat), gguf {importlib.metadata.version('gguf')}")
    failures = 0

    def report(name, source, result):
        nonlocal failures
        n, n_bad, bad = result
        print(f"  {name:7s} {n:7d} blocks vs {source}: {'ok' if n_bad == 0 else f'{n_bad} MISMATCHES'}")
        for line in bad:
            print("    " + line)
        failures += n_bad

    # Plain types: every bit pattern, plus random ones for F32.
    all16 = np.arange(65536, dtype=np.uint16)
    for name, qt in (("F16", QT.F16), ("BF16", QT.BF16)):
        blocks = np.concatenate([all16, rng.integers(0, 65536, size=RANDOM_BLOCKS, dtype=np.uint16)]).view(np.uint8)
        report(name, "gguf", compare(lib, name, blocks.reshape(-1, 2), lambda raw, qt=qt: gguf.quants.dequantize(raw, qt)))
    f32 = rng.integers(0, 2**32, size=RANDOM_BLOCKS * 8, dtype=np.uint32).view(np.uint8).reshape(-1, 4)
    report("F32", "gguf", compare(lib, "F32", f32, lambda raw: gguf.quants.dequantize(raw, QT.F32)))

    for name, offsets in SCALES.items():
        qt = QT[name]
        blck, size = lib.block(name)
        assert (blck, size) == GGML_QUANT_SIZES[qt], (name, blck, size, GGML_QUANT_SIZES[qt])
        blocks = make_blocks(rng, size, offsets)
        report(name, "gguf", compare(lib, name, blocks, lambda raw, qt=qt: gguf.quants.dequantize(raw, qt)))

    # Q8_K: d is a float32; random bit patterns of it, and special values.
    blocks = rng.integers(0, 256, size=(RANDOM_BLOCKS, 292), dtype=np.uint8)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 1e-40, 3.4e38, 1.0], dtype=np.float32)
    blocks[: len(special) * 64, 0:4] = np.repeat(special, 64).view(np.uint8).reshape(-1, 4)
    report("Q8_K", "numpy float32 d*q", compare(lib, "Q8_K", blocks, ref_q8_k))

    if failures:
        print(f"test_dequant_gguf: FAILED, {failures} mismatching elements")
        return 1
    print("test_dequant_gguf: all equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
