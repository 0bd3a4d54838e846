/* Internal to the types layer (and the CPU backend's hot loops): block layouts
 * of every format with ggml's field names, the IQ4_NL value table, and inline
 * fp16/bf16 conversion so that per-element callers avoid a call. */
#ifndef CT_TYPES_INTERNAL_H
#define CT_TYPES_INTERNAL_H

#include "ctensor.h"

#include <stdint.h>
#include <string.h>

/* Packed so that a block may be read from any address (rows of mapped files,
 * views at odd offsets); the static asserts pin the sizes of
 * docs/QUANTIZATION.md, Block layouts. */
#if defined(__GNUC__)
#  define CT_PACKED __attribute__((packed))
#else
#  define CT_PACKED
#endif

#define CT_QK4_0 32
#define CT_QK4_1 32
#define CT_QK5_0 32
#define CT_QK5_1 32
#define CT_QK8_0 32
#define CT_QK8_1 32
#define CT_QK4_NL 32
#define CT_QK_K 256
#define CT_K_SCALE_SIZE 12

typedef struct CT_PACKED { ct_fp16 d; uint8_t qs[CT_QK4_0 / 2]; } block_q4_0;
typedef struct CT_PACKED { ct_fp16 d; ct_fp16 m; uint8_t qs[CT_QK4_1 / 2]; } block_q4_1;
typedef struct CT_PACKED { ct_fp16 d; uint8_t qh[4]; uint8_t qs[CT_QK5_0 / 2]; } block_q5_0;
typedef struct CT_PACKED { ct_fp16 d; ct_fp16 m; uint8_t qh[4]; uint8_t qs[CT_QK5_1 / 2]; } block_q5_1;
typedef struct CT_PACKED { ct_fp16 d; int8_t qs[CT_QK8_0]; } block_q8_0;
typedef struct CT_PACKED { ct_fp16 d; ct_fp16 s; int8_t qs[CT_QK8_1]; } block_q8_1;
typedef struct CT_PACKED { ct_fp16 d; uint8_t qs[CT_QK4_NL / 2]; } block_iq4_nl;

typedef struct CT_PACKED {
    uint8_t scales[CT_QK_K / 16]; /* low nibble scale, high nibble min */
    uint8_t qs[CT_QK_K / 4];
    ct_fp16 d;
    ct_fp16 dmin;
} block_q2_K;
typedef struct CT_PACKED {
    uint8_t hmask[CT_QK_K / 8];
    uint8_t qs[CT_QK_K / 4];
    uint8_t scales[12];
    ct_fp16 d;
} block_q3_K;
typedef struct CT_PACKED {
    ct_fp16 d;
    ct_fp16 dmin;
    uint8_t scales[CT_K_SCALE_SIZE];
    uint8_t qs[CT_QK_K / 2];
} block_q4_K;
typedef struct CT_PACKED {
    ct_fp16 d;
    ct_fp16 dmin;
    uint8_t scales[CT_K_SCALE_SIZE];
    uint8_t qh[CT_QK_K / 8];
    uint8_t qs[CT_QK_K / 2];
} block_q5_K;
typedef struct CT_PACKED {
    uint8_t ql[CT_QK_K / 2];
    uint8_t qh[CT_QK_K / 4];
    int8_t scales[CT_QK_K / 16];
    ct_fp16 d;
} block_q6_K;
typedef struct CT_PACKED {
    float d;
    int8_t qs[CT_QK_K];
    int16_t bsums[CT_QK_K / 16];
} block_q8_K;
typedef struct CT_PACKED {
    ct_fp16 d;
    uint16_t scales_h;
    uint8_t scales_l[CT_QK_K / 64];
    uint8_t qs[CT_QK_K / 2];
} block_iq4_xs;

