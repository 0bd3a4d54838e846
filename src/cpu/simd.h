/* Internal interface of the CPU MUL_MAT dot products: the portable kernels
 * (vec_dot.c), the AVX2 and AVX-512 kernels (vec_dot_avx2.c, vec_dot_avx512.c,
 * chosen at run time) and the test hook that caps the path. */
#ifndef CT_CPU_SIMD_H
#define CT_CPU_SIMD_H

#include "ctensor.h"

#include <stdbool.h>
#include <stdint.h>

/* src1 of a quantized MUL_MAT, converted once per node: x_j ~= d * qs[j] with
 * qs in [-127, 127] and s = sum of qs (an integer, exact as float; for the
 * min/offset terms). A float d (not ggml's fp16) keeps the conversion error at
 * the int8 rounding alone. Blocks come in groups of ct_qy_group(src0 type) that
 * share one d (types/types_internal.h); the kernels that rely on it check that a
 * group's d are equal and take the per-block way where not. */
#define CT_QY_BLOCK 32
typedef struct ct_block_qy {
    float d;
    float s;
    int8_t qs[CT_QY_BLOCK];
} ct_block_qy;

/* Multi-row dot products: out[j] = dot(x, y[j]) for j < ny, 1 <= ny <= CT_DOT_NY.
 * x is unpacked once per block for all ny rows, so the weights stream from
 * memory once however many src1 rows there are (batched decode). A row's
 * arithmetic depends on ny at most (never on nx below), and MUL_MAT's grouping
 * depends on the shapes only, so any thread split gives the same bytes. */
#define CT_DOT_NY 4
/* Float src0 takes nx = 1 to CT_DOT_NX rows x, x + bx, ... at once (each y load
 * then feeds nx FMAs; the AVX-512 kernel takes up to 8 at a time, the AVX2 and
 * portable kernels two or one): out[r * ny + j] = dot(x_r, y[j]). x rows are k elements (F32, F16 or
 * BF16); y[j]: k floats. Either may be unaligned. */
#define CT_DOT_NX 8
typedef void (*ct_dot_f_fn)(int64_t k, const void *x, size_t bx, int nx, const void *const *y, int ny, float *out);
/* Quantized src0 alike: nx = 1 to CT_DOT_NX rows x, x + bx, ... of nb * 32 elements each;
 * y[j]: nb converted src1 blocks; out[r * ny + j] = dot(x_r, y[j]). The AVX-512 Q4_0 and
 * Q8_0 kernels take two rows a pass where ny >= 2 (each y load feeds both), the others one. */
typedef void (*ct_dot_q_fn)(int64_t nb, const void *x, size_t bx, int nx, const ct_block_qy *const *y, int ny,
                            float *out);
/* Converts nb * 32 contiguous floats into nb blocks, in groups of group (1 or
 * CT_QY_GROUP, dividing nb) blocks that share one d. */
typedef void (*ct_quantize_qy_fn)(const float *x, ct_block_qy *y, int64_t nb, int group);

/* Portable C kernels; NULL for a type without one. */
ct_dot_f_fn ct_cpu_dot_f_portable(ct_type type);
ct_dot_q_fn ct_cpu_dot_q_portable(ct_type type);
void ct_cpu_quantize_qy_portable(const float *x, ct_block_qy *y, int64_t nb, int group);

/* AVX2+FMA+F16C kernels; NULL where the build or the CPU lacks them or the type has none. */
ct_dot_f_fn ct_cpu_dot_f_avx2(ct_type type);
ct_dot_q_fn ct_cpu_dot_q_avx2(ct_type type);
ct_quantize_qy_fn ct_cpu_quantize_qy_avx2(void);

/* AVX-512 (F, BW, VL, VNNI) kernels, for F16, BF16, Q4_0 and Q8_0 only; NULL as above. */
ct_dot_f_fn ct_cpu_dot_f_avx512(ct_type type);
ct_dot_q_fn ct_cpu_dot_q_avx512(ct_type type);

/* The SIMD paths of MUL_MAT, lowest first. */
typedef enum ct_cpu_simd { CT_CPU_SIMD_PORTABLE, CT_CPU_SIMD_AVX2, CT_CPU_SIMD_AVX512 } ct_cpu_simd;

/* Test hook: MUL_MAT takes no path above max (CT_CPU_SIMD_AVX512: the best the CPU has, the default). */
void ct_cpu_mul_mat_max_simd(ct_cpu_simd max);

#endif
