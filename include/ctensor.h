/*
 * ctensor: a tensor-compute library in C with ggml's data model.
 *
 * This is the one public header. It carries, bottom up:
 *   1. version, status codes, per-thread error messages, logging, allocator hooks
 *   2. the type table, fp16/bf16 conversion, quantize/dequantize of rows
 *   3. contexts, tensors, views, graphs, op constructors
 *   4. the backend interface: registry -> devices -> buffer types -> buffers -> backends
 *
 * Error convention: a function that can fail returns a ct_status (or NULL / a
 * sentinel for constructors) and records a per-thread message naming the
 * function, the tensor and the values that were wrong; ct_last_error() reads it.
 * Nothing in the library aborts on bad input.
 *
 * Threading: functions without shared state (type table, conversion, quantization,
 * predicates) are safe from any thread. A context, its tensors and graphs are
 * used by one thread at a time. The backend section below states its own contract.
 */
#ifndef CTENSOR_H
#define CTENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CT_SHARED)
#  ifdef CT_BUILD
#    define CT_API __declspec(dllexport)
#  else
#    define CT_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define CT_API __attribute__((visibility("default")))
#else
#  define CT_API
#endif

/* ------------------------------------------------------------------------- */
/* 1. Version, status, errors, logging, allocation                            */
/* ------------------------------------------------------------------------- */

#define CT_VERSION_MAJOR 0
#define CT_VERSION_MINOR 1
#define CT_VERSION_PATCH 0
#define CT_VERSION_STRING "0.1.0"
/* major*10000 + minor*100 + patch */
#define CT_VERSION_NUMBER (CT_VERSION_MAJOR * 10000 + CT_VERSION_MINOR * 100 + CT_VERSION_PATCH)

/* The version of the library actually linked ("0.1.0"); compare with CT_VERSION_STRING. */
CT_API const char *ct_version(void);
CT_API int ct_version_number(void);

typedef enum ct_status {
    CT_OK = 0,
    CT_INVALID_ARGUMENT = 1,  /* bad shape, type, stride, parameter, NULL pointer, overflowing size */
    CT_UNSUPPORTED = 2,       /* valid, but this backend or type cannot do it */
    CT_OUT_OF_MEMORY = 3,     /* host or device allocation failed, context arena or graph full */
    CT_INDEX_OUT_OF_RANGE = 4,/* GET_ROWS / SET_ROWS index outside the source or destination */
    CT_DEVICE_ERROR = 5,      /* the device or its driver reported an error */
    CT_ABORTED = 6,           /* the abort callback asked to stop */
} ct_status;

/* "ok", "invalid argument", ...; "unknown status" for a value outside the enum. */
CT_API const char *ct_status_str(ct_status status);

/* The status and message of this thread's last failure. The message names the
 * function, the tensor and the values, e.g.
 *   "ct_set_rows: src ne[0]=255 but dst ne[0]=256".
 * Successful calls do not clear it; ct_clear_error() does. Never NULL. */
CT_API ct_status ct_last_status(void);
CT_API const char *ct_last_error(void);
CT_API void ct_clear_error(void);

typedef enum ct_log_level {
    CT_LOG_DEBUG = 0,
    CT_LOG_INFO = 1,
    CT_LOG_WARN = 2,
    CT_LOG_ERROR = 3,
    CT_LOG_NONE = 4, /* as a minimum level: log nothing */
} ct_log_level;

/* Called with a complete line (no trailing newline). May be called from any
 * thread the library runs on; the callback must be thread-safe. */
typedef void (*ct_log_callback)(ct_log_level level, const char *message, void *user_data);

/* NULL restores the default, which writes "ctensor: <level>: <message>" to stderr.
 * Every failure recorded for ct_last_error() is also logged at CT_LOG_DEBUG. */
CT_API void ct_log_set_callback(ct_log_callback callback, void *user_data);
/* Messages below this level are dropped (default CT_LOG_WARN; CT_LOG_NONE silences). */
CT_API void ct_log_set_level(ct_log_level min_level);
CT_API ct_log_level ct_log_get_level(void);

/* Host allocator hooks. Every host allocation the library makes goes through
 * them. alloc returns memory aligned to `alignment` (a power of two, at least
 * sizeof(void*)) or NULL; free accepts NULL. */
typedef struct ct_allocator {
    void *(*alloc)(size_t size, size_t alignment, void *user_data);
    void (*free)(void *ptr, void *user_data);
    void *user_data;
} ct_allocator;

/* NULL restores the default (posix_memalign / free). Set it before creating any
 * object: memory is freed with the hooks in force when it is freed. Returns
 * CT_INVALID_ARGUMENT when only one of alloc/free is set. */
CT_API ct_status ct_set_allocator(const ct_allocator *allocator);

/* ------------------------------------------------------------------------- */
/* 2. Types                                                                   */
/* ------------------------------------------------------------------------- */

/* ggml's type ids, unchanged, so GGUF files work as they are. */
typedef enum ct_type {
    CT_TYPE_F32 = 0,
    CT_TYPE_F16 = 1,
    CT_TYPE_Q4_0 = 2,
    CT_TYPE_Q4_1 = 3,
    /* 4, 5: removed (Q4_2, Q4_3) */
    CT_TYPE_Q5_0 = 6,
    CT_TYPE_Q5_1 = 7,
    CT_TYPE_Q8_0 = 8,
    CT_TYPE_Q8_1 = 9,
    CT_TYPE_Q2_K = 10,
    CT_TYPE_Q3_K = 11,
    CT_TYPE_Q4_K = 12,
    CT_TYPE_Q5_K = 13,
    CT_TYPE_Q6_K = 14,
    CT_TYPE_Q8_K = 15,
    CT_TYPE_IQ2_XXS = 16,
    CT_TYPE_IQ2_XS = 17,
    CT_TYPE_IQ3_XXS = 18,
    CT_TYPE_IQ1_S = 19,
    CT_TYPE_IQ4_NL = 20,
    CT_TYPE_IQ3_S = 21,
    CT_TYPE_IQ2_S = 22,
    CT_TYPE_IQ4_XS = 23,
    CT_TYPE_I8 = 24,
    CT_TYPE_I16 = 25,
    CT_TYPE_I32 = 26,
    CT_TYPE_I64 = 27,
    CT_TYPE_F64 = 28,
    CT_TYPE_IQ1_M = 29,
    CT_TYPE_BF16 = 30,
    /* 31, 32, 33: removed (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) */
    CT_TYPE_TQ1_0 = 34,
    CT_TYPE_TQ2_0 = 35,
    /* 36, 37, 38: removed (IQ4_NL_4_4, IQ4_NL_4_8, IQ4_NL_8_8) */
    CT_TYPE_COUNT = 39,
} ct_type;

/* False for removed ids and values outside [0, CT_TYPE_COUNT). */
CT_API bool ct_type_is_valid(ct_type type);
/* "f32", "q4_0", ... as ggml spells them; "invalid" for an invalid id. */
CT_API const char *ct_type_name(ct_type type);
/* Elements per block (1 for plain types); 0 for an invalid id. */
CT_API int64_t ct_type_block_size(ct_type type);
/* Bytes per block; 0 for an invalid id. */
CT_API size_t ct_type_size(ct_type type);
CT_API bool ct_type_is_quantized(ct_type type);
/* Looks a type up by its name in any case ("q4_K", "Q4_K", "q4_k"); ct_type_name gives the
 * canonical spelling (ggml's). */
CT_API ct_status ct_type_from_name(const char *name, ct_type *type);
/* Bytes of a row of n elements: n must be >= 0 and a multiple of the block size. */
CT_API ct_status ct_row_size(ct_type type, int64_t n, size_t *size);

