/* The dequantizers of every type the CPU backend dequantizes, exact (d widened to
 * float, products in the reference's order, NaN results as x86 gives them: see ct_xnan):
 *   float ct_deq_<t>(const __global uchar *blk, int j)        element j of the block
 *   void  ct_deq16_<t>(const __global uchar *blk, int il, float *y)
 *                                                  elements 16*il .. 16*il+15 into y
 * for t = f32, f16, bf16 (blocks of one element: j = 0 only, no deq16), q4_0,
 * q4_1, q5_0, q5_1, q8_0, iq4_nl (32-blocks, il = 0..1), q2_K, q3_K, q4_K, q5_K,
 * q6_K, q8_K, iq4_xs (256-blocks, il = 0..15).
 *   uint4 ct_raw4_<t>(const __global uchar *blk, int g), float4 ct_cvt4_<t>(uint4 raw, int g)
 *                  elements 4*g .. 4*g+3 of the block types, loaded then decoded; blk
 *                  2-byte aligned
 * Needs common.cl and fp16.cl. */

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
