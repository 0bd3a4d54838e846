/* The CPU backend: registration "CPU" with one device, the host buffer type
 * "CPU" (64-byte aligned), and a backend that runs every node on the thread
 * pool, calling the op family's function on each thread. */
#include "cpu_ops.h"
#include "threadpool.h"
#include "ctensor-backend-impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum { CPU_ALIGNMENT = 64 };

/* ggml's CPU backend GUID. */
static const uint8_t cpu_guid[16] = {0xaa, 0x67, 0xc7, 0x43, 0x96, 0xe6, 0xa3, 0x8a,
                                     0xe3, 0xaf, 0xea, 0x92, 0x36, 0xbc, 0xfc, 0x89};

static ct_backend_reg cpu_reg;
static ct_device cpu_device;
static ct_buffer_type cpu_buft;

/* ---- buffers ---------------------------------------------------------------- */

static void *cpu_buffer_get_base(ct_buffer *buffer) { return buffer->context; }

static void cpu_buffer_free(ct_buffer *buffer) { ct_free(buffer->context); }

static ct_status cpu_buffer_memset_tensor(ct_buffer *buffer, ct_tensor *t, uint8_t value, size_t offset,
                                          size_t size) {
    CT_UNUSED(buffer);
    memset((char *)t->data + offset, value, size);
    return CT_OK;
}

static ct_status cpu_buffer_set_tensor(ct_buffer *buffer, ct_tensor *t, const void *data, size_t offset,
                                       size_t size) {
    CT_UNUSED(buffer);
    memcpy((char *)t->data + offset, data, size);
    return CT_OK;
}

static ct_status cpu_buffer_get_tensor(ct_buffer *buffer, const ct_tensor *t, void *data, size_t offset,
                                       size_t size) {
    CT_UNUSED(buffer);
    memcpy(data, (const char *)t->data + offset, size);
    return CT_OK;
}

static bool cpu_buffer_cpy_tensor(ct_buffer *buffer, const ct_tensor *src, ct_tensor *dst) {
    CT_UNUSED(buffer);
    const ct_buffer *sb = ct_tensor_data_buffer(src);
    if (!sb || !ct_buffer_is_host(sb)) return false;
    memcpy(dst->data, src->data, ct_nbytes(src));
    return true;
}

static ct_status cpu_buffer_clear(ct_buffer *buffer, uint8_t value) {
    memset(buffer->context, value, buffer->size);
    return CT_OK;
}

static const ct_buffer_i cpu_buffer_iface = {
    .free_buffer = cpu_buffer_free,
    .get_base = cpu_buffer_get_base,
    .init_tensor = NULL,
    .memset_tensor = cpu_buffer_memset_tensor,
    .set_tensor = cpu_buffer_set_tensor,
    .get_tensor = cpu_buffer_get_tensor,
    .cpy_tensor = cpu_buffer_cpy_tensor,
    .clear = cpu_buffer_clear,
    .reset = NULL,
};

/* Caller memory: the same, but not ours to free. */
static const ct_buffer_i cpu_host_ptr_buffer_iface = {
    .free_buffer = NULL,
    .get_base = cpu_buffer_get_base,
    .init_tensor = NULL,
    .memset_tensor = cpu_buffer_memset_tensor,
    .set_tensor = cpu_buffer_set_tensor,
    .get_tensor = cpu_buffer_get_tensor,
    .cpy_tensor = cpu_buffer_cpy_tensor,
    .clear = cpu_buffer_clear,
    .reset = NULL,
};

/* ---- buffer type ------------------------------------------------------------ */

static const char *cpu_buft_get_name(const ct_buffer_type *buft) {
    CT_UNUSED(buft);
    return "CPU";
}

