/* MUL_MAT: dst[r0, r1, i12, i13] = sum_k src0[k, r0, i12/r2, i13/r3] * src1[k, r1, i12, i13].
 *
 * Kernels per src0 type t (src1 and dst F32):
 *   ct_mul_mv_<t>_f32       mat-vec: MV_NR0 src0 rows x MV_NR1 src1 rows per work-group;
 *                           each work-item walks units of the rows (one block or 32-element
 *                           sub-block of a quantized type, 8 elements of a float type) with
 *                           vector loads; needs nb10 == 4;
 *   ct_mul_mv_<t>_f32_1row  one src0 row x one src1 row, any src1 element stride;
 *   ct_mul_mm_<t>_f32       64x64 output tiles, 256 work-items of 4x4 outputs, src0
 *                           dequantized into local memory 32 columns at a time; nb10 == 4;
 *   ct_mul_mv_<t>_f32_c4    float types, ne00 == 4: one src0 row per work-item;
 *   ct_mul_mat_f16_y        an F16 src1 widened to packed F32 rows first (work memory).
 * The tiles (mm_mm_tile, mm_mm128_tile) take their src1 and dst rows through mm_rows, so
 * MUL_MAT_ID's grouped kernels (mul_mat_id.cl, made here by MM_KERNELS and MMT_KERNELS)
 * run the same code over an expert's gathered rows.
 * src0 is dequantized exactly as src/types does (d widened to float, the reference's
 * order of products); products and sums are float. Blocks are 2-byte aligned, so the
 * encoder guarantees 2-byte (4 for F32) alignment of src0 rows and 4 of src1/dst. */

/* ---- exact dequantization, 8 elements at a time ---------------------------------- */

float mm_h(const __global uchar *p) { return vload_half(0, (const __global half *)p); }

/* 8 bytes at a 2-byte aligned p (every block field is), as 4 two-byte loads: byte
 * loads would take twice the load instructions. */
uchar8 mm_ld8b(const __global uchar *p) { return as_uchar8(vload4(0, (const __global ushort *)p)); }

/* The nibbles of 8 bytes: low ones, or high ones when hi. */
int8 mm_nib8(const __global uchar *p, int hi) {
    const uchar8 q = mm_ld8b(p);
    return convert_int8(hi ? (q >> (uchar8)4) : (q & (uchar8)15));
}

/* Float rows of n elements: group g (elements 8g..8g+7), zeros past n. */
float8 mm_deq8_float(const int t, const __global uchar *x, int g, int n) {
    if (8 * g + 8 <= n) {
        if (t == MM_F32) return vload8(g, (const __global float *)x);
        if (t == MM_F16) return vload_half8(g, (const __global half *)x);
        return as_float8(convert_uint8(vload8(g, (const __global ushort *)x)) << (uint8)16);
    }
    float r[8];
    for (int j = 0; j < 8; j++) {
        const int i = 8 * g + j;
        float v = 0.0f;
        if (i < n) {
            if (t == MM_F32) v = ((const __global float *)x)[i];
            else if (t == MM_F16) v = vload_half(i, (const __global half *)x);
            else v = as_float((uint)((const __global ushort *)x)[i] << 16);
        }
        r[j] = v;
    }
    return vload8(0, r);
}

