/* CPY, DUP, CONT: the source's elements in logical row-major order, written in the
 * destination's logical row-major order, converting types on the way. */
#include "cpu/cpu_ops.h"
#include "cpu/stream.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <string.h>

/* Floats of scratch between a converter and a quantizer (a multiple of every block size). */
#define TMP_FLOATS 1024

bool ct_cpu_cpy_supported(const ct_tensor *op) { return ct_cpy_types_supported(op); }

/* Copies `units` elements (blocks for block types) of ts bytes between strided runs.
 * memmove: a CPY between overlapping views of one buffer is legal input (its result is
 * unspecified, as in ggml), and must not be undefined behaviour. */
static void copy_units(const char *sp, size_t snb0, char *dp, size_t dnb0, size_t ts, int64_t units) {
    if (snb0 == ts && dnb0 == ts) {
        memmove(dp, sp, ts * (size_t)units);
        return;
    }
    switch (ts) {
    case 1:
        for (int64_t i = 0; i < units; i++) dp[(size_t)i * dnb0] = sp[(size_t)i * snb0];
        break;
    case 2:
        for (int64_t i = 0; i < units; i++) memmove(dp + (size_t)i * dnb0, sp + (size_t)i * snb0, 2);
        break;
    case 4:
        for (int64_t i = 0; i < units; i++) memmove(dp + (size_t)i * dnb0, sp + (size_t)i * snb0, 4);
        break;
    case 8:
        for (int64_t i = 0; i < units; i++) memmove(dp + (size_t)i * dnb0, sp + (size_t)i * snb0, 8);
        break;
    default:
        for (int64_t i = 0; i < units; i++) memmove(dp + (size_t)i * dnb0, sp + (size_t)i * snb0, ts);
        break;
    }
}

/* Strided runs, element by element; views at odd addresses go through memcpy. */
#define CONVERT_RUN(STYPE, DTYPE, EXPR)                                                                   \
    do {                                                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                                 \
            STYPE x;                                                                                      \
            memcpy(&x, sp + (size_t)i * snb0, sizeof x);                                                  \
            const DTYPE y = (EXPR);                                                                       \
            memcpy(dp + (size_t)i * dnb0, &y, sizeof y);                                                  \
        }                                                                                                 \
    } while (0)

/* n elements between float types (F32 -> F32 only as the tail of a dequantization). Packed runs use
 * the types layer's (SIMD) row converters, through floats where neither side is F32. */
static void convert_run(ct_type st, const char *sp, size_t snb0, ct_type dt, char *dp, size_t dnb0, int64_t n) {
    if (snb0 == ct_type_size(st) && dnb0 == ct_type_size(dt)) {
        if (st == CT_TYPE_F32 && (uintptr_t)sp % _Alignof(float) == 0) {
            ct_get_quantize_fn(dt)((const float *)(const void *)sp, dp, n);
        } else if (dt == CT_TYPE_F32 && (uintptr_t)dp % _Alignof(float) == 0) {
            ct_get_dequantize_fn(st)(sp, (float *)(void *)dp, n);
        } else {
            const ct_dequantize_fn deq = ct_get_dequantize_fn(st);
            const ct_quantize_fn quant = ct_get_quantize_fn(dt);
            float tmp[256];
            for (int64_t k = 0; k < n; k += 256) {
                const int64_t m = n - k < 256 ? n - k : 256;
                deq(sp + (size_t)k * snb0, tmp, m);
                quant(tmp, dp + (size_t)k * dnb0, m);
            }
        }
        return;
    }
    if (st == CT_TYPE_F32) {
        if (dt == CT_TYPE_F16) CONVERT_RUN(float, ct_fp16, ct_fp32_to_fp16_inline(x));
        else if (dt == CT_TYPE_BF16) CONVERT_RUN(float, ct_bf16, ct_fp32_to_bf16_inline(x));
        else CONVERT_RUN(float, float, x);
    } else if (st == CT_TYPE_F16) {
        if (dt == CT_TYPE_F32) CONVERT_RUN(ct_fp16, float, ct_fp16_to_fp32_inline(x));
        else CONVERT_RUN(ct_fp16, ct_bf16, ct_fp32_to_bf16_inline(ct_fp16_to_fp32_inline(x)));
    } else {
        if (dt == CT_TYPE_F32) CONVERT_RUN(ct_bf16, float, ct_bf16_to_fp32_inline(x));
        else CONVERT_RUN(ct_bf16, ct_fp16, ct_fp32_to_fp16_inline(ct_bf16_to_fp32_inline(x)));
    }
}