static ct_status cpu_buft_alloc_buffer(ct_buffer_type *buft, size_t size, ct_buffer **buffer) {
    void *data = ct_aligned_alloc(CPU_ALIGNMENT, size);
    if (!data) return ct_fail(CT_OUT_OF_MEMORY, "ct_buffer_type_alloc: cannot allocate %zu bytes of CPU memory", size);
    *buffer = ct_buffer_init(buft, cpu_buffer_iface, data, size);
    if (!*buffer) {
        ct_free(data);
        return ct_last_status();
    }
    return CT_OK;
}

static size_t cpu_buft_get_alignment(const ct_buffer_type *buft) {
    CT_UNUSED(buft);
    return CPU_ALIGNMENT;
}

static bool cpu_buft_is_host(const ct_buffer_type *buft) {
    CT_UNUSED(buft);
    return true;
}

static ct_buffer_type cpu_buft = {
    .iface = {
        .get_name = cpu_buft_get_name,
        .alloc_buffer = cpu_buft_alloc_buffer,
        .get_alignment = cpu_buft_get_alignment,
        .get_max_size = NULL,
        .get_alloc_size = NULL,
        .is_host = cpu_buft_is_host,
    },
    .device = &cpu_device,
    .context = NULL,
};

/* ---- backend ---------------------------------------------------------------- */

typedef struct cpu_context {
    int n_threads;
    ct_cpu_threadpool *pool; /* created at the first compute, for n_threads */
    void *wdata;             /* scratch, grown as nodes need */
    size_t wsize;
    ct_abort_callback abort_callback;
    void *abort_data;
} cpu_context;

/* ---- the op table ------------------------------------------------------------ */

/* What the CPU computes, one entry per op; an op without an entry is
 * unsupported. View ops have none: they compute nothing (ct_op_is_view). */
typedef struct cpu_op {
    bool (*supported)(const ct_tensor *op);                           /* exact check, ct_device_supports_op */
    size_t (*work_size)(const ct_tensor *node, int n_threads);        /* scratch bytes; NULL: none */
    void (*compute)(const ct_cpu_params *params, ct_tensor *node);    /* called on every thread */
} cpu_op;

