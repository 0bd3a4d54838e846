/* The encoder toolkit (encoder.h): tensors resolved to (cl_mem, offset), kernels created
 * on first use, the argument cursor and dispatch, all appending to the compute's trace;
 * the work memory, sized before encoding. */
#include "encoder.h"
#include "tensor/tensor_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- tensors ---------------------------------------------------------------------- */

ct_status ct_ocl_tensor_mem(const ct_ocl_backend *be, const ct_tensor *t, const char *role, cl_mem *mem,
                            cl_ulong *offset) {
    const ct_buffer *buf = ct_tensor_data_buffer(t);
    const char *name = t->name[0] ? t->name : "(unnamed)";
    if (!buf || !t->data || !ct_ocl_is_own_buft(be->dev, buf->buft)) {
        return ct_ocl_fail(be, CT_INVALID_ARGUMENT, "%s '%s' is not in a buffer of %s", role, name, be->dev->name);
    }
    size_t nbytes = ct_nbytes(t);
    const ct_ocl_view *v = ct_ocl_buffer_find_view(buf->context, t->data, nbytes);
    if (!v) {
        return ct_ocl_fail(be, CT_INVALID_ARGUMENT, "%s '%s' (%zu bytes at %p) lies in no single view of its buffer "
                           "(is it larger than the max_tensor_size it was wrapped with?)", role, name, nbytes,
                           t->data);
    }
    *mem = v->mem;
    *offset = (cl_ulong)((const char *)t->data - v->data);
    return CT_OK;
}

/* The offset alone is not enough: a view over caller memory starts where the caller's
 * pointer does, and a driver may run kernels on that address itself (PoCL does, at any
 * alignment) or on a copy at its own base alignment. Only the alignment common to the
 * view's start and the offset holds either way. Device buffers' views start at
 * PLACEHOLDER_BASE (buffer.c), aligned beyond anything asked here: the offset decides. */
static cl_ulong view_addr_bits(const ct_ocl_view *v, const ct_tensor *t) {
    return (cl_ulong)((const char *)t->data - v->data) | (cl_ulong)(uintptr_t)v->data;
}

cl_ulong ct_ocl_addr_bits(const ct_ocl_device *dev, const ct_tensor *t) {
    const ct_buffer *buf = ct_tensor_data_buffer(t);
    const cl_ulong unplaced = t->view_src ? (cl_ulong)t->view_offs : 0;
    if (!buf || !t->data || !ct_ocl_is_own_buft(dev, buf->buft)) return unplaced;
    const ct_ocl_view *v = ct_ocl_buffer_find_view(buf->context, t->data, ct_nbytes(t));
    if (!v) return unplaced; /* no kernel takes it: ct_ocl_tensor_mem fails */
    return view_addr_bits(v, t);
}

void ct_ocl_enc_begin_node(ct_ocl_enc *enc, int i) {
    enc->node_index = i;
    enc->st = CT_OK;
    enc->kid = CT_OCL_K_COUNT;
    enc->arg = 0;
    enc->n_resolved = 0;
}

ct_status ct_ocl_enc_fail(ct_ocl_enc *enc, ct_status status, const char *fmt, ...) {
    if (enc->st != CT_OK) return enc->st;
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    enc->st = ct_ocl_fail(enc->be, status, "%s", msg);
    return enc->st;
}

const ct_ocl_tensor_ref *ct_ocl_enc_tensor(ct_ocl_enc *enc, const ct_tensor *t, const char *role) {
    for (int i = 0; i < enc->n_resolved; i++)
        if (enc->resolved_tensor[i] == t) return &enc->resolved[i];
    if (enc->st != CT_OK) return NULL;
    ct_ocl_tensor_ref r;
    enc->st = ct_ocl_tensor_mem(enc->be, t, role, &r.mem, &r.offset);
    if (enc->st != CT_OK) return NULL;
    /* the view ct_ocl_tensor_mem found: its start is the tensor's address less the offset */
    const ct_ocl_view v = {.data = (char *)t->data - r.offset};
    r.addr_bits = view_addr_bits(&v, t);
    CT_ASSERT(enc->n_resolved < CT_OCL_ENC_MAX_TENSORS); /* encoders name at most a node's tensors */
    if (enc->n_resolved == CT_OCL_ENC_MAX_TENSORS) enc->n_resolved = 0; /* a cache: drop the oldest */
    const int i = enc->n_resolved++;
    enc->resolved_tensor[i] = t;
    enc->resolved[i] = r;
    return &enc->resolved[i];
}

