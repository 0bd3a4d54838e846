/* GET_ROWS: dst[:, i10, i11, i12] = dequant(src0[:, src1[i10, i11, i12], i11, i12]). */
#include "cpu/cpu_ops.h"
#include "cpu/stream.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <string.h>

/* Floats of scratch for rows that cannot be dequantized straight into dst (a multiple of every block size). */
#define TMP_FLOATS 1024

bool ct_cpu_get_rows_supported(const ct_tensor *op) { return ct_get_rows_types_supported(op); }

static inline int32_t load_i32(const char *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Every thread checks every index, so that none writes before all are known good
 * and no barrier is needed; thread 0 reports the first bad one in index order. */
static bool indices_ok(const ct_cpu_params *params, const ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t ne01 = a->ne[1];
    for (int64_t i12 = 0; i12 < b->ne[2]; i12++) {
        for (int64_t i11 = 0; i11 < b->ne[1]; i11++) {
            const char *p = (const char *)b->data + (size_t)i11 * b->nb[1] + (size_t)i12 * b->nb[2];
            const size_t nb10 = b->nb[0];
            int bad = 0;
            for (int64_t i10 = 0; i10 < b->ne[0]; i10++) {
                const int32_t r = load_i32(p + (size_t)i10 * nb10);
                bad |= (r < 0) | ((int64_t)r >= ne01);
            }
            if (!bad) continue;
            for (int64_t i10 = 0; i10 < b->ne[0]; i10++) {
                const int32_t r = load_i32(p + (size_t)i10 * nb10);
                if (r >= 0 && (int64_t)r < ne01) continue;
                if (params->ith == 0)
                    ct_cpu_set_error(params, CT_INDEX_OUT_OF_RANGE,
                                     "ct_backend_graph_compute: GET_ROWS '%s': index %s[%lld, %lld, %lld] = %d is "
                                     "outside [0, %lld), the rows of %s",
                                     dst->name[0] ? dst->name : "dst", b->name[0] ? b->name : "src1",
                                     (long long)i10, (long long)i11, (long long)i12, (int)r, (long long)ne01,
                                     a->name[0] ? a->name : "src0");
                return false;
            }
        }
    }
    return true;
}

/* Same-size element copy with arbitrary strides (F32 and I32 rows keep their bits). */
static void copy_row_4(const char *src, size_t nb00, char *dst, size_t nb0, int64_t n) {
    if (nb00 == 4 && nb0 == 4) {
        memcpy(dst, src, (size_t)n * 4);
        return;
    }
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * nb0, src + (size_t)i * nb00, 4);
}

/* Dequantizes a row whose elements or destination are strided, through scratch. */
static void dequant_row_strided(ct_type type, ct_dequantize_fn deq, const char *src, size_t nb00, float *tmp,
                                char *dst, size_t nb0, int64_t n) {
    const int64_t blck = ct_type_block_size(type);
    const size_t ts = ct_type_size(type);
    const bool packed = blck > 1 || nb00 == ts;
    for (int64_t i0 = 0; i0 < n; i0 += TMP_FLOATS) {
        const int64_t m = n - i0 < TMP_FLOATS ? n - i0 : TMP_FLOATS;
        if (packed) {
            deq(src + (size_t)(i0 / blck) * ts, tmp, m);
        } else if (type == CT_TYPE_F16) {
            for (int64_t i = 0; i < m; i++) {
                ct_fp16 h;
                memcpy(&h, src + (size_t)(i0 + i) * nb00, sizeof h);
                tmp[i] = ct_fp16_to_fp32_inline(h);
            }
        } else { /* BF16; F32 goes through copy_row_4 */
            for (int64_t i = 0; i < m; i++) {
                ct_bf16 h;
                memcpy(&h, src + (size_t)(i0 + i) * nb00, sizeof h);
                tmp[i] = ct_bf16_to_fp32_inline(h);
            }
        }
        for (int64_t i = 0; i < m; i++) memcpy(dst + (size_t)(i0 + i) * nb0, &tmp[i], sizeof(float));
    }
}

/* A row of a block type dequantized CT_CPU_STREAM_FLOATS values at a time, each step
 * first prefetching the same part of the next source row (next, NULL at the last): it
 * sits at a random index, where no hardware prefetcher looks. */
