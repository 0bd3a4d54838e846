/* SET_ROWS: dst[:, src1[i, i02 % ne11, i03 % ne12], i02, i03] = convert(src0[:, i, i02, i03]).
 * ct_check_indices (get_rows.cl) runs first; these kernels write nothing once the
 * flag is set, and never a row whose index is out of range. */

#define CT_SET_ROWS_ARGS                                                                                  \
    __global const uchar *s0, ulong s0_offs, __global const uchar *s1, ulong s1_offs, __global uchar *d, \
        ulong d_offs, long nk0, long ne01, ulong nb00, ulong nb01, ulong nb02, ulong nb03, long ne11,      \
        long ne12, ulong nb10, ulong nb11, ulong nb12, ulong nb1, ulong nb2, ulong nb3, long ne1, int is64,  \
        int src_f16, int src_aligned, int dst_aligned, __global int *err, int code

/* Rows batched along i01 (nrptg = local size 1); threads stride over the row's units. */
#define CT_SET_ROWS_PROLOGUE                                                                              \
    const long i01 = (long)get_group_id(0) * (long)get_local_size(1) + (long)get_local_id(1);            \
    if (i01 >= ne01) return;                                                                              \
    if (*(volatile __global int *)err != 0) return;                                                       \
    const ulong i02 = get_group_id(1), i03 = get_group_id(2);                                            \
    const __global uchar *ip = s1 + s1_offs + (ulong)i01 * nb10 + (i02 % (ulong)ne11) * nb11 +             \
                               (i03 % (ulong)ne12) * nb12;                                                \
    const long r = is64 ? (long)(((ulong)ct_ld_u32(ip + 4) << 32) | ct_ld_u32(ip)) : (long)as_int(ct_ld_u32(ip)); \
    if (r < 0 || r >= ne1) return;                                                                        \
    const __global uchar *src = s0 + s0_offs + (ulong)i01 * nb01 + i02 * nb02 + i03 * nb03;              \
    __global uchar *dst = d + d_offs + (ulong)r * nb1 + i02 * nb2 + i03 * nb3;                           \
    const long nth = get_local_size(0);

float ct_set_rows_load(const __global uchar *p, int src_f16, int src_aligned) {
    if (src_f16) return ct_half_to_float(ct_ld_u16(p));
    return src_aligned ? *(const __global float *)p : as_float(ct_ld_u32(p));
}

__kernel void ct_set_rows_f32(CT_SET_ROWS_ARGS) {
    CT_SET_ROWS_PROLOGUE
    for (long j = get_local_id(0); j < nk0; j += nth) {
        const __global uchar *sp = src + (ulong)j * nb00;
        /* F32 -> F32 keeps the bits, as the CPU's memcpy */
        const uint v = src_f16 ? as_uint(ct_half_to_float(ct_ld_u16(sp)))
                               : (src_aligned ? *(const __global uint *)sp : ct_ld_u32(sp));
        if (dst_aligned) *(__global uint *)(dst + 4 * j) = v;
        else ct_st_u32(dst + 4 * j, v);
    }
}

__kernel void ct_set_rows_f16(CT_SET_ROWS_ARGS) {
    CT_SET_ROWS_PROLOGUE
    for (long j = get_local_id(0); j < nk0; j += nth) {
        const ushort v = ct_float_to_half(ct_set_rows_load(src + (ulong)j * nb00, src_f16, src_aligned));
        if (dst_aligned) *(__global ushort *)(dst + 2 * j) = v;
        else ct_st_u16(dst + 2 * j, v);
    }
}

__kernel void ct_set_rows_bf16(CT_SET_ROWS_ARGS) {
    CT_SET_ROWS_PROLOGUE
    for (long j = get_local_id(0); j < nk0; j += nth) {
        const ushort v = ct_float_to_bf16(ct_set_rows_load(src + (ulong)j * nb00, src_f16, src_aligned));
        if (dst_aligned) *(__global ushort *)(dst + 2 * j) = v;
        else ct_st_u16(dst + 2 * j, v);
    }
}

/* One 32-float block per unit. */
#define CT_SET_ROWS_BLOCK(NAME, QUANT, TS)                                                                \
    __kernel void NAME(CT_SET_ROWS_ARGS) {                                                                \
        CT_SET_ROWS_PROLOGUE                                                                              \
        for (long u = get_local_id(0); u < nk0; u += nth) {                                               \
            float x[32];                                                                                  \
            const __global uchar *sp = src + (ulong)(32 * u) * nb00;                                      \
            for (int k = 0; k < 32; k++) x[k] = ct_set_rows_load(sp + (ulong)k * nb00, src_f16, src_aligned); \
            QUANT(x, dst + (ulong)u * (TS));                                                              \
        }                                                                                                 \
    }