/* ---- fusion ---------------------------------------------------------------------- */

ct_tensor *ct_ocl_enc_fusable_next(const ct_ocl_enc *enc, const ct_tensor *t, int next) {
    const int j = enc->node_index + next;
    if (!enc->uses || j >= ct_graph_n_nodes(enc->graph)) return NULL;
    ct_tensor *n = enc->graph->nodes[j];
    if (t->view_src || (t->flags & CT_TENSOR_FLAG_OUTPUT) || ct_is_empty(n)) return NULL;
    if (enc->uses[ct_graph_slot(enc->graph, t)] != 1) return NULL;
    for (int k = 0; k < CT_MAX_SRC; k++)
        if (n->src[k] == t) return n;
    return NULL;
}

bool ct_ocl_may_overlap(const ct_tensor *x, const ct_tensor *y) {
    const ct_buffer *bx = ct_tensor_data_buffer(x);
    const ct_buffer *by = ct_tensor_data_buffer(y);
    if (!ct_buffers_share_addresses(bx, by)) return false;
    const char *px = x->data, *py = y->data;
    return px < py + ct_nbytes(y) && py < px + ct_nbytes(x);
}

bool ct_ocl_fused_write_clashes(const ct_tensor *out, const ct_tensor *in) {
    if (!ct_ocl_may_overlap(out, in)) return false;
    const bool same_place = out->data == in->data && out->type == in->type && ct_are_same_shape(out, in) &&
                            memcmp(out->nb, in->nb, sizeof out->nb) == 0;
    return !same_place;
}

/* ---- kernels, created on first use ------------------------------------------------- */

