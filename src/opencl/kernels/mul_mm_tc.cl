/* MUL_MAT on NVIDIA's tensor cores: ct_mul_mmtc_<t>_f32, CT_MMTC_BM x CT_MMTC_BN output
 * tiles (kernel_args.h), each warp a grid of warp-wide m16n8k16 products (PTX mma.sync,
 * fp32 accumulators). Needs mul_mat.cl (dequantization, src1 loads, MM_KERNEL_ARGS).
 *
 * mm_tc_tile takes its src1 and dst rows through mul_mat.cl's mm_rows, so MUL_MAT_ID's
 * grouped kernels ct_mul_mmtc_id_<t>_f32 (mul_mat_id.cl, made here by MMTC_KERNELS) run
 * the same tiles over an expert's gathered rows.
 *
 * Built where the device's probe compiled mma.sync (CT_HAS_NV_MMA: device.c), or with the
 * portable emulation of the same warp operation (CT_MMA_EMULATE: CT_OPENCL_MMA_EMULATE=1,
 * so that the tiling and the fragment layouts are tested on any device, PoCL included).
 *
 * MUL_MAT's tiles read src1 as packed rows of 16-bit operands that ct_mul_mmtc_y16 writes
 * first (the encoder's work memory): a tile step then reads half the bytes of src1's
 * floats, which pays where many work-groups share the card (docs/PERF.md). MUL_MAT_ID's
 * gathered rows are read as floats and rounded in the tile (a copy first measured no
 * faster there: docs/PERF.md).
 *
 * The operands are 16-bit. An F16 src0 as it is, with src1 rounded to F16 (as ggml-cuda's
 * F16 path); every other src0 in BF16 with the bf16 form of the instruction: BF16 as it is,
 * a quantized one dequantized as mul_mat.cl does, and src1 rounded to BF16, whose range is
 * float's (activations past F16's 65504 stay finite) and whose 8-bit significand is finer
 * than the CPU backend's 8-bit blocks of src1. Products of 16-bit values are exact in fp32;
 * the sums are the tensor cores', so results differ from the fp32 kernels in the last bits
 * (within MUL_MAT's tolerance: docs/TESTING.md).
 *
 * Local memory (CT_MMTC_LOCAL_BYTES): A and B tiles as rows of 16-bit values, twice, IQ4_NL's
 * table, and the emulation's exchange area. */

#if CT_HAS_NV_MMA || CT_MMA_EMULATE

#define TC_BK CT_MMTC_BK
#define TC_LDW CT_MMTC_LDW
#define TC_LDW4 (TC_LDW / 4)
#define TC_XCH_WORDS CT_MMTC_XCH_WORDS
/* The kernel's loops unrolled on the tensor cores (fragments and accumulators stay in
 * registers); not in the emulation, whose barriers PoCL compiles slowly when unrolled. */
#if CT_HAS_NV_MMA
#define TC_UNROLL _Pragma("unroll")
#else
#define TC_UNROLL
#endif

/* ---- the warp operation and the 16-bit packing ------------------------------------ */

#if CT_HAS_NV_MMA
/* two floats as the halves (lo, hi) of a word: F16, or BF16 where bf */
uint tc_pack2(float lo, float hi, const int bf) {
    uint r;
    if (bf) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    else asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

/* c += A (16x16, fragment a) * B (16x8, fragment b), in the layouts PTX's ISA gives for
 * mma.m16n8k16 (lane = 4 * g + q): a[0] holds A[g][2q..2q+1], a[1] A[g+8][2q..], a[2]
 * A[g][2q+8..], a[3] A[g+8][2q+8..]; b[0] B[2q..2q+1][g], b[1] B[2q+8..][g]; c[0..1]
 * C[g][2q..2q+1], c[2..3] C[g+8][2q..]. */
void tc_mma(float *c, const uint *a, const uint *b, __local uint *xch, const int bf) {
    float d0, d1, d2, d3;
    if (bf)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};"
            : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
              "f"(c[3]));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%10,%11,%12,%13};"
            : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
              "f"(c[3]));
    c[0] = d0, c[1] = d1, c[2] = d2, c[3] = d3;
}
#else
uint tc_pack2(float lo, float hi, const int bf) {
    if (bf) return ct_float_to_bf16(lo) | ((uint)ct_float_to_bf16(hi) << 16);
    return ct_float_to_half(lo) | ((uint)ct_float_to_half(hi) << 16);
}

float tc_unpack(uint w, int hi, const int bf) {
    const ushort h = (ushort)(hi ? w >> 16 : w);
    return bf ? ct_bf16_to_float(h) : ct_half_to_float(h);
}

/* tc_mma's contract, computed by the whole work-group: each lane publishes its fragments
 * in its warp's part of xch (TC_XCH_WORDS words), then reads the A row and B column of each
 * of its four outputs. Every work-item must call it the same number of times (barriers). */