CT_SET_ROWS_BLOCK(ct_set_rows_q8_0, ct_quantize_q8_0, 34)
CT_SET_ROWS_BLOCK(ct_set_rows_q4_0, ct_quantize_q4_0, 18)
CT_SET_ROWS_BLOCK(ct_set_rows_q4_1, ct_quantize_q4_1, 20)
CT_SET_ROWS_BLOCK(ct_set_rows_q5_0, ct_quantize_q5_0, 22)
CT_SET_ROWS_BLOCK(ct_set_rows_q5_1, ct_quantize_q5_1, 24)
CT_SET_ROWS_BLOCK(ct_set_rows_iq4_nl, ct_quantize_iq4_nl, 18)

/* ---- block quantization by teams (SET_ROWS and CPY into the six quantized types) ----
 *
 * ct_quant_rows_<t>: rows of nkr 32-blocks, each block quantized by a team of 4
 * work-items, each loading 4 floats from each half of the block (common.cl's ct_qt_*).
 * Work-group g takes NPER * nteam consecutive blocks of the slice's (row, block) sequence,
 * nteam at a time, so each step of a group reads one contiguous stretch of the source.
 * Rows map as in ct_rows4 (get_rows.cl), mode CT_ROWS_CPY or CT_ROWS_SET. The source
 * (stype F32, F16 or BF16) has packed rows aligned to 16 bytes (F32) or 8; the destination
 * is 2-byte aligned; the local size is a multiple of 4, at most CT_QT_WG. Local memory
 * stays under 22 KB (IQ4_NL, NPER 1, staged), within every full-profile device's 32 KB. */
#define CT_QT_WG 256

#define CT_QUANT_ROWS_ARGS                                                                                \
    __global const uchar *s0, ulong s0_offs, __global const uchar *s1, ulong s1_offs, __global uchar *d, \
        ulong d_offs, long nkr, long nr1, ulong nb01, ulong nb02, ulong nb03, ulong nb1, ulong nb2,        \
        ulong nb3, int mode, int is64, long ne11, long ne12, ulong nb10, ulong nb11, ulong nb12, long lim, \
        int stype, __global int *err, int code

/* Elements 4c .. 4c+3 of the block at p. */
float4 ct_qt_load(const __global uchar *p, int c, int stype) {
    if (stype == CT_T_F32) return ((const __global float4 *)p)[c];
    const ushort4 h = ((const __global ushort4 *)p)[c];
    if (stype == CT_T_F16)
        return (float4)(ct_half_to_float(h.s0), ct_half_to_float(h.s1), ct_half_to_float(h.s2), ct_half_to_float(h.s3));
    return (float4)(ct_bf16_to_float(h.s0), ct_bf16_to_float(h.s1), ct_bf16_to_float(h.s2), ct_bf16_to_float(h.s3));
}

/* NPER blocks a team; AUX words of local memory a block (CT_QT_AUX_<t>). STAGED (0 or 1):
 * the blocks are written into local memory and the group then stores them with 16-byte
 * stores (each lane's few 2-byte stores would otherwise go to global memory one by one);
 * the encoder then guarantees a local size of at least 128 (the CT_QT_STORE_ROUNDS cover
 * the group's bytes), groups that lie inside one row (so every work-item of a group has
 * the same destination row and the same ok), and 16-byte aligned group spans. */
#define CT_QT_STORE_ROUNDS 3 /* 3 * 128 16-byte words >= 2 * 64 blocks of 34 bytes */

