/* GLU on F32 and F16 rows, threaded over rows. Each chunk of x and g is converted to
 * float, the sub-op's loop runs over it (the switch outside the element loop) and the
 * chunk is converted back; F32 SWIGLU's vector loop reads and writes the rows directly.
 * The arithmetic is ggml-cpu's (ops.cpp, vec.h): GEGLU and
 * GEGLU_QUICK take f(x) from fp16 tables as ggml-cpu does, 65536 entries each filled
 * once with UNARY's helpers (ops/gelu.h; tanhf costs about 5 expf, so the table is what
 * keeps GEGLU near SWIGLU's speed): on F32, GEGLU gives 0 for x <= -10, x·g for x >= 10
 * and fp16(gelu(fp16(x)))·g otherwise, GEGLU_QUICK fp16(gelu_quick(fp16(x)))·g; on F16
 * both are fp16(fp16(f(x))·g). SWIGLU takes its exponential from cpu/vexp.h where the CPU
 * has AVX2, 16 lanes at a time with AVX-512 (within 2 ulp of expf; ggml-cpu vectorizes it
 * too). docs/TENSORS.md, GLU. */
#include "cpu/cpu_ops.h"
#include "ops/gelu.h"
#include "cpu/vexp.h"
#include "core/cpu_features.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

enum { CHUNK = 256 };

bool ct_cpu_glu_supported(const ct_tensor *op) { return ct_glu_node_valid(op); }

/* fp16 tables of GELU and GELU_QUICK: the entry for fp16 h is f(h) rounded to fp16,
 * ct_via_fp16's value for any x that rounds to h; one entry more, never filled, for
 * the vector lookup's 32-bit gather at the last index */
static ct_fp16 gelu_tab[(1 << 16) + 1], gelu_quick_tab[(1 << 16) + 1];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void tab_init(void) {
    for (uint32_t h = 0; h < (1u << 16); h++) {
        const float x = ct_fp16_to_fp32_inline((ct_fp16)h);
        gelu_tab[h] = ct_fp32_to_fp16_inline(ct_gelu(x));
        gelu_quick_tab[h] = ct_fp32_to_fp16_inline(ct_gelu_quick(x));
    }
}

static inline float from_tab(const ct_fp16 *tab, float x) {
    return ct_fp16_to_fp32_inline(tab[ct_fp32_to_fp16_inline(x)]);
}

/* f(x)·g with f from tab; clamp: GEGLU's F32 rule, 0 for x <= -10 and x·g for x >= 10. */
static inline float tab_mul1(const ct_fp16 *tab, bool clamp, float x, float g) {
    if (clamp && x <= -10.0f) return 0.0f;
    if (clamp && x >= 10.0f) return x * g;
    return from_tab(tab, x) * g;
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

#ifdef CT_HAVE_VEXP
/* y[i] = silu(x[i])·g[i], 8 at a time: sigmoid(x) = 1/(1 + e) for x >= 0 and e/(1 + e)
 * below, with e = exp(-|x|) <= 1, so the exponential never overflows. NaN stays NaN;
 * ±inf give what the scalar x/(1 + expf(-x)) gives (inf, NaN). y may be x or g (each
 * element is read before it is written), so no restrict. */
CT_VEXP_AVX2 static void swiglu_avx2(float *y, const float *x, const float *g, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 e = ct_exp_neg_avx2(_mm256_or_ps(v, sign)); /* exp(-|v|) */
        const __m256 num = _mm256_blendv_ps(one, e, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
        const __m256 sig = _mm256_div_ps(num, _mm256_add_ps(one, e));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(v, sig), _mm256_loadu_ps(g + i)));
    }
    for (; i < n; i++) y[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
}

/* The same 16 at a time (the same values: lane-wise the same operations). */
CT_VEXP_AVX512 static void swiglu_avx512(float *y, const float *x, const float *g, int64_t n) {
    const __m512 one = _mm512_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        const __m512 e = ct_exp_neg_avx512(_mm512_castsi512_ps(
            _mm512_or_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int)0x80000000u)))); /* exp(-|v|) */
        const __m512 num = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), one, e);
        const __m512 sig = _mm512_div_ps(num, _mm512_add_ps(one, e));
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_mul_ps(v, sig), _mm512_loadu_ps(g + i)));
    }
    swiglu_avx2(y + i, x + i, g + i, n - i);
}
#endif