/* IEEE binary16 and bfloat16, as bit patterns. */
typedef uint16_t ct_fp16;
typedef uint16_t ct_bf16;

/* Round to nearest even, subnormals kept, overflow to inf, NaN -> sign|0x7E00. */
CT_API ct_fp16 ct_fp32_to_fp16(float x);
/* Exact. */
CT_API float ct_fp16_to_fp32(ct_fp16 h);
/* Round to nearest even; NaN -> (bits >> 16) | 0x0040. */
CT_API ct_bf16 ct_fp32_to_bf16(float x);
/* Exact (bits << 16). */
CT_API float ct_bf16_to_fp32(ct_bf16 h);

/* Row converters; n >= 0, buffers may not overlap. */
CT_API ct_status ct_fp32_to_fp16_row(const float *src, ct_fp16 *dst, int64_t n);
CT_API ct_status ct_fp16_to_fp32_row(const ct_fp16 *src, float *dst, int64_t n);
CT_API ct_status ct_fp32_to_bf16_row(const float *src, ct_bf16 *dst, int64_t n);
CT_API ct_status ct_bf16_to_fp32_row(const ct_bf16 *src, float *dst, int64_t n);

/* True when ct_quantize_row can produce this type: F32, F16, BF16, Q8_0, Q4_0,
 * Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_XS. */
CT_API bool ct_type_can_quantize(ct_type type);
/* True when ct_dequantize_row can read this type: F32, F16, BF16, the six
 * 32-blocks above, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_XS. */
CT_API bool ct_type_can_dequantize(ct_type type);

/* Quantizes n floats into ct_row_size(type, n) bytes at dst with ggml's reference
 * arithmetic (quantize_row_*_ref; IQ4_XS: quantize_iq4_xs without importance weights),
 * bit for bit and independent of compiler and CPU (docs/QUANTIZATION.md lists the few
 * bytes ggml leaves unspecified and ctensor fixes). n must be a whole number of blocks. */
CT_API ct_status ct_quantize_row(ct_type type, const float *src, void *dst, int64_t n);
/* Dequantizes n elements (a whole number of blocks) of type into floats. */
CT_API ct_status ct_dequantize_row(ct_type type, const void *src, float *dst, int64_t n);

/* ------------------------------------------------------------------------- */
/* 3. Contexts, tensors, views, graphs, ops                                   */
/* ------------------------------------------------------------------------- */

#define CT_MAX_DIMS 4
#define CT_MAX_SRC 10
#define CT_MAX_OP_PARAMS 64 /* bytes */
#define CT_MAX_NAME 64
#define CT_MEM_ALIGN 64     /* alignment of tensor data inside a context arena */

/* The op list: every op, once. X(ID, name, is_view, family) gives
 *   ID       the enum suffix, CT_OP_<ID>; ids follow the list's order and never change (ABI);
 *   name     what ct_op_name returns, as ggml_op_desc spells it;
 *   is_view  1 for the ops that compute nothing (a leaf, or a view of another
 *            tensor's bytes), what ct_op_is_view returns; 0 for the rest;
 *   family   the ops sharing one constructor file src/ops/<family>.c and one
 *            function per backend (ct_cpu_<family>, ct_ref_<family>, ...);
 *            "view" for the view ops.
 * A new op goes last; docs/ARCHITECTURE.md lists the files it touches. */
#define CT_OP_LIST(X)                             \
    X(NONE,       "NONE",       1, view)          \
    X(DUP,        "DUP",        0, cpy)           \
    X(CPY,        "CPY",        0, cpy)           \
    X(CONT,       "CONT",       0, cpy)           \
    X(GET_ROWS,   "GET_ROWS",   0, get_rows)      \
    X(SET_ROWS,   "SET_ROWS",   0, set_rows)      \
    X(MUL_MAT,    "MUL_MAT",    0, mul_mat)       \
    X(NORM,       "NORM",       0, norm)          \
    X(RMS_NORM,   "RMS_NORM",   0, norm)          \
    X(L2_NORM,    "L2_NORM",    0, norm)          \
    X(GROUP_NORM, "GROUP_NORM", 0, norm)          \
    X(SUM_ROWS,   "SUM_ROWS",   0, sum_rows)      \
    X(MEAN,       "MEAN",       0, sum_rows)      \
    X(VIEW,       "VIEW",       1, view)          \
    X(RESHAPE,    "RESHAPE",    1, view)          \
    X(PERMUTE,    "PERMUTE",    1, view)          \
    X(TRANSPOSE,  "TRANSPOSE",  1, view)          \
    X(UNARY,      "UNARY",      0, unary)         \
    X(SCALE,      "SCALE",      0, scale)         \
    X(ADD,        "ADD",        0, binary)        \
    X(SUB,        "SUB",        0, binary)        \
    X(MUL,        "MUL",        0, binary)        \
    X(DIV,        "DIV",        0, binary)        \
    X(ADD1,       "ADD1",       0, binary)        \
    X(SOFT_MAX,   "SOFT_MAX",   0, soft_max)      \
    X(ROPE,       "ROPE",       0, rope)          \
    X(GLU,        "GLU",        0, glu)           \
    X(SUM,        "SUM",        0, reduce)        \
    X(CUMSUM,     "CUMSUM",     0, reduce)        \
    X(ARGMAX,     "ARGMAX",     0, reduce)        \
    X(ARGSORT,    "ARGSORT",    0, argsort)       \
    X(TOP_K,      "TOP_K",      0, argsort)       \
    X(MUL_MAT_ID, "MUL_MAT_ID", 0, mul_mat_id)    \
    X(ADD_ID,     "ADD_ID",     0, mul_mat_id)    \
    X(SQR,        "SQR",        0, math)          \
    X(SQRT,       "SQRT",       0, math)          \
    X(SIN,        "SIN",        0, math)          \
    X(COS,        "COS",        0, math)          \
    X(LOG,        "LOG",        0, math)          \
    X(CLAMP,      "CLAMP",      0, math)          \
    X(LEAKY_RELU, "LEAKY_RELU", 0, math)          \
    X(FILL,       "FILL",       0, math)          \
    X(REPEAT,     "REPEAT",     0, shape)         \
    X(CONCAT,     "CONCAT",     0, shape)         \
    X(PAD,        "PAD",        0, shape)         \
    X(ARANGE,     "ARANGE",     0, shape)         \
    X(ACC,        "ACC",        0, shape)         \
    X(FLASH_ATTN_EXT, "FLASH_ATTN_EXT", 0, flash_attn)

typedef enum ct_op {
#define CT_OP_ENUM_ENTRY(id, name, is_view, family) CT_OP_##id,
    CT_OP_LIST(CT_OP_ENUM_ENTRY)
#undef CT_OP_ENUM_ENTRY
    CT_OP_COUNT,
} ct_op;

/* "NONE", "GET_ROWS", ... as ggml_op_desc spells them; "INVALID" otherwise. */
CT_API const char *ct_op_name(ct_op op);
/* Whether op computes nothing (NONE, VIEW, RESHAPE, PERMUTE, TRANSPOSE): every
 * device holds such a node and no backend runs it. False for ids outside the list. */
CT_API bool ct_op_is_view(ct_op op);

/* Tensor flags */
#define CT_TENSOR_FLAG_INPUT  1
#define CT_TENSOR_FLAG_OUTPUT 2

struct ct_buffer;

/* The tensor, field for field as ggml's. Read freely; change only through the API. */
typedef struct ct_tensor {
    ct_type type;
    struct ct_buffer *buffer;           /* NULL until allocated in a backend buffer */

    int64_t ne[CT_MAX_DIMS];            /* elements per dim; unused trailing dims are 1 */
    size_t nb[CT_MAX_DIMS];             /* byte strides; nb[0] is the block size in bytes */

    ct_op op;
    int32_t op_params[CT_MAX_OP_PARAMS / sizeof(int32_t)];
    int32_t flags;

    struct ct_tensor *src[CT_MAX_SRC];

    struct ct_tensor *view_src;         /* root tensor of a view, else NULL */
    size_t view_offs;                   /* byte offset into view_src */

    void *data;                         /* absolute pointer, or NULL in a no-alloc context */
    char name[CT_MAX_NAME];
    void *extra;                        /* backend-private */
} ct_tensor;

