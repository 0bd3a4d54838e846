/* GELU and GELU_QUICK as ggml-cpu computes them, shared by UNARY (unary.c) and GLU
 * (glu.c). ggml-cpu is built with GGML_GELU_FP16 and GGML_GELU_QUICK_FP16: on F32 it
 * reads both from fp16 tables, whose entry for x is f(x rounded to fp16) rounded to fp16;
 * ct_cpu_via_fp16 computes that entry directly (docs/TENSORS.md, Unary and GLU). */
#ifndef CT_CPU_GELU_H
#define CT_CPU_GELU_H

#include "types/types_internal.h"

#include <math.h>

static inline float ct_cpu_gelu(float x) {
    return 0.5f * x * (1.0f + tanhf(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x)));
}
static inline float ct_cpu_gelu_quick(float x) { return x * (1.0f / (1.0f + expf(-1.702f * x))); }
/* the fp16 table's entry for x: f(x rounded to fp16), rounded to fp16 */
static inline float ct_cpu_via_fp16(float (*f)(float), float x) {
    return ct_fp16_to_fp32_inline(ct_fp32_to_fp16_inline(f(ct_fp16_to_fp32_inline(ct_fp32_to_fp16_inline(x)))));
}

#endif
