/* SET_ROWS: dst[:, src1[i, i02 % ne11, i03 % ne12], i02, i03] = convert(src0[:, i, i02, i03]).
 * ct_check_indices (get_rows.cl) runs first, or ct_quant_rows checks a short list itself
 * (ct_indices_ok); these kernels write nothing once the flag is set, and never a row whose
 * index is out of range. */

/* The tensors, ct_set_rows_args (kernel_args.h), the error flag. */
#define CT_SET_ROWS_ARGS                                                                                  \
    __global const uchar *s0, ulong s0_offs, __global const uchar *s1, ulong s1_offs, __global uchar *d, \
        ulong d_offs, const ct_set_rows_args a, __global int *err, int code

/* Rows batched along i01 (nrptg = local size 1); threads stride over the row's units. */
#define CT_SET_ROWS_PROLOGUE                                                                              \
    const long nk0 = a.nk0, ne01 = a.ne01, ne11 = a.ne11, ne12 = a.ne12, ne1 = a.ne1;                     \
    const ulong nb00 = a.nb00, nb01 = a.nb01, nb02 = a.nb02, nb03 = a.nb03;                               \
    const ulong nb10 = a.nb10, nb11 = a.nb11, nb12 = a.nb12, nb1 = a.nb1, nb2 = a.nb2, nb3 = a.nb3;       \
    const int is64 = a.is64, src_f16 = a.src_f16, src_aligned = a.src_aligned, dst_aligned = a.dst_aligned; \
    const long i01 = (long)get_group_id(0) * (long)get_local_size(1) + (long)get_local_id(1);            \
    if (i01 >= ne01) return;                                                                              \
    if (*(volatile __global int *)err != 0) return;                                                       \
    const ulong i02 = get_group_id(1), i03 = get_group_id(2);                                            \
    const __global uchar *ip = s1 + s1_offs + (ulong)i01 * nb10 + (i02 % (ulong)ne11) * nb11 +             \
                               (i03 % (ulong)ne12) * nb12;                                                \
    const long r = ct_ld_index(ip, is64);                                                                 \
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
 * work-items, each loading 4 floats from each half of the block (quant.cl's ct_qt_*).
 * Teams come in slices of 8 (32 work-items, a warp on NVIDIA): slice g of the grid takes
 * NPER * 8 consecutive blocks of the slice's (row, block) sequence, 8 at a time, so each
 * step of a slice reads one contiguous stretch of the source. Rows map as in ct_rows4
 * (get_rows.cl), mode CT_ROWS_CPY or CT_ROWS_SET. The source (stype F32, F16 or BF16) has
 * packed rows aligned to 16 bytes (F32) or 8; the destination is 2-byte aligned; the
 * local size is a multiple of 32, at most CT_QT_WG_<t>. Local memory stays under 25 KB (the
 * wide kernels and IQ4_NL without shuffles), within every full-profile device's 32 KB.
 *
 * The lanes of a team exchange statistics (and Q5's qh bits) in two butterfly steps. On
 * NVIDIA (PTX) they are warp shuffles and a slice's local memory needs only a warp
 * barrier, so the kernel has no work-group barrier; elsewhere the exchange goes through
 * local memory and every sync is a work-group barrier (every work-item reaches each:
 * blocks past the end are quantized from the last block and not written). */
/* CT_QT_WG, CT_QT_SLICE (work-items of a slice: 8 teams), CT_QT_NPER (blocks a team) and
 * CT_QT_NPER_WIDE (ct_quant_rows_wide_<t>, for large jobs) come from kernel_args.h. */
/* The largest local size by type: IQ4_NL's sums take 33 float2 of local memory a block. */
#define CT_QT_WG_q8_0 CT_QT_WG
#define CT_QT_WG_q4_0 CT_QT_WG
#define CT_QT_WG_q4_1 CT_QT_WG
#define CT_QT_WG_q5_0 CT_QT_WG
#define CT_QT_WG_q5_1 CT_QT_WG
#define CT_QT_WG_iq4_nl CT_QT_WG_IQ4_NL
/* Whether lanes 0 and 1 finalize a team's two blocks (else lane 0 both): only IQ4_NL's
 * sums are worth it (picked by a loop over k for every type, the arrays went to
 * the stack and Q5's kernels lost a third). */
#define CT_QT_FIN_SPREAD_q8_0 0
#define CT_QT_FIN_SPREAD_q4_0 0
#define CT_QT_FIN_SPREAD_q4_1 0
#define CT_QT_FIN_SPREAD_q5_0 0
#define CT_QT_FIN_SPREAD_q5_1 0
#define CT_QT_FIN_SPREAD_iq4_nl 1

#if CT_HAS_NV_WARP /* common.cl's warp shuffle and barrier */
#define CT_QT_SHFL 1
#define CT_QT_SLICE_SYNC() CT_NV_WARP_SYNC()
#else
#define CT_QT_SHFL 0
#define CT_QT_SLICE_SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#endif

/* O[k] = V[k] (k < NPER, uint4 arrays) of work-item lid ^ M, in the words WORDS names
 * (1: .s0 and .s2, 2: .s1 and .s3; the others keep V's): by shuffles, or through the
 * local array XBUF (its first barrier orders the previous step's reads). */
#if CT_QT_SHFL
#define CT_QT_XCHG(O, V, M, NPER, XBUF, WORDS)                                                            \
    for (int k_ = 0; k_ < (NPER); k_++) {                                                                 \
        O[k_] = V[k_];                                                                                    \
        if ((WORDS) & 1) {                                                                                \
            O[k_].s0 = ct_nv_shfl_xor(V[k_].s0, M);                                                       \
            O[k_].s2 = ct_nv_shfl_xor(V[k_].s2, M);                                                       \
        }                                                                                                 \
        if ((WORDS) & 2) {                                                                                \
            O[k_].s1 = ct_nv_shfl_xor(V[k_].s1, M);                                                       \
            O[k_].s3 = ct_nv_shfl_xor(V[k_].s3, M);                                                       \
        }                                                                                                 \
    }
#else
#define CT_QT_XCHG(O, V, M, NPER, XBUF, WORDS)                                                            \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                         \
    for (int k_ = 0; k_ < (NPER); k_++) XBUF[k_ * (int)get_local_size(0) + lid] = V[k_];                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                         \
    for (int k_ = 0; k_ < (NPER); k_++) {                                                                 \
        const uint4 p_ = XBUF[k_ * (int)get_local_size(0) + (lid ^ (M))];                                 \
        O[k_] = V[k_];                                                                                    \
        if ((WORDS) & 1) O[k_].s02 = p_.s02;                                                              \
        if ((WORDS) & 2) O[k_].s13 = p_.s13;                                                              \
    }
#endif

/* The tensors, ct_rows_args (kernel_args.h: ne0 counts 32-blocks, type is the source's),
 * the error flag. */
#define CT_QUANT_ROWS_ARGS                                                                                \
    __global const uchar *s0, ulong s0_offs, __global const uchar *s1, ulong s1_offs, __global uchar *d,  \
        ulong d_offs, const ct_rows_args a, __global int *err, int code

/* ct_rows_args' fields as the kernel bodies name them. */
#define CT_QUANT_ROWS_UNPACK                                                                              \
    const long nkr = a.ne0, nr1 = a.nr1, ne11 = a.ne11, ne12 = a.ne12, lim = a.lim;                       \
    const ulong nb01 = a.nb01, nb02 = a.nb02, nb03 = a.nb03, nb1 = a.nb1, nb2 = a.nb2, nb3 = a.nb3;      \
    const ulong nb10 = a.nb10, nb11 = a.nb11, nb12 = a.nb12;                                              \
    const int mode = a.mode, is64 = a.is64, stype = a.type;

/* Elements 4c .. 4c+3 of the block at p. */
float4 ct_qt_load(const __global uchar *p, int c, int stype) {
    if (stype == CT_T_F32) return ((const __global float4 *)p)[c];
    const ushort4 h = ((const __global ushort4 *)p)[c];
    if (stype == CT_T_F16)
        return (float4)(ct_half_to_float(h.s0), ct_half_to_float(h.s1), ct_half_to_float(h.s2), ct_half_to_float(h.s3));
    return (float4)(ct_bf16_to_float(h.s0), ct_bf16_to_float(h.s1), ct_bf16_to_float(h.s2), ct_bf16_to_float(h.s3));
}

/* NPER blocks a team; AUX float2 of local memory a block (CT_QT_AUX_<t>); QH: the type
 * has Q5's qh. STAGED (0 or 1): the blocks are written into local memory and the slice
 * then stores them with 16-byte stores (each lane's few 2-byte stores would otherwise go
 * to global memory one by one); the encoder then guarantees that a slice's blocks lie
 * inside one row (nkr % (8 * NPER) == 0: its work-items share the destination row and
 * ok) and 16-byte aligned slice spans. */
#define CT_QT_SLICE_WORDS(NPER, TS) ((8 * (NPER) * (TS) + 15) / 16)

#define CT_QUANT_ROWS_KERNEL(NAME, T, TS, NPER, AUX, QH, STAGED)                                          \
    __kernel void NAME(CT_QUANT_ROWS_ARGS) {                                                              \
        CT_QUANT_ROWS_UNPACK                                                                              \
        __local float2 aux[(NPER) * (CT_QT_WG_##T / 4) * (AUX) + 1];                                      \
        __local uint tab[CT_QT_TAB_##T + 1];                                                              \
        __local uint4 outb[(STAGED) ? CT_QT_WG_##T / CT_QT_SLICE * CT_QT_SLICE_WORDS(NPER, TS) : 1];      \
        __local uint4 xbuf[CT_QT_SHFL ? 1 : (NPER) * CT_QT_WG_##T];                                       \
        const int lid = get_local_id(0), lane = lid & 3, team = lid >> 2, tslice = team & 7;              \
        const int slice = lid / CT_QT_SLICE;                                                              \
        const ulong gslice = (ulong)get_group_id(0) * (get_local_size(0) / CT_QT_SLICE) + slice;          \
        const int ferr = mode != CT_ROWS_CPY &&                                                           \
                         (*(volatile __global int *)err != 0 ||                                           \
                          (a.check_all &&                                                                 \
                           !ct_indices_ok(s1 + s1_offs, nr1, ne11, ne12, nb10, nb11, nb12, is64, lim, err, code))); \
        const ulong i2 = get_group_id(1), i3 = get_group_id(2), nblk = (ulong)nr1 * (ulong)nkr;           \
        const uint es = stype == CT_T_F32 ? 4u : 2u;                                                      \
        if (nblk == 0) return; /* uniform: no work-item reaches a barrier */                              \
        if (CT_QT_TAB_##T > 0) {                                                                          \
            for (int i = lid; i < CT_QT_TAB_##T; i += (int)get_local_size(0)) tab[i] = ct_iq4nl_tab_entry(i - 128); \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
        }                                                                                                 \
        ulong j2 = 0, j3 = 0;                                                                             \
        if (mode != CT_ROWS_CPY) {                                                                        \
            ct_udivmod(i2, (ulong)ne11, &j2);                                                             \
            ct_udivmod(i3, (ulong)ne12, &j3);                                                             \
        }                                                                                                 \
        float4 xa[NPER], xb[NPER];                                                                        \
        __global uchar *y[NPER];                                                                          \
        int ok[NPER];                                                                                     \
        /* the source blocks and the indices are all loaded before any is tested (a block */              \
        /* past the end loads the last one and is not written), so no load waits for another */           \
        ulong blk[NPER], i1[NPER];                                                                        \
        long rd[NPER];                                                                                    \
        for (int k = 0; k < (NPER); k++) {                                                                \
            const ulong gb = (gslice * (NPER) + k) * 8 + tslice;                                          \
            ok[k] = gb < nblk && !ferr;                                                                   \
            i1[k] = ct_udivmod(min(gb, nblk - 1), (ulong)nkr, &blk[k]);                                   \
            const __global uchar *sp = s0 + s0_offs + i1[k] * nb01 + i2 * nb02 + i3 * nb03 + 32 * blk[k] * es; \
            xa[k] = ct_qt_load(sp, lane, stype);                                                          \
            xb[k] = ct_qt_load(sp, lane + 4, stype);                                                      \
            rd[k] = (long)i1[k];                                                                          \
            if (mode != CT_ROWS_CPY) {                                                                    \
                const __global uchar *ip = s1 + s1_offs + i1[k] * nb10 + j2 * nb11 + j3 * nb12;           \
                rd[k] = ct_ld_index(ip, is64);                                                            \
            }                                                                                             \
        }                                                                                                 \
        for (int k = 0; k < (NPER); k++) {                                                                \
            ok[k] = ok[k] && (mode == CT_ROWS_CPY || (rd[k] >= 0 && rd[k] < lim));                        \
            y[k] = ok[k] ? d + d_offs + (ulong)rd[k] * nb1 + i2 * nb2 + i3 * nb3 + blk[k] * (TS) : d;     \
        }                                                                                                 \
        /* statistics of runs (lane, lane + 4), joined with the team's in element order */                \
        uint4 st[NPER], o[NPER];                                                                          \
        for (int k = 0; k < (NPER); k++)                                                                  \
            st[k] = (uint4)(as_uint2(ct_qt_stat_##T(xa[k])), as_uint2(ct_qt_stat_##T(xb[k])));            \
        for (int m = 1; m <= 2; m <<= 1) {                                                                \
            CT_QT_XCHG(o, st, m, NPER, xbuf, CT_QT_XWORDS_##T)                                            \
            const bool later = (lane & m) != 0; /* this lane's runs follow the partner's */               \
            for (int k = 0; k < (NPER); k++) {                                                            \
                o[k] = (uint4)(as_uint2(ct_qt_rebuild_##T(as_float2(o[k].s01))),                          \
                               as_uint2(ct_qt_rebuild_##T(as_float2(o[k].s23))));                         \
                const uint4 e = later ? o[k] : st[k], l = later ? st[k] : o[k];                           \
                st[k] = (uint4)(as_uint2(ct_qt_join_##T(as_float2(e.s01), as_float2(l.s01))),             \
                                as_uint2(ct_qt_join_##T(as_float2(e.s23), as_float2(l.s23))));            \
            }                                                                                             \
        }                                                                                                 \
        float4 s[NPER];                                                                                   \
        uint4 qh[NPER];                                                                                   \
        __local uchar *yl = (__local uchar *)outb + ((STAGED) ? slice * CT_QT_SLICE_WORDS(NPER, TS) * 16 : 0); \
        for (int k = 0; k < (NPER); k++) {                                                                \
            s[k] = ct_qt_scale_##T(ct_qt_join_##T(as_float2(st[k].s01), as_float2(st[k].s23)));           \
            __local float2 *ax = aux + (k * (int)(get_local_size(0) >> 2) + team) * (AUX);                \
            qh[k] = (uint4)(0u, 0u, 0u, 0u);                                                              \
            if (STAGED) qh[k].s0 = ct_qt_out_##T##_l(yl + (k * 8 + tslice) * (TS), lane, xa[k], xb[k], s[k], ax, tab); \
            else if (ok[k]) qh[k].s0 = ct_qt_out_##T##_g(y[k], lane, xa[k], xb[k], s[k], ax, tab);        \
        }                                                                                                 \
        if (QH) { /* the team's qh bits, OR-ed */                                                         \
            for (int m = 1; m <= 2; m <<= 1) {                                                            \
                CT_QT_XCHG(o, qh, m, NPER, xbuf, 1)                                                       \
                for (int k = 0; k < (NPER); k++) qh[k].s0 |= o[k].s0;                                     \
            }                                                                                             \
        }                                                                                                 \
        if ((AUX) > 0) CT_QT_SLICE_SYNC();                                                                \
        if (CT_QT_FIN_SPREAD_##T && (NPER) == 2) {                                                        \
            /* lanes 0 and 1 finalize blocks 0 and 1 side by side (IQ4_NL: 64 serial adds a block; */      \
            /* picked by selects: a loop over k put s[] and y[] on the stack) */                            \
            if (lane < 2) {                                                                               \
                const int kf = lane;                                                                      \
                __local const float2 *ax = aux + (kf * (int)(get_local_size(0) >> 2) + team) * (AUX);     \
                const float4 sf = kf ? s[(NPER) - 1] : s[0];                                              \
                const uint qf = kf ? qh[(NPER) - 1].s0 : qh[0].s0;                                        \
                if (STAGED) ct_qt_fin_##T##_l(yl + (kf * 8 + tslice) * (TS), ax, sf, qf);                 \
                else if (kf ? ok[(NPER) - 1] : ok[0])                                                     \
                    ct_qt_fin_##T##_g(kf ? y[(NPER) - 1] : y[0], ax, sf, qf);                             \
            }                                                                                             \
        } else {                                                                                          \
            for (int k = 0; k < (NPER); k++) {                                                            \
                __local const float2 *ax = aux + (k * (int)(get_local_size(0) >> 2) + team) * (AUX);      \
                if (lane != 0) continue;                                                                  \
                if (STAGED) ct_qt_fin_##T##_l(yl + (k * 8 + tslice) * (TS), ax, s[k], qh[k].s0);          \
                else if (ok[k]) ct_qt_fin_##T##_g(y[k], ax, s[k], qh[k].s0);                              \
            }                                                                                             \
        }                                                                                                 \
        if (STAGED) {                                                                                     \
            CT_QT_SLICE_SYNC();                                                                           \
            if (ok[0]) {                                                                                  \
                /* the slice's blocks are consecutive blocks of one row: the first is team 0's, k = 0 */  \
                __global uint4 *span = (__global uint4 *)(y[0] - (ulong)tslice * (TS));                   \
                const __local uint4 *ob = outb + slice * CT_QT_SLICE_WORDS(NPER, TS);                     \
                for (int w = lid & (CT_QT_SLICE - 1); w < 8 * (NPER) * (TS) / 16; w += CT_QT_SLICE)       \
                    span[w] = ob[w];                                                                      \
            }                                                                                             \
        }                                                                                                 \
    }

CT_QUANT_ROWS_KERNEL(ct_quant_rows_q8_0, q8_0, 34, CT_QT_NPER, CT_QT_AUX_q8_0, 0, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_q4_0, q4_0, 18, CT_QT_NPER, CT_QT_AUX_q4_0, 0, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_q4_1, q4_1, 20, CT_QT_NPER, CT_QT_AUX_q4_1, 0, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_q5_0, q5_0, 22, CT_QT_NPER, CT_QT_AUX_q5_0, 1, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_q5_1, q5_1, 24, CT_QT_NPER, CT_QT_AUX_q5_1, 1, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_iq4_nl, iq4_nl, 18, CT_QT_NPER, CT_QT_AUX_iq4_nl, 0, 0)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q8_0, q8_0, 34, CT_QT_NPER, CT_QT_AUX_q8_0, 0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q4_0, q4_0, 18, CT_QT_NPER, CT_QT_AUX_q4_0, 0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q4_1, q4_1, 20, CT_QT_NPER, CT_QT_AUX_q4_1, 0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q5_0, q5_0, 22, CT_QT_NPER, CT_QT_AUX_q5_0, 1, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_q5_1, q5_1, 24, CT_QT_NPER, CT_QT_AUX_q5_1, 1, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_staged_iq4_nl, iq4_nl, 18, CT_QT_NPER, CT_QT_AUX_iq4_nl, 0, 1)
/* large jobs: more blocks a team spread the per-work-item costs (indices, addresses); on the
 * H200, 16384 rows of 4096 into Q8_0 went from 64% to 70% of copy, while a 4096 x 4096 CPY
 * (fewer waves of work-groups) lost 1-3 points */
CT_QUANT_ROWS_KERNEL(ct_quant_rows_wide_q8_0, q8_0, 34, CT_QT_NPER_WIDE, CT_QT_AUX_q8_0, 0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_wide_q4_0, q4_0, 18, CT_QT_NPER_WIDE, CT_QT_AUX_q4_0, 0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_wide_q4_1, q4_1, 20, CT_QT_NPER_WIDE, CT_QT_AUX_q4_1, 0, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_wide_q5_0, q5_0, 22, CT_QT_NPER_WIDE, CT_QT_AUX_q5_0, 1, 1)
CT_QUANT_ROWS_KERNEL(ct_quant_rows_wide_q5_1, q5_1, 24, CT_QT_NPER_WIDE, CT_QT_AUX_q5_1, 1, 1)
