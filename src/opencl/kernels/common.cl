/* Helpers shared by every kernel family (this file sorts first): byte-level loads,
 * fp16/bf16 conversion in integer arithmetic (bit for bit as src/types, NaN
 * included), correctly rounded division, the dequantizers of every type the CPU
 * backend dequantizes and the six block quantizers of src/types/quantize.c.
 *
 * Blocks are addressed by bytes (const __global uchar *): blocks are only 2-byte
 * aligned, and views may start anywhere, so multi-byte fields are assembled from
 * byte loads.
 *
 * Dequantizers, exact (d widened to float, products in the reference's order, NaN
 * results as x86 gives them: see ct_xnan):
 *   float ct_deq_<t>(const __global uchar *blk, int j)        element j of the block
 *   void  ct_deq16_<t>(const __global uchar *blk, int il, float *y)
 *                                                  elements 16*il .. 16*il+15 into y
 * for t = f32, f16, bf16 (blocks of one element: j = 0 only, no deq16), q4_0,
 * q4_1, q5_0, q5_1, q8_0, iq4_nl (32-blocks, il = 0..1), q2_K, q3_K, q4_K, q5_K,
 * q6_K, q8_K, iq4_xs (256-blocks, il = 0..15).
 *   uint4 ct_raw4_<t>(const __global uchar *blk, int g), float4 ct_cvt4_<t>(uint4 raw, int g)
 *                  elements 4*g .. 4*g+3 of the block types, loaded then decoded; blk
 *                  2-byte aligned
 * Quantizers: void ct_quantize_<t>(const float *x, __global uchar *blk) for
 * t = q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl: one block of 32 floats. The same six as
 * teams of 4 work-items, 8 floats each (ct_qt_*: see that section). */

/* Type ids (ct_type). */
#define CT_T_F32 0
#define CT_T_F16 1
#define CT_T_Q4_0 2
#define CT_T_Q4_1 3
#define CT_T_Q5_0 6
#define CT_T_Q5_1 7
#define CT_T_Q8_0 8
#define CT_T_Q2_K 10
#define CT_T_Q3_K 11
#define CT_T_Q4_K 12
#define CT_T_Q5_K 13
#define CT_T_Q6_K 14
#define CT_T_Q8_K 15
#define CT_T_IQ4_NL 20
#define CT_T_IQ4_XS 23
#define CT_T_I8 24
#define CT_T_I16 25
#define CT_T_I32 26
#define CT_T_I64 27
#define CT_T_F64 28
#define CT_T_BF16 30

/* The mat-mul kernels' src0 types (mul_mat.cl, mul_mvq.cl: a compile-time argument of
 * their shared bodies). Here because mul_mvq.cl is also built without mul_mat.cl
 * (library.c: the register-capped program). */
#define MM_F32 0
#define MM_F16 1
#define MM_BF16 2
#define MM_Q4_0 3
#define MM_Q4_1 4
#define MM_Q5_0 5
#define MM_Q5_1 6
#define MM_Q8_0 7
#define MM_IQ4_NL 8
#define MM_Q4_K 9
#define MM_Q5_K 10
#define MM_Q6_K 11

/* ---- NVIDIA warps (inline PTX, where the device probes built it) --------------------- */

#if CT_HAS_NV_WARP
/* v of lane ^ m of this warp */
uint ct_nv_shfl_xor(uint v, int m) {
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(m));
    return r;
}
/* the warp's local-memory stores before it are seen by its loads after it */
#define CT_NV_WARP_SYNC() asm volatile("bar.warp.sync 0xffffffff;" ::: "memory")
#endif

/* ---- byte-level loads and stores ----------------------------------------------- */

ushort ct_ld_u16(const __global uchar *p) { return (ushort)(p[0] | ((uint)p[1] << 8)); }

uint ct_ld_u32(const __global uchar *p) {
    return (uint)p[0] | ((uint)p[1] << 8) | ((uint)p[2] << 16) | ((uint)p[3] << 24);
}

void ct_st_u16(__global uchar *p, ushort v) {
    p[0] = (uchar)v;
    p[1] = (uchar)(v >> 8);
}

void ct_st_u32(__global uchar *p, uint v) {
    p[0] = (uchar)v;
    p[1] = (uchar)(v >> 8);
    p[2] = (uchar)(v >> 16);
    p[3] = (uchar)(v >> 24);
}

/* ---- fp16 / bf16 ------------------------------------------------------------------ */

/* Exact; NaN keeps its payload shifted left by 13 with the quiet bit set (as the CPU).
 * Round to nearest even; overflow gives inf; NaN gives sign | 0x7E00 (as the CPU).
 * Where the device's conversions are exact (CT_FP16_CONVERT: cl_khr_fp16's, else the
 * core vload_half / vstore_half_rte), they do every value but NaN, which a select fixes up to the CPU's
 * bits: the integer arithmetic below took ~15 operations an element and bound the fp16
 * row kernels on the H200 (CPY F32 -> F16 74 -> 85% of copy with the device's). The
 * integer versions compute every case and select one (no branch between a kernel's
 * loads). */
#if CT_FP16_CONVERT
#if CT_HAS_FP16
float ct_half_hw(ushort h) { return (float)as_half(h); }
ushort ct_half_hw_rte(float f) { return as_ushort(convert_half_rte(f)); }
#else /* the core vload_half / vstore_half_rte */
float ct_half_hw(ushort h) { return vload_half(0, (const __private half *)&h); }
ushort ct_half_hw_rte(float f) {
    ushort h;
    vstore_half_rte(f, 0, (__private half *)&h);
    return h;
}
#endif

ushort ct_float_to_half(float f) {
    const uint x = as_uint(f);
    const ushort nan = (ushort)(((x >> 16) & 0x8000u) | 0x7E00u);
    return (x & 0x7FFFFFFFu) > 0x7F800000u ? nan : ct_half_hw_rte(f);
}
#else
ushort ct_float_to_half(float f) {
    const uint x = as_uint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint ax = x & 0x7FFFFFFFu;
    const uint v = ax - (112u << 23); /* wraps below the normal range; not selected there */
    const uint normal = (v + 0x0FFFu + ((v >> 13) & 1u)) >> 13;
    /* |x|*2^24 is exact; adding 2^23 rounds it to an integer (RTNE) */
    const uint sub = as_uint(as_float(ax) * 0x1p24f + 0x1p23f) & 0x7FFu;
    const uint r = ax > 0x7F800000u ? 0x7E00u : ax >= 0x477FF000u ? 0x7C00u : ax >= 0x38800000u ? normal : sub;
    return (ushort)(sign | r);
}
#endif

/* Half to float: the bits scaled by 2^112 where the library chose that (CT_HALF_BY_SCALE:
 * exact where a float multiply keeps subnormal operands, and faster than PoCL's vload_half;
 * device.c says where), else the device's conversion where exact, else integer arithmetic. */
#if CT_HALF_BY_SCALE
float ct_half_to_float(ushort h) {
    const uint em = h & 0x7FFFu, o = em << 13;
    const uint special = o | 0x7F800000u | (em > 0x7C00u ? 0x400000u : 0u);
    const uint finite = as_uint(as_float(o) * 0x1p112f);
    return as_float(((uint)(h & 0x8000u) << 16) | (em >= 0x7C00u ? special : finite));
}
#elif CT_FP16_CONVERT
float ct_half_to_float(ushort h) {
    const uint em = h & 0x7FFFu;
    const uint nan = ((uint)(h & 0x8000u) << 16) | 0x7FC00000u | (em << 13);
    return em > 0x7C00u ? as_float(nan) : ct_half_hw(h);
}
#else
float ct_half_to_float(ushort h) {
    const uint em = h & 0x7FFFu, o = em << 13;
    const uint special = o | 0x7F800000u | (em > 0x7C00u ? 0x400000u : 0u);
    const uint normal = o + (112u << 23);
    /* m * 2^-24 exactly: 2^-14 * (1 + m / 1024) less 2^-14 */
    const uint sub = as_uint(as_float(o + (113u << 23)) - 0x1p-14f);
    const uint r = em >= 0x7C00u ? special : em >= 0x0400u ? normal : sub;
    return as_float(((uint)(h & 0x8000u) << 16) | r);
}
#endif

float ct_bf16_to_float(ushort h) { return as_float((uint)h << 16); }

ushort ct_float_to_bf16(float f) {
    const uint u = as_uint(f);
    const uint rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    return (ushort)((u & 0x7FFFFFFFu) > 0x7F800000u ? (u >> 16) | 0x0040u : rounded);
}

float ct_ld_f16(const __global uchar *p) { return ct_half_to_float(ct_ld_u16(p)); }

/* Loads from an address known to be 2-byte aligned: one or two 16-bit loads, not byte loads. */
uint ct_lda_u16(const __global uchar *p) { return *(const __global ushort *)p; }
uint ct_lda_u32(const __global uchar *p) { return ct_lda_u16(p) | (ct_lda_u16(p + 2) << 16); }
float ct_lda_f16(const __global uchar *p) { return ct_half_to_float((ushort)ct_lda_u16(p)); }

/* a / b and a % b, in 32 bits when both fit (64-bit division is slow on GPUs). */
ulong ct_udivmod(ulong a, ulong b, ulong *rem) {
    if (((a | b) >> 32) == 0) {
        const uint q = (uint)a / (uint)b;
        *rem = (uint)a - q * (uint)b;
        return q;
    }
    const ulong q = a / b;
    *rem = a - q * b;
    return q;
}

/* ---- correctly rounded float division ----------------------------------------- */

