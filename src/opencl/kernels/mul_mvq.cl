/* Quantized mat-vec on 8-bit activations, as the CPU backend computes it (SPEC §3.9
 * item 3; src/cpu/vec_dot.c): src1 rows are first quantized into 32-value blocks
 * of int8 q with a float scale d and the integer sum s of q (ct_quantize_qy, the
 * CPU's bytes exactly), then each src0 sub-block of 32 values v (x = a*v + b)
 * meets one y block as
 *     acc += y.d * (a * (float)isum + b * (float)y.s),  isum = sum v*q (exact int),
 * the CPU's expression, so only the order of the per-block additions differs.
 * The integer dot runs on packed 8-bit lanes (4 products per instruction where the
 * device has one), so the kernel reads 1 byte of activation per weight instead of
 * 4 and spends about one instruction per weight: the float kernel in mul_mat.cl
 * was bound by its per-element decode on the H200 (docs/PERF.md).
 *
 * Work layout (work buffer, written by ct_quantize_qy and read by ct_mul_mvq_*):
 * src1 row r (r = (i13 * ne12 + i12) * ne11 + i11) has its q at r * ne10 and its
 * (d, s) pairs at nrows * ne10 + (r * ne10 / 32 + block) * 8.
 *
 * Uses MM_*, mm_kvalues_iq4nl, mm_scale_min_k4 and mm_mv_tree from mul_mat.cl, which
 * the build concatenates before this file (embed.cmake: file name order).
 *
 * A work-item takes units of 64 src0 values (two y blocks) of MVQ_NR0 rows; its
 * loads are 32-bit words, so the encoder requires 4-byte aligned src0 rows (Q6_K,
 * 210-byte blocks, reads 16-bit halves) and ne00 % 64 == 0. */

#define MVQ_NR0 2 /* src0 rows per local row of the work-group */
#ifndef MVQ_NR1
#define MVQ_NR1 8 /* src1 rows per work-group */
#endif

