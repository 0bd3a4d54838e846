/*
 * libggml-ctensor: ctensor's backends as an out-of-tree ggml backend (ggml/README.md).
 *
 * A translation layer and nothing more: ggml devices, buffer types, buffers and
 * backends wrap ctensor's (include/ctensor.h section 4), and a ggml node becomes
 * the ctensor op built by ctensor's own constructor over ctensor views of the same
 * bytes. No data is copied and no ggml type reaches the library.
 */
#include "ggml-ctensor-map.h"

#include "ggml-backend-impl.h"
#include "ggml-backend.h"
#include "ggml.h"
/* ggml's graph internals, for the use counts its backends' fusion reads (ctg_link_result);
 * its many static helpers are unused here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "ggml-impl.h"
#pragma GCC diagnostic pop

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_GGML_BUILT_VERSION
#error "CT_GGML_BUILT_VERSION (the ggml version of CT_GGML_SOURCE_DIR) must be defined by ggml/CMakeLists.txt"
#endif
#ifndef CT_GGML_BUILT_COMMIT
#define CT_GGML_BUILT_COMMIT "unknown"
#endif

#define CTG_EXPORT __attribute__((visibility("default")))
#define CTG_MAX_DEVICES 16
#define CTG_MAX_BUFTS 4         /* per device: the default type and the one of host-pointer buffers */
#define CTG_SCRATCH_BYTES 32768 /* stack arena for one op's translation (about 80 tensor headers) */

/* ---- logging --------------------------------------------------------------------- */

/* Through ggml's log callback, so a host that redirects ggml's log gets ours too. */
static void ctg_log(enum ggml_log_level level, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ggml_log_callback cb = NULL;
    void *ud = NULL;
    ggml_log_get(&cb, &ud);
    if (cb) cb(level, msg, ud);
    else fputs(msg, stderr);
}

/* CT_GGML_DEBUG and CT_GGML_CPU_FALLBACK, read once (the scheduler calls in from several threads). */
static struct {
    pthread_once_t once;
    bool debug, cpu_fallback;
} ctg_env = {PTHREAD_ONCE_INIT, false, false};

static bool ctg_env_flag(const char *name) { return getenv(name) && strcmp(getenv(name), "0") != 0; }

static void ctg_env_read(void) {
    ctg_env.debug = ctg_env_flag("CT_GGML_DEBUG");
    ctg_env.cpu_fallback = ctg_env_flag("CT_GGML_CPU_FALLBACK");
}

static bool ctg_debug(void) {
    pthread_once(&ctg_env.once, ctg_env_read);
    return ctg_env.debug;
}

static enum ggml_status ctg_status(ct_status st) {
    switch (st) {
    case CT_OK: return GGML_STATUS_SUCCESS;
    case CT_OUT_OF_MEMORY: return GGML_STATUS_ALLOC_FAILED;
    case CT_ABORTED: return GGML_STATUS_ABORTED;
    default: return GGML_STATUS_FAILED;
    }
}

/* ---- objects ----------------------------------------------------------------------- */

typedef struct ctg_device ctg_device;

typedef struct ctg_buft {
    ct_buffer_type *ct;
    ctg_device *dev;
    char name[80];
} ctg_buft;

struct ctg_device {
    ct_device *ct;
    char name[64];
    char description[256];
    enum ggml_backend_dev_type type;
    struct ggml_backend_device gdev;
    pthread_mutex_t lock; /* guards the lazily added buffer types */
    int n_bufts;
    struct ggml_backend_buffer_type bufts[CTG_MAX_BUFTS];
    ctg_buft buft_ctx[CTG_MAX_BUFTS];
};

static struct {
    pthread_once_t once;
    struct ggml_backend_reg reg;
    size_t n_devices;
    ctg_device devices[CTG_MAX_DEVICES];
} ctg = {.once = PTHREAD_ONCE_INIT};

/* Open addressing map from a ggml tensor (key) to its ctensor counterpart. */
typedef struct ctg_memo {
    uintptr_t *keys;
    ct_tensor **vals;
    size_t cap; /* power of two, or 0 */
} ctg_memo;

/* What the translation of a ggml graph reads (ctg_sig_graph), as 64-bit words: two graphs
 * with equal signatures translate into the same ctensor graph. */
typedef struct ctg_sig {
    uint64_t *w;
    size_t len; /* words of the last graph's signature */
    size_t cap; /* words allocated; those past len are zero or an older signature's */
} ctg_sig;

typedef struct ctg_backend_ctx {
    ct_backend *ct;
    ctg_device *dev;
    void *arena;
    size_t arena_size;
    ctg_memo memo;
    ggml_backend_t cpu; /* ggml's CPU backend, for CT_GGML_CPU_FALLBACK */
    /* The last graph's translation, kept for the next compute of an equal signature:
     * headers in arena (cached_ctx), computed by cached_graph. NULL: none kept. */
    ctg_sig sig;
    ct_context *cached_ctx;
    ct_graph *cached_graph;
} ctg_backend_ctx;

/* One translation: ctensor tensors in ctx; with alloc, placed at the ggml tensors'
 * addresses in their ctensor buffers (graph_compute), else only described (supports_op). */
typedef struct ctg_xl {
    ct_context *ctx;
    bool alloc;
    ctg_memo *memo; /* NULL: no memo */
    const char *why; /* the plugin's own reason for a failed translation, else ctensor's last error */
} ctg_xl;

#define CTG_NO(x, reason) ((x)->why = (reason), (ct_tensor *)NULL)

static void *ctg_buffer_get_base(ggml_backend_buffer_t buffer);

/* ---- memo ---------------------------------------------------------------------------- */

static size_t ctg_memo_slot(const ctg_memo *m, uintptr_t key) {
    size_t h = (size_t)(key >> 4) * (size_t)0x9E3779B97F4A7C15ull;
    size_t i = h & (m->cap - 1);
    while (m->keys[i] != 0 && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

static ct_tensor *ctg_memo_get(const ctg_memo *m, uintptr_t key) {
    if (!m || m->cap == 0) return NULL;
    size_t i = ctg_memo_slot(m, key);
    return m->keys[i] == key ? m->vals[i] : NULL;
}

/* The map is sized for every tensor one compute can make, so it never fills. */
static void ctg_memo_put(ctg_memo *m, uintptr_t key, ct_tensor *val) {
    if (!m || m->cap == 0) return;
    size_t i = ctg_memo_slot(m, key);
    m->keys[i] = key;
    m->vals[i] = val;
}

static bool ctg_memo_reset(ctg_memo *m, size_t n_entries) {
    size_t cap = 64;
    while (cap < 2 * n_entries) cap *= 2;
    if (cap > m->cap) {
        uintptr_t *k = realloc(m->keys, cap * sizeof *k);
        if (k) m->keys = k;
        ct_tensor **v = realloc(m->vals, cap * sizeof *v);
        if (v) m->vals = v;
        if (!k || !v) return false;
        m->cap = cap;
    }
    memset(m->keys, 0, m->cap * sizeof *m->keys);
    return true;
}

/* ---- translation of tensors ------------------------------------------------------------ */

/* The ctensor buffer behind a ggml tensor, when that buffer is one of ours. */
static ct_buffer *ctg_ct_buffer(const struct ggml_tensor *t) {
    ggml_backend_buffer_t b = t->view_src ? t->view_src->buffer : t->buffer;
    if (!b || b->iface.get_base != ctg_buffer_get_base) return NULL;
    return (ct_buffer *)b->context;
}

static bool ctg_same_layout(const ct_tensor *c, const struct ggml_tensor *g) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (c->ne[i] != g->ne[i]) return false;
        if (g->ne[i] > 1 && c->nb[i] != g->nb[i]) return false; /* a stride of a size-1 dim is never used */
    }
    return true;
}