static const cpu_op cpu_ops[CT_OP_COUNT] = {
    [CT_OP_DUP] = {ct_cpu_cpy_supported, NULL, ct_cpu_cpy},
    [CT_OP_CPY] = {ct_cpu_cpy_supported, NULL, ct_cpu_cpy},
    [CT_OP_CONT] = {ct_cpu_cpy_supported, NULL, ct_cpu_cpy},
    [CT_OP_GET_ROWS] = {ct_cpu_get_rows_supported, NULL, ct_cpu_get_rows},
    [CT_OP_SET_ROWS] = {ct_cpu_set_rows_supported, NULL, ct_cpu_set_rows},
    [CT_OP_MUL_MAT] = {ct_cpu_mul_mat_supported, ct_cpu_mul_mat_work_size, ct_cpu_mul_mat},
    [CT_OP_NORM] = {ct_cpu_norm_supported, NULL, ct_cpu_norm},
    [CT_OP_RMS_NORM] = {ct_cpu_norm_supported, NULL, ct_cpu_norm},
    [CT_OP_L2_NORM] = {ct_cpu_norm_supported, NULL, ct_cpu_norm},
    [CT_OP_GROUP_NORM] = {ct_cpu_norm_supported, NULL, ct_cpu_norm},
    [CT_OP_SUM_ROWS] = {ct_cpu_sum_rows_supported, NULL, ct_cpu_sum_rows},
    [CT_OP_MEAN] = {ct_cpu_sum_rows_supported, NULL, ct_cpu_sum_rows},
    [CT_OP_UNARY] = {ct_cpu_unary_supported, NULL, ct_cpu_unary},
    [CT_OP_SCALE] = {ct_cpu_scale_supported, NULL, ct_cpu_scale},
    [CT_OP_ADD] = {ct_cpu_binary_supported, NULL, ct_cpu_binary},
    [CT_OP_SUB] = {ct_cpu_binary_supported, NULL, ct_cpu_binary},
    [CT_OP_MUL] = {ct_cpu_binary_supported, NULL, ct_cpu_binary},
    [CT_OP_DIV] = {ct_cpu_binary_supported, NULL, ct_cpu_binary},
    [CT_OP_ADD1] = {ct_cpu_binary_supported, NULL, ct_cpu_binary},
    [CT_OP_SOFT_MAX] = {ct_cpu_soft_max_supported, NULL, ct_cpu_soft_max},
    [CT_OP_ROPE] = {ct_cpu_rope_supported, ct_cpu_rope_work_size, ct_cpu_rope},
    [CT_OP_GLU] = {ct_cpu_glu_supported, NULL, ct_cpu_glu},
    [CT_OP_SUM] = {ct_cpu_reduce_supported, ct_cpu_reduce_work_size, ct_cpu_reduce},
    [CT_OP_CUMSUM] = {ct_cpu_reduce_supported, ct_cpu_reduce_work_size, ct_cpu_reduce},
    [CT_OP_ARGMAX] = {ct_cpu_reduce_supported, ct_cpu_reduce_work_size, ct_cpu_reduce},
    [CT_OP_ARGSORT] = {ct_cpu_argsort_supported, ct_cpu_argsort_work_size, ct_cpu_argsort},
    [CT_OP_TOP_K] = {ct_cpu_argsort_supported, ct_cpu_argsort_work_size, ct_cpu_argsort},
    [CT_OP_MUL_MAT_ID] = {ct_cpu_mul_mat_id_supported, ct_cpu_mul_mat_id_work_size, ct_cpu_mul_mat_id},
    [CT_OP_ADD_ID] = {ct_cpu_mul_mat_id_supported, NULL, ct_cpu_mul_mat_id},
    [CT_OP_SQR] = {ct_cpu_math_supported, NULL, ct_cpu_math},
    [CT_OP_SQRT] = {ct_cpu_math_supported, NULL, ct_cpu_math},
    [CT_OP_SIN] = {ct_cpu_math_supported, NULL, ct_cpu_math},
    [CT_OP_COS] = {ct_cpu_math_supported, NULL, ct_cpu_math},
    [CT_OP_LOG] = {ct_cpu_math_supported, NULL, ct_cpu_math},
    [CT_OP_CLAMP] = {ct_cpu_math_supported, NULL, ct_cpu_math},
    [CT_OP_LEAKY_RELU] = {ct_cpu_math_supported, NULL, ct_cpu_math},
    [CT_OP_FILL] = {ct_cpu_math_supported, NULL, ct_cpu_math},
    [CT_OP_REPEAT] = {ct_cpu_shape_supported, NULL, ct_cpu_shape},
    [CT_OP_CONCAT] = {ct_cpu_shape_supported, NULL, ct_cpu_shape},
    [CT_OP_PAD] = {ct_cpu_shape_supported, NULL, ct_cpu_shape},
    [CT_OP_ARANGE] = {ct_cpu_shape_supported, NULL, ct_cpu_shape},
    [CT_OP_ACC] = {ct_cpu_shape_supported, NULL, ct_cpu_shape},
    [CT_OP_FLASH_ATTN_EXT] = {ct_cpu_flash_attn_supported, ct_cpu_flash_attn_work_size, ct_cpu_flash_attn},
};

/* The op's entry, or NULL when the CPU has no function for it. */
static const cpu_op *find_cpu_op(ct_op op) {
    if ((unsigned)op >= (unsigned)CT_OP_COUNT || !cpu_ops[op].compute) return NULL;
    return &cpu_ops[op];
}

static bool skip_node(const ct_tensor *node) { return ct_op_is_view(node->op) || ct_is_empty(node); }

size_t ct_cpu_work_size(const ct_tensor *node, int n_threads) {
    const cpu_op *entry = find_cpu_op(node->op);
    return entry && entry->work_size ? entry->work_size(node, n_threads) : 0;
}

