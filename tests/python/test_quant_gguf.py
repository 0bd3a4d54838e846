"""ct_quantize_row against the gguf package's numpy quantizers and against a
float32 reference written here from ggml's quantize_row_*_ref (docs/QUANTIZATION.md, The formats).

For Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1:
  * every block must equal the hand-written float32 reference byte for byte;
  * every block must equal gguf.quants.quantize, except blocks in a predicted
    category where gguf's numpy arithmetic departs from ggml's C (listed and
    counted below); those are covered by the hand reference alone.
Known departures of gguf from the C reference:
  * NaN: numpy's max/argmax propagate NaN, ggml's compares skip it;
  * signed zero: an all-zero Q4_0/Q5_0 block whose first element is -0.0 gives
    gguf d = +0 (it takes max = x[0]) where ggml's scan keeps max = +0.0 and
    gets d = +0/-8 = -0.0; Q4_1/Q5_1 blocks whose min or max is a zero of mixed
    sign may pick the other zero for m (and for d = max - min);
  * arithmetic width: if gguf evaluated x*id + c in float64 rather than float32,
    blocks found by the boundary search would differ.
    With numpy >= 2 (NEP 50: Python scalars are weak) everything stays float32
    and gguf agrees; the search still runs and its blocks are checked against
    the float32 reference, and any gguf difference on them must equal the
    float64 evaluation exactly.
F32, F16 and BF16 are checked against numpy's astype and gguf's BF16.

Run through ctest (CT_LIBRARY set); CT_TEST_SEED repeats a run.
"""
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ctensor_ctypes  # noqa: E402

import gguf  # noqa: E402
from gguf.quants import quantize as gguf_quantize  # noqa: E402

F32 = np.float32
FLT_MAX = F32(np.finfo(np.float32).max)
TYPES = ["Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1"]
BYTES = {"Q8_0": 34, "Q4_0": 18, "Q4_1": 20, "Q5_0": 22, "Q5_1": 24}
# the added constant in x*id + c whose float32 rounding the boundary search probes
OFFSET = {"Q4_0": 8.5, "Q5_0": 16.5, "Q4_1": 0.5, "Q5_1": 0.5}

failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg)


# ---------------------------------------------------------------------------
# The hand-written reference: ggml's C, one float32 operation at a time
# ---------------------------------------------------------------------------

def low_byte(v):
    """(int8_t)v / (uint8_t)v as x86 compiles them (cvttss2si, low byte); NaN,
    inf and values outside int32 give INT32_MIN, whose low byte is 0."""
    v64 = np.asarray(v, dtype=np.float64)
    ok = (v64 >= -2147483648.0) & (v64 < 2147483648.0)
    i = np.where(ok, np.trunc(np.where(ok, v64, 0.0)), -2147483648.0).astype(np.int64)
    return (i & 0xFF).astype(np.uint8)


def as_int8(b):
    return b.astype(np.int32) - 256 * (b >= 128)


def fp16_bits(v):
    """ggml's fp32 -> fp16: round to nearest even (numpy's astype), NaN -> sign|0x7E00."""
    v = np.asarray(v, dtype=F32)
    with np.errstate(over="ignore", invalid="ignore"):
        h = v.astype(np.float16).view(np.uint16)
    sign = ((v.view(np.uint32) >> 16) & 0x8000).astype(np.uint16)
    return np.where(np.isnan(v), sign | np.uint16(0x7E00), h).astype(np.uint16)


def roundf(v):
    """C roundf on float32 values: ties away from zero (|v| + 0.5 is exact in float64)."""
    v64 = v.astype(np.float64)
    return (np.sign(v64) * np.floor(np.abs(v64) + 0.5)).astype(F32)


def recip_or_zero(d):
    with np.errstate(divide="ignore"):
        return np.where(d != 0, F32(1) / d, F32(0)).astype(F32)


def scan_absmax_signed(x):
    """Q4_0/Q5_0: first element with the largest |x| (strict <, NaN skipped), +0.0 if none."""
    amax = np.zeros(x.shape[0], F32)
    mx = np.zeros(x.shape[0], F32)
    for j in range(32):
        a = np.abs(x[:, j])
        upd = amax < a
        amax = np.where(upd, a, amax)
        mx = np.where(upd, x[:, j], mx)
    return mx


