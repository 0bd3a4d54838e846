/* Quantized mat-vec on 8-bit activations, as the CPU backend computes it
 * (src/cpu/vec_dot.c): src1 rows are first quantized into 32-value blocks
 * of int8 q with a float scale d and the integer sum s of q (ct_quantize_qy, the
 * CPU's bytes exactly), then each src0 sub-block of 32 values v (x = a*v + b)
 * meets one y block as
 *     acc += y.d * (a * (float)isum + b * (float)y.s),  isum = sum v*q (exact int),
 * the CPU's expression, so only the order of the per-block additions differs.
 * The integer dot runs on packed 8-bit lanes (4 products per instruction where the
 * device has one), so the kernel reads 1 byte of activation per weight instead of
 * 4 and spends about one instruction per weight: the float kernel in mul_mat.cl
 * was bound by its per-element decode on the H200.
 *
 * Work layout (work buffer, written by ct_quantize_qy and read by ct_mul_mvq_*), in
 * the order the mat-vec reads it: src0 unit u (64 values) meets y blocks (u, 0) and
 * (u, 1) (mvq_ypos: which blocks those are depends on the src0 type). src1 row r
 * (r = (i13 * ne12 + i12) * ne11 + i11) has its q at r * ne10 in four planes of
 * ne10 / 4 bytes, plane 2j + h holding half h (16 bytes) of block (u, j) at u * 16, so
 * neighbouring work-items load neighbouring 16 bytes; its (d, s) pairs sit at
 * nrows * ne10 + r * ne10 / 4 + u * 16 + j * 8.
 *
 * Uses only kernel_args.h, common.cl (MM_*, ct_div), fp16.cl and dequant.cl (the IQ4_NL
 * table), which library.c composes before this file: on devices with NVIDIA's compiler
 * options those are also built as a program of their own, register-capped (library.c's
 * mvq_sources, load_capped_mvq).
 *
 * A team of work-items takes units of 64 src0 values (two y blocks) of MVQ_NR0 rows,
 * staged in local memory by 32-bit words (see "staging"), so the encoder requires
 * 4-byte aligned src0 rows (Q6_K, 210-byte blocks, 2-byte aligned ones) and
 * ne00 % 64 == 0. */

#define MVQ_NR0 CT_MVQ_NR0 /* src0 rows per team */
#define MVQ_NR1 CT_MVQ_NR1 /* src1 rows per work-group */

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

#if CT_HAS_NV_DP4A
/* bytes of {a, b} picked by the four selector nibbles of s (3 bits each: mask bit 3,
 * which prmt reads as "replicate the sign") */
uint mvq_prmt(uint a, uint b, uint s) {
    uint r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s));
    return r;
}

/* IQ4_NL values of the eight indices of a qs word (its nibbles): *lo gets the low nibbles'
 * values (bytes 0..3), *hi the high ones'. Each half-word of indices picks from the
 * table's low and high 8 bytes by byte permute (the selectors' bit 3 masked: prmt reads it
 * as "replicate the sign"), a third permute takes each byte from the half that bit 3 of
 * its index names, and two more sort the values into low and high nibbles. Eight permutes
 * for 8 values (one index a byte took 15 operations for 4, and the mat-vec ran at 43% of
 * copy where its loads and decode without it ran at 80%;
 * a lookup in a local-memory table per byte ran it at 25%). */
void mvq_iq4nl_lookup8(const uint q, int *lo, int *hi) {
    const uint m = q & 0x77777777u, h = ((q & 0x88888888u) >> 1) | 0x32103210u;
    const uint t0 = mvq_prmt(mvq_prmt(CT_IQ4NL_KV0, CT_IQ4NL_KV1, m), mvq_prmt(CT_IQ4NL_KV2, CT_IQ4NL_KV3, m), h);
    const uint m1 = m >> 16;
    const uint t1 =
        mvq_prmt(mvq_prmt(CT_IQ4NL_KV0, CT_IQ4NL_KV1, m1), mvq_prmt(CT_IQ4NL_KV2, CT_IQ4NL_KV3, m1), h >> 16);
    *lo = (int)mvq_prmt(t0, t1, 0x6420u);
    *hi = (int)mvq_prmt(t0, t1, 0x7531u);
}
#endif

/* ---- src1 -> 8-bit blocks --------------------------------------------------- */

/* Ties to even: v + 1.5 * 2^23 rounds in the float adder (|v| <= 127.5 here). */
int mvq_round_even(float v) { return (int)(as_uint(v + 12582912.0f) - 0x4B400000u); }