void tc_mma(float *c, const uint *a, const uint *b, __local uint *xch, const int bf) {
    const int lane = get_local_id(0) & 31, g = lane >> 2, q = lane & 3;
    __local uint *xa = xch + (get_local_id(0) >> 5) * TC_XCH_WORDS, *xb = xa + 128;
    for (int i = 0; i < 4; i++) xa[4 * lane + i] = a[i];
    for (int i = 0; i < 2; i++) xb[2 * lane + i] = b[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 4; i++) {
        const int row = g + 8 * (i >> 1), col = 2 * q + (i & 1);
        float s = c[i];
        for (int k = 0; k < 16; k++) {
            /* the lane and register that hold A[row][k] and B[k][col] */
            const int kq = (k & 7) >> 1, kh = k & 1;
            const float av = tc_unpack(xa[4 * (4 * (row & 7) + kq) + (row >> 3) + 2 * (k >> 3)], kh, bf);
            const float bv = tc_unpack(xb[2 * (4 * col + kq) + (k >> 3)], kh, bf);
            s += av * bv;
        }
        c[i] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

uint4 tc_pack8(float8 v, const int bf) {
    return (uint4)(tc_pack2(v.s0, v.s1, bf), tc_pack2(v.s2, v.s3, bf), tc_pack2(v.s4, v.s5, bf),
                   tc_pack2(v.s6, v.s7, bf));
}

/* ---- src1 as 16-bit operands ------------------------------------------------------- */

/* src1's values (F32, or F16 where f16; a.nb10.. its strides) as the tiles' operands: F16,
 * or BF16 where bf, rounded to nearest even by tc_pack8, in rows of a.ne00 values rounded up
 * to 8 with zeros after (16-byte aligned rows: one uint4 load a group). Row (i13 * ne12 +
 * i12) * ne11 + i11 at offsw. Grid (groups of 8 values, ne11, ne12 * ne13). */
__kernel void ct_mul_mmtc_y16(__global const uchar *src1, ulong offs1, __global uchar *work, ulong offsw,
                              const ct_mul_mat_args a, int bf, int f16) {
    const int g = get_global_id(0), i11 = get_global_id(1), im = get_global_id(2);
    const int groups = (a.ne00 + 7) / 8;
    if (g >= groups) return;
    const int i12 = im % a.ne12, i13 = im / a.ne12;
    const __global uchar *p = src1 + offs1 + (ulong)i13 * a.nb13 + (ulong)i12 * a.nb12 + (ulong)i11 * a.nb11;
    float8 v;
    if (!f16 && a.nb10 == sizeof(float) && 8 * g + 8 <= a.ne00) {
        v = vload8(g, (const __global float *)p);
    } else {
        float r[8];
        for (int j = 0; j < 8; j++) {
            const int i10 = 8 * g + j;
            const __global uchar *e = p + (ulong)i10 * a.nb10;
            r[j] = i10 >= a.ne00 ? 0.0f : f16 ? ct_lda_f16(e) : *(const __global float *)e;
        }
        v = vload8(0, r);
    }
    __global uint4 *d = (__global uint4 *)(work + offsw);
    d[((ulong)im * (ulong)a.ne11 + (ulong)i11) * (ulong)groups + (ulong)g] = tc_pack8(v, bf);
}

/* ---- the kernel --------------------------------------------------------------------- */

/* One CT_MMTC_BM x CT_MMTC_BN tile: src0 rows r0.. of the matrix at x0 against src1 rows
 * r1.. of n1, placed from y0 and d0 by idm and rows (mul_mat.cl's mm_rows: MUL_MAT's rows,
 * or an expert's gathered ones for MUL_MAT_ID); src1's rows floats, or where y16 as
 * ct_mul_mmtc_y16 wrote them (ne00 rounded up to 8 values). CT_MMTC_WG work-items. Warp w
 * owns src0 rows TC_WM * (w % CT_MMTC_WARPS_M) + [0, TC_WM) and src1 rows TC_WN *
 * (w / CT_MMTC_WARPS_M) + [0, TC_WN) of the tile. A step's tiles are loaded in groups of 8
 * values, four work-items to a row (consecutive groups: coalesced);
 * the next step's global loads are issued before this step's products and stored to the
 * other local buffer after them: one barrier a step. Out-of-range rows read the last
 * valid row and are never written; k past ne00 reads zeros (quantized rows hold whole
 * steps). */
#define TC_WM (16 * CT_MMTC_TM)
#define TC_WN (8 * CT_MMTC_TN)
#define TC_GROUPS (TC_BK / 8)                       /* groups of 8 values in a tile row */
#define TC_NA (CT_MMTC_BM * TC_GROUPS / CT_MMTC_WG) /* A groups a work-item loads a step */
#define TC_NB (CT_MMTC_BN * TC_GROUPS / CT_MMTC_WG)

void mm_tc_tile(const int t, const int idm, const int y16, const __global uchar *x0, const __global uchar *y0,
                __global uchar *d0, int ne00, int ne01, ulong nb01, int r0, int r1, int n1, const mm_rows rows, __local uint4 *scratch4) {
    const int bf = t != MM_F16, raw = t == MM_F16 || t == MM_BF16;
    const int tid = get_local_id(0), lane = tid & 31, w = tid >> 5, g = lane >> 2, q = lane & 3;
    const int wm = TC_WM * (w % CT_MMTC_WARPS_M), wn = TC_WN * (w / CT_MMTC_WARPS_M);
    /* A's two buffers, then B's, then IQ4_NL's table and the emulation's exchange area */
    __local uint *as = (__local uint *)scratch4, *bs = as + 2 * CT_MMTC_BM * TC_LDW;
    __local float *kv = (__local float *)(bs + 2 * CT_MMTC_BN * TC_LDW);
    __local uint *xch = (__local uint *)(kv + 16);
    __local uint4 *as4 = scratch4, *bs4 = scratch4 + 2 * CT_MMTC_BM * TC_LDW4;

    const int lq = tid % TC_GROUPS, lr = tid / TC_GROUPS; /* this work-item's group and first row */
    const int xa16 = ((ulong)x0 & 15) == 0 && (nb01 & 15) == 0;
    const int ya16 = ((ulong)y0 & 15) == 0 && (rows.nb11 & 15) == 0 && (!idm || (rows.nb12 & 15) == 0);
    const __global uchar *xa[TC_NA];
    const int ne10 = y16 ? (ne00 + 7) / 8 * 8 : ne00; /* the values a src1 row holds */
    const __global uchar *yb[TC_NB];
TC_UNROLL
    for (int i = 0; i < TC_NA; i++) xa[i] = x0 + (ulong)min(r0 + lr + i * (CT_MMTC_WG / TC_GROUPS), ne01 - 1) * nb01;
TC_UNROLL
    for (int i = 0; i < TC_NB; i++)
        yb[i] = y0 + mm_yoff(idm, rows, min(r1 + lr + i * (CT_MMTC_WG / TC_GROUPS), n1 - 1));

    if (t == MM_IQ4_NL || t == MM_IQ4_XS) {
        if (tid < 16) kv[tid] = ct_kvalues_iq4nl_f[tid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    const int nsteps = (ne00 + TC_BK - 1) / TC_BK;
    float8 pa[TC_NA], pb[TC_NB];
    uint4 ph[TC_NA], pb16[TC_NB];
#define TC_PREFETCH(step)                                                                  \
    do {                                                                                   \
        const int g_ = TC_GROUPS * (step) + lq;                                            \
        for (int i = 0; i < TC_NB; i++) {                                                  \
            if (y16) pb16[i] = mmt_raw16(yb[i], g_, ne10, 1);                              \
            else pb[i] = mm_ld8y((const __global float *)yb[i], g_, ne00, ya16);          \
        }                                                                                  \
        for (int i = 0; i < TC_NA; i++) {                                                  \
            if (raw) ph[i] = mmt_raw16(xa[i], g_, ne00, xa16);                             \
            else pa[i] = mm_deq8_full(t, xa[i], g_, kv);                                   \
        }                                                                                  \
    } while (0)
#define TC_STORE(buf)                                                                      \
    do {                                                                                   \
        for (int i = 0; i < TC_NA; i++)                                                    \
            as4[((buf) * CT_MMTC_BM + lr + i * (CT_MMTC_WG / TC_GROUPS)) * TC_LDW4 + lq] = \
                raw ? ph[i] : tc_pack8(pa[i], bf);                                         \
        for (int i = 0; i < TC_NB; i++)                                                    \
            bs4[((buf) * CT_MMTC_BN + lr + i * (CT_MMTC_WG / TC_GROUPS)) * TC_LDW4 + lq] = \
                y16 ? pb16[i] : tc_pack8(pb[i], bf);                                       \
    } while (0)
    if (nsteps > 0) { /* ne00 == 0: a quantized row has no block to read */
        TC_PREFETCH(0);
        TC_STORE(0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    float acc[CT_MMTC_TM][CT_MMTC_TN][4];
TC_UNROLL
    for (int i = 0; i < CT_MMTC_TM; i++)
TC_UNROLL
        for (int j = 0; j < CT_MMTC_TN; j++)
TC_UNROLL
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    for (int s = 0; s < nsteps; s++) {
        const int cur = s & 1;
        if (s + 1 < nsteps) TC_PREFETCH(s + 1);
        const __local uint *ab = as + cur * CT_MMTC_BM * TC_LDW, *bb = bs + cur * CT_MMTC_BN * TC_LDW;
TC_UNROLL
        for (int ks = 0; ks < TC_BK / 16; ks++) {
            uint af[CT_MMTC_TM][4], bfr[CT_MMTC_TN][2];
TC_UNROLL
            for (int i = 0; i < CT_MMTC_TM; i++) {
                const __local uint *p = ab + (wm + 16 * i + g) * TC_LDW + 8 * ks + q;
                af[i][0] = p[0], af[i][1] = p[8 * TC_LDW], af[i][2] = p[4], af[i][3] = p[8 * TC_LDW + 4];
            }
TC_UNROLL
            for (int j = 0; j < CT_MMTC_TN; j++) {
                const __local uint *p = bb + (wn + 8 * j + g) * TC_LDW + 8 * ks + q;
                bfr[j][0] = p[0], bfr[j][1] = p[4];
            }
TC_UNROLL
            for (int i = 0; i < CT_MMTC_TM; i++)
TC_UNROLL
                for (int j = 0; j < CT_MMTC_TN; j++) tc_mma(acc[i][j], af[i], bfr[j], xch, bf);
        }
        /* the other buffer was last read a step ago, before the barrier that ended it */
        if (s + 1 < nsteps) TC_STORE(cur ^ 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#undef TC_PREFETCH
#undef TC_STORE

TC_UNROLL
    for (int j = 0; j < CT_MMTC_TN; j++) {
TC_UNROLL
        for (int e = 0; e < 4; e++) {
            const int c = r1 + wn + 8 * j + 2 * q + (e & 1);
            if (c < n1) {
                __global float *dr = (__global float *)(d0 + mm_doff(idm, rows, c));
TC_UNROLL
                for (int i = 0; i < CT_MMTC_TM; i++) {
                    const int r = r0 + wm + 16 * i + g + 8 * (e >> 1);
                    if (r < ne01) dr[r] = acc[i][j][e];
                }
            }
        }
    }
}

/* MUL_MAT's product: batch get_group_id(2), its rows as they lie. */
void mm_tc(const int t, __global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1,
           __global uchar *dst, ulong offsd, int ne00, int ne01, ulong nb01, ulong nb02, ulong nb03, int ne11,
           int ne12, ulong nb10, ulong nb11, ulong nb12, ulong nb13, ulong nb1, ulong nb2, ulong nb3, int r2, int r3,
           __local uint4 *scratch4) {
    MM_BATCH_BASES();
    mm_tc_tile(t, 0, 1, x0, y0, d0, ne00, ne01, nb01, get_group_id(0) * CT_MMTC_BM, get_group_id(1) * CT_MMTC_BN,
               ne11, MM_PLAIN_ROWS(), scratch4);
}

/* MUL_MAT_ID's tiles (MMID_TILES), on src1's float rows */
void mm_tc_tile_f32y(const int t, const int idm, const __global uchar *x0, const __global uchar *y0,
                     __global uchar *d0, int ne00, int ne01, ulong nb01, int r0, int r1, int n1, const mm_rows rows,
                     __local uint4 *scratch4) {
    mm_tc_tile(t, idm, 0, x0, y0, d0, ne00, ne01, nb01, r0, r1, n1, rows, scratch4);
}

#define MMTC_KERNELS(name, T)                                                      \
    __kernel void ct_mul_mmtc_##name##_f32(MM_KERNEL_ARGS(uint4, scratch4)) {      \
        mm_tc(T, MM_KERNEL_PASS(scratch4));                                        \
    }                                                                              \
    MMTCID_KERNELS(name, T) /* MUL_MAT_ID's (mul_mat_id.cl) */
MMTC_KERNELS(f16, MM_F16)
MMTC_KERNELS(bf16, MM_BF16)
MMTC_KERNELS(q4_0, MM_Q4_0)
MMTC_KERNELS(q4_1, MM_Q4_1)
MMTC_KERNELS(q5_0, MM_Q5_0)
MMTC_KERNELS(q5_1, MM_Q5_1)
MMTC_KERNELS(q8_0, MM_Q8_0)
MMTC_KERNELS(iq4_nl, MM_IQ4_NL)
MMTC_KERNELS(q4_K, MM_Q4_K)
MMTC_KERNELS(q5_K, MM_Q5_K)
MMTC_KERNELS(q6_K, MM_Q6_K)
MMTC_KERNELS(q2_K, MM_Q2_K)
MMTC_KERNELS(q3_K, MM_Q3_K)
MMTC_KERNELS(iq4_xs, MM_IQ4_XS)

#endif /* CT_HAS_NV_MMA || CT_MMA_EMULATE */