def scan_min_max(x):
    mn = np.full(x.shape[0], FLT_MAX, F32)
    mx = np.full(x.shape[0], -FLT_MAX, F32)
    for j in range(32):
        v = x[:, j]
        mn = np.where(v < mn, v, mn)
        mx = np.where(v > mx, v, mx)
    return mn, mx


def add_offset(v, c, wide):
    """v + c as ggml does it (float32), or in float64 (the alternative the boundary search probes)."""
    if wide:
        return v + np.float64(c)
    return (v.astype(F32) + F32(c)).astype(F32)


def pack_nibbles(xi):
    xi = xi.astype(np.uint32)
    return ((xi[:, :16] & 0xFF) | ((xi[:, 16:] << 4) & 0xFF)).astype(np.uint8)


def pack5(xi):
    xi = xi.astype(np.uint32)
    qs = ((xi[:, :16] & 15) | ((xi[:, 16:] & 15) << 4)).astype(np.uint8)
    qh = np.zeros(xi.shape[0], np.uint32)
    for j in range(32):
        qh |= ((xi[:, j] >> 4) & 1) << np.uint32(j)
    return qh.astype("<u4").view(np.uint8).reshape(-1, 4), qs


def d_bytes(d):
    return fp16_bits(d).astype("<u2").view(np.uint8).reshape(-1, 2)


def reference(t, x, wide=False):
    """Bytes of ggml's quantize_row_<t>_ref for blocks x (n, 32) float32. With
    wide=True, x*id + c is evaluated in float64 (d and id stay float32)."""
    x = np.ascontiguousarray(x, dtype=F32)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if t == "Q8_0":
            amax = np.zeros(x.shape[0], F32)
            for j in range(32):  # ggml's MAX(a, b) = a > b ? a : b, so a NaN amax is replaced
                av = np.abs(x[:, j])
                amax = np.where(amax > av, amax, av)
            d = (amax / F32(127)).astype(F32)
            idv = recip_or_zero(d)
            if wide:
                v = x.astype(np.float64) * idv.astype(np.float64)[:, None]
                r = np.sign(v) * np.floor(np.abs(v) + 0.5)
            else:
                r = roundf((x * idv[:, None]).astype(F32))
            return np.concatenate([d_bytes(d), low_byte(r)], axis=1)
        if t in ("Q4_0", "Q5_0"):
            nmax = -8 if t == "Q4_0" else -16
            hi = 15 if t == "Q4_0" else 31
            d = (scan_absmax_signed(x) / F32(nmax)).astype(F32)
            idv = recip_or_zero(d)
            if wide:
                v = x.astype(np.float64) * idv.astype(np.float64)[:, None]
            else:
                v = (x * idv[:, None]).astype(F32)
            xi = np.minimum(hi, as_int8(low_byte(add_offset(v, OFFSET[t], wide)))) & 0xFF
            if t == "Q4_0":
                return np.concatenate([d_bytes(d), pack_nibbles(xi)], axis=1)
            qh, qs = pack5(xi)
            return np.concatenate([d_bytes(d), qh, qs], axis=1)
        if t in ("Q4_1", "Q5_1"):
            mn, mx = scan_min_max(x)
            d = ((mx - mn) / F32(15 if t == "Q4_1" else 31)).astype(F32)
            idv = recip_or_zero(d)
            if wide:
                v = (x.astype(np.float64) - mn.astype(np.float64)[:, None]) * idv.astype(np.float64)[:, None]
            else:
                v = ((x - mn[:, None]).astype(F32) * idv[:, None]).astype(F32)
            b = low_byte(add_offset(v, 0.5, wide))
            if t == "Q4_1":
                xi = np.minimum(15, as_int8(b)) & 0xFF
                return np.concatenate([d_bytes(d), d_bytes(mn), pack_nibbles(xi)], axis=1)
            qh, qs = pack5(b)  # no clamp in Q5_1
            return np.concatenate([d_bytes(d), d_bytes(mn), qh, qs], axis=1)
    raise ValueError(t)


# ---------------------------------------------------------------------------
# Test data
# ---------------------------------------------------------------------------