/* Formats ctensor only sizes (no conversion yet); layouts as ggml's. */
typedef struct CT_PACKED { ct_fp16 d; uint16_t qs[CT_QK_K / 8]; } block_iq2_xxs;
typedef struct CT_PACKED { ct_fp16 d; uint16_t qs[CT_QK_K / 8]; uint8_t scales[CT_QK_K / 32]; } block_iq2_xs;
typedef struct CT_PACKED {
    ct_fp16 d;
    uint8_t qs[CT_QK_K / 4];
    uint8_t qh[CT_QK_K / 32];
    uint8_t scales[CT_QK_K / 32];
} block_iq2_s;
typedef struct CT_PACKED { ct_fp16 d; uint8_t qs[3 * CT_QK_K / 8]; } block_iq3_xxs;
typedef struct CT_PACKED {
    ct_fp16 d;
    uint8_t qs[CT_QK_K / 4];
    uint8_t qh[CT_QK_K / 32];
    uint8_t signs[CT_QK_K / 8];
    uint8_t scales[CT_QK_K / 64];
} block_iq3_s;
typedef struct CT_PACKED { ct_fp16 d; uint8_t qs[CT_QK_K / 8]; uint16_t qh[CT_QK_K / 32]; } block_iq1_s;
typedef struct CT_PACKED { uint8_t qs[CT_QK_K / 8]; uint8_t qh[CT_QK_K / 16]; uint8_t scales[CT_QK_K / 32]; } block_iq1_m;
typedef struct CT_PACKED {
    uint8_t qs[(CT_QK_K - 4 * CT_QK_K / 64) / 5];
    uint8_t qh[CT_QK_K / 64];
    ct_fp16 d;
} block_tq1_0;
typedef struct CT_PACKED { uint8_t qs[CT_QK_K / 4]; ct_fp16 d; } block_tq2_0;

_Static_assert(sizeof(block_q4_0) == 18, "block_q4_0 size");
_Static_assert(sizeof(block_q4_1) == 20, "block_q4_1 size");
_Static_assert(sizeof(block_q5_0) == 22, "block_q5_0 size");
_Static_assert(sizeof(block_q5_1) == 24, "block_q5_1 size");
_Static_assert(sizeof(block_q8_0) == 34, "block_q8_0 size");
_Static_assert(sizeof(block_q8_1) == 36, "block_q8_1 size");
_Static_assert(sizeof(block_iq4_nl) == 18, "block_iq4_nl size");
_Static_assert(sizeof(block_q2_K) == 84, "block_q2_K size");
_Static_assert(sizeof(block_q3_K) == 110, "block_q3_K size");
_Static_assert(sizeof(block_q4_K) == 144, "block_q4_K size");
_Static_assert(sizeof(block_q5_K) == 176, "block_q5_K size");
_Static_assert(sizeof(block_q6_K) == 210, "block_q6_K size");
_Static_assert(sizeof(block_q8_K) == 292, "block_q8_K size");
_Static_assert(sizeof(block_iq4_xs) == 136, "block_iq4_xs size");
_Static_assert(sizeof(block_iq2_xxs) == 66, "block_iq2_xxs size");
_Static_assert(sizeof(block_iq2_xs) == 74, "block_iq2_xs size");
_Static_assert(sizeof(block_iq2_s) == 82, "block_iq2_s size");
_Static_assert(sizeof(block_iq3_xxs) == 98, "block_iq3_xxs size");
_Static_assert(sizeof(block_iq3_s) == 110, "block_iq3_s size");
_Static_assert(sizeof(block_iq1_s) == 50, "block_iq1_s size");
_Static_assert(sizeof(block_iq1_m) == 56, "block_iq1_m size");
_Static_assert(sizeof(block_tq1_0) == 54, "block_tq1_0 size");
_Static_assert(sizeof(block_tq2_0) == 66, "block_tq2_0 size");

/* -127, -104, ..., 113 (docs/QUANTIZATION.md, Block layouts) */
extern const int8_t ct_kvalues_iq4nl[16];
/* The fp16 scale stored for an IQ4_NL block whose d is NaN (inf or huge finite input):
 * positive and quiet, whatever sign the arithmetic produced. */
#define CT_IQ4_NL_NAN_SCALE ((ct_fp16)0x7E00)

