/* UNARY and SCALE of F32 and F16 data (ct_unary_args). UNARY: one element a work-item, the sub-op (a
 * ct_unary_op, uniform over the launch) by a switch, ggml's formulas in float; on F32, GELU and
 * GELU_QUICK round through fp16 as ggml-cpu's tables do (gelu_f32 below; docs/TENSORS.md, Unary).
 * Elements are nb00 bytes apart. */

/* the sub-op ids, as ct_unary_op (ctensor.h) and ggml's enum ggml_unary_op */
#define UN_ABS 0
#define UN_SGN 1
#define UN_NEG 2
#define UN_STEP 3
#define UN_TANH 4
#define UN_ELU 5
#define UN_RELU 6
#define UN_SIGMOID 7
#define UN_GELU 8
#define UN_GELU_QUICK 9
#define UN_SILU 10
#define UN_HARDSWISH 11
#define UN_HARDSIGMOID 12
#define UN_EXP 13
#define UN_EXPM1 14
#define UN_SOFTPLUS 15
#define UN_GELU_ERF 16
#define UN_XIELU 17
#define UN_FLOOR 18
#define UN_CEIL 19
#define UN_ROUND 20
#define UN_TRUNC 21

float un_gelu(const float x) {
    return 0.5f * x * (1.0f + tanh(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x)));
}
float un_gelu_quick(const float x) { return x * (1.0f / (1.0f + exp(-1.702f * x))); }
float un_round_fp16(const float x) { return ct_half_to_float(ct_float_to_half(x)); }

/* ggml-cpu's fp16 table entries on F32: GELU 0 for x <= -10, x for x >= 10, else
 * fp16(gelu(fp16(x))); GELU_QUICK fp16(gelu_quick(fp16(x))). GLU's GEGLU shares them. */
float gelu_f32(const float x) {
    return x <= -10.0f ? 0.0f : x >= 10.0f ? x : un_round_fp16(un_gelu(un_round_fp16(x)));
}
float gelu_quick_f32(const float x) { return un_round_fp16(un_gelu_quick(un_round_fp16(x))); }

/* f32: the source is F32 (GELU and GELU_QUICK through fp16, as above) */
float un_apply(const int op, const float x, const ct_unary_args a, const bool f32) {
    switch (op) {
    case UN_ABS: return fabs(x);
    case UN_SGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    case UN_NEG: return -x;
    case UN_STEP: return x > 0.0f ? 1.0f : 0.0f;
    case UN_TANH: return tanh(x);
    case UN_ELU: return x > 0.0f ? x : expm1(x);
    case UN_RELU: return x > 0.0f ? x : 0.0f;
    case UN_SIGMOID: return 1.0f / (1.0f + exp(-x));
    case UN_GELU: return f32 ? gelu_f32(x) : un_gelu(x);
    case UN_GELU_QUICK: return f32 ? gelu_quick_f32(x) : un_gelu_quick(x);
    case UN_SILU: return x / (1.0f + exp(-x));
    case UN_HARDSWISH: return x * fmin(1.0f, fmax(0.0f, (x + 3.0f) / 6.0f));
    case UN_HARDSIGMOID: return fmin(1.0f, fmax(0.0f, (x + 3.0f) / 6.0f));
    case UN_EXP: return exp(x);
    case UN_EXPM1: return exp(x) - 1.0f;
    case UN_SOFTPLUS: return x > 20.0f ? x : log(1.0f + exp(x));
    case UN_GELU_ERF: return 0.5f * x * (1.0f + erf(x * 0.70710678118654752440084436210484f));
    case UN_XIELU:
        if (x > 0.0f) return a.p[1] * x * x + a.p[2] * x;
        return (expm1(fmin(x, a.p[3])) - x) * a.p[0] + a.p[2] * x;
    case UN_FLOOR: return floor(x);
    case UN_CEIL: return ceil(x);
    case UN_ROUND: return round(x);
    case UN_TRUNC: return trunc(x);
    default: return as_float(0x7FC00000u);
    }
}

/* The element's source and destination byte offsets: element i of the launch is
 * (i0, row), row split into (i01, i02, i03). */
void un_offsets(const ulong i, const ct_unary_args a, ulong *xs, ulong *ys) {
    const ulong ne00 = (ulong)a.ne00, row = i / ne00, i0 = i - row * ne00;
    const ulong i01 = row % (ulong)a.ne01, r2 = row / (ulong)a.ne01;
    const ulong i02 = r2 % (ulong)a.ne02, i03 = r2 / (ulong)a.ne02;
    *xs = i0 * a.nb00 + i01 * a.nb01 + i02 * a.nb02 + i03 * a.nb03;
    *ys = i0 * a.nb0 + i01 * a.nb1 + i02 * a.nb2 + i03 * a.nb3;
}

__kernel void ct_unary_f32(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                           const ct_unary_args a) {
    const ulong i = get_global_id(0);
    if (i >= a.n) return;
    ulong xs, ys;
    un_offsets(i, a, &xs, &ys);
    const float x = *(const __global float *)(src + offs + xs);
    *(__global float *)(dst + offsd + ys) = un_apply(a.op, x, a, true);
}

__kernel void ct_unary_f16(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                           const ct_unary_args a) {
    const ulong i = get_global_id(0);
    if (i >= a.n) return;
    ulong xs, ys;
    un_offsets(i, a, &xs, &ys);
    const float x = ct_half_to_float(*(const __global ushort *)(src + offs + xs));
    *(__global ushort *)(dst + offsd + ys) = ct_float_to_half(un_apply(a.op, x, a, false));
}

/* ---- SCALE (y = x*s + b in float, two roundings; no sum when b is 0, as ggml-cpu) ---- */

float sc_apply(const float x, const ct_unary_args a) {
    const float p = x * a.p[0];
    return a.p[1] == 0.0f ? p : p + a.p[1];
}

__kernel void ct_scale_f32(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                           const ct_unary_args a) {
    const ulong i = get_global_id(0);
    if (i >= a.n) return;
    ulong xs, ys;
    un_offsets(i, a, &xs, &ys);
    *(__global float *)(dst + offsd + ys) = sc_apply(*(const __global float *)(src + offs + xs), a);
}

__kernel void ct_scale_f16(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                           const ct_unary_args a) {
    const ulong i = get_global_id(0);
    if (i >= a.n) return;
    ulong xs, ys;
    un_offsets(i, a, &xs, &ys);
    const float x = ct_half_to_float(*(const __global ushort *)(src + offs + xs));
    *(__global ushort *)(dst + offsd + ys) = ct_float_to_half(sc_apply(x, a));
}
