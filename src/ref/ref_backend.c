/* The REF backend: one device, "REF", computing every node in order on the
 * calling thread with the plain scalar code of src/ref. It exists so that the
 * fast CPU backend can be compared with an independent implementation. Its
 * tensors live in the CPU device's host buffers. */
#include "ctensor-backend-impl.h"
#include "ref/ref_ops.h"

#include <string.h>
#include <unistd.h>

typedef struct ref_context {
    ct_abort_callback abort_callback;
    void *abort_data;
} ref_context;

static const uint8_t ref_guid[16] = {0x63, 0x74, 0x2d, 0x72, 0x65, 0x66, 0x2d, 0x73,
                                     0x63, 0x61, 0x6c, 0x61, 0x72, 0x2d, 0x76, 0x31};

static ct_backend_reg ref_reg;
static ct_device ref_device;

/* ---- device --------------------------------------------------------------- */

static const char *dev_get_name(const ct_device *dev) {
    CT_UNUSED(dev);
    return "REF";
}

static const char *dev_get_description(const ct_device *dev) {
    CT_UNUSED(dev);
    return "ctensor scalar reference (tests only)";
}

static ct_status dev_get_memory(const ct_device *dev, size_t *free_bytes, size_t *total_bytes) {
    CT_UNUSED(dev);
    size_t total = 0, avail = 0;
    const long page = sysconf(_SC_PAGESIZE);
#if defined(_SC_PHYS_PAGES)
    const long pages = sysconf(_SC_PHYS_PAGES);
    if (page > 0 && pages > 0 && !ct_mul_size((size_t)pages, (size_t)page, &total)) total = SIZE_MAX;
#endif
#if defined(_SC_AVPHYS_PAGES)
    const long apages = sysconf(_SC_AVPHYS_PAGES);
    if (page > 0 && apages > 0 && !ct_mul_size((size_t)apages, (size_t)page, &avail)) avail = SIZE_MAX;
#else
    avail = total;
#endif
    *free_bytes = avail;
    *total_bytes = total;
    return CT_OK;
}

static ct_device_type dev_get_type(const ct_device *dev) {
    CT_UNUSED(dev);
    return CT_DEVICE_TYPE_CPU;
}

static void dev_get_props(const ct_device *dev, ct_device_props *props) {
    props->name = dev_get_name(dev);
    props->description = dev_get_description(dev);
    dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = CT_DEVICE_TYPE_CPU;
    props->caps = (ct_device_caps){.async = false, .host_buffer = false, .buffer_from_host_ptr = false, .events = false};
}

/* The CPU device's host buffer type, reached through its registration rather
 * than the registry, so that this is safe while the registry initializes. */
static ct_buffer_type *dev_get_buffer_type(const ct_device *dev) {
    CT_UNUSED(dev);
    ct_backend_reg *cpu = ct_backend_cpu_reg();
    ct_device *cpu_dev = cpu ? ct_backend_reg_dev_get(cpu, 0) : NULL;
    return cpu_dev ? ct_device_buffer_type(cpu_dev) : NULL;
}

/* ---- the op table ------------------------------------------------------------ */

/* What REF computes, one entry per op; an op without an entry is unsupported.
 * View ops have none: they compute nothing (ct_op_is_view). */
typedef struct ref_op {
    bool (*supported)(const ct_tensor *op); /* exact check, ct_device_supports_op */
    ct_status (*compute)(ct_tensor *dst);
} ref_op;

