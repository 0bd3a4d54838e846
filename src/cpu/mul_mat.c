/* MUL_MAT on the CPU: dst[i0,i1,i2,i3] = sum_k a[k,i0,i2/r2,i3/r3] * b[k,i1,i2,i3].
 *
 * As in ggml, b (src1) is converted once per node into the dot-product type in
 * the shared scratch (threads split the rows, then meet at a barrier): 32-value
 * int8 blocks with a float scale for quantized a (one scale per 256 values for
 * Q4_K, Q5_K and Q6_K: ct_qy_group), F32 for float a (nothing when
 * b is F32 with packed rows; F16 b is widened, other b rows gathered). The output is then cut into
 * tiles of a-rows x b-rows that threads take in turn. The dot kernels take up
 * to CT_DOT_NY b-rows at once and unpack each a block once for all of them, and
 * a decode batch (a few b-rows) is one tile, so the weights stream from memory
 * once per node. */
#include "cpu/cpu_ops.h"
#include "cpu/simd.h"
#include "types/types_internal.h"

#include <stdatomic.h>
#include <string.h>

static atomic_int max_simd = CT_CPU_SIMD_AVX512;

void ct_cpu_mul_mat_max_simd(ct_cpu_simd max) { atomic_store(&max_simd, (int)max); }


/* The quantized src0 types are those with a dot kernel (src/cpu/vec_dot.c's table). */
static bool is_quant_type(ct_type t) { return ct_cpu_dot_q_portable(t) != NULL; }

/* Scratch bytes for the converted b; 0 when float a reads packed F32 b rows in place.
 * F16 b is widened to F32 (exact) first, as ggml-cpu does for F32 a; with F16 or
 * BF16 a ggml-cpu would round F32 b to a's type, ctensor keeps it F32 either way. */
static bool work_bytes(const ct_tensor *dst, size_t *out) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    int64_t nr1;
    if (!ct_mul_i64(b->ne[1], b->ne[2], &nr1) || !ct_mul_i64(nr1, b->ne[3], &nr1)) return false;
    size_t row;
    if (ct_type_is_float(a->type)) {
        if (b->type == CT_TYPE_F32 && b->nb[0] == sizeof(float)) {
            *out = 0;
            return true;
        }
        if (!ct_mul_size((size_t)b->ne[0], sizeof(float), &row)) return false;
    } else {
        row = (size_t)(b->ne[0] / CT_QY_BLOCK) * sizeof(ct_block_qy);
    }
    return ct_mul_size(row, (size_t)nr1, out);
}

bool ct_cpu_mul_mat_supported(const ct_tensor *op) {
    if (!op || op->op != CT_OP_MUL_MAT || op->type != CT_TYPE_F32) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1];
    if (!a || !b || (b->type != CT_TYPE_F32 && b->type != CT_TYPE_F16)) return false;
    if (!ct_type_is_float(a->type) && !is_quant_type(a->type)) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (a->ne[i] < 0 || b->ne[i] < 0) return false;
    }
    const int64_t blck = ct_type_block_size(a->type);
    if (a->ne[0] != b->ne[0] || blck <= 0 || a->ne[0] % blck != 0) return false;
    if (a->nb[0] != ct_type_size(a->type)) return false; /* blocks of a row packed (not transposed) */
    for (int i = 2; i < 4; i++) {
        if (a->ne[i] == 0 ? b->ne[i] != 0 : b->ne[i] % a->ne[i] != 0) return false;
    }
    if (op->ne[0] != a->ne[1] || op->ne[1] != b->ne[1] || op->ne[2] != b->ne[2] || op->ne[3] != b->ne[3])
        return false;
    size_t ws;
    return work_bytes(op, &ws);
}

size_t ct_cpu_mul_mat_work_size(const ct_tensor *dst, int n_threads) {
    CT_UNUSED(n_threads);
    size_t ws;
    if (!ct_cpu_mul_mat_supported(dst) || !work_bytes(dst, &ws)) return 0;
    return ws;
}

typedef struct mm_kernels {
    ct_dot_f_fn dot_f;
    ct_dot_q_fn dot_q;
    ct_quantize_qy_fn quantize;
} mm_kernels;

static mm_kernels select_kernels(ct_type type) {
    mm_kernels k = {NULL, NULL, ct_cpu_quantize_qy_portable};
    const int max = atomic_load(&max_simd);
    if (max >= CT_CPU_SIMD_AVX512) {
        k.dot_f = ct_cpu_dot_f_avx512(type);
        k.dot_q = ct_cpu_dot_q_avx512(type);
    }
    if (max >= CT_CPU_SIMD_AVX2) {
        if (!k.dot_f) k.dot_f = ct_cpu_dot_f_avx2(type);
        if (!k.dot_q) k.dot_q = ct_cpu_dot_q_avx2(type);
        ct_quantize_qy_fn q = ct_cpu_quantize_qy_avx2();
        if (q) k.quantize = q;
    }
    if (!k.dot_f) k.dot_f = ct_cpu_dot_f_portable(type);
    if (!k.dot_q) k.dot_q = ct_cpu_dot_q_portable(type);
    return k;
}