/* Without -cl-fp32-correctly-rounded-divide-sqrt, '/' may be 2.5 ulp off. fp64
 * division is correctly rounded, and rounding its quotient to float is too (53 >=
 * 2*24 + 2). Otherwise an integer long division. CT_SOFT_DIV forces the latter (tests). */
#if !defined(CT_SOFT_DIV) && CT_CORRECTLY_ROUNDED_DIV
float ct_div(float a, float b) { return a / b; }
#elif !defined(CT_SOFT_DIV) && CT_HAS_FP64
float ct_div(float a, float b) { return (float)((double)a / (double)b); }
#else
/* Mantissa with the implicit bit and unbiased exponent of a finite non-zero
 * float, normalized so that the mantissa lies in [2^23, 2^24). */
void ct_div_unpack(uint ax, uint *m, int *e) {
    uint mm = ax & 0x7FFFFFu;
    int ee = (int)(ax >> 23);
    if (ee == 0) { /* subnormal */
        ee = 1;
        while (mm < 0x800000u) {
            mm <<= 1;
            ee--;
        }
    } else {
        mm |= 0x800000u;
    }
    *m = mm;
    *e = ee - 127;
}

float ct_div(float a, float b) {
    const uint ua = as_uint(a), ub = as_uint(b);
    const uint sign = (ua ^ ub) & 0x80000000u;
    const uint aa = ua & 0x7FFFFFFFu, ab = ub & 0x7FFFFFFFu;
    if (aa > 0x7F800000u || ab > 0x7F800000u) return a + b; /* NaN operand */
    if (aa == 0x7F800000u) return ab == 0x7F800000u ? as_float(0x7FC00000u) : as_float(sign | 0x7F800000u);
    if (ab == 0x7F800000u) return as_float(sign);
    if (ab == 0u) return aa == 0u ? as_float(0x7FC00000u) : as_float(sign | 0x7F800000u);
    if (aa == 0u) return as_float(sign);
    uint ma, mb;
    int ea, eb;
    ct_div_unpack(aa, &ma, &ea);
    ct_div_unpack(ab, &mb, &eb);
    /* q = floor(ma * 2^26 / mb) has 26 or 27 bits; the remainder is the sticky bit. */
    const ulong num = (ulong)ma << 26;
    ulong q = num / mb;
    const uint sticky = (num % mb) != 0ul;
    int e = ea - eb; /* value = q * 2^(e - 26) */
    if (q < (1ul << 26)) { /* normalize to 27 bits: [2^26, 2^27) */
        q <<= 1;
        e -= 1;
    }
    /* q in [2^26, 2^27): the 24-bit mantissa and 3 more bits (plus the sticky bit). */
    int shift = 3;
    int be = e + 127;
    if (be >= 255) return as_float(sign | 0x7F800000u);
    if (be < 1) { /* a subnormal result: fewer mantissa bits */
        shift += 1 - be;
        be = 1;
    }
    if (shift > 40) return as_float(sign); /* below half the smallest subnormal */
    const ulong keep = q >> shift;
    const ulong rem = q & ((1ul << shift) - 1ul);
    const ulong hb = 1ul << (shift - 1);
    const ulong up = (rem > hb || (rem == hb && (sticky || (keep & 1ul)))) ? 1ul : 0ul;
    /* A carry out of the mantissa moves into the exponent, which is the right result. */
    uint bits = ((uint)(be - 1) << 23) + (uint)(keep + up);
    if (bits >= 0x7F800000u) bits = 0x7F800000u;
    return as_float(sign | bits);
}
#endif

/* ---- x86 NaN rules ------------------------------------------------------------- */

/* r = a op b with x86 SSE's NaN rules, which the CPU reference follows: the first
 * NaN operand, quieted; a NaN made from numbers is the default NaN 0xFFC00000.
 * GPUs return other NaNs (NVIDIA: 0x7FFFFFFF), whose sign and payload would reach
 * the output: a dequantized NaN scale, a quantized block's fp16 scale. */
float ct_xnan(float a, float b, float r) {
    const uint n = isnan(a) ? as_uint(a) | 0x400000u : isnan(b) ? as_uint(b) | 0x400000u : 0xFFC00000u;
    /* NVIDIA's compiler makes branches of this; bit masks instead cost the row kernels
     * more than the branches did */
    return isnan(r) ? as_float(n) : r;
}
float ct_xadd(float a, float b) { return ct_xnan(a, b, a + b); }
float ct_xsub(float a, float b) { return ct_xnan(a, b, a - b); }
float ct_xmul(float a, float b) { return ct_xnan(a, b, a * b); }
float ct_xdiv(float a, float b) { return ct_xnan(a, b, ct_div(a, b)); }

/* ---- dequantizers -------------------------------------------------------------- */

__constant float ct_kvalues_iq4nl_f[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                           1,    13,   25,  38,  53,  69,  89,  113};

/* The same 16 values as signed bytes, little-endian in four words. */
#define CT_IQ4NL_KV0 0xBFAD9881u
#define CT_IQ4NL_KV1 0xF6EADDCFu
#define CT_IQ4NL_KV2 0x26190D01u
#define CT_IQ4NL_KV3 0x71594535u

/* ct_kvalues_iq4nl_f[i] (i < 16) without the table: a __constant table indexed differently by
 * the work-items of a warp is read once per distinct index on NVIDIA (up to 16 passes); the
 * words take a few selects and a shift instead. */
float ct_iq4nl_value(uint i) {
    const uint w = i < 8u ? (i < 4u ? CT_IQ4NL_KV0 : CT_IQ4NL_KV1) : (i < 12u ? CT_IQ4NL_KV2 : CT_IQ4NL_KV3);
    return (float)as_char((uchar)(w >> (8u * (i & 3u))));
}

float ct_deq_f32(const __global uchar *b, int j) { return as_float(ct_ld_u32(b + 4 * j)); }
float ct_deq_f16(const __global uchar *b, int j) { return ct_half_to_float(ct_ld_u16(b + 2 * j)); }
float ct_deq_bf16(const __global uchar *b, int j) { return ct_bf16_to_float(ct_ld_u16(b + 2 * j)); }

float ct_deq_q4_0(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b);
    const uint q = b[2 + (j & 15)];
    const int x = (int)(j < 16 ? (q & 15u) : (q >> 4)) - 8;
    return ct_xmul((float)x, d);
}

float ct_deq_q4_1(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b), m = ct_ld_f16(b + 2);
    const uint q = b[4 + (j & 15)];
    const int x = (int)(j < 16 ? (q & 15u) : (q >> 4));
    return ct_xadd(ct_xmul((float)x, d), m);
}

float ct_deq_q5_0(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b);
    const uint qh = ct_ld_u32(b + 2);
    const uint q = b[6 + (j & 15)];
    const int x = (int)((j < 16 ? (q & 15u) : (q >> 4)) | (((qh >> j) & 1u) << 4)) - 16;
    return ct_xmul((float)x, d);
}

float ct_deq_q5_1(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b), m = ct_ld_f16(b + 2);
    const uint qh = ct_ld_u32(b + 4);
    const uint q = b[8 + (j & 15)];
    const int x = (int)((j < 16 ? (q & 15u) : (q >> 4)) | (((qh >> j) & 1u) << 4));
    return ct_xadd(ct_xmul((float)x, d), m);
}

float ct_deq_q8_0(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b);
    return ct_xmul((float)as_char(b[2 + j]), d);
}

float ct_deq_iq4_nl(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b);
    const uint q = b[2 + (j & 15)];
    return ct_xmul(d, ct_iq4nl_value(j < 16 ? (q & 15u) : (q >> 4)));
}

/* Q2_K: scales@0, qs@16, d@80, dmin@82. Group g = j/16 uses scales[g]. */
float ct_deq_q2_K(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b + 80), min = ct_ld_f16(b + 82);
    const int g = j >> 4, l = j & 15;
    const uint sc = b[g];
    const int hb = g >> 3, shift = ((g & 7) >> 1) * 2, sub = g & 1;
    const uint q = (b[16 + 32 * hb + 16 * sub + l] >> shift) & 3u;
    const float dl = ct_xmul(d, (float)(sc & 15u));
    const float ml = ct_xmul(min, (float)(sc >> 4));
    return ct_xsub(ct_xmul(dl, (float)q), ml);
}