static const ref_op ref_ops[CT_OP_COUNT] = {
    [CT_OP_DUP] = {ct_ref_cpy_supported, ct_ref_cpy},
    [CT_OP_CPY] = {ct_ref_cpy_supported, ct_ref_cpy},
    [CT_OP_CONT] = {ct_ref_cpy_supported, ct_ref_cpy},
    [CT_OP_GET_ROWS] = {ct_ref_get_rows_supported, ct_ref_get_rows},
    [CT_OP_SET_ROWS] = {ct_ref_set_rows_supported, ct_ref_set_rows},
    [CT_OP_MUL_MAT] = {ct_ref_mul_mat_supported, ct_ref_mul_mat},
    [CT_OP_NORM] = {ct_ref_norm_supported, ct_ref_norm},
    [CT_OP_RMS_NORM] = {ct_ref_norm_supported, ct_ref_norm},
    [CT_OP_L2_NORM] = {ct_ref_norm_supported, ct_ref_norm},
    [CT_OP_GROUP_NORM] = {ct_ref_norm_supported, ct_ref_norm},
    [CT_OP_SUM_ROWS] = {ct_ref_sum_rows_supported, ct_ref_sum_rows},
    [CT_OP_MEAN] = {ct_ref_sum_rows_supported, ct_ref_sum_rows},
    [CT_OP_UNARY] = {ct_ref_unary_supported, ct_ref_unary},
    [CT_OP_SCALE] = {ct_ref_scale_supported, ct_ref_scale},
    [CT_OP_ADD] = {ct_ref_binary_supported, ct_ref_binary},
    [CT_OP_SUB] = {ct_ref_binary_supported, ct_ref_binary},
    [CT_OP_MUL] = {ct_ref_binary_supported, ct_ref_binary},
    [CT_OP_DIV] = {ct_ref_binary_supported, ct_ref_binary},
    [CT_OP_ADD1] = {ct_ref_binary_supported, ct_ref_binary},
    [CT_OP_SOFT_MAX] = {ct_ref_soft_max_supported, ct_ref_soft_max},
    [CT_OP_ROPE] = {ct_ref_rope_supported, ct_ref_rope},
    [CT_OP_GLU] = {ct_ref_glu_supported, ct_ref_glu},
    [CT_OP_SUM] = {ct_ref_reduce_supported, ct_ref_reduce},
    [CT_OP_CUMSUM] = {ct_ref_reduce_supported, ct_ref_reduce},
    [CT_OP_ARGMAX] = {ct_ref_reduce_supported, ct_ref_reduce},
    [CT_OP_ARGSORT] = {ct_ref_argsort_supported, ct_ref_argsort},
    [CT_OP_TOP_K] = {ct_ref_argsort_supported, ct_ref_argsort},
    [CT_OP_MUL_MAT_ID] = {ct_ref_mul_mat_id_supported, ct_ref_mul_mat_id},
    [CT_OP_ADD_ID] = {ct_ref_mul_mat_id_supported, ct_ref_mul_mat_id},
    [CT_OP_SQR] = {ct_ref_math_supported, ct_ref_math},
    [CT_OP_SQRT] = {ct_ref_math_supported, ct_ref_math},
    [CT_OP_SIN] = {ct_ref_math_supported, ct_ref_math},
    [CT_OP_COS] = {ct_ref_math_supported, ct_ref_math},
    [CT_OP_LOG] = {ct_ref_math_supported, ct_ref_math},
    [CT_OP_CLAMP] = {ct_ref_math_supported, ct_ref_math},
    [CT_OP_LEAKY_RELU] = {ct_ref_math_supported, ct_ref_math},
    [CT_OP_FILL] = {ct_ref_math_supported, ct_ref_math},
    [CT_OP_REPEAT] = {ct_ref_shape_supported, ct_ref_shape},
    [CT_OP_CONCAT] = {ct_ref_shape_supported, ct_ref_shape},
    [CT_OP_PAD] = {ct_ref_shape_supported, ct_ref_shape},
    [CT_OP_ARANGE] = {ct_ref_shape_supported, ct_ref_shape},
    [CT_OP_ACC] = {ct_ref_shape_supported, ct_ref_shape},
    [CT_OP_FLASH_ATTN_EXT] = {ct_ref_flash_attn_supported, ct_ref_flash_attn},
};

/* The op's entry, or NULL when REF has no function for it. */
static const ref_op *find_ref_op(ct_op op) {
    if ((unsigned)op >= (unsigned)CT_OP_COUNT || !ref_ops[op].compute) return NULL;
    return &ref_ops[op];
}

static bool dev_supports_op(const ct_device *dev, const ct_tensor *op) {
    CT_UNUSED(dev);
    const ref_op *entry = find_ref_op(op->op);
    return entry != NULL && entry->supported(op);
}

