/* GELU and GELU_QUICK as ggml-cpu computes them, the arithmetic every backend shares for
 * UNARY's GELU/GELU_QUICK and GLU's GEGLU/GEGLU_QUICK. ggml-cpu is built with
 * GGML_GELU_FP16 and GGML_GELU_QUICK_FP16: on F32 it reads both from fp16 tables, whose
 * entry for x is f(x rounded to fp16) rounded to fp16; ct_via_fp16 computes that entry
 * directly (docs/TENSORS.md, Unary and GLU). OpenCL's kernels repeat it (unary.cl). */
#ifndef CT_OPS_GELU_H
#define CT_OPS_GELU_H

#include "types/types_internal.h"

#include <math.h>

static inline float ct_gelu(float x) {
    return 0.5f * x * (1.0f + tanhf(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x)));
}
static inline float ct_gelu_quick(float x) { return x * (1.0f / (1.0f + expf(-1.702f * x))); }
static inline float ct_round_fp16(float x) { return ct_fp16_to_fp32_inline(ct_fp32_to_fp16_inline(x)); }
/* the fp16 table's entry for x: f(x rounded to fp16), rounded to fp16 */
static inline float ct_via_fp16(float (*f)(float), float x) { return ct_round_fp16(f(ct_round_fp16(x))); }
/* F32 GELU and GELU_QUICK as ggml-cpu gives them: GELU is 0 for x <= -10 and x for x >= 10
 * (outside its table), the table entry between; GELU_QUICK the table entry everywhere */
static inline float ct_gelu_f32(float x) { return x <= -10.0f ? 0.0f : x >= 10.0f ? x : ct_via_fp16(ct_gelu, x); }
static inline float ct_gelu_quick_f32(float x) { return ct_via_fp16(ct_gelu_quick, x); }

#endif
