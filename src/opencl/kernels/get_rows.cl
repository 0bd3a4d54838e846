/* GET_ROWS: dst[:, i10, i11, i12] = dequant(src0[:, src1[i10, i11, i12], i11, i12]),
 * and the index check that SET_ROWS shares. */

/* The index (I32 or I64) at p. */
long ct_ld_index(const __global uchar *p, int is64) {
    return is64 ? (long)(((ulong)ct_ld_u32(p + 4) << 32) | ct_ld_u32(p)) : (long)as_int(ct_ld_u32(p));
}

/* Raises the flag when an index (I32 or I64) lies outside [0, limit). It runs
 * before the op's kernel, which then writes nothing once the flag is set. */
__kernel void ct_check_indices(__global const uchar *idx, ulong idx_offs, long ne0, ulong nb0, ulong nb1, ulong nb2,
                               int is64, long limit, __global int *err, int code) {
    const long i0 = get_global_id(0);
    if (i0 >= ne0) return;
    const __global uchar *p = idx + idx_offs + (ulong)i0 * nb0 + get_global_id(1) * nb1 + get_global_id(2) * nb2;
    const long v = ct_ld_index(p, is64);
    if (v < 0 || v >= limit) CT_RAISE_ERROR(err, code);
}

/* Whether every index of a list of ne0 x ne1 x ne2 lies in [0, limit); raises the flag when
 * one does not. For a short list (ct_rows_args.check_all) each work-item of a row kernel
 * checks all of it, so every row is written or none is, as after ct_check_indices, without
 * that kernel's launch. */
int ct_indices_ok(const __global uchar *idx, long ne0, long ne1, long ne2, ulong nb0, ulong nb1, ulong nb2, int is64,
                  long limit, __global int *err, int code) {
    for (long i2 = 0; i2 < ne2; i2++)
        for (long i1 = 0; i1 < ne1; i1++)
            for (long i0 = 0; i0 < ne0; i0++) {
                const long v = ct_ld_index(idx + (ulong)i0 * nb0 + (ulong)i1 * nb1 + (ulong)i2 * nb2, is64);
                if (v < 0 || v >= limit) {
                    CT_RAISE_ERROR(err, code);
                    return 0;
                }
            }
    return 1;
}

void ct_st_f32(__global uchar *p, float v, int aligned) {
    if (aligned) *(__global float *)p = v;
    else ct_st_u32(p, as_uint(v));
}

/* The row this work-item copies (groups of nrptg rows along i10): NULL when none,
 * or when an index is bad (the check kernel has raised the flag then). */
#define CT_GET_ROWS_PROLOGUE                                                                              \
    const long ne00 = a.ne00, ne01 = a.ne01, ne10 = a.ne10;                                               \
    const ulong nb00 = a.nb00, nb01 = a.nb01, nb02 = a.nb02, nb03 = a.nb03;                               \
    const ulong nb10 = a.nb10, nb11 = a.nb11, nb12 = a.nb12, nb0 = a.nb0, nb1 = a.nb1, nb2 = a.nb2;       \
    const ulong nb3 = a.nb3;                                                                              \
    const int src_aligned = a.src_aligned, dst_aligned = a.dst_aligned;                                   \
    const long i10 = (long)get_group_id(0) * (long)get_local_size(1) + (long)get_local_id(1);            \
    if (i10 >= ne10) return;                                                                              \
    if (*(volatile __global int *)err != 0) return;                                                       \
    const ulong i11 = get_group_id(1), i12 = get_group_id(2);                                            \
    const long r = as_int(ct_ld_u32(s1 + s1_offs + (ulong)i10 * nb10 + i11 * nb11 + i12 * nb12));       \
    if (r < 0 || r >= ne01) return;                                                                       \
    const __global uchar *src = s0 + s0_offs + (ulong)r * nb01 + i11 * nb02 + i12 * nb03;                \
    __global uchar *dst = d + d_offs + (ulong)i10 * nb1 + i11 * nb2 + i12 * nb3;                         \
    const long nth = get_local_size(0);