/* A ggml tensor that is not a view, as a contiguous ctensor tensor. */
static ct_tensor *ctg_root(ctg_xl *x, const struct ggml_tensor *r) {
    uintptr_t key = (uintptr_t)r | 1; /* tagged: the same ggml tensor is also memoized as a source */
    ct_tensor *t = ctg_memo_get(x->memo, key);
    if (t) return t;
    ct_type ty;
    if (!ctg_map_type(r->type, &ty)) return CTG_NO(x, "ctensor has no such type");
    t = ct_tensor_new_4d(x->ctx, ty, r->ne[0], r->ne[1], r->ne[2], r->ne[3]);
    if (!t) return NULL;
    if (!ctg_same_layout(t, r)) {
        /* A tensor with a view's strides that owns its bytes (the scheduler's copy of a
         * permuted split input): its bytes as a 1-d root, which ctg_src views. */
        const size_t ts = ggml_type_size(r->type), nbytes = ggml_nbytes(r);
        if (nbytes % ts != 0) return CTG_NO(x, "a root tensor that is not contiguous");
        t = ct_tensor_new_1d(x->ctx, ty, (int64_t)(nbytes / ts) * ggml_blck_size(r->type));
        if (!t) return NULL;
    }
    if (x->alloc) {
        ct_buffer *cb = ctg_ct_buffer(r);
        if (!cb) return CTG_NO(x, "a tensor outside the plugin's buffers");
        if (ct_buffer_alloc_tensor(cb, t, r->data) != CT_OK) return NULL;
    }
    ctg_memo_put(x->memo, key, t);
    return t;
}

/* Any ggml tensor as a ctensor tensor over the same bytes: a view of its root with
 * ggml's ne and nb. ct_view_4d fixes nb[0] to the type size, so a permuted tensor is
 * a view in stride order permuted back. */
static ct_tensor *ctg_src(ctg_xl *x, const struct ggml_tensor *g) {
    ct_tensor *t = ctg_memo_get(x->memo, (uintptr_t)g);
    if (t) return t;
    const struct ggml_tensor *r = g->view_src ? g->view_src : g;
    ct_tensor *root = ctg_root(x, r);
    if (!root) return NULL;
    if (!g->view_src && ctg_same_layout(root, g)) return root;
    if (g->type != r->type) return CTG_NO(x, "a view of another type than its root");

    const size_t ts = ct_type_size(root->type);
    int d0 = g->nb[0] == ts ? 0 : -1;
    for (int d = 1; d < GGML_MAX_DIMS && d0 < 0; d++) {
        if (g->nb[d] == ts && g->ne[d] > 1) d0 = d;
    }
    for (int d = 0; d < GGML_MAX_DIMS && d0 < 0; d++) {
        if (g->ne[d] == 1) d0 = d; /* its stride is never used: it can be the unit-stride dim */
    }
    if (d0 < 0) return CTG_NO(x, "a view without a unit-stride dim");
    int q[GGML_MAX_DIMS] = {d0, 0, 0, 0};
    for (int d = 0, k = 1; d < GGML_MAX_DIMS; d++) {
        if (d != d0) q[k++] = d;
    }
    t = ct_view_4d(x->ctx, root, g->ne[q[0]], g->ne[q[1]], g->ne[q[2]], g->ne[q[3]], g->nb[q[1]], g->nb[q[2]],
                   g->nb[q[3]], g->view_offs);
    if (!t) return NULL;
    if (x->alloc && ct_buffer_init_view(t) != CT_OK) return NULL;
    if (d0 != 0) {
        t = ct_permute(x->ctx, t, q[0], q[1], q[2], q[3]);
        if (!t) return NULL;
        if (x->alloc && ct_buffer_init_view(t) != CT_OK) return NULL;
    }
    if (!ctg_same_layout(t, g)) return CTG_NO(x, "a view ctensor lays out differently");
    ctg_memo_put(x->memo, (uintptr_t)g, t);
    return t;
}

static float ctg_param_f32(const struct ggml_tensor *t, int i) {
    float f;
    memcpy(&f, &t->op_params[i], sizeof f);
    return f;
}

/* UNARY's op_params[0] passes through: ct_unary_op numbers the sub-ops as ggml does. */
_Static_assert(CT_UNARY_OP_GELU == (int)GGML_UNARY_OP_GELU && CT_UNARY_OP_XIELU == (int)GGML_UNARY_OP_XIELU &&
                   CT_UNARY_OP_TRUNC == (int)GGML_UNARY_OP_TRUNC && CT_UNARY_OP_COUNT == (int)GGML_UNARY_OP_COUNT,
               "ct_unary_op differs from ggml_unary_op");

/* GLU's op_params[0] passes through: ct_glu_op numbers the sub-ops as ggml does. */
_Static_assert(CT_GLU_OP_GEGLU == (int)GGML_GLU_OP_GEGLU && CT_GLU_OP_SWIGLU_OAI == (int)GGML_GLU_OP_SWIGLU_OAI &&
                   CT_GLU_OP_SWIGLU_CLAMP == (int)GGML_GLU_OP_SWIGLU_CLAMP &&
                   CT_GLU_OP_COUNT == (int)GGML_GLU_OP_COUNT,
               "ct_glu_op differs from ggml_glu_op");

/* A compute node as the ctensor op that computes the same bytes, or NULL when
 * ctensor has no such op or refuses its operands. */