/* n floats (whole blocks of dt) into blocks of dt that are dnb0 apart. */
static void quantize_blocks(ct_type dt, const float *x, char *dp, size_t dnb0, int64_t n) {
    const size_t ts = ct_type_size(dt);
    const int64_t bd = ct_type_block_size(dt);
    const ct_quantize_fn quant = ct_get_quantize_fn(dt);
    if (dnb0 == ts) {
        quant(x, dp, n);
        return;
    }
    for (int64_t i = 0; i < n / bd; i++) quant(x + i * bd, dp + (size_t)i * dnb0, bd);
}

/* n elements (whole blocks of st) from blocks of st that are snb0 apart, into floats. */
static void dequantize_blocks(ct_dequantize_fn deq, ct_type st, const char *sp, size_t snb0, float *y, int64_t n) {
    const size_t ts = ct_type_size(st);
    const int64_t bs = ct_type_block_size(st);
    if (snb0 == ts) {
        deq(sp, y, n);
        return;
    }
    for (int64_t i = 0; i < n / bs; i++) deq(sp + (size_t)i * snb0, y + i * bs, bs);
}

/* A position in a tensor walked in logical order; ne/nb collapsed to one row when contiguous. */
typedef struct walk {
    int64_t ne[4];
    size_t nb[4];
    int64_t i[4];
    int64_t blck;
    char *data;
} walk;

static void walk_init(walk *w, const ct_tensor *t, int64_t start) {
    w->blck = ct_type_block_size(t->type);
    w->data = t->data;
    if (ct_is_contiguous(t)) {
        w->ne[0] = ct_nelements(t);
        w->ne[1] = w->ne[2] = w->ne[3] = 1;
        w->nb[0] = ct_type_size(t->type); /* nb[0] of a size-1 dim 0 is any stride */
        w->nb[1] = w->nb[2] = w->nb[3] = 0;
    } else {
        for (int k = 0; k < 4; k++) {
            w->ne[k] = t->ne[k];
            w->nb[k] = t->nb[k];
        }
    }
    if (start == 0) { /* thread 0's walk, and every walk of a one-thread node: no divisions */
        w->i[0] = w->i[1] = w->i[2] = w->i[3] = 0;
        return;
    }
    w->i[0] = start % w->ne[0];
    start /= w->ne[0];
    w->i[1] = start % w->ne[1];
    start /= w->ne[1];
    w->i[2] = start % w->ne[2];
    w->i[3] = start / w->ne[2];
}

static inline char *walk_ptr(const walk *w) {
    const int64_t b0 = w->blck == 1 ? w->i[0] : w->i[0] / w->blck; /* a 64-bit division only for blocks */
    return w->data + (size_t)b0 * w->nb[0] + (size_t)w->i[1] * w->nb[1] +
           (size_t)w->i[2] * w->nb[2] + (size_t)w->i[3] * w->nb[3];
}

static inline int64_t walk_left_in_row(const walk *w) { return w->ne[0] - w->i[0]; }

/* Moves k elements on, k <= walk_left_in_row. */
static inline void walk_advance(walk *w, int64_t k) {
    w->i[0] += k;
    if (w->i[0] < w->ne[0]) return;
    w->i[0] = 0;
    if (++w->i[1] < w->ne[1]) return;
    w->i[1] = 0;
    if (++w->i[2] < w->ne[2]) return;
    w->i[2] = 0;
    w->i[3]++;
}

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* A source whose dim 1 is packed and whose rows are strided (a transpose), into a contiguous
 * destination of the same shape, through a square tile in L1: each source row segment and each
 * destination row segment is then touched once, whole, however the large power-of-two row strides
 * of both sides alias in the cache. */
#define TILE 64