/* The tensors, ct_get_rows_args (kernel_args.h), the error flag. */
#define CT_GET_ROWS_ARGS                                                                                  \
    __global const uchar *s0, ulong s0_offs, __global const uchar *s1, ulong s1_offs, __global uchar *d, \
        ulong d_offs, const ct_get_rows_args a, __global int *err, int code

/* F32 and I32: the bits are copied. */
__kernel void ct_get_rows_x32(CT_GET_ROWS_ARGS) {
    CT_GET_ROWS_PROLOGUE
    for (long j = get_local_id(0); j < ne00; j += nth) {
        const __global uchar *sp = src + (ulong)j * nb00;
        __global uchar *dp = dst + (ulong)j * nb0;
        if (src_aligned && dst_aligned) *(__global uint *)dp = *(const __global uint *)sp;
        else ct_st_u32(dp, ct_ld_u32(sp));
    }
}

__kernel void ct_get_rows_f16(CT_GET_ROWS_ARGS) {
    CT_GET_ROWS_PROLOGUE
    for (long j = get_local_id(0); j < ne00; j += nth)
        ct_st_f32(dst + (ulong)j * nb0, ct_half_to_float(ct_ld_u16(src + (ulong)j * nb00)), dst_aligned);
}

__kernel void ct_get_rows_bf16(CT_GET_ROWS_ARGS) {
    CT_GET_ROWS_PROLOGUE
    for (long j = get_local_id(0); j < ne00; j += nth)
        ct_st_f32(dst + (ulong)j * nb0, ct_bf16_to_float(ct_ld_u16(src + (ulong)j * nb00)), dst_aligned);
}

/* Block types: blocks packed along dim 0 (nb00 is the block size in bytes). A work-item
 * dequantizes 16 elements at a time (the block's shared fields read once, not per element)
 * and stores them with 16-byte stores where dst is packed and aligned. */
#define CT_GET_ROWS_BLOCK(NAME, DEQ16, BS)                                                                \
    __kernel void NAME(CT_GET_ROWS_ARGS) {                                                                \
        CT_GET_ROWS_PROLOGUE                                                                              \
        const int wide = nb0 == 4 && ((ulong)dst & 15) == 0;                                             \
        for (long j = get_local_id(0); j < ne00 / 16; j += nth) {                                         \
            float y[16];                                                                                  \
            DEQ16(src + (ulong)(j / ((BS) / 16)) * nb00, (int)(j % ((BS) / 16)), y);                      \
            __global uchar *dp = dst + (ulong)(16 * j) * nb0;                                             \
            if (wide) {                                                                                   \
                for (int t = 0; t < 4; t++) ((__global float4 *)dp)[t] = vload4(t, y);                   \
            } else {                                                                                      \
                for (int t = 0; t < 16; t++) ct_st_f32(dp + (ulong)t * nb0, y[t], dst_aligned);           \
            }                                                                                             \
        }                                                                                                 \
    }

CT_GET_ROWS_BLOCK(ct_get_rows_q4_0, ct_deq16_q4_0, 32)
CT_GET_ROWS_BLOCK(ct_get_rows_q4_1, ct_deq16_q4_1, 32)
CT_GET_ROWS_BLOCK(ct_get_rows_q5_0, ct_deq16_q5_0, 32)
CT_GET_ROWS_BLOCK(ct_get_rows_q5_1, ct_deq16_q5_1, 32)
CT_GET_ROWS_BLOCK(ct_get_rows_q8_0, ct_deq16_q8_0, 32)
CT_GET_ROWS_BLOCK(ct_get_rows_iq4_nl, ct_deq16_iq4_nl, 32)
CT_GET_ROWS_BLOCK(ct_get_rows_q2_K, ct_deq16_q2_K, 256)
CT_GET_ROWS_BLOCK(ct_get_rows_q3_K, ct_deq16_q3_K, 256)
CT_GET_ROWS_BLOCK(ct_get_rows_q4_K, ct_deq16_q4_K, 256)
CT_GET_ROWS_BLOCK(ct_get_rows_q5_K, ct_deq16_q5_K, 256)
CT_GET_ROWS_BLOCK(ct_get_rows_q6_K, ct_deq16_q6_K, 256)
CT_GET_ROWS_BLOCK(ct_get_rows_q8_K, ct_deq16_q8_K, 256)
CT_GET_ROWS_BLOCK(ct_get_rows_iq4_xs, ct_deq16_iq4_xs, 256)

