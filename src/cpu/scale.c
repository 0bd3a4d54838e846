/* SCALE on F32 and F16 rows, threaded over rows: y = x*s + b in float (product, then
 * sum; -ffp-contract=off keeps them two roundings), F16 converted through float. */
#include "cpu/cpu_ops.h"
#include "types/types_internal.h"

#include <string.h>

/* y = x*s (+ b) over n packed floats (y may be x), compiled a second time for AVX2 and
 * picked where the CPU has it: one product and one sum per element either way, so the
 * bytes agree. */
#define CT_SCALE_LOOP_AS(name, ATTR)                                                       \
    ATTR static void name(float *y, const float *x, float s, float b, bool bias, int64_t n) { \
        if (bias) {                                                                       \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] * s + b;                          \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] * s;                              \
        }                                                                                 \
    }
CT_SCALE_LOOP_AS(scale_row, )
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define CT_SCALE_AVX2 1
CT_SCALE_LOOP_AS(scale_row_avx2, __attribute__((target("avx2"))))
#endif

bool ct_cpu_scale_supported(const ct_tensor *op) {
    if (!op || op->op != CT_OP_SCALE) return false;
    const ct_tensor *a = op->src[0];
    return a && (a->type == CT_TYPE_F32 || a->type == CT_TYPE_F16) && op->type == a->type && ct_are_same_shape(a, op);
}

void ct_cpu_scale(const ct_cpu_params *params, ct_tensor *dst) {
    if (ct_is_empty(dst)) return;
    const ct_tensor *a = dst->src[0];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1], ne02 = a->ne[2];
    float s, b;
    memcpy(&s, &dst->op_params[0], sizeof s);
    memcpy(&b, &dst->op_params[1], sizeof b);
    const bool f32 = a->type == CT_TYPE_F32, bias = b != 0.0f; /* ggml adds no zero bias: -0 stays -0 */
    const size_t nb00 = a->nb[0], nb0 = dst->nb[0];
    void (*row)(float *, const float *, float, float, bool, int64_t) = scale_row;
#ifdef CT_SCALE_AVX2
    if (ct_types_use_avx2()) row = scale_row_avx2;
#endif
    int64_t r0, r1;
    ct_cpu_split(ct_nrows(a), params, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i01 = r % ne01, i02 = (r / ne01) % ne02, i03 = r / (ne01 * ne02);
        const char *x = (const char *)a->data + (size_t)i01 * a->nb[1] + (size_t)i02 * a->nb[2] + (size_t)i03 * a->nb[3];
        char *y = (char *)dst->data + (size_t)i01 * dst->nb[1] + (size_t)i02 * dst->nb[2] + (size_t)i03 * dst->nb[3];
        if (f32 && nb00 == sizeof(float) && nb0 == sizeof(float) && ((uintptr_t)x | (uintptr_t)y) % sizeof(float) == 0) {
            /* packed rows: vectorized loops (x and y may be the same row) */
            row((float *)(void *)y, (const float *)(const void *)x, s, b, bias, ne00);
        } else if (f32) {
            for (int64_t i = 0; i < ne00; i++) {
                float v;
                memcpy(&v, x + (size_t)i * nb00, sizeof v);
                v = bias ? v * s + b : v * s;
                memcpy(y + (size_t)i * nb0, &v, sizeof v);
            }
        } else {
            for (int64_t i = 0; i < ne00; i++) {
                ct_fp16 h;
                memcpy(&h, x + (size_t)i * nb00, sizeof h);
                h = ct_fp32_to_fp16_inline(bias ? ct_fp16_to_fp32_inline(h) * s + b : ct_fp16_to_fp32_inline(h) * s);
                memcpy(y + (size_t)i * nb0, &h, sizeof h);
            }
        }
    }
}