#define CT_QUANT_ROWS_KERNEL(NAME, T, TS, NPER, AUX, STAGED)                                              \
    __kernel void NAME(CT_QUANT_ROWS_ARGS) {                                                              \
        __local float2 part[(NPER) * (CT_QT_WG / 4) * 8];                                                 \
        __local uint aux[(NPER) * (CT_QT_WG / 4) * (AUX) + 1];                                            \
        __local uint4 outb[(STAGED) ? ((NPER) * (CT_QT_WG / 4) * (TS) + 15) / 16 : 1];                    \
        const int lid = get_local_id(0), lane = lid & 3, team = lid >> 2, nteam = get_local_size(0) >> 2; \
        const int ferr = mode != CT_ROWS_CPY && *(volatile __global int *)err != 0;                       \
        const ulong i2 = get_group_id(1), i3 = get_group_id(2), nblk = (ulong)nr1 * (ulong)nkr;          \
        const uint es = stype == CT_T_F32 ? 4u : 2u;                                                      \
        if (nblk == 0) return; /* uniform: no work-item reaches a barrier */                              \
        ulong j2 = 0, j3 = 0;                                                                             \
        if (mode != CT_ROWS_CPY) {                                                                        \
            ct_udivmod(i2, (ulong)ne11, &j2);                                                             \
            ct_udivmod(i3, (ulong)ne12, &j3);                                                             \
        }                                                                                                 \
        float4 xa[NPER], xb[NPER];                                                                        \
        __global uchar *y[NPER];                                                                          \
        int ok[NPER];                                                                                     \
        /* the source blocks and the indices are all loaded before any is tested (a block */           \
        /* past the end loads the last one and is not written), so no load waits for another */         \
        ulong blk[NPER], i1[NPER];                                                                        \
        long rd[NPER];                                                                                    \
        for (int k = 0; k < (NPER); k++) {                                                                \
            const ulong gb = ((ulong)get_group_id(0) * (NPER) + k) * (ulong)nteam + team;                 \
            ok[k] = gb < nblk && !ferr;                                                                   \
            i1[k] = ct_udivmod(min(gb, nblk - 1), (ulong)nkr, &blk[k]);                                   \
            const __global uchar *sp = s0 + s0_offs + i1[k] * nb01 + i2 * nb02 + i3 * nb03 + 32 * blk[k] * es; \
            xa[k] = ct_qt_load(sp, lane, stype);                                                          \
            xb[k] = ct_qt_load(sp, lane + 4, stype);                                                      \
            rd[k] = (long)i1[k];                                                                          \
            if (mode != CT_ROWS_CPY) {                                                                    \
                const __global uchar *ip = s1 + s1_offs + i1[k] * nb10 + j2 * nb11 + j3 * nb12;           \
                rd[k] = is64 ? (long)(((ulong)ct_ld_u32(ip + 4) << 32) | ct_ld_u32(ip))                   \
                             : (long)as_int(ct_ld_u32(ip));                                               \
            }                                                                                             \
        }                                                                                                 \
        for (int k = 0; k < (NPER); k++) {                                                                \
            ok[k] = ok[k] && (mode == CT_ROWS_CPY || (rd[k] >= 0 && rd[k] < lim));                        \
            y[k] = ok[k] ? d + d_offs + (ulong)rd[k] * nb1 + i2 * nb2 + i3 * nb3 + blk[k] * (TS) : d;     \
        }                                                                                                 \
        for (int k = 0; k < (NPER); k++) {                                                                \
            __local float2 *p = part + (k * nteam + team) * 8;                                            \
            p[lane] = ct_qt_stat_##T(xa[k]);                                                              \
            p[lane + 4] = ct_qt_stat_##T(xb[k]);                                                          \
        }                                                                                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                     \
        float4 s[NPER];                                                                                   \
        __local uchar *yl = (__local uchar *)outb;                                                        \
        for (int k = 0; k < (NPER); k++) {                                                                \
            s[k] = ct_qt_scale_##T(part + (k * nteam + team) * 8);                                        \
            __local uint *ax = aux + (k * nteam + team) * (AUX);                                          \
            if (STAGED) ct_qt_out_##T##_l(yl + (k * nteam + team) * (TS), lane, xa[k], xb[k], s[k], ax);  \
            else if (ok[k]) ct_qt_out_##T##_g(y[k], lane, xa[k], xb[k], s[k], ax);                        \
        }                                                                                                 \
        if ((AUX) > 0) barrier(CLK_LOCAL_MEM_FENCE);                                                      \
        for (int k = 0; k < (NPER); k++) {                                                                \
            __local const uint *ax = aux + (k * nteam + team) * (AUX);                                    \
            if (lane != 0) continue;                                                                      \
            if (STAGED) ct_qt_fin_##T##_l(yl + (k * nteam + team) * (TS), ax, s[k]);                      \
            else if (ok[k]) ct_qt_fin_##T##_g(y[k], ax, s[k]);                                            \
        }                                                                                                 \
        if (STAGED) barrier(CLK_LOCAL_MEM_FENCE);                                                        \
        if (STAGED && ok[0]) {                                                                            \
            /* the group's blocks are consecutive blocks of one row: block 0 is team 0's, k = 0 */       \
            const int nw = (NPER) * nteam * (TS) / 16;                                                    \
            __global uint4 *span = (__global uint4 *)(y[0] - (ulong)team * (TS));                         \
            for (int r = 0; r < CT_QT_STORE_ROUNDS; r++) {                                                \
                const int w = lid + r * (int)get_local_size(0);                                           \
                if (w < nw) span[w] = outb[w];                                                            \
            }                                                                                             \
        }                                                                                                 \
    }

CT_QUANT_ROWS_KERNEL(ct_quant_rows_q8_0, q8_0, 34, 2, CT_QT_AUX_q8_0, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_q4_0, q4_0, 18, 2, CT_QT_AUX_q4_0, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_q4_1, q4_1, 20, 2, CT_QT_AUX_q4_1, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_q5_0, q5_0, 22, 2, CT_QT_AUX_q5_0, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_q5_1, q5_1, 24, 2, CT_QT_AUX_q5_1, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_iq4_nl, iq4_nl, 18, 1, CT_QT_AUX_iq4_nl, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q8_0, q8_0, 34, 2, CT_QT_AUX_q8_0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q4_0, q4_0, 18, 2, CT_QT_AUX_q4_0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q4_1, q4_1, 20, 2, CT_QT_AUX_q4_1, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q5_0, q5_0, 22, 2, CT_QT_AUX_q5_0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q5_1, q5_1, 24, 2, CT_QT_AUX_q5_1, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_iq4_nl, iq4_nl, 18, 1, CT_QT_AUX_iq4_nl, 1)
