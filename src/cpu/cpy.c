/* CPY, DUP, CONT: the source's elements in logical row-major order, written in the
 * destination's logical row-major order, converting types on the way. */
#include "cpu/cpu_ops.h"
#include "types/types_internal.h"

#include <string.h>

/* Floats of scratch between a converter and a quantizer (a multiple of every block size). */
#define TMP_FLOATS 1024

static bool is_float(ct_type t) { return t == CT_TYPE_F32 || t == CT_TYPE_F16 || t == CT_TYPE_BF16; }

bool ct_cpu_cpy_supported(const ct_tensor *op) {
    if (!op || (op->op != CT_OP_CPY && op->op != CT_OP_DUP && op->op != CT_OP_CONT)) return false;
    const ct_tensor *src = op->src[0];
    if (!src || !ct_type_is_valid(src->type) || !ct_type_is_valid(op->type)) return false;
    if (ct_nelements(src) != ct_nelements(op)) return false;
    const ct_type st = src->type, dt = op->type;
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    /* Rows of whole blocks, so that blocks are the units walked. */
    if (src->ne[0] % bs != 0 || op->ne[0] % bd != 0) return false;
    if (st == dt) return true;
    if (is_float(st) && is_float(dt)) return true;
    /* A destination block is filled from one source row. */
    if (is_float(st) && ct_type_can_quantize(dt)) return src->ne[0] % bd == 0;
    if (ct_get_dequantize_fn(st) != NULL && is_float(dt)) return true;
    return false;
}

/* Copies `units` elements (blocks for block types) of ts bytes between strided runs. */
static void copy_units(const char *sp, size_t snb0, char *dp, size_t dnb0, size_t ts, int64_t units) {
    if (snb0 == ts && dnb0 == ts) {
        memcpy(dp, sp, ts * (size_t)units);
        return;
    }
    switch (ts) {
    case 1:
        for (int64_t i = 0; i < units; i++) dp[(size_t)i * dnb0] = sp[(size_t)i * snb0];
        break;
    case 2:
        for (int64_t i = 0; i < units; i++) memcpy(dp + (size_t)i * dnb0, sp + (size_t)i * snb0, 2);
        break;
    case 4:
        for (int64_t i = 0; i < units; i++) memcpy(dp + (size_t)i * dnb0, sp + (size_t)i * snb0, 4);
        break;
    case 8:
        for (int64_t i = 0; i < units; i++) memcpy(dp + (size_t)i * dnb0, sp + (size_t)i * snb0, 8);
        break;
    default:
        for (int64_t i = 0; i < units; i++) memcpy(dp + (size_t)i * dnb0, sp + (size_t)i * snb0, ts);
        break;
    }
}

/* Packed, aligned runs: typed restrict loops, which the compiler vectorizes. */
#define DEF_PACKED(NAME, STYPE, DTYPE, EXPR)                                                              \
    static void NAME(const STYPE *restrict s, DTYPE *restrict d, int64_t n) {                             \
        for (int64_t i = 0; i < n; i++) {                                                                 \
            const STYPE x = s[i];                                                                         \
            d[i] = (EXPR);                                                                                \
        }                                                                                                 \
    }
DEF_PACKED(packed_f32_f16, float, ct_fp16, ct_fp32_to_fp16_inline(x))
DEF_PACKED(packed_f32_bf16, float, ct_bf16, ct_fp32_to_bf16_inline(x))
DEF_PACKED(packed_f16_f32, ct_fp16, float, ct_fp16_to_fp32_inline(x))
DEF_PACKED(packed_f16_bf16, ct_fp16, ct_bf16, ct_fp32_to_bf16_inline(ct_fp16_to_fp32_inline(x)))
DEF_PACKED(packed_bf16_f32, ct_bf16, float, ct_bf16_to_fp32_inline(x))
DEF_PACKED(packed_bf16_f16, ct_bf16, ct_fp16, ct_fp32_to_fp16_inline(ct_bf16_to_fp32_inline(x)))
DEF_PACKED(packed_copy_f32, float, float, x)

/* One loop per (source, destination) pair; views at odd addresses and strided runs go through memcpy. */
#define CONVERT_RUN(STYPE, DTYPE, EXPR, PACKED)                                                           \
    do {                                                                                                  \
        if (snb0 == sizeof(STYPE) && dnb0 == sizeof(DTYPE) && (uintptr_t)sp % _Alignof(STYPE) == 0 &&    \
            (uintptr_t)dp % _Alignof(DTYPE) == 0) {                                                       \
            PACKED((const STYPE *)(const void *)sp, (DTYPE *)(void *)dp, n);                              \
        } else {                                                                                          \
            for (int64_t i = 0; i < n; i++) {                                                             \
                STYPE x;                                                                                  \
                memcpy(&x, sp + (size_t)i * snb0, sizeof x);                                              \
                const DTYPE y = (EXPR);                                                                   \
                memcpy(dp + (size_t)i * dnb0, &y, sizeof y);                                              \
            }                                                                                             \
        }                                                                                                 \
    } while (0)