def random_sets(rng, per_set):
    def scaled(lo, hi):  # one power of ten per block
        return (10.0 ** rng.uniform(lo, hi, size=(per_set, 1)))

    n = (per_set, 32)
    sub_bits = rng.integers(1, 1 << 23, size=n, dtype=np.uint32) | (rng.integers(0, 2, size=n, dtype=np.uint32) << 31)
    sets = {
        "uniform(-1,1)": rng.uniform(-1, 1, n),
        "uniform(0,10)": rng.uniform(0, 10, n),
        "normal*10^U(-3,3)": rng.standard_normal(n) * scaled(-3, 3),
        "cauchy": rng.standard_cauchy(n),
        "student_t(1.5)": rng.standard_t(1.5, n),
        "tiny 1e-38..1e-30": rng.standard_normal(n) * scaled(-38, -30),
        "subnormal": sub_bits.view(np.float32),
        "huge 1e4..1e37": rng.standard_normal(n) * scaled(4, 37),
        "near fp16 max": rng.uniform(60000, 70000, n) * rng.choice([-1, 1], n),
        "mixed per element": rng.standard_normal(n) * 10.0 ** rng.uniform(-20, 20, n),
        "half-integers": rng.integers(-40, 40, n) * 0.5,
    }
    with np.errstate(over="ignore", under="ignore"):
        return {k: np.asarray(v).astype(F32) for k, v in sets.items()}


def edge_blocks():
    blocks = []
    z = np.zeros(32, F32)
    blocks.append(z.copy())                                   # all +0
    blocks.append(np.full(32, -0.0, F32))                     # all -0
    b = z.copy(); b[0] = -0.0; blocks.append(b)               # x[0] = -0, rest +0
    b = z.copy(); b[1::2] = -0.0; blocks.append(b)            # alternating
    b = z.copy(); b[::2] = -0.0; b[5] = 3.0; blocks.append(b)
    b = np.abs(np.linspace(0, 1, 32, dtype=F32)); b[0] = -0.0; blocks.append(b)  # min is -0 and +0
    sub_min = np.array([1], np.uint32).view(F32)[0]            # 1.4e-45
    for p in (0, 1, 15, 16, 31):
        for v in (1.0, -1.0, 1e-3, 65504.0, -65504.0, 65520.0, 1e-40, float(sub_min), -float(sub_min), 3e38,
                  float(FLT_MAX), 1e-20):
            b = z.copy(); b[p] = v; blocks.append(b)
    # exact ties after scaling: d (or d and min) powers of two, x*id = k + 1/2
    for s in (1.0, 2.0 ** -10, 2.0 ** 10, 0.5, 2.0 ** -100):
        k = np.arange(-127, 129, dtype=np.float64)  # 256 values -> 8 blocks
        for sign in (1, -1):
            q8 = (k + 0.5).reshape(8, 32) * s
            q8[:, 0] = 127 * s * sign
            blocks.extend(q8)
        for lim in (8, 16):
            kk = np.resize(np.arange(-lim, lim, dtype=np.float64) + 0.5, 32)
            for sign in (1, -1):
                b = kk * s; b[7] = -lim * s * sign; blocks.append(b)
                b = kk * s; b[7] = -lim * s * sign; b[3] = lim * s * sign; blocks.append(b)  # |max| tie: first wins
        for lim in (15, 31):
            kk = np.resize(np.arange(0, lim, dtype=np.float64) + 0.5, 32)
            for base in (0.0, -3.0, 100.0):
                b = kk * s + base * s; b[0] = base * s; b[1] = (lim + base) * s; blocks.append(b)
    # fp16 limits of d and m
    for amax in (65504.0 * 127, 65520.0 * 127, 65504.0 * 8, 65520.0 * 8, 65504.0 * 16, 65504.0 * 15, 65504.0 * 31):
        b = np.linspace(-amax, amax, 32); blocks.append(b); blocks.append(-b)
    blocks.append(np.full(32, 65504.0)); blocks.append(np.full(32, -65520.0))
    # subnormals, pure and mixed with normals
    bits = np.arange(1, 33, dtype=np.uint32) * 12345
    blocks.append(bits.view(F32).copy()); blocks.append(-bits.view(F32))
    b = bits.view(F32).copy(); b[9] = 1.0; blocks.append(b)
    b = bits.view(F32).copy(); b[9] = 1.2e-38; blocks.append(b)
    # ranges that overflow max - min, infinities
    b = np.linspace(-3e38, 3e38, 32); blocks.append(b)
    b = z.copy(); b[4] = np.inf; blocks.append(b)
    b = z.copy(); b[4] = -np.inf; b[6] = 2.0; blocks.append(b)
    b = np.linspace(-1, 1, 32); b[0] = np.inf; b[31] = -np.inf; blocks.append(b)
    return np.array(blocks, dtype=np.float64).astype(F32)