/* CT_OK for a valid type id; otherwise records "<func>: type 4 is a removed type
 * id" (or "... is not a type id" when out of range) and returns CT_INVALID_ARGUMENT. */
ct_status ct_type_check(const char *func, ct_type type);

/* fp16/bf16 conversion, inline; the exported ct_fp16_to_fp32 etc. call these. */
static inline uint32_t ct_f32_bits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
static inline float ct_bits_f32(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }

/* Exact decode, branch-free with masks so that row loops vectorize. NaN keeps its
 * payload shifted left by 13 with the quiet bit set, as the reference's float
 * multiply does on x86 and ARM. */
static inline float ct_fp16_to_fp32_inline(ct_fp16 h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7FFFu;
    const uint32_t is_infnan = 0u - (uint32_t)(em >= 0x7C00u);
    const uint32_t is_normal = 0u - (uint32_t)(em >= 0x0400u);
    const uint32_t quiet = (uint32_t)((em & 0x3FFu) != 0u) << 22;
    const uint32_t normal = (em << 13) + (UINT32_C(112) << 23);
    const uint32_t infnan = (em << 13) | UINT32_C(0x7F800000) | quiet;
    const uint32_t subnormal = ct_f32_bits((float)(int32_t)em * 0x1p-24f); /* exact for em < 2^10 */
    const uint32_t r = (infnan & is_infnan) | (normal & is_normal & ~is_infnan) | (subnormal & ~is_normal);
    return ct_bits_f32(sign | r);
}

/* Round to nearest even, branch-free. Normal halves round the 13 dropped bits in
 * integer arithmetic (a carry into the exponent is the right result); subnormal
 * halves round |x|*2^24 to an integer by adding 2^23 in the default FP rounding
 * mode (the multiply is exact). */
static inline ct_fp16 ct_fp32_to_fp16_inline(float f) {
    const uint32_t x = ct_f32_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7FFFFFFFu;
    const uint32_t v = ax - (UINT32_C(112) << 23);
    const uint32_t normal = (v + 0x0FFFu + ((v >> 13) & 1u)) >> 13;
    const uint32_t subnormal = ct_f32_bits(ct_bits_f32(ax) * 0x1p24f + 0x1p23f) & 0x7FFu;
    const uint32_t is_normal = 0u - (uint32_t)(ax >= 0x38800000u); /* >= 2^-14 */
    const uint32_t is_inf = 0u - (uint32_t)(ax >= 0x477FF000u);    /* >= 65520 rounds to inf */
    const uint32_t is_nan = 0u - (uint32_t)(ax > 0x7F800000u);
    uint32_t r = (normal & is_normal) | (subnormal & ~is_normal);
    r = (r & ~is_inf) | (0x7C00u & is_inf);
    r = (r & ~is_nan) | (0x7E00u & is_nan);
    return (ct_fp16)(sign | r);
}

static inline float ct_bf16_to_fp32_inline(ct_bf16 h) { return ct_bits_f32((uint32_t)h << 16); }