static bool dev_supports_buft(const ct_device *dev, const ct_buffer_type *buft) {
    CT_UNUSED(dev);
    return ct_buffer_type_is_host(buft);
}

/* ---- backend -------------------------------------------------------------- */

static const char *be_get_name(const ct_backend *backend) {
    CT_UNUSED(backend);
    return "REF";
}

static void be_free(ct_backend *backend) {
    ct_free(backend->context);
    ct_free(backend);
}

static void be_set_abort_callback(ct_backend *backend, ct_abort_callback callback, void *user_data) {
    ref_context *ctx = backend->context;
    ctx->abort_callback = callback;
    ctx->abort_data = user_data;
}

/* ct_backend_graph_compute checked ct_device_supports_op on every node before
 * calling this, so a refused graph computes nothing. */
static ct_status be_graph_compute(ct_backend *backend, ct_graph *graph) {
    ref_context *ctx = backend->context;
    const int n = ct_graph_n_nodes(graph);
    for (int i = 0; i < n; i++) {
        ct_tensor *node = ct_graph_node(graph, i);
        if (ct_op_is_view(node->op) || ct_is_empty(node)) continue;
        if (ctx->abort_callback && ctx->abort_callback(ctx->abort_data))
            return ct_fail(CT_ABORTED, CT_REF_FN ": REF: the abort callback stopped the compute before node %d of %d",
                           i, n);
        const ref_op *entry = find_ref_op(node->op);
        CT_ASSERT(entry != NULL && entry->supported(node));
        const ct_status st = entry->compute(node);
        if (st != CT_OK) return st;
    }
    return CT_OK;
}

static ct_status dev_init_backend(ct_device *dev, const char *params, ct_backend **backend) {
    if (params && params[0])
        return ct_fail(CT_INVALID_ARGUMENT, "ct_device_init_backend: REF takes no params, got \"%s\"", params);
    ref_context *ctx = ct_calloc(1, sizeof *ctx);
    ct_backend *be = ct_calloc(1, sizeof *be);
    if (!ctx || !be) {
        ct_free(ctx);
        ct_free(be);
        return ct_fail(CT_OUT_OF_MEMORY, "ct_device_init_backend: REF: cannot allocate the backend");
    }
    memcpy(be->guid, ref_guid, sizeof be->guid);
    be->iface = (ct_backend_i){
        .get_name = be_get_name,
        .free = be_free,
        .synchronize = NULL,
        .graph_compute = be_graph_compute,
        .set_abort_callback = be_set_abort_callback,
    };
    be->device = dev;
    be->context = ctx;
    *backend = be;
    return CT_OK;
}

/* ---- registration --------------------------------------------------------- */

static const char *reg_get_name(const ct_backend_reg *reg) {
    CT_UNUSED(reg);
    return "REF";
}

static size_t reg_get_device_count(const ct_backend_reg *reg) {
    CT_UNUSED(reg);
    return 1;
}

static ct_device *reg_get_device(const ct_backend_reg *reg, size_t index) {
    CT_UNUSED(reg);
    return index == 0 ? &ref_device : NULL;
}

static ct_device ref_device = {
    .iface =
        {
            .get_name = dev_get_name,
            .get_description = dev_get_description,
            .get_memory = dev_get_memory,
            .get_type = dev_get_type,
            .get_props = dev_get_props,
            .init_backend = dev_init_backend,
            .get_buffer_type = dev_get_buffer_type,
            .get_host_buffer_type = NULL,
            .buffer_from_host_ptr = NULL,
            .supports_op = dev_supports_op,
            .supports_buft = dev_supports_buft,
        },
    .reg = &ref_reg,
    .context = NULL,
};

static ct_backend_reg ref_reg = {
    .api_version = CT_BACKEND_API_VERSION,
    .iface =
        {
            .get_name = reg_get_name,
            .get_device_count = reg_get_device_count,
            .get_device = reg_get_device,
            .get_proc_address = NULL,
        },
    .context = NULL,
};

ct_backend_reg *ct_backend_ref_reg(void) {
    return &ref_reg;
}