def nan_blocks():
    blocks = []
    base = np.linspace(-2, 3, 32).astype(F32)
    for p in (0, 5, 31):
        b = base.copy(); b[p] = np.nan; blocks.append(b)
        b = base.copy(); b[p] = -np.nan; blocks.append(b)
    blocks.append(np.full(32, np.nan, F32))
    b = np.zeros(32, F32); b[31] = np.nan; blocks.append(b)
    b = base.copy(); b[3] = np.nan; b[7] = np.inf; blocks.append(b)
    return np.array(blocks, dtype=F32)


def boundary_search(t, rng, n_scales):
    """Blocks with elements where x*id + c truncates differently in float32 (ggml)
    and float64: x is placed within a few ulps of the exact boundary (k + 1/2)/id."""
    f32_vs_f64 = []
    found = []
    ks = {"Q8_0": np.arange(-127, 127), "Q4_0": np.arange(-8, 8), "Q5_0": np.arange(-16, 16),
          "Q4_1": np.arange(0, 15), "Q5_1": np.arange(0, 31)}[t]
    for _ in range(n_scales):
        scale = F32(10.0 ** rng.uniform(-6, 6))
        if t in ("Q4_1", "Q5_1"):
            lo = F32(rng.uniform(-2, 1) * scale)
            hi = F32(lo + F32(rng.uniform(0.5, 3) * scale))
            head = np.array([lo, hi], F32)
            mn, mx = lo, hi
            d = F32(F32(mx - mn) / F32(15 if t == "Q4_1" else 31))
            idv = F32(1) / d
            centre = mn.astype(np.float64) + (ks + 0.5) / np.float64(idv)
        else:
            mx = F32(rng.choice([-1, 1]) * scale)
            head = np.array([mx], F32)
            d = F32(mx / F32({"Q8_0": 127, "Q4_0": -8, "Q5_0": -16}[t]))
            idv = F32(1) / d
            centre = (ks + 0.5) / np.float64(idv)
        c = centre.astype(F32)
        cand = [c]
        up, down = c, c
        for _ in range(4):
            up = np.nextafter(up, F32(np.inf)); down = np.nextafter(down, F32(-np.inf))
            cand += [up, down]
        cand = np.concatenate(cand)
        if t in ("Q4_1", "Q5_1"):
            cand = cand[(cand >= mn) & (cand <= mx)]
        else:
            cand = cand[np.abs(cand) <= np.abs(mx)]
        # evaluate each candidate alone in a block whose other elements are head (and fill
        # the rest: zeros, or for Q4_1/Q5_1 the min, which a zero above a positive min
        # would replace, unlike in the packed blocks below)
        blk = np.full((cand.size, 32), head[0] if t in ("Q4_1", "Q5_1") else F32(0), F32)
        blk[:, :head.size] = head
        blk[:, 31] = cand
        a = reference(t, blk)
        b = reference(t, blk, wide=True)
        diff = np.any(a != b, axis=1)
        x64 = cand[diff].astype(np.float64)
        base32 = (cand[diff] - mn).astype(F32) if t in ("Q4_1", "Q5_1") else cand[diff]
        base64 = x64 - np.float64(mn) if t in ("Q4_1", "Q5_1") else x64
        v32 = (base32 * idv).astype(F32)
        v64 = base64 * np.float64(idv)
        if t != "Q8_0":
            v32 = (v32 + F32(OFFSET[t])).astype(F32)
            v64 = v64 + OFFSET[t]
        for x, a32, a64 in zip(cand[diff], v32, v64):
            f32_vs_f64.append((x, float(idv), float(a32), float(a64)))
        found.append((head, cand[diff]))
    # pack the found elements into blocks behind their head
    blocks = []
    for head, xs in found:
        for i in range(0, xs.size, 32 - head.size):
            chunk = xs[i:i + 32 - head.size]
            b = np.empty(32, F32)
            b[:head.size] = head
            b[head.size:] = np.resize(chunk, 32 - head.size)
            blocks.append(b)
    return (np.array(blocks, F32).reshape(-1, 32)), f32_vs_f64


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def run_gguf(t, x):
    qt = gguf.GGMLQuantizationType[t]
    nb = x.shape[0]
    pad = (-nb) % 128  # rows of 128 blocks: gguf loops in Python over groups of 16 rows
    xp = np.concatenate([x, np.zeros((pad, 32), F32)]) if pad else x
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        out = gguf_quantize(xp.reshape(-1, 128 * 32), qt)
    return np.asarray(out).reshape(-1, BYTES[t])[:nb]