static ct_tensor *ctg_node(ctg_xl *x, const struct ggml_tensor *node) {
    const ct_op want = ctg_map_op(node->op);
    ct_type ty;
    if (want == CT_OP_COUNT || ctg_is_view_op(node->op)) return CTG_NO(x, "ctensor has no such op");
    if (!ctg_map_type(node->type, &ty)) return CTG_NO(x, "ctensor has no such type");
    int n_src = 1, n_opt = 0; /* the last n_opt of the n_src sources may be NULL */
    switch (node->op) {
    case GGML_OP_CPY:
    case GGML_OP_GET_ROWS:
    case GGML_OP_MUL_MAT:
    case GGML_OP_ADD:
    case GGML_OP_SUB:
    case GGML_OP_MUL:
    case GGML_OP_DIV:
    case GGML_OP_ADD1:
    case GGML_OP_CONCAT:
    case GGML_OP_ACC: n_src = 2; break;
    case GGML_OP_ARANGE: n_src = 0; break;
    case GGML_OP_SET_ROWS: n_src = 3; break;
    case GGML_OP_MUL_MAT_ID:
    case GGML_OP_ADD_ID: n_src = 3; break;
    case GGML_OP_SOFT_MAX: n_src = 3, n_opt = 2; break; /* the mask and the sinks */
    case GGML_OP_ROPE: n_src = node->src[2] ? 3 : 2; break; /* src[2]: the optional freq factors */
    case GGML_OP_GLU: n_src = 2, n_opt = 1; break; /* src[1]: the split form's gate */
    case GGML_OP_FLASH_ATTN_EXT: n_src = 5, n_opt = 2; break; /* q, k, v; the mask and the sinks */
    default: break;
    }
    ct_tensor *s[5] = {NULL, NULL, NULL, NULL, NULL};
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const bool optional = i < n_src && i >= n_src - n_opt;
        if (!optional && (i < n_src) != (node->src[i] != NULL)) return CTG_NO(x, "operands ctensor's op does not take");
        if (optional && !node->src[i]) continue;
        if (i < n_src && !(s[i] = ctg_src(x, node->src[i]))) return NULL;
    }
    ct_context *c = x->ctx;
    ct_tensor *r = NULL;
    switch (node->op) {
    case GGML_OP_DUP: r = ct_dup(c, s[0]); break;
    case GGML_OP_CPY: r = ct_cpy(c, s[0], s[1]); break;
    case GGML_OP_CONT: r = ct_cont(c, s[0]); break;
    case GGML_OP_GET_ROWS: r = ct_get_rows(c, s[0], s[1]); break;
    /* ggml's operand order is (values, indices, destination) */
    case GGML_OP_SET_ROWS: r = ct_set_rows(c, s[2], s[0], s[1]); break;
    case GGML_OP_MUL_MAT: r = ct_mul_mat(c, s[0], s[1]); break;
    case GGML_OP_NORM: r = ct_norm(c, s[0], ctg_param_f32(node, 0)); break;
    case GGML_OP_RMS_NORM: r = ct_rms_norm(c, s[0], ctg_param_f32(node, 0)); break;
    case GGML_OP_L2_NORM: r = ct_l2_norm(c, s[0], ctg_param_f32(node, 0)); break;
    case GGML_OP_GROUP_NORM: r = ct_group_norm(c, s[0], node->op_params[0], ctg_param_f32(node, 1)); break;
    case GGML_OP_SUM_ROWS: r = ct_sum_rows(c, s[0]); break;
    case GGML_OP_MEAN: r = ct_mean(c, s[0]); break;
    case GGML_OP_UNARY:
        if (node->op_params[0] == GGML_UNARY_OP_XIELU) {
            /* ct_xielu derives op_params[1..2] from alpha_n and alpha_p; ggml stored them
             * derived already, so this node is rebuilt and its op_params set to ggml's. */
            r = ct_xielu(c, s[0], 0.0f, 0.0f, ctg_param_f32(node, 3), ctg_param_f32(node, 4));
            if (r) memcpy(&r->op_params[1], &node->op_params[1], 2 * sizeof(int32_t));
        } else {
            r = ct_unary(c, s[0], (ct_unary_op)node->op_params[0]);
        }
        break;
    case GGML_OP_SCALE: r = ct_scale_bias(c, s[0], ctg_param_f32(node, 0), ctg_param_f32(node, 1)); break;
    case GGML_OP_ADD: r = ct_add(c, s[0], s[1]); break;
    case GGML_OP_SUB: r = ct_sub(c, s[0], s[1]); break;
    case GGML_OP_MUL: r = ct_mul(c, s[0], s[1]); break;
    case GGML_OP_DIV: r = ct_div(c, s[0], s[1]); break;
    case GGML_OP_ADD1: r = ct_add1(c, s[0], s[1]); break;
    case GGML_OP_SOFT_MAX:
        r = ct_soft_max_ext(c, s[0], s[1], s[2], ctg_param_f32(node, 0), ctg_param_f32(node, 1));
        break;
    case GGML_OP_ROPE: {
        /* ggml_rope_ext / ggml_rope_multi, in place when the node is a view of src0
         * (a leading 0 and n_ctx are unused; the memcmp below checks every slot) */
        const int32_t *p = node->op_params;
        const int mode = p[2];
        const bool inplace = node->view_src != NULL;
        float f[6];
        memcpy(f, &p[5], sizeof f);
        if (mode & GGML_ROPE_TYPE_MROPE) {
            r = (inplace ? ct_rope_multi_inplace : ct_rope_multi)(c, s[0], s[1], s[2], p[1], &p[11], mode, p[4], f[0],
                                                                 f[1], f[2], f[3], f[4], f[5]);
        } else {
            r = (inplace ? ct_rope_ext_inplace : ct_rope_ext)(c, s[0], s[1], s[2], p[1], mode, p[4], f[0], f[1], f[2],
                                                             f[3], f[4], f[5]);
        }
        if (r && p[15] != 0) r = ct_rope_set_offset(r, p[15]);
        break;
    }
    case GGML_OP_GLU:
        /* ggml_glu / ggml_glu_split and the ops built on them; op_params[2..3] (SWIGLU_OAI's
         * alpha and limit, SWIGLU_CLAMP's limit) are copied as ggml set them */
        r = s[1] ? ct_glu_split(c, s[0], s[1], (ct_glu_op)node->op_params[0])
                 : ct_glu(c, s[0], (ct_glu_op)node->op_params[0], node->op_params[1] != 0);
        if (r) memcpy(&r->op_params[2], &node->op_params[2], 2 * sizeof(int32_t));
        break;
    case GGML_OP_SUM:
        /* ggml-cpu reads each row as packed floats whatever nb[0] says (an assert only in
         * debug builds): such a SUM stays with ggml, whose bytes ctensor would not equal */
        if (node->src[0]->nb[0] != ggml_type_size(node->src[0]->type)) return CTG_NO(x, "SUM of rows not packed");
        r = ct_sum(c, s[0]);
        break;
    case GGML_OP_CUMSUM: r = ct_cumsum(c, s[0]); break;
    case GGML_OP_ARGMAX: r = ct_argmax(c, s[0]); break;
    case GGML_OP_ARGSORT: r = ct_argsort(c, s[0], (ct_sort_order)node->op_params[0]); break;
    case GGML_OP_TOP_K: r = ct_top_k(c, s[0], node->ne[0] <= INT_MAX ? (int)node->ne[0] : -1); break;
    case GGML_OP_MUL_MAT_ID: r = ct_mul_mat_id(c, s[0], s[1], s[2]); break;
    case GGML_OP_ADD_ID: r = ct_add_id(c, s[0], s[1], s[2]); break;
    /* the math ops: in place when the node is a view of src0 (ggml's _inplace forms) */
    case GGML_OP_SQR: r = (node->view_src ? ct_sqr_inplace : ct_sqr)(c, s[0]); break;
    case GGML_OP_SQRT: r = (node->view_src ? ct_sqrt_inplace : ct_sqrt)(c, s[0]); break;
    case GGML_OP_SIN: r = (node->view_src ? ct_sin_inplace : ct_sin)(c, s[0]); break;
    case GGML_OP_COS: r = (node->view_src ? ct_cos_inplace : ct_cos)(c, s[0]); break;
    case GGML_OP_LOG: r = (node->view_src ? ct_ln_inplace : ct_ln)(c, s[0]); break;
    case GGML_OP_CLAMP:
        r = (node->view_src ? ct_clamp_inplace : ct_clamp)(c, s[0], ctg_param_f32(node, 0), ctg_param_f32(node, 1));
        break;
    case GGML_OP_LEAKY_RELU: r = ct_leaky_relu(c, s[0], ctg_param_f32(node, 0), node->view_src != NULL); break;
    case GGML_OP_FILL: r = (node->view_src ? ct_fill_inplace : ct_fill)(c, s[0], ctg_param_f32(node, 0)); break;
    /* the shape ops (ggml_repeat's second operand is only a shape: the node's) */
    case GGML_OP_REPEAT: r = ct_repeat_4d(c, s[0], node->ne[0], node->ne[1], node->ne[2], node->ne[3]); break;
    case GGML_OP_CONCAT: r = ct_concat(c, s[0], s[1], node->op_params[0]); break;
    case GGML_OP_PAD: {
        const int32_t *p = node->op_params;
        r = (p[8] ? ct_pad_ext_circular : ct_pad_ext)(c, s[0], p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
        break;
    }
    case GGML_OP_ARANGE: r = ct_arange(c, ctg_param_f32(node, 0), ctg_param_f32(node, 1), ctg_param_f32(node, 2)); break;
    case GGML_OP_ACC: {
        /* ggml stores the strides and offset as int32 */
        const int32_t *p = node->op_params;
        if (p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0) return CTG_NO(x, "ACC with a negative stride or offset");
        r = (p[4] ? ct_acc_inplace : ct_acc)(c, s[0], s[1], (size_t)p[0], (size_t)p[1], (size_t)p[2], (size_t)p[3]);
        break;
    }
    case GGML_OP_FLASH_ATTN_EXT: {
        /* op_params [3] precision (ctensor accumulates in F32 for either) and [4] n_kv_max (a
         * hint that the mask is sparse) pass through */
        const int32_t *p = node->op_params;
        r = ct_flash_attn_ext(c, s[0], s[1], s[2], s[3], ctg_param_f32(node, 0), ctg_param_f32(node, 1),
                              ctg_param_f32(node, 2));
        if (r && s[4]) r = ct_flash_attn_ext_add_sinks(r, s[4]);
        if (r) r = ct_flash_attn_ext_set_prec(r, p[3]);
        if (r && p[4] >= 0) r->op_params[4] = p[4];
        break;
    }
    default: return CTG_NO(x, "ctensor has no such op");
    }
    if (!r) return NULL;
    if (r->op != want || r->type != ty) return CTG_NO(x, "ctensor builds another op or type");
    /* The same op: every parameter ggml set is one ctensor set the same way. */
    int32_t params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];
    memcpy(params, node->op_params, sizeof params);
    if (node->op == GGML_OP_MUL_MAT || node->op == GGML_OP_MUL_MAT_ID) {
        /* Requests that leave the product's value alone: F32 precision (ctensor's MUL_MAT
         * result is F32 and ggml's thresholds hold for it, docs/BACKENDS.md), and the hint
         * that src0 is a Hadamard matrix (a shortcut for the same product). */
        if (params[0] == GGML_PREC_DEFAULT || params[0] == GGML_PREC_F32) params[0] = 0;
        if (params[1] == GGML_HINT_NONE || params[1] == GGML_HINT_SRC0_IS_HADAMARD) params[1] = 0;
        /* per-source precision requests (ggml_prec_set_src): ctensor reads every source as F32 */
        for (int i = 2; i < 2 + 3 && node->op == GGML_OP_MUL_MAT_ID; i++)
            if (params[i] == GGML_PREC_DEFAULT || params[i] == GGML_PREC_F32) params[i] = 0;
    }
    if (memcmp(r->op_params, params, sizeof params) != 0) return CTG_NO(x, "op_params differ");
    if (node->op == GGML_OP_CONT) {
        /* ggml_cont_4d may reshape; both results are contiguous, so the bytes agree. */
        if (ct_nelements(r) != ggml_nelements(node) || !ggml_is_contiguous(node)) return CTG_NO(x, "CONT of another size");
    } else if (!ctg_same_layout(r, node)) {
        return CTG_NO(x, "the result's shape or strides differ");
    }
    if (x->alloc) {
        ct_status st;
        if (r->view_src) {
            st = ct_buffer_init_view(r);
            if (st == CT_OK && r->data != node->data) return CTG_NO(x, "the result view is elsewhere");
        } else {
            ct_buffer *cb = ctg_ct_buffer(node);
            if (!cb) return CTG_NO(x, "a result outside the plugin's buffers");
            st = ct_buffer_alloc_tensor(cb, r, node->data);
        }
        if (st != CT_OK) return NULL;
    }
    return r;
}