typedef struct ct_context ct_context;
typedef struct ct_graph ct_graph;

/* Each tensor takes ct_tensor_overhead() bytes of arena plus, unless no_alloc, its
 * ct_nbytes rounded up to CT_MEM_ALIGN; views and op results count as tensors. Only
 * whole CT_MEM_ALIGN units of mem_size are used. mem_size 0 is a valid, empty
 * context: every creation in it fails with CT_OUT_OF_MEMORY. */
typedef struct ct_context_params {
    size_t mem_size;   /* arena bytes: tensor headers, data (unless no_alloc) and graphs */
    void *mem_buffer;  /* caller memory for the arena (aligned to CT_MEM_ALIGN), or NULL: the context allocates */
    bool no_alloc;     /* tensors get no data; a backend buffer provides it later */
} ct_context_params;

/* Bytes of arena one tensor header takes (without data). */
CT_API size_t ct_tensor_overhead(void);
/* Bytes of arena a graph of max_nodes nodes takes. */
CT_API size_t ct_graph_overhead(size_t max_nodes);

CT_API ct_context *ct_context_new(ct_context_params params);
CT_API void ct_context_free(ct_context *ctx); /* NULL is a no-op */
CT_API size_t ct_context_used(const ct_context *ctx);
CT_API size_t ct_context_size(const ct_context *ctx);
CT_API bool ct_context_no_alloc(const ct_context *ctx);
/* Iterates over the tensors of a context in creation order (NULL at the end). */
CT_API ct_tensor *ct_context_first_tensor(const ct_context *ctx);
CT_API ct_tensor *ct_context_next_tensor(const ct_context *ctx, const ct_tensor *tensor);
/* First tensor with this name, or NULL. */
CT_API ct_tensor *ct_context_get_tensor(const ct_context *ctx, const char *name);

/* New contiguous tensors. n_dims is 1..4; every ne >= 0; ne[0] a multiple of the
 * block size; the byte size must not overflow. NULL + status on failure. */
CT_API ct_tensor *ct_tensor_new(ct_context *ctx, ct_type type, int n_dims, const int64_t *ne);
CT_API ct_tensor *ct_tensor_new_1d(ct_context *ctx, ct_type type, int64_t ne0);
CT_API ct_tensor *ct_tensor_new_2d(ct_context *ctx, ct_type type, int64_t ne0, int64_t ne1);
CT_API ct_tensor *ct_tensor_new_3d(ct_context *ctx, ct_type type, int64_t ne0, int64_t ne1, int64_t ne2);
CT_API ct_tensor *ct_tensor_new_4d(ct_context *ctx, ct_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* A new tensor with a's type and shape (ggml_dup_tensor); no op. */
CT_API ct_tensor *ct_tensor_dup(ct_context *ctx, const ct_tensor *a);

CT_API ct_tensor *ct_tensor_set_name(ct_tensor *t, const char *name); /* truncates to CT_MAX_NAME-1 */
CT_API const char *ct_tensor_get_name(const ct_tensor *t);
/* Flags t CT_TENSOR_FLAG_OUTPUT (ggml_set_output): a result read after the compute, which
 * a backend writes even where it fuses t's only consumer with it (ct_backend_graph_compute).
 * Returns t, or NULL + status for NULL. */
CT_API ct_tensor *ct_set_output(ct_tensor *t);

/* Shape queries. */
CT_API int ct_n_dims(const ct_tensor *t);          /* 1 + index of the last ne != 1 */
CT_API int64_t ct_nelements(const ct_tensor *t);
CT_API int64_t ct_nrows(const ct_tensor *t);       /* ne1*ne2*ne3 */
CT_API size_t ct_nbytes(const ct_tensor *t);       /* bytes spanned, as ggml_nbytes */
CT_API size_t ct_tensor_row_size(const ct_tensor *t); /* bytes of ne[0] elements */
CT_API bool ct_is_empty(const ct_tensor *t);
CT_API bool ct_is_contiguous(const ct_tensor *t);
CT_API bool ct_is_contiguous_n(const ct_tensor *t, int n); /* n = 0, 1, 2 as ggml_is_contiguous_n */
CT_API bool ct_is_contiguous_rows(const ct_tensor *t);
CT_API bool ct_is_transposed(const ct_tensor *t);
CT_API bool ct_is_permuted(const ct_tensor *t);
CT_API bool ct_are_same_shape(const ct_tensor *a, const ct_tensor *b);

/* Views share a's memory; view_src is always the root. Offsets and strides are
 * in bytes and are checked: the view must lie inside the root's bytes. */
CT_API ct_tensor *ct_view_tensor(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_view_1d(ct_context *ctx, ct_tensor *a, int64_t ne0, size_t offset);
CT_API ct_tensor *ct_view_2d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
CT_API ct_tensor *ct_view_3d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                             size_t nb1, size_t nb2, size_t offset);
CT_API ct_tensor *ct_view_4d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                             size_t nb1, size_t nb2, size_t nb3, size_t offset);
/* Reshape needs a contiguous a and the same element count. */
CT_API ct_tensor *ct_reshape(ct_context *ctx, ct_tensor *a, int n_dims, const int64_t *ne);
CT_API ct_tensor *ct_reshape_1d(ct_context *ctx, ct_tensor *a, int64_t ne0);
CT_API ct_tensor *ct_reshape_2d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1);
CT_API ct_tensor *ct_reshape_3d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2);
CT_API ct_tensor *ct_reshape_4d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* a's dim i moves to position axis_i; the axes must be a permutation of 0..3.
 * Dim 0 of a block-quantized tensor cannot move (so no transpose of one). */
CT_API ct_tensor *ct_permute(ct_context *ctx, ct_tensor *a, int axis0, int axis1, int axis2, int axis3);
CT_API ct_tensor *ct_transpose(ct_context *ctx, ct_tensor *a);

/* Op constructors, with ggml's semantics (docs/TENSORS.md). Each validates every precondition and
 * returns the result tensor, or NULL with CT_INVALID_ARGUMENT (or
 * CT_OUT_OF_MEMORY when the arena is full) and a message. */

/* rows of a selected by I32 indices b: result [a.ne0, b.ne0, b.ne1, b.ne2], F32 (I32 when a is I32). */
CT_API ct_tensor *ct_get_rows(ct_context *ctx, ct_tensor *a, ct_tensor *b);
/* a[:, c[i, i2 % c.ne1, i3 % c.ne2], i2, i3] = convert(b[:, i, i2, i3]); b F32 or F16, c I64 or I32.
 * Returns a view of a (written in place). Duplicate indices: on the CPU backend the source row
 * with the largest i wins (each destination row is written by one thread, in source order), for
 * any thread count; other backends may differ, and no write goes outside a. */
CT_API ct_tensor *ct_set_rows(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c);
/* dst[i0,i1,i2,i3] = sum_k a[k,i0,i2/r2,i3/r3] * b[k,i1,i2,i3]; result F32 [a.ne1, b.ne1, b.ne2, b.ne3].
 * Accuracy: with quantized weights a (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, Q4_K, Q5_K, Q6_K) the CPU
 * backend, like ggml's, first quantizes b to 8 bits: blocks of 32 int8 values with one float scale
 * (amax / 127, round to nearest even). The result then carries b's 8-bit rounding as well as a's
 * (ct-ops test holds it within NMSE 5e-4 of REF). With F32, F16 or BF16 a, b is used as F32. The
 * OpenCL backend quantizes b the same way for quantized a with fewer than 16 b columns; REF
 * multiplies the dequantized values exactly (double accumulation). */
