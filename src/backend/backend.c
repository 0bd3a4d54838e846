/* Generic wrappers over backend objects. ct_backend_graph_compute checks the
 * whole graph before the backend sees it, so a refused graph computes nothing. */
#include "backend_internal.h"

#include <stdio.h>

void ct_backend_free(ct_backend *backend) {
    if (backend) backend->iface.free(backend);
}

const char *ct_backend_name(const ct_backend *backend) {
    if (!backend) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_name: backend is NULL");
    return backend->iface.get_name(backend);
}

ct_device *ct_backend_get_device(const ct_backend *backend) {
    if (!backend) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_get_device: backend is NULL");
    return backend->device;
}

ct_buffer_type *ct_backend_buffer_type(const ct_backend *backend) {
    if (!backend) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_buffer_type: backend is NULL");
    return ct_device_buffer_type(backend->device);
}

bool ct_backend_supports_op(const ct_backend *backend, const ct_tensor *op) {
    return backend && ct_device_supports_op(backend->device, op);
}

ct_status ct_backend_synchronize(ct_backend *backend) {
    if (!backend) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_synchronize: backend is NULL");
    return backend->iface.synchronize ? backend->iface.synchronize(backend) : CT_OK;
}

/* The checks of ct_tensor_set/get, and the device must use the tensor's buffer: an
 * async transfer runs on the backend's stream, which reaches only its device's memory. */
static ct_status check_async(const char *fn, const ct_backend *backend, const ct_tensor *t, bool have_data,
                             size_t offset, size_t size, ct_buffer **buf) {
    *buf = NULL;
    if (!backend) return ct_fail(CT_INVALID_ARGUMENT, "%s: backend is NULL", fn);
    ct_status st = ct_check_transfer(fn, t, have_data, offset, size, buf);
    if (st != CT_OK || !*buf) return st;
    const ct_device *dev = backend->device;
    if (!ct_device_supports_buft(dev, (*buf)->buft)) {
        ct_fail(CT_UNSUPPORTED, "%s: tensor '%s' is in a buffer of type %s, which device %s cannot use", fn,
                ct_backend_tensor_name(t), ct_buft_label((*buf)->buft), dev->iface.get_name(dev));
        *buf = NULL;
        return CT_UNSUPPORTED;
    }
    return CT_OK;
}

/* Without an async entry: the backend's pending work first (in order), then the
 * buffer's blocking transfer, as ggml_backend_tensor_set_async falls back. */
ct_status ct_backend_tensor_set_async(ct_backend *backend, ct_tensor *t, const void *data, size_t offset,
                                      size_t size) {
    static const char fn[] = "ct_backend_tensor_set_async";
    ct_buffer *b;
    ct_status st = check_async(fn, backend, t, data != NULL, offset, size, &b);
    if (st != CT_OK || !b) return st;
    if (backend->iface.set_tensor_async) return backend->iface.set_tensor_async(backend, t, data, offset, size);
    if (!b->iface.set_tensor) {
        return ct_fail(CT_UNSUPPORTED, "%s: buffer type %s cannot write", fn, ct_buft_label(b->buft));
    }
    if (backend->iface.synchronize && (st = backend->iface.synchronize(backend)) != CT_OK) return st;
    return b->iface.set_tensor(b, t, data, offset, size);
}

ct_status ct_backend_tensor_get_async(ct_backend *backend, const ct_tensor *t, void *data, size_t offset,
                                      size_t size) {
    static const char fn[] = "ct_backend_tensor_get_async";
    ct_buffer *b;
    ct_status st = check_async(fn, backend, t, data != NULL, offset, size, &b);
    if (st != CT_OK || !b) return st;
    if (backend->iface.get_tensor_async) return backend->iface.get_tensor_async(backend, t, data, offset, size);
    if (!b->iface.get_tensor) {
        return ct_fail(CT_UNSUPPORTED, "%s: buffer type %s cannot read", fn, ct_buft_label(b->buft));
    }
    if (backend->iface.synchronize && (st = backend->iface.synchronize(backend)) != CT_OK) return st;
    return b->iface.get_tensor(b, t, data, offset, size);
}

void ct_backend_set_abort_callback(ct_backend *backend, ct_abort_callback callback, void *user_data) {
    if (!backend) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_backend_set_abort_callback: backend is NULL");
        return;
    }
    if (backend->iface.set_abort_callback) backend->iface.set_abort_callback(backend, callback, user_data);
}

/* "node 'name' (OP)", or "node #i (OP)" for an unnamed node. */
static void node_label(char *out, size_t n, const ct_tensor *node, int i) {
    if (node->name[0]) {
        snprintf(out, n, "node '%s' (%s)", node->name, ct_op_name(node->op));
    } else {
        snprintf(out, n, "node #%d (%s)", i, ct_op_name(node->op));
    }
}

/* A tensor the node reads or writes must sit in a buffer the device can use.
 * Empty tensors are never touched, so they may stay unallocated. src is the
 * source's index, -1 for the result; the labels are formatted only for a
 * message, as this runs for every operand of every node of every compute. */
static ct_status check_tensor(const ct_device *dev, const ct_tensor *t, int src, const ct_tensor *node, int i) {
    if (ct_is_empty(t)) return CT_OK;
    ct_buffer *buf = ct_tensor_data_buffer(t);
    const bool allocated = buf && t->data;
    if (allocated && ct_device_supports_buft(dev, buf->buft)) return CT_OK;
    char label[CT_MAX_NAME + 48], role[16];
    node_label(label, sizeof label, node, i);
    if (src < 0) snprintf(role, sizeof role, "result");
    else snprintf(role, sizeof role, "src[%d]", src);
    if (!allocated) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_graph_compute: %s: %s '%s' is not allocated in a buffer%s",
                       label, role, ct_backend_tensor_name(t),
                       buf && t->view_src ? " (call ct_buffer_init_view for views)" : "");
    }
    return ct_fail(CT_UNSUPPORTED, "ct_backend_graph_compute: %s: %s '%s' is in a buffer of type %s, which device "
                   "%s cannot use", label, role, ct_backend_tensor_name(t), ct_buft_label(buf->buft),
                   dev->iface.get_name(dev));
}

ct_status ct_backend_graph_compute(ct_backend *backend, ct_graph *graph) {
    if (!backend) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_graph_compute: backend is NULL");
    if (!graph) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_graph_compute: graph is NULL");
    const ct_device *dev = backend->device;
    int n = ct_graph_n_nodes(graph);
    for (int i = 0; i < n; i++) {
        const ct_tensor *node = ct_graph_node(graph, i);
        if (!node) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_graph_compute: node #%d is NULL", i);
        if (!ct_device_supports_op(dev, node)) {
            char label[CT_MAX_NAME + 48];
            node_label(label, sizeof label, node, i);
            return ct_fail(CT_UNSUPPORTED, "ct_backend_graph_compute: %s is not supported by device %s (types %s <- "
                           "%s, %s)", label, dev->iface.get_name(dev), ct_type_name(node->type),
                           node->src[0] ? ct_type_name(node->src[0]->type) : "-",
                           node->src[1] ? ct_type_name(node->src[1]->type) : "-");
        }
        ct_status st = check_tensor(dev, node, -1, node, i);
        for (int s = 0; st == CT_OK && s < CT_MAX_SRC; s++) {
            if (node->src[s]) st = check_tensor(dev, node->src[s], s, node, i);
        }
        if (st != CT_OK) return st;
    }
    return backend->iface.graph_compute(backend, graph);
}
