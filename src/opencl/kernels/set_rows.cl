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