static bool is_transpose(const ct_tensor *src, const ct_tensor *dst) {
    const size_t ts = ct_type_size(src->type);
    if (src->type != dst->type || ct_type_block_size(src->type) != 1 || (ts != 2 && ts != 4)) return false;
    for (int k = 0; k < 4; k++)
        if (src->ne[k] != dst->ne[k]) return false;
    return ct_is_contiguous(dst) && src->nb[1] == ts && src->nb[0] != ts && src->ne[0] > 1 && src->ne[1] > 1;
}

/* One tile: rows r0..r1 (dim 1) by columns c0..c1 (dim 0); ts is 2 or 4. */
static void transpose_tile(const char *sp, size_t nb0, char *dp, size_t nb1, size_t ts, int64_t r0, int64_t r1,
                           int64_t c0, int64_t c1, uint32_t *buf) {
    const int64_t nr = r1 - r0, nc = c1 - c0;
    if (ts == 4) {
        for (int64_t c = 0; c < nc; c++) {
            const char *s = sp + (size_t)(c0 + c) * nb0 + (size_t)r0 * 4;
            for (int64_t r = 0; r < nr; r++) memcpy(&buf[r * TILE + c], s + (size_t)r * 4, 4);
        }
        for (int64_t r = 0; r < nr; r++) memcpy(dp + (size_t)(r0 + r) * nb1 + (size_t)c0 * 4, &buf[r * TILE], (size_t)nc * 4);
    } else {
        uint16_t *b16 = (uint16_t *)buf;
        for (int64_t c = 0; c < nc; c++) {
            const char *s = sp + (size_t)(c0 + c) * nb0 + (size_t)r0 * 2;
            for (int64_t r = 0; r < nr; r++) memcpy(&b16[r * TILE + c], s + (size_t)r * 2, 2);
        }
        for (int64_t r = 0; r < nr; r++) memcpy(dp + (size_t)(r0 + r) * nb1 + (size_t)c0 * 2, &b16[r * TILE], (size_t)nc * 2);
    }
}

