/* The OpenCL registration ("OpenCL": one device per OpenCL device of every
 * platform), its devices, and backend instances: each with its own in-order
 * queue and cl_kernel objects, computing a graph with one wait at the end and
 * turning device errors and raised index flags into statuses. The encoders'
 * toolkit is encoder.c; the encoders are in encoders/. */
#include "encoder.h"
#include "tensor/tensor_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ctensor's own OpenCL backend GUID. */
static const uint8_t opencl_guid[16] = {0x63, 0x74, 0x6f, 0x63, 0x6c, 0x2d, 0x4a, 0x91,
                                        0xb2, 0x0e, 0x5d, 0x37, 0xa8, 0x44, 0x19, 0xc6};

/* ---- messages ------------------------------------------------------------------ */

const char *ct_ocl_error_name(cl_int err) {
    switch (err) {
#define E(x) case x: return #x;
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
        E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
        E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
        E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE)
        E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
        E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
        E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION)
        E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
        E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
        E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
        E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
        E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
        E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
        E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    }
    return "CL_UNKNOWN_ERROR";
}

const char *ct_ocl_where(const ct_ocl_backend *be, char *buf, size_t n) {
    const ct_tensor *node = be->where_node;
    if (!node) return be->where;
    if (node->name[0]) {
        snprintf(buf, n, "ct_backend_graph_compute: node '%s' (%s)", node->name, ct_op_name(node->op));
    } else {
        snprintf(buf, n, "ct_backend_graph_compute: node #%d (%s)", be->where_index, ct_op_name(node->op));
    }
    return buf;
}

ct_status ct_ocl_fail(const ct_ocl_backend *be, ct_status status, const char *fmt, ...) {
    char msg[384], where[sizeof be->where];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ct_fail(status, "%s: %s", ct_ocl_where(be, where, sizeof where), msg);
}

ct_status ct_ocl_fail_cl(const ct_ocl_backend *be, const char *call, cl_int err) {
    char where[sizeof be->where];
    return ct_fail(CT_DEVICE_ERROR, "%s: %s failed: %s (%d)", ct_ocl_where(be, where, sizeof where), call,
                   ct_ocl_error_name(err), err);
}

/* ---- op dispatch ----------------------------------------------------------------- */

/* What OpenCL computes, one entry per op; an op without an entry is unsupported.
 * View ops have none: they compute nothing (ct_op_is_view, answered for every
 * device by ct_device_supports_op). */
typedef struct ct_ocl_op {
    bool (*supported)(const ct_ocl_device *dev, const ct_tensor *op); /* exact check */
    ct_ocl_encode_fn encode;
} ct_ocl_op;

