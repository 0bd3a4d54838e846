/* The six block quantizers of src/types/quantize.c, bit for bit:
 * void ct_quantize_<t>(const float *x, __global uchar *blk) for t = q8_0, q4_0, q4_1,
 * q5_0, q5_1, iq4_nl: one block of 32 floats. The same six as teams of 4 work-items,
 * 8 floats each (ct_qt_*: see that section). Needs common.cl, fp16.cl and dequant.cl. */

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
