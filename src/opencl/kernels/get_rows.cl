/* GET_ROWS: dst[:, i10, i11, i12] = dequant(src0[:, src1[i10, i11, i12], i11, i12]),
 * and the index check that SET_ROWS shares. */

/* Raises the flag when an index (I32 or I64) lies outside [0, limit). It runs
 * before the op's kernel, which then writes nothing once the flag is set. */
__kernel void ct_check_indices(__global const uchar *idx, ulong idx_offs, long ne0, ulong nb0, ulong nb1, ulong nb2,
                               int is64, long limit, __global int *err, int code) {
    const long i0 = get_global_id(0);
    if (i0 >= ne0) return;
    const __global uchar *p = idx + idx_offs + (ulong)i0 * nb0 + get_global_id(1) * nb1 + get_global_id(2) * nb2;
    const long v = is64 ? (long)(((ulong)ct_ld_u32(p + 4) << 32) | ct_ld_u32(p)) : (long)as_int(ct_ld_u32(p));
    if (v < 0 || v >= limit) CT_RAISE_ERROR(err, code);
}

void ct_st_f32(__global uchar *p, float v, int aligned) {
    if (aligned) *(__global float *)p = v;
    else ct_st_u32(p, as_uint(v));
}

/* The row this work-item copies (groups of nrptg rows along i10): NULL when none,
 * or when an index is bad (the check kernel has raised the flag then). */
#define CT_GET_ROWS_PROLOGUE                                                                              \
    const long i10 = (long)get_group_id(0) * (long)get_local_size(1) + (long)get_local_id(1);            \
    if (i10 >= ne10) return;                                                                              \
    if (*(volatile __global int *)err != 0) return;                                                       \
    const ulong i11 = get_group_id(1), i12 = get_group_id(2);                                            \
    const long r = as_int(ct_ld_u32(s1 + s1_offs + (ulong)i10 * nb10 + i11 * nb11 + i12 * nb12));       \
    if (r < 0 || r >= ne01) return;                                                                       \
    const __global uchar *src = s0 + s0_offs + (ulong)r * nb01 + i11 * nb02 + i12 * nb03;                \
    __global uchar *dst = d + d_offs + (ulong)i10 * nb1 + i11 * nb2 + i12 * nb3;                         \
    const long nth = get_local_size(0);

#define CT_GET_ROWS_ARGS                                                                                  \
    __global const uchar *s0, ulong s0_offs, __global const uchar *s1, ulong s1_offs, __global uchar *d, \
        ulong d_offs, long ne00, long ne01, long ne10, ulong nb00, ulong nb01, ulong nb02, ulong nb03,   \
        ulong nb10, ulong nb11, ulong nb12, ulong nb0, ulong nb1, ulong nb2, ulong nb3, int src_aligned, \
        int dst_aligned, __global int *err, int code

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