ct_status ct_ocl_kernel_get(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_kernel *out) {
    if ((unsigned)id >= CT_OCL_K_COUNT || !ct_ocl_kernel_available(be->dev, id)) {
        return ct_ocl_fail(be, CT_UNSUPPORTED, "kernel %s is not available on %s",
                           (unsigned)id < CT_OCL_K_COUNT ? ct_ocl_kernel_table[id].name : "(invalid)", be->dev->name);
    }
    if (be->kernels[id]) {
        *out = be->kernels[id];
        return CT_OK;
    }
    ct_ocl_device *d = be->dev;
    const char *name = ct_ocl_kernel_table[id].name;
    const ct_ocl_program_id p = ct_ocl_kernel_table[id].program;
    const cl_program prog = be->programs[p] ? be->programs[p] : be->programs[CT_OCL_PROGRAM_LIBRARY];
    cl_int err;
    cl_kernel k = CT_OCL_CREATE("clCreateKernel", &err, clCreateKernel(prog, name, &err));
    if (err != CL_SUCCESS) return ct_ocl_fail_cl(be, "clCreateKernel", err);
    cl_uint nargs = 0;
    err = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    size_t wg = 0;
    /* the device keeps the limit of the program each kernel first came from: backends
     * then pick the same work-group sizes, hence the same results */
    pthread_mutex_lock(&d->lock);
    if (err == CL_SUCCESS && d->kernel_wg_size[id] == 0) {
        err = clGetKernelWorkGroupInfo(k, d->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
        if (err == CL_SUCCESS) d->kernel_wg_size[id] = wg ? wg : 1;
    }
    wg = d->kernel_wg_size[id];
    pthread_mutex_unlock(&d->lock);
    if (err != CL_SUCCESS) {
        clReleaseKernel(k);
        return ct_ocl_fail(be, CT_DEVICE_ERROR, "querying kernel %s failed: %s (%d)", name, ct_ocl_error_name(err),
                           err);
    }
    be->kernels[id] = k;
    be->kernel_nargs[id] = nargs;
    be->kernel_wg[id] = wg;
    *out = k;
    return CT_OK;
}

size_t ct_ocl_kernel_max_wg(ct_ocl_backend *be, ct_ocl_kernel_id id) {
    cl_kernel k;
    return ct_ocl_kernel_get(be, id, &k) == CT_OK ? be->kernel_wg[id] : 1;
}

size_t ct_ocl_clamp_wg(ct_ocl_backend *be, ct_ocl_kernel_id id, size_t want) {
    size_t max = ct_ocl_kernel_max_wg(be, id);
    if (max > be->dev->max_work_item_sizes[0]) max = be->dev->max_work_item_sizes[0];
    if (want > max) want = max;
    return want ? want : 1;
}

size_t ct_ocl_enc_max_wg(ct_ocl_enc *enc, ct_ocl_kernel_id id) {
    cl_kernel k;
    if (enc->st != CT_OK) return 1;
    enc->st = ct_ocl_kernel_get(enc->be, id, &k);
    return enc->st == CT_OK ? enc->be->kernel_wg[id] : 1;
}

size_t ct_ocl_enc_clamp_wg(ct_ocl_enc *enc, ct_ocl_kernel_id id, size_t want) {
    size_t max = ct_ocl_enc_max_wg(enc, id);
    if (max > enc->be->dev->max_work_item_sizes[0]) max = enc->be->dev->max_work_item_sizes[0];
    if (want > max) want = max;
    return want ? want : 1;
}

/* ---- arguments and launches -------------------------------------------------------- */

void ct_ocl_enc_kernel(ct_ocl_enc *enc, ct_ocl_kernel_id id) {
    cl_kernel k;
    enc->kid = id;
    enc->arg = 0;
    if (enc->st == CT_OK) enc->st = ct_ocl_kernel_get(enc->be, id, &k);
}

void ct_ocl_arg_bytes(ct_ocl_enc *enc, const void *value, size_t size) {
    if (enc->st == CT_OK) enc->st = ct_ocl_trace_arg(enc->be, enc->kid, enc->arg, size, value);
    enc->arg++;
}

void ct_ocl_arg_local(ct_ocl_enc *enc, size_t bytes) { ct_ocl_arg_bytes(enc, NULL, bytes); }

void ct_ocl_arg_tensor(ct_ocl_enc *enc, const ct_tensor *t, const char *role) {
    const ct_ocl_tensor_ref *r = ct_ocl_enc_tensor(enc, t, role);
    if (r) {
        ct_ocl_arg_mem(enc, r->mem);
        ct_ocl_arg_u64(enc, r->offset);
    } else {
        enc->arg += 2;
    }
}

void ct_ocl_arg_null_tensor(ct_ocl_enc *enc) {
    ct_ocl_arg_mem(enc, NULL);
    ct_ocl_arg_u64(enc, 0);
}

void ct_ocl_arg_flag(ct_ocl_enc *enc) {
    enc->be->flag_used = true; /* ct_ocl_trace_submit resets the flag before the trace runs */
    ct_ocl_arg_mem(enc, enc->be->error_flag);
    ct_ocl_arg_i32(enc, enc->node_index + 1);
}

void ct_ocl_arg_no_flag(ct_ocl_enc *enc) {
    ct_ocl_arg_mem(enc, NULL);
    ct_ocl_arg_i32(enc, 0);
}

/* The launch's global size, or a status when its sizes are out of the kernel's range. */
static ct_status launch(ct_ocl_backend *be, ct_ocl_kernel_id id, const size_t groups[3], const size_t local[3]) {
    size_t global[3], items = 1;
    for (int d = 0; d < 3; d++) {
        if (groups[d] == 0) return CT_OK;
        if (local[d] == 0 || local[d] > be->dev->max_work_item_sizes[d] || !ct_mul_size(items, local[d], &items) ||
            !ct_mul_size(groups[d], local[d], &global[d])) {
            return ct_ocl_fail(be, CT_INVALID_ARGUMENT, "%s: work-group (%zu, %zu, %zu) x groups (%zu, %zu, %zu) is "
                               "out of range", ct_ocl_kernel_table[id].name, local[0], local[1], local[2], groups[0],
                               groups[1], groups[2]);
        }
    }
    if (items > be->kernel_wg[id]) {
        return ct_ocl_fail(be, CT_INVALID_ARGUMENT, "%s: work-group of %zu items exceeds the kernel's maximum %zu",
                           ct_ocl_kernel_table[id].name, items, be->kernel_wg[id]);
    }
    return ct_ocl_trace_launch(be, id, global, local);
}

void ct_ocl_enc_dispatch(ct_ocl_enc *enc, const size_t groups[3], const size_t local[3]) {
    if (enc->st == CT_OK) enc->st = launch(enc->be, enc->kid, groups, local);
}

/* ---- the same, one call a step (test encoders) ---------------------------------------- */

ct_status ct_ocl_set_arg(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_uint index, size_t size, const void *value) {
    cl_kernel k;
    ct_status st = ct_ocl_kernel_get(be, id, &k);
    return st == CT_OK ? ct_ocl_trace_arg(be, id, index, size, value) : st;
}

ct_status ct_ocl_set_arg_tensor(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_uint index, const ct_tensor *t,
                                const char *role) {
    cl_mem mem;
    cl_ulong offset;
    ct_status st = ct_ocl_tensor_mem(be, t, role, &mem, &offset);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, index, mem);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, index + 1, offset);
    return st;
}

