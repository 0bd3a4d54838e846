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

static bool dev_supports_op(const ct_device *dev, const ct_tensor *op) {
    CT_UNUSED(dev);
    switch (op->op) {
    case CT_OP_NONE:
    case CT_OP_VIEW:
    case CT_OP_RESHAPE:
    case CT_OP_PERMUTE:
    case CT_OP_TRANSPOSE: return true;
    case CT_OP_DUP:
    case CT_OP_CPY:
    case CT_OP_CONT: return ct_ref_cpy_supported(op);
    case CT_OP_GET_ROWS: return ct_ref_get_rows_supported(op);
    case CT_OP_SET_ROWS: return ct_ref_set_rows_supported(op);
    case CT_OP_MUL_MAT: return ct_ref_mul_mat_supported(op);
    case CT_OP_NORM:
    case CT_OP_RMS_NORM:
    case CT_OP_L2_NORM:
    case CT_OP_GROUP_NORM: return ct_ref_norm_supported(op);
    case CT_OP_SUM_ROWS:
    case CT_OP_MEAN: return ct_ref_sum_rows_supported(op);
    default: return false;
    }
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

static bool is_view_op(ct_op op) {
    return op == CT_OP_NONE || op == CT_OP_VIEW || op == CT_OP_RESHAPE || op == CT_OP_PERMUTE ||
           op == CT_OP_TRANSPOSE;
}

static ct_status compute_node(ct_tensor *node) {
    switch (node->op) {
    case CT_OP_DUP:
    case CT_OP_CPY:
    case CT_OP_CONT: return ct_ref_cpy(node);
    case CT_OP_GET_ROWS: return ct_ref_get_rows(node);
    case CT_OP_SET_ROWS: return ct_ref_set_rows(node);
    case CT_OP_MUL_MAT: return ct_ref_mul_mat(node);
    case CT_OP_NORM:
    case CT_OP_RMS_NORM:
    case CT_OP_L2_NORM:
    case CT_OP_GROUP_NORM: return ct_ref_norm(node);
    case CT_OP_SUM_ROWS:
    case CT_OP_MEAN: return ct_ref_sum_rows(node);
    default:
        return ct_fail(CT_UNSUPPORTED, CT_REF_FN ": REF cannot compute %s '%s'", ct_op_name(node->op),
                       ct_ref_label(node, "node"));
    }
}

static ct_status be_graph_compute(ct_backend *backend, ct_graph *graph) {
    ref_context *ctx = backend->context;
    const int n = ct_graph_n_nodes(graph);
    /* Refuse before computing anything, so that a refused graph has no partial effects. */
    for (int i = 0; i < n; i++) {
        const ct_tensor *node = ct_graph_node(graph, i);
        if (!dev_supports_op(&ref_device, node))
            return ct_fail(CT_UNSUPPORTED, CT_REF_FN ": REF does not support node %d '%s' (%s, %s <- %s, %s)", i,
                           ct_ref_label(node, "node"), ct_op_name(node->op), ct_type_name(node->type),
                           node->src[0] ? ct_type_name(node->src[0]->type) : "-",
                           node->src[1] ? ct_type_name(node->src[1]->type) : "-");
    }
    for (int i = 0; i < n; i++) {
        ct_tensor *node = ct_graph_node(graph, i);
        if (is_view_op(node->op) || ct_is_empty(node)) continue;
        if (ctx->abort_callback && ctx->abort_callback(ctx->abort_data))
            return ct_fail(CT_ABORTED, CT_REF_FN ": REF: the abort callback stopped the compute before node %d of %d",
                           i, n);
        const ct_status st = compute_node(node);
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