#ifdef CT_HAVE_VEXP
/* x[i] = tab_mul1(tab, clamp, x[i], g[i]), 8 at a time, the same bytes (but for which NaN
 * a NaN f(x) times a NaN g keeps, which the compiler's operand order picks in the scalar
 * loop too): x rounds to fp16
 * by F16C as ct_fp32_to_fp16_inline does once a NaN is made the quiet NaN of its sign
 * (index sign|0x7E00), the entries come by a 32-bit gather (the tables' extra entry
 * covers the last index's upper half) and widen exactly (Gemma 3's decode GEGLU of
 * 2048 values: 16.8 -> 2.0 us, docs/PERF.md). */
CT_VEXP_AVX2 static void tab_mul_avx2(const ct_fp16 *tab, bool clamp, float *x, const float *g, int64_t n) {
    const __m256 sign = _mm256_set1_ps(-0.0f), qnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000));
    const __m256 lo = _mm256_set1_ps(-10.0f), hi = _mm256_set1_ps(10.0f);
    const __m256i low16 = _mm256_set1_epi32(0xFFFF);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i), gv = _mm256_loadu_ps(g + i);
        const __m256 vq =
            _mm256_blendv_ps(v, _mm256_or_ps(_mm256_and_ps(v, sign), qnan), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        const __m256i idx = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(vq, _MM_FROUND_TO_NEAREST_INT));
        const __m256i e = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)tab, idx, 2), low16);
        const __m128i e16 = _mm_packus_epi32(_mm256_castsi256_si128(e), _mm256_extracti128_si256(e, 1));
        __m256 r = _mm256_mul_ps(_mm256_cvtph_ps(e16), gv);
        if (clamp) {
            r = _mm256_blendv_ps(r, _mm256_setzero_ps(), _mm256_cmp_ps(v, lo, _CMP_LE_OQ));
            r = _mm256_blendv_ps(r, _mm256_mul_ps(v, gv), _mm256_cmp_ps(v, hi, _CMP_GE_OQ));
        }
        _mm256_storeu_ps(x + i, r);
    }
    for (; i < n; i++) x[i] = tab_mul1(tab, clamp, x[i], g[i]);
}
#endif

/* x[i] = tab_mul1(tab, clamp, x[i], g[i]) over n floats. */
static void tab_mul(const ct_fp16 *tab, bool clamp, float *restrict x, const float *restrict g, int64_t n) {
#ifdef CT_HAVE_VEXP
    if (ct_types_use_avx2()) {
        tab_mul_avx2(tab, clamp, x, g, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) x[i] = tab_mul1(tab, clamp, x[i], g[i]);
}

typedef void (*swiglu_fn)(float *y, const float *x, const float *g, int64_t n);

/* The vector SWIGLU this CPU runs, or NULL (the scalar loop then). */
static swiglu_fn swiglu_vector(void) {
#ifdef CT_HAVE_VEXP
    if (ct_types_use_avx2()) return ct_cpu_has_avx512_vnni() ? swiglu_avx512 : swiglu_avx2;
#endif
    return NULL;
}

/* x[i] = f(x[i])·g[i] over n floats; f32: the sources are F32 (ggml-cpu's F32 paths). */
static void apply(int32_t op, const ct_tensor *dst, bool f32, float *restrict x, const float *restrict g, int64_t n) {
    switch ((ct_glu_op)op) {
    case CT_GLU_OP_REGLU:
        for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] * g[i] : 0.0f;
        break;
    case CT_GLU_OP_GEGLU: tab_mul(gelu_tab, f32, x, g, n); break;
    case CT_GLU_OP_SWIGLU: {
        const swiglu_fn f = swiglu_vector();
        if (f) f(x, x, g, n);
        else
            for (int64_t i = 0; i < n; i++) x[i] = x[i] / (1.0f + expf(-x[i])) * g[i];
        break;
    }
    case CT_GLU_OP_SWIGLU_OAI: {
        const float alpha = param_f32(dst, 2), limit = param_f32(dst, 3);
        for (int64_t i = 0; i < n; i++) {
            const float xc = fminf(x[i], limit), gc = fminf(fmaxf(g[i], -limit), limit);
            x[i] = xc / (1.0f + expf(alpha * (-xc))) * (gc + 1.0f);
        }
        break;
    }
    case CT_GLU_OP_GEGLU_ERF:
        for (int64_t i = 0; i < n; i++)
            x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752440084436210484f)) * g[i];
        break;
    case CT_GLU_OP_GEGLU_QUICK: tab_mul(gelu_quick_tab, false, x, g, n); break;
    case CT_GLU_OP_SWIGLU_CLAMP: {
        const float limit = param_f32(dst, 3);
        for (int64_t i = 0; i < n; i++) {
            const float xc = fminf(x[i], limit), gc = fminf(fmaxf(g[i], -limit), limit);
            x[i] = xc / (1.0f + expf(-xc)) * gc;
        }
        break;
    }
    default: break; /* the check accepted only listed sub-ops */
    }
}