/* The signed 6-bit scale s (0..15) of a Q3_K block, minus 32. */
int ct_q3_K_scale(const __global uchar *s, int j) {
    const int lo = j < 8 ? (s[j] & 15) : (s[j - 8] >> 4);
    const int hi = (s[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
    return (lo | (hi << 4)) - 32;
}

/* Q3_K: hmask@0, qs@32, scales@96, d@108. */
float ct_deq_q3_K(const __global uchar *b, int j) {
    const float d_all = ct_ld_f16(b + 108);
    const int g = j >> 4, l = j & 15;
    const int hb = g >> 3, s = (g & 7) >> 1, sub = g & 1;
    const uint m = 1u << (4 * hb + s);
    const float dl = ct_xmul(d_all, (float)ct_q3_K_scale(b + 96, g));
    const int v = (int)((b[32 + 32 * hb + 16 * sub + l] >> (2 * s)) & 3u) - ((b[16 * sub + l] & m) ? 0 : 4);
    return ct_xmul(dl, (float)v);
}

void ct_get_scale_min_k4(int j, const __global uchar *q, int *d, int *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* Q4_K: d@0, dmin@2, scales@4, qs@16. */
float ct_deq_q4_K(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b), min = ct_ld_f16(b + 2);
    const int c = j >> 6, r = j & 63, hi = r >> 5, l = r & 31;
    int sc, m;
    ct_get_scale_min_k4(2 * c + hi, b + 4, &sc, &m);
    const float d1 = ct_xmul(d, (float)sc), m1 = ct_xmul(min, (float)m);
    const uint q = b[16 + 32 * c + l];
    return ct_xsub(ct_xmul(d1, (float)(hi ? (q >> 4) : (q & 15u))), m1);
}

/* Q5_K: d@0, dmin@2, scales@4, qh@16, qs@48. */
float ct_deq_q5_K(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b), min = ct_ld_f16(b + 2);
    const int c = j >> 6, r = j & 63, hi = r >> 5, l = r & 31;
    int sc, m;
    ct_get_scale_min_k4(2 * c + hi, b + 4, &sc, &m);
    const float d1 = ct_xmul(d, (float)sc), m1 = ct_xmul(min, (float)m);
    const uint q = b[48 + 32 * c + l];
    const uint u = (1u << (2 * c)) << hi;
    const uint v = (hi ? (q >> 4) : (q & 15u)) + ((b[16 + l] & u) ? 16u : 0u);
    return ct_xsub(ct_xmul(d1, (float)v), m1);
}

/* Q6_K: ql@0, qh@128, scales (int8)@192, d@208. */
float ct_deq_q6_K(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b + 208);
    const int h = j >> 7, r = j & 127, k = r >> 5, l = r & 31;
    const __global uchar *ql = b + 64 * h, *qh = b + 128 + 32 * h;
    const int sc = as_char(b[192 + 8 * h + (l >> 4) + 2 * k]);
    const uint lo = (k & 1) ? ql[l + 32] : ql[l];
    const uint nib = (k & 2) ? (lo >> 4) : (lo & 15u);
    const int q = (int)(nib | (((qh[l] >> (2 * k)) & 3u) << 4)) - 32;
    return ct_xmul(ct_xmul(d, (float)sc), (float)q);
}

/* Q8_K: d (float)@0, qs (int8)@4. */
float ct_deq_q8_K(const __global uchar *b, int j) {
    const float d = as_float(ct_ld_u32(b));
    return ct_xmul(d, (float)as_char(b[4 + j]));
}

/* IQ4_XS: d@0, scales_h@2, scales_l@4, qs@8. */
float ct_deq_iq4_xs(const __global uchar *b, int j) {
    const float d = ct_ld_f16(b);
    const uint scales_h = ct_ld_u16(b + 2);
    const int ib = j >> 5, r = j & 31;
    const int ls = (int)(((b[4 + (ib >> 1)] >> (4 * (ib & 1))) & 15u) | (((scales_h >> (2 * ib)) & 3u) << 4));
    const float dl = ct_xmul(d, (float)(ls - 32));
    const uint q = b[8 + 16 * ib + (r & 15)];
    return ct_xmul(dl, ct_iq4nl_value(r < 16 ? (q & 15u) : (q >> 4)));
}

/* 16 elements at a time: the block's scales are decoded once. */
void ct_deq16_q4_0(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b);
    for (int l = 0; l < 16; l++) {
        const uint q = b[2 + l];
        y[l] = ct_xmul((float)((int)(il ? (q >> 4) : (q & 15u)) - 8), d);
    }
}

void ct_deq16_q4_1(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b), m = ct_ld_f16(b + 2);
    for (int l = 0; l < 16; l++) {
        const uint q = b[4 + l];
        y[l] = ct_xadd(ct_xmul((float)(int)(il ? (q >> 4) : (q & 15u)), d), m);
    }
}

void ct_deq16_q5_0(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b);
    const uint qh = ct_ld_u32(b + 2) >> (16 * il);
    for (int l = 0; l < 16; l++) {
        const uint q = b[6 + l];
        const int x = (int)((il ? (q >> 4) : (q & 15u)) | (((qh >> l) & 1u) << 4)) - 16;
        y[l] = ct_xmul((float)x, d);
    }
}

void ct_deq16_q5_1(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b), m = ct_ld_f16(b + 2);
    const uint qh = ct_ld_u32(b + 4) >> (16 * il);
    for (int l = 0; l < 16; l++) {
        const uint q = b[8 + l];
        const int x = (int)((il ? (q >> 4) : (q & 15u)) | (((qh >> l) & 1u) << 4));
        y[l] = ct_xadd(ct_xmul((float)x, d), m);
    }
}

void ct_deq16_q8_0(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b);
    for (int l = 0; l < 16; l++) y[l] = ct_xmul((float)as_char(b[2 + 16 * il + l]), d);
}

void ct_deq16_iq4_nl(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b);
    for (int l = 0; l < 16; l++) {
        const uint q = b[2 + l];
        y[l] = ct_xmul(d, ct_iq4nl_value(il ? (q >> 4) : (q & 15u)));
    }
}

void ct_deq16_q2_K(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b + 80), min = ct_ld_f16(b + 82);
    const uint sc = b[il];
    const int hb = il >> 3, shift = ((il & 7) >> 1) * 2, sub = il & 1;
    const float dl = ct_xmul(d, (float)(sc & 15u));
    const float ml = ct_xmul(min, (float)(sc >> 4));
    const __global uchar *q = b + 16 + 32 * hb + 16 * sub;
    for (int l = 0; l < 16; l++) y[l] = ct_xsub(ct_xmul(dl, (float)((q[l] >> shift) & 3u)), ml);
}

void ct_deq16_q3_K(const __global uchar *b, int il, float *y) {
    const float d_all = ct_ld_f16(b + 108);
    const int hb = il >> 3, s = (il & 7) >> 1, sub = il & 1;
    const uint m = 1u << (4 * hb + s);
    const float dl = ct_xmul(d_all, (float)ct_q3_K_scale(b + 96, il));
    const __global uchar *q = b + 32 + 32 * hb + 16 * sub;
    const __global uchar *hm = b + 16 * sub;
    for (int l = 0; l < 16; l++) {
        const int v = (int)((q[l] >> (2 * s)) & 3u) - ((hm[l] & m) ? 0 : 4);
        y[l] = ct_xmul(dl, (float)v);
    }
}

void ct_deq16_q4_K(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b), min = ct_ld_f16(b + 2);
    const int c = il >> 2, hi = (il >> 1) & 1, l0 = 16 * (il & 1);
    int sc, m;
    ct_get_scale_min_k4(2 * c + hi, b + 4, &sc, &m);
    const float d1 = ct_xmul(d, (float)sc), m1 = ct_xmul(min, (float)m);
    const __global uchar *q = b + 16 + 32 * c + l0;
    for (int l = 0; l < 16; l++) y[l] = ct_xsub(ct_xmul(d1, (float)(hi ? (q[l] >> 4) : (q[l] & 15u))), m1);
}

void ct_deq16_q5_K(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b), min = ct_ld_f16(b + 2);
    const int c = il >> 2, hi = (il >> 1) & 1, l0 = 16 * (il & 1);
    int sc, m;
    ct_get_scale_min_k4(2 * c + hi, b + 4, &sc, &m);
    const float d1 = ct_xmul(d, (float)sc), m1 = ct_xmul(min, (float)m);
    const __global uchar *q = b + 48 + 32 * c + l0;
    const __global uchar *qh = b + 16 + l0;
    const uint u = (1u << (2 * c)) << hi;
    for (int l = 0; l < 16; l++) {
        const uint v = (hi ? (q[l] >> 4) : (q[l] & 15u)) + ((qh[l] & u) ? 16u : 0u);
        y[l] = ct_xsub(ct_xmul(d1, (float)v), m1);
    }
}

void ct_deq16_q6_K(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b + 208);
    const int h = il >> 3, k = (il >> 1) & 3, l0 = 16 * (il & 1);
    const __global uchar *ql = b + 64 * h + ((k & 1) ? 32 : 0) + l0, *qh = b + 128 + 32 * h + l0;
    const int sc = as_char(b[192 + 8 * h + (l0 >> 4) + 2 * k]);
    const float dsc = ct_xmul(d, (float)sc);
    for (int l = 0; l < 16; l++) {
        const uint nib = (k & 2) ? (ql[l] >> 4) : (ql[l] & 15u);
        const int q = (int)(nib | (((qh[l] >> (2 * k)) & 3u) << 4)) - 32;
        y[l] = ct_xmul(dsc, (float)q);
    }
}

void ct_deq16_q8_K(const __global uchar *b, int il, float *y) {
    const float d = as_float(ct_ld_u32(b));
    for (int l = 0; l < 16; l++) y[l] = ct_xmul(d, (float)as_char(b[4 + 16 * il + l]));
}

void ct_deq16_iq4_xs(const __global uchar *b, int il, float *y) {
    const float d = ct_ld_f16(b);
    const uint scales_h = ct_ld_u16(b + 2);
    const int ib = il >> 1;
    const int ls = (int)(((b[4 + (ib >> 1)] >> (4 * (ib & 1))) & 15u) | (((scales_h >> (2 * ib)) & 3u) << 4));
    const float dl = ct_xmul(d, (float)(ls - 32));
    const __global uchar *q = b + 8 + 16 * ib;
    for (int l = 0; l < 16; l++) y[l] = ct_xmul(dl, ct_iq4nl_value((il & 1) ? (q[l] >> 4) : (q[l] & 15u)));
}