/* Q4_K / Q5_K scale and min j (6 bits each) of the 12 packed bytes at s. */
void mm_scale_min_k4(int j, const __global uchar *s, int *d, int *m) {
    if (j < 4) {
        *d = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *d = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* Q2_K (84-byte blocks: scales@0, qs@16, d@80, dmin@82) and Q3_K (110: hmask@0, qs@32,
 * scales@96, d@108): group gi (0..31) of a block is bits 2(s % 4).. of qs bytes
 * 32(s / 4) + l0.., s = gi / 4 its 32-element sub-block, l0 = 8(gi % 4); scale gi / 2. */
uint8 mm_q2bits8(const __global uchar *qs, int gi) {
    const int s = gi >> 2, l0 = (gi & 3) * 8;
    return convert_uint8((mm_ld8b(qs + 32 * (s >> 2) + l0) >> (uchar8)(2 * (s & 3))) & (uchar8)3);
}

/* Q3_K's bit s of hmask bytes l0.. as 0 or 4 (the value's offset is 4 where it is clear). */
uint8 mm_q3hi8(const __global uchar *b, int gi) {
    const int s = gi >> 2, l0 = (gi & 3) * 8;
    return convert_uint8(((mm_ld8b(b + l0) >> (uchar8)s) & (uchar8)1) << (uchar8)2);
}

/* Q3_K's signed 6-bit scale j (0..15), minus 32. */
int mm_q3_scale(const __global uchar *s, int j) {
    const int lo = j < 8 ? (s[j] & 15) : (s[j - 8] >> 4);
    const int hi = (s[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
    return (lo | (hi << 4)) - 32;
}

/* IQ4_XS (136-byte blocks: d@0, scales_h@2, scales_l@4, qs@8): sub-block ib's scale d * (ls - 32). */
float mm_iq4xs_scale(const __global uchar *b, int ib) {
    const uint sh = (uint)b[2] | ((uint)b[3] << 8);
    const int ls = (int)(((b[4 + (ib >> 1)] >> (4 * (ib & 1))) & 15u) | (((sh >> (2 * ib)) & 3u) << 4));
    return mm_h(b) * (float)(ls - 32);
}

/* Elements 8g..8g+7 of row x (whose length n matters only for float types). In a
 * 32-block, group s = g%4 is bytes 8(s&1).. of qs, low nibbles for s < 2. */
float8 mm_deq8(const int t, const __global uchar *x, int g, int n) {
    const int s = g & 3;
    switch (t) {
    case MM_Q4_0: {
        const __global uchar *b = x + (g >> 2) * 18;
        const float d = mm_h(b);
        return convert_float8(mm_nib8(b + 2 + 8 * (s & 1), s & 2) - 8) * d;
    }
    case MM_Q4_1: {
        const __global uchar *b = x + (g >> 2) * 20;
        const float d = mm_h(b), m = mm_h(b + 2);
        return convert_float8(mm_nib8(b + 4 + 8 * (s & 1), s & 2)) * d + m;
    }
    case MM_Q5_0: {
        const __global uchar *b = x + (g >> 2) * 22;
        const float d = mm_h(b);
        const ushort2 h2 = vload2(0, (const __global ushort *)(b + 2));
        const uint qh = (uint)h2.s0 | ((uint)h2.s1 << 16);
        const int8 hb = convert_int8(((uint8)(qh >> (8 * s)) >> (uint8)(0, 1, 2, 3, 4, 5, 6, 7)) & (uint8)1);
        return convert_float8((mm_nib8(b + 6 + 8 * (s & 1), s & 2) | (hb << 4)) - 16) * d;
    }
    case MM_Q5_1: {
        const __global uchar *b = x + (g >> 2) * 24;
        const float d = mm_h(b), m = mm_h(b + 2);
        const ushort2 h2 = vload2(0, (const __global ushort *)(b + 4));
        const uint qh = (uint)h2.s0 | ((uint)h2.s1 << 16);
        const int8 hb = convert_int8(((uint8)(qh >> (8 * s)) >> (uint8)(0, 1, 2, 3, 4, 5, 6, 7)) & (uint8)1);
        return convert_float8(mm_nib8(b + 8 + 8 * (s & 1), s & 2) | (hb << 4)) * d + m;
    }
    case MM_Q8_0: {
        const __global uchar *b = x + (g >> 2) * 34;
        const float d = mm_h(b);
        return convert_float8(as_char8(mm_ld8b(b + 2 + 8 * s))) * d;
    }
    case MM_IQ4_NL: {
        const __global uchar *b = x + (g >> 2) * 18;
        const float d = mm_h(b);
        const int8 q = mm_nib8(b + 2 + 8 * (s & 1), s & 2);
        return d * (float8)(ct_kvalues_iq4nl_f[q.s0], ct_kvalues_iq4nl_f[q.s1], ct_kvalues_iq4nl_f[q.s2],
                            ct_kvalues_iq4nl_f[q.s3], ct_kvalues_iq4nl_f[q.s4], ct_kvalues_iq4nl_f[q.s5],
                            ct_kvalues_iq4nl_f[q.s6], ct_kvalues_iq4nl_f[q.s7]);
    }
    case MM_Q4_K:
    case MM_Q5_K: {
        /* group gi of the block: chunk c of 64, low (hi = 0) or high nibbles, bytes l0.. */
        const int sz = t == MM_Q4_K ? 144 : 176, qs = t == MM_Q4_K ? 16 : 48;
        const __global uchar *b = x + (g >> 5) * sz;
        const int gi = g & 31, c = gi >> 3, hi = (gi >> 2) & 1, l0 = (gi & 3) * 8;
        const float d = mm_h(b), dmin = mm_h(b + 2);
        int sc, m;
        mm_scale_min_k4(2 * c + hi, b + 4, &sc, &m);
        const float d1 = d * (float)sc, m1 = dmin * (float)m;
        int8 q = mm_nib8(b + qs + 32 * c + l0, hi);
        if (t == MM_Q5_K) q += convert_int8((mm_ld8b(b + 16 + l0) >> (uchar8)(2 * c + hi)) & (uchar8)1) << 4;
        return d1 * convert_float8(q) - m1;
    }
    case MM_Q6_K: {
        /* half h of 128, quarter k of 32, bytes l0..; scale index l0/16 + 2k */
        const __global uchar *b = x + (g >> 5) * 210;
        const int gi = g & 31, h = gi >> 4, k = (gi >> 2) & 3, l0 = (gi & 3) * 8;
        const float d = mm_h(b + 208);
        const int sc = as_char(b[192 + 8 * h + (l0 >> 4) + 2 * k]);
        const int8 lo = mm_nib8(b + 64 * h + 32 * (k & 1) + l0, k & 2);
        const int8 hq = convert_int8((mm_ld8b(b + 128 + 32 * h + l0) >> (uchar8)(2 * k)) & (uchar8)3);
        return d * (float)sc * convert_float8((lo | (hq << 4)) - 32);
    }
    case MM_Q2_K: {
        const __global uchar *b = x + (g >> 5) * 84;
        const int gi = g & 31, sc = b[gi >> 1];
        const float d1 = mm_h(b + 80) * (float)(sc & 15), m1 = mm_h(b + 82) * (float)(sc >> 4);
        return d1 * convert_float8(mm_q2bits8(b + 16, gi)) - m1;
    }
    case MM_Q3_K: {
        const __global uchar *b = x + (g >> 5) * 110;
        const int gi = g & 31;
        const float d1 = mm_h(b + 108) * (float)mm_q3_scale(b + 96, gi >> 1);
        return d1 * convert_float8(convert_int8(mm_q2bits8(b + 32, gi) | mm_q3hi8(b, gi)) - 4);
    }
    case MM_IQ4_XS: {
        const __global uchar *b = x + (g >> 5) * 136;
        const int gi = g & 31, s4 = gi & 3;
        const float d = mm_iq4xs_scale(b, gi >> 2);
        const int8 q = mm_nib8(b + 8 + 16 * (gi >> 2) + 8 * (s4 & 1), s4 & 2);
        return d * (float8)(ct_kvalues_iq4nl_f[q.s0], ct_kvalues_iq4nl_f[q.s1], ct_kvalues_iq4nl_f[q.s2],
                            ct_kvalues_iq4nl_f[q.s3], ct_kvalues_iq4nl_f[q.s4], ct_kvalues_iq4nl_f[q.s5],
                            ct_kvalues_iq4nl_f[q.s6], ct_kvalues_iq4nl_f[q.s7]);
    }
    default:
        return mm_deq8_float(t, x, g, n);
    }
}

/* src1 elements 8g..8g+7 of a packed row of n floats, zeros past n. */
float8 mm_ld8(const __global float *y, int g, int n) {
    if (8 * g + 8 <= n) return vload8(g, y);
    float r[8];
    for (int j = 0; j < 8; j++) r[j] = 8 * g + j < n ? y[8 * g + j] : 0.0f;
    return vload8(0, r);
}

float mm_dot8(float8 a, float8 b) { return dot(a.lo, b.lo) + dot(a.hi, b.hi); }

/* ---- kernels --------------------------------------------------------------------- */

#define MM_ARGS                                                                                         \
    __global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1, __global uchar *dst, \
        ulong offsd, int ne00, int ne01, ulong nb01, ulong nb02, ulong nb03, int ne11, int ne12, ulong nb10, \
        ulong nb11, ulong nb12, ulong nb13, ulong nb1, ulong nb2, ulong nb3, int r2, int r3, __local float *scratch
#define MM_PASS                                                                                               \
    src0, offs0, src1, offs1, dst, offsd, ne00, ne01, nb01, nb02, nb03, ne11, ne12, nb10, nb11, nb12, nb13, nb1, \
        nb2, nb3, r2, r3, scratch

#define MV_NR0 CT_MV_NR0 /* src0 rows per local row of the work-group */
#define MV_NR1 CT_MV_NR1 /* src1 rows per work-group */
#define MV_U 2 /* groups per work-item per step of the main loop (4 was slower on the H200) */

/* src1 elements 8g..8g+7 with 16-byte loads where y is 16-byte aligned (a16). */
float8 mm_ld8y(const __global float *y, int g, int n, int a16) {
    if (a16 && 8 * g + 8 <= n) {
        const __global float4 *y4 = (const __global float4 *)y;
        return (float8)(y4[2 * g], y4[2 * g + 1]);
    }
    return mm_ld8(y, g, n);
}

/* mm_deq8 with 16-byte loads of float rows that start 16-byte aligned (a16). */
float8 mm_deq8a(const int t, const __global uchar *x, int g, int n, int a16) {
    if (t <= MM_BF16 && a16 && 8 * g + 8 <= n) {
        if (t == MM_F32) {
            const __global float4 *x4 = (const __global float4 *)x;
            return (float8)(x4[2 * g], x4[2 * g + 1]);
        }
        const uint4 u = ((const __global uint4 *)x)[g];
        if (t == MM_BF16)
            return as_float8((uint8)(u.s0 << 16, u.s0 & 0xffff0000u, u.s1 << 16, u.s1 & 0xffff0000u, u.s2 << 16,
                                     u.s2 & 0xffff0000u, u.s3 << 16, u.s3 & 0xffff0000u));
        const ushort8 h = as_ushort8(u);
        return vload_half8(0, (const __private half *)&h);
    }
    return mm_deq8(t, x, g, n);
}

/* Group g of a row that holds all 8 of its elements, no bounds or alignment checks:
 * float rows must start 16-byte aligned. IQ4_NL looks its values up in kv (local
 * memory: __constant serializes on the differing indices of a warp), IQ4_XS too. */
float8 mm_deq8_full(const int t, const __global uchar *x, int g, __local const float *kv) {
    if (t == MM_F32) {
        const __global float4 *x4 = (const __global float4 *)x;
        return (float8)(x4[2 * g], x4[2 * g + 1]);
    }
    if (t == MM_F16 || t == MM_BF16) return mm_deq8a(t, x, g, 8 * g + 8, 1);
    if (t == MM_IQ4_NL) {
        const __global uchar *b = x + (g >> 2) * 18;
        const int s = g & 3;
        const float d = mm_h(b);
        const int8 q = mm_nib8(b + 2 + 8 * (s & 1), s & 2);
        return d * (float8)(kv[q.s0], kv[q.s1], kv[q.s2], kv[q.s3], kv[q.s4], kv[q.s5], kv[q.s6], kv[q.s7]);
    }
    if (t == MM_IQ4_XS) {
        const __global uchar *b = x + (g >> 5) * 136;
        const int gi = g & 31, s4 = gi & 3;
        const float d = mm_iq4xs_scale(b, gi >> 2);
        const int8 q = mm_nib8(b + 8 + 16 * (gi >> 2) + 8 * (s4 & 1), s4 & 2);
        return d * (float8)(kv[q.s0], kv[q.s1], kv[q.s2], kv[q.s3], kv[q.s4], kv[q.s5], kv[q.s6], kv[q.s7]);
    }
    return mm_deq8(t, x, g, 8 * g + 8);
}

/* Exact floats of small non-negative ints v (< 2^23) minus off: 2^23 + v from the bits,
 * then one exact subtraction; the int-to-float conversion runs at a quarter of the FMA
 * rate on NVIDIA GPUs and was the mat-vec kernels' limit. */
float8 mm_u2f8(uint8 v, float off) { return as_float8(v | (uint8)0x4B000000u) - (float8)(8388608.0f + off); }

/* The nibbles of 8 bytes as uints: low ones, or high ones when hi. */
uint8 mm_nibu8(const __global uchar *p, int hi) {
    const uchar8 q = mm_ld8b(p);
    return convert_uint8(hi ? (q >> (uchar8)4) : (q & (uchar8)15));
}

/* Group g of a quantized row as exact quant values q and the group's affine map:
 * element = (*sc) * q + (*mn), as mm_deq8 computes it, so a dot product with y is
 * sc * dot(q, y) + mn * sum(y): one multiply by the scale per group, not per element. */
float8 mm_qf8(const int t, const __global uchar *x, int g, __local const float *kv, float *sc, float *mn) {
    const int s = g & 3;
    *mn = 0.0f;
    switch (t) {
    case MM_Q4_0: {
        const __global uchar *b = x + (g >> 2) * 18;
        *sc = mm_h(b);
        return mm_u2f8(mm_nibu8(b + 2 + 8 * (s & 1), s & 2), 8.0f);
    }
    case MM_Q4_1: {
        const __global uchar *b = x + (g >> 2) * 20;
        *sc = mm_h(b);
        *mn = mm_h(b + 2);
        return mm_u2f8(mm_nibu8(b + 4 + 8 * (s & 1), s & 2), 0.0f);
    }
    case MM_Q5_0:
    case MM_Q5_1: {
        const int q51 = t == MM_Q5_1, bs = q51 ? 24 : 22, qh_at = q51 ? 4 : 2;
        const __global uchar *b = x + (g >> 2) * bs;
        *sc = mm_h(b);
        if (q51) *mn = mm_h(b + 2);
        const ushort2 h2 = vload2(0, (const __global ushort *)(b + qh_at));
        const uint qh = (uint)h2.s0 | ((uint)h2.s1 << 16);
        const uint8 hb = ((uint8)(qh >> (8 * s)) >> (uint8)(0, 1, 2, 3, 4, 5, 6, 7)) & (uint8)1;
        return mm_u2f8(mm_nibu8(b + qh_at + 4 + 8 * (s & 1), s & 2) | (hb << 4), q51 ? 0.0f : 16.0f);
    }
    case MM_Q8_0: {
        const __global uchar *b = x + (g >> 2) * 34;
        *sc = mm_h(b);
        return mm_u2f8(convert_uint8(mm_ld8b(b + 2 + 8 * s) ^ (uchar8)0x80), 128.0f); /* two's complement + 128 */
    }
    case MM_IQ4_NL: {
        const __global uchar *b = x + (g >> 2) * 18;
        *sc = mm_h(b);
        const uint8 q = mm_nibu8(b + 2 + 8 * (s & 1), s & 2);
        return (float8)(kv[q.s0], kv[q.s1], kv[q.s2], kv[q.s3], kv[q.s4], kv[q.s5], kv[q.s6], kv[q.s7]);
    }
    case MM_Q4_K:
    case MM_Q5_K: {
        const int sz = t == MM_Q4_K ? 144 : 176, qs = t == MM_Q4_K ? 16 : 48;
        const __global uchar *b = x + (g >> 5) * sz;
        const int gi = g & 31, c = gi >> 3, hi = (gi >> 2) & 1, l0 = (gi & 3) * 8;
        int scl, m;
        mm_scale_min_k4(2 * c + hi, b + 4, &scl, &m);
        *sc = mm_h(b) * (float)scl;
        *mn = -(mm_h(b + 2) * (float)m);
        uint8 q = mm_nibu8(b + qs + 32 * c + l0, hi);
        if (t == MM_Q5_K) q |= convert_uint8((mm_ld8b(b + 16 + l0) >> (uchar8)(2 * c + hi)) & (uchar8)1) << 4;
        return mm_u2f8(q, 0.0f);
    }
    case MM_Q2_K: {
        const __global uchar *b = x + (g >> 5) * 84;
        const int gi = g & 31, scl = b[gi >> 1];
        *sc = mm_h(b + 80) * (float)(scl & 15);
        *mn = -(mm_h(b + 82) * (float)(scl >> 4));
        return mm_u2f8(mm_q2bits8(b + 16, gi), 0.0f);
    }
    case MM_Q3_K: {
        const __global uchar *b = x + (g >> 5) * 110;
        const int gi = g & 31;
        *sc = mm_h(b + 108) * (float)mm_q3_scale(b + 96, gi >> 1);
        return mm_u2f8(mm_q2bits8(b + 32, gi) | mm_q3hi8(b, gi), 4.0f);
    }
    case MM_IQ4_XS: {
        const __global uchar *b = x + (g >> 5) * 136;
        const int gi = g & 31, s4 = gi & 3;
        *sc = mm_iq4xs_scale(b, gi >> 2);
        const uint8 q = mm_nibu8(b + 8 + 16 * (gi >> 2) + 8 * (s4 & 1), s4 & 2);
        return (float8)(kv[q.s0], kv[q.s1], kv[q.s2], kv[q.s3], kv[q.s4], kv[q.s5], kv[q.s6], kv[q.s7]);
    }
    default: { /* MM_Q6_K */
        const __global uchar *b = x + (g >> 5) * 210;
        const int gi = g & 31, h = gi >> 4, k = (gi >> 2) & 3, l0 = (gi & 3) * 8;
        *sc = mm_h(b + 208) * (float)as_char(b[192 + 8 * h + (l0 >> 4) + 2 * k]);
        const uint8 lo = mm_nibu8(b + 64 * h + 32 * (k & 1) + l0, k & 2);
        const uint8 hq = convert_uint8((mm_ld8b(b + 128 + 32 * h + l0) >> (uchar8)(2 * k)) & (uchar8)3);
        return mm_u2f8(lo | (hq << 4), 32.0f);
    }
    }
}

float mm_sum8(float8 v) { return (v.s0 + v.s1) + (v.s2 + v.s3) + ((v.s4 + v.s5) + (v.s6 + v.s7)); }

/* The tree half of a per-local-row reduction: each local row ly holds nv values of
 * get_local_size(0) partial sums at scratch + (ly * nv + v) * nx + lx; the totals
 * are left at lx = 0. The caller has stored the partials and passed a barrier. */
void mm_mv_tree(const int nv, __local float *scratch) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    __local float *row = scratch + get_local_id(1) * nv * nx;
    for (int n = nx; n > 1;) {
        const int h = (n + 1) >> 1;
        if (lx < n - h)
            for (int v = 0; v < nv; v++) row[v * nx + lx] += row[v * nx + lx + h];
        n = h;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Sums vals[0..nv) over the work-items of each local row (dim 0); the total of value v
 * of local row ly is left in scratch[(ly * nv + v) * get_local_size(0)]. nv must be the
 * same for the whole group; scratch holds nv * (local size) floats. */
void mm_mv_reduce(const float *vals, const int nv, const int nvmax, __local float *scratch) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    __local float *row = scratch + get_local_id(1) * nv * nx;
    barrier(CLK_LOCAL_MEM_FENCE); /* IQ4_NL's table in scratch is no longer read */
#pragma unroll
    for (int v = 0; v < MV_NR0 * MV_NR1; v++)
        if (v < nvmax && v < nv) row[v * nx + lx] = vals[v];
    barrier(CLK_LOCAL_MEM_FENCE);
    mm_mv_tree(nv, scratch);
}

/* Work-group (lx, ly): each local row takes MV_NR0 src0 rows against up to MV_NR1 src1
 * rows; its work-items stride over the 8-element groups of the rows, so neighbours read
 * neighbouring bytes of src0 and src1 (coalesced) and each weight is read once. */
void mm_mv_n(const int t, const int NR0, const int NR1, MM_ARGS) {
    const int tid = get_local_id(0), wg = get_local_size(0);
    const int r0 = (get_group_id(0) * get_local_size(1) + get_local_id(1)) * NR0;
    const int r1 = get_group_id(1) * NR1;
    const int nr0 = clamp(ne01 - r0, 0, NR0), nr1 = min(NR1, ne11 - r1);
    const int im = get_group_id(2), i12 = im % ne12, i13 = im / ne12;
    const __global uchar *x =
        src0 + offs0 + (ulong)(i12 / r2) * nb02 + (ulong)(i13 / r3) * nb03 + (ulong)min(r0, ne01 - 1) * nb01;
    const __global uchar *y = src1 + offs1 + (ulong)i12 * nb12 + (ulong)i13 * nb13 + (ulong)r1 * nb11;
    const int xa16 = ((ulong)x & 15) == 0 && (nb01 & 15) == 0;
    const int ya16 = ((ulong)y & 15) == 0 && (nb11 & 15) == 0;
    const int ngroups = (ne00 + 7) / 8;

    float acc[MV_NR1 * MV_NR0]; /* [c][r], NR1 x NR0 used */
#pragma unroll
    for (int i = 0; i < MV_NR0 * MV_NR1; i++) acc[i] = 0.0f;

    /* IQ4_NL values into scratch (the reduction reuses it after a barrier) */
    __local float *kv = scratch; /* the encoder gives scratch at least 16 floats */
    if (t == MM_IQ4_NL || t == MM_IQ4_XS) {
        for (int l = get_local_id(1) * wg + tid; l < 16; l += wg * get_local_size(1)) kv[l] = ct_kvalues_iq4nl_f[l];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* Main part: MV_U groups a work-group apart per step, all their loads issued before
     * any is used: each step waits for memory once, so more groups per step means more
     * bytes in flight (the kernels are latency-bound, not bandwidth-bound, otherwise). */
    int g = tid;
    if (ya16 && (t > MM_BF16 || xa16)) {
        const int nfull = ne00 / 8;
        const int has_min = t == MM_Q4_1 || t == MM_Q5_1 || t == MM_Q4_K || t == MM_Q5_K || t == MM_Q2_K;
        for (; g + (MV_U - 1) * wg < nfull; g += MV_U * wg) {
            float8 w[MV_U][MV_NR0];
            float ws[MV_U][MV_NR0], wm[MV_U][MV_NR0]; /* quantized: element = ws * w + wm */
#pragma unroll
            for (int r = 0; r < MV_NR0; r++) {
                if (r < NR0) {
                    /* rows past nr0 repeat the last valid row (x is clamped); never stored */
                    const __global uchar *xr = x + (ulong)min(r, max(nr0 - 1, 0)) * nb01;
#pragma unroll
                    for (int u = 0; u < MV_U; u++) {
                        if (t <= MM_BF16) w[u][r] = mm_deq8_full(t, xr, g + u * wg, kv);
                        else w[u][r] = mm_qf8(t, xr, g + u * wg, kv, &ws[u][r], &wm[u][r]);
                    }
                }
            }
#pragma unroll
            for (int c = 0; c < MV_NR1; c++) {
                if (c < NR1 && (c == 0 || c < nr1)) {
                    const __global float4 *y4 = (const __global float4 *)(y + (ulong)c * nb11);
                    float8 yv[MV_U];
                    float ysum[MV_U];
#pragma unroll
                    for (int u = 0; u < MV_U; u++) {
                        yv[u] = (float8)(y4[2 * (g + u * wg)], y4[2 * (g + u * wg) + 1]);
                        ysum[u] = has_min ? mm_sum8(yv[u]) : 0.0f;
                    }
#pragma unroll
                    for (int r = 0; r < MV_NR0; r++) {
                        if (r >= NR0) continue;
                        float v = 0.0f;
#pragma unroll
                        for (int u = 0; u < MV_U; u++) {
                            if (t <= MM_BF16) {
                                v += mm_dot8(w[u][r], yv[u]);
                            } else {
                                v += ws[u][r] * mm_dot8(w[u][r], yv[u]);
                                if (has_min) v += wm[u][r] * ysum[u];
                            }
                        }
                        acc[c * NR0 + r] += v;
                    }
                }
            }
        }
    }
    for (; g < ngroups; g += wg) {
        float8 w[MV_NR0];
#pragma unroll
        for (int r = 0; r < MV_NR0; r++)
            if (r < NR0) w[r] = r < nr0 ? mm_deq8a(t, x + (ulong)r * nb01, g, ne00, xa16) : (float8)0.0f;
#pragma unroll
        for (int c = 0; c < MV_NR1; c++) {
            if (c < NR1 && c < nr1) {
                const float8 yv = mm_ld8y((const __global float *)(y + (ulong)c * nb11), g, ne00, ya16);
#pragma unroll
                for (int r = 0; r < MV_NR0; r++)
                    if (r < NR0) acc[c * NR0 + r] += mm_dot8(w[r], yv);
            }
        }
    }

    const int nv = nr1 * NR0;
    mm_mv_reduce(acc, nv, NR0 * NR1, scratch);
    const __local float *row = scratch + get_local_id(1) * nv * wg;
    for (int v = tid; v < nv; v += wg) {
        const int c = v / NR0, r = v % NR0;
        if (r < nr0) {
            __global float *d =
                (__global float *)(dst + offsd + (ulong)i12 * nb2 + (ulong)i13 * nb3 + (ulong)(r1 + c) * nb1);
            d[r0 + r] = row[v * wg];
        }
    }
}

void mm_mv(const int t, MM_ARGS) { mm_mv_n(t, MV_NR0, MV_NR1, MM_PASS); }

void mm_mv_1row(const int t, MM_ARGS) {
    const int tid = get_local_id(0), wg = get_local_size(0);
    const int r0 = get_group_id(0), r1 = get_group_id(1);
    const int im = get_group_id(2), i12 = im % ne12, i13 = im / ne12;
    const __global uchar *x = src0 + offs0 + (ulong)(i12 / r2) * nb02 + (ulong)(i13 / r3) * nb03 + (ulong)r0 * nb01;
    const __global uchar *y = src1 + offs1 + (ulong)i12 * nb12 + (ulong)i13 * nb13 + (ulong)r1 * nb11;
    const int ngroups = (ne00 + 7) / 8;
    float s = 0.0f;
    for (int g = tid; g < ngroups; g += wg) {
        const float8 w = mm_deq8(t, x, g, ne00);
        float yv[8];
        for (int j = 0; j < 8; j++) {
            const int i = 8 * g + j;
            yv[j] = i < ne00 ? *(const __global float *)(y + (ulong)i * nb10) : 0.0f;
        }
        s += mm_dot8(w, vload8(0, yv));
    }
    s = ct_red_sum(s, scratch);
    if (tid == 0) {
        __global float *d = (__global float *)(dst + offsd + (ulong)i12 * nb2 + (ulong)i13 * nb3 + (ulong)r1 * nb1);
        d[r0] = s;
    }
}

float4 mm_ld4(const int t, const __global uchar *x) {
    if (t == MM_F32) return vload4(0, (const __global float *)x);
    if (t == MM_F16) return vload_half4(0, (const __global half *)x);
    return as_float4(convert_uint4(vload4(0, (const __global ushort *)x)) << (uint4)16);
}

/* ne00 == 4: work-item = one src0 row, 4 src1 rows per work-group row. */
void mm_mv_c4(const int t, MM_ARGS) {
    const int r0 = get_global_id(0), r1 = get_group_id(1) * 4;
    if (r0 >= ne01) return;
    const int im = get_group_id(2), i12 = im % ne12, i13 = im / ne12;
    const float4 a = mm_ld4(t, src0 + offs0 + (ulong)(i12 / r2) * nb02 + (ulong)(i13 / r3) * nb03 + (ulong)r0 * nb01);
    const __global uchar *y = src1 + offs1 + (ulong)i12 * nb12 + (ulong)i13 * nb13;
    __global uchar *d = dst + offsd + (ulong)i12 * nb2 + (ulong)i13 * nb3;
    for (int c = 0; c < 4 && r1 + c < ne11; c++) {
        const float4 b = vload4(0, (const __global float *)(y + (ulong)(r1 + c) * nb11));
        ((__global float *)(d + (ulong)(r1 + c) * nb1))[r0] = dot(a, b);
    }
}

#define MM_BM 64 /* src0 rows per tile */
#define MM_BN 64 /* src1 rows per tile */
#define MM_BK 32 /* k per step */
#define MM_LD (MM_BM + 1) /* padded local row, fewer bank conflicts on the transposed stores */

/* Where the tiled kernels find src1 row c and dst row c of a tile: row c of the product
 * (idm 0: c * nb11 and c * nb1 from the batch's start), or (idm 1, MUL_MAT_ID's gathered
 * rows, kernels/mul_mat_id.cl) the entry v = list[c] of an expert's list: slot v % n_used of
 * token v / n_used, src1 row (slot % ne11, token) and dst row (slot, token). */
typedef struct mm_rows {
    const __global int *list;
    int n_used, ne11;
    ulong nb11, nb12, nb1, nb2;
} mm_rows;

ulong mm_yoff(const int idm, const mm_rows rows, int c) {
    if (!idm) return (ulong)c * rows.nb11;
    const int v = rows.list[c], i1 = v % rows.n_used;
    return (ulong)(i1 % rows.ne11) * rows.nb11 + (ulong)(v / rows.n_used) * rows.nb12;
}

ulong mm_doff(const int idm, const mm_rows rows, int c) {
    if (!idm) return (ulong)c * rows.nb1;
    const int v = rows.list[c];
    return (ulong)(v % rows.n_used) * rows.nb1 + (ulong)(v / rows.n_used) * rows.nb2;
}

/* The rows of a plain product's batch im (MM_ARGS) as mm_rows. */
#define MM_PLAIN_ROWS() ((mm_rows){0, 1, ne11, nb11, 0, nb1, 0})
#define MM_BATCH_BASES()                                                                                  \
    const int im = get_group_id(2), i12 = im % ne12, i13 = im / ne12;                                     \
    const __global uchar *x0 = src0 + offs0 + (ulong)(i12 / r2) * nb02 + (ulong)(i13 / r3) * nb03;       \
    const __global uchar *y0 = src1 + offs1 + (ulong)i12 * nb12 + (ulong)i13 * nb13;                      \
    __global uchar *d0 = dst + offsd + (ulong)i12 * nb2 + (ulong)i13 * nb3

/* One 64x64 tile: src0 rows r0.. of the matrix at x0 against the tile's src1 rows r1..
 * of n1 (g and idm place them, from y0 and d0). 256 work-items; scratch holds
 * 2 * MM_BK * MM_LD floats. Out-of-range rows read the last valid row (its results are
 * never written); k past ne00 reads zeros. */
void mm_mm_tile(const int t, const int idm, const __global uchar *x0, const __global uchar *y0, __global uchar *d0,
                int ne00, int ne01, ulong nb01, int r0, int r1, int n1, const mm_rows rows, __local float *scratch) {
    const int tid = get_local_id(0);
    __local float *as = scratch, *bs = scratch + MM_BK * MM_LD;

    const int lrow = tid >> 2, lg = tid & 3;
    const __global uchar *xa = x0 + (ulong)min(r0 + lrow, ne01 - 1) * nb01;
    const __global float *yb = (const __global float *)(y0 + mm_yoff(idm, rows, min(r1 + lrow, n1 - 1)));
    const int ngroups = (ne00 + 7) / 8;

    const int tx = tid & 15, ty = tid >> 4;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < ne00; k0 += MM_BK) {
        const int g = k0 / 8 + lg;
        const float8 a = g < ngroups ? mm_deq8(t, xa, g, ne00) : (float8)0.0f;
        const float8 b = g < ngroups ? mm_ld8(yb, g, ne00) : (float8)0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        __local float *ap = as + (lg * 8) * MM_LD + lrow, *bp = bs + (lg * 8) * MM_LD + lrow;
        ap[0 * MM_LD] = a.s0; ap[1 * MM_LD] = a.s1; ap[2 * MM_LD] = a.s2; ap[3 * MM_LD] = a.s3;
        ap[4 * MM_LD] = a.s4; ap[5 * MM_LD] = a.s5; ap[6 * MM_LD] = a.s6; ap[7 * MM_LD] = a.s7;
        bp[0 * MM_LD] = b.s0; bp[1 * MM_LD] = b.s1; bp[2 * MM_LD] = b.s2; bp[3 * MM_LD] = b.s3;
        bp[4 * MM_LD] = b.s4; bp[5 * MM_LD] = b.s5; bp[6 * MM_LD] = b.s6; bp[7 * MM_LD] = b.s7;
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll 8
        for (int k = 0; k < MM_BK; k++) {
            float av[4], bv[4];
            for (int i = 0; i < 4; i++) av[i] = as[k * MM_LD + tx + 16 * i];
            for (int j = 0; j < 4; j++) bv[j] = bs[k * MM_LD + ty + 16 * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] += av[i] * bv[j];
        }
    }

    for (int j = 0; j < 4; j++) {
        const int c = r1 + ty + 16 * j;
        if (c >= n1) break;
        __global float *dr = (__global float *)(d0 + mm_doff(idm, rows, c));
        for (int i = 0; i < 4; i++) {
            const int r = r0 + tx + 16 * i;
            if (r < ne01) dr[r] = acc[i][j];
        }
    }
}

void mm_mm(const int t, MM_ARGS) {
    MM_BATCH_BASES();
    mm_mm_tile(t, 0, x0, y0, d0, ne00, ne01, nb01, get_group_id(0) * MM_BM, get_group_id(1) * MM_BN, ne11,
               MM_PLAIN_ROWS(), scratch);
}

/* ---- large tiles: 128x128 outputs per 256 work-items, 8x8 each -------------------- */

#define MMT_BM 128 /* src0 rows per tile (CT_MMT_LD is MMT_BM + 4) */
#define MMT_BN 128 /* src1 rows per tile (the same local row length serves both) */
#define MMT_BK CT_MMT_BK /* k per step: each work-item loads one 8-element group of A and of B */
#define MMT_LD CT_MMT_LD /* MMT_BM + 4: local row: float4 reads stay aligned; rows 4 banks apart for the rotated stores */
#define MMT_LD4 (MMT_LD / 4)

/* As MM_ARGS, but scratch is float4 so that the runtime aligns it for the float4 reads. */
#define MMT_ARGS                                                                                        \
    __global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1, __global uchar *dst, \
        ulong offsd, int ne00, int ne01, ulong nb01, ulong nb02, ulong nb03, int ne11, int ne12, ulong nb10, \
        ulong nb11, ulong nb12, ulong nb13, ulong nb1, ulong nb2, ulong nb3, int r2, int r3,             \
        __local float4 *scratch4
#define MMT_PASS                                                                                              \
    src0, offs0, src1, offs1, dst, offsd, ne00, ne01, nb01, nb02, nb03, ne11, ne12, nb10, nb11, nb12, nb13, nb1, \
        nb2, nb3, r2, r3, scratch4

/* Group g of an F16/BF16 row as bits, zeros past n: converting after the FMAs keeps them off the load. */
uint4 mmt_raw16(const __global uchar *x, int g, int n, int a16) {
    const __global ushort *h = (const __global ushort *)x;
    if (8 * g + 8 <= n) return a16 ? ((const __global uint4 *)x)[g] : as_uint4(vload8(g, h));
    ushort r[8];
    for (int j = 0; j < 8; j++) r[j] = 8 * g + j < n ? h[8 * g + j] : (ushort)0;
    return as_uint4(vload8(0, r));
}

/* mmt_raw16's bits as floats, converted as mm_deq8a does. */
float8 mmt_cvt16(const int t, uint4 u) {
    if (t == MM_BF16)
        return as_float8((uint8)(u.s0 << 16, u.s0 & 0xffff0000u, u.s1 << 16, u.s1 & 0xffff0000u, u.s2 << 16,
                                 u.s2 & 0xffff0000u, u.s3 << 16, u.s3 & 0xffff0000u));
    const ushort8 h = as_ushort8(u);
    return vload_half8(0, (const __private half *)&h);
}

/* One 128x128 tile, placed as mm_mm_tile's. 256 work-items; scratch4 holds
 * (2 * MMT_BK * MMT_LD + 16) floats: A and B k-major
 * ([k][row]) and IQ4_NL's table. Work-item (tx, ty) = (tid % 16, tid / 16) owns src0 rows
 * tx*4 + {0..3}, 64 + tx*4 + {0..3} and src1 rows ty*4 + {0..3}, 64 + ty*4 + {0..3} of the
 * tile, so each k reads four float4s. Each step's global loads are issued before the
 * previous step's FMAs and stored to local memory after them (one barrier pair per step).
 * Out-of-range rows read the last valid row and are never written; k past ne00 reads
 * zeros (quantized rows hold whole steps: ne00 is a multiple of 32). */
void mm_mm128_tile(const int t, const int idm, const __global uchar *x0, const __global uchar *y0,
                   __global uchar *d0, int ne00, int ne01, ulong nb01, int r0, int r1, int n1, const mm_rows rows,
                   __local float4 *scratch4) {
    const int tid = get_local_id(0);
    __local float *as = (__local float *)scratch4, *kv = as + 2 * MMT_BK * MMT_LD; /* B follows A */
    const __local float4 *as4 = scratch4, *bs4 = scratch4 + MMT_BK * MMT_LD4;

    /* loads: a pair of work-items takes the two groups of one row (16 consecutive elements) */
    const int lr = tid >> 1, lg = tid & 1;
    const int xa16 = ((ulong)x0 & 15) == 0 && (nb01 & 15) == 0;
    const int ya16 = ((ulong)y0 & 15) == 0 && (rows.nb11 & 15) == 0 && (!idm || (rows.nb12 & 15) == 0);
    const __global uchar *xa = x0 + (ulong)min(r0 + lr, ne01 - 1) * nb01;
    const __global float *yb = (const __global float *)(y0 + mm_yoff(idm, rows, min(r1 + lr, n1 - 1)));

    /* stores: the odd work-item of a pair swaps the halves of its 8 k, so (MMT_LD = 4 mod 32) a
     * warp's 32 stores hit 32 banks; two bases, B's at a constant offset, spare registers */
    __local float *st0 = as + 12 * lg * MMT_LD + lr, *st1 = as + 4 * lg * MMT_LD + lr;

    if (t == MM_IQ4_NL || t == MM_IQ4_XS) {
        if (tid < 16) kv[tid] = ct_kvalues_iq4nl_f[tid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    const int nsteps = (ne00 + MMT_BK - 1) / MMT_BK;
    float8 pa = (float8)0.0f, pb;
    uint4 ph = (uint4)0;
    /* B first: its branches end before A's dequantization, which shares the FMAs' block to interleave */
#define MMT_PREFETCH(step)                                                         \
    do {                                                                           \
        const int g_ = 2 * (step) + lg;                                            \
        pb = mm_ld8y(yb, g_, ne00, ya16);                                          \
        if (t == MM_F16 || t == MM_BF16) ph = mmt_raw16(xa, g_, ne00, xa16);       \
        else if (t == MM_F32) pa = mm_deq8a(MM_F32, xa, g_, ne00, xa16);           \
        else pa = mm_deq8_full(t, xa, g_, kv);                                     \
    } while (0)
    if (nsteps > 0) MMT_PREFETCH(0); /* ne00 == 0: a quantized row has no block to read */

    const int tx = tid & 15, ty = tid >> 4;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;

    for (int s = 0; s < nsteps; s++) {
        float8 va = t == MM_F16 || t == MM_BF16 ? mmt_cvt16(t, ph) : pa;
        va = lg ? (float8)(va.hi, va.lo) : va;
        const float8 vb = lg ? (float8)(pb.hi, pb.lo) : pb;
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous step's readers are done */
#define MMT_ST(st, p, c)                                   \
    st[(p) * MMT_LD] = va.c;                               \
    st[(p) * MMT_LD + MMT_BK * MMT_LD] = vb.c;
        MMT_ST(st0, 0, s0) MMT_ST(st0, 1, s1) MMT_ST(st0, 2, s2) MMT_ST(st0, 3, s3)
        MMT_ST(st1, 4, s4) MMT_ST(st1, 5, s5) MMT_ST(st1, 6, s6) MMT_ST(st1, 7, s7)
#undef MMT_ST
        barrier(CLK_LOCAL_MEM_FENCE);

        /* the last step reloads itself: unconditional loads keep the body free of branches */
        MMT_PREFETCH(min(s + 1, nsteps - 1));

#pragma unroll
        for (int k = 0; k < MMT_BK; k++) {
            const float4 a0 = as4[k * MMT_LD4 + tx], a1 = as4[k * MMT_LD4 + 16 + tx];
            const float4 b0 = bs4[k * MMT_LD4 + ty], b1 = bs4[k * MMT_LD4 + 16 + ty];
            const float a[8] = {a0.s0, a0.s1, a0.s2, a0.s3, a1.s0, a1.s1, a1.s2, a1.s3};
            const float b[8] = {b0.s0, b0.s1, b0.s2, b0.s3, b1.s0, b1.s1, b1.s2, b1.s3};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]); /* FP_CONTRACT is off */
        }
    }
#undef MMT_PREFETCH

#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int c = r1 + (j >> 2) * 64 + ty * 4 + (j & 3);
        if (c < n1) {
            __global float *dr = (__global float *)(d0 + mm_doff(idm, rows, c));
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int r = r0 + (i >> 2) * 64 + tx * 4 + (i & 3);
                if (r < ne01) dr[r] = acc[i][j];
            }
        }
    }
}

void mm_mm128(const int t, MMT_ARGS) {
    MM_BATCH_BASES();
    mm_mm128_tile(t, 0, x0, y0, d0, ne00, ne01, nb01, get_group_id(0) * MMT_BM, get_group_id(1) * MMT_BN, ne11,
                  MM_PLAIN_ROWS(), scratch4);
}

/* A kernel's arguments: the tensors, ct_mul_mat_args (kernel_args.h), the scratch; and
 * MM_ARGS from them. */
#define MM_KERNEL_ARGS(SCRATCH_T, SCRATCH)                                                                      \
    __global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1, __global uchar *dst,     \
        ulong offsd, const ct_mul_mat_args a, __local SCRATCH_T *SCRATCH
#define MM_KERNEL_PASS(SCRATCH)                                                                                 \
    src0, offs0, src1, offs1, dst, offsd, a.ne00, a.ne01, a.nb01, a.nb02, a.nb03, a.ne11, a.ne12, a.nb10, a.nb11, \
        a.nb12, a.nb13, a.nb1, a.nb2, a.nb3, a.r2, a.r3, SCRATCH

/* src1 F16 widened into packed F32 rows of the work memory at offsw (row (i13 * ne12 + i12) *
 * ne11 + i11 at that many times ne10 floats; exact, as the CPU widens it), which the kernels
 * above then read as an F32 src1. Grid (ne10, ne11, ne12 * ne13); a.nb1x are src1's strides. */
__kernel void ct_mul_mat_f16_y(__global const uchar *src1, ulong offs1, __global uchar *work, ulong offsw,
                               const ct_mul_mat_args a) {
    const int i10 = get_global_id(0), i11 = get_global_id(1), im = get_global_id(2);
    if (i10 >= a.ne00) return;
    const int i12 = im % a.ne12, i13 = im / a.ne12;
    const __global uchar *p =
        src1 + offs1 + (ulong)i13 * a.nb13 + (ulong)i12 * a.nb12 + (ulong)i11 * a.nb11 + (ulong)i10 * a.nb10;
    __global float *d = (__global float *)(work + offsw);
    d[((ulong)im * (ulong)a.ne11 + (ulong)i11) * (ulong)a.ne00 + (ulong)i10] = ct_lda_f16(p);
}

#define MMT_KERNELS(name, T)                                                                               \
    __kernel void ct_mul_mm128_##name##_f32(MM_KERNEL_ARGS(float4, scratch4)) {                             \
        mm_mm128(T, MM_KERNEL_PASS(scratch4));                                                              \
    }                                                                                                      \
    MMTID_KERNELS(name, T) /* MUL_MAT_ID's (mul_mat_id.cl) */

MMT_KERNELS(f32, MM_F32)
MMT_KERNELS(f16, MM_F16)
MMT_KERNELS(bf16, MM_BF16)
MMT_KERNELS(q4_0, MM_Q4_0)
MMT_KERNELS(q4_1, MM_Q4_1)
MMT_KERNELS(q5_0, MM_Q5_0)
MMT_KERNELS(q5_1, MM_Q5_1)
MMT_KERNELS(q8_0, MM_Q8_0)
MMT_KERNELS(iq4_nl, MM_IQ4_NL)
MMT_KERNELS(q4_K, MM_Q4_K)
MMT_KERNELS(q5_K, MM_Q5_K)
MMT_KERNELS(q6_K, MM_Q6_K)
MMT_KERNELS(q2_K, MM_Q2_K)
MMT_KERNELS(q3_K, MM_Q3_K)
MMT_KERNELS(iq4_xs, MM_IQ4_XS)

#define MM_KERNELS(name, T)                                                                                  \
    __kernel void ct_mul_mv_##name##_f32(MM_KERNEL_ARGS(float, scratch)) { mm_mv(T, MM_KERNEL_PASS(scratch)); } \
    __kernel void ct_mul_mv_##name##_f32_1row(MM_KERNEL_ARGS(float, scratch)) {                               \
        mm_mv_1row(T, MM_KERNEL_PASS(scratch));                                                               \
    }                                                                                                         \
    __kernel void ct_mul_mm_##name##_f32(MM_KERNEL_ARGS(float, scratch)) { mm_mm(T, MM_KERNEL_PASS(scratch)); } \
    MMID_KERNELS(name, T) /* MUL_MAT_ID's (mul_mat_id.cl) */