static const ct_ocl_op ct_ocl_ops[CT_OP_COUNT] = {
    [CT_OP_DUP] = {ct_ocl_cpy_supported, ct_ocl_encode_cpy},
    [CT_OP_CPY] = {ct_ocl_cpy_supported, ct_ocl_encode_cpy},
    [CT_OP_CONT] = {ct_ocl_cpy_supported, ct_ocl_encode_cpy},
    [CT_OP_GET_ROWS] = {ct_ocl_get_rows_supported, ct_ocl_encode_get_rows},
    [CT_OP_SET_ROWS] = {ct_ocl_set_rows_supported, ct_ocl_encode_set_rows},
    [CT_OP_MUL_MAT] = {ct_ocl_mul_mat_supported, ct_ocl_encode_mul_mat},
    [CT_OP_NORM] = {ct_ocl_norm_supported, ct_ocl_encode_norm},
    [CT_OP_RMS_NORM] = {ct_ocl_norm_supported, ct_ocl_encode_norm},
    [CT_OP_L2_NORM] = {ct_ocl_norm_supported, ct_ocl_encode_norm},
    [CT_OP_GROUP_NORM] = {ct_ocl_norm_supported, ct_ocl_encode_norm},
    [CT_OP_SUM_ROWS] = {ct_ocl_sum_rows_supported, ct_ocl_encode_sum_rows},
    [CT_OP_MEAN] = {ct_ocl_sum_rows_supported, ct_ocl_encode_sum_rows},
    [CT_OP_UNARY] = {ct_ocl_unary_supported, ct_ocl_encode_unary},
    [CT_OP_SCALE] = {ct_ocl_scale_supported, ct_ocl_encode_scale},
    [CT_OP_ADD] = {ct_ocl_binary_supported, ct_ocl_encode_binary},
    [CT_OP_SUB] = {ct_ocl_binary_supported, ct_ocl_encode_binary},
    [CT_OP_MUL] = {ct_ocl_binary_supported, ct_ocl_encode_binary},
    [CT_OP_DIV] = {ct_ocl_binary_supported, ct_ocl_encode_binary},
    [CT_OP_ADD1] = {ct_ocl_binary_supported, ct_ocl_encode_binary},
    [CT_OP_SOFT_MAX] = {ct_ocl_soft_max_supported, ct_ocl_encode_soft_max},
    [CT_OP_ROPE] = {ct_ocl_rope_supported, ct_ocl_encode_rope},
    [CT_OP_GLU] = {ct_ocl_glu_supported, ct_ocl_encode_glu},
    [CT_OP_SUM] = {ct_ocl_reduce_supported, ct_ocl_encode_reduce},
    [CT_OP_CUMSUM] = {ct_ocl_reduce_supported, ct_ocl_encode_reduce},
    [CT_OP_ARGMAX] = {ct_ocl_reduce_supported, ct_ocl_encode_reduce},
    [CT_OP_ARGSORT] = {ct_ocl_argsort_supported, ct_ocl_encode_argsort},
    [CT_OP_TOP_K] = {ct_ocl_argsort_supported, ct_ocl_encode_argsort},
    [CT_OP_MUL_MAT_ID] = {ct_ocl_mul_mat_id_supported, ct_ocl_encode_mul_mat_id},
    [CT_OP_ADD_ID] = {ct_ocl_mul_mat_id_supported, ct_ocl_encode_mul_mat_id},
    [CT_OP_SQR] = {ct_ocl_math_supported, ct_ocl_encode_math},
    [CT_OP_SQRT] = {ct_ocl_math_supported, ct_ocl_encode_math},
    [CT_OP_SIN] = {ct_ocl_math_supported, ct_ocl_encode_math},
    [CT_OP_COS] = {ct_ocl_math_supported, ct_ocl_encode_math},
    [CT_OP_LOG] = {ct_ocl_math_supported, ct_ocl_encode_math},
    [CT_OP_CLAMP] = {ct_ocl_math_supported, ct_ocl_encode_math},
    [CT_OP_LEAKY_RELU] = {ct_ocl_math_supported, ct_ocl_encode_math},
    [CT_OP_FILL] = {ct_ocl_math_supported, ct_ocl_encode_math},
    [CT_OP_REPEAT] = {ct_ocl_shape_supported, ct_ocl_encode_shape},
    [CT_OP_CONCAT] = {ct_ocl_shape_supported, ct_ocl_encode_shape},
    [CT_OP_PAD] = {ct_ocl_shape_supported, ct_ocl_encode_shape},
    [CT_OP_ARANGE] = {ct_ocl_shape_supported, ct_ocl_encode_shape},
    [CT_OP_ACC] = {ct_ocl_shape_supported, ct_ocl_encode_shape},
    [CT_OP_FLASH_ATTN_EXT] = {ct_ocl_flash_attn_supported, ct_ocl_encode_flash_attn},
};

static bool is_noop(const ct_tensor *node) { return ct_op_is_view(node->op); }

static ct_ocl_encode_fn op_encoder(ct_op op) {
    return (unsigned)op < (unsigned)CT_OP_COUNT ? ct_ocl_ops[op].encode : NULL;
}