CT_API ct_tensor *ct_mul_mat(ct_context *ctx, ct_tensor *a, ct_tensor *b);
/* Mixture of experts (ggml_mul_mat_id; docs/TENSORS.md, MUL_MAT_ID): as holds one [k, m] matrix
 * per expert, [k, m, n_as, 1], not transposed; b [k, ne11, n_tokens, 1] with ne11 dividing
 * n_used (1: one b row for every used expert; n_used: one each); ids I32 [n_used, n_tokens, 1, 1]
 * (ids.ne1 == b.ne2). dst[i0, i1, i2] = sum_k as[k, i0, ids[i1, i2]] * b[k, i1 % ne11, i2];
 * result F32 [m, n_used, n_tokens, 1]. Types and accuracy as ct_mul_mat for one expert's matrix.
 * The ids are data, read at compute: an id outside [0, n_as) gives a row of zeros on every
 * backend (ggml aborts). */
CT_API ct_tensor *ct_mul_mat_id(ct_context *ctx, ct_tensor *as, ct_tensor *b, ct_tensor *ids);
/* ggml_add_id (MoE expert biases): dst[i0, i1, i2, i3] = a[i0, i1, i2, i3] + b[i0, ids[i1, i2]];
 * a [ne0, ne1, ne2, ne3], b [ne0, n_as, ...] (its rows along dim 1), ids I32 [ne1, ne2, ...]
 * (element (i1, i2) read). Result: a's type and shape, contiguous. Backends: F32 a and b, or F16
 * a and b (as ggml-metal). An id outside [0, b.ne1) adds nothing (ggml aborts). */
CT_API ct_tensor *ct_add_id(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *ids);
/* Copies a into b (same element count), converting types; returns a view of b. When a and b
 * overlap in memory the result is unspecified (as in ggml) but nothing outside b is written; on
 * the CPU backend a same-type copy between contiguous views gives memmove's bytes. */
CT_API ct_tensor *ct_cpy(ct_context *ctx, ct_tensor *a, ct_tensor *b);
/* A new tensor of a's type and shape holding a copy of a. */
CT_API ct_tensor *ct_dup(ct_context *ctx, ct_tensor *a);
/* A new contiguous copy of a. */
CT_API ct_tensor *ct_cont(ct_context *ctx, ct_tensor *a);
/* A new tensor of a's shape and the given type holding a converted copy (op CPY). */
CT_API ct_tensor *ct_cast(ct_context *ctx, ct_tensor *a, ct_type type);
/* Row-wise normalizations of F32 rows (F32 only: no backend computes another
 * type); eps >= 0 and finite, stored in op_params[0]. */
CT_API ct_tensor *ct_norm(ct_context *ctx, ct_tensor *a, float eps);
CT_API ct_tensor *ct_rms_norm(ct_context *ctx, ct_tensor *a, float eps);
CT_API ct_tensor *ct_l2_norm(ct_context *ctx, ct_tensor *a, float eps);
/* Normalizes groups of ceil(ne2/n_groups) channels along dim 2; op_params[0] = n_groups, [1] = eps. */
CT_API ct_tensor *ct_group_norm(ct_context *ctx, ct_tensor *a, int n_groups, float eps);
/* Sum of each row: [1, ne1, ne2, ne3] of a's type, which must be F32 (the only
 * type any backend computes). */
CT_API ct_tensor *ct_sum_rows(ct_context *ctx, ct_tensor *a);
/* Mean of each row: [1, ne1, ne2, ne3] F32. */
CT_API ct_tensor *ct_mean(ct_context *ctx, ct_tensor *a);
/* Sum of every element of a (F32, any strides): a [1, 1, 1, 1] F32 tensor (0 for an
 * empty a). Rows summed in double, the total in double, rounded to float once. */
CT_API ct_tensor *ct_sum(ct_context *ctx, ct_tensor *a);
/* Inclusive prefix sums along dim 0 of a (F32, any strides): a new contiguous tensor of
 * a's shape, y[i] = y[i-1] + x[i] in float, in order. */
CT_API ct_tensor *ct_cumsum(ct_context *ctx, ct_tensor *a);
/* Index of the largest element of each row of a (F32 matrix: ne2 = ne3 = 1, ne0 <=
 * INT32_MAX): a [ne1] I32 tensor. As ggml-cpu: the last of equal maxima; NaNs at the
 * end of a row change nothing, any other NaN restarts the search after it; 0 for an
 * empty or all-NaN row. */
CT_API ct_tensor *ct_argmax(ct_context *ctx, ct_tensor *a);
/* The orders of ct_argsort (op_params[0]), numbered as ggml's. */
typedef enum ct_sort_order { CT_SORT_ORDER_ASC = 0, CT_SORT_ORDER_DESC = 1 } ct_sort_order;
/* The indices that sort each row of a (F32, any strides, ne0 <= INT32_MAX): an I32
 * tensor of a's shape. Equal values keep their index order (a stable sort) and NaNs come
 * last in both orders, so every backend gives the same bytes. */
CT_API ct_tensor *ct_argsort(ct_context *ctx, ct_tensor *a, ct_sort_order order);
/* The indices of the k largest elements of each row of a (F32, any strides; 0 <= k <=
 * ne0): [k, ne1, ne2, ne3] I32, in ct_argsort's descending order (ggml leaves the order
 * open). No op_params: k is the result's ne0. */
CT_API ct_tensor *ct_top_k(ct_context *ctx, ct_tensor *a, int k);
/* Elementwise a + b, a - b, a * b, a / b with b repeated over a (docs/TENSORS.md,
 * Binary ops): every a->ne[i] a multiple of b->ne[i] (b empty only when a is), the
 * result a new tensor of a's shape and type, element (i0..i3) computed in float from
 * a's element and b's (i0 % b->ne[0], ..., i3 % b->ne[3]), rounded to a's type. Types
 * (a, b): (f32, f32), (f16, f16), (f16, f32). a and b may be any views (permuted,
 * overlapping each other). No op_params. */
CT_API ct_tensor *ct_add(ct_context *ctx, ct_tensor *a, ct_tensor *b);
CT_API ct_tensor *ct_sub(ct_context *ctx, ct_tensor *a, ct_tensor *b);
CT_API ct_tensor *ct_mul(ct_context *ctx, ct_tensor *a, ct_tensor *b);
CT_API ct_tensor *ct_div(ct_context *ctx, ct_tensor *a, ct_tensor *b);
/* a + b for a scalar b (one element): the types of ct_add; a must be padded 1-d as
 * ggml_add1 asks (nb[0] the type size, nb[2] == nb[1]*ne[1], nb[3] == nb[2]*ne[2]). */
CT_API ct_tensor *ct_add1(ct_context *ctx, ct_tensor *a, ct_tensor *b);

/* UNARY's sub-ops, numbered as ggml's enum ggml_unary_op (op_params[0] of a UNARY node). */
typedef enum ct_unary_op {
    CT_UNARY_OP_ABS,
    CT_UNARY_OP_SGN,
    CT_UNARY_OP_NEG,
    CT_UNARY_OP_STEP,
    CT_UNARY_OP_TANH,
    CT_UNARY_OP_ELU,
    CT_UNARY_OP_RELU,
    CT_UNARY_OP_SIGMOID,
    CT_UNARY_OP_GELU,
    CT_UNARY_OP_GELU_QUICK,
    CT_UNARY_OP_SILU,
    CT_UNARY_OP_HARDSWISH,
    CT_UNARY_OP_HARDSIGMOID,
    CT_UNARY_OP_EXP,
    CT_UNARY_OP_EXPM1,
    CT_UNARY_OP_SOFTPLUS,
    CT_UNARY_OP_GELU_ERF,
    CT_UNARY_OP_XIELU,
    CT_UNARY_OP_FLOOR,
    CT_UNARY_OP_CEIL,
    CT_UNARY_OP_ROUND,
    CT_UNARY_OP_TRUNC,
    CT_UNARY_OP_COUNT,
} ct_unary_op;

