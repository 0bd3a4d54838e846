/* libFuzzer target for the tensor constructors, views and op constructors, and
 * for computing what they build on the CPU (and REF) backend.
 *
 * The input is a little program: leaf tensors of random types and shapes, then
 * views, reshapes, permutes and ops on random operands with random parameters.
 * Every constructor call must either return a tensor that is consistent (a view
 * inside its root's bytes) or NULL with CT_INVALID_ARGUMENT and a message naming
 * a ct_ function. The graph of every result is then allocated, either by
 * ct_context_alloc_tensors or root by root in buffers of exactly the tensor's
 * size (so AddressSanitizer catches a kernel going one byte past a tensor), filled
 * with random data and computed: the status must be CT_OK, CT_UNSUPPORTED only
 * when supports_op refuses a node, or CT_INDEX_OUT_OF_RANGE only with a row op.
 * Any breach calls __builtin_trap(), which libFuzzer reports as a crash. */
#include "ctensor.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
    MAX_TENSORS = 48,
    MAX_OPS = 16,
    MAX_LEAVES = 5,
    MAX_TENSOR_BYTES = 64 * 1024,
    MAX_TENSOR_ELEMENTS = 256 * 1024, /* a view with zero strides is small in bytes, not in work */
    MAX_MUL_MAT_WORK = 1 << 22,
};