ct_status ct_ocl_set_arg_error_flag(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_uint index) {
    cl_int code = be->node_index + 1;
    be->flag_used = true;
    ct_status st = CT_OCL_SET_ARG(be, id, index, be->error_flag);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, index + 1, code);
    return st;
}

ct_status ct_ocl_dispatch(ct_ocl_backend *be, ct_ocl_kernel_id id, const size_t groups[3], const size_t local[3]) {
    cl_kernel k;
    ct_status st = ct_ocl_kernel_get(be, id, &k);
    return st == CT_OK ? launch(be, id, groups, local) : st;
}

/* ---- work memory ---------------------------------------------------------------------- */

ct_status ct_ocl_node_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes) {
    *bytes = 0;
    if (node->op == CT_OP_ARGSORT || node->op == CT_OP_TOP_K) return ct_ocl_argsort_work_bytes(enc, node, bytes);
    if (node->op == CT_OP_FLASH_ATTN_EXT) return ct_ocl_flash_attn_work_bytes(enc, node, bytes);
    if (node->op == CT_OP_MUL_MAT_ID) return ct_ocl_mul_mat_id_work_bytes(enc, node, bytes);
    return node->op == CT_OP_MUL_MAT ? ct_ocl_mul_mat_work_bytes(enc, node, bytes) : CT_OK;
}

ct_status ct_ocl_work_reserve(ct_ocl_backend *be, size_t bytes) {
    if (bytes == 0 || (be->work && be->work_size >= bytes)) return CT_OK;
    CT_ASSERT(be->trace.n_launches == 0); /* nothing recorded may name the old one */
    if (be->work) {
        /* kernels queued by earlier computes keep the cl_mem alive until they finish;
         * recorded command buffers naming it are told apart by the epoch */
        atomic_fetch_add(&ct_ocl_mem_epoch, 1);
        clReleaseMemObject(be->work);
    }
    be->work = NULL;
    be->work_size = 0;
    cl_int err;
    const cl_mem_flags flags = ct_ocl_device_mem_flags(be->dev);
    cl_mem m = CT_OCL_CREATE("clCreateBuffer", &err, clCreateBuffer(be->dev->context, flags, bytes, NULL, &err));
    if (err != CL_SUCCESS) {
        const bool oom = ct_ocl_is_oom(err) || err == CL_INVALID_BUFFER_SIZE;
        return ct_ocl_fail(be, oom ? CT_OUT_OF_MEMORY : CT_DEVICE_ERROR,
                           "clCreateBuffer of %zu bytes of work memory failed: %s (%d)", bytes,
                           ct_ocl_error_name(err), err);
    }
    be->work = m;
    be->work_size = bytes;
    return CT_OK;
}

cl_mem ct_ocl_enc_work(ct_ocl_enc *enc, size_t bytes) {
    CT_ASSERT(enc->be->work && enc->be->work_size >= bytes); /* ct_ocl_node_work_bytes asked for it */
    if (enc->st == CT_OK && (!enc->be->work || enc->be->work_size < bytes)) {
        ct_ocl_enc_fail(enc, CT_INVALID_ARGUMENT, "%zu bytes of work memory were not reserved before encoding", bytes);
    }
    enc->work_takes++;
    return enc->be->work;
}