/* a whole group of blocks sharing one d (rows of Q4_K, Q5_K and Q6_K hold whole groups) */
#define GATHER_BLOCKS CT_QY_GROUP

/* Element i of a b row (F32 or F16) at stride nb10. */
static inline float b_elem(const char *src, size_t nb10, bool f16, int64_t i) {
    if (f16) {
        ct_fp16 h;
        memcpy(&h, src + (size_t)i * nb10, sizeof h);
        return ct_fp16_to_fp32_inline(h);
    }
    float f;
    memcpy(&f, src + (size_t)i * nb10, sizeof f);
    return f;
}

/* One b row (k elements at stride nb10, F32 or F16) into the dot-product type at out. */
static void convert_row(const char *src, size_t nb10, bool f16, int64_t k, bool to_float, ct_quantize_qy_fn quantize,
                        int group, void *out) {
    if (to_float) {
        float *o = out;
        for (int64_t i = 0; i < k; i++) o[i] = b_elem(src, nb10, f16, i);
        return;
    }
    /* gathered through a small aligned buffer: b rows may be strided or unaligned */
    float tmp[GATHER_BLOCKS * CT_QY_BLOCK];
    ct_block_qy *y = out;
    const int64_t nb = k / CT_QY_BLOCK;
    for (int64_t ib = 0; ib < nb; ib += GATHER_BLOCKS) {
        const int64_t n = nb - ib < GATHER_BLOCKS ? nb - ib : GATHER_BLOCKS;
        const char *s = src + (size_t)(ib * CT_QY_BLOCK) * nb10;
        if (!f16 && nb10 == sizeof(float)) {
            memcpy(tmp, s, (size_t)n * CT_QY_BLOCK * sizeof(float));
        } else {
            for (int64_t i = 0; i < n * CT_QY_BLOCK; i++) tmp[i] = b_elem(s, nb10, f16, i);
        }
        quantize(tmp, y + ib, n, group);
    }
}

/* A tile of a-rows and one of b-rows each take about this many bytes, so that
 * both stay in a core's L2 while the tile is computed. */
#define TILE_BYTES (96 * 1024)
#define TILE0_MAX 64
#define TILE1_MAX 16
/* k chunk of float a when b-rows make several groups: 4 F32 b rows of it fill half of L1 */
#define KCHUNK_F 1024

static int64_t tile_rows(size_t row_bytes, int64_t max) {
    const int64_t r = row_bytes ? (int64_t)(TILE_BYTES / row_bytes) : max;
    return r < 1 ? 1 : r > max ? max : r;
}