/* r computes node i of cgraph. Later nodes of the same translation take r itself as their
 * source, so that the ctensor graph knows r's consumers; and r is flagged output (written
 * whatever ctensor fuses, ct_backend_graph_compute) unless ggml counts exactly one use of
 * it in the whole graph (a split's cgraph shares the scheduler's counts, which also see the
 * other splits) and no output flag: ggml_node_has_n_uses' conditions for its own backends'
 * fusion. With the CPU fallback every result is flagged: a node computed on ggml's CPU
 * between two ctensor graphs is a consumer neither graph sees. */
static void ctg_link_result(ctg_xl *x, const struct ggml_cgraph *cgraph, int i, bool fallback, ct_tensor *r) {
    const struct ggml_tensor *node = ggml_graph_node((struct ggml_cgraph *)cgraph, i);
    const bool one_use = cgraph->use_counts && ggml_node_get_use_count(cgraph, i) == 1;
    if (fallback || !one_use || (node->flags & GGML_TENSOR_FLAG_OUTPUT) || node->view_src) ct_set_output(r);
    if (!r->view_src && ctg_same_layout(r, node)) ctg_memo_put(x->memo, (uintptr_t)node | 1, r);
}

/* A no-alloc context in caller memory (CT_MEM_ALIGN-aligned). */
static ct_context *ctg_scratch(void *mem, size_t size) {
    return ct_context_new((ct_context_params){.mem_size = size, .mem_buffer = mem, .no_alloc = true});
}

/* ---- buffers --------------------------------------------------------------------------- */

/* size bytes at addr in cb as one I8 tensor: the unit of every transfer. */
static ct_tensor *ctg_window(ct_context *ctx, ct_buffer *cb, const void *addr, size_t size) {
    ct_tensor *t = ct_tensor_new_1d(ctx, CT_TYPE_I8, (int64_t)size);
    if (!t || ct_buffer_alloc_tensor(cb, t, (void *)addr) != CT_OK) return NULL;
    return t;
}

static void ctg_buffer_free(ggml_backend_buffer_t buffer) { ct_buffer_free((ct_buffer *)buffer->context); }

static void *ctg_buffer_get_base(ggml_backend_buffer_t buffer) { return ct_buffer_base((ct_buffer *)buffer->context); }

static enum ggml_status ctg_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor) {
    (void)buffer;
    (void)tensor;
    return GGML_STATUS_SUCCESS; /* ctensor keeps nothing per tensor (extra stays NULL) */
}

typedef enum { CTG_SET, CTG_GET, CTG_MEMSET } ctg_xfer_kind;

/* ggml's transfer entries return nothing: a failure is logged, never raised (and returned,
 * for the callers that can say so). */
static ct_status ctg_xfer(ctg_xfer_kind kind, ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, void *data,
                     uint8_t value, size_t offset, size_t size) {
    if (size == 0) return CT_OK;
    _Alignas(CT_MEM_ALIGN) unsigned char arena[4096];
    ct_context *ctx = ctg_scratch(arena, sizeof arena);
    ct_tensor *w = ctx ? ctg_window(ctx, buffer->context, (const char *)tensor->data + offset, size) : NULL;
    ct_status st = w ? CT_OK : ct_last_status();
    if (w && kind == CTG_SET) st = ct_tensor_set(w, data, 0, size);
    if (w && kind == CTG_GET) st = ct_tensor_get(w, data, 0, size);
    if (w && kind == CTG_MEMSET) st = ct_tensor_memset(w, value, 0, size);
    ct_context_free(ctx);
    if (st != CT_OK) {
        static const char *names[] = {"set_tensor", "get_tensor", "memset_tensor"};
        ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s of '%s' (%zu bytes at offset %zu) failed: %s\n", names[kind],
                tensor->name, size, offset, ct_last_error());
    }
    return st;
}

static void ctg_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, const void *data,
                                  size_t offset, size_t size) {
    ctg_xfer(CTG_SET, buffer, tensor, (void *)data, 0, offset, size);
}

static void ctg_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, void *data,
                                  size_t offset, size_t size) {
    ctg_xfer(CTG_GET, buffer, tensor, data, 0, offset, size);
}

static void ctg_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, uint8_t value,
                                     size_t offset, size_t size) {
    ctg_xfer(CTG_MEMSET, buffer, tensor, NULL, value, offset, size);
}

/* dst is in this buffer; src anywhere. Host memory is written in, our own buffers are
 * copied by ctensor (on the device where it can); anything else goes through ggml. */
static bool ctg_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *src,
                                  struct ggml_tensor *dst) {
    size_t n = ggml_nbytes(src);
    if (src->buffer && ggml_backend_buffer_is_host(src->buffer)) {
        return ctg_xfer(CTG_SET, buffer, dst, src->data, 0, 0, n) == CT_OK;
    }
    ct_buffer *sb = ctg_ct_buffer(src);
    if (!sb || n == 0) return false;
    _Alignas(CT_MEM_ALIGN) unsigned char arena[4096];
    ct_context *ctx = ctg_scratch(arena, sizeof arena);
    ct_tensor *ws = ctx ? ctg_window(ctx, sb, src->data, n) : NULL;
    ct_tensor *wd = ws ? ctg_window(ctx, buffer->context, dst->data, n) : NULL;
    bool ok = wd && ct_tensor_copy(ws, wd) == CT_OK;
    if (!ok) ctg_log(GGML_LOG_LEVEL_DEBUG, "ggml-ctensor: cpy_tensor '%s': %s\n", dst->name, ct_last_error());
    ct_context_free(ctx);
    return ok;
}

static void ctg_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    if (ct_buffer_clear(buffer->context, value) != CT_OK) {
        ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: clear failed: %s\n", ct_last_error());
    }
}

static const struct ggml_backend_buffer_i ctg_buffer_iface = {
    .free_buffer = ctg_buffer_free,
    .get_base = ctg_buffer_get_base,
    .init_tensor = ctg_buffer_init_tensor,
    .memset_tensor = ctg_buffer_memset_tensor,
    .set_tensor = ctg_buffer_set_tensor,
    .get_tensor = ctg_buffer_get_tensor,
    .set_tensor_2d = NULL, /* ggml loops over set_tensor */
    .get_tensor_2d = NULL,
    .cpy_tensor = ctg_buffer_cpy_tensor,
    .clear = ctg_buffer_clear,
    .reset = NULL,
};

/* ---- buffer types ------------------------------------------------------------------------ */

static ctg_buft *ctg_buft_ctx(ggml_backend_buffer_type_t buft) { return (ctg_buft *)buft->context; }

static const char *ctg_buft_get_name(ggml_backend_buffer_type_t buft) { return ctg_buft_ctx(buft)->name; }

static ggml_backend_buffer_t ctg_wrap_buffer(ggml_backend_buffer_type_t buft, ct_buffer *cb, size_t size) {
    ggml_backend_buffer_t b = ggml_backend_buffer_init(buft, ctg_buffer_iface, cb, size);
    if (!b) ct_buffer_free(cb);
    return b;
}

static ggml_backend_buffer_t ctg_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    ct_buffer *cb = NULL;
    if (ct_buffer_type_alloc(ctg_buft_ctx(buft)->ct, size, &cb) != CT_OK) {
        ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: cannot allocate %zu bytes of %s: %s\n", size,
                ctg_buft_ctx(buft)->name, ct_last_error());
        return NULL;
    }
    ct_buffer_set_usage(cb, CT_BUFFER_USAGE_ANY);
    return ctg_wrap_buffer(buft, cb, size);
}

static size_t ctg_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    return ct_buffer_type_alignment(ctg_buft_ctx(buft)->ct);
}

static size_t ctg_buft_get_max_size(ggml_backend_buffer_type_t buft) {
    return ct_buffer_type_max_size(ctg_buft_ctx(buft)->ct);
}