static bool op_supported(const ct_ocl_device *d, const ct_tensor *op) {
    if (ct_op_is_view(op->op)) return true;
    return op_encoder(op->op) != NULL && ct_ocl_ops[op->op].supported(d, op);
}

/* ---- backend instance -------------------------------------------------------------- */

static const char *be_get_name(const ct_backend *backend) { return ((ct_ocl_backend *)backend->context)->dev->name; }

static void be_destroy(ct_ocl_backend *be) {
    if (be->queue) clFinish(be->queue);
    if (be->profile.on) ct_ocl_profile_report(be);
    ct_ocl_replay_free(be); /* the command buffers, before the kernels and memory they name */
    for (int k = 0; k < CT_OCL_K_COUNT; k++) {
        if (be->kernels[k]) clReleaseKernel(be->kernels[k]);
    }
    for (int p = 0; p < CT_OCL_PROGRAM_COUNT; p++) {
        if (be->programs[p]) clReleaseProgram(be->programs[p]);
    }
    if (be->error_flag) clReleaseMemObject(be->error_flag);
    if (be->work) clReleaseMemObject(be->work);
    if (be->queue) clReleaseCommandQueue(be->queue);
    ct_free(be->uses);
    ct_ocl_device *dev = be->dev;
    ct_free(be);
    ct_ocl_device_release(dev);
}

static void be_free(ct_backend *backend) { be_destroy(backend->context); }

static void be_set_abort_callback(ct_backend *backend, ct_abort_callback callback, void *user_data) {
    ct_ocl_backend *be = backend->context;
    be->abort_callback = callback;
    be->abort_data = user_data;
}

void ct_ocl_set_where(ct_ocl_backend *be, const ct_tensor *node, int i) {
    be->where_node = node; /* formatted by ct_ocl_where, only when a message needs it */
    be->where_index = i;
}

/* Waits for everything enqueued and, when a kernel took the error flag, reads it
 * (a blocking read: in an in-order queue it also waits for the kernels); returns
 * the status of the compute given the encoding status st. */
static ct_status finish(ct_ocl_backend *be, ct_graph *graph, ct_status st) {
    cl_int flag = 0, err;
    const bool read_flag = be->flag_used && (st == CT_OK || st == CT_ABORTED);
    if (read_flag) err = clEnqueueReadBuffer(be->queue, be->error_flag, CL_TRUE, 0, sizeof flag, &flag, 0, NULL, NULL);
    else err = clFinish(be->queue);
    be->n_waits++;
    if (err == CL_SUCCESS) be->async_pending = false; /* the queue is in order: transfers before it are done */
    if (be->flag_used && (!read_flag || err != CL_SUCCESS || flag != 0)) be->flag_dirty = true;
    if (st != CT_OK && st != CT_ABORTED) return st;
    if (err != CL_SUCCESS) {
        snprintf(be->where, sizeof be->where, "ct_backend_graph_compute: %s", be->dev->name);
        be->where_node = NULL;
        return ct_ocl_fail_cl(be, read_flag ? "clEnqueueReadBuffer(error flag)" : "clFinish", err);
    }
    if (flag != 0) {
        int n = ct_graph_n_nodes(graph);
        int i = flag - 1;
        if (i < 0 || i >= n) {
            return ct_fail(CT_INDEX_OUT_OF_RANGE, "ct_backend_graph_compute: %s: a kernel raised the index error "
                           "flag with code %d", be->dev->name, (int)flag);
        }
        ct_ocl_set_where(be, ct_graph_node(graph, i), i);
        return ct_ocl_fail(be, CT_INDEX_OUT_OF_RANGE, "a row index is out of range; rows with bad indices were not "
                           "written");
    }
    return st;
}

/* ct_ocl_trace_submit, its host time summed when profiling. */
static ct_status submit(ct_ocl_backend *be, ct_graph *graph, bool may_replay) {
    if (!be->profile.on) return ct_ocl_trace_submit(be, graph, may_replay);
    const uint64_t t0 = ct_ocl_now_ns();
    ct_status st = ct_ocl_trace_submit(be, graph, may_replay);
    be->profile.submit_ns += ct_ocl_now_ns() - t0;
    return st;
}

