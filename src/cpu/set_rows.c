/* SET_ROWS: dst[:, src1[i, i02 % ne11, i03 % ne12], i02, i03] = convert(src0[:, i, i02, i03]). */
#include "cpu/cpu_ops.h"
#include "cpu/stream.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <string.h>

/* Floats of scratch for F16 or strided source rows (a multiple of every block size). */
#define TMP_FLOATS 1024

bool ct_cpu_set_rows_supported(const ct_tensor *op) { return ct_set_rows_types_supported(op); }

static inline int64_t load_index(const char *p, bool i64) {
    if (i64) {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Every thread checks every index (each is used by some source row since ne02 % ne11 == 0 and
 * ne03 % ne12 == 0), so none writes before all are known good and no barrier is needed. In index
 * order the first bad one is also the first in source order; thread 0 reports it. */
static bool indices_ok(const ct_cpu_params *params, const ct_tensor *dst) {
    const ct_tensor *c = dst->src[1];
    const int64_t ne1 = dst->ne[1];
    const bool i64 = c->type == CT_TYPE_I64;
    const size_t nb10 = c->nb[0];
    for (int64_t i12 = 0; i12 < c->ne[2]; i12++) {
        for (int64_t i11 = 0; i11 < c->ne[1]; i11++) {
            const char *p = (const char *)c->data + (size_t)i11 * c->nb[1] + (size_t)i12 * c->nb[2];
            int bad = 0;
            if (i64) {
                for (int64_t i10 = 0; i10 < c->ne[0]; i10++) {
                    const int64_t r = load_index(p + (size_t)i10 * nb10, true);
                    bad |= (r < 0) | (r >= ne1);
                }
            } else {
                for (int64_t i10 = 0; i10 < c->ne[0]; i10++) {
                    const int64_t r = load_index(p + (size_t)i10 * nb10, false);
                    bad |= (r < 0) | (r >= ne1);
                }
            }
            if (!bad) continue;
            for (int64_t i10 = 0; i10 < c->ne[0]; i10++) {
                const int64_t r = load_index(p + (size_t)i10 * nb10, i64);
                if (r >= 0 && r < ne1) continue;
                if (params->ith == 0)
                    ct_cpu_set_error(params, CT_INDEX_OUT_OF_RANGE,
                                     "ct_backend_graph_compute: SET_ROWS '%s': index %s[%lld, %lld, %lld] = %lld "
                                     "is outside [0, %lld), the rows of dst",
                                     dst->name[0] ? dst->name : "dst", c->name[0] ? c->name : "src1",
                                     (long long)i10, (long long)i11, (long long)i12, (long long)r, (long long)ne1);
                return false;
            }
        }
    }
    return true;
}

/* Plain destinations of strided rows: the quantizer's per-element conversion, inline. */
#define PLAIN_ROW(DTYPE, EXPR)                                                                            \
    do {                                                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                                 \
            const float x = ct_load_f32_or_f16(stype, src + (size_t)i * nb00);                                      \
            const DTYPE y = (EXPR);                                                                       \
            memcpy(out + (size_t)i * sizeof(DTYPE), &y, sizeof y);                                        \
        }                                                                                                 \
    } while (0)

static bool aligned(const void *p, size_t a) { return (uintptr_t)p % a == 0; }

/* A packed F32 row quantized CT_CPU_STREAM_FLOATS values at a time, each step first
 * prefetching the same part of the next row this thread writes (next_src, next_out;
 * NULL at the last): its destination is at a random index, where no hardware
 * prefetcher looks, and without the prefetch the two threads alternated between
 * quantizing and waiting for memory (the in-cache time and the memory time added up).
 * With stream, the destination takes non-temporal stores and is not prefetched. */
static void quantize_row_prefetch(ct_quantize_fn quant, int64_t blck, size_t ts, const float *src, char *out,
                                  int64_t n, const char *next_src, char *next_out, bool stream) {
    stream = stream && ct_cpu_stream_ok(out);
    for (int64_t i0 = 0; i0 < n; i0 += CT_CPU_STREAM_FLOATS) {
        const int64_t m = n - i0 < CT_CPU_STREAM_FLOATS ? n - i0 : CT_CPU_STREAM_FLOATS;
        const size_t at = (size_t)(i0 / blck) * ts, bytes = (size_t)(m / blck) * ts;
        if (next_src) {
            ct_cpu_prefetch(next_src + (size_t)i0 * sizeof(float), (size_t)m * sizeof(float), false);
            if (!stream) ct_cpu_prefetch(next_out + at, bytes, true);
        }
        ct_cpu_quantize_step(quant, src + i0, out + at, m, bytes, stream);
    }
}

/* Writes one converted source row with the types layer's unchecked (SIMD) row functions.
 * Block formats quantize every block on its own, so quantizing the row chunk by chunk
 * gives the bytes of one ct_quantize_row over it. */
static void write_row(ct_type dtype, ct_type stype, const char *src, size_t nb00, char *out, int64_t n,
                      float *tmp) {
    const ct_quantize_fn quant = ct_get_quantize_fn(dtype);
    if (stype == CT_TYPE_F32 && nb00 == sizeof(float) && aligned(src, _Alignof(float))) {
        quant((const float *)(const void *)src, out, n);
        return;
    }
    if (stype == CT_TYPE_F16 && nb00 == sizeof(ct_fp16)) {
        const ct_dequantize_fn f16 = ct_get_dequantize_fn(CT_TYPE_F16);
        if (dtype == CT_TYPE_F32 && aligned(out, _Alignof(float))) {
            f16(src, (float *)(void *)out, n);
            return;
        }
        const int64_t blck = ct_type_block_size(dtype);
        const size_t ts = ct_type_size(dtype);
        for (int64_t i0 = 0; i0 < n; i0 += TMP_FLOATS) {
            const int64_t m = n - i0 < TMP_FLOATS ? n - i0 : TMP_FLOATS;
            f16(src + (size_t)i0 * sizeof(ct_fp16), tmp, m);
            quant(tmp, out + (size_t)(i0 / blck) * ts, m);
        }
        return;
    }
    switch (dtype) {
    case CT_TYPE_F32: PLAIN_ROW(float, x); return;
    case CT_TYPE_F16: PLAIN_ROW(ct_fp16, ct_fp32_to_fp16_inline(x)); return;
    case CT_TYPE_BF16: PLAIN_ROW(ct_bf16, ct_fp32_to_bf16_inline(x)); return;
    default: break;
    }
    const int64_t blck = ct_type_block_size(dtype);
    const size_t ts = ct_type_size(dtype);
    for (int64_t i0 = 0; i0 < n; i0 += TMP_FLOATS) {
        const int64_t m = n - i0 < TMP_FLOATS ? n - i0 : TMP_FLOATS;
        const char *s = src + (size_t)i0 * nb00;
        for (int64_t i = 0; i < m; i++) tmp[i] = ct_load_f32_or_f16(stype, s + (size_t)i * nb00);
        quant(tmp, out + (size_t)(i0 / blck) * ts, m);
    }
}

/* The first source row in [from, ne01) that this thread writes (ne01 if none): rows go to
 * threads by destination index, in groups of `group`, rotated by the batch. */
static int64_t next_owned(const char *idx, size_t nb10, bool i64, int64_t group, int64_t nth, int64_t ith,
                          int64_t batch, int64_t from, int64_t ne01) {
    for (int64_t i = from; i < ne01; i++) {
        const int64_t r = load_index(idx + (size_t)i * nb10, i64);
        if (nth == 1 || ((r / group) % nth + batch) % nth == ith) return i;
    }
    return ne01;
}

/* Duplicate indices: a destination row (r, i02, i03) belongs to one thread, chosen from r and the
 * batch, and that thread writes its rows in source order, so the source row with the largest i
 * wins, for any thread count, with no two threads writing the same row. */
void ct_cpu_set_rows(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *b = dst->src[0], *c = dst->src[1];
    if (ct_is_empty(b)) return;
    if (!indices_ok(params, dst)) return;

    const int64_t ne00 = b->ne[0], ne01 = b->ne[1], ne02 = b->ne[2], ne03 = b->ne[3];
    const int64_t ne11 = c->ne[1], ne12 = c->ne[2];
    const size_t nb00 = b->nb[0], nb01 = b->nb[1], nb02 = b->nb[2], nb03 = b->nb[3];
    const size_t nb10 = c->nb[0], nb11 = c->nb[1], nb12 = c->nb[2];
    const size_t nb1 = dst->nb[1], nb2 = dst->nb[2], nb3 = dst->nb[3];
    const bool i64 = c->type == CT_TYPE_I64;
    const int64_t ith = params->ith, nth = params->nth;

    /* Rows of less than a cache line go to threads in groups, so threads share fewer lines. */
    const size_t rs = ct_type_size(dst->type) * (size_t)(ne00 / ct_type_block_size(dst->type));
    const int64_t group = rs >= 64 || rs == 0 ? 1 : (int64_t)((64 + rs - 1) / rs);

    /* packed, aligned F32 rows: with prefetches of the next row, streamed into a destination past
     * the caches (F32 into F32 too there: never slower on the 2-core test machine, and 1.4x faster
     * in some of its states, docs/TUNING.md, CPU: streamed stores; into a smaller F32 destination the hardware
     * prefetchers keep up) */
    const ct_quantize_fn quant = ct_get_quantize_fn(dst->type);
    const int64_t blck = ct_type_block_size(dst->type);
    const size_t ts = ct_type_size(dst->type);
    const bool stream = ct_nbytes(dst) >= CT_CPU_STREAM_MIN_BYTES;
    const bool packed = b->type == CT_TYPE_F32 && (dst->type != CT_TYPE_F32 || stream) && nb00 == sizeof(float) &&
                        aligned(b->data, _Alignof(float)) && nb01 % _Alignof(float) == 0 &&
                        nb02 % _Alignof(float) == 0 && nb03 % _Alignof(float) == 0;

    float tmp[TMP_FLOATS];
    for (int64_t i03 = 0; i03 < ne03; i03++) {
        for (int64_t i02 = 0; i02 < ne02; i02++) {
            const int64_t batch = (i02 % nth + (i03 % nth) * (ne02 % nth)) % nth;
            const char *idx = (const char *)c->data + (size_t)(i02 % ne11) * nb11 + (size_t)(i03 % ne12) * nb12;
            const char *src = (const char *)b->data + (size_t)i02 * nb02 + (size_t)i03 * nb03;
            char *out = (char *)dst->data + (size_t)i02 * nb2 + (size_t)i03 * nb3;
            /* this thread's rows, each with the next one in view (packed rows prefetch it) */
            for (int64_t i = next_owned(idx, nb10, i64, group, nth, ith, batch, 0, ne01), j; i < ne01; i = j) {
                j = next_owned(idx, nb10, i64, group, nth, ith, batch, i + 1, ne01);
                const int64_t r = load_index(idx + (size_t)i * nb10, i64);
                if (!packed) {
                    write_row(dst->type, b->type, src + (size_t)i * nb01, nb00, out + (size_t)r * nb1, ne00, tmp);
                    continue;
                }
                const int64_t rj = j < ne01 ? load_index(idx + (size_t)j * nb10, i64) : 0;
                quantize_row_prefetch(quant, blck, ts, (const float *)(const void *)(src + (size_t)i * nb01),
                                      out + (size_t)r * nb1, ne00, j < ne01 ? src + (size_t)j * nb01 : NULL,
                                      out + (size_t)rj * nb1, stream);
            }
        }
    }
    if (packed && stream) ct_cpu_stream_fence();
}