/* ctensor's size for a tensor of this type and shape, never below ggml's. */
static size_t ctg_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor *tensor) {
    size_t n = ggml_nbytes(tensor), ct_n = 0;
    ct_type ty;
    if (!ctg_map_type(tensor->type, &ty)) return n;
    _Alignas(CT_MEM_ALIGN) unsigned char arena[2048];
    ct_context *ctx = ctg_scratch(arena, sizeof arena);
    ct_tensor *t = ctx ? ct_tensor_new_4d(ctx, ty, tensor->ne[0], tensor->ne[1], tensor->ne[2], tensor->ne[3]) : NULL;
    if (t && ct_buffer_type_alloc_size(ctg_buft_ctx(buft)->ct, t, &ct_n) == CT_OK && ct_n > n) n = ct_n;
    ct_context_free(ctx);
    return n;
}

static bool ctg_buft_is_host(ggml_backend_buffer_type_t buft) { return ct_buffer_type_is_host(ctg_buft_ctx(buft)->ct); }

static const struct ggml_backend_buffer_type_i ctg_buft_iface = {
    .get_name = ctg_buft_get_name,
    .alloc_buffer = ctg_buft_alloc_buffer,
    .get_alignment = ctg_buft_get_alignment,
    .get_max_size = ctg_buft_get_max_size,
    .get_alloc_size = ctg_buft_get_alloc_size,
    .is_host = ctg_buft_is_host,
};

/* The ggml buffer type wrapping a ctensor buffer type of dev, made on first use. */
static ggml_backend_buffer_type_t ctg_buft_for(ctg_device *dev, ct_buffer_type *ct) {
    ggml_backend_buffer_type_t found = NULL;
    pthread_mutex_lock(&dev->lock);
    for (int i = 0; i < dev->n_bufts && !found; i++) {
        if (dev->buft_ctx[i].ct == ct) found = &dev->bufts[i];
    }
    if (!found && dev->n_bufts < CTG_MAX_BUFTS) {
        int i = dev->n_bufts;
        ctg_buft *c = &dev->buft_ctx[i];
        c->ct = ct;
        c->dev = dev;
        const char *ct_name = ct_buffer_type_name(ct);
        /* ctensor names the default type after the device ("OpenCL0"), others "OpenCL0_Mapped". */
        const char *dev_ct_name = ct_device_name(dev->ct);
        size_t l = strlen(dev_ct_name);
        if (strncmp(ct_name, dev_ct_name, l) == 0) snprintf(c->name, sizeof c->name, "%s%s", dev->name, ct_name + l);
        else snprintf(c->name, sizeof c->name, "%s_%s", dev->name, ct_name);
        dev->bufts[i] = (struct ggml_backend_buffer_type){.iface = ctg_buft_iface, .device = &dev->gdev, .context = c};
        found = &dev->bufts[i];
        dev->n_bufts = i + 1;
    }
    pthread_mutex_unlock(&dev->lock);
    return found;
}

/* ---- backend (stream) ------------------------------------------------------------------------ */

static ctg_backend_ctx *ctg_be(ggml_backend_t backend) { return (ctg_backend_ctx *)backend->context; }

static void ctg_cache_drop(ctg_backend_ctx *c);

static const char *ctg_be_get_name(ggml_backend_t backend) { return ctg_be(backend)->dev->name; }

static void ctg_be_free(ggml_backend_t backend) {
    ctg_backend_ctx *c = ctg_be(backend);
    ct_backend_free(c->ct);
    if (c->cpu) ggml_backend_free(c->cpu);
    ctg_cache_drop(c);
    free(c->sig.w);
    free(c->arena);
    free(c->memo.keys);
    free(c->memo.vals);
    free(c);
    free(backend);
}

static void ctg_be_synchronize(ggml_backend_t backend) {
    if (ct_backend_synchronize(ctg_be(backend)->ct) != CT_OK) {
        ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: synchronize failed: %s\n", ctg_be_get_name(backend),
                ct_last_error());
    }
}

/* An async transfer of size > 0 bytes at tensor->data + offset, tensor in cb (one of
 * ours), on the backend's stream: ctensor queues it where the device has the async
 * cap, else does it at once. */
static ct_status ctg_be_xfer_async(ggml_backend_t backend, ctg_xfer_kind kind, ct_buffer *cb,
                                   const struct ggml_tensor *tensor, void *data, size_t offset, size_t size) {
    _Alignas(CT_MEM_ALIGN) unsigned char arena[4096];
    ct_context *ctx = ctg_scratch(arena, sizeof arena);
    ct_tensor *w = ctx ? ctg_window(ctx, cb, (const char *)tensor->data + offset, size) : NULL;
    ct_status st = w ? CT_OK : ct_last_status();
    if (w && kind == CTG_SET) st = ct_backend_tensor_set_async(ctg_be(backend)->ct, w, data, 0, size);
    if (w && kind == CTG_GET) st = ct_backend_tensor_get_async(ctg_be(backend)->ct, w, data, 0, size);
    ct_context_free(ctx); /* a queued transfer keeps no pointer to the window */
    return st;
}

/* ggml's async entries return nothing: a failure is logged, never raised. */
static void ctg_be_xfer_async_logged(ggml_backend_t backend, ctg_xfer_kind kind, const struct ggml_tensor *tensor,
                                     void *data, size_t offset, size_t size) {
    if (size == 0) return;
    ct_buffer *cb = ctg_ct_buffer(tensor);
    if (cb && ctg_be_xfer_async(backend, kind, cb, tensor, data, offset, size) == CT_OK) return;
    ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: %s of '%s' (%zu bytes at offset %zu) failed: %s\n",
            ctg_be_get_name(backend), kind == CTG_SET ? "set_tensor_async" : "get_tensor_async", tensor->name, size,
            offset, cb ? ct_last_error() : "the tensor is not in a ctensor buffer");
}

static void ctg_be_set_tensor_async(ggml_backend_t backend, struct ggml_tensor *tensor, const void *data,
                                    size_t offset, size_t size) {
    ctg_be_xfer_async_logged(backend, CTG_SET, tensor, (void *)data, offset, size);
}

static void ctg_be_get_tensor_async(ggml_backend_t backend, const struct ggml_tensor *tensor, void *data,
                                    size_t offset, size_t size) {
    ctg_be_xfer_async_logged(backend, CTG_GET, tensor, data, offset, size);
}

/* ggml_backend_sched copies each input of a split with this (else it waits for both
 * backends and does a blocking copy). A host source is queued as an async write on the
 * destination's stream, ahead of the split's compute, which waits for it at its end.
 * The source backend is synchronized first: its queued work may still be writing src.
 * Anything else goes through ggml's blocking path. */
static bool ctg_be_cpy_tensor_async(ggml_backend_t backend_src, ggml_backend_t backend_dst,
                                    const struct ggml_tensor *src, struct ggml_tensor *dst) {
    ct_buffer *cb = ctg_ct_buffer(dst);
    const size_t n = ggml_nbytes(src);
    if (!src->buffer || !ggml_backend_buffer_is_host(src->buffer) || !cb) return false;
    if (n == 0) return true;
    if (backend_src && backend_src != backend_dst) ggml_backend_synchronize(backend_src);
    if (ctg_be_xfer_async(backend_dst, CTG_SET, cb, dst, src->data, 0, n) != CT_OK) {
        ctg_log(GGML_LOG_LEVEL_DEBUG, "ggml-ctensor: cpy_tensor_async '%s': %s\n", dst->name, ct_last_error());
        return false;
    }
    return true;
}

static bool ctg_node_computes(const struct ggml_tensor *node) {
    return (node->flags & GGML_TENSOR_FLAG_COMPUTE) && !ctg_is_view_op(node->op) && !ggml_is_empty(node);
}

/* CT_GGML_CPU_FALLBACK=1: a node ctensor cannot compute runs on ggml's CPU backend over host
 * copies of its operands (ggml/README.md). For hosts that send every op whatever supports_op
 * said: ggml's RPC client claims every op for its remote device, so an rpc-server serving a
 * ctensor device receives whole graphs. Off by default: elsewhere such a node is an error. */
static bool ctg_cpu_fallback_on(void) {
    pthread_once(&ctg_env.once, ctg_env_read);
    return ctg_env.cpu_fallback;
}

/* The node on ggml's CPU backend: each source and the node's own bytes (kept where the op
 * leaves them) read into host memory with the same strides, one-node graph, result written back. */
static const char *ctg_dev_get_name(ggml_backend_dev_t dev);