/* n elements between float types (F32 -> F32 only as the tail of a dequantization). */
static void convert_run(ct_type st, const char *sp, size_t snb0, ct_type dt, char *dp, size_t dnb0, int64_t n) {
    if (st == CT_TYPE_F32) {
        if (dt == CT_TYPE_F16) CONVERT_RUN(float, ct_fp16, ct_fp32_to_fp16_inline(x), packed_f32_f16);
        else if (dt == CT_TYPE_BF16) CONVERT_RUN(float, ct_bf16, ct_fp32_to_bf16_inline(x), packed_f32_bf16);
        else CONVERT_RUN(float, float, x, packed_copy_f32);
    } else if (st == CT_TYPE_F16) {
        if (dt == CT_TYPE_F32) CONVERT_RUN(ct_fp16, float, ct_fp16_to_fp32_inline(x), packed_f16_f32);
        else CONVERT_RUN(ct_fp16, ct_bf16, ct_fp32_to_bf16_inline(ct_fp16_to_fp32_inline(x)), packed_f16_bf16);
    } else {
        if (dt == CT_TYPE_F32) CONVERT_RUN(ct_bf16, float, ct_bf16_to_fp32_inline(x), packed_bf16_f32);
        else CONVERT_RUN(ct_bf16, ct_fp16, ct_fp32_to_fp16_inline(ct_bf16_to_fp32_inline(x)), packed_bf16_f16);
    }
}

/* n floats (whole blocks of dt) into blocks of dt that are dnb0 apart. */
static void quantize_blocks(ct_type dt, const float *x, char *dp, size_t dnb0, int64_t n) {
    const size_t ts = ct_type_size(dt);
    const int64_t bd = ct_type_block_size(dt);
    if (dnb0 == ts) {
        (void)ct_quantize_row(dt, x, dp, n);
        return;
    }
    for (int64_t i = 0; i < n / bd; i++) (void)ct_quantize_row(dt, x + i * bd, dp + (size_t)i * dnb0, bd);
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
        w->nb[0] = t->nb[0];
        w->nb[1] = w->nb[2] = w->nb[3] = 0;
    } else {
        for (int k = 0; k < 4; k++) {
            w->ne[k] = t->ne[k];
            w->nb[k] = t->nb[k];
        }
    }
    w->i[0] = start % w->ne[0];
    start /= w->ne[0];
    w->i[1] = start % w->ne[1];
    start /= w->ne[1];
    w->i[2] = start % w->ne[2];
    w->i[3] = start / w->ne[2];
}

static inline char *walk_ptr(const walk *w) {
    return w->data + (size_t)(w->i[0] / w->blck) * w->nb[0] + (size_t)w->i[1] * w->nb[1] +
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

void ct_cpu_cpy(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *src = dst->src[0];
    const ct_type st = src->type, dt = dst->type;
    const int64_t n_el = ct_nelements(dst);
    if (n_el == 0) return;

    if (st == dt && ct_is_contiguous(src) && ct_is_contiguous(dst)) {
        /* Split the bytes. */
        const size_t bytes = (size_t)(n_el / ct_type_block_size(st)) * ct_type_size(st);
        const size_t per = bytes / (size_t)params->nth, rem = bytes % (size_t)params->nth;
        const size_t ith = (size_t)params->ith;
        const size_t b0 = ith * per + (ith < rem ? ith : rem);
        const size_t b1 = b0 + per + (ith < rem ? 1 : 0);
        if (b1 > b0) memcpy((char *)dst->data + b0, (const char *)src->data + b0, b1 - b0);
        return;
    }

    /* Split the elements in whole units of both block sizes (1, 32 or 256: the larger is a multiple). */
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    const int64_t q = bs > bd ? bs : bd;
    const int64_t units = n_el / q;
    const int64_t per = units / params->nth, rem = units % params->nth;
    const int64_t u0 = params->ith * per + (params->ith < rem ? params->ith : rem);
    const int64_t u1 = u0 + per + (params->ith < rem ? 1 : 0);
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
    } else if (is_float(st) && is_float(dt)) {
        for (int64_t pos = u0 * q; pos < e1;) {
            const int64_t n = min64(min64(walk_left_in_row(&s), walk_left_in_row(&d)), e1 - pos);
            convert_run(st, walk_ptr(&s), s.nb[0], dt, walk_ptr(&d), d.nb[0], n);
            walk_advance(&s, n);
            walk_advance(&d, n);
            pos += n;
        }
    } else if (is_float(st)) {
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