MM_KERNELS(f32, MM_F32)
MM_KERNELS(f16, MM_F16)
MM_KERNELS(bf16, MM_BF16)
MM_KERNELS(q4_0, MM_Q4_0)
MM_KERNELS(q4_1, MM_Q4_1)
MM_KERNELS(q5_0, MM_Q5_0)
MM_KERNELS(q5_1, MM_Q5_1)
MM_KERNELS(q8_0, MM_Q8_0)
MM_KERNELS(iq4_nl, MM_IQ4_NL)
MM_KERNELS(q4_K, MM_Q4_K)
MM_KERNELS(q5_K, MM_Q5_K)
MM_KERNELS(q6_K, MM_Q6_K)
MM_KERNELS(q2_K, MM_Q2_K)
MM_KERNELS(q3_K, MM_Q3_K)
MM_KERNELS(iq4_xs, MM_IQ4_XS)

__kernel void ct_mul_mv_f32_f32_c4(MM_KERNEL_ARGS(float, scratch)) { mm_mv_c4(MM_F32, MM_KERNEL_PASS(scratch)); }
__kernel void ct_mul_mv_f16_f32_c4(MM_KERNEL_ARGS(float, scratch)) { mm_mv_c4(MM_F16, MM_KERNEL_PASS(scratch)); }
__kernel void ct_mul_mv_bf16_f32_c4(MM_KERNEL_ARGS(float, scratch)) { mm_mv_c4(MM_BF16, MM_KERNEL_PASS(scratch)); }