/* ct_backend_graph_compute checked ct_device_supports_op on every node. */
static void run_op(const ct_cpu_params *params, ct_tensor *node) {
    const cpu_op *entry = find_cpu_op(node->op);
    CT_ASSERT(entry != NULL && entry->supported(node));
    entry->compute(params, node);
}

/* ---- graph compute ------------------------------------------------------------ */

typedef struct compute_job {
    cpu_context *ctx;
    ct_graph *graph;
    int n_nodes;
} compute_job;

/* A node whose tensors (result and sources) take at most this many bytes runs on
 * thread 0 alone: the nodes of a decode step this small (a 4096-wide row, ROPE of
 * 32 heads of 128, SOFT_MAX of 32 x 256) take a few µs on one thread, no more than
 * waking a second one and meeting it at a barrier costs on a busy 2-core machine
 * (docs/PERF.md, "CPU against ggml-cpu"). */
#define SOLO_BYTES (64 * 1024)

static bool node_is_solo(const ct_tensor *node) {
    size_t bytes = ct_nbytes(node);
    for (int s = 0; s < CT_MAX_SRC && bytes <= SOLO_BYTES; s++) {
        if (node->src[s]) bytes += ct_nbytes(node->src[s]);
    }
    return bytes <= SOLO_BYTES;
}

/* Every thread walks the whole graph; the barrier before a node both separates
 * it from the previous one and publishes the abort decision. Consecutive solo
 * nodes need no barrier between them: thread 0 runs them while the others go on
 * to the barrier before the next node that needs them, and a solo node after a
 * shared one waits for it at a barrier. Every thread takes the same decisions, as
 * they depend on the nodes only. Inside a run of solo nodes thread 0 alone reads
 * and writes the error and abort state, so it skips the rest of the run after
 * one, and the next barrier stops every thread. */
static void compute_thread(ct_cpu_threadpool *pool, int ith, void *arg) {
    compute_job *job = arg;
    cpu_context *ctx = job->ctx;
    const int nth = ct_cpu_threadpool_n_threads(pool);
    const ct_cpu_params params = {
        .ith = ith,
        .nth = nth,
        .wdata = ctx->wdata,
        .wsize = ctx->wsize,
        .pool = pool,
    };
    const ct_cpu_params solo_params = {.ith = 0, .nth = 1, .wdata = ctx->wdata, .wsize = ctx->wsize, .pool = pool};
    bool prev_shared = false;
    for (int i = 0; i < job->n_nodes; i++) {
        ct_tensor *node = ct_graph_node(job->graph, i);
        if (skip_node(node)) continue;
        const bool solo = nth > 1 && node_is_solo(node);
        /* Thread 0 may know of a stop that the others learn at the next barrier;
         * the callback is not asked again after it. */
        if (ith == 0 && ctx->abort_callback && !ct_cpu_threadpool_should_stop(pool, i) &&
            ctx->abort_callback(ctx->abort_data)) {
            ct_cpu_threadpool_request_abort(pool, i);
        }
        if (!solo || prev_shared) {
            ct_cpu_threadpool_barrier(pool);
            if (ct_cpu_threadpool_should_stop(pool, i)) break;
        }
        prev_shared = !solo;
        if (solo) {
            if (ith != 0 || ct_cpu_threadpool_should_stop(pool, i)) continue;
            ct_cpu_threadpool_begin_node(pool, 0, i);
            run_op(&solo_params, node);
            continue;
        }
        ct_cpu_threadpool_begin_node(pool, ith, i);
        run_op(&params, node);
    }
}

static const char *cpu_backend_get_name(const ct_backend *backend) {
    CT_UNUSED(backend);
    return "CPU";
}

static void cpu_backend_free(ct_backend *backend) {
    cpu_context *ctx = backend->context;
    ct_cpu_threadpool_free(ctx->pool);
    ct_free(ctx->wdata);
    ct_free(ctx);
    ct_free(backend);
}