/* "ABS", "GELU", ... as ggml_unary_op_name spells them; "INVALID" outside the enum. */
CT_API const char *ct_unary_op_name(ct_unary_op op);
/* Element-wise op of a (docs/TENSORS.md, Unary): a new contiguous tensor of a's type
 * and shape, op UNARY, op_params[0] = op. a is F32 or F16 (the types every backend
 * computes) with contiguous rows (nb[0] the type size, or ne[0] == 1); any strides
 * for dims 1..3. op is any sub-op but CT_UNARY_OP_XIELU (use ct_xielu). */
CT_API ct_tensor *ct_unary(ct_context *ctx, ct_tensor *a, ct_unary_op op);
/* UNARY XIELU with ggml_xielu's parameters: op_params[1] = beta + softplus(alpha_n),
 * [2] = softplus(alpha_p), [3] = beta, [4] = eps (softplus(x)
 * = logf(1 + expf(x)), x itself above 20, in float as ggml). The four must be finite. */
CT_API ct_tensor *ct_xielu(ct_context *ctx, ct_tensor *a, float alpha_n, float alpha_p, float beta, float eps);
/* y = a*s (ct_scale) or a*s + b (ct_scale_bias), op SCALE with op_params[0] = s,
 * [1] = b: a new contiguous tensor of a's type and shape. a is F32 or F16 with
 * packed elements (nb[0] the type size); any strides for dims 1..3. */
CT_API ct_tensor *ct_scale(ct_context *ctx, ct_tensor *a, float s);
CT_API ct_tensor *ct_scale_bias(ct_context *ctx, ct_tensor *a, float s, float b);

/* Softmax of each row of F32 a (ggml_soft_max_ext with ggml_soft_max_add_sinks): result F32 of a's
 * shape. For row (i1, i2, i3), w = a*scale + slope(i2)*mask[:, i1, i2 % mask.ne2, i3 % mask.ne3]
 * (no mask term without a mask), then y = exp(w - M) / (sum exp(w - M) + exp(s - M)) with
 * M = max(max w, s) and s = sinks[i2] (neither s term without sinks). slope is 1 when
 * max_bias <= 0, else ALiBi's per head (i2 of n_head = a.ne2), as ggml computes it.
 * mask: NULL or F16/F32 with ne0 == a.ne0, ne1 >= a.ne1, ne2 and ne3 >= 1 dividing a.ne2 and a.ne3;
 * sinks: NULL or F32 with ne0 == a.ne2 (row 0 is used). scale and max_bias finite; max_bias > 0
 * needs a mask. -INFINITY in the mask masks an element out; a row whose every w is -INFINITY
 * gives NaN without sinks (as ggml's CPU), zeros with finite sinks. op_params: [0] scale,
 * [1] max_bias (floats). */
CT_API ct_tensor *ct_soft_max_ext(ct_context *ctx, ct_tensor *a, ct_tensor *mask, ct_tensor *sinks, float scale,
                                  float max_bias);
/* ct_soft_max_ext(ctx, a, NULL, NULL, 1.0f, 0.0f). */
CT_API ct_tensor *ct_soft_max(ct_context *ctx, ct_tensor *a);

/* Rotary position embedding (ggml_rope_ext / ggml_rope_multi; docs/TENSORS.md, ROPE).
 * a: F32 or F16 [ne0, n_head, n_tokens, ne3], any strides; b: I32 positions, a vector
 * of a.ne2 values (4·a.ne2 for the multi-section modes: the t, h, w, e sections one
 * after another); c: NULL or F32 frequency factors, at least n_dims/2 values (n_dims
 * for VISION). n_dims > 0 and even, n_dims <= a.ne0 (VISION: n_dims == a.ne0/2).
 * The result has a's type and shape (contiguous; the _inplace forms return a view of
 * a with op ROPE, written in place). op_params as ggml: [1] n_dims, [2] mode,
 * [4] n_ctx_orig, [5..10] freq_base, freq_scale, ext_factor, attn_factor, beta_fast,
 * beta_slow (floats), [11..14] sections (multi-section modes, else 0), [15] n_offs. */
#define CT_ROPE_TYPE_NORMAL 0
#define CT_ROPE_TYPE_NEOX   2
#define CT_ROPE_TYPE_MROPE  8
#define CT_ROPE_TYPE_VISION 24
#define CT_ROPE_TYPE_IMROPE 40
/* mode NORMAL or NEOX. */
CT_API ct_tensor *ct_rope_ext(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims, int mode,
                              int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                              float attn_factor, float beta_fast, float beta_slow);
CT_API ct_tensor *ct_rope_ext_inplace(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims,
                                      int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                      float ext_factor, float attn_factor, float beta_fast, float beta_slow);
/* mode MROPE, VISION or IMROPE; sections[4] >= 0, one of the first three > 0. */
CT_API ct_tensor *ct_rope_multi(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims,
                                const int sections[4], int mode, int n_ctx_orig, float freq_base,
                                float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                float beta_slow);
CT_API ct_tensor *ct_rope_multi_inplace(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims,
                                        const int sections[4], int mode, int n_ctx_orig, float freq_base,
                                        float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                        float beta_slow);
/* Moves the rotated window of a ROPE result to start at dim n_offs (ggml_rope_set_offset):
 * n_offs >= 0, even, n_offs + n_dims <= ne0, not for VISION. Returns t, or NULL + status. */
CT_API ct_tensor *ct_rope_set_offset(ct_tensor *t, int n_offs);

/* GLU's sub-ops, numbered as ggml's enum ggml_glu_op (op_params[0] of a GLU node). */
typedef enum ct_glu_op {
    CT_GLU_OP_REGLU,
    CT_GLU_OP_GEGLU,
    CT_GLU_OP_SWIGLU,
    CT_GLU_OP_SWIGLU_OAI,
    CT_GLU_OP_GEGLU_ERF,
    CT_GLU_OP_GEGLU_QUICK,
    CT_GLU_OP_SWIGLU_CLAMP,
    CT_GLU_OP_COUNT,
} ct_glu_op;

/* "REGLU", "GEGLU", ... as ggml_glu_op_name spells them; "INVALID" outside the enum. */
CT_API const char *ct_glu_op_name(ct_glu_op op);
/* Gated linear units (docs/TENSORS.md, GLU), ggml's GGML_OP_GLU: y = f(x)·g element-wise.
 * Fused form (ct_glu, src[1] NULL): a [n, ...] holds x and g in each row's two halves,
 * nc = n/2 elements each: x = a[0..nc), g = a[nc..2nc) (swapped: the other way round; an
 * odd n's last element is not read); the result is [nc, a.ne1, a.ne2, a.ne3].
 * Split form (ct_glu_split): x = a, g = b, of one type and shape; the result has a's shape.
 * a (and b) are F32 or F16 with packed rows (nb[0] the type size, or ne[0] == 1), any
 * strides for dims 1..3; the result is a new contiguous tensor of a's type. op_params as
 * ggml: [0] op, [1] swapped (0 or 1; 0 for the split form), [2] alpha, [3] limit (floats;
 * SWIGLU_OAI uses both, SWIGLU_CLAMP limit). ct_glu and ct_glu_split take every op, as
 * ggml_glu does; SWIGLU_OAI and SWIGLU_CLAMP built there have alpha = limit = 0. */
