/* SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU and FILL of F32 and F16 data (ct_unary_args, op a
 * CT_MATH_*): one element a work-item, addressed as UNARY's (un_offsets, unary.cl), ggml-cpu's
 * formulas in float. */

float math_apply(const int op, const float x, const ct_unary_args a) {
    switch (op) {
    /* NaNs as the CPU makes them (ct_xnan, common.cl): GPUs return another NaN */
    case CT_MATH_SQR: return ct_xmul(x, x);
    case CT_MATH_SQRT: return ct_xnan(x, x, sqrt(x));
    case CT_MATH_SIN: return ct_xnan(x, x, sin(x));
    case CT_MATH_COS: return ct_xnan(x, x, cos(x));
    case CT_MATH_LOG: return ct_xnan(x, x, log(x));
    case CT_MATH_CLAMP: {
        const float m = x < a.p[1] ? x : a.p[1]; /* MIN(x, max), then MAX(., min): NaN gives max */
        return m > a.p[0] ? m : a.p[0];
    }
    case CT_MATH_LEAKY_RELU: return (x > 0.0f ? x : 0.0f) + a.p[0] * (x < 0.0f ? x : 0.0f);
    case CT_MATH_FILL: return a.p[0];
    default: return as_float(0x7FC00000u);
    }
}

__kernel void ct_math_f32(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                          const ct_unary_args a) {
    const ulong i = get_global_id(0);
    if (i >= a.n) return;
    ulong xs, ys;
    un_offsets(i, a, &xs, &ys);
    const float x = a.op == CT_MATH_FILL ? 0.0f : *(const __global float *)(src + offs + xs);
    *(__global float *)(dst + offsd + ys) = math_apply(a.op, x, a);
}

__kernel void ct_math_f16(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                          const ct_unary_args a) {
    const ulong i = get_global_id(0);
    if (i >= a.n) return;
    ulong xs, ys;
    un_offsets(i, a, &xs, &ys);
    const float x = a.op == CT_MATH_FILL ? 0.0f : ct_half_to_float(*(const __global ushort *)(src + offs + xs));
    *(__global ushort *)(dst + offsd + ys) = ct_float_to_half(math_apply(a.op, x, a));
}