static void dequant_row_prefetch(ct_dequantize_fn deq, int64_t blck, size_t ts, const char *src, float *out,
                                 int64_t n, const char *next, bool stream) {
    stream = stream && ct_cpu_stream_ok(out);
    for (int64_t i0 = 0; i0 < n; i0 += CT_CPU_STREAM_FLOATS) {
        const int64_t m = n - i0 < CT_CPU_STREAM_FLOATS ? n - i0 : CT_CPU_STREAM_FLOATS;
        const size_t at = (size_t)(i0 / blck) * ts;
        if (next) ct_cpu_prefetch(next + at, (size_t)(m / blck) * ts, false);
        ct_cpu_dequantize_step(deq, src + at, out + i0, m, stream);
    }
}

/* The source row that destination row (i10, i11, i12) takes. */
static const char *source_row(const ct_tensor *dst, int64_t i10, int64_t i11, int64_t i12) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t r = load_i32((const char *)b->data + (size_t)i10 * b->nb[0] + (size_t)i11 * b->nb[1] +
                               (size_t)i12 * b->nb[2]);
    return (const char *)a->data + (size_t)r * a->nb[1] + (size_t)i11 * a->nb[2] + (size_t)i12 * a->nb[3];
}

void ct_cpu_get_rows(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    if (ct_is_empty(dst)) return;
    if (!indices_ok(params, dst)) return;

    const int64_t ne00 = a->ne[0], ne10 = b->ne[0], ne11 = b->ne[1], ne12 = b->ne[2];
    const size_t nb00 = a->nb[0];
    const size_t nb0 = dst->nb[0], nb1 = dst->nb[1], nb2 = dst->nb[2], nb3 = dst->nb[3];
    const ct_type type = a->type;
    const bool plain4 = type == CT_TYPE_F32 || type == CT_TYPE_I32;
    const ct_dequantize_fn deq = ct_get_dequantize_fn(type);
    const bool direct = nb0 == sizeof(float) && (ct_type_block_size(type) > 1 || nb00 == ct_type_size(type));

    /* Dst rows split evenly; each is written by one thread. */
    const int64_t nr = ne10 * ne11 * ne12;
    int64_t r0, r1;
    ct_cpu_split(nr, params, &r0, &r1);
    if (r0 >= r1) return;

    /* packed rows of block types, and of F32/F16/BF16 into a destination past the caches, go
     * through the prefetching, streaming loop (never slower on the 2-core test machine, and F16
     * 1.2x faster in some of its states: docs/TUNING.md, CPU: streamed stores); I32 and strided rows do not */
    const int64_t blck = ct_type_block_size(type);
    const size_t ts = ct_type_size(type);
    const bool stream = ct_nbytes(dst) >= CT_CPU_STREAM_MIN_BYTES;
    const bool prefetch = direct && (blck > 1 || stream) && deq != NULL;

    float tmp[TMP_FLOATS];
    int64_t i10 = r0 % ne10, i11 = (r0 / ne10) % ne11, i12 = r0 / (ne10 * ne11);
    const char *src = source_row(dst, i10, i11, i12);
    for (int64_t ir = r0; ir < r1; ir++) {
        char *out = (char *)dst->data + (size_t)i10 * nb1 + (size_t)i11 * nb2 + (size_t)i12 * nb3;
        const char *next = NULL; /* the next row's source, found now for the prefetches */
        if (ir + 1 < r1) {
            const int64_t j10 = i10 + 1 < ne10 ? i10 + 1 : 0;
            const int64_t j11 = j10 ? i11 : (i11 + 1 < ne11 ? i11 + 1 : 0);
            next = source_row(dst, j10, j11, j10 || j11 ? i12 : i12 + 1);
        }
        if (plain4 && !prefetch) {
            copy_row_4(src, nb00, out, nb0, ne00);
        } else if (prefetch) {
            dequant_row_prefetch(deq, blck, ts, src, (float *)(void *)out, ne00, next, stream);
        } else if (direct) {
            deq(src, (float *)(void *)out, ne00);
        } else {
            dequant_row_strided(type, deq, src, nb00, tmp, out, nb0, ne00);
        }
        src = next;
        if (++i10 == ne10) {
            i10 = 0;
            if (++i11 == ne11) {
                i11 = 0;
                i12++;
            }
        }
    }
    if (prefetch && stream) ct_cpu_stream_fence();
}