static inline ct_bf16 ct_fp32_to_bf16_inline(float f) {
    const uint32_t u = ct_f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (ct_bf16)((u >> 16) | 0x0040u);
    return (ct_bf16)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* One element of an F16 (else F32) tensor as a float, and back (round to nearest even). */
static inline float ct_load_f32_or_f16(ct_type t, const char *p) {
    if (t == CT_TYPE_F16) {
        ct_fp16 h;
        memcpy(&h, p, sizeof h);
        return ct_fp16_to_fp32_inline(h);
    }
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void ct_store_f32_or_f16(ct_type t, char *p, float v) {
    if (t == CT_TYPE_F16) {
        const ct_fp16 h = ct_fp32_to_fp16_inline(v);
        memcpy(p, &h, sizeof h);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

/* MUL_MAT's int8 copy of a quantized src0's src1 (the CPU's ct_block_qy, the OpenCL
 * 8-bit path's work memory, the same bytes): blocks of 32 values, in groups of
 * ct_qy_group(src0 type) blocks that share one scale, the largest |x| of the group over
 * 127 (a group holding a NaN or an infinity gives each block its own). 8 blocks (256
 * values, a super-block) for Q4_K, Q5_K and Q6_K, whose CPU kernels then add a
 * super-block's integer sums before one float multiply; 1 for the other types. */
#define CT_QY_GROUP 8
static inline int ct_qy_group(ct_type t) {
    return t == CT_TYPE_Q4_K || t == CT_TYPE_Q5_K || t == CT_TYPE_Q6_K ? CT_QY_GROUP : 1;
}

/* The three float types (CPY converts among them without quantizing). */
static inline bool ct_type_is_float(ct_type t) { return t == CT_TYPE_F32 || t == CT_TYPE_F16 || t == CT_TYPE_BF16; }

/* Unchecked dequantizers, one per type, for the CPU backend's inner loops:
 * n elements (a whole number of blocks, n >= 0), src and dst not overlapping.
 * ct_dequantize_row checks its arguments and calls these. */
typedef void (*ct_dequantize_fn)(const void *restrict src, float *restrict dst, int64_t n);
/* NULL when ct_type_can_dequantize(type) is false. */
ct_dequantize_fn ct_get_dequantize_fn(ct_type type);

void ct_dequantize_row_f32(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_f16(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_bf16(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q4_0(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q4_1(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q5_0(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q5_1(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q8_0(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_iq4_nl(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q2_K(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q3_K(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q4_K(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q5_K(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q6_K(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_q8_K(const void *restrict src, float *restrict dst, int64_t n);
void ct_dequantize_row_iq4_xs(const void *restrict src, float *restrict dst, int64_t n);

/* Unchecked quantizers, one per type with ct_type_can_quantize: n floats (a whole
 * number of blocks, n >= 0) into dst at any alignment, src and dst not overlapping.
 * ct_quantize_row checks its arguments and calls these. NULL for other types. */
typedef void (*ct_quantize_fn)(const float *restrict src, void *restrict dst, int64_t n);
ct_quantize_fn ct_get_quantize_fn(ct_type type);

/* Run-time dispatch: ct_get_quantize_fn, ct_get_dequantize_fn and the fp16/bf16 row
 * functions use the AVX2+F16C kernels of convert_avx2.c and quantize_avx2.c where the
 * CPU has them. Both paths give the same bytes; the test hook forces the portable C
 * code (true) or returns to the automatic choice (false). */
void ct_types_force_portable(bool portable);
bool ct_types_use_avx2(void);

/* The AVX2 kernels; NULL where the build has none or the type has no AVX2 kernel.
 * They do not check the CPU: callers go through ct_types_use_avx2. */
ct_quantize_fn ct_quantize_fn_avx2(ct_type type);
ct_dequantize_fn ct_dequantize_fn_avx2(ct_type type);
/* The block quantizers of quantize_avx2.c (Q8_0, Q4_x, Q5_x, IQ4_NL), reached through
 * ct_quantize_fn_avx2; NULL for other types or where the build has none. */
ct_quantize_fn ct_quantize_block_fn_avx2(ct_type type);

/* The portable block quantizers of quantize.c; the AVX2 ones hand them the blocks that
 * hold NaN or inf or have a subnormal scale. */
void ct_quantize_q8_0_portable(const float *restrict x, void *restrict vy, int64_t n);
void ct_quantize_q4_0_portable(const float *restrict x, void *restrict vy, int64_t n);
void ct_quantize_q4_1_portable(const float *restrict x, void *restrict vy, int64_t n);
void ct_quantize_q5_0_portable(const float *restrict x, void *restrict vy, int64_t n);
void ct_quantize_q5_1_portable(const float *restrict x, void *restrict vy, int64_t n);
void ct_quantize_iq4_nl_portable(const float *restrict x, void *restrict vy, int64_t n);
/* The super-block quantizers of quantize_k.c (Q2_K..Q6_K, Q8_K, IQ4_XS), portable C on
 * every CPU; NULL for other types. */
ct_quantize_fn ct_quantize_fn_k(ct_type type);


#endif
