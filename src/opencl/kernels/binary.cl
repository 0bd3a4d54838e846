/* ADD, SUB, MUL, DIV, ADD1 (ct_binary_args, kernel_args.h). Work-group (nx, ny): local row
 * ly computes dst row get_group_id(0)*ny + ly, its work-items consecutive elements
 * (i0 = lx, lx + nx, ...), so loads and stores are coalesced; src1's row repeats along
 * i0 and its rows over dst's. The arithmetic is the CPU's: float, x86 NaN rules
 * (ct_xadd..., common.cl), correctly rounded division, fp16 rounded to nearest even. */

float ct_bin_apply(int op, float x, float y) {
    switch (op) {
    case CT_BIN_SUB: return ct_xsub(x, y);
    case CT_BIN_MUL: return ct_xmul(x, y);
    case CT_BIN_DIV: return ct_xdiv(x, y);
    default: return ct_xadd(x, y);
    }
}

/* The row's three addresses, or false past the last row. */
bool ct_bin_row(const ct_binary_args a, int *ne10, const __global uchar **x, const __global uchar **y,
                __global uchar **z, const __global uchar *src0, const __global uchar *src1, __global uchar *dst) {
    const int row = get_group_id(0) * get_local_size(1) + get_local_id(1);
    if (row >= a.nrows) return false;
    const int i1 = row % a.ne1, i2 = (row / a.ne1) % a.ne2, i3 = row / (a.ne1 * a.ne2);
    *x = src0 + (ulong)i1 * a.nb01 + (ulong)i2 * a.nb02 + (ulong)i3 * a.nb03;
    *y = src1 + (ulong)(i1 % a.ne11) * a.nb11 + (ulong)(i2 % a.ne12) * a.nb12 + (ulong)(i3 % a.ne13) * a.nb13;
    *z = dst + (ulong)i1 * a.nb1 + (ulong)i2 * a.nb2 + (ulong)i3 * a.nb3;
    *ne10 = a.ne10;
    return true;
}

#define CT_BIN_KERNEL_ARGS                                                                                    \
    __global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1, __global uchar *dst,   \
        ulong offsd, const ct_binary_args a

/* All F32, unit strides, 4-byte aligned. */
#define CT_BIN_F32(name, OPF)                                                                                 \
    __kernel void name(CT_BIN_KERNEL_ARGS) {                                                                  \
        const __global uchar *xb, *yb;                                                                        \
        __global uchar *zb;                                                                                   \
        int ne10;                                                                                             \
        if (!ct_bin_row(a, &ne10, &xb, &yb, &zb, src0 + offs0, src1 + offs1, dst + offsd)) return;            \
        const __global float *x = (const __global float *)xb, *y = (const __global float *)yb;                \
        __global float *z = (__global float *)zb;                                                             \
        const int nx = get_local_size(0);                                                                     \
        if (ne10 == 1) {                                                                                      \
            const float s = y[0];                                                                             \
            for (int i0 = get_local_id(0); i0 < a.ne0; i0 += nx) z[i0] = OPF(x[i0], s);                       \
        } else if (ne10 == a.ne0) {                                                                           \
            for (int i0 = get_local_id(0); i0 < a.ne0; i0 += nx) z[i0] = OPF(x[i0], y[i0]);                   \
        } else {                                                                                              \
            for (int i0 = get_local_id(0); i0 < a.ne0; i0 += nx) z[i0] = OPF(x[i0], y[i0 % ne10]);            \
        }                                                                                                     \
    }

CT_BIN_F32(ct_add_f32, ct_xadd)
CT_BIN_F32(ct_sub_f32, ct_xsub)
CT_BIN_F32(ct_mul_f32, ct_xmul)
CT_BIN_F32(ct_div_f32, ct_xdiv)

float ct_bin_ld(const __global uchar *p, int f16, int aligned) {
    if (f16) return ct_half_to_float(aligned ? (ushort)ct_lda_u16(p) : ct_ld_u16(p));
    return as_float(aligned ? *(const __global uint *)p : ct_ld_u32(p));
}

void ct_bin_st(__global uchar *p, int f16, int aligned, float v) {
    if (f16) {
        const ushort h = ct_float_to_half(v);
        if (aligned) *(__global ushort *)p = h;
        else ct_st_u16(p, h);
    } else if (aligned) {
        *(__global float *)p = v;
    } else {
        ct_st_u32(p, as_uint(v));
    }
}

/* Any of the types (F32, F16) and strides. */
__kernel void ct_binary(CT_BIN_KERNEL_ARGS) {
    const __global uchar *x, *y;
    __global uchar *z;
    int ne10;
    if (!ct_bin_row(a, &ne10, &x, &y, &z, src0 + offs0, src1 + offs1, dst + offsd)) return;
    const int nx = get_local_size(0);
    for (int i0 = get_local_id(0); i0 < a.ne0; i0 += nx) {
        const float v0 = ct_bin_ld(x + (ulong)i0 * a.nb00, a.f16_0, a.aligned);
        const float v1 = ct_bin_ld(y + (ulong)(i0 % ne10) * a.nb10, a.f16_1, a.aligned);
        ct_bin_st(z + (ulong)i0 * a.nb0, a.f16_d, a.aligned, ct_bin_apply(a.op, v0, v1));
    }
}