/* ---- row kernels shared by GET_ROWS, SET_ROWS and CPY -----------------------------
 *
 * ct_rows4_<t> (and ct_rows8_<t> for float rows): rows of ne0 elements of type t converted
 * to dtype (F32, F16 or BF16), 4 elements a unit. A work-item takes nper (at most 4, or 8
 * for ct_rows8) units a work-group row
 * (nth units) apart, so neighbouring work-items read and write neighbouring vectors, and
 * issues all its loads before its stores. Work-groups hold nrptg rows (local size 1), or
 * a segment of nth * nper units of a long row (nseg segments a row). Row i1 of slice
 * (i2, i3), by mode:
 *   CT_ROWS_CPY  source row i1, destination row i1 (nb1.. describe the flat order);
 *   CT_ROWS_GET  source row idx[i1, i2, i3] (I32), destination row i1;
 *   CT_ROWS_SET  source row i1, destination row idx[i1, i2 % ne11, i3 % ne12].
 * A row whose index lies outside [0, lim) is not written, nor any once the flag is set, nor
 * any with check_all when one index of the list is bad.
 * The encoder guarantees packed rows, row bases aligned to the vector width (16 bytes
 * for F32, 8 for F16/BF16, 2 for blocks), and whole blocks; F32 to F32 copies bits. */
/* CT_ROWS_CPY, CT_ROWS_GET, CT_ROWS_SET and CT_ROWS_NPER (ct_rows8 and ct_rows_staged;
 * ct_rows4 takes at most 4) come from kernel_args.h. */

/* The tensors, ct_rows_args (kernel_args.h; type is the destination's), the error flag. */
#define CT_ROWS_ARGS                                                                                      \
    __global const uchar *s0, ulong s0_offs, __global const uchar *s1, ulong s1_offs, __global uchar *d, \
        ulong d_offs, const ct_rows_args a, __global int *err, int code

/* ct_rows_args' fields as the kernel bodies name them. */
#define CT_ROWS_UNPACK                                                                                    \
    const long ne0 = a.ne0, nr1 = a.nr1, nseg = a.nseg, ne11 = a.ne11, ne12 = a.ne12, lim = a.lim;       \
    const ulong nb01 = a.nb01, nb02 = a.nb02, nb03 = a.nb03, nb1 = a.nb1, nb2 = a.nb2, nb3 = a.nb3;      \
    const ulong nb10 = a.nb10, nb11 = a.nb11, nb12 = a.nb12;                                              \
    const int nper = a.nper, mode = a.mode, is64 = a.is64, dtype = a.type;

#define CT_ROWS_PROLOGUE                                                                                  \
    CT_ROWS_UNPACK                                                                                        \
    ulong seg;                                                                                            \
    const ulong rg = ct_udivmod(get_group_id(0), (ulong)nseg, &seg);                                      \
    const long i1 = (long)(rg * get_local_size(1) + get_local_id(1));                                     \
    if (i1 >= nr1) return;                                                                                \
    const ulong i2 = get_group_id(1), i3 = get_group_id(2);                                              \
    long rs = i1, rd = i1;                                                                                \
    if (mode != CT_ROWS_CPY) {                                                                            \
        ulong j2, j3;                                                                                     \
        ct_udivmod(i2, (ulong)ne11, &j2);                                                                 \
        ct_udivmod(i3, (ulong)ne12, &j3);                                                                 \
        const __global uchar *ip = s1 + s1_offs + (ulong)i1 * nb10 + j2 * nb11 + j3 * nb12;               \
        if (a.check_all && !ct_indices_ok(s1 + s1_offs, nr1, ne11, ne12, nb10, nb11, nb12, is64, lim, err, code)) \
            return; /* the same verdict in every work-item */                                             \
        /* the flag and the index are loaded together, then tested: one memory latency */               \
        /* before the row's loads, not two */                                                             \
        const int bad = *(volatile __global int *)err;                                                    \
        const long r = ct_ld_index(ip, is64);                                                             \
        if (bad != 0 || r < 0 || r >= lim) return;                                                        \
        if (mode == CT_ROWS_GET) rs = r;                                                                  \
        else rd = r;                                                                                      \
    }                                                                                                     \
    const __global uchar *src = s0 + s0_offs + (ulong)rs * nb01 + i2 * nb02 + i3 * nb03;                 \
    __global uchar *dst = d + d_offs + (ulong)rd * nb1 + i2 * nb2 + i3 * nb3;                            \
    const long nth = get_local_size(0);                                                                   \
    const long u0 = (long)seg * nth * nper + (long)get_local_id(0);                                      \
    const long nfull = ne0 / 4;

