/* GLU of F32 and F16 data (ct_glu_args): one element a work-item, dims 1..3 over the
 * launch's dims 1 and 2; the sub-op (a ct_glu_op, uniform over the launch) by a switch,
 * ggml's formulas in float. GEGLU and GEGLU_QUICK take f(x) as ggml-cpu's fp16 tables give
 * it (unary.cl): on F32 with GELU's cut-offs at ±10, on F16 fp16(f(x)) (docs/TENSORS.md, GLU). */

/* the sub-op ids, as ct_glu_op (ctensor.h) and ggml's enum ggml_glu_op */
#define GLU_REGLU 0
#define GLU_GEGLU 1
#define GLU_SWIGLU 2
#define GLU_SWIGLU_OAI 3
#define GLU_GEGLU_ERF 4
#define GLU_GEGLU_QUICK 5
#define GLU_SWIGLU_CLAMP 6

/* f32: the sources are F32 */
float glu_apply(const int op, const float x, const float g, const float alpha, const float limit, const bool f32) {
    switch (op) {
    case GLU_REGLU: return x > 0.0f ? x * g : 0.0f;
    case GLU_GEGLU: return (f32 ? gelu_f32(x) : un_round_fp16(un_gelu(x))) * g;
    case GLU_SWIGLU: return ct_swiglu(x, g);
    case GLU_SWIGLU_OAI: {
        const float xc = fmin(x, limit), gc = fmin(fmax(g, -limit), limit);
        return xc / (1.0f + exp(alpha * (-xc))) * (gc + 1.0f);
    }
    case GLU_GEGLU_ERF: return 0.5f * x * (1.0f + erf(x * 0.70710678118654752440084436210484f)) * g;
    case GLU_GEGLU_QUICK: return (f32 ? gelu_quick_f32(x) : un_round_fp16(un_gelu_quick(x))) * g;
    case GLU_SWIGLU_CLAMP: {
        const float xc = fmin(x, limit), gc = fmin(fmax(g, -limit), limit);
        return xc / (1.0f + exp(-xc)) * gc;
    }
    default: return as_float(0x7FC00000u);
    }
}

/* Byte offsets of element i0 of the launch's row in src0 (x), src1 (g) and dst; false
 * past the row's end. */
bool glu_offsets(const ct_glu_args a, const ulong size, ulong *xs, ulong *gs, ulong *ys) {
    const ulong i0 = get_global_id(0);
    if (i0 >= (ulong)a.ne0) return false;
    const ulong i1 = get_global_id(1), r = get_global_id(2);
    const ulong i2 = r % (ulong)a.ne2, i3 = r / (ulong)a.ne2;
    *xs = a.xo + i0 * size + i1 * a.nb01 + i2 * a.nb02 + i3 * a.nb03;
    *gs = a.go + i0 * size + i1 * a.nb11 + i2 * a.nb12 + i3 * a.nb13;
    *ys = i0 * size + i1 * a.nb1 + i2 * a.nb2 + i3 * a.nb3;
    return true;
}

__kernel void ct_glu_f32(__global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1,
                         __global uchar *dst, ulong offsd, const ct_glu_args a) {
    ulong xs, gs, ys;
    if (!glu_offsets(a, 4, &xs, &gs, &ys)) return;
    const float x = *(const __global float *)(src0 + offs0 + xs);
    const float g = *(const __global float *)(src1 + offs1 + gs);
    *(__global float *)(dst + offsd + ys) = glu_apply(a.op, x, g, a.alpha, a.limit, true);
}

__kernel void ct_glu_f16(__global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1,
                         __global uchar *dst, ulong offsd, const ct_glu_args a) {
    ulong xs, gs, ys;
    if (!glu_offsets(a, 2, &xs, &gs, &ys)) return;
    const float x = ct_half_to_float(*(const __global ushort *)(src0 + offs0 + xs));
    const float g = ct_half_to_float(*(const __global ushort *)(src1 + offs1 + gs));
    *(__global ushort *)(dst + offsd + ys) = ct_float_to_half(glu_apply(a.op, x, g, a.alpha, a.limit, false));
}