/* Block b of a row as (unit u, j): for Q6_K, unit (s, h, kk) of super-block s takes
 * blocks 8s + 4h + kk and 8s + 4h + kk + 2 (mvq_decode's order); else blocks 2u, 2u + 1. */
int mvq_ypos(const int q6k, const int b, int *j) {
    if (q6k) {
        *j = (b >> 1) & 1;
        return ((b >> 3) << 2) | (((b >> 2) & 1) << 1) | (b & 1);
    }
    *j = b & 1;
    return b >> 1;
}

/* Eight work-items per 32-value block, four values each (one block per WI kept
 * 448 WIs busy for a 14336-wide row, and they ran serially): grid (ne10 / 4,
 * ne11, ne12 * ne13) in groups of QY_WG (CT_QY_WG of kernel_args.h, a multiple of 64). The
 * block's max and flags meet in local memory; its first WI writes (d, s). q6k: the
 * layout for Q6_K's units. With a.qy_group = 8 the group's eight blocks (one work-group's
 * or a part of it: rows of those types hold whole groups) share the group's max, unless a
 * NaN or an infinity is among them, as on the CPU. */
#define QY_WG CT_QY_WG
__kernel void ct_quantize_qy(__global const uchar *src1, ulong offs1, __global uchar *work,
                             const ct_mul_mat_args a) {
    const int ne10 = a.ne00, ne11 = a.ne11, ne12 = a.ne12, q6k = a.q6_k;
    const ulong nb11 = a.nb11, nb12 = a.nb12, nb13 = a.nb13, nrows = a.work_rows;
    __local float lmax[QY_WG];
    __local int lflag[QY_WG], lsum[QY_WG];
    __local float gmax[QY_WG / 8]; /* per block, for a.qy_group > 1 */
    __local int gflag[QY_WG / 8];
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
    if (a.qy_group > 1) { /* uniform: every WI meets the barrier */
        if (lid == first) {
            gmax[lid >> 3] = amax;
            gflag[lid >> 3] = flags;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int g0 = (lid >> 3) & ~(a.qy_group - 1);
        float gm = 0.0f;
        int gf = 0;
        for (int i = 0; i < a.qy_group; i++) {
            gm = fmax(gm, gmax[g0 + i]);
            gf |= gflag[g0 + i];
        }
        if (!gf) amax = gm;
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
    int j;
    const int u = mvq_ypos(q6k, blk, &j), g = gid & 7; /* g: 4-value group of the block */
    __global uchar *plane = work + row * (ulong)ne10 + (ulong)(2 * j + (g >> 2)) * (ulong)(ne10 / 4);
    ((__global char4 *)(plane + 16 * u))[g & 3] = convert_char4(q);
    if (lid == first) {
        int s = 0;
        for (int i = 0; i < 8; i++) s += lsum[first + i];
        __global uint *ds = (__global uint *)(work + nrows * (ulong)ne10) + 2 * (row * (ulong)nblk + 2 * (ulong)u + j);
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

/* word i (32 bits) at a 4-byte aligned address of the stage */
uint mvq_w(__local const uchar *p, int i) { return ((__local const uint *)p)[i]; }
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

/* Unit u of the chunk staged at x (u counts from the chunk's first unit). */
/* kv: IQ4_NL's 16 values in local memory (shuffle() on a char16 of them ran the H200's
 * IQ4_NL mat-vec 2.3x slower) */
void mvq_decode(const int t, __local const uchar *x, const int u, __local const char *kv, mvq_unit *o) {
    for (int i = 0; i < 4; i++) o->m[i] = 1;
    o->off = 0;
    o->b[0] = o->b[1] = 0.0f;
    switch (t) {
    case MM_Q4_0:
    case MM_IQ4_NL: { /* two 18-byte blocks: d | qs[16] */
        __local const uchar *b = x + 36 * u;
        uint w[9];
        for (int i = 0; i < 9; i++) w[i] = mvq_w(b, i);
        const uint q0[4] = {mvq_mid(w[0], w[1]), mvq_mid(w[1], w[2]), mvq_mid(w[2], w[3]), mvq_mid(w[3], w[4])};
        const uint q1[4] = {w[5], w[6], w[7], w[8]};
        o->a[0] = mvq_h(w[0]), o->a[1] = mvq_h(w[4] >> 16);
#if CT_HAS_NV_DP4A
        if (t == MM_IQ4_NL) {
            for (int k = 0; k < 4; k++) {
                mvq_iq4nl_lookup8(q0[k], &o->p[k], &o->p[4 + k]);
                mvq_iq4nl_lookup8(q1[k], &o->p[8 + k], &o->p[12 + k]);
            }
            return;
        }
#endif
        mvq_nibbles(q0, o->p);
        mvq_nibbles(q1, o->p + 8);
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
            __local const uchar *b = x + 20 * (2 * u + j);
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
            __local const uchar *b = x + 44 * u;
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
                __local const uchar *b = x + 24 * (2 * u + j);
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
        __local const uchar *b = x + 68 * u;
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
        __local const uchar *b = x + (q4k ? 144 : 176) * (u >> 2);
        const int c = u & 3;
        __local const uchar *qs = b + (q4k ? 16 : 48) + 32 * c;
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
        /* the 6-bit scales and mins of sub-blocks 2c, 2c + 1, from the three scale words
         * (mm_scale_min_k4 for the four sub-blocks of the half c names, then the lane's two bytes;
         * by bytes, with a branch on j < 4, the decode cost q4_K 12 points) */
        const uint s0 = mvq_w(b, 1), s1 = mvq_w(b, 2), s2 = mvq_w(b, 3);
        const uint scw = c < 2 ? s0 & 0x3F3F3F3Fu : (s2 & 0x0F0F0F0Fu) | ((s0 >> 2) & 0x30303030u);
        const uint mw = c < 2 ? s1 & 0x3F3F3F3Fu : ((s2 >> 4) & 0x0F0F0F0Fu) | ((s1 >> 2) & 0x30303030u);
        const int sh = 16 * (c & 1);
        const float d = mvq_h(h), dmin = mvq_h(h >> 16);
        for (int j = 0; j < 2; j++) {
            o->a[j] = d * (float)((scw >> (sh + 8 * j)) & 0xFFu);
            o->b[j] = -(dmin * (float)((mw >> (sh + 8 * j)) & 0xFFu));
        }
        return;
    }
    case MM_Q6_K:
    default: { /* 210-byte blocks (16-bit aligned): unit (h, kk) holds y blocks
                * 4h + kk (low nibbles, qh bits 2kk) and 4h + kk + 2 (high, bits 2kk + 4) */
        __local const uchar *b = x + 210 * (u >> 2);
        const int h = (u >> 1) & 1, kk = u & 1;
        __local const ushort *ql = (__local const ushort *)(b + 64 * h + 32 * kk);
        __local const ushort *qh = (__local const ushort *)(b + 128 + 32 * h);
        for (int k = 0; k < 8; k++) {
            const uint l = (uint)ql[2 * k] | ((uint)ql[2 * k + 1] << 16);
            const uint hb = (uint)qh[2 * k] | ((uint)qh[2 * k + 1] << 16);
            const uint v0 = (l & 0x0F0F0F0Fu) | (((hb >> (2 * kk)) & 0x03030303u) << 4);
            const uint v1 = ((l >> 4) & 0x0F0F0F0Fu) | (((hb >> (2 * kk + 4)) & 0x03030303u) << 4);
            /* minus 32 in each byte without borrows: (v | 0x80) - 0x20, then bit 7 back */
            o->p[k] = (int)(((v0 | 0x80808080u) - 0x20202020u) ^ 0x80808080u);
            o->p[8 + k] = (int)(((v1 | 0x80808080u) - 0x20202020u) ^ 0x80808080u);
        }
        __local const char *sc = (__local const char *)(b + 192 + 8 * h + 2 * kk);
        o->m[0] = sc[0], o->m[1] = sc[1], o->m[2] = sc[4], o->m[3] = sc[5];
        o->a[0] = o->a[1] = vload_half(0, (__local const half *)(b + 208));
        return;
    }
    }
}

/* ---- staging ---------------------------------------------------------------- */

/* A team of MVQ_TEAM work-items takes MVQ_TEAM units of MVQ_NR0 rows at a time (a
 * chunk): it copies the chunk's bytes into local memory with neighbouring words on
 * neighbouring lanes, then each lane decodes its unit from there. Read straight from
 * global memory, a lane's words lie a unit (36-68 bytes) apart and each load touches
 * ~9 cache lines: with nothing but those loads the kernel reached 68% of the H200's
 * copy bandwidth. The next chunk's loads are issued
 * before this one is decoded, so they are in flight while the lanes compute. */
#define MVQ_TEAM CT_MVQ_TEAM
#define MVQ_LW_MAX 17 /* the most words a lane loads per chunk and row (Q8_0) */

/* Bytes of n units from a unit that starts a block pair (K-quants: a super-block, n % 4 == 0). */
int mvq_units_bytes(const int t, const int n) {
    switch (t) {
    case MM_Q4_0:
    case MM_IQ4_NL: return 36 * n;
    case MM_Q4_1: return 40 * n;
    case MM_Q5_0: return 44 * n;
    case MM_Q5_1: return 48 * n;
    case MM_Q8_0: return 68 * n;
    case MM_Q4_K: return 144 * (n / 4);
    case MM_Q5_K: return 176 * (n / 4);
    default: return 210 * (n / 4); /* MM_Q6_K */
    }
}

/* Words a lane loads per chunk and row (encoders/mul_mat.c sizes the stage the same way). */
int mvq_lane_words(const int t) { return CT_MVQ_LANE_WORDS(mvq_units_bytes(t, MVQ_TEAM)); }

/* This lane's words of the chunk at unit `base` of each row. Q6_K rows are only 2-byte
 * aligned: a row that starts 2 bytes into a word, or a partial chunk that ends 2 bytes
 * into one, is loaded by halves, the rest by words (the choice is the same for the
 * whole team). By halves throughout, Q6_K's staging alone ran at 64% of copy where the
 * other types' ran at 80-92%. */
void mvq_stage_load(const int t, const __global uchar *const *row, const int base, const int nunits,
                    const int lane, uint (*v)[MVQ_LW_MAX]) {
    const int lw = mvq_lane_words(t);
    const int cs = mvq_units_bytes(t, base), nb = mvq_units_bytes(t, min(MVQ_TEAM, nunits - base));
    for (int r = 0; r < MVQ_NR0; r++) {
        if (t == MM_Q6_K && (((size_t)row[r] | (size_t)nb) & 3) != 0) { /* cs % 4 == 0: 1680-byte chunks */
            const __global ushort *h = (const __global ushort *)(row[r] + cs);
            const int nh = nb / 2;
            for (int i = 0; i < lw; i++) {
                const int w = i * MVQ_TEAM + lane;
                const uint lo = 2 * w < nh ? h[2 * w] : 0u, hi = 2 * w + 1 < nh ? h[2 * w + 1] : 0u;
                v[r][i] = lo | (hi << 16);
            }
        } else {
            const __global uint *p = (const __global uint *)(row[r] + cs);
            const int nw = nb / 4;
            for (int i = 0; i < lw; i++) {
                const int w = i * MVQ_TEAM + lane;
                v[r][i] = w < nw ? p[w] : 0u;
            }
        }
    }
}

/* Synchronizes a team: its sub-group when teams are sub-groups (sg), else the work-group. */
void mvq_team_barrier(const int sg) {
#if CT_HAS_SUBGROUPS
    if (sg) {
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        return;
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* ---- the kernel ------------------------------------------------------------- */

#define MVQ_ARGS                                                                                                \
    __global const uchar *src0, ulong offs0, __global const uchar *work, __global uchar *dst, ulong offsd,     \
        int ne00, int ne01, ulong nb01, ulong nb02, ulong nb03, int ne11, int ne12, ulong nb1, ulong nb2,      \
        ulong nb3, int r2, int r3, ulong nrows, __local float *scratch
#define MVQ_PASS \
    src0, offs0, work, dst, offsd, ne00, ne01, nb01, nb02, nb03, ne11, ne12, nb1, nb2, nb3, r2, r3, nrows, scratch

/* On the work-group path every team of a group runs the same chunk between the same
 * barriers, so the group can copy the chunk's y once into local memory for all its
 * teams, where each team reads it from global memory itself (at 16384^2 and n = 8
 * that is 1.3 GB of reads through L1/L2 beside 285 MB of Q8_0 weights). ystage: for
 * each src1 row c < nr1, its four q planes' 16 bytes of each unit of the chunk
 * (MVQ_YQ_INT4 int4 a row), then after all rows' q, each unit's (d, s) pairs. Every
 * work-item of the group calls it. */
#define MVQ_YQ_INT4 (4 * MVQ_TEAM)
void mvq_stage_y(const __global uchar *yq, const __global float4 *yds, const int ne00, const int nr1,
                 const int base, __local int4 *ystage) {
    const int nunits = ne00 / 64, nu = min(MVQ_TEAM, nunits - base);
    for (int i = get_local_id(0); i < nr1 * MVQ_YQ_INT4; i += get_local_size(0)) {
        const int c = i / MVQ_YQ_INT4, plane = (i / MVQ_TEAM) % 4, l = i % MVQ_TEAM;
        if (l < nu) ystage[i] = ((const __global int4 *)(yq + (ulong)c * (ulong)ne00))[plane * nunits + base + l];
    }
    for (int i = get_local_id(0); i < nr1 * MVQ_TEAM; i += get_local_size(0)) {
        const int c = i / MVQ_TEAM, l = i % MVQ_TEAM;
        if (l < nu) ystage[MVQ_YQ_INT4 * nr1 + i] = as_int4(yds[(ulong)c * (ulong)nunits + (ulong)(base + l)]);
    }
}

/* Unit u's y of one src1 row: its four q planes' 16 bytes (y[0..3]) and its (d, s) pairs
 * (y[4]); zeros past the row. */
void mvq_y1_load(const __global uchar *yq, const __global float4 *yds, const int nunits, const int u, int4 *y) {
    for (int p = 0; p < 4; p++) y[p] = u < nunits ? ((const __global int4 *)yq)[p * nunits + u] : (int4)0;
    y[4] = u < nunits ? as_int4(yds[u]) : (int4)0;
}

/* This lane's share of the dot products of MVQ_NR0 src0 rows at x (rows past nr0
 * repeat the last valid one and are never stored) with src1 rows [0, nr1) of the
 * work buffer (q at yq, (d, s) at yds), into acc[c][r]: unit base + lane of each
 * chunk, staged in `stage` (MVQ_NR0 x MVQ_TEAM x mvq_lane_words(t) words). nr1max
 * (a constant of each kernel, nr1 <= nr1max <= MVQ_NR1) bounds the accumulators the
 * compiler keeps in registers. With one src1 row (nr1max == 1) the lane's y is loaded a
 * chunk ahead like the weights (yahead), so the dot products do not wait on it. */
void mvq_dots(const int t, const int nr1max, const __global uchar *x, const ulong nb01, const int nr0,
              const __global uchar *yq, const __global float4 *yds, const int ne00, const int nr1,
              __local const char *kv, const int lane, const int sg, __local uint *stage, const int ys,
              __local int4 *ystage, float *acc) {
    const int nunits = ne00 / 64, sw = MVQ_TEAM * mvq_lane_words(t);
    const __global uchar *row[MVQ_NR0];
    for (int r = 0; r < MVQ_NR0; r++) row[r] = x + (ulong)min(r, max(nr0 - 1, 0)) * nb01;
    for (int i = 0; i < nr1max * MVQ_NR0; i++) acc[i] = 0.0f;
    uint v[MVQ_NR0][MVQ_LW_MAX];
    mvq_stage_load(t, row, 0, nunits, lane, v);
    const int yahead = nr1max == 1 && !ys;
    int4 ynext[5], ycur[5];
    if (yahead) mvq_y1_load(yq, yds, nunits, lane, ynext);
    for (int base = 0; base < nunits; base += MVQ_TEAM) {
        mvq_team_barrier(sg); /* the previous chunk's readers are done */
        for (int r = 0; r < MVQ_NR0; r++)
            for (int i = 0; i < mvq_lane_words(t); i++) stage[r * sw + i * MVQ_TEAM + lane] = v[r][i];
        if (ys) mvq_stage_y(yq, yds, ne00, nr1, base, ystage);
        mvq_team_barrier(sg);
        if (yahead)
            for (int i = 0; i < 5; i++) ycur[i] = ynext[i];
        if (base + MVQ_TEAM < nunits) {
            mvq_stage_load(t, row, base + MVQ_TEAM, nunits, lane, v);
            if (yahead) mvq_y1_load(yq, yds, nunits, base + MVQ_TEAM + lane, ynext);
        }
        const int u = base + lane;
        if (u >= nunits) continue;
        mvq_unit w[MVQ_NR0];
        for (int r = 0; r < MVQ_NR0; r++)
            mvq_decode(t, (__local const uchar *)(stage + r * sw), lane, kv, &w[r]);
        for (int c = 0; c < nr1max; c++) {
            if (c >= nr1) break;
            const __global int4 *yc = (const __global int4 *)(yq + (ulong)c * (ulong)ne00);
            /* (d, s) of blocks (u, 0), (u, 1) */
            const float4 ds4 = yahead ? as_float4(ycur[4])
                               : !ys  ? yds[(ulong)c * (ulong)nunits + (ulong)u]
                                      : as_float4(ystage[MVQ_YQ_INT4 * nr1 + c * MVQ_TEAM + lane]);
            for (int j = 0; j < 2; j++) {
                int4 ya, yb4;
                if (yahead) {
                    ya = ycur[2 * j], yb4 = ycur[2 * j + 1];
                } else if (!ys) {
                    ya = yc[(2 * j) * nunits + u], yb4 = yc[(2 * j + 1) * nunits + u];
                } else {
                    ya = ystage[(4 * c + 2 * j) * MVQ_TEAM + lane];
                    yb4 = ystage[(4 * c + 2 * j + 1) * MVQ_TEAM + lane];
                }
                const int y[8] = {ya.s0, ya.s1, ya.s2, ya.s3, yb4.s0, yb4.s1, yb4.s2, yb4.s3};
                const float2 ds = j == 0 ? ds4.s01 : ds4.s23;
                const float yd = ds.x;
                const int ysum = as_int(ds.y);
                for (int r = 0; r < MVQ_NR0; r++) {
                    const int *p = w[r].p + 8 * j;
                    int h0 = 0, h1 = 0;
                    for (int k = 0; k < 4; k++) h0 = mvq_dp4(p[k], y[k], h0);
                    for (int k = 4; k < 8; k++) h1 = mvq_dp4(p[k], y[k], h1);
                    const int isum = w[r].m[2 * j] * h0 + w[r].m[2 * j + 1] * h1 - w[r].off * ysum;
                    acc[c * MVQ_NR0 + r] += yd * (w[r].a[j] * (float)isum + w[r].b[j] * (float)ysum);
                }
            }
        }
    }
}

/* The team's nv sums of acc over its lanes, in part (MVQ_TEAM floats each): the total of
 * value v is left in part[v * MVQ_TEAM]. part overlaps the stages: barriers on both sides. */
void mvq_team_sums(const float *acc, const int nr1max, const int nv, const int lane, __local float *part) {
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int v = 0; v < nr1max * MVQ_NR0; v++)
        if (v < nv) part[v * MVQ_TEAM + lane] = acc[v];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = MVQ_TEAM / 2; h > 0; h >>= 1) {
        if (lane < h)
            for (int v = 0; v < nv; v++) part[v * MVQ_TEAM + lane] += part[v * MVQ_TEAM + lane + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* A work-group of 1-D size nteam * MVQ_TEAM gives each team MVQ_NR0 rows, and takes
 * nr1max src1 rows (MVQ_NR1, or 1 in the kernels for a single src1 row). Teams are
 * sub-groups where the device's are MVQ_TEAM wide: sub-group barriers and
 * sub_group_reduce_add, and a team past the last row leaves at once. Elsewhere
 * (NVIDIA, which has no cl_khr_subgroups, and PoCL) they are runs of MVQ_TEAM
 * work-items synchronized by work-group barriers, so every team runs every chunk
 * (past the last row it repeats that row and stores nothing), the sums meet in local
 * memory, and with ys the group stages y for its teams (mvq_stage_y). scratch:
 * IQ4_NL's 16 values, the teams' stages, with ys the y stage (encoders/mul_mat.c sizes
 * it); the reduction reuses all of it. With glu (one src1 row) the rows of src0g (src0's
 * type, shape and row stride) are taken too, and dst gets ct_swiglu(src0 . y, src0g . y):
 * the MUL_MAT pair and SWIGLU after it (encoders/mul_mat.c), each sum as the plain kernel's. */
void mvq(const int t, const int nr1max, const int ys, MVQ_ARGS, const int glu, const __global uchar *src0g,
         const ulong offs0g) {
    const int r1 = get_group_id(1) * nr1max, nr1 = min(nr1max, ne11 - r1);
    const int im = get_group_id(2), i12 = im % ne12, i13 = im / ne12;
    const __global uchar *x0 = src0 + offs0 + (ulong)(i12 / r2) * nb02 + (ulong)(i13 / r3) * nb03;
    const __global uchar *g0 = glu ? src0g + offs0g : x0; /* glu: one src1 row, no batch */
    const ulong yrow0 = (ulong)im * (ulong)ne11 + (ulong)r1;
    const __global uchar *yq = work + yrow0 * (ulong)ne00;
    const __global float4 *yds = (const __global float4 *)(work + nrows * (ulong)ne00) + yrow0 * (ulong)(ne00 / 64);
    __global float *d0 = (__global float *)(dst + offsd + (ulong)i12 * nb2 + (ulong)i13 * nb3 + (ulong)r1 * nb1);
    const int nv = nr1 * MVQ_NR0, sw = MVQ_TEAM * mvq_lane_words(t);

    /* IQ4_NL's 16 values, the teams' stages, the y stage (mvq_stage_y), from scratch or,
     * for the y stage's int4, from its first 16-byte boundary (a local argument is only
     * sure to be aligned to its type, 4 bytes here; NVIDIA's are 8) */
    __local uchar *base = (__local uchar *)scratch;
    if (ys) base += (16u - ((uint)(size_t)base & 15u)) & 15u;
    __local char *kv = (__local char *)base;
    __local uint *stages = (__local uint *)(base + 16);
    __local int4 *ystage = (__local int4 *)(stages + (get_local_size(0) / MVQ_TEAM) * MVQ_NR0 * sw);
    if (t == MM_IQ4_NL) {
        for (int l = get_local_id(0); l < 16; l += get_local_size(0)) kv[l] = (char)ct_kvalues_iq4nl_f[l];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    float acc[MVQ_NR1 * MVQ_NR0]; /* [c][r] */
#if CT_HAS_SUBGROUPS
    if (get_max_sub_group_size() == MVQ_TEAM) {
        const int team = get_sub_group_id(), lane = get_sub_group_local_id();
        const int r0 = (get_group_id(0) * get_num_sub_groups() + team) * MVQ_NR0;
        if (r0 >= ne01) return; /* uniform in the team, whose barriers are its own */
        const int nr0 = min(ne01 - r0, MVQ_NR0);
        __local uint *stage = stages + team * MVQ_NR0 * sw;
        mvq_dots(t, nr1max, x0 + (ulong)r0 * nb01, nb01, nr0, yq, yds, ne00, nr1, kv, lane, 1, stage, 0, ystage, acc);
        float accg[MVQ_NR0];
        if (glu) mvq_dots(t, 1, g0 + (ulong)r0 * nb01, nb01, nr0, yq, yds, ne00, 1, kv, lane, 1, stage, 0, ystage, accg);
#pragma unroll
        for (int v = 0; v < nr1max * MVQ_NR0; v++) {
            if (v >= nv) break;
            float s = sub_group_reduce_add(acc[v]);
            if (glu) s = ct_swiglu(s, sub_group_reduce_add(accg[v]));
            const int c = v / MVQ_NR0, r = v % MVQ_NR0;
            if (lane == 0 && r < nr0) ((__global float *)((__global uchar *)d0 + (ulong)c * nb1))[r0 + r] = s;
        }
        return;
    }
#endif
    const int team = get_local_id(0) / MVQ_TEAM, lane = get_local_id(0) % MVQ_TEAM;
    const int r0 = (get_group_id(0) * (get_local_size(0) / MVQ_TEAM) + team) * MVQ_NR0;
    const int nr0 = clamp(ne01 - r0, 0, MVQ_NR0);
    __local uint *stage = stages + team * MVQ_NR0 * sw;
    __local float *part = scratch + team * nv * MVQ_TEAM; /* over the stages: all are read */
    mvq_dots(t, nr1max, x0 + (ulong)min(r0, ne01 - 1) * nb01, nb01, nr0, yq, yds, ne00, nr1, kv, lane, 0, stage,
             ys, ystage, acc);
    mvq_team_sums(acc, nr1max, nv, lane, part);
    float sx = 0.0f; /* glu: this lane's row sum of src0 (lane < nv = MVQ_NR0) */
    if (glu) {
        if (lane < nv) sx = part[lane * MVQ_TEAM];
        if (t == MM_IQ4_NL) { /* the sums overwrote the table: again, once every sx is read */
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int l = get_local_id(0); l < 16; l += get_local_size(0)) kv[l] = (char)ct_kvalues_iq4nl_f[l];
        }
        mvq_dots(t, 1, g0 + (ulong)min(r0, ne01 - 1) * nb01, nb01, nr0, yq, yds, ne00, 1, kv, lane, 0, stage, 0,
                 ystage, acc); /* its first barrier: every sx is read and the table written before the stages change */
        mvq_team_sums(acc, 1, nv, lane, part);
    }
    for (int v = lane; v < nv; v += MVQ_TEAM) {
        const int c = v / MVQ_NR0, r = v % MVQ_NR0;
        const float s = glu ? ct_swiglu(sx, part[v * MVQ_TEAM]) : part[v * MVQ_TEAM];
        if (r < nr0) ((__global float *)((__global uchar *)d0 + (ulong)c * nb1))[r0 + r] = s;
    }
}

/* ct_mul_mvq_<t>_f32 takes MVQ_NR1 src1 rows a work-group; ct_mul_mvq1_<t>_f32 one (the
 * decode step's mat-vec), with one row's accumulators and its y loaded a chunk ahead
 * (H200, 16384^2, against the earlier kernels: q8_0 78 -> 87%, q5_1 67 -> 73%,
 * the rest within 2 points). ct_mul_mvqy_<t>_f32 stage y in local memory once a work-group (mvq_stage_y), for 4
 * src1 rows and more, in the types it made faster on the H200 (16384^2,
 * n = 8: q8_0 19 -> 30%, q5_1 16 -> 22%, q5_0 19 -> 22%; at n = 2 it cost most types
 * points, and Q4_0, Q4_K and IQ4_NL ran slower with it at every n). */
/* A kernel's arguments: the tensors, ct_mul_mat_args (kernel_args.h), the scratch. */
#define MVQ_KERNEL_ARGS                                                                                          \
    __global const uchar *src0, ulong offs0, __global const uchar *work, __global uchar *dst, ulong offsd,     \
        const ct_mul_mat_args a, __local float *scratch
#define MVQ_KERNEL_PASS                                                                                          \
    src0, offs0, work, dst, offsd, a.ne00, a.ne01, a.nb01, a.nb02, a.nb03, a.ne11, a.ne12, a.nb1, a.nb2, a.nb3,  \
        a.r2, a.r3, a.work_rows, scratch
#define MVQ_KERNEL(name, T) \
    __kernel void ct_mul_mvq_##name##_f32(MVQ_KERNEL_ARGS) { mvq(T, MVQ_NR1, 0, MVQ_KERNEL_PASS, 0, 0, 0); }
#define MVQ_KERNEL1(name, T)                                                                                     \
    __kernel void ct_mul_mvq1_##name##_f32(MVQ_KERNEL_ARGS) { mvq(T, 1, 0, MVQ_KERNEL_PASS, 0, 0, 0); }         \
    __kernel void ct_mul_mvq1_swiglu_##name##_f32(MVQ_KERNEL_ARGS, __global const uchar *src0g, ulong offs0g) { \
        mvq(T, 1, 0, MVQ_KERNEL_PASS, 1, src0g, offs0g);                                                       \
    }
#define MVQ_KERNELY(name, T) \
    __kernel void ct_mul_mvqy_##name##_f32(MVQ_KERNEL_ARGS) { mvq(T, MVQ_NR1, 1, MVQ_KERNEL_PASS, 0, 0, 0); }
MVQ_KERNEL(q4_0, MM_Q4_0)
MVQ_KERNEL(q4_1, MM_Q4_1)
MVQ_KERNEL(q5_0, MM_Q5_0)
MVQ_KERNEL(q5_1, MM_Q5_1)
MVQ_KERNEL(q8_0, MM_Q8_0)
MVQ_KERNEL(iq4_nl, MM_IQ4_NL)
MVQ_KERNEL(q4_K, MM_Q4_K)
MVQ_KERNEL(q5_K, MM_Q5_K)
MVQ_KERNEL(q6_K, MM_Q6_K)
MVQ_KERNEL1(q4_0, MM_Q4_0)
MVQ_KERNEL1(q4_1, MM_Q4_1)
MVQ_KERNEL1(q5_0, MM_Q5_0)
MVQ_KERNEL1(q5_1, MM_Q5_1)
MVQ_KERNEL1(q8_0, MM_Q8_0)
MVQ_KERNEL1(iq4_nl, MM_IQ4_NL)
MVQ_KERNEL1(q4_K, MM_Q4_K)
MVQ_KERNEL1(q5_K, MM_Q5_K)
MVQ_KERNEL1(q6_K, MM_Q6_K)
MVQ_KERNELY(q4_1, MM_Q4_1)
MVQ_KERNELY(q5_0, MM_Q5_0)
MVQ_KERNELY(q5_1, MM_Q5_1)
MVQ_KERNELY(q8_0, MM_Q8_0)
MVQ_KERNELY(q5_K, MM_Q5_K)
MVQ_KERNELY(q6_K, MM_Q6_K)