static void load(const char *p, bool f32, float *buf, int64_t n) {
    if (f32) {
        memcpy(buf, p, (size_t)n * sizeof(float));
    } else {
        for (int64_t i = 0; i < n; i++) {
            ct_fp16 h;
            memcpy(&h, p + (size_t)i * sizeof h, sizeof h);
            buf[i] = ct_fp16_to_fp32_inline(h);
        }
    }
}

static void store(char *p, bool f32, const float *buf, int64_t n) {
    if (f32) {
        memcpy(p, buf, (size_t)n * sizeof(float));
    } else {
        for (int64_t i = 0; i < n; i++) {
            const ct_fp16 h = ct_fp32_to_fp16_inline(buf[i]);
            memcpy(p + (size_t)i * sizeof h, &h, sizeof h);
        }
    }
}

void ct_cpu_glu(const ct_cpu_params *params, ct_tensor *dst) {
    if (ct_is_empty(dst)) return;
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const bool f32 = a->type == CT_TYPE_F32;
    const size_t ts = ct_type_size(a->type);
    const int32_t op = dst->op_params[0], swapped = dst->op_params[1];
    if (op == CT_GLU_OP_GEGLU || op == CT_GLU_OP_GEGLU_QUICK) pthread_once(&tab_once, tab_init);
    const int64_t nc = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    /* the fused form's halves: x at element xo, g at go of a's row (packed rows: nb[0] = ts) */
    const size_t xo = b ? 0 : (size_t)(swapped ? nc : 0) * ts, go = b ? 0 : (size_t)(swapped ? 0 : nc) * ts;
    int64_t r0, r1;
    ct_cpu_split(ct_nrows(dst), params, &r0, &r1);
    /* F32 SWIGLU's vector loop reads and writes the rows where they lie: no chunk copies */
    const swiglu_fn direct = f32 && op == CT_GLU_OP_SWIGLU ? swiglu_vector() : NULL;
    float bx[CHUNK], bg[CHUNK];
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const char *ra = (const char *)a->data + (size_t)i1 * a->nb[1] + (size_t)i2 * a->nb[2] + (size_t)i3 * a->nb[3];
        const char *x = ra + xo;
        const char *g = b ? (const char *)b->data + (size_t)i1 * b->nb[1] + (size_t)i2 * b->nb[2] +
                                (size_t)i3 * b->nb[3]
                          : ra + go;
        char *y = (char *)dst->data + (size_t)i1 * dst->nb[1] + (size_t)i2 * dst->nb[2] + (size_t)i3 * dst->nb[3];
        if (direct && (((uintptr_t)x | (uintptr_t)g | (uintptr_t)y) & (sizeof(float) - 1)) == 0) {
            direct((float *)(void *)y, (const float *)(const void *)x, (const float *)(const void *)g, nc);
            continue;
        }
        for (int64_t c0 = 0; c0 < nc; c0 += CHUNK) {
            const int64_t n = nc - c0 < CHUNK ? nc - c0 : CHUNK;
            load(x + (size_t)c0 * ts, f32, bx, n);
            load(g + (size_t)c0 * ts, f32, bg, n);
            apply(op, dst, f32, bx, bg, n);
            store(y + (size_t)c0 * ts, f32, bx, n);
        }
    }
}