static bool skipped(const ct_tensor *node) { return ct_is_empty(node) || is_noop(node); }

/* Unsupported nodes fail before anything is encoded (ct_backend_graph_compute asks
 * supports_op first; tests call graph_compute directly). */
static ct_status check_node(ct_ocl_backend *be, const ct_tensor *node) {
    if (op_supported(be->dev, node)) return CT_OK;
    return ct_ocl_fail(be, CT_UNSUPPORTED, "not supported by %s (types %s <- %s, %s)", be->dev->name,
                       ct_type_name(node->type), node->src[0] ? ct_type_name(node->src[0]->type) : "-",
                       node->src[1] ? ct_type_name(node->src[1]->type) : "-");
}

/* Checks every node, and reserves the work memory the graph's encoders will take before
 * anything is recorded: growing it never splits a trace, so every graph may be replayed. */
static ct_status check_and_reserve(ct_ocl_enc *enc, int n) {
    ct_ocl_backend *be = enc->be;
    size_t most = 0;
    for (int i = 0; i < n && !be->test_encoder; i++) {
        ct_tensor *node = ct_graph_node(enc->graph, i);
        if (skipped(node)) continue;
        ct_ocl_set_where(be, node, i);
        ct_ocl_enc_begin_node(enc, i);
        size_t bytes = 0;
        ct_status st = check_node(be, node);
        if (st == CT_OK) st = ct_ocl_node_work_bytes(enc, node, &bytes);
        if (st != CT_OK) return st;
        if (bytes > most) most = bytes;
    }
    be->where_node = NULL; /* a failure here is the compute's, not a node's */
    return ct_ocl_work_reserve(be, most);
}

/* The graph's use counts, once per compute, for the encoders' fusion checks; none (nothing
 * fused) when fusion is off or the graph is a view, which does not know every consumer. */
static ct_status count_uses(ct_ocl_enc *enc) {
    ct_ocl_backend *be = enc->be;
    const ct_graph *g = enc->graph;
    if (!be->fusion_enabled || g->is_view) return CT_OK;
    if (be->uses_cap < g->hash_size) {
        int32_t *u = ct_malloc(g->hash_size * sizeof *u);
        if (!u) return ct_ocl_fail(be, CT_OUT_OF_MEMORY, "no host memory for the use counts of %zu slots", g->hash_size);
        ct_free(be->uses);
        be->uses = u;
        be->uses_cap = g->hash_size;
    }
    if (ct_graph_count_uses(g, be->uses)) enc->uses = be->uses;
    return CT_OK;
}