static enum ggml_status ctg_cpu_node(ctg_backend_ctx *c, const struct ggml_tensor *node) {
    for (size_t i = 0; !c->cpu && i < ggml_backend_dev_count(); i++) {
        /* ggml's CPU device, never the plugin's own CTCPU: that would send the node back here */
        ggml_backend_dev_t d = ggml_backend_dev_get(i);
        if (ggml_backend_dev_type(d) == GGML_BACKEND_DEVICE_TYPE_CPU && d->iface.get_name != ctg_dev_get_name) {
            c->cpu = ggml_backend_dev_init(d, NULL);
        }
    }
    if (!c->cpu) {
        ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: CT_GGML_CPU_FALLBACK: ggml has no CPU backend to start\n",
                c->dev->name);
        return GGML_STATUS_FAILED;
    }
    struct ggml_init_params ip = {
        .mem_size = (GGML_MAX_SRC + 1) * ggml_tensor_overhead() + ggml_graph_overhead_custom(1, false),
        .mem_buffer = NULL,
        .no_alloc = true};
    struct ggml_context *ctx = ggml_init(ip);
    if (!ctx) return GGML_STATUS_ALLOC_FAILED;
    void *mem[GGML_MAX_SRC + 1] = {NULL};
    enum ggml_status st = GGML_STATUS_SUCCESS;
    struct ggml_tensor *copy = ggml_new_tensor(ctx, node->type, GGML_MAX_DIMS, node->ne);
    for (int i = 0; i <= GGML_MAX_SRC && st == GGML_STATUS_SUCCESS; i++) {
        const struct ggml_tensor *t = i < GGML_MAX_SRC ? node->src[i] : node;
        if (!t) continue;
        struct ggml_tensor *h = i < GGML_MAX_SRC ? ggml_new_tensor(ctx, t->type, GGML_MAX_DIMS, t->ne) : copy;
        memcpy(h->nb, t->nb, sizeof h->nb);
        size_t n = ggml_nbytes(t);
        mem[i] = malloc(n ? n : 1);
        if (!mem[i]) {
            st = GGML_STATUS_ALLOC_FAILED;
            break;
        }
        if (n && t->buffer) ggml_backend_tensor_get(t, mem[i], 0, n);
        else if (n && t->data) memcpy(mem[i], t->data, n);
        h->data = mem[i];
        if (i < GGML_MAX_SRC) copy->src[i] = h;
    }
    if (st == GGML_STATUS_SUCCESS) {
        copy->op = node->op;
        memcpy(copy->op_params, node->op_params, sizeof copy->op_params);
        copy->flags = node->flags;
        struct ggml_cgraph *g = ggml_new_graph_custom(ctx, 1, false);
        ggml_graph_add_node(g, copy);
        st = ggml_backend_graph_compute(c->cpu, g);
        if (st == GGML_STATUS_SUCCESS) {
            ggml_backend_tensor_set((struct ggml_tensor *)node, mem[GGML_MAX_SRC], 0, ggml_nbytes(node));
        }
    }
    for (int i = 0; i <= GGML_MAX_SRC; i++) free(mem[i]);
    ggml_free(ctx);
    return st;
}

/* ---- the kept translation ------------------------------------------------------------- */

/* The words ctg_sig_tensor writes at most, and ctg_sig_graph per node. */
#define CTG_SIG_TENSOR_WORDS (8 + 4 * GGML_MAX_DIMS)
#define CTG_SIG_NODE_WORDS (3 + GGML_MAX_OP_PARAMS / 8 + (1 + GGML_MAX_SRC) * CTG_SIG_TENSOR_WORDS)

/* Everything ctg_src, ctg_root and ctg_node read of t: its address (the memo and the links
 * between results key on it), type, shape, strides, data, ctensor buffer (NULL: not one of
 * ours) and, for a view, its offset and root. A ctensor tensor holds no more of a buffer than
 * the ct_buffer pointer and the address (ct_buffer_alloc_tensor; no ctensor buffer has an
 * init_tensor), so a buffer freed and another made at the same addresses translates the same.
 * Writes the words at w[n...] and returns the new count. */
static inline size_t ctg_sig_tensor(uint64_t *w, size_t n, const struct ggml_tensor *t) {
    w[n++] = (uintptr_t)t;
    if (!t) return n;
    w[n++] = (uint64_t)t->type;
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        w[n++] = (uint64_t)t->ne[d];
        w[n++] = (uint64_t)t->nb[d];
    }
    w[n++] = (uintptr_t)t->data;
    w[n++] = (uintptr_t)ctg_ct_buffer(t);
    const struct ggml_tensor *r = t->view_src;
    w[n++] = (uintptr_t)r;
    if (!r) return n;
    w[n++] = (uint64_t)t->view_offs;
    w[n++] = (uint64_t)r->type;
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        w[n++] = (uint64_t)r->ne[d];
        w[n++] = (uint64_t)r->nb[d];
    }
    w[n++] = (uintptr_t)r->data;
    return n;
}

static void ctg_cache_drop(ctg_backend_ctx *c) {
    ct_context_free(c->cached_ctx);
    c->cached_ctx = NULL;
    c->cached_graph = NULL;
}

typedef enum { CTG_SIG_SAME, CTG_SIG_NEW, CTG_SIG_NONE } ctg_sig_result;

/* Counts the tensor headers a translation of cgraph takes at most and whether any node
 * computes; with keep, writes cgraph's signature over the last one's: per compute node what
 * ctg_node and ctg_link_result read (ctg_sig_tensor of it and of each source, op, flags,
 * op_params, whether ggml counts one use of it). SAME: equal to the kept translation's,
 * which computes cgraph. Otherwise the kept one is dropped; NEW: the signature is cgraph's
 * (keep its translation), NONE: not written (no keep, or no host memory for it). */
static ctg_sig_result ctg_sig_graph(ctg_backend_ctx *c, struct ggml_cgraph *cgraph, bool keep, size_t *n_tensors,
                                    bool *any) {
    const int n = ggml_graph_n_nodes(cgraph);
    ctg_sig *s = &c->sig;
    size_t pos = 0;
    bool same = true; /* every word so far equals the one it overwrites */
    for (int i = 0; i <= n; i++) {
        if (keep && s->cap - pos < CTG_SIG_NODE_WORDS) {
            size_t cap = s->cap ? 2 * s->cap : 4096;
            uint64_t *w = cap <= SIZE_MAX / sizeof *w ? realloc(s->w, cap * sizeof *w) : NULL;
            if (w) {
                memset(w + s->cap, 0, (cap - s->cap) * sizeof *w);
                s->w = w;
                s->cap = cap;
            } else {
                keep = false;
            }
        }
        /* a node's words are built here, then compared with the kept ones in one pass
         * (and written only where they differ) */
        uint64_t nw[CTG_SIG_NODE_WORDS];
        size_t m = 0;
        const struct ggml_tensor *node = i < n ? ggml_graph_node(cgraph, i) : NULL;
        if (!node) {
            nw[m++] = (uint64_t)n; /* the end */
        } else if (!ctg_node_computes(node)) {
            nw[m++] = 0;
        } else {
            *any = true;
            *n_tensors += 1;
            for (int j = 0; j < GGML_MAX_SRC; j++) *n_tensors += node->src[j] ? 4 : 0;
            if (!keep) continue;
            m = ctg_sig_tensor(nw, m, node);
            nw[m++] = (uint64_t)node->op;
            nw[m++] = (uint64_t)(uint32_t)node->flags;
            nw[m++] = cgraph->use_counts && ggml_node_get_use_count(cgraph, i) == 1;
            memcpy(nw + m, node->op_params, GGML_MAX_OP_PARAMS);
            m += GGML_MAX_OP_PARAMS / 8;
            for (int j = 0; j < GGML_MAX_SRC; j++) m = ctg_sig_tensor(nw, m, node->src[j]);
        }
        if (!keep) continue;
        if (same && memcmp(s->w + pos, nw, m * sizeof *nw) != 0) same = false;
        if (!same) memcpy(s->w + pos, nw, m * sizeof *nw);
        pos += m;
    }
    const bool kept = keep && same && pos == s->len && c->cached_ctx;
    s->len = keep ? pos : 0; /* 0: no signature is that short (it ends with the node count) */
    if (kept) return CTG_SIG_SAME;
    ctg_cache_drop(c);
    return keep ? CTG_SIG_NEW : CTG_SIG_NONE;
}

/* Every compute node translated into one ctensor graph, computed in one call; the
 * translation is kept for the next compute of a graph with the same signature (llama.cpp
 * decodes token after token with one graph), which computes it again untranslated. With
 * the CPU fallback: one graph per run of nodes ctensor computes, the others in between,
 * translated on every compute. */