/* Element j of a block of type t (a run-time switch for generic kernels). */
float ct_deq(int t, const __global uchar *b, int j) {
    switch (t) {
    case CT_T_F32: return ct_deq_f32(b, j);
    case CT_T_F16: return ct_deq_f16(b, j);
    case CT_T_BF16: return ct_deq_bf16(b, j);
    case CT_T_Q4_0: return ct_deq_q4_0(b, j);
    case CT_T_Q4_1: return ct_deq_q4_1(b, j);
    case CT_T_Q5_0: return ct_deq_q5_0(b, j);
    case CT_T_Q5_1: return ct_deq_q5_1(b, j);
    case CT_T_Q8_0: return ct_deq_q8_0(b, j);
    case CT_T_IQ4_NL: return ct_deq_iq4_nl(b, j);
    case CT_T_Q2_K: return ct_deq_q2_K(b, j);
    case CT_T_Q3_K: return ct_deq_q3_K(b, j);
    case CT_T_Q4_K: return ct_deq_q4_K(b, j);
    case CT_T_Q5_K: return ct_deq_q5_K(b, j);
    case CT_T_Q6_K: return ct_deq_q6_K(b, j);
    case CT_T_Q8_K: return ct_deq_q8_K(b, j);
    case CT_T_IQ4_XS: return ct_deq_iq4_xs(b, j);
    default: return 0.0f;
    }
}

/* ---- 4-element dequantizers ------------------------------------------------------ */

/* Elements 4g .. 4g+3 of a block, for kernels whose neighbouring work-items write
 * neighbouring float4s. Each is ct_deq16_<t>'s arithmetic for those four elements (the
 * same products in the same order), so the results are the same bits. Blocks must be
 * 2-byte aligned: every multi-byte field, and each run of 4 quant bytes, starts at an
 * even offset and is read with 16-bit loads. */

/* Byte c of a word of 4 quant bytes. */
#define CT_QBYTE(q, c) (((q) >> (8 * (c))) & 0xFFu)

/* Unit g (elements 4g .. 4g+3) of a block is loaded by ct_raw4_<t> (the words it
 * needs, as they are in memory) and decoded by ct_cvt4_<t>: a kernel issues the loads
 * of all its units before it decodes any, since the NaN rule's branches in the decode
 * would otherwise hold each unit's loads back until the previous unit is done. */
float ct_h16(uint h) { return ct_half_to_float((ushort)h); }

/* ct_cvt4m_<t>(r, g, exact): with exact, every operation follows the x86 NaN rule
 * (ct_xmul...); without, plain operations. A unit is decoded plainly first and again
 * exactly only when a lane came out NaN: without a NaN the two give the same bits (a
 * NaN anywhere reaches every lane it feeds), and the exact rule's per-operation select,
 * which NVIDIA's compiler makes a branch, then costs one test a unit. */
#define CT_XMUL4(a, b) (exact ? ct_xmul(a, b) : (a) * (b))
#define CT_XADD4(a, b) (exact ? ct_xadd(a, b) : (a) + (b))
#define CT_XSUB4(a, b) (exact ? ct_xsub(a, b) : (a) - (b))

float4 ct_cvt4m_q4_0(uint4 r, int g, int exact) {
    const float d = ct_h16(r.s0);
    const uint s = g >= 4 ? 4u : 0u;
    float y[4];
    for (int c = 0; c < 4; c++) y[c] = CT_XMUL4((float)((int)((CT_QBYTE(r.s1, c) >> s) & 15u) - 8), d);
    return vload4(0, y);
}

float4 ct_cvt4m_q4_1(uint4 r, int g, int exact) {
    const float d = ct_h16(r.s0 & 0xFFFFu), m = ct_h16(r.s0 >> 16);
    const uint s = g >= 4 ? 4u : 0u;
    float y[4];
    for (int c = 0; c < 4; c++) y[c] = CT_XADD4(CT_XMUL4((float)(int)((CT_QBYTE(r.s1, c) >> s) & 15u), d), m);
    return vload4(0, y);
}

float4 ct_cvt4m_q5_0(uint4 r, int g, int exact) {
    const float d = ct_h16(r.s0);
    const uint qh = r.s1 >> (4 * g), s = g >= 4 ? 4u : 0u;
    float y[4];
    for (int c = 0; c < 4; c++) {
        const int x = (int)(((CT_QBYTE(r.s2, c) >> s) & 15u) | (((qh >> c) & 1u) << 4)) - 16;
        y[c] = CT_XMUL4((float)x, d);
    }
    return vload4(0, y);
}

float4 ct_cvt4m_q5_1(uint4 r, int g, int exact) {
    const float d = ct_h16(r.s0 & 0xFFFFu), m = ct_h16(r.s0 >> 16);
    const uint qh = r.s1 >> (4 * g), s = g >= 4 ? 4u : 0u;
    float y[4];
    for (int c = 0; c < 4; c++) {
        const int x = (int)(((CT_QBYTE(r.s2, c) >> s) & 15u) | (((qh >> c) & 1u) << 4));
        y[c] = CT_XADD4(CT_XMUL4((float)x, d), m);
    }
    return vload4(0, y);
}

float4 ct_cvt4m_q8_0(uint4 r, int g, int exact) {
    const float d = ct_h16(r.s0);
    float y[4];
    for (int c = 0; c < 4; c++) y[c] = CT_XMUL4((float)as_char((uchar)CT_QBYTE(r.s1, c)), d);
    return vload4(0, y);
}

float4 ct_cvt4m_iq4_nl(uint4 r, int g, int exact) {
    const float d = ct_h16(r.s0);
    const uint s = g >= 4 ? 4u : 0u;
    float y[4];
    for (int c = 0; c < 4; c++) y[c] = CT_XMUL4(d, ct_iq4nl_value((CT_QBYTE(r.s1, c) >> s) & 15u));
    return vload4(0, y);
}

/* 256-blocks: g = 0..63 lies in the 16-group il = g / 4, at offset l = 4 * (g % 4) in it. */
float4 ct_cvt4m_q2_K(uint4 r, int g, int exact) {
    const int il = g >> 2, shift = ((il & 7) >> 1) * 2;
    const float d = ct_h16(r.s0 & 0xFFFFu), min = ct_h16(r.s0 >> 16);
    const float dl = CT_XMUL4(d, (float)(r.s1 & 15u));
    const float ml = CT_XMUL4(min, (float)(r.s1 >> 4));
    float y[4];
    for (int c = 0; c < 4; c++) y[c] = CT_XSUB4(CT_XMUL4(dl, (float)((CT_QBYTE(r.s2, c) >> shift) & 3u)), ml);
    return vload4(0, y);
}

/* r.s1: Q3_K's scale bytes for group il (ct_q3_K_scale's two) as lo | hi << 8. */
float4 ct_cvt4m_q3_K(uint4 r, int g, int exact) {
    const int il = g >> 2, hb = il >> 3, s = (il & 7) >> 1;
    const uint m = 1u << (4 * hb + s);
    const int lo = il < 8 ? (int)(r.s1 & 15u) : (int)((r.s1 & 0xFFu) >> 4);
    const int hi = (int)(((r.s1 >> 8) >> (2 * (il >> 2))) & 3u);
    const float dl = CT_XMUL4(ct_h16(r.s0), (float)((lo | (hi << 4)) - 32));
    float y[4];
    for (int c = 0; c < 4; c++) {
        const int v = (int)((CT_QBYTE(r.s2, c) >> (2 * s)) & 3u) - ((CT_QBYTE(r.s3, c) & m) ? 0 : 4);
        y[c] = CT_XMUL4(dl, (float)v);
    }
    return vload4(0, y);
}

/* r.s1: the three scale bytes ct_get_scale_min_k4 reads for sub-block j = 2 * c0 + hi:
 * q[j & 3] | q[j + 4] << 8 | q[j] << 16 (q = the 12 scale bytes). */
void ct_cvt_scale_min_k4(int j, uint v, int *d, int *m) {
    const int lo = (int)(v & 0xFFu), hi = (int)((v >> 8) & 0xFFu), own = (int)(v >> 16);
    if (j < 4) {
        *d = lo & 63;
        *m = hi & 63;
    } else {
        *d = (hi & 15) | ((lo >> 6) << 4);
        *m = (hi >> 4) | ((own >> 6) << 4);
    }
}

float4 ct_cvt4m_q4_K(uint4 r, int g, int exact) {
    const int il = g >> 2, c0 = il >> 2, hi = (il >> 1) & 1;
    const float d = ct_h16(r.s0 & 0xFFFFu), min = ct_h16(r.s0 >> 16);
    int sc, m;
    ct_cvt_scale_min_k4(2 * c0 + hi, r.s1, &sc, &m);
    const float d1 = CT_XMUL4(d, (float)sc), m1 = CT_XMUL4(min, (float)m);
    float y[4];
    for (int c = 0; c < 4; c++) {
        const uint qc = CT_QBYTE(r.s2, c);
        y[c] = CT_XSUB4(CT_XMUL4(d1, (float)(hi ? (qc >> 4) : (qc & 15u))), m1);
    }
    return vload4(0, y);
}

float4 ct_cvt4m_q5_K(uint4 r, int g, int exact) {
    const int il = g >> 2, c0 = il >> 2, hi = (il >> 1) & 1;
    const float d = ct_h16(r.s0 & 0xFFFFu), min = ct_h16(r.s0 >> 16);
    int sc, m;
    ct_cvt_scale_min_k4(2 * c0 + hi, r.s1, &sc, &m);
    const float d1 = CT_XMUL4(d, (float)sc), m1 = CT_XMUL4(min, (float)m);
    const uint u = (1u << (2 * c0)) << hi;
    float y[4];
    for (int c = 0; c < 4; c++) {
        const uint qc = CT_QBYTE(r.s2, c);
        const uint v = (hi ? (qc >> 4) : (qc & 15u)) + ((CT_QBYTE(r.s3, c) & u) ? 16u : 0u);
        y[c] = CT_XSUB4(CT_XMUL4(d1, (float)v), m1);
    }
    return vload4(0, y);
}