def predicted_gguf_difference(t, x):
    """Blocks where gguf's numpy arithmetic departs from ggml's C in details of
    its own (NaN, signed zero); see the module docstring."""
    has_nan = np.isnan(x).any(axis=1)
    negz = (x == 0) & np.signbit(x)
    if t in ("Q4_0", "Q5_0"):
        zero = np.all(x == 0, axis=1) & negz[:, 0]
    elif t in ("Q4_1", "Q5_1"):
        with np.errstate(invalid="ignore"):
            mn, mx = np.min(x, axis=1), np.max(x, axis=1)
        zero = negz.any(axis=1) & ((mn == 0) | (mx == 0))
    else:
        zero = np.zeros(x.shape[0], bool)
    return has_nan, zero


def check_type(lib, t, sets, rng):
    names, parts = [], []
    for name, blk in sets.items():
        names += [name] * blk.shape[0]
        parts.append(blk)
    bnd, pairs = boundary_search(t, rng, 60)
    names += ["boundary search"] * bnd.shape[0]
    parts.append(bnd)
    x = np.concatenate(parts)
    names = np.array(names)
    nb = x.shape[0]

    ct = lib.quantize(t, x).reshape(nb, BYTES[t])
    ref = reference(t, x)
    bad = np.any(ct != ref, axis=1)
    if bad.any():
        fail(f"{t}: {bad.sum()} of {nb} blocks differ from the float32 reference")
        for i in np.flatnonzero(bad)[:5]:
            print(f"  [{names[i]}] x={x[i].tolist()}\n    ct ={ct[i].tobytes().hex()}\n    ref={ref[i].tobytes().hex()}")

    gg = run_gguf(t, x)
    gdiff = np.any(ct != gg, axis=1)
    has_nan, zero = predicted_gguf_difference(t, x)
    is_bnd = names == "boundary search"
    wide = reference(t, x[is_bnd], wide=True)
    bnd_idx = np.flatnonzero(is_bnd)
    bnd_gg_wide = np.zeros(nb, bool)
    bnd_gg_wide[bnd_idx] = np.all(gg[is_bnd] == wide, axis=1) & gdiff[is_bnd]
    explained = has_nan | zero | bnd_gg_wide
    unexplained = gdiff & ~explained
    print(f"{t}: {nb} blocks ({sum(s.shape[0] for s in sets.values())} random/edge, {bnd.shape[0]} from the "
          f"boundary search); ct == float32 reference on {nb - bad.sum()}; ct == gguf on {nb - gdiff.sum()}")
    print(f"  gguf differs on {gdiff.sum()} blocks: NaN {np.sum(gdiff & has_nan)}, signed zero "
          f"{np.sum(gdiff & zero & ~has_nan)}, float64 boundary {np.sum(bnd_gg_wide)}, unexplained "
          f"{unexplained.sum()}")
    for i in np.flatnonzero(gdiff & ~has_nan)[:4]:
        print(f"    [{names[i]}] x[:4]={x[i][:4].tolist()} ct={ct[i][:6].tobytes().hex()}.. "
              f"gguf={gg[i][:6].tobytes().hex()}..")
    if unexplained.any():
        fail(f"{t}: {unexplained.sum()} blocks differ from gguf outside the predicted categories")
        for i in np.flatnonzero(unexplained)[:5]:
            print(f"  [{names[i]}] x={x[i].tolist()}\n    ct  ={ct[i].tobytes().hex()}\n    gguf={gg[i].tobytes().hex()}")

    # the boundary search: elements where float32 and float64 evaluation disagree
    print(f"  boundary search: {len(pairs)} elements whose quantized value is different "
          f"in float32 (ggml) and float64; gguf agrees with float32 on "
          f"{np.sum(~gdiff[is_bnd])} of their {bnd.shape[0]} blocks")
    expr = {"Q8_0": "x*id (then roundf)", "Q4_0": "x*id + 8.5", "Q5_0": "x*id + 16.5"}.get(t, "(x - min)*id + 0.5")
    for xv, idv, a32, a64 in pairs[:6]:
        print(f"    x={float(xv)!r} ({xv.view(np.uint32):#010x}) id={idv!r}: {expr} = {a32!r} in float32, "
              f"{a64!r} in float64")
    if np.any(np.all(ct[is_bnd] == wide, axis=1)):
        fail(f"{t}: a boundary-search block gives the same bytes in float32 and float64")
    if not gdiff[is_bnd].any():
        print(f"  gguf evaluates {expr} in float32 (numpy {np.__version__}: Python scalars are weak, NEP 50)")
    if t != "Q8_0" and len(pairs) == 0:
        fail(f"{t}: the boundary search found no float32/float64 disagreement to test")
    # per-set counts
    for name in sets:
        m = names == name
        if np.any(bad[m]):
            print(f"  {name}: {np.sum(bad[m])} reference mismatches")

    # NaN blocks: no crash, equal to the reference (gguf is not comparable there)
    nanb = nan_blocks()
    ctn = lib.quantize(t, nanb).reshape(-1, BYTES[t])
    refn = reference(t, nanb)
    badn = np.any(ctn != refn, axis=1)
    if badn.any():
        fail(f"{t}: {badn.sum()} of {nanb.shape[0]} NaN blocks differ from the reference")
        for i in np.flatnonzero(badn)[:3]:
            print(f"    ct ={ctn[i].tobytes().hex()}\n    ref={refn[i].tobytes().hex()}")