static enum ggml_status ctg_be_graph_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph) {
    ctg_backend_ctx *c = ctg_be(backend);
    const int n = ggml_graph_n_nodes(cgraph);
    const bool fallback = ctg_cpu_fallback_on();
    /* Upper bound: per node its result and, per source, a root (two headers when the first
     * does not match ggml's layout: ctg_root), a view and a permute. */
    size_t n_tensors = 16;
    bool any = false;
    const ctg_sig_result sig = ctg_sig_graph(c, cgraph, !fallback, &n_tensors, &any);
    /* Nothing to compute: still return with this backend's queued transfers done, as ggml's
     * scheduler may reuse their host memory next. */
    if (!any) return ctg_status(ct_backend_synchronize(c->ct));
    if (ctg_debug()) {
        ctg_log(GGML_LOG_LEVEL_DEBUG, "ggml-ctensor: %s: graph of %d nodes: %s\n", c->dev->name, n,
                sig == CTG_SIG_SAME ? "the kept translation" : "translated");
    }
    if (sig == CTG_SIG_SAME) {
        ct_status st = ct_backend_graph_compute(c->ct, c->cached_graph);
        if (st != CT_OK) {
            ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: graph of %d nodes failed: %s\n", c->dev->name, n,
                    ct_last_error());
            ctg_cache_drop(c);
            return ctg_status(st);
        }
        return ctg_status(ct_backend_synchronize(c->ct));
    }
    size_t need = n_tensors * ct_tensor_overhead() + ct_graph_overhead(n_tensors) + 4 * CT_MEM_ALIGN;
    if (need > c->arena_size) {
        void *a = NULL;
        if (posix_memalign(&a, CT_MEM_ALIGN, need) != 0) {
            ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: no host memory for %zu bytes of graph headers\n",
                    c->dev->name, need);
            return GGML_STATUS_ALLOC_FAILED;
        }
        free(c->arena);
        c->arena = a;
        c->arena_size = need;
    }
    ct_status st = CT_OK;
    enum ggml_status cpu_st = GGML_STATUS_SUCCESS;
    for (int i = 0; i < n && st == CT_OK && cpu_st == GGML_STATUS_SUCCESS;) {
        ctg_xl x = {.ctx = NULL, .alloc = true, .memo = &c->memo};
        ct_graph *g = NULL;
        if (ctg_memo_reset(&c->memo, n_tensors)) {
            x.ctx = ctg_scratch(c->arena, c->arena_size);
            g = x.ctx ? ct_graph_new(x.ctx, n_tensors) : NULL;
        }
        if (!g) {
            ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: cannot set up a graph of %zu tensors: %s\n", c->dev->name,
                    n_tensors, x.ctx ? ct_last_error() : "out of host memory");
            ct_context_free(x.ctx);
            return GGML_STATUS_ALLOC_FAILED;
        }
        const struct ggml_tensor *on_cpu = NULL;
        int n_built = 0;
        bool logged = false;
        for (; i < n && st == CT_OK; i++) {
            const struct ggml_tensor *node = ggml_graph_node(cgraph, i);
            if (!ctg_node_computes(node)) continue;
            ct_tensor *r = ctg_node(&x, node);
            if (r && fallback && !ct_device_supports_op(c->dev->ct, r)) r = NULL;
            if (!r && fallback) {
                on_cpu = node;
                i++;
                break;
            }
            if (!r) {
                ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: cannot translate node %d '%s' (%s): %s\n", c->dev->name,
                        i, node->name, ggml_op_desc(node), x.why ? x.why : ct_last_error());
                st = CT_UNSUPPORTED;
                logged = true;
                break;
            }
            ctg_link_result(&x, cgraph, i, fallback, r);
            st = ct_graph_build_forward(g, r);
            n_built++;
        }
        if (st == CT_OK && n_built > 0) st = ct_backend_graph_compute(c->ct, g);
        if (st != CT_OK && !logged) {
            ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: graph of %d nodes failed: %s\n", c->dev->name, n,
                    ct_last_error());
        }
        if (st == CT_OK && sig == CTG_SIG_NEW) {
            /* without the fallback the whole graph is this one translation */
            c->cached_ctx = x.ctx;
            c->cached_graph = g;
        } else {
            ct_context_free(x.ctx);
        }
        if (st == CT_OK && on_cpu) {
            /* The node reads what the queue has written: async writes and the graph first. */
            st = ct_backend_synchronize(c->ct);
            cpu_st = st == CT_OK ? ctg_cpu_node(c, on_cpu) : GGML_STATUS_SUCCESS;
            if (cpu_st != GGML_STATUS_SUCCESS) {
                ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: node '%s' (%s) failed on ggml's CPU backend\n",
                        c->dev->name, on_cpu->name, ggml_op_desc(on_cpu));
            }
        }
    }
    /* A last run of nodes that ctensor did not compute leaves queued transfers: wait for them too. */
    if (st == CT_OK && cpu_st == GGML_STATUS_SUCCESS) st = ct_backend_synchronize(c->ct);
    return st != CT_OK ? ctg_status(st) : cpu_st;
}

static const struct ggml_backend_i ctg_be_iface = {
    .get_name = ctg_be_get_name,
    .free = ctg_be_free,
    /* ctensor's async transfers (ctensor.h section 4): queued on OpenCL, done at once on
     * the CPU. The 2d entries stay NULL: ggml loops over set/get_tensor_async. */
    .set_tensor_async = ctg_be_set_tensor_async,
    .get_tensor_async = ctg_be_get_tensor_async,
    .set_tensor_2d_async = NULL,
    .get_tensor_2d_async = NULL,
    .cpy_tensor_async = ctg_be_cpy_tensor_async,
    .synchronize = ctg_be_synchronize,
    .graph_plan_create = NULL,
    .graph_plan_free = NULL,
    .graph_plan_update = NULL,
    .graph_plan_compute = NULL,
    .graph_compute = ctg_be_graph_compute,
    /* No events: ggml_backend_sched makes them only for pipeline parallelism (n_copies > 1),
     * which llama.cpp turns on only with several GPUs that all have them; a compute here
     * returns done, so an event would add nothing to synchronize. */
    .event_record = NULL,
    .event_wait = NULL,
    .graph_optimize = NULL,
};

static ggml_guid ctg_guid = {0x63, 0x74, 0x65, 0x6e, 0x73, 0x6f, 0x72, 0x2d, 0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x30, 0x30, 0x31};

/* ---- devices ------------------------------------------------------------------------------------- */

static ctg_device *ctg_dev(ggml_backend_dev_t dev) { return (ctg_device *)dev->context; }

static const char *ctg_dev_get_name(ggml_backend_dev_t dev) { return ctg_dev(dev)->name; }

static const char *ctg_dev_get_description(ggml_backend_dev_t dev) { return ctg_dev(dev)->description; }

static void ctg_dev_get_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes) {
    if (ct_device_memory(ctg_dev(dev)->ct, free_bytes, total_bytes) != CT_OK) *free_bytes = *total_bytes = 0;
}

static enum ggml_backend_dev_type ctg_dev_get_type(ggml_backend_dev_t dev) { return ctg_dev(dev)->type; }

static void ctg_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props) {
    ct_device_props p;
    memset(&p, 0, sizeof p);
    ct_device_get_props(ctg_dev(dev)->ct, &p);
    ctg_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->name = ctg_dev(dev)->name;
    props->description = ctg_dev(dev)->description;
    props->type = ctg_dev(dev)->type;
    props->device_id = NULL;
    props->caps = (struct ggml_backend_dev_caps){
        .async = p.caps.async, /* set/get_tensor_async queue rather than wait (ctg_be_iface) */
        .host_buffer = false,
        .buffer_from_host_ptr = p.caps.buffer_from_host_ptr,
        .events = false,
        .mmap_support = true, /* llama.cpp turns mmap off for every device when one says false */
    };
}

static ggml_backend_t ctg_dev_init_backend(ggml_backend_dev_t dev, const char *params) {
    ctg_backend_ctx *c = calloc(1, sizeof *c);
    ggml_backend_t b = malloc(sizeof *b);
    if (!c || !b || ct_device_init_backend(ctg_dev(dev)->ct, params, &c->ct) != CT_OK) {
        ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: cannot start a backend on %s: %s\n", ctg_dev(dev)->name,
                c && b ? ct_last_error() : "out of memory");
        free(c);
        free(b);
        return NULL;
    }
    c->dev = ctg_dev(dev);
    *b = (struct ggml_backend){.guid = &ctg_guid, .iface = ctg_be_iface, .device = dev, .context = c};
    return b;
}