/* Unit u (float bits) into a dtype row; element e alone, for a row's last partial unit. */
void ct_rows_st4(__global uchar *dst, long u, uint4 v, int dtype) {
    if (dtype == CT_T_F32) {
        ((__global uint4 *)dst)[u] = v;
    } else if (dtype == CT_T_F16) {
        ((__global ushort4 *)dst)[u] =
            (ushort4)(ct_float_to_half(as_float(v.s0)), ct_float_to_half(as_float(v.s1)),
                      ct_float_to_half(as_float(v.s2)), ct_float_to_half(as_float(v.s3)));
    } else {
        ((__global ushort4 *)dst)[u] =
            (ushort4)(ct_float_to_bf16(as_float(v.s0)), ct_float_to_bf16(as_float(v.s1)),
                      ct_float_to_bf16(as_float(v.s2)), ct_float_to_bf16(as_float(v.s3)));
    }
}

void ct_rows_st1(__global uchar *dst, long e, uint v, int dtype) {
    if (dtype == CT_T_F32) ((__global uint *)dst)[e] = v;
    else if (dtype == CT_T_F16) ((__global ushort *)dst)[e] = ct_float_to_half(as_float(v));
    else ((__global ushort *)dst)[e] = ct_float_to_bf16(as_float(v));
}

/* LD4 loads unit u as RAW (the row's own bits), CVT(raw, u) makes float bits of it:
 * all of a work-item's loads are issued before any conversion or store waits on one.
 * NSTEP (4 or 8) steps are written out, nper <= NSTEP of them taken: as loops over an
 * array v[nper], NVIDIA's compiler kept the F16/BF16 and block kernels' v on the stack
 * (ptxas: 32-64 bytes), and each load's stack store waited for the load. ct_rows8_<t>
 * (NSTEP 8) is for large jobs: its registers cost ct_rows4's share of jobs with 4 units
 * a work-item. */
#define CT_ROWS_LD_STEP(k, NSTEP, RAW, LD4)                                                               \
    RAW v##k = (RAW)(0);                                                                                  \
    if ((k) < (NSTEP) && (k) < nper && u0 + (k) * nth < nfull) v##k = LD4(src, u0 + (k) * nth);