static ct_status cpu_backend_graph_compute(ct_backend *backend, ct_graph *graph) {
    cpu_context *ctx = backend->context;
    int n = ct_graph_n_nodes(graph);
    if (!ctx->pool) {
        ct_status st = ct_cpu_threadpool_new("ct_backend_graph_compute", ctx->n_threads, &ctx->pool);
        if (st != CT_OK) return st;
    }
    int nth = ct_cpu_threadpool_n_threads(ctx->pool);

    size_t wsize = 0;
    int w_node = -1;
    for (int i = 0; i < n; i++) {
        const ct_tensor *node = ct_graph_node(graph, i);
        if (skip_node(node)) continue;
        size_t s = ct_cpu_work_size(node, nth);
        if (s > wsize) {
            wsize = s;
            w_node = i;
        }
    }
    if (wsize > ctx->wsize) {
        ct_free(ctx->wdata);
        ctx->wsize = 0;
        ctx->wdata = ct_aligned_alloc(CPU_ALIGNMENT, wsize);
        if (!ctx->wdata) {
            const ct_tensor *node = ct_graph_node(graph, w_node);
            return ct_fail(CT_OUT_OF_MEMORY, "ct_backend_graph_compute: node '%s' (%s): cannot allocate %zu bytes of "
                           "scratch", node->name, ct_op_name(node->op), wsize);
        }
        ctx->wsize = wsize;
    }

    compute_job job = {.ctx = ctx, .graph = graph, .n_nodes = n};
    ct_cpu_threadpool_run(ctx->pool, compute_thread, &job);

    ct_status status;
    const char *message;
    int e = ct_cpu_threadpool_error(ctx->pool, &status, &message);
    if (e >= 0) {
        const ct_tensor *node = ct_graph_node(graph, e);
        /* Op functions may already name the public function; say it once. */
        static const char prefix[] = "ct_backend_graph_compute: ";
        if (strncmp(message, prefix, sizeof prefix - 1) == 0) message += sizeof prefix - 1;
        return ct_fail(status, "ct_backend_graph_compute: node '%s' (%s): %s", node->name, ct_op_name(node->op),
                       message);
    }
    int a = ct_cpu_threadpool_aborted_at(ctx->pool);
    if (a >= 0) {
        return ct_fail(CT_ABORTED, "ct_backend_graph_compute: the abort callback stopped the compute before node %d "
                       "of %d", a, n);
    }
    return CT_OK;
}

static void cpu_backend_set_abort_callback(ct_backend *backend, ct_abort_callback callback, void *user_data) {
    cpu_context *ctx = backend->context;
    ctx->abort_callback = callback;
    ctx->abort_data = user_data;
}

static const ct_backend_i cpu_backend_iface = {
    .get_name = cpu_backend_get_name,
    .free = cpu_backend_free,
    .synchronize = NULL,
    .graph_compute = cpu_backend_graph_compute,
    .set_abort_callback = cpu_backend_set_abort_callback,
};

bool ct_backend_is_cpu(const ct_backend *backend) {
    return backend && memcmp(backend->guid, cpu_guid, sizeof cpu_guid) == 0;
}

ct_status ct_backend_cpu_set_n_threads(ct_backend *backend, int n_threads) {
    if (!backend) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_cpu_set_n_threads: backend is NULL");
    if (!ct_backend_is_cpu(backend)) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_cpu_set_n_threads: backend %s is not the CPU backend",
                       backend->iface.get_name(backend));
    }
    if (n_threads < 1 || n_threads > CT_CPU_MAX_THREADS) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_cpu_set_n_threads: n_threads=%d is outside [1, %d]", n_threads,
                       CT_CPU_MAX_THREADS);
    }
    cpu_context *ctx = backend->context;
    if (ctx->n_threads != n_threads) {
        ct_cpu_threadpool_free(ctx->pool);
        ctx->pool = NULL;
        ctx->n_threads = n_threads;
    }
    return CT_OK;
}

static int default_n_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > CT_CPU_MAX_THREADS ? CT_CPU_MAX_THREADS : (int)n;
}