static ct_status be_graph_compute(ct_backend *backend, ct_graph *graph) {
    ct_ocl_backend *be = backend->context;
    snprintf(be->where, sizeof be->where, "ct_backend_graph_compute: %s", be->dev->name);
    be->where_node = NULL;
    be->flag_used = false;
    cl_int err;
    if (be->profile.on) ct_ocl_profile_begin(be);

    int n = ct_graph_n_nodes(graph);
    bool first = true;
    /* With an abort callback each node is submitted before the callback sees the
     * device idle; without, the whole graph once, where it may be replayed. */
    const bool per_node = be->abort_callback != NULL;
    be->graph = graph;
    ct_ocl_enc enc = {.be = be, .graph = graph};
    ct_status st = check_and_reserve(&enc, n);
    if (st == CT_OK && !per_node && !be->test_encoder) st = count_uses(&enc);
    int n_nodes = 1;
    for (int i = 0; i < n && st == CT_OK; i += n_nodes) {
        ct_tensor *node = ct_graph_node(graph, i);
        n_nodes = 1;
        if (skipped(node)) continue;
        be->node_index = i;
        ct_ocl_set_where(be, node, i);
        if (be->abort_callback) {
            /* The callback sees the device idle, as after each node on the CPU. */
            if (!first && (err = clFinish(be->queue)) != CL_SUCCESS) {
                st = ct_ocl_fail_cl(be, "clFinish", err);
                break;
            }
            if (be->abort_callback(be->abort_data)) {
                st = ct_fail(CT_ABORTED, "ct_backend_graph_compute: the abort callback stopped the compute before "
                             "node %d of %d", i, n);
                break;
            }
        }
        first = false;
        if (be->test_encoder) {
            st = be->test_encoder(be, node);
        } else {
            ct_ocl_enc_begin_node(&enc, i);
            st = op_encoder(node->op)(&enc, node, &n_nodes);
            CT_ASSERT(st != CT_OK || (n_nodes >= 1 && n_nodes <= n - i));
            be->n_fused += (uint64_t)(n_nodes - 1);
        }
        if (st == CT_OK && per_node) st = submit(be, graph, false);
    }
    /* A node that fails to encode does not run, nor do the ones after it; earlier ones may
     * have (a callback hands each node over before encoding the next). */
    if (st == CT_OK && !per_node) st = submit(be, graph, true);
    else if (st != CT_OK) ct_ocl_trace_discard(be);
    be->graph = NULL;
    st = finish(be, graph, st);
    if (be->profile.on) ct_ocl_profile_end(be);
    be->where_node = NULL; /* the graph's nodes may not outlive the compute */
    return st;
}

/* n commands an async transfer queued: synchronize waits only when there are some. */
static void note_queued(ct_ocl_backend *be, unsigned n) {
    be->n_async_queued += n;
    if (n) be->async_pending = true;
}

/* Async transfers go on the backend's own in-order queue, not the device's transfer
 * queue, so a compute on this backend sees them without a wait of its own
 * (include/ctensor.h, ct_backend_tensor_set_async). */
static ct_status be_set_tensor_async(ct_backend *backend, ct_tensor *t, const void *data, size_t offset,
                                     size_t size) {
    ct_ocl_backend *be = backend->context;
    ct_buffer *buf = ct_tensor_data_buffer(t);
    unsigned n = 0;
    ct_status st = ct_ocl_buffer_write_async("ct_backend_tensor_set_async", buf, be->queue, t, data, offset, size, &n);
    note_queued(be, n);
    return st;
}

static ct_status be_get_tensor_async(ct_backend *backend, const ct_tensor *t, void *data, size_t offset,
                                     size_t size) {
    ct_ocl_backend *be = backend->context;
    ct_buffer *buf = ct_tensor_data_buffer(t);
    unsigned n = 0;
    ct_status st = ct_ocl_buffer_read_async("ct_backend_tensor_get_async", buf, be->queue, t, data, offset, size, &n);
    note_queued(be, n);
    return st;
}

/* Computes wait at their end, so only async transfers can be outstanding. */
static ct_status be_synchronize(ct_backend *backend) {
    ct_ocl_backend *be = backend->context;
    if (!be->async_pending) return CT_OK;
    cl_int err = clFinish(be->queue);
    be->n_waits++;
    if (err != CL_SUCCESS) {
        return ct_fail(CT_DEVICE_ERROR, "ct_backend_synchronize: %s: clFinish failed: %s (%d)", be->dev->name,
                       ct_ocl_error_name(err), err);
    }
    be->async_pending = false;
    return CT_OK;
}

static const ct_backend_i backend_iface = {
    .get_name = be_get_name,
    .free = be_free,
    .synchronize = be_synchronize,
    .graph_compute = be_graph_compute,
    .set_abort_callback = be_set_abort_callback,
    .set_tensor_async = be_set_tensor_async,
    .get_tensor_async = be_get_tensor_async,
};

/* Under the device lock: the programs (built once), retained for this instance, which
 * creates its kernels from them on first use (ct_ocl_kernel_get). */