#define CT_ROWS_ST_STEP(k, NSTEP, CVT, LD1)                                                               \
    if ((k) < (NSTEP) && (k) < nper) {                                                                    \
        const long u = u0 + (k) * nth;                                                                    \
        if (u < nfull) ct_rows_st4(dst, u, CVT(v##k, u), dtype);                                          \
        else if (u == nfull)                                                                              \
            for (long e = 4 * u; e < ne0; e++) ct_rows_st1(dst, e, LD1(src, e), dtype);                   \
    }

#define CT_ROWS_KERNEL(NAME, NSTEP, RAW, LD4, CVT, LD1)                                                  \
    __kernel void NAME(CT_ROWS_ARGS) {                                                                    \
        CT_ROWS_PROLOGUE                                                                                  \
        CT_ROWS_LD_STEP(0, NSTEP, RAW, LD4)                                                               \
        CT_ROWS_LD_STEP(1, NSTEP, RAW, LD4)                                                               \
        CT_ROWS_LD_STEP(2, NSTEP, RAW, LD4)                                                               \
        CT_ROWS_LD_STEP(3, NSTEP, RAW, LD4)                                                               \
        CT_ROWS_LD_STEP(4, NSTEP, RAW, LD4)                                                               \
        CT_ROWS_LD_STEP(5, NSTEP, RAW, LD4)                                                               \
        CT_ROWS_LD_STEP(6, NSTEP, RAW, LD4)                                                               \
        CT_ROWS_LD_STEP(7, NSTEP, RAW, LD4)                                                               \
        CT_ROWS_ST_STEP(0, NSTEP, CVT, LD1)                                                               \
        CT_ROWS_ST_STEP(1, NSTEP, CVT, LD1)                                                               \
        CT_ROWS_ST_STEP(2, NSTEP, CVT, LD1)                                                               \
        CT_ROWS_ST_STEP(3, NSTEP, CVT, LD1)                                                               \
        CT_ROWS_ST_STEP(4, NSTEP, CVT, LD1)                                                               \
        CT_ROWS_ST_STEP(5, NSTEP, CVT, LD1)                                                               \
        CT_ROWS_ST_STEP(6, NSTEP, CVT, LD1)                                                               \
        CT_ROWS_ST_STEP(7, NSTEP, CVT, LD1)                                                               \
    }

uint4 ct_rows_ld4_f32(const __global uchar *s, long u) { return ((const __global uint4 *)s)[u]; }
uint ct_rows_ld1_f32(const __global uchar *s, long e) { return ((const __global uint *)s)[e]; }
uint4 ct_rows_same(uint4 v, long u) { return v; }

ushort4 ct_rows_ld4_u16(const __global uchar *s, long u) { return ((const __global ushort4 *)s)[u]; }
uint4 ct_rows_cvt_f16(ushort4 h, long u) {
    return (uint4)(as_uint(ct_half_to_float(h.s0)), as_uint(ct_half_to_float(h.s1)), as_uint(ct_half_to_float(h.s2)),
                   as_uint(ct_half_to_float(h.s3)));
}
uint ct_rows_ld1_f16(const __global uchar *s, long e) {
    return as_uint(ct_half_to_float(((const __global ushort *)s)[e]));
}

uint4 ct_rows_cvt_bf16(ushort4 h, long u) { return convert_uint4(h) << 16; }
uint ct_rows_ld1_bf16(const __global uchar *s, long e) {
    return as_uint(ct_bf16_to_float(((const __global ushort *)s)[e]));
}

/* Block rows have no partial unit (whole blocks of 32 or 256). */
uint ct_rows_ld1_none(const __global uchar *s, long e) { return 0u; }

CT_ROWS_KERNEL(ct_rows4_f32, 4, uint4, ct_rows_ld4_f32, ct_rows_same, ct_rows_ld1_f32)
CT_ROWS_KERNEL(ct_rows4_f16, 4, ushort4, ct_rows_ld4_u16, ct_rows_cvt_f16, ct_rows_ld1_f16)
CT_ROWS_KERNEL(ct_rows4_bf16, 4, ushort4, ct_rows_ld4_u16, ct_rows_cvt_bf16, ct_rows_ld1_bf16)
CT_ROWS_KERNEL(ct_rows8_f32, 8, uint4, ct_rows_ld4_f32, ct_rows_same, ct_rows_ld1_f32)
CT_ROWS_KERNEL(ct_rows8_f16, 8, ushort4, ct_rows_ld4_u16, ct_rows_cvt_f16, ct_rows_ld1_f16)
CT_ROWS_KERNEL(ct_rows8_bf16, 8, ushort4, ct_rows_ld4_u16, ct_rows_cvt_bf16, ct_rows_ld1_bf16)

/* ct_rows_staged_<t>: the block rows of ct_rows4_<t>, read through local memory. A
 * work-group takes one segment (nth * nper units, whole blocks) of one row: it copies the
 * segment's bytes into local memory with 16-byte loads (the blocks themselves are only
 * 2-byte aligned, so reading them in place takes several narrow loads a unit), then each
 * work-item decodes its units from there. The encoder guarantees a local size (nth, 1, 1)
 * with nth >= 128 (so the fixed CT_STAGE_LOADS rounds cover a segment, and every
 * work-item of a group shares the prologue's outcome: no return splits a barrier),
 * 16-byte aligned source rows and segments whose bytes are a multiple of 16 (but the last). */
/* CT_STAGE_WORDS (kernel_args.h): 16-byte words, 1024 units of Q8_K (16 blocks of 292 bytes) */
#define CT_STAGE_LOADS 3   /* 3 * 128 >= CT_STAGE_WORDS */

#define CT_ROWS_STAGED_KERNEL(T, UPB, TS)                                                                 \
    __kernel void ct_rows_staged_##T(CT_ROWS_ARGS) {                                                      \
        __local uint4 stage[CT_STAGE_WORDS];                                                              \
        CT_ROWS_PROLOGUE                                                                                  \
        const long ubase = (long)seg * nth * nper, units = min(nth * nper, nfull - ubase);                \
        const int nbytes = (int)(units / (UPB) * (TS)), nw = nbytes / 16, lid = get_local_id(0);          \
        const __global uchar *sseg = src + (ulong)(ubase / (UPB)) * (TS);                                 \
        for (int k = 0; k < CT_STAGE_LOADS; k++) {                                                        \
            const int w = lid + k * (int)nth;                                                             \
            if (w < nw) stage[w] = ((const __global uint4 *)sseg)[w];                                     \
        }                                                                                                 \
        if (lid < (nbytes - 16 * nw) / 2)                                                                 \
            ((__local ushort *)stage)[8 * nw + lid] = ((const __global ushort *)sseg)[8 * nw + lid];      \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                     \
        for (int k = 0; k < CT_ROWS_NPER && k < nper; k++) {                                              \
            const int u = lid + k * (int)nth; /* 32-bit: the unit arithmetic is per element */          \
            if (u < units) {                                                                              \
                const int g = u % (UPB);                                                                  \
                const uint4 raw = ct_raw4_##T##_l((__local const uchar *)stage + (u / (UPB)) * (TS), g);  \
                ct_rows_st4(dst, ubase + u, as_uint4(ct_cvt4_##T(raw, g)), dtype);                        \
            }                                                                                             \
        }                                                                                                 \
    }

/* UPB units per block of TS bytes. */
#define CT_ROWS_BLOCK(T, UPB, TS)                                                                         \
    uint4 ct_rows_ld4_##T(const __global uchar *s, long u) {                                             \
        return ct_raw4_##T##_g(s + (ulong)(u / (UPB)) * (TS), (int)(u % (UPB)));                             \
    }                                                                                                     \
    uint4 ct_rows_cvt_##T(uint4 raw, long u) { return as_uint4(ct_cvt4_##T(raw, (int)(u % (UPB)))); }   \
    CT_ROWS_KERNEL(ct_rows4_##T, 4, uint4, ct_rows_ld4_##T, ct_rows_cvt_##T, ct_rows_ld1_none)            \
    CT_ROWS_STAGED_KERNEL(T, UPB, TS)

CT_ROWS_BLOCK(q4_0, 8, 18)
CT_ROWS_BLOCK(q4_1, 8, 20)
CT_ROWS_BLOCK(q5_0, 8, 22)
CT_ROWS_BLOCK(q5_1, 8, 24)
CT_ROWS_BLOCK(q8_0, 8, 34)
CT_ROWS_BLOCK(iq4_nl, 8, 18)
CT_ROWS_BLOCK(q2_K, 64, 84)
CT_ROWS_BLOCK(q3_K, 64, 110)
CT_ROWS_BLOCK(q4_K, 64, 144)
CT_ROWS_BLOCK(q5_K, 64, 176)
CT_ROWS_BLOCK(q6_K, 64, 210)
CT_ROWS_BLOCK(q8_K, 64, 292)
CT_ROWS_BLOCK(iq4_xs, 64, 136)