/* A region of any size in tiles. */
static void transpose_region(const char *sp, size_t nb0, char *dp, size_t nb1, size_t ts, int64_t r0, int64_t r1,
                             int64_t c0, int64_t c1, uint32_t *buf) {
    for (int64_t r = r0; r < r1; r += TILE)
        for (int64_t c = c0; c < c1; c += TILE)
            transpose_tile(sp, nb0, dp, nb1, ts, r, r + TILE < r1 ? r + TILE : r1, c, c + TILE < c1 ? c + TILE : c1,
                           buf);
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include "core/cpu_features.h"
#define HAVE_AVX2_TRANSPOSE 1

/* 8 source rows of 8 floats (ls floats apart), transposed in registers. */
__attribute__((target("avx2"))) static inline void transpose8x8(const float *s, size_t ls, __m256 o[8]) {
    for (int k = 0; k < 8; k++) o[k] = _mm256_loadu_ps(s + (size_t)k * ls);
    ct_avx2_transpose8(o);
}

/* 4-byte elements, rows r0..r0+8*nr8 by columns c0..c0+16*nc16, in 8 x 16 tiles: each tile
 * writes whole 64-byte destination lines, streamed past the cache when `stream` (the
 * destination then being 32-byte aligned and too large to stay cached anyway). Only bits move. */
__attribute__((target("avx2"))) static void transpose_avx2(const char *sp, size_t nb0, char *dp, size_t nb1,
                                                          int64_t r0, int64_t nr8, int64_t c0, int64_t nc16,
                                                          bool stream) {
    for (int64_t c = 0; c < nc16; c++) {
        for (int64_t r = 0; r < nr8; r++) {
            const int64_t i0 = c0 + 16 * c, i1 = r0 + 8 * r;
            __m256 a[8], b[8];
            transpose8x8((const float *)(const void *)(sp + (size_t)i0 * nb0 + (size_t)i1 * 4), nb0 / 4, a);
            transpose8x8((const float *)(const void *)(sp + (size_t)(i0 + 8) * nb0 + (size_t)i1 * 4), nb0 / 4, b);
            char *d = dp + (size_t)i1 * nb1 + (size_t)i0 * 4;
            for (int k = 0; k < 8; k++) {
                float *dk = (float *)(void *)(d + (size_t)k * nb1);
                if (stream) {
                    _mm256_stream_ps(dk, a[k]);
                    _mm256_stream_ps(dk + 8, b[k]);
                } else {
                    _mm256_storeu_ps(dk, a[k]);
                    _mm256_storeu_ps(dk + 8, b[k]);
                }
            }
        }
    }
    if (stream) _mm_sfence();
}
#endif

/* Tiles in 512 x 512 groups, so that the pages of a group (512 source rows, 512 destination
 * rows) stay in the TLB while its tiles are copied. */
#define GROUP 512

static void copy_transposed(const ct_cpu_params *params, const ct_tensor *src, ct_tensor *dst) {
    const int64_t ne0 = src->ne[0], ne1 = src->ne[1], ne2 = src->ne[2];
    const size_t ts = ct_type_size(src->type), nb0 = src->nb[0], nb1 = dst->nb[1];
    const int64_t row_groups = (ne1 + GROUP - 1) / GROUP;
    const int64_t units = row_groups * ne2 * src->ne[3];
    int64_t u0, u1;
    ct_cpu_split(units, params, &u0, &u1);
#ifdef HAVE_AVX2_TRANSPOSE
    /* the float loads need 4-byte alignment of every element; streaming needs 32-byte rows */
    const bool avx2 = ts == 4 && ct_types_use_avx2() && ((uintptr_t)src->data | nb0 | src->nb[2] | src->nb[3]) % 4 == 0;
    const bool stream = avx2 && ct_nbytes(dst) >= ((size_t)16 << 20) &&
                        ((uintptr_t)dst->data | nb1 | dst->nb[2] | dst->nb[3]) % 32 == 0;
#else
    const bool avx2 = false;
#endif
    uint32_t buf[TILE * TILE];
    for (int64_t u = u0; u < u1; u++) {
        const int64_t g = u % row_groups, i2 = (u / row_groups) % ne2, i3 = u / (row_groups * ne2);
        const int64_t g0 = g * GROUP, g1 = g0 + GROUP < ne1 ? g0 + GROUP : ne1;
        const char *sp = (const char *)src->data + (size_t)i2 * src->nb[2] + (size_t)i3 * src->nb[3];
        char *dp = (char *)dst->data + (size_t)i2 * dst->nb[2] + (size_t)i3 * dst->nb[3];
        for (int64_t h0 = 0; h0 < ne0; h0 += GROUP) {
            const int64_t h1 = h0 + GROUP < ne0 ? h0 + GROUP : ne0;
            if (!avx2) {
                transpose_region(sp, nb0, dp, nb1, ts, g0, g1, h0, h1, buf);
                continue;
            }
#ifdef HAVE_AVX2_TRANSPOSE
            const int64_t nr8 = (g1 - g0) / 8, nc16 = (h1 - h0) / 16;
            const int64_t rf = g0 + 8 * nr8, cf = h0 + 16 * nc16;
            transpose_avx2(sp, nb0, dp, nb1, g0, nr8, h0, nc16, stream);
            transpose_region(sp, nb0, dp, nb1, ts, g0, g1, cf, h1, buf);
            transpose_region(sp, nb0, dp, nb1, ts, rf, g1, h0, cf, buf);
#endif
        }
    }
}

/* Whether the byte ranges of two contiguous tensors meet. */
static bool bytes_overlap(const ct_tensor *a, const ct_tensor *b) {
    const uintptr_t pa = (uintptr_t)a->data, pb = (uintptr_t)b->data;
    return pa < pb + ct_nbytes(b) && pb < pa + ct_nbytes(a);
}

/* Same type, src rows packed but apart (a strided view), into a contiguous dst that does not
 * overlap it: a memcpy a row, the rows split over the threads, no walk. */
static void copy_packed_rows(const ct_cpu_params *params, const ct_tensor *src, ct_tensor *dst) {
    const int64_t ne1 = src->ne[1], ne2 = src->ne[2], nr = ct_nrows(src);
    const size_t row = (size_t)src->ne[0] * ct_type_size(src->type);
    int64_t r0, r1;
    ct_cpu_split(nr, params, &r0, &r1);
    if (r0 >= r1) return;
    ct_cpu_row i = ct_cpu_row_at(r0, ne1, ne2);
    char *d = (char *)dst->data + (size_t)r0 * row;
    for (int64_t r = r0; r < r1; r++, d += row, ct_cpu_row_next(&i, ne1, ne2))
        memcpy(d, (const char *)src->data + (size_t)i.i1 * src->nb[1] + (size_t)i.i2 * src->nb[2] + (size_t)i.i3 * src->nb[3],
               row);
}

/* Contiguous src and dst of different types, dst past the caches: each thread converts whole
 * steps of CT_CPU_STREAM_FLOATS elements (a multiple of every block size, so step boundaries are
 * block boundaries on both sides) through an L1 buffer and streams them out (stream.h), so the
 * destination is written without first being read. Same bytes as the row converters. */
static void convert_packed_streamed(const ct_cpu_params *params, const ct_tensor *src, ct_tensor *dst) {
    enum { STEP = CT_CPU_STREAM_FLOATS };
    const ct_type st = src->type, dt = dst->type;
    const int64_t n_el = ct_nelements(dst), steps = (n_el + STEP - 1) / STEP;
    int64_t k0, k1;
    ct_cpu_split(steps, params, &k0, &k1);
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    const size_t tss = ct_type_size(st), tsd = ct_type_size(dt);
    const ct_dequantize_fn deq = ct_get_dequantize_fn(st);
    const ct_quantize_fn quant = ct_get_quantize_fn(dt);
    float tmp[STEP] __attribute__((aligned(16)));
    for (int64_t k = k0; k < k1; k++) {
        const int64_t e0 = k * STEP, m = min64(n_el - e0, STEP);
        const char *sp = (const char *)src->data + (size_t)(e0 / bs) * tss;
        char *dp = (char *)dst->data + (size_t)(e0 / bd) * tsd;
        if (dt == CT_TYPE_F32) {
            ct_cpu_dequantize_step(deq, sp, (float *)(void *)dp, m, ct_cpu_stream_ok(dp));
        } else if (st == CT_TYPE_F32) {
            ct_cpu_quantize_step(quant, (const float *)(const void *)sp, dp, m, (size_t)(m / bd) * tsd, true);
        } else {
            deq(sp, tmp, m);
            ct_cpu_quantize_step(quant, tmp, dp, m, (size_t)(m / bd) * tsd, true);
        }
    }
    ct_cpu_stream_fence();
}

void ct_cpu_cpy(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *src = dst->src[0];
    const ct_type st = src->type, dt = dst->type;
    const int64_t n_el = ct_nelements(dst);
    if (n_el == 0) return;

    if (st == dt && ct_is_contiguous(src) && ct_is_contiguous(dst)) {
        const size_t bytes = (size_t)(n_el / ct_type_block_size(st)) * ct_type_size(st);
        if (bytes_overlap(src, dst)) {
            /* Overlapping views (legal, see copy_units): one memmove on one thread, since
             * split chunks would read bytes another thread is writing. */
            if (params->ith == 0) memmove(dst->data, src->data, bytes);
            return;
        }
        /* Split the bytes at dst's 64-byte line boundaries, so no two threads write parts of one
         * line; outputs past the caches are streamed (stream.h). */
        const size_t off = (uintptr_t)dst->data % 64, lines = (off + bytes + 63) / 64;
        int64_t l0, l1;
        ct_cpu_split((int64_t)lines, params, &l0, &l1);
        const size_t b0 = l0 == 0 ? 0 : (size_t)l0 * 64 - off;
        const size_t b1 = (size_t)l1 * 64 - off < bytes ? (size_t)l1 * 64 - off : bytes;
        if (b1 <= b0) return;
        char *d = (char *)dst->data + b0;
        const char *s = (const char *)src->data + b0;
        if (bytes >= CT_CPU_STREAM_MIN_BYTES) {
            ct_cpu_stream_memcpy(d, s, b1 - b0);
            ct_cpu_stream_fence();
        } else {
            memcpy(d, s, b1 - b0);
        }
        return;
    }
    if (is_transpose(src, dst)) {
        copy_transposed(params, src, dst);
        return;
    }
    if (st == dt && src->nb[0] == ct_type_size(st) && ct_type_block_size(st) == 1 && ct_is_contiguous(dst) &&
        !bytes_overlap(src, dst)) {
        copy_packed_rows(params, src, dst);
        return;
    }
    if (ct_is_contiguous(src) && ct_is_contiguous(dst) && ct_nbytes(dst) >= CT_CPU_STREAM_MIN_BYTES &&
        (uintptr_t)src->data % _Alignof(float) == 0 && (uintptr_t)dst->data % _Alignof(float) == 0 &&
        !bytes_overlap(src, dst)) {
        convert_packed_streamed(params, src, dst);
        return;
    }

    /* Split the elements in whole units of both block sizes (1, 32 or 256: the larger is a multiple). */
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    const int64_t q = bs > bd ? bs : bd;
    const int64_t units = n_el / q;
    int64_t u0, u1;
    ct_cpu_split(units, params, &u0, &u1);
    if (u0 >= u1) return;
    const int64_t e1 = u1 * q;

    walk s, d;
    walk_init(&s, src, u0 * q);
    walk_init(&d, dst, u0 * q);
    const size_t ts = ct_type_size(st);
    float tmp[TMP_FLOATS];

    if (st == dt) {
        for (int64_t pos = u0 * q; pos < e1;) {
            const int64_t n = min64(min64(walk_left_in_row(&s), walk_left_in_row(&d)), e1 - pos);
            copy_units(walk_ptr(&s), s.nb[0], walk_ptr(&d), d.nb[0], ts, n / bs);
            walk_advance(&s, n);
            walk_advance(&d, n);
            pos += n;
        }
    } else if (ct_type_is_float(st) && ct_type_is_float(dt)) {
        for (int64_t pos = u0 * q; pos < e1;) {
            const int64_t n = min64(min64(walk_left_in_row(&s), walk_left_in_row(&d)), e1 - pos);
            convert_run(st, walk_ptr(&s), s.nb[0], dt, walk_ptr(&d), d.nb[0], n);
            walk_advance(&s, n);
            walk_advance(&d, n);
            pos += n;
        }
    } else if (ct_type_is_float(st)) {
        /* Into blocks: every run is whole destination blocks (src ne0 and dst ne0 are multiples of bd). */
        for (int64_t pos = u0 * q; pos < e1;) {
            const int64_t n = min64(min64(walk_left_in_row(&s), walk_left_in_row(&d)), e1 - pos);
            const char *sp = walk_ptr(&s);
            char *dp = walk_ptr(&d);
            if (st == CT_TYPE_F32 && s.nb[0] == sizeof(float) && (uintptr_t)sp % _Alignof(float) == 0) {
                quantize_blocks(dt, (const float *)(const void *)sp, dp, d.nb[0], n);
            } else {
                for (int64_t k = 0; k < n; k += TMP_FLOATS) {
                    const int64_t m = min64(n - k, TMP_FLOATS);
                    convert_run(st, sp + (size_t)k * s.nb[0], s.nb[0], CT_TYPE_F32, (char *)tmp, sizeof(float), m);
                    quantize_blocks(dt, tmp, dp + (size_t)(k / bd) * d.nb[0], d.nb[0], m);
                }
            }
            walk_advance(&s, n);
            walk_advance(&d, n);
            pos += n;
        }
    } else {
        /* From blocks: dequantize whole source blocks, then spread them over destination rows. */
        const ct_dequantize_fn deq = ct_get_dequantize_fn(st);
        for (int64_t pos = u0 * q; pos < e1;) {
            const int64_t n = min64(min64(walk_left_in_row(&s), e1 - pos), TMP_FLOATS);
            char *dp = walk_ptr(&d);
            if (dt == CT_TYPE_F32 && d.nb[0] == sizeof(float) && walk_left_in_row(&d) >= n &&
                (uintptr_t)dp % _Alignof(float) == 0) {
                /* straight into a packed F32 run, without the pass through tmp */
                dequantize_blocks(deq, st, walk_ptr(&s), s.nb[0], (float *)(void *)dp, n);
                walk_advance(&d, n);
                walk_advance(&s, n);
                pos += n;
                continue;
            }
            dequantize_blocks(deq, st, walk_ptr(&s), s.nb[0], tmp, n);
            for (int64_t k = 0; k < n;) {
                const int64_t m = min64(n - k, walk_left_in_row(&d));
                convert_run(CT_TYPE_F32, (const char *)(tmp + k), sizeof(float), dt, walk_ptr(&d), d.nb[0], m);
                walk_advance(&d, m);
                k += m;
            }
            walk_advance(&s, n);
            pos += n;
        }
    }
}