CT_API ct_tensor *ct_glu(ct_context *ctx, ct_tensor *a, ct_glu_op op, bool swapped);
CT_API ct_tensor *ct_glu_split(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_glu_op op);
/* ct_glu(ctx, a, CT_GLU_OP_<OP>, false) and ct_glu_split(ctx, a, b, CT_GLU_OP_<OP>). */
CT_API ct_tensor *ct_reglu(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_reglu_split(ct_context *ctx, ct_tensor *a, ct_tensor *b);
CT_API ct_tensor *ct_geglu(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_geglu_split(ct_context *ctx, ct_tensor *a, ct_tensor *b);
CT_API ct_tensor *ct_swiglu(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_swiglu_split(ct_context *ctx, ct_tensor *a, ct_tensor *b);
CT_API ct_tensor *ct_geglu_erf(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_geglu_erf_split(ct_context *ctx, ct_tensor *a, ct_tensor *b);
CT_API ct_tensor *ct_geglu_quick(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_geglu_quick_split(ct_context *ctx, ct_tensor *a, ct_tensor *b);
/* SWIGLU_OAI (ggml_swiglu_oai; b NULL: the fused form, not swapped):
 * x' = min(x, limit), g' = clamp(g, -limit, limit), y = x'/(1 + expf(-alpha·x'))·(g' + 1).
 * alpha and limit finite. */
CT_API ct_tensor *ct_swiglu_oai(ct_context *ctx, ct_tensor *a, ct_tensor *b, float alpha, float limit);
/* SWIGLU_CLAMP (ggml_swiglu_clamp; b NULL: fused, not swapped): x' = min(x, limit),
 * g' = clamp(g, -limit, limit), y = x'/(1 + expf(-x'))·g'. limit finite; op_params[3] = limit. */
CT_API ct_tensor *ct_swiglu_clamp(ct_context *ctx, ct_tensor *a, ct_tensor *b, float limit);
/* Element-wise math ops with ggml's ops of the same names (docs/TENSORS.md, Math): SQR
 * x*x, SQRT, SIN, COS, LOG (sqrtf, sinf, cosf, logf), CLAMP (m = x < max ? x : max, then
 * m > min ? m : min: NaN gives max, as ggml-cpu), LEAKY_RELU ((x > 0 ? x : 0) +
 * negative_slope * (x < 0 ? x : 0)) and FILL (every element c). Each element converts to
 * float, the formula runs in float, the result rounds to a's type. a is F32 or F16 with
 * contiguous rows (nb[0] the type size, or ne[0] == 1); any strides for dims 1..3. The
 * result is a new contiguous tensor of a's type and shape, or with the _inplace forms
 * (ggml_leaky_relu's inplace) a view of a with the op, written in place. op_params as
 * ggml: CLAMP [0] min, [1] max; LEAKY_RELU [0] negative_slope; FILL [0] c (floats, any
 * value: NaN and infinities go through the formulas); the others none. ct_ln is ggml_log
 * (op LOG; ct_log is the library's logger). */
CT_API ct_tensor *ct_sqr(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_sqr_inplace(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_sqrt(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_sqrt_inplace(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_sin(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_sin_inplace(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_cos(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_cos_inplace(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_ln(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_ln_inplace(ct_context *ctx, ct_tensor *a);
CT_API ct_tensor *ct_clamp(ct_context *ctx, ct_tensor *a, float min, float max);
CT_API ct_tensor *ct_clamp_inplace(ct_context *ctx, ct_tensor *a, float min, float max);
CT_API ct_tensor *ct_leaky_relu(ct_context *ctx, ct_tensor *a, float negative_slope, bool inplace);
CT_API ct_tensor *ct_fill(ct_context *ctx, ct_tensor *a, float c);
CT_API ct_tensor *ct_fill_inplace(ct_context *ctx, ct_tensor *a, float c);

/* Shape ops (docs/TENSORS.md, Shape ops), ggml's semantics and op_params. Results are new
 * contiguous tensors (ct_acc_inplace: a view of a); sources may have any strides unless said.
 *
 * REPEAT (ggml_repeat, ggml_repeat_4d): a tiled to shape ne (ct_repeat: b's shape; b is not a
 * source), y[i0, i1, i2, i3] = a[i0 % a.ne0, i1 % a.ne1, ...]. a of a type of single elements
 * (not a block type); each ne[d] >= 0 a multiple of a.ne[d]; an empty a only into an empty
 * result. No op_params. */
CT_API ct_tensor *ct_repeat(ct_context *ctx, ct_tensor *a, ct_tensor *b);
CT_API ct_tensor *ct_repeat_4d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* CONCAT (ggml_concat): a then b along dim (0..3), the other dims equal; a and b of one type
 * (any type; block types with packed rows, dim 0 in whole blocks). op_params[0] = dim. */
CT_API ct_tensor *ct_concat(ct_context *ctx, ct_tensor *a, ct_tensor *b, int dim);
/* PAD (ggml_pad_ext): F32 a with lp_d elements before and rp_d after it in each dim d (all
 * >= 0), zeros there; the _circular form fills them with a wrapped around each dim instead
 * (y[i] = a[(i - lp) mod a.ne] per dim; a non-empty unless the result is empty). ct_pad
 * pads on the right only (ggml_pad). op_params: [0..7] lp0, rp0, lp1, rp1, lp2, rp2, lp3,
 * rp3, [8] circular (0 or 1). */
CT_API ct_tensor *ct_pad(ct_context *ctx, ct_tensor *a, int p0, int p1, int p2, int p3);
CT_API ct_tensor *ct_pad_ext(ct_context *ctx, ct_tensor *a, int lp0, int rp0, int lp1, int rp1, int lp2, int rp2,
                             int lp3, int rp3);
CT_API ct_tensor *ct_pad_ext_circular(ct_context *ctx, ct_tensor *a, int lp0, int rp0, int lp1, int rp1, int lp2,
                                      int rp2, int lp3, int rp3);
/* ARANGE (ggml_arange): F32 vector of n = (int64_t)ceilf((stop - start) / step) values,
 * y[i] = start + step * (float)i in float. start, stop, step finite, stop > start, step > 0,
 * n <= INT32_MAX. op_params [0] start, [1] stop, [2] step (floats). No source. */
CT_API ct_tensor *ct_arange(ct_context *ctx, float start, float stop, float step);
/* ACC (ggml_acc): a copy of a with b added into the window of a whose element (i0, i1, i2,
 * i3) of b's shape is at byte offset + i0*4 + i1*nb1 + i2*nb2 + i3*nb3 of a: y = a there
 * plus b, a elsewhere. a contiguous F32, b F32 with packed rows (any strides above) and
 * no more elements than a; nb1, nb2, nb3 and offset multiples of 4 below 2^31, the window
 * inside a. Windows whose elements overlap give one of the sums, unspecified which.
 * op_params: [0] nb1, [1] nb2, [2] nb3, [3] offset, [4] inplace (0 or 1). The _inplace
 * form returns a view of a with the op, written in place. */
CT_API ct_tensor *ct_acc(ct_context *ctx, ct_tensor *a, ct_tensor *b, size_t nb1, size_t nb2, size_t nb3,
                         size_t offset);
CT_API ct_tensor *ct_acc_inplace(ct_context *ctx, ct_tensor *a, ct_tensor *b, size_t nb1, size_t nb2, size_t nb3,
                                 size_t offset);
/* Attention of F32 q over k and v with an online softmax (ggml_flash_attn_ext; docs/TENSORS.md,
 * FLASH_ATTN_EXT). q [Dk, n_q, n_head, ne3]; k [Dk, n_kv, n_head_k, ne3] and v [Dv, n_kv, n_head_v,
 * ne3] of type F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL (each its own), n_head_k and
 * n_head_v dividing n_head (grouped-query attention: head h reads kv head h / (n_head / n_head_k));
 * mask NULL or F16, contiguous, [>= n_kv, >= n_q, dividing n_head, dividing ne3]. For query row
 * (i1, h, i3): s_j = scale * (q . k_j) (with logit_softcap != 0: logit_softcap * tanh(s_j /
 * logit_softcap)) + slope(h) * mask[j, i1, h % mask.ne2, i3 % mask.ne3], then
 * out = sum_j exp(s_j - M) v_j / (sum_j exp(s_j - M) + exp(sink_h - M)) with no sink term without
 * sinks, zeros where that sum is 0 (every s_j -inf and no sinks). slope as ct_soft_max_ext
 * (max_bias > 0 needs a mask). The result is F32 [Dv, n_head, n_q, ne3] (heads and rows swapped,
 * as ggml). scale, max_bias and logit_softcap finite. op_params: [0] scale, [1] max_bias,
 * [2] logit_softcap (floats), [3] precision (CT_PREC_*), [4] n_kv_max (a hint: ignored). */
CT_API ct_tensor *ct_flash_attn_ext(ct_context *ctx, ct_tensor *q, ct_tensor *k, ct_tensor *v, ct_tensor *mask,
                                    float scale, float max_bias, float logit_softcap);
/* Adds per-head sinks to a FLASH_ATTN_EXT node t (ggml_flash_attn_ext_add_sinks): F32 with
 * ne0 == q's n_head (row 0 is used), t without sinks yet; NULL removes them. Returns t, or
 * NULL + status. */
CT_API ct_tensor *ct_flash_attn_ext_add_sinks(ct_tensor *t, ct_tensor *sinks);
/* The accumulation precision of FLASH_ATTN_EXT t (ggml_flash_attn_ext_set_prec): CT_PREC_DEFAULT
 * or CT_PREC_F32 (ggml's numbers; every backend accumulates in F32 either way). Returns t, or
 * NULL + status. */
#define CT_PREC_DEFAULT 0
#define CT_PREC_F32     10
CT_API ct_tensor *ct_flash_attn_ext_set_prec(ct_tensor *t, int prec);

/* Reads the float op parameter at index i of op_params (eps of the norms). */
CT_API float ct_op_param_f32(const ct_tensor *t, int i);
CT_API int32_t ct_op_param_i32(const ct_tensor *t, int i);

/* Graphs live in a context's arena. */
CT_API ct_graph *ct_graph_new(ct_context *ctx, size_t max_nodes);
/* Appends out and everything it depends on, in topological order (sources first).
 * Dependencies are src[] and view_src (so SET_ROWS runs after the producer of
 * the tensor it writes). Tensors with op NONE are leafs, the others nodes.
 * A node already in the graph is not added twice. CT_OUT_OF_MEMORY when full,
 * with the graph left as it was. */
CT_API ct_status ct_graph_build_forward(ct_graph *graph, ct_tensor *out);
CT_API int ct_graph_n_nodes(const ct_graph *graph);
CT_API ct_tensor *ct_graph_node(const ct_graph *graph, int i); /* negative i counts from the end */
CT_API int ct_graph_n_leafs(const ct_graph *graph);
CT_API ct_tensor *ct_graph_leaf(const ct_graph *graph, int i);
/* A graph holding nodes [i0, i1) of g, sharing its tensors (for one-node computes).
 * It has no leafs and is read-only: ct_graph_build_forward refuses it. */
CT_API ct_graph *ct_graph_view(ct_context *ctx, const ct_graph *graph, int i0, int i1);


/* ------------------------------------------------------------------------- */
/* 4. Backends                                                                */
/* ------------------------------------------------------------------------- */
/*
 * Objects: registry -> backend registrations (one per backend: "CPU", "OpenCL")
 * -> devices -> buffer types -> buffers (holding tensors) -> backends (a stream
 * that computes graphs on one device).
 *
 * Threading contract:
 *   - The registry, registrations, devices and buffer types are safe to use from
 *     any thread at any time; the registry initializes itself once, thread-safely,
 *     on first use, and is torn down at exit.
 *   - One backend object is used by one thread at a time. Different backend
 *     objects, also on the same device, may be used by different threads at once.
 *   - A buffer may be read and written by several threads at once only on
 *     disjoint bytes, and not while a graph that uses it is computing.
 */

typedef struct ct_backend_reg ct_backend_reg;
typedef struct ct_device ct_device;
typedef struct ct_buffer_type ct_buffer_type;
typedef struct ct_buffer ct_buffer;
typedef struct ct_backend ct_backend;

typedef enum ct_device_type {
    CT_DEVICE_TYPE_CPU = 0,
    CT_DEVICE_TYPE_GPU = 1,
    CT_DEVICE_TYPE_ACCEL = 2,
} ct_device_type;

typedef struct ct_device_caps {
    bool async;                /* ct_backend_tensor_set_async/get_async queue and return before the transfer is
                                  done (else they are done when they return); compute is synchronous either way */
    bool host_buffer;          /* has a pinned host buffer type */
    bool buffer_from_host_ptr; /* ct_device_buffer_from_host_ptr works */
    bool events;
} ct_device_caps;

typedef struct ct_device_props {
    const char *name;
    const char *description;
    size_t memory_free;
    size_t memory_total;
    ct_device_type type;
    ct_device_caps caps;
} ct_device_props;

/* "CPU", "GPU", "ACCEL". */
CT_API const char *ct_device_type_name(ct_device_type type);

/* Registry. Backends that find no hardware register zero devices. */
CT_API size_t ct_backend_reg_count(void);
CT_API ct_backend_reg *ct_backend_reg_get(size_t index);           /* NULL + status when out of range */
CT_API ct_backend_reg *ct_backend_reg_by_name(const char *name);   /* case-insensitive; NULL if none */
CT_API const char *ct_backend_reg_name(const ct_backend_reg *reg);
CT_API size_t ct_backend_reg_dev_count(const ct_backend_reg *reg);
CT_API ct_device *ct_backend_reg_dev_get(const ct_backend_reg *reg, size_t index);

/* All devices of all registrations, CPU first. */
CT_API size_t ct_device_count(void);
CT_API ct_device *ct_device_get(size_t index);
CT_API ct_device *ct_device_by_name(const char *name);             /* case-insensitive; NULL if none */
CT_API ct_device *ct_device_by_type(ct_device_type type);          /* the first of that type, or NULL */

CT_API const char *ct_device_name(const ct_device *dev);
CT_API const char *ct_device_description(const ct_device *dev);
CT_API ct_device_type ct_device_get_type(const ct_device *dev);
CT_API ct_status ct_device_memory(const ct_device *dev, size_t *free_bytes, size_t *total_bytes);
CT_API ct_status ct_device_get_props(const ct_device *dev, ct_device_props *props);
CT_API ct_backend_reg *ct_device_reg(const ct_device *dev);
/* The device's preferred buffer type. */
CT_API ct_buffer_type *ct_device_buffer_type(const ct_device *dev);
/* A host buffer type faster to transfer from, or NULL when the device has none. */
CT_API ct_buffer_type *ct_device_host_buffer_type(const ct_device *dev);
/* Wraps caller memory (which must outlive the buffer) in a buffer of the device.
 * Any tensor of at most max_tensor_size bytes inside it is usable by the device.
 * CT_UNSUPPORTED when the device lacks the cap. */
CT_API ct_status ct_device_buffer_from_host_ptr(ct_device *dev, void *ptr, size_t size, size_t max_tensor_size,
                                                ct_buffer **buffer);
/* Exact: what it accepts, compute does correctly; what it refuses, compute refuses. */
CT_API bool ct_device_supports_op(const ct_device *dev, const ct_tensor *op);
CT_API bool ct_device_supports_buft(const ct_device *dev, const ct_buffer_type *buft);
/* params may be NULL (defaults). */
CT_API ct_status ct_device_init_backend(ct_device *dev, const char *params, ct_backend **backend);

/* Buffer types. */
CT_API const char *ct_buffer_type_name(const ct_buffer_type *buft);
CT_API ct_status ct_buffer_type_alloc(ct_buffer_type *buft, size_t size, ct_buffer **buffer);
CT_API size_t ct_buffer_type_alignment(const ct_buffer_type *buft);
CT_API size_t ct_buffer_type_max_size(const ct_buffer_type *buft);
/* Bytes the tensor takes in this type's buffers (>= ct_nbytes). */
CT_API ct_status ct_buffer_type_alloc_size(const ct_buffer_type *buft, const ct_tensor *t, size_t *size);
CT_API bool ct_buffer_type_is_host(const ct_buffer_type *buft);
CT_API ct_device *ct_buffer_type_device(const ct_buffer_type *buft);

/* Buffers. */
typedef enum ct_buffer_usage {
    CT_BUFFER_USAGE_ANY = 0,
    CT_BUFFER_USAGE_WEIGHTS = 1,
    CT_BUFFER_USAGE_COMPUTE = 2,
} ct_buffer_usage;

CT_API void ct_buffer_free(ct_buffer *buffer); /* NULL is a no-op */
CT_API void *ct_buffer_base(const ct_buffer *buffer); /* NULL for a zero-size buffer or a multi-buffer */
CT_API size_t ct_buffer_size(const ct_buffer *buffer);
CT_API ct_buffer_type *ct_buffer_get_type(const ct_buffer *buffer);
CT_API bool ct_buffer_is_host(const ct_buffer *buffer);
CT_API ct_status ct_buffer_clear(ct_buffer *buffer, uint8_t value);
CT_API void ct_buffer_set_usage(ct_buffer *buffer, ct_buffer_usage usage);
CT_API ct_buffer_usage ct_buffer_get_usage(const ct_buffer *buffer);
/* Places t (which has no data yet) at addr inside buffer; the whole
 * ct_buffer_type_alloc_size must fit in [base, base + size). */
CT_API ct_status ct_buffer_alloc_tensor(ct_buffer *buffer, ct_tensor *t, void *addr);
/* Gives a view tensor its buffer and data from its view_src. */
CT_API ct_status ct_buffer_init_view(ct_tensor *view);

/* Allocates every tensor of a no-alloc context that has no data yet in new
 * buffers of buft, packed with the type's alignment, split into several buffers
 * when one would exceed the type's max size (the returned buffer then owns
 * them all). Views get their data from their roots. CT_OK with *buffer = NULL
 * when there was nothing to allocate. */
CT_API ct_status ct_context_alloc_tensors(ct_context *ctx, ct_buffer_type *buft, ct_buffer **buffer);

/* Tensor data transfer; offset and size in bytes within ct_nbytes(t). The tensor
 * (or its view_src) must be allocated in a buffer. */
CT_API ct_status ct_tensor_set(ct_tensor *t, const void *data, size_t offset, size_t size);
CT_API ct_status ct_tensor_get(const ct_tensor *t, void *data, size_t offset, size_t size);
CT_API ct_status ct_tensor_memset(ct_tensor *t, uint8_t value, size_t offset, size_t size);
/* Copies src's bytes into dst: both contiguous, same type and shape, not overlapping,
 * in buffers of any devices. Device to device within one device where its buffer can
 * (OpenCL: clEnqueueCopyBuffer), else through host memory. Returns when done. */
CT_API ct_status ct_tensor_copy(const ct_tensor *src, ct_tensor *dst);

/* Backends. */
typedef bool (*ct_abort_callback)(void *user_data); /* return true to stop the compute */

CT_API ct_status ct_backend_init_by_name(const char *device_name, const char *params, ct_backend **backend);
/* The first GPU, else the first accelerator, else the CPU. */
CT_API ct_status ct_backend_init_best(ct_backend **backend);
/* The CPU backend: device "CPU", buffer type "CPU" (host memory, 64-byte aligned).
 * Its device uses any buffer type whose is_host is true, since it reads tensor
 * memory directly. params of ct_device_init_backend: "n_threads=N" (default:
 * the online CPUs); the worker threads start at the first compute. */
CT_API ct_status ct_backend_cpu_init(ct_backend **backend);
CT_API void ct_backend_free(ct_backend *backend); /* NULL is a no-op */
CT_API const char *ct_backend_name(const ct_backend *backend);
CT_API ct_device *ct_backend_get_device(const ct_backend *backend);
CT_API ct_buffer_type *ct_backend_buffer_type(const ct_backend *backend);
CT_API bool ct_backend_supports_op(const ct_backend *backend, const ct_tensor *op);
/* Computes the nodes in order. Every node must be supported (else CT_UNSUPPORTED,
 * nothing computed) and allocated in buffers the device supports. Returns when the
 * graph is computed, on every backend (OpenCL waits once, at its end), after the
 * transfers queued before it on the same backend. A backend may compute a node together
 * with its only consumer and leave the node's own bytes unwritten, as ggml's backends do
 * (docs/BACKENDS.md, "Fusion"): never a node flagged CT_TENSOR_FLAG_OUTPUT (ct_set_output),
 * a view or a view's source, nor in a graph view (ct_graph_view). */
CT_API ct_status ct_backend_graph_compute(ct_backend *backend, ct_graph *graph);

/* Asynchronous transfers on a backend's stream, ggml's set/get_tensor_async.
 * Arguments as ct_tensor_set/ct_tensor_get (offset and size in bytes within
 * ct_nbytes(t); the tensor or its view_src allocated in a buffer), checked the same
 * way with the same messages; the buffer must also be one the backend's device uses
 * (ct_device_supports_buft; else CT_UNSUPPORTED). A refused call touches nothing.
 *   - Where the device has the async cap (OpenCL), the transfer is queued on the
 *     backend's own in-order stream and the call returns before it is done: data must
 *     stay valid and unmodified (set), or unread (get), until ct_backend_synchronize,
 *     or a ct_backend_graph_compute, on the same backend returns. Elsewhere (CPU, REF)
 *     the call waits for the backend's pending work and does the blocking transfer.
 *   - In order with the backend's other transfers and computes: a set before a
 *     compute is seen by it; a get after a compute reads its results.
 *   - Not ordered with ct_tensor_set/get/memset/copy or other backends, which use
 *     other streams (ggml's rule too): call ct_backend_synchronize before touching the
 *     same bytes another way, and before freeing the buffer.
 *   - Errors in queueing return here; errors in running a queued transfer return from
 *     ct_backend_synchronize. ct_backend_free waits for what is queued. */
CT_API ct_status ct_backend_tensor_set_async(ct_backend *backend, ct_tensor *t, const void *data, size_t offset,
                                             size_t size);
CT_API ct_status ct_backend_tensor_get_async(ct_backend *backend, const ct_tensor *t, void *data, size_t offset,
                                             size_t size);
/* Waits for everything queued on the backend (transfers; computes return done). */
CT_API ct_status ct_backend_synchronize(ct_backend *backend);
/* Checked between nodes. */
CT_API void ct_backend_set_abort_callback(ct_backend *backend, ct_abort_callback callback, void *user_data);
/* CPU backend only (CT_INVALID_ARGUMENT otherwise): worker threads, n >= 1. */
CT_API ct_status ct_backend_cpu_set_n_threads(ct_backend *backend, int n_threads);
CT_API bool ct_backend_is_cpu(const ct_backend *backend);

#ifdef __cplusplus
}
#endif

#endif /* CTENSOR_H */