/* sum of the four products of signed bytes a[i] * b[i], plus c */
#if CT_HAS_INT_DOT && defined(__opencl_c_integer_dot_product_input_4x8bit_packed)
int mvq_dp4(int a, int b, int c) { return c + dot_4x8packed_ss_int((uint)a, (uint)b); }
#elif CT_HAS_NV_DP4A
int mvq_dp4(int a, int b, int c) {
    int r;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
#else
int mvq_dp4(int a, int b, int c) {
    const char4 x = as_char4(a), y = as_char4(b);
    return c + (int)x.s0 * (int)y.s0 + (int)x.s1 * (int)y.s1 + (int)x.s2 * (int)y.s2 + (int)x.s3 * (int)y.s3;
}
#endif

/* ---- src1 -> 8-bit blocks --------------------------------------------------- */

/* Ties to even: v + 1.5 * 2^23 rounds in the float adder (|v| <= 127.5 here). */
int mvq_round_even(float v) { return (int)(as_uint(v + 12582912.0f) - 0x4B400000u); }

/* Eight work-items per 32-value block, four values each (one block per WI kept
 * 448 WIs busy for a 14336-wide row, and they ran serially): grid (ne10 / 4,
 * ne11, ne12 * ne13) in groups of QY_WG (a multiple of 8, the encoder's). The
 * block's max and flags meet in local memory; its first WI writes (d, s). */
#define QY_WG 64
__kernel void ct_quantize_qy(__global const uchar *src1, ulong offs1, int ne10, int ne11, int ne12, ulong nb11,
                             ulong nb12, ulong nb13, __global uchar *work, ulong nrows) {
    __local float lmax[QY_WG];
    __local int lflag[QY_WG], lsum[QY_WG];
    const int gid = get_global_id(0), lid = get_local_id(0), first = lid & ~7;
    const int i11 = get_global_id(1), im = get_global_id(2);
    const int nblk = ne10 / 32, blk = gid >> 3;
    const int i12 = im % ne12, i13 = im / ne12;
    const bool active = blk < nblk; /* idle WIs still meet the barriers */
    float4 v = (float4)0.0f;
    if (active)
        v = vload4(0, (const __global float *)(src1 + offs1 + (ulong)i13 * nb13 + (ulong)i12 * nb12 +
                                               (ulong)i11 * nb11) + 4 * gid);
    const float4 av = fabs(v);
    lmax[lid] = fmax(fmax(av.s0, av.s1), fmax(av.s2, av.s3)); /* NaN aside: flagged below */
    lflag[lid] = (any(isnan(v)) ? 1 : 0) | (any(isinf(v)) ? 2 : 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    float amax = 0.0f;
    int flags = 0;
    for (int i = 0; i < 8; i++) {
        amax = fmax(amax, lmax[first + i]);
        flags |= lflag[first + i];
    }
    int4 q;
    float d;
    if (flags) {
        /* as the CPU: a NaN block gives d = NaN, q = 0; an inf block +-127 at the infs */
        q = (flags & 1) ? (int4)0 : select((int4)0, select((int4)-127, (int4)127, v > 0.0f), isinf(v));
        d = (flags & 1) ? NAN : INFINITY;
    } else {
        const float scale = amax < 0x1p-64f ? 0x1p64f : 1.0f; /* keeps 127/amax finite */
        const float am = amax * scale;
        const float id = am > 0.0f ? ct_div(127.0f, am) : 0.0f;
        const float4 x = (v * scale) * id;
        q = (int4)(mvq_round_even(x.s0), mvq_round_even(x.s1), mvq_round_even(x.s2), mvq_round_even(x.s3));
        d = ct_div(ct_div(am, 127.0f), scale);
    }
    lsum[lid] = q.s0 + q.s1 + q.s2 + q.s3;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!active) return;
    const ulong row = ((ulong)im * (ulong)ne11 + (ulong)i11);
    ((__global char4 *)(work + row * (ulong)ne10))[gid] = convert_char4(q);
    if (lid == first) {
        int s = 0;
        for (int i = 0; i < 8; i++) s += lsum[first + i];
        __global uint *ds = (__global uint *)(work + nrows * (ulong)ne10) + 2 * (row * (ulong)nblk + (ulong)blk);
        ds[0] = as_uint(d);
        ds[1] = (uint)s;
    }
}

/* ---- src0 units ------------------------------------------------------------- */

/* Unit u of a row: 64 values as packed signed bytes p[0..15] (p[8j + k] holds
 * values 4k..4k+3 of y block yb[j]), and for each of the two y blocks j the integer
 * dot sum_k m[2j + k/4] * dp4(p[8j + k], y) - off * y.s, then a[j], b[j] as in the
 * header. m != 1 only for Q6_K's scales of 16 values. */
typedef struct mvq_unit {
    int p[16];
    int m[4];
    int off;
    float a[2], b[2];
} mvq_unit;

/* word i (32 bits) at a 4-byte aligned address */
uint mvq_w(const __global uchar *p, int i) { return ((const __global uint *)p)[i]; }
/* the 32 bits at byte offset 2 of words i, i + 1 */
uint mvq_mid(uint lo, uint hi) { return (lo >> 16) | (hi << 16); }
float mvq_h(uint bits16) {
    const ushort h = (ushort)bits16;
    return vload_half(0, (const __private half *)&h);
}

/* bits 0..3 of x to bit 4 of bytes 0..3 (the x * 0x204081 terms do not overlap) */
uint mvq_spread4(uint x) { return ((x * 0x204081u) & 0x01010101u) << 4; }

/* Nibbles of four qs words: low ones are values 0..15, high ones 16..31 (the
 * ggml order), into p[0..7] of y block j. */
void mvq_nibbles(const uint *q, int *p) {
    for (int k = 0; k < 4; k++) {
        p[k] = (int)(q[k] & 0x0F0F0F0Fu);
        p[4 + k] = (int)((q[k] >> 4) & 0x0F0F0F0Fu);
    }
}

void mvq_decode(const int t, const __global uchar *x, const int u, __local const char *kv, mvq_unit *o) {
    for (int i = 0; i < 4; i++) o->m[i] = 1;
    o->off = 0;
    o->b[0] = o->b[1] = 0.0f;
    switch (t) {
    case MM_Q4_0:
    case MM_IQ4_NL: { /* two 18-byte blocks: d | qs[16] */
        const __global uchar *b = x + 36 * u;
        uint w[9];
        for (int i = 0; i < 9; i++) w[i] = mvq_w(b, i);
        const uint q0[4] = {mvq_mid(w[0], w[1]), mvq_mid(w[1], w[2]), mvq_mid(w[2], w[3]), mvq_mid(w[3], w[4])};
        const uint q1[4] = {w[5], w[6], w[7], w[8]};
        mvq_nibbles(q0, o->p);
        mvq_nibbles(q1, o->p + 8);
        o->a[0] = mvq_h(w[0]), o->a[1] = mvq_h(w[4] >> 16);
        if (t == MM_Q4_0) {
            o->off = 8;
        } else {
            for (int k = 0; k < 16; k++) {
                const uchar4 n = as_uchar4(o->p[k]);
                o->p[k] = as_int((char4)(kv[n.s0], kv[n.s1], kv[n.s2], kv[n.s3]));
            }
        }
        return;
    }
    case MM_Q4_1: { /* two 20-byte blocks: d, m | qs[16] */
        for (int j = 0; j < 2; j++) {
            const __global uchar *b = x + 20 * (2 * u + j);
            const uint h = mvq_w(b, 0);
            const uint q[4] = {mvq_w(b, 1), mvq_w(b, 2), mvq_w(b, 3), mvq_w(b, 4)};
            mvq_nibbles(q, o->p + 8 * j);
            o->a[j] = mvq_h(h), o->b[j] = mvq_h(h >> 16);
        }
        return;
    }
    case MM_Q5_0:
    case MM_Q5_1: { /* Q5_0: two 22-byte blocks d | qh[4] | qs[16]; Q5_1: 24-byte d, m | qh | qs */
        uint qh[2], q[2][4];
        if (t == MM_Q5_0) {
            const __global uchar *b = x + 44 * u;
            uint w[11];
            for (int i = 0; i < 11; i++) w[i] = mvq_w(b, i);
            qh[0] = mvq_mid(w[0], w[1]);
            for (int k = 0; k < 4; k++) q[0][k] = mvq_mid(w[1 + k], w[2 + k]);
            qh[1] = w[6];
            for (int k = 0; k < 4; k++) q[1][k] = w[7 + k];
            o->a[0] = mvq_h(w[0]), o->a[1] = mvq_h(w[5] >> 16);
            o->off = 16;
        } else {
            for (int j = 0; j < 2; j++) {
                const __global uchar *b = x + 24 * (2 * u + j);
                const uint h = mvq_w(b, 0);
                qh[j] = mvq_w(b, 1);
                for (int k = 0; k < 4; k++) q[j][k] = mvq_w(b, 2 + k);
                o->a[j] = mvq_h(h), o->b[j] = mvq_h(h >> 16);
            }
        }
        for (int j = 0; j < 2; j++) {
            mvq_nibbles(q[j], o->p + 8 * j);
            for (int k = 0; k < 4; k++) {
                o->p[8 * j + k] |= (int)mvq_spread4((qh[j] >> (4 * k)) & 15u);
                o->p[8 * j + 4 + k] |= (int)mvq_spread4((qh[j] >> (16 + 4 * k)) & 15u);
            }
        }
        return;
    }
    case MM_Q8_0: { /* two 34-byte blocks: d | qs[32] */
        const __global uchar *b = x + 68 * u;
        uint w[17];
        for (int i = 0; i < 17; i++) w[i] = mvq_w(b, i);
        for (int k = 0; k < 8; k++) o->p[k] = (int)mvq_mid(w[k], w[k + 1]);
        for (int k = 0; k < 8; k++) o->p[8 + k] = (int)w[9 + k];
        o->a[0] = mvq_h(w[0]), o->a[1] = mvq_h(w[8] >> 16);
        return;
    }
    case MM_Q4_K:
    case MM_Q5_K: { /* chunk c of a super-block: sub-blocks 2c (low nibbles), 2c + 1 (high) */
        const int q4k = t == MM_Q4_K;
        const __global uchar *b = x + (q4k ? 144 : 176) * (u >> 2);
        const int c = u & 3;
        const __global uchar *qs = b + (q4k ? 16 : 48) + 32 * c;
        const uint h = mvq_w(b, 0);
        uint q[8];
        for (int k = 0; k < 8; k++) q[k] = mvq_w(qs, k);
        for (int k = 0; k < 8; k++) {
            o->p[k] = (int)(q[k] & 0x0F0F0F0Fu);
            o->p[8 + k] = (int)((q[k] >> 4) & 0x0F0F0F0Fu);
        }
        if (!q4k) {
            for (int k = 0; k < 8; k++) {
                const uint qh = mvq_w(b + 16, k);
                o->p[k] |= (int)(((qh >> (2 * c)) & 0x01010101u) << 4);
                o->p[8 + k] |= (int)(((qh >> (2 * c + 1)) & 0x01010101u) << 4);
            }
        }
        const float d = mvq_h(h), dmin = mvq_h(h >> 16);
        for (int j = 0; j < 2; j++) {
            int sc, m;
            mm_scale_min_k4(2 * c + j, b + 4, &sc, &m);
            o->a[j] = d * (float)sc;
            o->b[j] = -(dmin * (float)m);
        }
        return;
    }
    case MM_Q6_K:
    default: { /* 210-byte blocks (16-bit aligned): unit (h, kk) holds y blocks
                * 4h + kk (low nibbles, qh bits 2kk) and 4h + kk + 2 (high, bits 2kk + 4) */
        const __global uchar *b = x + 210 * (u >> 2);
        const int h = (u >> 1) & 1, kk = u & 1;
        const __global ushort *ql = (const __global ushort *)(b + 64 * h + 32 * kk);
        const __global ushort *qh = (const __global ushort *)(b + 128 + 32 * h);
        for (int k = 0; k < 8; k++) {
            const uint l = (uint)ql[2 * k] | ((uint)ql[2 * k + 1] << 16);
            const uint hb = (uint)qh[2 * k] | ((uint)qh[2 * k + 1] << 16);
            const uint v0 = (l & 0x0F0F0F0Fu) | (((hb >> (2 * kk)) & 0x03030303u) << 4);
            const uint v1 = ((l >> 4) & 0x0F0F0F0Fu) | (((hb >> (2 * kk + 4)) & 0x03030303u) << 4);
            /* minus 32 in each byte without borrows: (v | 0x80) - 0x20, then bit 7 back */
            o->p[k] = (int)(((v0 | 0x80808080u) - 0x20202020u) ^ 0x80808080u);
            o->p[8 + k] = (int)(((v1 | 0x80808080u) - 0x20202020u) ^ 0x80808080u);
        }
        const __global char *sc = (const __global char *)(b + 192 + 8 * h + 2 * kk);
        o->m[0] = sc[0], o->m[1] = sc[1], o->m[2] = sc[4], o->m[3] = sc[5];
        o->a[0] = o->a[1] = vload_half(0, (const __global half *)(b + 208));
        return;
    }
    }
}

/* The two y blocks of unit u. */
void mvq_yblocks(const int t, const int u, int *yb) {
    if (t == MM_Q6_K) {
        yb[0] = 8 * (u >> 2) + 4 * ((u >> 1) & 1) + (u & 1);
        yb[1] = yb[0] + 2;
    } else {
        yb[0] = 2 * u;
        yb[1] = 2 * u + 1;
    }
}

/* ---- the kernel ------------------------------------------------------------- */

#define MVQ_ARGS                                                                                                \
    __global const uchar *src0, ulong offs0, __global const uchar *work, __global uchar *dst, ulong offsd,     \
        int ne00, int ne01, ulong nb01, ulong nb02, ulong nb03, int ne11, int ne12, ulong nb1, ulong nb2,      \
        ulong nb3, int r2, int r3, ulong nrows, __local float *scratch
#define MVQ_PASS \
    src0, offs0, work, dst, offsd, ne00, ne01, nb01, nb02, nb03, ne11, ne12, nb1, nb2, nb3, r2, r3, nrows, scratch

/* This work-item's share of the dot products of MVQ_NR0 src0 rows at x (rows past
 * nr0 repeat the last valid one and are never stored) with src1 rows [0, nr1) of the
 * work buffer (q at yq, (d, s) at yds): units lane, lane + nlanes, ... into acc[c][r]. */
void mvq_dots(const int t, const __global uchar *x, const ulong nb01, const int nr0, const __global uchar *yq,
              const __global float2 *yds, const int ne00, const int nr1, __local const char *kv, const int lane,
              const int nlanes, float *acc) {
    const int nblk = ne00 / 32, nunits = ne00 / 64;
    for (int i = 0; i < MVQ_NR1 * MVQ_NR0; i++) acc[i] = 0.0f;
#ifdef MVQ_DIAG_LOAD_ONLY /* experiment: the same weight loads, no y, no decode */
    const int wpu = t == MM_Q8_0 ? 17 : t == MM_Q4_1 ? 10 : t == MM_Q5_0 ? 11 : t == MM_Q5_1 ? 12 : t == MM_Q5_K ? 11 : 9;
    for (int u = lane; u < nunits; u += nlanes) {
        for (int r = 0; r < MVQ_NR0; r++) {
            const __global uint *p = (const __global uint *)(x + (ulong)min(r, max(nr0 - 1, 0)) * nb01) + u * wpu;
            uint h = 0;
            for (int i = 0; i < wpu; i++) h ^= p[i];
            acc[r] += as_float(h & 0x3F7FFFFFu);
        }
    }
    return;
#endif
    for (int u = lane; u < nunits; u += nlanes) {
        mvq_unit w[MVQ_NR0];
        for (int r = 0; r < MVQ_NR0; r++) mvq_decode(t, x + (ulong)min(r, max(nr0 - 1, 0)) * nb01, u, kv, &w[r]);
        int yb[2];
        mvq_yblocks(t, u, yb);
        for (int c = 0; c < MVQ_NR1; c++) {
            if (c >= nr1) break;
            const __global uchar *yc = yq + (ulong)c * (ulong)ne00;
            for (int j = 0; j < 2; j++) {
#ifdef MVQ_DIAG_NO_Y /* experiment: activations made up, not loaded */
                const int y[8] = {u, u + 1, u + 2, u + 3, u + 4, u + 5, u + 6, u + 7};
                const float2 ds = (float2)(1.0f, as_float(yb[j]));
#else
                const __global int4 *y4 = (const __global int4 *)(yc + 32 * yb[j]);
                const int4 ya = y4[0], yb4 = y4[1];
                const int y[8] = {ya.s0, ya.s1, ya.s2, ya.s3, yb4.s0, yb4.s1, yb4.s2, yb4.s3};
                const float2 ds = yds[(ulong)c * (ulong)nblk + (ulong)yb[j]];
#endif
                const float yd = ds.x;
                const int ys = as_int(ds.y);
                for (int r = 0; r < MVQ_NR0; r++) {
                    const int *p = w[r].p + 8 * j;
                    int h0 = 0, h1 = 0;
                    for (int k = 0; k < 4; k++) h0 = mvq_dp4(p[k], y[k], h0);
                    for (int k = 4; k < 8; k++) h1 = mvq_dp4(p[k], y[k], h1);
                    const int isum = w[r].m[2 * j] * h0 + w[r].m[2 * j + 1] * h1 - w[r].off * ys;
                    acc[c * MVQ_NR0 + r] += yd * (w[r].a[j] * (float)isum + w[r].b[j] * (float)ys);
                }
            }
        }
    }
}

/* With sub-groups, a work-group covers MVQ_SG_PAIRS x MVQ_NR0 src0 rows (the encoder's
 * count), each sub-group MVQ_NR0 of them at a time, reduced by sub_group_reduce_add:
 * no local memory or barrier (a tree of 7 barriers cost as much as the dots when each
 * work-item had two units). Any sub-group size gives the right result; 32 lanes (NVIDIA)
 * give each of the 4 sub-groups of 128 work-items one pair, 64 (AMD) two pairs to each
 * of 2, while 16- or 8-wide sub-groups would leave all but 4 of theirs idle.
 * Without: a work-group (lx, ly) gives local row ly MVQ_NR0 rows, reduced in local memory. */
#define MVQ_SG_PAIRS 4
void mvq(const int t, MVQ_ARGS) {
    const int r1 = get_group_id(1) * MVQ_NR1, nr1 = min(MVQ_NR1, ne11 - r1);
    const int im = get_group_id(2), i12 = im % ne12, i13 = im / ne12;
    const __global uchar *x0 = src0 + offs0 + (ulong)(i12 / r2) * nb02 + (ulong)(i13 / r3) * nb03;
    const ulong yrow0 = (ulong)im * (ulong)ne11 + (ulong)r1;
    const __global uchar *yq = work + yrow0 * (ulong)ne00;
    const __global float2 *yds = (const __global float2 *)(work + nrows * (ulong)ne00) + yrow0 * (ulong)(ne00 / 32);
    __global float *d0 = (__global float *)(dst + offsd + (ulong)i12 * nb2 + (ulong)i13 * nb3 + (ulong)r1 * nb1);
    const int nv = nr1 * MVQ_NR0;

    __local char *kv = (__local char *)scratch; /* IQ4_NL's values; the reduction reuses it after a barrier */
    if (t == MM_IQ4_NL) {
        const int n = get_local_size(0) * get_local_size(1);
        for (int l = get_local_id(1) * get_local_size(0) + get_local_id(0); l < 16; l += n)
            kv[l] = (char)mm_kvalues_iq4nl[l];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float acc[MVQ_NR1 * MVQ_NR0]; /* [c][r] */
#if CT_HAS_SUBGROUPS
    const int lane = get_sub_group_local_id(), nlanes = get_sub_group_size();
    for (int pair = get_sub_group_id(); pair < MVQ_SG_PAIRS; pair += get_num_sub_groups()) {
        const int r0 = (get_group_id(0) * MVQ_SG_PAIRS + pair) * MVQ_NR0;
        if (r0 >= ne01) break; /* uniform in the sub-group */
        const int nr0 = min(ne01 - r0, MVQ_NR0);
        mvq_dots(t, x0 + (ulong)r0 * nb01, nb01, nr0, yq, yds, ne00, nr1, kv, lane, nlanes, acc);
#pragma unroll
        for (int v = 0; v < MVQ_NR1 * MVQ_NR0; v++) {
            if (v >= nv) break;
            const float s = sub_group_reduce_add(acc[v]);
            const int c = v / MVQ_NR0, r = v % MVQ_NR0;
            if (lane == 0 && r < nr0) ((__global float *)((__global uchar *)d0 + (ulong)c * nb1))[r0 + r] = s;
        }
    }
#else
    const int tid = get_local_id(0), wg = get_local_size(0);
    const int r0 = (get_group_id(0) * get_local_size(1) + get_local_id(1)) * MVQ_NR0;
    const int nr0 = clamp(ne01 - r0, 0, MVQ_NR0);
    mvq_dots(t, x0 + (ulong)min(r0, ne01 - 1) * nb01, nb01, nr0, yq, yds, ne00, nr1, kv, tid, wg, acc);
    __local float *part = scratch + get_local_id(1) * nv * wg;
    barrier(CLK_LOCAL_MEM_FENCE); /* IQ4_NL's table is no longer read */
#pragma unroll
    for (int v = 0; v < MVQ_NR1 * MVQ_NR0; v++)
        if (v < nv) part[v * wg + tid] = acc[v];
    barrier(CLK_LOCAL_MEM_FENCE);
    mm_mv_tree(nv, scratch);
    for (int v = tid; v < nv; v += wg) {
        const int c = v / MVQ_NR0, r = v % MVQ_NR0;
        if (r < nr0) ((__global float *)((__global uchar *)d0 + (ulong)c * nb1))[r0 + r] = part[v * wg];
    }
#endif
}

#define MVQ_KERNEL(name, T) \
    __kernel void ct_mul_mvq_##name##_f32(MVQ_ARGS) { mvq(T, MVQ_PASS); }
MVQ_KERNEL(q4_0, MM_Q4_0)
MVQ_KERNEL(q4_1, MM_Q4_1)
MVQ_KERNEL(q5_0, MM_Q5_0)
MVQ_KERNEL(q5_1, MM_Q5_1)
MVQ_KERNEL(q8_0, MM_Q8_0)
MVQ_KERNEL(iq4_nl, MM_IQ4_NL)
MVQ_KERNEL(q4_K, MM_Q4_K)
MVQ_KERNEL(q5_K, MM_Q5_K)
MVQ_KERNEL(q6_K, MM_Q6_K)