float4 ct_cvt4m_q6_K(uint4 r, int g, int exact) {
    const int il = g >> 2, k = (il >> 1) & 3;
    const float dsc = CT_XMUL4(ct_h16(r.s0), (float)as_char((uchar)r.s3));
    float y[4];
    for (int c = 0; c < 4; c++) {
        const uint qc = CT_QBYTE(r.s1, c);
        const uint nib = (k & 2) ? (qc >> 4) : (qc & 15u);
        const int q = (int)(nib | (((CT_QBYTE(r.s2, c) >> (2 * k)) & 3u) << 4)) - 32;
        y[c] = CT_XMUL4(dsc, (float)q);
    }
    return vload4(0, y);
}

float4 ct_cvt4m_q8_K(uint4 r, int g, int exact) {
    const float d = as_float(r.s0);
    float y[4];
    for (int c = 0; c < 4; c++) y[c] = CT_XMUL4(d, (float)as_char((uchar)CT_QBYTE(r.s1, c)));
    return vload4(0, y);
}

float4 ct_cvt4m_iq4_xs(uint4 r, int g, int exact) {
    const int il = g >> 2, ib = il >> 1;
    const uint scales_h = r.s0 >> 16;
    const int ls = (int)(((r.s1 >> (4 * (ib & 1))) & 15u) | (((scales_h >> (2 * ib)) & 3u) << 4));
    const float dl = CT_XMUL4(ct_h16(r.s0 & 0xFFFFu), (float)(ls - 32));
    const uint s = (il & 1) ? 4u : 0u;
    float y[4];
    for (int c = 0; c < 4; c++) y[c] = CT_XMUL4(dl, ct_iq4nl_value((CT_QBYTE(r.s2, c) >> s) & 15u));
    return vload4(0, y);
}

#define CT_CVT4_DEF(T)                                                                                                 \
    float4 ct_cvt4_##T(uint4 r, int g) {                                                                               \
        const float4 y = ct_cvt4m_##T(r, g, 0);                                                                        \
        return any(isnan(y)) ? ct_cvt4m_##T(r, g, 1) : y;                                                              \
    }
CT_CVT4_DEF(q4_0)
CT_CVT4_DEF(q4_1)
CT_CVT4_DEF(q5_0)
CT_CVT4_DEF(q5_1)
CT_CVT4_DEF(q8_0)
CT_CVT4_DEF(iq4_nl)
CT_CVT4_DEF(q2_K)
CT_CVT4_DEF(q3_K)
CT_CVT4_DEF(q4_K)
CT_CVT4_DEF(q5_K)
CT_CVT4_DEF(q6_K)
CT_CVT4_DEF(q8_K)
CT_CVT4_DEF(iq4_xs)

/* The loads of ct_raw4_<t> from blocks in address space AS (function suffix SFX): _g
 * for __global, _l for __local (a work-group's staged copy). Blocks are 2-byte aligned. */
#define CT_RAW4_DEFS(AS, SFX)                                                                                          \
uint ct_ld16##SFX(AS const uchar *p) { return *(AS const ushort *)p; }                                                 \
uint ct_ld32##SFX(AS const uchar *p) { return ct_ld16##SFX(p) | (ct_ld16##SFX(p + 2) << 16); }                         \
uint4 ct_raw4_q4_0##SFX(AS const uchar *b, int g) {                                                                    \
    return (uint4)(ct_ld16##SFX(b), ct_ld32##SFX(b + 2 + 4 * (g & 3)), 0u, 0u);                                        \
}                                                                                                                      \
uint4 ct_raw4_q4_1##SFX(AS const uchar *b, int g) {                                                                    \
    return (uint4)(ct_ld32##SFX(b), ct_ld32##SFX(b + 4 + 4 * (g & 3)), 0u, 0u);                                        \
}                                                                                                                      \
uint4 ct_raw4_q5_0##SFX(AS const uchar *b, int g) {                                                                    \
    return (uint4)(ct_ld16##SFX(b), ct_ld32##SFX(b + 2), ct_ld32##SFX(b + 6 + 4 * (g & 3)), 0u);                       \
}                                                                                                                      \
uint4 ct_raw4_q5_1##SFX(AS const uchar *b, int g) {                                                                    \
    return (uint4)(ct_ld32##SFX(b), ct_ld32##SFX(b + 4), ct_ld32##SFX(b + 8 + 4 * (g & 3)), 0u);                       \
}                                                                                                                      \
uint4 ct_raw4_q8_0##SFX(AS const uchar *b, int g) {                                                                    \
    return (uint4)(ct_ld16##SFX(b), ct_ld32##SFX(b + 2 + 4 * g), 0u, 0u);                                              \
}                                                                                                                      \
uint4 ct_raw4_iq4_nl##SFX(AS const uchar *b, int g) {                                                                  \
    return (uint4)(ct_ld16##SFX(b), ct_ld32##SFX(b + 2 + 4 * (g & 3)), 0u, 0u);                                        \
}                                                                                                                      \
uint4 ct_raw4_q2_K##SFX(AS const uchar *b, int g) {                                                                    \
    const int il = g >> 2, l = 4 * (g & 3), hb = il >> 3, sub = il & 1;                                                \
    return (uint4)(ct_ld32##SFX(b + 80), b[il], ct_ld32##SFX(b + 16 + 32 * hb + 16 * sub + l), 0u);                    \
}                                                                                                                      \
uint4 ct_raw4_q3_K##SFX(AS const uchar *b, int g) {                                                                    \
    const int il = g >> 2, l = 4 * (g & 3), hb = il >> 3, sub = il & 1;                                                \
    const uint sc = (uint)b[96 + (il & 7)] | ((uint)b[96 + 8 + (il & 3)] << 8);                                        \
    return (uint4)(ct_ld16##SFX(b + 108), sc, ct_ld32##SFX(b + 32 + 32 * hb + 16 * sub + l),                           \
                   ct_ld32##SFX(b + 16 * sub + l));                                                                    \
}                                                                                                                      \
uint ct_raw_scales_k4##SFX(AS const uchar *q, int j) {                                                                 \
    return (uint)q[j & 3] | ((uint)q[j + 4] << 8) | ((uint)q[j] << 16);                                                \
}                                                                                                                      \
uint4 ct_raw4_q4_K##SFX(AS const uchar *b, int g) {                                                                    \
    const int il = g >> 2, c0 = il >> 2, hi = (il >> 1) & 1, l = 16 * (il & 1) + 4 * (g & 3);                          \
    return (uint4)(ct_ld32##SFX(b), ct_raw_scales_k4##SFX(b + 4, 2 * c0 + hi), ct_ld32##SFX(b + 16 + 32 * c0 + l), 0u); \
}                                                                                                                      \
uint4 ct_raw4_q5_K##SFX(AS const uchar *b, int g) {                                                                    \
    const int il = g >> 2, c0 = il >> 2, hi = (il >> 1) & 1, l = 16 * (il & 1) + 4 * (g & 3);                          \
    return (uint4)(ct_ld32##SFX(b), ct_raw_scales_k4##SFX(b + 4, 2 * c0 + hi), ct_ld32##SFX(b + 48 + 32 * c0 + l),     \
                   ct_ld32##SFX(b + 16 + l));                                                                          \
}                                                                                                                      \
uint4 ct_raw4_q6_K##SFX(AS const uchar *b, int g) {                                                                    \
    const int il = g >> 2, h = il >> 3, k = (il >> 1) & 3, l0 = 16 * (il & 1), l = l0 + 4 * (g & 3);                   \
    return (uint4)(ct_ld16##SFX(b + 208), ct_ld32##SFX(b + 64 * h + ((k & 1) ? 32 : 0) + l),                           \
                   ct_ld32##SFX(b + 128 + 32 * h + l), b[192 + 8 * h + (l0 >> 4) + 2 * k]);                            \
}                                                                                                                      \
uint4 ct_raw4_q8_K##SFX(AS const uchar *b, int g) {                                                                    \
    return (uint4)(ct_ld32##SFX(b), ct_ld32##SFX(b + 4 + 4 * g), 0u, 0u);                                              \
}                                                                                                                      \
uint4 ct_raw4_iq4_xs##SFX(AS const uchar *b, int g) {                                                                  \
    const int il = g >> 2, ib = il >> 1;                                                                               \
    return (uint4)(ct_ld32##SFX(b), b[4 + (ib >> 1)], ct_ld32##SFX(b + 8 + 16 * ib + 4 * (g & 3)), 0u);                \
}
CT_RAW4_DEFS(__global, _g)
CT_RAW4_DEFS(__local, _l)

/* ---- quantizers (src/types/quantize.c, bit for bit) ----------------------------- */

/* (int8_t)v / (uint8_t)v as the reference pins them: truncate to int32 (NaN and
 * out of range give INT32_MIN), keep the low byte. convert_int_sat is the truncation
 * in range, INT32_MIN (low byte 0) below it and 0 for NaN; only v >= 2^31 needs the
 * select. Three operations an element on NVIDIA, where range tests of the plain
 * conversion took eight (the quantizing kernels are bound by their instructions). */
uint ct_trunc_low_byte(float v) { return v < 0x1p31f ? (uint)convert_int_sat(v) & 0xFFu : 0u; }

/* (int8_t)roundf(v) the same way; round() is roundf (halves away from zero, exact). */
uint ct_round_low_byte(float v) { return v < 0x1p31f ? (uint)convert_int_sat(round(v)) & 0xFFu : 0u; }

/* MIN(hi, (int8_t)v) stored as uint8_t. */
uint ct_trunc_int8_min(float v, int hi) { return (uint)min((int)as_char((uchar)ct_trunc_low_byte(v)), hi) & 0xFFu; }