static ct_status retain_programs(ct_ocl_backend *be) {
    ct_ocl_device *d = be->dev;
    ct_status st = ct_ocl_library_load(d, "ct_device_init_backend");
    if (st != CT_OK) return st;
    const cl_program programs[CT_OCL_PROGRAM_COUNT] = {[CT_OCL_PROGRAM_LIBRARY] = d->program,
                                                       [CT_OCL_PROGRAM_MVQ] = d->program_mvq};
    for (int p = 0; p < CT_OCL_PROGRAM_COUNT; p++) {
        if (!programs[p]) continue;
        cl_int err = clRetainProgram(programs[p]);
        if (err != CL_SUCCESS) {
            return ct_fail(CT_DEVICE_ERROR, "ct_device_init_backend: %s: clRetainProgram failed: %s (%d)", d->name,
                           ct_ocl_error_name(err), err);
        }
        be->programs[p] = programs[p];
    }
    return CT_OK;
}

static ct_status dev_init_backend(ct_device *device, const char *params, ct_backend **backend) {
    ct_ocl_device *d = ct_ocl_device_of(device);
    if (params && *params) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_device_init_backend: %s takes no params (got '%s')", d->name, params);
    }
    ct_ocl_backend *be = ct_calloc(1, sizeof *be);
    if (!be) return ct_fail(CT_OUT_OF_MEMORY, "ct_device_init_backend: %s: out of host memory", d->name);
    ct_ocl_device_retain(d);
    be->dev = d;
    be->flag_dirty = true; /* a new buffer's contents are undefined */
    ct_ocl_trace_discard(be);  /* an empty trace, replayable until a launch says otherwise */
    /* On by default where a launch is a driver's trip to a device; off on CPU devices,
     * where PoCL 3.1 ran the 1000-node graph 7-13% slower replayed. */
    be->replay_enabled = d->has_cmdbuf && ct_ocl_env_switch("CT_OPENCL_GRAPH_REPLAY", d->type != CT_DEVICE_TYPE_CPU);
    be->fusion_enabled = ct_ocl_env_switch("CT_OPENCL_FUSION", true);
    be->profile.on = ct_ocl_env_switch("CT_OPENCL_PROFILE", false);
    cl_int err;
    const cl_command_queue_properties props = be->profile.on ? CL_QUEUE_PROFILING_ENABLE : 0;
    be->queue = CT_OCL_CREATE("clCreateCommandQueue", &err, clCreateCommandQueue(d->context, d->device, props, &err));
    if (err != CL_SUCCESS) {
        be->queue = NULL;
        ct_status st = ct_fail(CT_DEVICE_ERROR, "ct_device_init_backend: %s: clCreateCommandQueue failed: %s (%d)",
                               d->name, ct_ocl_error_name(err), err);
        be_destroy(be);
        return st;
    }
    be->error_flag = CT_OCL_CREATE(
        "clCreateBuffer", &err, clCreateBuffer(d->context, ct_ocl_device_mem_flags(d), sizeof(cl_int), NULL, &err));
    if (err != CL_SUCCESS) {
        be->error_flag = NULL;
        ct_status st = ct_fail(CT_DEVICE_ERROR, "ct_device_init_backend: %s: clCreateBuffer(error flag) failed: %s "
                               "(%d)", d->name, ct_ocl_error_name(err), err);
        be_destroy(be);
        return st;
    }
    pthread_mutex_lock(&d->lock);
    ct_status st = retain_programs(be);
    pthread_mutex_unlock(&d->lock);
    if (st != CT_OK) {
        be_destroy(be);
        return st;
    }
    memcpy(be->base.guid, opencl_guid, sizeof opencl_guid);
    be->base.iface = backend_iface;
    be->base.device = device;
    be->base.context = be;
    *backend = &be->base;
    return CT_OK;
}

/* ---- devices ------------------------------------------------------------------------ */

static const char *dev_get_name(const ct_device *dev) { return ct_ocl_device_of(dev)->name; }

static const char *dev_get_description(const ct_device *dev) { return ct_ocl_device_of(dev)->description; }