static ggml_backend_buffer_type_t ctg_dev_get_buffer_type(ggml_backend_dev_t dev) {
    return ctg_buft_for(ctg_dev(dev), ct_device_buffer_type(ctg_dev(dev)->ct));
}

/* Caller memory (llama.cpp's mapped weights) wrapped in place; ctensor splits it into
 * views of at most the device's allocation limit that overlap by max_tensor_size. */
static ggml_backend_buffer_t ctg_dev_buffer_from_host_ptr(ggml_backend_dev_t dev, void *ptr, size_t size,
                                                          size_t max_tensor_size) {
    ct_buffer *cb = NULL;
    if (ct_device_buffer_from_host_ptr(ctg_dev(dev)->ct, ptr, size, max_tensor_size, &cb) != CT_OK) {
        ctg_log(GGML_LOG_LEVEL_ERROR, "ggml-ctensor: %s: cannot wrap %zu host bytes: %s\n", ctg_dev(dev)->name, size,
                ct_last_error());
        return NULL;
    }
    ggml_backend_buffer_type_t buft = ctg_buft_for(ctg_dev(dev), ct_buffer_get_type(cb));
    if (!buft) {
        ct_buffer_free(cb);
        return NULL;
    }
    return ctg_wrap_buffer(buft, cb, size);
}

/* Exact by construction: the node is built by ctensor's constructor and asked of
 * ctensor's supports_op, which promises compute does what it accepts. */
static bool ctg_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op) {
    if (ctg_is_view_op(op->op)) return true;
    _Alignas(CT_MEM_ALIGN) unsigned char arena[CTG_SCRATCH_BYTES];
    ctg_xl x = {.ctx = ctg_scratch(arena, sizeof arena), .alloc = false, .memo = NULL};
    ct_clear_error();
    ct_tensor *r = x.ctx ? ctg_node(&x, op) : NULL;
    bool ok = r && ct_device_supports_op(ctg_dev(dev)->ct, r);
    if (!ok && ctg_debug()) {
        /* CT_GGML_DEBUG=1 tells a node ctensor cannot express from one its device refuses. */
        ctg_log(GGML_LOG_LEVEL_INFO, "ggml-ctensor: %s: %s '%s' (%s): %s%s\n", ctg_dev(dev)->name, ggml_op_desc(op),
                op->name, ggml_type_name(op->type), r ? "refused by the device" : "not translated: ",
                r ? "" : x.why ? x.why : ct_last_error());
    }
    ct_context_free(x.ctx);
    return ok;
}

static bool ctg_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    if (buft->iface.get_name != ctg_buft_get_name) return false;
    return ct_device_supports_buft(ctg_dev(dev)->ct, ctg_buft_ctx(buft)->ct);
}

static const struct ggml_backend_device_i ctg_dev_iface = {
    .get_name = ctg_dev_get_name,
    .get_description = ctg_dev_get_description,
    .get_memory = ctg_dev_get_memory,
    .get_type = ctg_dev_get_type,
    .get_props = ctg_dev_get_props,
    .init_backend = ctg_dev_init_backend,
    .get_buffer_type = ctg_dev_get_buffer_type,
    .get_host_buffer_type = NULL,
    .buffer_from_host_ptr = ctg_dev_buffer_from_host_ptr,
    .supports_op = ctg_dev_supports_op,
    .supports_buft = ctg_dev_supports_buft,
    .offload_op = NULL,
    .event_new = NULL,
    .event_free = NULL,
    .event_synchronize = NULL,
};

/* ---- registration ------------------------------------------------------------------------------------ */

static const char *ctg_reg_get_name(ggml_backend_reg_t reg) {
    (void)reg;
    return "ctensor";
}

static size_t ctg_reg_get_device_count(ggml_backend_reg_t reg) {
    (void)reg;
    return ctg.n_devices;
}

static ggml_backend_dev_t ctg_reg_get_device(ggml_backend_reg_t reg, size_t index) {
    (void)reg;
    return index < ctg.n_devices ? &ctg.devices[index].gdev : NULL;
}

/* test-backend-ops and llama.cpp set the thread count through this name. */
static void ctg_set_n_threads(ggml_backend_t backend, int n_threads) {
    if (backend->iface.get_name == ctg_be_get_name && ct_backend_is_cpu(ctg_be(backend)->ct) &&
        ct_backend_cpu_set_n_threads(ctg_be(backend)->ct, n_threads) != CT_OK) {
        ctg_log(GGML_LOG_LEVEL_WARN, "ggml-ctensor: %s: keeps its thread count: %s\n", ctg_be_get_name(backend),
                ct_last_error());
    }
}

static void *ctg_reg_get_proc_address(ggml_backend_reg_t reg, const char *name) {
    (void)reg;
    if (strcmp(name, "ggml_backend_set_n_threads") == 0) return (void *)ctg_set_n_threads;
    return NULL;
}

static void ctg_add_device(ct_device *ct, enum ggml_backend_dev_type type) {
    if (ctg.n_devices >= CTG_MAX_DEVICES) return;
    ctg_device *d = &ctg.devices[ctg.n_devices++];
    d->ct = ct;
    d->type = type;
    snprintf(d->name, sizeof d->name, "CT%s", ct_device_name(ct));
    snprintf(d->description, sizeof d->description, "ctensor %s: %s", ct_device_name(ct), ct_device_description(ct));
    pthread_mutex_init(&d->lock, NULL);
    d->gdev = (struct ggml_backend_device){.iface = ctg_dev_iface, .reg = &ctg.reg, .context = d};
}

/* One GPU-type device per ctensor OpenCL device (whatever OpenCL calls it: llama.cpp
 * offloads only to GPUs), then ctensor's CPU backend as CTCPU, for conformance runs. */
static void ctg_init_once(void) {
    ctg.reg = (struct ggml_backend_reg){
        .api_version = GGML_BACKEND_API_VERSION,
        .iface = {.get_name = ctg_reg_get_name,
                  .get_device_count = ctg_reg_get_device_count,
                  .get_device = ctg_reg_get_device,
                  .get_proc_address = ctg_reg_get_proc_address},
        .context = NULL,
    };
    ct_backend_reg *ocl = ct_backend_reg_by_name("OpenCL");
    for (size_t i = 0; ocl && i < ct_backend_reg_dev_count(ocl); i++) {
        ctg_add_device(ct_backend_reg_dev_get(ocl, i), GGML_BACKEND_DEVICE_TYPE_GPU);
    }
    ct_backend_reg *cpu = ct_backend_reg_by_name("CPU");
    if (cpu && ct_backend_reg_dev_count(cpu) > 0) {
        ctg_add_device(ct_backend_reg_dev_get(cpu, 0), GGML_BACKEND_DEVICE_TYPE_CPU);
    }
}

/* The plugin is compiled against one ggml's structs (ggml-backend-impl.h is not a
 * stable interface), so it loads only into that ggml: same version, and the same
 * commit where both builds know theirs (a tree without git reports "unknown"). */
static bool ctg_host_matches(void) {
    const char *host = ggml_version(), *commit = ggml_commit();
    bool commit_known = commit && strcmp(commit, "unknown") != 0 && strcmp(CT_GGML_BUILT_COMMIT, "unknown") != 0;
    if (!host || strcmp(host, CT_GGML_BUILT_VERSION) != 0 ||
        (commit_known && strcmp(commit, CT_GGML_BUILT_COMMIT) != 0)) {
        ctg_log(GGML_LOG_LEVEL_ERROR,
                "ggml-ctensor: this plugin was built for ggml %s (commit %s, backend API %d) but the process runs "
                "ggml %s (commit %s); not loading it. Rebuild it against this ggml's source tree "
                "(CT_GGML_SOURCE_DIR, see ggml/README.md).\n",
                CT_GGML_BUILT_VERSION, CT_GGML_BUILT_COMMIT, GGML_BACKEND_API_VERSION, host ? host : "(unknown)",
                commit ? commit : "(unknown)");
        return false;
    }
    return true;
}

CTG_EXPORT ggml_backend_reg_t ggml_backend_init(void);
CTG_EXPORT int ggml_backend_score(void);

ggml_backend_reg_t ggml_backend_init(void) {
    if (!ctg_host_matches()) return NULL;
    pthread_once(&ctg.once, ctg_init_once);
    return &ctg.reg;
}

/* Any nonzero score loads it; there is one variant of this plugin. */
int ggml_backend_score(void) { return 1; }