void ct_quantize_q8_0(const float *x, __global uchar *y) {
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float av = fabs(x[j]);
        amax = amax > av ? amax : av; /* the reference's MAX(): a NaN is replaced by the next value */
    }
    const float d = ct_xdiv(amax, 127.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    ct_st_u16(y, ct_float_to_half(d));
    for (int j = 0; j < 32; j++) y[2 + j] = (uchar)ct_round_low_byte(x[j] * id);
}

/* The signed value with the largest |x|, first occurrence; +0.0 when all are zero. */
float ct_signed_absmax(const float *x) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        if (amax < fabs(x[j])) {
            amax = fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

void ct_quantize_q4_0(const float *x, __global uchar *y) {
    const float d = ct_xdiv(ct_signed_absmax(x), -8.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    ct_st_u16(y, ct_float_to_half(d));
    for (int j = 0; j < 16; j++) {
        const uint xi0 = ct_trunc_int8_min(x[j] * id + 8.5f, 15);
        const uint xi1 = ct_trunc_int8_min(x[j + 16] * id + 8.5f, 15);
        y[2 + j] = (uchar)(xi0 | (xi1 << 4));
    }
}

void ct_quantize_q5_0(const float *x, __global uchar *y) {
    const float d = ct_xdiv(ct_signed_absmax(x), -16.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    ct_st_u16(y, ct_float_to_half(d));
    uint qh = 0;
    for (int j = 0; j < 16; j++) {
        const uint xi0 = ct_trunc_int8_min(x[j] * id + 16.5f, 31);
        const uint xi1 = ct_trunc_int8_min(x[j + 16] * id + 16.5f, 31);
        y[6 + j] = (uchar)((xi0 & 15u) | ((xi1 & 15u) << 4));
        qh |= ((xi0 & 0x10u) >> 4) << j;
        qh |= ((xi1 & 0x10u) >> 4) << (j + 16);
    }
    ct_st_u32(y + 2, qh);
}

/* min and max from +-FLT_MAX with strict compares (NaN is skipped). */
void ct_block_min_max(const float *x, float *min_out, float *max_out) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < 32; j++) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    *min_out = min;
    *max_out = max;
}

void ct_quantize_q4_1(const float *x, __global uchar *y) {
    float min, max;
    ct_block_min_max(x, &min, &max);
    const float d = ct_xdiv(ct_xsub(max, min), 15.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    ct_st_u16(y, ct_float_to_half(d));
    ct_st_u16(y + 2, ct_float_to_half(min));
    for (int j = 0; j < 16; j++) {
        const uint xi0 = ct_trunc_int8_min((x[j] - min) * id + 0.5f, 15);
        const uint xi1 = ct_trunc_int8_min((x[j + 16] - min) * id + 0.5f, 15);
        y[4 + j] = (uchar)(xi0 | (xi1 << 4));
    }
}

void ct_quantize_q5_1(const float *x, __global uchar *y) {
    float min, max;
    ct_block_min_max(x, &min, &max);
    const float d = ct_xdiv(ct_xsub(max, min), 31.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    ct_st_u16(y, ct_float_to_half(d));
    ct_st_u16(y + 2, ct_float_to_half(min));
    uint qh = 0;
    for (int j = 0; j < 16; j++) {
        const uint xi0 = ct_trunc_low_byte((x[j] - min) * id + 0.5f); /* no clamp, as the reference */
        const uint xi1 = ct_trunc_low_byte((x[j + 16] - min) * id + 0.5f);
        y[8 + j] = (uchar)((xi0 & 15u) | ((xi1 & 15u) << 4));
        qh |= ((xi0 & 0x10u) >> 4) << j;
        qh |= ((xi1 & 0x10u) >> 4) << (j + 16);
    }
    ct_st_u32(y + 4, qh);
}

/* The reference's best_index_int8 without branches: its binary search ends at
 * mu = 1 + #{k in 1..14 : !(a < v[k])}, returned; NaN gives 15. The count's conditions
 * hold for a prefix of k, so the two candidates *lo = v[mu - 1] and *hi = v[mu] are
 * carried along rather than looked up by mu, which varies across a warp. */
uint ct_iq4nl_bracket(float a, float *lo, float *hi) {
    uint mu = 1;
    float l = ct_kvalues_iq4nl_f[0], h = ct_kvalues_iq4nl_f[1];
    for (int k = 1; k < 15; k++) {
        const bool up = !(a < ct_kvalues_iq4nl_f[k]);
        mu += up ? 1u : 0u;
        l = up ? ct_kvalues_iq4nl_f[k] : l;
        h = up ? ct_kvalues_iq4nl_f[k + 1] : h;
    }
    *lo = l;
    *hi = h;
    return mu;
}

/* The index of the nearer candidate (ties go to the upper neighbour); *q its value. */
uint ct_iq4nl_pick(float a, uint mu, float lo, float hi, float *q) {
    const bool low = a - lo < hi - a;
    *q = low ? lo : hi;
    return low ? mu - 1u : mu;
}

uint ct_iq4nl_best_index(float a, float *q) {
    float lo, hi;
    const uint mu = ct_iq4nl_bracket(a, &lo, &hi);
    return ct_iq4nl_pick(a, mu, lo, hi, q);
}

/* ct_iq4nl_best_index by a table of 256 words: the boundaries v[k] are integers, so
 * !(a < v[k]) is floor(a) >= v[k], and floor(a) clamped to -128..127 (NaN: 127, where
 * every condition holds) picks mu and the two candidates. ct_iq4nl_tab_entry(t) is the
 * word for floor(a) = t: mu | lo << 8 | hi << 16 (the candidates as signed bytes). */
uint ct_iq4nl_tab_entry(int t) {
    float lo, hi;
    const uint mu = ct_iq4nl_bracket((float)t, &lo, &hi);
    return mu | ((uint)(uchar)(char)lo << 8) | ((uint)(uchar)(char)hi << 16);
}

uint ct_iq4nl_best_index_tab(float a, float *q, __local const uint *tab) {
    const int t = isnan(a) ? 127 : clamp(convert_int_sat_rtn(a), -128, 127);
    const uint e = tab[t + 128];
    return ct_iq4nl_pick(a, e & 0xFFu, (float)as_char((uchar)(e >> 8)), (float)as_char((uchar)(e >> 16)), q);
}

/* Element x's terms of an IQ4_NL block's two sums, wq * x and wq * q (w = x * x, q its
 * value), in plain operations (ct_quantize_iq4_nl says why). */
void ct_iq4nl_terms(float x, float q, float *wqx, float *wqq) {
    const float wq = (x * x) * q;
    *wqx = wq * x;
    *wqq = wq * q;
}

/* Element x of an IQ4_NL block at inverse scale id: its index and its sum terms. */
uint ct_iq4nl_elem(float x, float id, float *wqx, float *wqq) {
    float q;
    const uint L = ct_iq4nl_best_index(id * x, &q);
    ct_iq4nl_terms(x, q, wqx, wqq);
    return L;
}

/* No scale search (ntry = -1); max |x| < 1e-15 gives d = 0 and every byte 0x88. The
 * products and sums are plain operations, not the x86 NaN rule's: no NaN's sign or
 * payload reaches the block (an index depends only on whether id * x is NaN, and a NaN
 * scale is stored as 0x7E00). The rule's select, which NVIDIA makes a branch, cost
 * SET_ROWS into IQ4_NL 600 -> 460 us on the H200. */
void ct_quantize_iq4_nl(const float *x, __global uchar *y) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float ax = fabs(x[j]);
        if (ax > amax) {
            amax = ax;
            max = x[j];
        }
    }
    if (amax < 1e-15f) {
        ct_st_u16(y, ct_float_to_half(0.0f));
        for (int j = 0; j < 16; j++) y[2 + j] = 0x88;
        return;
    }
    const float d0 = ct_xdiv(max, -127.0f);
    const float id = ct_xdiv(1.0f, d0);
    float sumqx = 0.0f, sumq2 = 0.0f;
    uchar L[32];
    for (int j = 0; j < 32; j++) {
        float wqx, wqq;
        L[j] = (uchar)ct_iq4nl_elem(x[j], id, &wqx, &wqq);
        sumqx = sumqx + wqx;
        sumq2 = sumq2 + wqq;
    }
    /* the reference's `sumq2 > 0 ? sumqx/sumq2 : 0`: a NaN element gives d = +0 */
    const float d = sumq2 > 0.0f ? ct_xdiv(sumqx, sumq2) : 0.0f;
    /* NaN scales are the one canonical NaN 0x7E00, as on the CPU (quantize.c) */
    ct_st_u16(y, isnan(d) ? (ushort)0x7E00 : ct_float_to_half(d));
    for (int j = 0; j < 16; j++) y[2 + j] = (uchar)(L[j] | (L[j + 16] << 4));
}

/* One block of 32 floats into a block of type t (a run-time switch). */
void ct_quantize_block(int t, const float *x, __global uchar *y) {
    switch (t) {
    case CT_T_Q8_0: ct_quantize_q8_0(x, y); break;
    case CT_T_Q4_0: ct_quantize_q4_0(x, y); break;
    case CT_T_Q4_1: ct_quantize_q4_1(x, y); break;
    case CT_T_Q5_0: ct_quantize_q5_0(x, y); break;
    case CT_T_Q5_1: ct_quantize_q5_1(x, y); break;
    case CT_T_IQ4_NL: ct_quantize_iq4_nl(x, y); break;
    default: break;
    }
}

/* ---- team quantizers: 4 work-items per block ---------------------------------------
 *
 * Work-item `lane` (0..3) of a team holds xa = elements 4*lane .. 4*lane+3 of the block
 * and xb = elements 16+4*lane .. 16+4*lane+3: the pairs (j, j+16) that share a quant
 * byte, so no lane needs another's values to write its bytes. A kernel (set_rows.cl):
 *   1. takes the statistics of its two runs of 4, ct_qt_stat_<t>(xa) and (xb), and joins
 *      them with the team's in element order: ct_qt_join_<t>(earlier, later) is
 *      associative, so lanes exchange partials pairwise (lane ^ 1, then lane ^ 2) and
 *      every lane ends with the statistic of runs 0..3 and of runs 4..7, joined last;
 *   2. s = ct_qt_scale_<t>(statistic); ct_qt_out_<t>(y, lane, xa, xb, s, aux) writes this
 *      lane's quant bytes and returns its bits of Q5's qh (OR-ed across the team), or
 *      leaves in aux what lane 0 needs (CT_QT_AUX_<t> float2: IQ4_NL's sum terms), then a
 *      barrier when CT_QT_AUX_<t> > 0;
 *   3. lane 0: ct_qt_fin_<t>(y, aux, s, qh) writes the scales (and qh).
 * Each statistic is the sequential one of ct_quantize_<t> (the same comparisons, first
 * occurrence winning ties, NaN rules), and every later expression is the sequential one:
 * the bytes are ct_quantize_<t>'s. y must be 2-byte aligned. */

/* The reference's running MAX over |x| (a NaN is replaced by the next value): a run
 * either has no NaN and maps a to max(a, m), or ends in a constant (the running value
 * after its last NaN); the sign bit, never set by fabs, marks the second kind. */
float2 ct_qt_stat_q8_0(float4 x) {
    const float v[4] = {x.s0, x.s1, x.s2, x.s3};
    float amax = 0.0f;
    bool has_nan = false;
    for (int c = 0; c < 4; c++) {
        const float av = fabs(v[c]);
        has_nan = has_nan || isnan(av);
        amax = amax > av ? amax : av;
    }
    return (float2)(as_float(as_uint(amax) | (has_nan ? 0x80000000u : 0u)), 0.0f);
}

/* (max |x|, the signed value with it): first occurrence, NaN skipped (ct_signed_absmax;
 * IQ4_NL's search is the same comparison). */
float2 ct_qt_stat_absmax(float4 x) {
    const float v[4] = {x.s0, x.s1, x.s2, x.s3};
    float amax = 0.0f, max = 0.0f;
    for (int c = 0; c < 4; c++) {
        if (amax < fabs(v[c])) {
            amax = fabs(v[c]);
            max = v[c];
        }
    }
    return (float2)(amax, max);
}

/* (min, max) from +-FLT_MAX with strict compares (ct_block_min_max). */
float2 ct_qt_stat_minmax(float4 x) {
    const float v[4] = {x.s0, x.s1, x.s2, x.s3};
    float min = FLT_MAX, max = -FLT_MAX;
    for (int c = 0; c < 4; c++) {
        if (v[c] < min) min = v[c];
        if (v[c] > max) max = v[c];
    }
    return (float2)(min, max);
}

#define ct_qt_stat_q4_0 ct_qt_stat_absmax
#define ct_qt_stat_q5_0 ct_qt_stat_absmax
#define ct_qt_stat_iq4_nl ct_qt_stat_absmax
#define ct_qt_stat_q4_1 ct_qt_stat_minmax
#define ct_qt_stat_q5_1 ct_qt_stat_minmax

/* Q8_0: the running max of a then b. A constant b wins; else max(m_a, m_b) (the
 * reference's a > b ? a : b, which drops a NaN m_a, as a NaN running value is) keeps
 * a's kind. The maxima of runs without NaN are never NaN, so the order of joins does not
 * matter. */
float2 ct_qt_join_q8_0(float2 a, float2 b) {
    if (as_uint(b.x) & 0x80000000u) return b;
    const float ma = as_float(as_uint(a.x) & 0x7FFFFFFFu);
    const float m = ma > b.x ? ma : b.x;
    return (float2)(as_float(as_uint(m) | (as_uint(a.x) & 0x80000000u)), 0.0f);
}

/* The first of the largest |x| (amax is never NaN; amax 0 comes with max +0). */
float2 ct_qt_join_absmax(float2 a, float2 b) { return a.x < b.x ? b : a; }

/* The first minimum and the first maximum (neither is NaN). */
float2 ct_qt_join_minmax(float2 a, float2 b) { return (float2)(b.x < a.x ? b.x : a.x, b.y > a.y ? b.y : a.y); }

/* The words of a statistic (x 1, y 2) that carry it, the only ones warp shuffles move:
 * Q8_0's x; the absmax types' y (the signed value: x = |y|); both of (min, max). */
#define CT_QT_XWORDS_q8_0 1
#define CT_QT_XWORDS_q4_0 2
#define CT_QT_XWORDS_q5_0 2
#define CT_QT_XWORDS_iq4_nl 2
#define CT_QT_XWORDS_q4_1 3
#define CT_QT_XWORDS_q5_1 3

/* A statistic from its CT_QT_XWORDS_<t> words (the others any value). */
float2 ct_qt_rebuild_q8_0(float2 a) { return (float2)(a.x, 0.0f); }
float2 ct_qt_rebuild_absmax(float2 a) { return (float2)(fabs(a.y), a.y); }
float2 ct_qt_rebuild_minmax(float2 a) { return a; }
#define ct_qt_rebuild_q4_0 ct_qt_rebuild_absmax
#define ct_qt_rebuild_q5_0 ct_qt_rebuild_absmax
#define ct_qt_rebuild_iq4_nl ct_qt_rebuild_absmax
#define ct_qt_rebuild_q4_1 ct_qt_rebuild_minmax
#define ct_qt_rebuild_q5_1 ct_qt_rebuild_minmax

#define ct_qt_join_q4_0 ct_qt_join_absmax
#define ct_qt_join_q5_0 ct_qt_join_absmax
#define ct_qt_join_iq4_nl ct_qt_join_absmax
#define ct_qt_join_q4_1 ct_qt_join_minmax
#define ct_qt_join_q5_1 ct_qt_join_minmax

/* s = (d, id, min, unused), from the block's joined statistic c */
float4 ct_qt_scale_q8_0(float2 c) {
    /* the running max from 0: a constant, or max(0, m) = m */
    const float amax = as_float(as_uint(c.x) & 0x7FFFFFFFu);
    const float d = ct_xdiv(amax, 127.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    return (float4)(d, id, 0.0f, 0.0f);
}

float4 ct_qt_scale_q4_0(float2 c) {
    const float d = ct_xdiv(c.y, -8.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    return (float4)(d, id, 0.0f, 0.0f);
}

float4 ct_qt_scale_q5_0(float2 c) {
    const float d = ct_xdiv(c.y, -16.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    return (float4)(d, id, 0.0f, 0.0f);
}

float4 ct_qt_scale_q4_1(float2 c) {
    const float d = ct_xdiv(ct_xsub(c.y, c.x), 15.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    return (float4)(d, id, c.x, 0.0f);
}

float4 ct_qt_scale_q5_1(float2 c) {
    const float d = ct_xdiv(ct_xsub(c.y, c.x), 31.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    return (float4)(d, id, c.x, 0.0f);
}

/* IQ4_NL: s = (unused, id, 1 when max |x| < 1e-15, unused). */
float4 ct_qt_scale_iq4_nl(float2 c) {
    if (c.x < 1e-15f) return (float4)(0.0f, 0.0f, 1.0f, 0.0f);
    const float d0 = ct_xdiv(c.y, -127.0f);
    return (float4)(0.0f, ct_xdiv(1.0f, d0), 0.0f, 0.0f);
}

#define CT_QT_AUX_q8_0 0
#define CT_QT_AUX_q4_0 0
#define CT_QT_AUX_q4_1 0
#define CT_QT_AUX_q5_0 0
#define CT_QT_AUX_q5_1 0
/* IQ4_NL: element j's two sum terms in aux[j]; 33, odd, so that the lanes 0 of a warp's
 * teams read different banks (with 32 float2 a team, all 8 read one bank: 8 times slower) */
#define CT_QT_AUX_iq4_nl 33

/* Words of the IQ4_NL index table (ct_iq4nl_tab_entry) a work-group fills first. */
#define CT_QT_TAB_q8_0 0
#define CT_QT_TAB_q4_0 0
#define CT_QT_TAB_q4_1 0
#define CT_QT_TAB_q5_0 0
#define CT_QT_TAB_q5_1 0
#define CT_QT_TAB_iq4_nl 256

/* The writers of steps 2 and 3, for a destination in address space AS (function suffix
 * SFX): _g for __global, _l for __local (a work-group's staged output). ct_sta_u32 stores
 * 4 bytes at a 2-byte aligned address.
 *   Q4: (uchar)(xi0 | (xi1 << 4)): xi0's high bits stay, as in the reference.
 *   Q5: qs from the low nibbles; bit 4 of element j's value is bit j of qh, of which each
 *       lane returns its 8 bits (0 from the other types' writers).
 *   IQ4_NL: the index search is per element, so lanes do it in parallel; the two sums are
 *       sequential in the reference, so each lane leaves its terms (wq*x, wq*q) of element
 *       j in aux[j] and lane 0 adds all 32 in element order (plain operations,
 *       as ct_quantize_iq4_nl says why). */
#define CT_QT_OUT_DEFS(AS, SFX)                                                                                        \
void ct_sta_u32##SFX(AS uchar *p, uint v) {                                                                            \
    *(AS ushort *)p = (ushort)v;                                                                                       \
    *(AS ushort *)(p + 2) = (ushort)(v >> 16);                                                                         \
}                                                                                                                      \
uint ct_qt_out_q8_0##SFX(AS uchar *y, int lane, float4 xa, float4 xb, float4 s, __local float2 *aux, __local const uint *tab) { \
    const float a[4] = {xa.s0, xa.s1, xa.s2, xa.s3}, b[4] = {xb.s0, xb.s1, xb.s2, xb.s3};                              \
    uint wa = 0, wb = 0;                                                                                               \
    for (int c = 0; c < 4; c++) {                                                                                      \
        wa |= ct_round_low_byte(a[c] * s.s1) << (8 * c);                                                               \
        wb |= ct_round_low_byte(b[c] * s.s1) << (8 * c);                                                               \
    }                                                                                                                  \
    ct_sta_u32##SFX(y + 2 + 4 * lane, wa);                                                                             \
    ct_sta_u32##SFX(y + 18 + 4 * lane, wb);                                                                            \
    return 0;                                                                                                          \
}                                                                                                                      \
void ct_qt_fin_q8_0##SFX(AS uchar *y, __local const float2 *aux, float4 s, uint qh) {                                  \
    *(AS ushort *)y = ct_float_to_half(s.s0);                                                                          \
}                                                                                                                      \
uint ct_qt_out_q4_0##SFX(AS uchar *y, int lane, float4 xa, float4 xb, float4 s, __local float2 *aux, __local const uint *tab) { \
    const float a[4] = {xa.s0, xa.s1, xa.s2, xa.s3}, b[4] = {xb.s0, xb.s1, xb.s2, xb.s3};                              \
    uint w = 0;                                                                                                        \
    for (int c = 0; c < 4; c++) {                                                                                      \
        const uint xi0 = ct_trunc_int8_min(a[c] * s.s1 + 8.5f, 15);                                                    \
        const uint xi1 = ct_trunc_int8_min(b[c] * s.s1 + 8.5f, 15);                                                    \
        w |= ((xi0 | (xi1 << 4)) & 0xFFu) << (8 * c);                                                                  \
    }                                                                                                                  \
    ct_sta_u32##SFX(y + 2 + 4 * lane, w);                                                                              \
    return 0;                                                                                                          \
}                                                                                                                      \
void ct_qt_fin_q4_0##SFX(AS uchar *y, __local const float2 *aux, float4 s, uint qh) {                                  \
    *(AS ushort *)y = ct_float_to_half(s.s0);                                                                          \
}                                                                                                                      \
uint ct_qt_out_q4_1##SFX(AS uchar *y, int lane, float4 xa, float4 xb, float4 s, __local float2 *aux, __local const uint *tab) { \
    const float a[4] = {xa.s0, xa.s1, xa.s2, xa.s3}, b[4] = {xb.s0, xb.s1, xb.s2, xb.s3};                              \
    uint w = 0;                                                                                                        \
    for (int c = 0; c < 4; c++) {                                                                                      \
        const uint xi0 = ct_trunc_int8_min((a[c] - s.s2) * s.s1 + 0.5f, 15);                                           \
        const uint xi1 = ct_trunc_int8_min((b[c] - s.s2) * s.s1 + 0.5f, 15);                                           \
        w |= ((xi0 | (xi1 << 4)) & 0xFFu) << (8 * c);                                                                  \
    }                                                                                                                  \
    ct_sta_u32##SFX(y + 4 + 4 * lane, w);                                                                              \
    return 0;                                                                                                          \
}                                                                                                                      \
void ct_qt_fin_q4_1##SFX(AS uchar *y, __local const float2 *aux, float4 s, uint qh) {                                  \
    *(AS ushort *)y = ct_float_to_half(s.s0);                                                                          \
    *(AS ushort *)(y + 2) = ct_float_to_half(s.s2);                                                                    \
}                                                                                                                      \
uint ct_qt_out_q5_0##SFX(AS uchar *y, int lane, float4 xa, float4 xb, float4 s, __local float2 *aux, __local const uint *tab) { \
    const float a[4] = {xa.s0, xa.s1, xa.s2, xa.s3}, b[4] = {xb.s0, xb.s1, xb.s2, xb.s3};                              \
    uint w = 0, qh = 0;                                                                                                \
    for (int c = 0; c < 4; c++) {                                                                                      \
        const uint xi0 = ct_trunc_int8_min(a[c] * s.s1 + 16.5f, 31);                                                   \
        const uint xi1 = ct_trunc_int8_min(b[c] * s.s1 + 16.5f, 31);                                                   \
        w |= ((xi0 & 15u) | ((xi1 & 15u) << 4)) << (8 * c);                                                            \
        qh |= (((xi0 & 0x10u) >> 4) << (4 * lane + c)) | (((xi1 & 0x10u) >> 4) << (16 + 4 * lane + c));                \
    }                                                                                                                  \
    ct_sta_u32##SFX(y + 6 + 4 * lane, w);                                                                              \
    return qh;                                                                                                         \
}                                                                                                                      \
void ct_qt_fin_q5_0##SFX(AS uchar *y, __local const float2 *aux, float4 s, uint qh) {                                  \
    *(AS ushort *)y = ct_float_to_half(s.s0);                                                                          \
    ct_sta_u32##SFX(y + 2, qh);                                                                                        \
}                                                                                                                      \
uint ct_qt_out_q5_1##SFX(AS uchar *y, int lane, float4 xa, float4 xb, float4 s, __local float2 *aux, __local const uint *tab) { \
    const float a[4] = {xa.s0, xa.s1, xa.s2, xa.s3}, b[4] = {xb.s0, xb.s1, xb.s2, xb.s3};                              \
    uint w = 0, qh = 0;                                                                                                \
    for (int c = 0; c < 4; c++) {                                                                                      \
        const uint xi0 = ct_trunc_low_byte((a[c] - s.s2) * s.s1 + 0.5f); /* no clamp, as the reference */              \
        const uint xi1 = ct_trunc_low_byte((b[c] - s.s2) * s.s1 + 0.5f);                                               \
        w |= ((xi0 & 15u) | ((xi1 & 15u) << 4)) << (8 * c);                                                            \
        qh |= (((xi0 & 0x10u) >> 4) << (4 * lane + c)) | (((xi1 & 0x10u) >> 4) << (16 + 4 * lane + c));                \
    }                                                                                                                  \
    ct_sta_u32##SFX(y + 8 + 4 * lane, w);                                                                              \
    return qh;                                                                                                         \
}                                                                                                                      \
void ct_qt_fin_q5_1##SFX(AS uchar *y, __local const float2 *aux, float4 s, uint qh) {                                  \
    *(AS ushort *)y = ct_float_to_half(s.s0);                                                                          \
    *(AS ushort *)(y + 2) = ct_float_to_half(s.s2);                                                                    \
    ct_sta_u32##SFX(y + 4, qh);                                                                                        \
}                                                                                                                      \
uint ct_qt_out_iq4_nl##SFX(AS uchar *y, int lane, float4 xa, float4 xb, float4 s, __local float2 *aux, __local const uint *tab) { \
    if (s.s2 != 0.0f) {                                                                                                \
        ct_sta_u32##SFX(y + 2 + 4 * lane, 0x88888888u); /* every index 8 */                                            \
        return 0;                                                                                                      \
    }                                                                                                                  \
    const float x[8] = {xa.s0, xa.s1, xa.s2, xa.s3, xb.s0, xb.s1, xb.s2, xb.s3};                                       \
    uint L[8];                                                                                                         \
    for (int c = 0; c < 8; c++) {                                                                                      \
        const int j = (c < 4 ? 0 : 16) + 4 * lane + (c & 3);                                                           \
        float q, wqx, wqq;                                                                                             \
        L[c] = ct_iq4nl_best_index_tab(s.s1 * x[c], &q, tab);                                                          \
        ct_iq4nl_terms(x[c], q, &wqx, &wqq);                                                                           \
        aux[j] = (float2)(wqx, wqq);                                                                                   \
    }                                                                                                                  \
    uint w = 0;                                                                                                        \
    for (int c = 0; c < 4; c++) w |= (L[c] | (L[c + 4] << 4)) << (8 * c);                                              \
    ct_sta_u32##SFX(y + 2 + 4 * lane, w);                                                                              \
    return 0;                                                                                                          \
}                                                                                                                      \
void ct_qt_fin_iq4_nl##SFX(AS uchar *y, __local const float2 *aux, float4 s, uint qh) {                                \
    ushort h = 0; /* ct_float_to_half(0.0f), for blocks below 1e-15 */                                                 \
    if (s.s2 == 0.0f) {                                                                                                \
        float sumqx = 0.0f, sumq2 = 0.0f;                                                                              \
        for (int j = 0; j < 32; j++) {                                                                                 \
            sumqx = sumqx + aux[j].x;                                                                                  \
            sumq2 = sumq2 + aux[j].y;                                                                                  \
        }                                                                                                              \
        /* the reference's `sumq2 > 0 ? sumqx/sumq2 : 0`: a NaN element gives d = +0 */                               \
        const float d = sumq2 > 0.0f ? ct_xdiv(sumqx, sumq2) : 0.0f;                                                   \
        /* NaN scales are the one canonical NaN 0x7E00, as on the CPU (quantize.c) */                                  \
        h = isnan(d) ? (ushort)0x7E00 : ct_float_to_half(d);                                                           \
    }                                                                                                                  \
    *(AS ushort *)y = h;                                                                                               \
}
CT_QT_OUT_DEFS(__global, _g)
CT_QT_OUT_DEFS(__local, _l)