/* Stops in a way libFuzzer records, with the reason on stderr. */
#define FUZZ_ASSERT(cond, ...)                                                          \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz_ops: %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                               \
            fprintf(stderr, " (last error: %s: %s)\n", ct_status_str(ct_last_status()), \
                    ct_last_error());                                                   \
            __builtin_trap();                                                           \
        }                                                                               \
    } while (0)

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t u8(reader *r) {
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

static uint16_t u16(reader *r) { return (uint16_t)(u8(r) | (u8(r) << 8)); }

static const ct_type common_types[] = {
    CT_TYPE_F32, CT_TYPE_F32,  CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16, CT_TYPE_Q8_0,   CT_TYPE_Q4_0, CT_TYPE_Q4_1,
    CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_IQ4_NL, CT_TYPE_I32, CT_TYPE_I32, CT_TYPE_I64, CT_TYPE_Q4_K, CT_TYPE_Q6_K,
    CT_TYPE_Q8_K, CT_TYPE_IQ4_XS, CT_TYPE_I8, CT_TYPE_I16, CT_TYPE_F64, CT_TYPE_IQ2_XXS,
};

static ct_type pick_type(reader *r) {
    uint8_t b = u8(r);
    if (b < 248) return common_types[b % (sizeof common_types / sizeof common_types[0])];
    return (ct_type)(int8_t)u8(r); /* removed ids, negatives, past the end */
}

static int64_t pick_extent(reader *r, int64_t block) {
    uint8_t b = u8(r);
    uint8_t v = b & 63;
    switch (b >> 6) {
    case 0:
    case 1: return block * (v % 6);
    case 2: return block > 1 ? block * (v % 12) : v;
    default: {
        static const int64_t odd[] = {-1, 1, INT64_MAX, (int64_t)1 << 31, 3, (int64_t)1 << 40, 17, INT64_MIN};
        return odd[v % 8];
    }
    }
}

static size_t pick_stride(reader *r, const ct_tensor *a, int dim) {
    uint8_t b = u8(r);
    if (!a) return b;
    switch (b & 3) {
    case 0: return a->nb[dim];
    case 1: return a->nb[dim] * (size_t)(1 + (b >> 2) % 4);
    case 2: return a->nb[(b >> 2) % 4];
    default: return u16(r);
    }
}

static size_t pick_offset(reader *r, const ct_tensor *a) {
    uint8_t b = u8(r);
    if (b < 128) return 0;
    if (b < 224 && a) return a->nb[0] * (size_t)(b % 16);
    if (b < 250 && a) return a->nb[1] * (size_t)(b % 4);
    return (size_t)u16(r) << (b & 7);
}

static float pick_eps(reader *r) {
    static const float eps[] = {1e-6f, 1e-5f, 0.0f, 1e-6f, -1.0f, NAN, INFINITY, 1e30f, FLT_MIN, 1e-12f};
    return eps[u8(r) % (sizeof eps / sizeof eps[0])];
}

static ct_tensor *pick(reader *r, ct_tensor **ts, int n) {
    uint8_t b = u8(r);
    if (b == 255 || n == 0) return NULL;
    return ts[b % n];
}

static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A constructor's result: consistent, or NULL for a reason the API allows. */
static void check_result(const ct_context *ctx, const ct_tensor *t, const char *what) {
    if (!t) {
        ct_status st = ct_last_status();
        bool arena_full = ct_context_size(ctx) - ct_context_used(ctx) < 4 * ct_tensor_overhead();
        FUZZ_ASSERT(st == CT_INVALID_ARGUMENT || (st == CT_OUT_OF_MEMORY && arena_full), "%s returned NULL", what);
        FUZZ_ASSERT(strncmp(ct_last_error(), "ct_", 3) == 0, "%s: message does not name a function", what);
        return;
    }
    FUZZ_ASSERT(ct_type_is_valid(t->type), "%s: result type %d", what, (int)t->type);
    for (int i = 0; i < CT_MAX_DIMS; i++) FUZZ_ASSERT(t->ne[i] >= 0, "%s: ne[%d]=%lld", what, i, (long long)t->ne[i]);
    if (t->view_src) {
        FUZZ_ASSERT(t->view_src->view_src == NULL, "%s: view_src is not a root", what);
        size_t end = t->view_offs + ct_nbytes(t);
        FUZZ_ASSERT(ct_is_empty(t) || (end >= t->view_offs && end <= ct_nbytes(t->view_src)),
                    "%s: view of %zu bytes at offset %zu outside its root of %zu bytes", what, ct_nbytes(t),
                    t->view_offs, ct_nbytes(t->view_src));
    }
}

/* The constructors the input chooses from, each with the op of the tensor it
 * builds. Every op of the list (CT_OP_LIST in ctensor.h) must have one: the
 * fuzzer stops at start-up naming an op without (check_every_op_built), so a new
 * op is fuzzed once it is listed here. The order is the inputs' encoding (the
 * corpus in fuzz/corpus/fuzz_ops): append only. */
typedef enum ctor {
    C_VIEW_1D, C_VIEW_2D, C_VIEW_3D, C_VIEW_4D, C_RESHAPE, C_PERMUTE, C_TRANSPOSE, C_GET_ROWS,
    C_SET_ROWS, C_MUL_MAT, C_CPY, C_DUP, C_CONT, C_CAST, C_NORM, C_RMS_NORM, C_L2_NORM, C_GROUP_NORM,
    C_SUM_ROWS, C_MEAN, C_VIEW_TENSOR, C_TENSOR_DUP, C_RESHAPE_2D, C_TENSOR_NEW,
    C_UNARY, C_XIELU, C_SCALE, C_SCALE_BIAS, C_ADD, C_SUB, C_MUL, C_DIV, C_ADD1, C_SOFT_MAX, C_ROPE_EXT, C_ROPE_MULTI,
    /* one line per family added since */
    C_GLU, C_GLU_SPLIT, C_SWIGLU_OAI, C_SWIGLU_CLAMP,
    C_SUM, C_CUMSUM, C_ARGMAX, C_ARGSORT, C_TOP_K,
    C_MUL_MAT_ID, C_ADD_ID,
    C_SQR, C_SQRT, C_SIN, C_COS, C_LN, C_CLAMP, C_LEAKY_RELU, C_FILL,
    C_REPEAT, C_CONCAT, C_PAD, C_ARANGE, C_ACC,
    C_FLASH_ATTN,
    C_COUNT
} ctor;

static const struct {
    const char *name;
    ct_op op; /* of a non-NULL result */
} ctors[C_COUNT] = {
    [C_VIEW_1D] = {"ct_view_1d", CT_OP_VIEW},
    [C_VIEW_2D] = {"ct_view_2d", CT_OP_VIEW},
    [C_VIEW_3D] = {"ct_view_3d", CT_OP_VIEW},
    [C_VIEW_4D] = {"ct_view_4d", CT_OP_VIEW},
    [C_RESHAPE] = {"ct_reshape", CT_OP_RESHAPE},
    [C_PERMUTE] = {"ct_permute", CT_OP_PERMUTE},
    [C_TRANSPOSE] = {"ct_transpose", CT_OP_TRANSPOSE},
    [C_GET_ROWS] = {"ct_get_rows", CT_OP_GET_ROWS},
    [C_SET_ROWS] = {"ct_set_rows", CT_OP_SET_ROWS},
    [C_MUL_MAT] = {"ct_mul_mat", CT_OP_MUL_MAT},
    [C_CPY] = {"ct_cpy", CT_OP_CPY},
    [C_DUP] = {"ct_dup", CT_OP_DUP},
    [C_CONT] = {"ct_cont", CT_OP_CONT},
    [C_CAST] = {"ct_cast", CT_OP_CPY},
    [C_NORM] = {"ct_norm", CT_OP_NORM},
    [C_RMS_NORM] = {"ct_rms_norm", CT_OP_RMS_NORM},
    [C_L2_NORM] = {"ct_l2_norm", CT_OP_L2_NORM},
    [C_GROUP_NORM] = {"ct_group_norm", CT_OP_GROUP_NORM},
    [C_SUM_ROWS] = {"ct_sum_rows", CT_OP_SUM_ROWS},
    [C_MEAN] = {"ct_mean", CT_OP_MEAN},
    [C_ROPE_EXT] = {"ct_rope_ext", CT_OP_ROPE},
    [C_ROPE_MULTI] = {"ct_rope_multi", CT_OP_ROPE},
    [C_SQR] = {"ct_sqr", CT_OP_SQR},
    [C_SQRT] = {"ct_sqrt", CT_OP_SQRT},
    [C_SIN] = {"ct_sin", CT_OP_SIN},
    [C_COS] = {"ct_cos", CT_OP_COS},
    [C_LN] = {"ct_ln", CT_OP_LOG},
    [C_CLAMP] = {"ct_clamp", CT_OP_CLAMP},
    [C_LEAKY_RELU] = {"ct_leaky_relu", CT_OP_LEAKY_RELU},
    [C_FILL] = {"ct_fill", CT_OP_FILL},
    [C_REPEAT] = {"ct_repeat_4d", CT_OP_REPEAT},
    [C_CONCAT] = {"ct_concat", CT_OP_CONCAT},
    [C_PAD] = {"ct_pad_ext", CT_OP_PAD},
    [C_ARANGE] = {"ct_arange", CT_OP_ARANGE},
    [C_ACC] = {"ct_acc", CT_OP_ACC},
    [C_FLASH_ATTN] = {"ct_flash_attn_ext", CT_OP_FLASH_ATTN_EXT},
    [C_VIEW_TENSOR] = {"ct_view_tensor", CT_OP_VIEW},
    [C_TENSOR_DUP] = {"ct_tensor_dup", CT_OP_NONE},
    [C_RESHAPE_2D] = {"ct_reshape_2d", CT_OP_RESHAPE},
    [C_TENSOR_NEW] = {"ct_tensor_new", CT_OP_NONE},
    [C_UNARY] = {"ct_unary", CT_OP_UNARY},
    [C_XIELU] = {"ct_xielu", CT_OP_UNARY},
    [C_SCALE] = {"ct_scale", CT_OP_SCALE},
    [C_SCALE_BIAS] = {"ct_scale_bias", CT_OP_SCALE},
    [C_ADD] = {"ct_add", CT_OP_ADD},
    [C_SUB] = {"ct_sub", CT_OP_SUB},
    [C_MUL] = {"ct_mul", CT_OP_MUL},
    [C_DIV] = {"ct_div", CT_OP_DIV},
    [C_ADD1] = {"ct_add1", CT_OP_ADD1},
    [C_SOFT_MAX] = {"ct_soft_max_ext", CT_OP_SOFT_MAX},
    [C_GLU] = {"ct_glu", CT_OP_GLU},
    [C_GLU_SPLIT] = {"ct_glu_split", CT_OP_GLU},
    [C_SWIGLU_OAI] = {"ct_swiglu_oai", CT_OP_GLU},
    [C_SWIGLU_CLAMP] = {"ct_swiglu_clamp", CT_OP_GLU},
    [C_SUM] = {"ct_sum", CT_OP_SUM},
    [C_CUMSUM] = {"ct_cumsum", CT_OP_CUMSUM},
    [C_ARGMAX] = {"ct_argmax", CT_OP_ARGMAX},
    [C_ARGSORT] = {"ct_argsort", CT_OP_ARGSORT},
    [C_TOP_K] = {"ct_top_k", CT_OP_TOP_K},
    [C_MUL_MAT_ID] = {"ct_mul_mat_id", CT_OP_MUL_MAT_ID},
    [C_ADD_ID] = {"ct_add_id", CT_OP_ADD_ID},
};

static void check_every_op_built(void) {
    for (int op = 0; op < CT_OP_COUNT; op++) {
        bool built = false;
        for (int c = 0; c < C_COUNT; c++) built = built || ctors[c].op == (ct_op)op;
        if (!built) {
            fprintf(stderr, "fuzz_ops: no constructor in ctors builds op %s\n", ct_op_name((ct_op)op));
            __builtin_trap();
        }
    }
}

/* One constructor call chosen by the input; NULL when it (rightly) failed. */
static ct_tensor *one_op(reader *r, ct_context *ctx, ct_tensor **ts, int n, ctor *chosen) {
    const ctor c = (ctor)(u8(r) % C_COUNT);
    *chosen = c;
    ct_tensor *a = pick(r, ts, n);
    int64_t bs = a ? ct_type_block_size(a->type) : 1;
    if (bs <= 0) bs = 1;
    switch (c) {
    case C_VIEW_1D: return ct_view_1d(ctx, a, pick_extent(r, bs), pick_offset(r, a));
    case C_VIEW_2D: {
        int64_t ne0 = pick_extent(r, bs), ne1 = pick_extent(r, 1);
        return ct_view_2d(ctx, a, ne0, ne1, pick_stride(r, a, 1), pick_offset(r, a));
    }
    case C_VIEW_3D: {
        int64_t ne0 = pick_extent(r, bs), ne1 = pick_extent(r, 1), ne2 = pick_extent(r, 1);
        size_t nb1 = pick_stride(r, a, 1), nb2 = pick_stride(r, a, 2);
        return ct_view_3d(ctx, a, ne0, ne1, ne2, nb1, nb2, pick_offset(r, a));
    }
    case C_VIEW_4D: {
        int64_t ne0 = pick_extent(r, bs), ne1 = pick_extent(r, 1), ne2 = pick_extent(r, 1), ne3 = pick_extent(r, 1);
        size_t nb1 = pick_stride(r, a, 1), nb2 = pick_stride(r, a, 2), nb3 = pick_stride(r, a, 3);
        return ct_view_4d(ctx, a, ne0, ne1, ne2, ne3, nb1, nb2, nb3, pick_offset(r, a));
    }
    case C_RESHAPE: {
        uint8_t mode = u8(r);
        int64_t ne[4] = {1, 1, 1, 1};
        if (a && mode < 160) {
            /* the same element count, split at a random dimension */
            int cut = mode % 4;
            ne[0] = a->ne[0];
            for (int i = 1; i <= cut; i++) ne[0] = (int64_t)((uint64_t)ne[0] * (uint64_t)a->ne[i]);
            for (int i = cut + 1; i < 4; i++) ne[1] = (int64_t)((uint64_t)ne[1] * (uint64_t)a->ne[i]);
            return ct_reshape(ctx, a, 1 + (mode >> 2) % 4, ne);
        }
        for (int i = 0; i < 4; i++) ne[i] = pick_extent(r, i == 0 ? bs : 1);
        return ct_reshape(ctx, a, (int)(mode % 6), ne);
    }
    case C_PERMUTE: {
        static const int perms[][4] = {{0, 1, 2, 3}, {1, 0, 2, 3}, {0, 2, 1, 3}, {2, 1, 0, 3}, {0, 1, 3, 2},
                                       {3, 2, 1, 0}, {1, 2, 3, 0}, {0, 3, 1, 2}, {2, 0, 3, 1}};
        uint8_t b = u8(r);
        if (b < 200) {
            const int *p = perms[b % (sizeof perms / sizeof perms[0])];
            return ct_permute(ctx, a, p[0], p[1], p[2], p[3]);
        }
        return ct_permute(ctx, a, (int8_t)u8(r) % 5, (int8_t)u8(r) % 5, (int8_t)u8(r) % 5, (int8_t)u8(r) % 5);
    }
    case C_TRANSPOSE: return ct_transpose(ctx, a);
    case C_GET_ROWS: return ct_get_rows(ctx, a, pick(r, ts, n));
    case C_SET_ROWS: {
        ct_tensor *b = pick(r, ts, n);
        return ct_set_rows(ctx, a, b, pick(r, ts, n));
    }
    case C_MUL_MAT: return ct_mul_mat(ctx, a, pick(r, ts, n));
    case C_CPY: return ct_cpy(ctx, a, pick(r, ts, n));
    case C_DUP: return ct_dup(ctx, a);
    case C_CONT: return ct_cont(ctx, a);
    case C_CAST: return ct_cast(ctx, a, pick_type(r));
    case C_NORM: return ct_norm(ctx, a, pick_eps(r));
    case C_RMS_NORM: return ct_rms_norm(ctx, a, pick_eps(r));
    case C_L2_NORM: return ct_l2_norm(ctx, a, pick_eps(r));
    case C_GROUP_NORM: {
        int groups = (int8_t)u8(r);
        return ct_group_norm(ctx, a, groups, pick_eps(r));
    }
    case C_SUM_ROWS: return ct_sum_rows(ctx, a);
    case C_SUM: return ct_sum(ctx, a);
    case C_CUMSUM: return ct_cumsum(ctx, a);
    case C_ARGMAX: return ct_argmax(ctx, a);
    case C_ARGSORT: return ct_argsort(ctx, a, (ct_sort_order)((int8_t)u8(r) % 3));
    case C_TOP_K: return ct_top_k(ctx, a, (int8_t)u8(r));
    case C_MEAN: return ct_mean(ctx, a);
    case C_ROPE_EXT:
    case C_ROPE_MULTI: {
        ct_tensor *b = pick(r, ts, n), *ff = u8(r) < 128 ? NULL : pick(r, ts, n);
        const int n_dims = (int8_t)u8(r), mode = (int8_t)u8(r), inplace = u8(r) & 1, offs = (int8_t)u8(r);
        const int sec[4] = {(int8_t)u8(r), (int8_t)u8(r), (int8_t)u8(r), (int8_t)u8(r)};
        ct_tensor *t;
        if (c == C_ROPE_EXT)
            t = inplace ? ct_rope_ext_inplace(ctx, a, b, ff, n_dims, mode, 0, 10000.0f, 1.0f, 0.5f, 1.0f, 32.0f, 1.0f)
                        : ct_rope_ext(ctx, a, b, ff, n_dims, mode, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
        else
            t = inplace ? ct_rope_multi_inplace(ctx, a, b, ff, n_dims, sec, mode, 0, 10000.0f, 1.0f, 0.5f, 1.0f, 32.0f, 1.0f)
                        : ct_rope_multi(ctx, a, b, ff, n_dims, sec, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
        if (t && offs != 0 && !ct_rope_set_offset(t, offs)) return NULL;
        return t;
    }
    case C_MUL_MAT_ID:
    case C_ADD_ID: {
        ct_tensor *b = pick(r, ts, n), *ids = pick(r, ts, n);
        return c == C_MUL_MAT_ID ? ct_mul_mat_id(ctx, a, b, ids) : ct_add_id(ctx, a, b, ids);
    }
    /* the math ops, each also in place (a view of a) */
    case C_SQR: return u8(r) & 1 ? ct_sqr_inplace(ctx, a) : ct_sqr(ctx, a);
    case C_SQRT: return u8(r) & 1 ? ct_sqrt_inplace(ctx, a) : ct_sqrt(ctx, a);
    case C_SIN: return u8(r) & 1 ? ct_sin_inplace(ctx, a) : ct_sin(ctx, a);
    case C_COS: return u8(r) & 1 ? ct_cos_inplace(ctx, a) : ct_cos(ctx, a);
    case C_LN: return u8(r) & 1 ? ct_ln_inplace(ctx, a) : ct_ln(ctx, a);
    case C_CLAMP: {
        const float lo = (float)(int8_t)u8(r) / 8.0f, hi = (float)(int8_t)u8(r) / 8.0f;
        return u8(r) & 1 ? ct_clamp_inplace(ctx, a, lo, hi) : ct_clamp(ctx, a, lo, hi);
    }
    case C_LEAKY_RELU: {
        const float ns = (float)(int8_t)u8(r) / 64.0f;
        return ct_leaky_relu(ctx, a, ns, u8(r) & 1);
    }
    case C_FILL: {
        const float v = (float)(int8_t)u8(r) / 4.0f;
        return u8(r) & 1 ? ct_fill_inplace(ctx, a, v) : ct_fill(ctx, a, v);
    }
    /* the shape ops: sizes, pads, strides and offsets from the input's bytes */
    case C_REPEAT: {
        const int64_t k[4] = {u8(r) % 4, u8(r) % 4, u8(r) % 3, u8(r) % 3};
        static const int64_t one[4] = {1, 1, 1, 1};
        const int64_t *ne = a ? a->ne : one; /* a may be NULL: the constructor says so */
        int64_t m[4];
        for (int d = 0; d < 4; d++) /* past int64: -1, which the constructor refuses */
            if (__builtin_mul_overflow(ne[d], k[d], &m[d])) m[d] = -1;
        return ct_repeat_4d(ctx, a, m[0], m[1], m[2], m[3] + (m[3] >= 0 && m[3] < INT64_MAX ? (u8(r) & 1) : 0));
    }
    case C_CONCAT: return ct_concat(ctx, a, pick(r, ts, n), (int8_t)u8(r) % 5);
    case C_PAD: {
        int p[8];
        for (int i = 0; i < 8; i++) p[i] = (int8_t)u8(r) % 5;
        return u8(r) & 1 ? ct_pad_ext_circular(ctx, a, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
                         : ct_pad_ext(ctx, a, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    }
    case C_ARANGE: {
        const float start = (float)(int8_t)u8(r) / 4.0f, stop = (float)(int8_t)u8(r), step = (float)u8(r) / 16.0f;
        return ct_arange(ctx, start, stop, step);
    }
    case C_ACC: {
        ct_tensor *b = pick(r, ts, n);
        const size_t nb1 = (size_t)u8(r) * 2, nb2 = (size_t)u8(r) * 8, nb3 = (size_t)u8(r) * 16, offs = (size_t)u8(r) * 2;
        return u8(r) & 1 ? ct_acc_inplace(ctx, a, b, nb1, nb2, nb3, offs) : ct_acc(ctx, a, b, nb1, nb2, nb3, offs);
    }
    case C_FLASH_ATTN: {
        /* q = a, k, v and the optional mask and sinks any tensors; the params from the bytes */
        const uint8_t f = u8(r);
        ct_tensor *k = pick(r, ts, n), *v = pick(r, ts, n);
        ct_tensor *mask = f & 1 ? pick(r, ts, n) : NULL, *sinks = f & 2 ? pick(r, ts, n) : NULL;
        const float scale = f & 4 ? (float)(int8_t)u8(r) / 16.0f : 0.125f;
        const float max_bias = f & 8 ? (float)(int8_t)u8(r) / 8.0f : 0.0f;
        const float softcap = f & 16 ? (float)(int8_t)u8(r) : 0.0f;
        ct_tensor *t = ct_flash_attn_ext(ctx, a, k, v, mask, scale, max_bias, softcap);
        if (t && sinks && !ct_flash_attn_ext_add_sinks(t, sinks)) return NULL;
        if (t && (f & 32) && !ct_flash_attn_ext_set_prec(t, (int)(int8_t)u8(r))) return NULL;
        return t;
    }
    case C_VIEW_TENSOR: return ct_view_tensor(ctx, a);
    case C_TENSOR_DUP: return ct_tensor_dup(ctx, a);
    case C_RESHAPE_2D: {
        int64_t ne0 = pick_extent(r, bs);
        return ct_reshape_2d(ctx, a, ne0, pick_extent(r, 1));
    }
    case C_UNARY: return ct_unary(ctx, a, (ct_unary_op)((int8_t)u8(r) % 26));
    case C_XIELU: {
        const float alpha_n = pick_eps(r), alpha_p = pick_eps(r);
        const float beta = (float)(int8_t)u8(r) / 16.0f;
        return ct_xielu(ctx, a, alpha_n, alpha_p, beta, -pick_eps(r));
    }
    case C_SCALE: return ct_scale(ctx, a, (float)(int8_t)u8(r) / 8.0f);
    case C_SCALE_BIAS: {
        float s = (float)(int8_t)u8(r) / 8.0f;
        return ct_scale_bias(ctx, a, s, (float)(int8_t)u8(r) / 8.0f);
    }
    case C_ADD: return ct_add(ctx, a, pick(r, ts, n));
    case C_SUB: return ct_sub(ctx, a, pick(r, ts, n));
    case C_MUL: return ct_mul(ctx, a, pick(r, ts, n));
    case C_DIV: return ct_div(ctx, a, pick(r, ts, n));
    case C_ADD1: return ct_add1(ctx, a, pick(r, ts, n));
    case C_SOFT_MAX: {
        /* each operand NULL or any tensor; scale and max_bias from the input's bytes */
        const uint8_t k = u8(r);
        ct_tensor *mask = k & 1 ? pick(r, ts, n) : NULL;
        ct_tensor *sinks = k & 2 ? pick(r, ts, n) : NULL;
        const float scale = k & 4 ? (float)(int8_t)u8(r) / 16.0f : (k & 8 ? NAN : 1.0f);
        const float max_bias = k & 16 ? (float)(int8_t)u8(r) / 8.0f : 0.0f;
        return ct_soft_max_ext(ctx, a, mask, sinks, scale, max_bias);
    }
    case C_GLU: {
        const int op = (int8_t)u8(r) % 9;
        return ct_glu(ctx, a, (ct_glu_op)op, u8(r) & 1);
    }
    case C_GLU_SPLIT: return ct_glu_split(ctx, a, pick(r, ts, n), (ct_glu_op)((int8_t)u8(r) % 9));
    case C_SWIGLU_OAI:
    case C_SWIGLU_CLAMP: {
        /* b NULL (the fused form) or any tensor; alpha and limit from the input's bytes, NaN at times */
        const uint8_t k = u8(r);
        ct_tensor *b = k & 1 ? pick(r, ts, n) : NULL;
        const float alpha = (float)(int8_t)u8(r) / 16.0f, limit = k & 2 ? NAN : (float)(int8_t)u8(r) / 8.0f;
        return c == C_SWIGLU_OAI ? ct_swiglu_oai(ctx, a, b, alpha, limit) : ct_swiglu_clamp(ctx, a, b, limit);
    }
    case C_TENSOR_NEW:
    case C_COUNT: break;
    }
    int64_t ne[4];
    ct_type type = pick_type(r);
    int64_t tb = ct_type_block_size(type) > 0 ? ct_type_block_size(type) : 1;
    for (int i = 0; i < 4; i++) ne[i] = pick_extent(r, i == 0 ? tb : 1);
    return ct_tensor_new(ctx, type, (int)(u8(r) % 6), ne);
}

/* Random contents for a root tensor: small integers for index types (mostly in
 * range), moderate floats for float types, raw bytes for blocks. */
static void fill(ct_tensor *t, uint64_t *rng) {
    size_t nbytes = ct_nbytes(t);
    if (nbytes == 0) return;
    uint8_t *buf = malloc(nbytes);
    if (!buf) return;
    size_t n;
    switch (t->type) {
    case CT_TYPE_I32:
        n = nbytes / 4;
        for (size_t i = 0; i < n; i++) ((int32_t *)buf)[i] = (int32_t)(mix(rng) % 13) - 1;
        break;
    case CT_TYPE_I64:
        n = nbytes / 8;
        for (size_t i = 0; i < n; i++) ((int64_t *)buf)[i] = (int64_t)(mix(rng) % 13) - 1;
        break;
    case CT_TYPE_F32:
        n = nbytes / 4;
        for (size_t i = 0; i < n; i++) ((float *)buf)[i] = (float)((int64_t)(mix(rng) % 2001) - 1000) / 256.0f;
        break;
    case CT_TYPE_F16:
    case CT_TYPE_BF16:
        n = nbytes / 2;
        for (size_t i = 0; i < n; i++) {
            float f = (float)((int64_t)(mix(rng) % 2001) - 1000) / 256.0f;
            ((uint16_t *)buf)[i] = t->type == CT_TYPE_F16 ? ct_fp32_to_fp16(f) : ct_fp32_to_bf16(f);
        }
        break;
    default:
        for (size_t i = 0; i < nbytes; i++) buf[i] = (uint8_t)mix(rng);
        break;
    }
    FUZZ_ASSERT(ct_tensor_set(t, buf, 0, nbytes) == CT_OK, "ct_tensor_set of %zu bytes", nbytes);
    free(buf);
}

static ct_backend *cpu_backend, *ref_backend;
static bool verbose; /* CT_FUZZ_VERBOSE=1: print every tensor, to triage a crash input */
/* CT_FUZZ_STATS=1: at exit, how many inputs got as far as a compute, and how it ended */
static long n_inputs, n_valid, n_invalid, n_computed, n_status[8];

static void print_stats(void) {
    fprintf(stderr, "fuzz_ops: %ld inputs, %ld nodes built, %ld calls refused, %ld graphs computed: %ld ok, %ld "
            "unsupported, %ld index out of range\n", n_inputs, n_valid, n_invalid, n_computed, n_status[CT_OK],
            n_status[CT_UNSUPPORTED], n_status[CT_INDEX_OUT_OF_RANGE]);
}

static void describe(const ct_tensor *t, const char *what) {
    if (!verbose) return;
    if (!t) {
        fprintf(stderr, "%-14s -> NULL: %s\n", what, ct_last_error());
        return;
    }
    fprintf(stderr, "%-14s -> %p %s %s ne=[%lld %lld %lld %lld] nb=[%zu %zu %zu %zu]", what, (const void *)t,
            ct_op_name(t->op), ct_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
            (long long)t->ne[3], t->nb[0], t->nb[1], t->nb[2], t->nb[3]);
    fprintf(stderr, " view_src=%p offs=%zu src=%p,%p,%p\n", (void *)t->view_src, t->view_offs, (void *)t->src[0],
            (void *)t->src[1], (void *)t->src[2]);
}

/* Whether computing this context's tensors stays small enough for a fuzz iteration. */
static bool small_enough(const ct_context *ctx) {
    for (ct_tensor *t = ct_context_first_tensor(ctx); t; t = ct_context_next_tensor(ctx, t)) {
        if (ct_nbytes(t) > MAX_TENSOR_BYTES || ct_nelements(t) > MAX_TENSOR_ELEMENTS) return false;
        /* products whose work is not bounded by their tensors' sizes */
        if ((t->op == CT_OP_MUL_MAT || t->op == CT_OP_MUL_MAT_ID) && t->src[0]) {
            double work = (double)ct_nelements(t) * (double)t->src[0]->ne[0];
            if (work > MAX_MUL_MAT_WORK) return false;
        }
        if (t->op == CT_OP_FLASH_ATTN_EXT && t->src[0] && t->src[1]) { /* every query row against every key row */
            double work = (double)ct_nelements(t->src[0]) * (double)ct_nrows(t->src[1]);
            if (work > MAX_MUL_MAT_WORK) return false;
        }
    }
    return true;
}

static void compute(ct_backend *be, ct_graph *g, const char *name) {
    bool all_supported = true, has_row_op = false;
    for (int i = 0; i < ct_graph_n_nodes(g); i++) {
        const ct_tensor *node = ct_graph_node(g, i);
        all_supported = all_supported && ct_backend_supports_op(be, node);
        has_row_op = has_row_op || node->op == CT_OP_GET_ROWS || node->op == CT_OP_SET_ROWS;
    }
    ct_status st = ct_backend_graph_compute(be, g);
    n_computed++;
    n_status[(unsigned)st % 8]++;
    FUZZ_ASSERT(st == CT_OK || (st == CT_UNSUPPORTED && !all_supported) || (st == CT_INDEX_OUT_OF_RANGE && has_row_op),
                "%s compute gave %s (all nodes supported: %d, row op: %d)", name, ct_status_str(st), all_supported,
                has_row_op);
    FUZZ_ASSERT(st != CT_OK || all_supported, "%s computed a graph with an unsupported node", name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader rd = {data, size}, *r = &rd;
    if (!cpu_backend) {
        ct_log_set_level(CT_LOG_NONE);
        verbose = getenv("CT_FUZZ_VERBOSE") != NULL;
        if (getenv("CT_FUZZ_STATS")) atexit(print_stats);
        check_every_op_built();
        if (ct_backend_init_by_name("CPU", "n_threads=2", &cpu_backend) != CT_OK) __builtin_trap();
        if (ct_backend_init_by_name("REF", NULL, &ref_backend) != CT_OK) __builtin_trap();
    }
    uint8_t flags = u8(r);
    n_inputs++;
    uint64_t rng = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < size; i++) rng = (rng ^ data[i]) * 0x100000001B3ull;

    ct_context_params cp = {.mem_size = MAX_TENSORS * ct_tensor_overhead() + ct_graph_overhead(2 * MAX_TENSORS),
                            .no_alloc = true};
    ct_context *ctx = ct_context_new(cp);
    if (!ctx) __builtin_trap();
    ct_tensor *ts[MAX_TENSORS];
    int n = 0;

    int n_leaves = 1 + u8(r) % MAX_LEAVES;
    for (int i = 0; i < n_leaves; i++) {
        ct_type type = pick_type(r);
        int64_t bs = ct_type_block_size(type) > 0 ? ct_type_block_size(type) : 1;
        int64_t ne[4];
        for (int d = 0; d < 4; d++) ne[d] = pick_extent(r, d == 0 ? bs : 1);
        int n_dims = 1 + u8(r) % 4;
        ct_tensor *t = ct_tensor_new(ctx, type, n_dims, ne);
        check_result(ctx, t, "ct_tensor_new");
        describe(t, "ct_tensor_new");
        if (t) ts[n++] = t;
    }
    int n_ops = u8(r) % (MAX_OPS + 1);
    for (int i = 0; i < n_ops && r->n > 0 && n < MAX_TENSORS - 2; i++) {
        ctor c;
        ct_clear_error();
        ct_tensor *t = one_op(r, ctx, ts, n, &c);
        const char *what = ctors[c].name;
        check_result(ctx, t, what);
        FUZZ_ASSERT(!t || t->op == ctors[c].op, "%s built op %s, not %s", what, ct_op_name(t->op),
                    ct_op_name(ctors[c].op));
        describe(t, what);
        if (t) n_valid++;
        else n_invalid++;
        if (t) ts[n++] = t;
    }
    ct_graph *g = ct_graph_new(ctx, 2 * MAX_TENSORS);
    FUZZ_ASSERT(g != NULL, "ct_graph_new");
    for (int i = 0; i < n; i++) {
        if (ts[i]->op == CT_OP_NONE) continue;
        FUZZ_ASSERT(ct_graph_build_forward(g, ts[i]) == CT_OK, "ct_graph_build_forward");
    }

    if (ct_graph_n_nodes(g) > 0 && small_enough(ctx)) {
        /* exact-size buffers, root by root, or one ct_context_alloc_tensors */
        enum { MAX_BUFS = MAX_TENSORS };
        ct_buffer *bufs[MAX_BUFS];
        int n_bufs = 0;
        ct_buffer_type *buft = ct_backend_buffer_type(cpu_backend);
        bool ok = true;
        if (flags & 1) {
            ct_buffer *b = NULL;
            FUZZ_ASSERT(ct_context_alloc_tensors(ctx, buft, &b) == CT_OK, "ct_context_alloc_tensors");
            if (b) bufs[n_bufs++] = b;
        } else {
            for (ct_tensor *t = ct_context_first_tensor(ctx); t && ok; t = ct_context_next_tensor(ctx, t)) {
                if (t->view_src) {
                    FUZZ_ASSERT(ct_buffer_init_view(t) == CT_OK, "ct_buffer_init_view");
                    continue;
                }
                size_t bytes = 0;
                FUZZ_ASSERT(ct_buffer_type_alloc_size(buft, t, &bytes) == CT_OK, "alloc size");
                ct_buffer *b = NULL;
                FUZZ_ASSERT(ct_buffer_type_alloc(buft, bytes ? bytes : 1, &b) == CT_OK && b, "alloc %zu", bytes);
                bufs[n_bufs++] = b;
                FUZZ_ASSERT(ct_buffer_alloc_tensor(b, t, ct_buffer_base(b)) == CT_OK, "ct_buffer_alloc_tensor");
            }
        }
        for (ct_tensor *t = ct_context_first_tensor(ctx); t; t = ct_context_next_tensor(ctx, t)) {
            if (!t->view_src) fill(t, &rng);
        }
        FUZZ_ASSERT(ct_backend_cpu_set_n_threads(cpu_backend, 1 + (flags >> 1) % 3) == CT_OK, "n_threads");
        compute(cpu_backend, g, "CPU");
        if (flags & 0x10) compute(ref_backend, g, "REF");
        /* read every result back: the get must stay inside the tensor too */
        for (int i = 0; i < n; i++) {
            size_t nbytes = ct_nbytes(ts[i]);
            if (nbytes == 0 || !ts[i]->data) continue;
            void *out = malloc(nbytes);
            if (out) FUZZ_ASSERT(ct_tensor_get(ts[i], out, 0, nbytes) == CT_OK, "ct_tensor_get");
            free(out);
        }
        for (int i = 0; i < n_bufs; i++) ct_buffer_free(bufs[i]);
    }
    ct_context_free(ctx);
    return 0;
}