/* params: comma-separated key=value pairs; the one key is n_threads. */
static ct_status parse_params(const char *params, int *n_threads) {
    *n_threads = default_n_threads();
    if (!params) return CT_OK;
    const char *p = params;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        size_t len = strcspn(p, ",");
        while (len > 0 && p[len - 1] == ' ') len--;
        static const char key[] = "n_threads=";
        if (len > sizeof key - 1 && strncasecmp(p, key, sizeof key - 1) == 0) {
            char num[24];
            size_t nlen = len - (sizeof key - 1);
            if (nlen >= sizeof num) nlen = sizeof num - 1;
            memcpy(num, p + sizeof key - 1, nlen);
            num[nlen] = '\0';
            char *end;
            long v = strtol(num, &end, 10);
            if (*end != '\0' || end == num || v < 1 || v > CT_CPU_MAX_THREADS) {
                return ct_fail(CT_INVALID_ARGUMENT, "ct_device_init_backend: CPU params '%s': n_threads '%s' is not an "
                               "integer in [1, %d]", params, num, CT_CPU_MAX_THREADS);
            }
            *n_threads = (int)v;
        } else {
            return ct_fail(CT_INVALID_ARGUMENT, "ct_device_init_backend: CPU params '%s': unknown setting '%.*s' "
                           "(known: n_threads=N)", params, (int)len, p);
        }
        p += len;
        while (*p == ' ') p++;
    }
    return CT_OK;
}

/* ---- device ----------------------------------------------------------------- */

static pthread_once_t description_once = PTHREAD_ONCE_INIT;
static char description[128] = "CPU";

/* The first "model name" of /proc/cpuinfo, read once. */
static void read_description(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *v = strchr(line, ':');
        if (!v) continue;
        v++;
        while (*v == ' ' || *v == '\t') v++;
        size_t len = strcspn(v, "\r\n");
        while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t')) len--;
        if (len == 0) continue;
        if (len >= sizeof description) len = sizeof description - 1;
        memcpy(description, v, len);
        description[len] = '\0';
        break;
    }
    fclose(f);
}

static const char *cpu_dev_get_name(const ct_device *dev) {
    CT_UNUSED(dev);
    return "CPU";
}

static const char *cpu_dev_get_description(const ct_device *dev) {
    CT_UNUSED(dev);
    pthread_once(&description_once, read_description);
    return description;
}

static ct_status cpu_dev_get_memory(const ct_device *dev, size_t *free_bytes, size_t *total_bytes) {
    CT_UNUSED(dev);
    long page = sysconf(_SC_PAGESIZE);
    long total = sysconf(_SC_PHYS_PAGES);
#ifdef _SC_AVPHYS_PAGES
    long avail = sysconf(_SC_AVPHYS_PAGES);
#else
    long avail = total;
#endif
    size_t t = 0, f = 0;
    if (page > 0 && total > 0 && !ct_mul_size((size_t)total, (size_t)page, &t)) t = SIZE_MAX;
    if (page > 0 && avail > 0 && !ct_mul_size((size_t)avail, (size_t)page, &f)) f = SIZE_MAX;
    *total_bytes = t;
    *free_bytes = f < t ? f : t;
    return CT_OK;
}

static ct_device_type cpu_dev_get_type(const ct_device *dev) {
    CT_UNUSED(dev);
    return CT_DEVICE_TYPE_CPU;
}

static void cpu_dev_get_props(const ct_device *dev, ct_device_props *props) {
    props->name = cpu_dev_get_name(dev);
    props->description = cpu_dev_get_description(dev);
    props->type = CT_DEVICE_TYPE_CPU;
    cpu_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps = (ct_device_caps){.async = false, .host_buffer = false, .buffer_from_host_ptr = true, .events = false};
}