void ct_cpu_mul_mat(const ct_cpu_params *params, ct_tensor *dst) {
    const int ith = params->ith, nth = params->nth;
    const char *label = dst->name[0] ? dst->name : "dst";
    /* ct_cpu_mul_mat_supported, checked before the compute, computed it too */
    size_t need = 0;
    const bool need_known = work_bytes(dst, &need);
    CT_ASSERT(need_known);
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t k = a->ne[0], ne01 = a->ne[1];
    const int64_t ne11 = b->ne[1], ne12 = b->ne[2], ne13 = b->ne[3];
    const int64_t nr1 = ne11 * ne12 * ne13;
    if (ne01 == 0 || nr1 == 0) return;
    /* the compute allocated the largest ct_cpu_work_size of the graph's nodes */
    CT_ASSERT(need <= params->wsize && (need == 0 || params->wdata != NULL));
    if (!a->data || !b->data || !dst->data) {
        if (ith == 0)
            ct_cpu_set_error(params, CT_INVALID_ARGUMENT, "ct_backend_graph_compute: MUL_MAT %s: %s has no data",
                             label, !a->data ? "src0" : !b->data ? "src1" : "dst");
        return;
    }

    const bool to_float = ct_type_is_float(a->type);
    const mm_kernels kern = select_kernels(a->type);
    const int64_t r2 = ne12 / a->ne[2], r3 = ne13 / a->ne[3];
    const char *src0 = a->data, *src1 = b->data;
    char *out = dst->data;
    const size_t row1 = need / (size_t)nr1; /* bytes of one converted b row (0: none) */

    if (need > 0) {
        for (int64_t ir1 = ith; ir1 < nr1; ir1 += nth) {
            const int64_t i13 = ir1 / (ne11 * ne12), i12 = (ir1 / ne11) % ne12, i11 = ir1 % ne11;
            const char *s = src1 + i11 * b->nb[1] + i12 * b->nb[2] + i13 * b->nb[3];
            convert_row(s, b->nb[0], b->type == CT_TYPE_F16, k, to_float, kern.quantize, ct_qy_group(a->type),
                        (char *)params->wdata + (size_t)ir1 * row1);
        }
        if (nth > 1) ct_cpu_barrier(params);
    }

    /* With float a and more b-rows than one group, k is cut into chunks, so
     * that a group's b chunk stays in L1 while every a-row of the tile passes
     * over it, and the tile's a chunks stay in L2 for the next group. Partial
     * sums add up in chunk order: the result depends on the shapes only, never
     * on the thread count. Quantized a streams whole rows (faster measured:
     * its b rows are 4x smaller, and the kernels are compute-bound). */
    const int64_t blck = ct_type_block_size(a->type);
    const int64_t kc = to_float && nr1 > CT_DOT_NY ? KCHUNK_F : k;
    const size_t xc = a->nb[0] * (size_t)((k < kc ? k : kc) / blck); /* bytes of an a chunk */
    const size_t yc = (size_t)(k < kc ? k : kc) * (to_float ? sizeof(float) : sizeof(ct_block_qy) / CT_QY_BLOCK);
    /* Whole groups of b-rows per tile, and a decode batch (<= 2 groups) in one
     * tile, so that the weights come from memory once per node. */
    int64_t tile1 = tile_rows(yc, TILE1_MAX);
    tile1 = nr1 <= 2 * CT_DOT_NY ? nr1 : (tile1 + CT_DOT_NY - 1) / CT_DOT_NY * CT_DOT_NY;
    const int64_t nc1 = (nr1 + tile1 - 1) / tile1;
    /* Smaller a-tiles when there are too few tiles to keep every thread busy. */
    int64_t tile0 = tile_rows(xc, TILE0_MAX);
    /* One group of b-rows reads each a-row once: no a-tile to keep in L2, and a pass
     * over as many a-rows as the kernel takes reads the b-rows from L2 fewer times. */
    if (to_float && nr1 <= CT_DOT_NY && tile0 < CT_DOT_NX) tile0 = CT_DOT_NX;
    while (tile0 > 1 && ((ne01 + tile0 - 1) / tile0) * nc1 < 4 * (int64_t)nth) tile0 /= 2;
    const int64_t nc0 = (ne01 + tile0 - 1) / tile0;

    for (int64_t c = ith; c < nc0 * nc1; c += nth) {
        const int64_t r0 = (c % nc0) * tile0, r1 = (c / nc0) * tile1;
        const int64_t e0 = r0 + tile0 < ne01 ? r0 + tile0 : ne01;
        const int64_t e1 = r1 + tile1 < nr1 ? r1 + tile1 : nr1;
        const int64_t n1 = e1 - r1;
        const char *xs[TILE1_MAX], *ys[TILE1_MAX];
        for (int64_t g = r1; g < e1; g++) {
            const int64_t i13 = g / (ne11 * ne12), i12 = (g / ne11) % ne12, i11 = g % ne11;
            xs[g - r1] = src0 + (i12 / r2) * a->nb[2] + (i13 / r3) * a->nb[3];
            ys[g - r1] = need > 0 ? (const char *)params->wdata + (size_t)g * row1
                                  : src1 + i11 * b->nb[1] + i12 * b->nb[2] + i13 * b->nb[3];
        }
        float acc[TILE0_MAX * TILE1_MAX];
        int64_t k0 = 0;
        do { /* once at least: k = 0 gives zeros */
            const int64_t len = k - k0 < kc ? k - k0 : kc;
            const size_t xo = a->nb[0] * (size_t)(k0 / blck);
            const size_t yo = to_float ? (size_t)k0 * sizeof(float) : (size_t)(k0 / CT_QY_BLOCK) * sizeof(ct_block_qy);
            /* groups of up to CT_DOT_NY b-rows that read the same a matrix */
            for (int64_t g = 0; g < n1;) {
                const void *y[CT_DOT_NY];
                const ct_block_qy *yq[CT_DOT_NY];
                const int64_t g0 = g;
                int ny = 0;
                for (; g < n1 && ny < CT_DOT_NY && xs[g] == xs[g0]; g++, ny++) {
                    y[ny] = ys[g] + yo;
                    yq[ny] = y[ny];
                }
                for (int64_t ir0 = r0; ir0 < e0;) {
                    float v[CT_DOT_NX * CT_DOT_NY];
                    const char *x = xs[g0] + ir0 * a->nb[1] + xo;
                    const int nx = e0 - ir0 < CT_DOT_NX ? (int)(e0 - ir0) : CT_DOT_NX;
                    if (to_float) kern.dot_f(len, x, a->nb[1], nx, y, ny, v);
                    else kern.dot_q(len / CT_QY_BLOCK, x, a->nb[1], nx, yq, ny, v);
                    for (int r = 0; r < nx; r++, ir0++) {
                        float *o = acc + (ir0 - r0) * TILE1_MAX + g0;
                        for (int j = 0; j < ny; j++) o[j] = k0 == 0 ? v[r * ny + j] : o[j] + v[r * ny + j];
                    }
                }
            }
            k0 += len;
        } while (k0 < k);
        for (int64_t g = r1; g < e1; g++) {
            const int64_t i13 = g / (ne11 * ne12), i12 = (g / ne11) % ne12, i11 = g % ne11;
            char *d = out + i11 * dst->nb[1] + i12 * dst->nb[2] + i13 * dst->nb[3];
            for (int64_t ir0 = r0; ir0 < e0; ir0++)
                memcpy(d + ir0 * dst->nb[0], &acc[(ir0 - r0) * TILE1_MAX + (g - r1)], sizeof(float));
        }
    }
}