def check_plain(lib, rng):
    n = 1 << 16
    bits = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(F32).copy()
    x[:8] = [0.0, -0.0, np.inf, -np.inf, 65504.0, 65520.0, 65519.996, 2.0 ** -25]
    x[8:16] = rng.standard_normal(8)
    # F32: the bits, NaN payloads included
    out = lib.quantize("F32", x).view(np.uint32)
    if not np.array_equal(out, x.view(np.uint32)):
        fail("F32: not a bit copy")
    # F16 against numpy's round-to-nearest-even (NaN -> sign|0x7E00)
    out = lib.quantize("F16", x).view(np.uint16)
    exp = fp16_bits(x)
    if not np.array_equal(out, exp):
        i = np.flatnonzero(out != exp)
        fail(f"F16: {i.size} of {n} differ, first x={x[i[0]]!r} ct={out[i[0]]:#06x} numpy={exp[i[0]]:#06x}")
    # BF16 against gguf's BF16 (ggml_compute_fp32_to_bf16, NaN included)
    out = lib.quantize("BF16", x).view(np.uint16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp = np.asarray(gguf_quantize(x.reshape(-1, 256), gguf.GGMLQuantizationType.BF16)).view(np.uint16).ravel()
    if not np.array_equal(out, exp):
        i = np.flatnonzero(out != exp)
        fail(f"BF16: {i.size} of {n} differ, first x bits {x.view(np.uint32)[i[0]]:#010x} ct={out[i[0]]:#06x} "
             f"gguf={exp[i[0]]:#06x}")
    print(f"F32, F16, BF16: {n} random bit patterns (NaN, inf, subnormals included) checked")


def main():
    seed = int(os.environ.get("CT_TEST_SEED", "0"), 0) or int.from_bytes(os.urandom(4), "little")
    print(f"test_quant_gguf: seed {seed} (set CT_TEST_SEED to repeat); numpy {np.__version__}")
    rng = np.random.default_rng(seed)
    lib = ctensor_ctypes.Lib()
    t0 = time.time()
    sets = random_sets(rng, 10000)
    sets["edge"] = edge_blocks()
    n_random = sum(v.shape[0] for k, v in sets.items() if k != "edge")
    assert n_random >= 100000
    for t in TYPES:
        check_type(lib, t, sets, rng)
    check_plain(lib, rng)
    print(f"test_quant_gguf: {time.time() - t0:.1f} s, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