static ct_status cpu_dev_init_backend(ct_device *dev, const char *params, ct_backend **backend) {
    int n_threads;
    ct_status st = parse_params(params, &n_threads);
    if (st != CT_OK) return st;
    cpu_context *ctx = ct_calloc(1, sizeof *ctx);
    ct_backend *b = ct_calloc(1, sizeof *b);
    if (!ctx || !b) {
        ct_free(ctx);
        ct_free(b);
        return ct_fail(CT_OUT_OF_MEMORY, "ct_device_init_backend: cannot allocate a CPU backend");
    }
    ctx->n_threads = n_threads;
    memcpy(b->guid, cpu_guid, sizeof cpu_guid);
    b->iface = cpu_backend_iface;
    b->device = dev;
    b->context = ctx;
    *backend = b;
    return CT_OK;
}

static ct_buffer_type *cpu_dev_get_buffer_type(const ct_device *dev) {
    CT_UNUSED(dev);
    return &cpu_buft;
}

static ct_status cpu_dev_buffer_from_host_ptr(ct_device *dev, void *ptr, size_t size, size_t max_tensor_size,
                                              ct_buffer **buffer) {
    CT_UNUSED(dev);
    CT_UNUSED(max_tensor_size);
    *buffer = ct_buffer_init(&cpu_buft, cpu_host_ptr_buffer_iface, ptr, size);
    return *buffer ? CT_OK : ct_last_status();
}

static bool cpu_dev_supports_op(const ct_device *dev, const ct_tensor *op) {
    CT_UNUSED(dev);
    const cpu_op *entry = find_cpu_op(op->op);
    return entry != NULL && entry->supported(op);
}

/* The CPU reads tensor memory directly, so any host buffer type will do. */
static bool cpu_dev_supports_buft(const ct_device *dev, const ct_buffer_type *buft) {
    CT_UNUSED(dev);
    return buft == &cpu_buft || ct_buffer_type_is_host(buft);
}

static ct_device cpu_device = {
    .iface = {
        .get_name = cpu_dev_get_name,
        .get_description = cpu_dev_get_description,
        .get_memory = cpu_dev_get_memory,
        .get_type = cpu_dev_get_type,
        .get_props = cpu_dev_get_props,
        .init_backend = cpu_dev_init_backend,
        .get_buffer_type = cpu_dev_get_buffer_type,
        .get_host_buffer_type = NULL,
        .buffer_from_host_ptr = cpu_dev_buffer_from_host_ptr,
        .supports_op = cpu_dev_supports_op,
        .supports_buft = cpu_dev_supports_buft,
    },
    .reg = &cpu_reg,
    .context = NULL,
};

/* ---- registration ----------------------------------------------------------- */

static const char *cpu_reg_get_name(const ct_backend_reg *reg) {
    CT_UNUSED(reg);
    return "CPU";
}

static size_t cpu_reg_get_device_count(const ct_backend_reg *reg) {
    CT_UNUSED(reg);
    return 1;
}

static ct_device *cpu_reg_get_device(const ct_backend_reg *reg, size_t index) {
    CT_UNUSED(reg);
    return index == 0 ? &cpu_device : NULL;
}

static void *cpu_reg_get_proc_address(const ct_backend_reg *reg, const char *name) {
    CT_UNUSED(reg);
    if (name && strcmp(name, "ct_backend_cpu_set_n_threads") == 0) return (void *)(uintptr_t)ct_backend_cpu_set_n_threads;
    return NULL;
}

static ct_backend_reg cpu_reg = {
    .api_version = CT_BACKEND_API_VERSION,
    .iface = {
        .get_name = cpu_reg_get_name,
        .get_device_count = cpu_reg_get_device_count,
        .get_device = cpu_reg_get_device,
        .get_proc_address = cpu_reg_get_proc_address,
    },
    .context = NULL,
};

ct_backend_reg *ct_backend_cpu_reg(void) { return &cpu_reg; }

ct_status ct_backend_cpu_init(ct_backend **backend) {
    return ct_device_init_backend(&cpu_device, NULL, backend);
}