static ct_status dev_get_memory(const ct_device *dev, size_t *free_bytes, size_t *total_bytes) {
    const ct_ocl_device *d = ct_ocl_device_of(dev);
    size_t used = atomic_load(&d->allocated);
    *total_bytes = d->global_mem;
    *free_bytes = used < d->global_mem ? d->global_mem - used : 0;
    return CT_OK;
}

static ct_device_type dev_get_type(const ct_device *dev) { return ct_ocl_device_of(dev)->type; }

static void dev_get_props(const ct_device *dev, ct_device_props *props) {
    props->name = dev_get_name(dev);
    props->description = dev_get_description(dev);
    props->type = dev_get_type(dev);
    dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps = (ct_device_caps){.async = true, .host_buffer = false, .buffer_from_host_ptr = true, .events = false};
}

static ct_buffer_type *dev_get_buffer_type(const ct_device *dev) { return &ct_ocl_device_of(dev)->buft; }

static bool dev_supports_op(const ct_device *dev, const ct_tensor *op) {
    return op_supported(ct_ocl_device_of(dev), op);
}

static bool dev_supports_buft(const ct_device *dev, const ct_buffer_type *buft) {
    return ct_ocl_is_own_buft(ct_ocl_device_of(dev), buft);
}

static const ct_device_i device_iface = {
    .get_name = dev_get_name,
    .get_description = dev_get_description,
    .get_memory = dev_get_memory,
    .get_type = dev_get_type,
    .get_props = dev_get_props,
    .init_backend = dev_init_backend,
    .get_buffer_type = dev_get_buffer_type,
    .get_host_buffer_type = NULL,
    .buffer_from_host_ptr = ct_ocl_buffer_from_host_ptr,
    .supports_op = dev_supports_op,
    .supports_buft = dev_supports_buft,
};

/* ---- registration ------------------------------------------------------------------- */

static ct_backend_reg opencl_reg;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static ct_ocl_device **reg_devices;
static size_t reg_n_devices;

static const char *reg_get_name(const ct_backend_reg *reg) {
    CT_UNUSED(reg);
    return "OpenCL";
}

static size_t reg_get_device_count(const ct_backend_reg *reg) {
    CT_UNUSED(reg);
    return reg_n_devices;
}

static ct_device *reg_get_device(const ct_backend_reg *reg, size_t index) {
    CT_UNUSED(reg);
    return index < reg_n_devices ? &reg_devices[index]->dev : NULL;
}

/* The registry calls this once at exit; devices still used by live backends or
 * buffers stay until those are freed. */
static void reg_release(ct_backend_reg *reg) {
    CT_UNUSED(reg);
    size_t n = reg_n_devices;
    reg_n_devices = 0;
    for (size_t i = 0; i < n; i++) ct_ocl_device_release(reg_devices[i]);
    ct_free(reg_devices);
    reg_devices = NULL;
}

static void *reg_get_proc_address(const ct_backend_reg *reg, const char *name) {
    CT_UNUSED(reg);
    if (name && strcmp(name, CT_BACKEND_REG_RELEASE_PROC) == 0) return (void *)(uintptr_t)reg_release;
    return NULL;
}

static ct_backend_reg opencl_reg = {
    .api_version = CT_BACKEND_API_VERSION,
    .iface = {
        .get_name = reg_get_name,
        .get_device_count = reg_get_device_count,
        .get_device = reg_get_device,
        .get_proc_address = reg_get_proc_address,
    },
    .context = NULL,
};

static void reg_init(void) {
    reg_n_devices = ct_ocl_devices_enumerate(&reg_devices);
    for (size_t i = 0; i < reg_n_devices; i++) {
        reg_devices[i]->dev = (ct_device){.iface = device_iface, .reg = &opencl_reg, .context = reg_devices[i]};
    }
}

ct_backend_reg *ct_backend_opencl_reg(void) {
    pthread_once(&reg_once, reg_init);
    return &opencl_reg;
}
