/* Generic wrappers over buffers and tensor data transfer. A multi-buffer (from
 * ct_context_alloc_tensors) has no memory of its own: its tensors point at its
 * children, and free, clear and usage reach every child. */
#include "backend_internal.h"

#include <string.h>

ct_buffer *ct_buffer_init(ct_buffer_type *buft, ct_buffer_i iface, void *context, size_t size) {
    if (!buft) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_buffer_init: buft is NULL");
    ct_buffer *buffer = ct_malloc(sizeof *buffer);
    if (!buffer) {
        return CT_FAIL_NULL(CT_OUT_OF_MEMORY, "ct_buffer_init: cannot allocate a buffer of type %s (%zu bytes)",
                            ct_buft_label(buft), size);
    }
    *buffer = (ct_buffer){
        .iface = iface,
        .buft = buft,
        .context = context,
        .size = size,
        .usage = CT_BUFFER_USAGE_ANY,
        .children = NULL,
        .n_children = 0,
        .host_memory = false,
    };
    return buffer;
}

void ct_buffer_free(ct_buffer *buffer) {
    if (!buffer) return;
    for (size_t i = 0; i < buffer->n_children; i++) ct_buffer_free(buffer->children[i]);
    ct_free(buffer->children);
    if (buffer->iface.free_buffer) buffer->iface.free_buffer(buffer);
    ct_free(buffer);
}

void *ct_buffer_base(const ct_buffer *buffer) {
    if (!buffer) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_buffer_base: buffer is NULL");
    if (buffer->size == 0 || !buffer->iface.get_base) return NULL;
    return buffer->iface.get_base((ct_buffer *)buffer);
}

size_t ct_buffer_size(const ct_buffer *buffer) {
    if (!buffer) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_size: buffer is NULL");
        return 0;
    }
    return buffer->size;
}

ct_buffer_type *ct_buffer_get_type(const ct_buffer *buffer) {
    if (!buffer) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_buffer_get_type: buffer is NULL");
    return buffer->buft;
}

bool ct_buffer_is_host(const ct_buffer *buffer) { return buffer && ct_buffer_type_is_host(buffer->buft); }

ct_status ct_buffer_clear(ct_buffer *buffer, uint8_t value) {
    if (!buffer) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_clear: buffer is NULL");
    for (size_t i = 0; i < buffer->n_children; i++) {
        ct_status st = ct_buffer_clear(buffer->children[i], value);
        if (st != CT_OK) return st;
    }
    if (buffer->n_children > 0 || buffer->size == 0) return CT_OK;
    if (!buffer->iface.clear) {
        return ct_fail(CT_UNSUPPORTED, "ct_buffer_clear: buffer type %s cannot clear", ct_buft_label(buffer->buft));
    }
    return buffer->iface.clear(buffer, value);
}

void ct_buffer_set_usage(ct_buffer *buffer, ct_buffer_usage usage) {
    if (!buffer) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_set_usage: buffer is NULL");
        return;
    }
    if ((unsigned)usage > (unsigned)CT_BUFFER_USAGE_COMPUTE) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_set_usage: usage %d is not a ct_buffer_usage", (int)usage);
        return;
    }
    buffer->usage = usage;
    for (size_t i = 0; i < buffer->n_children; i++) ct_buffer_set_usage(buffer->children[i], usage);
}

ct_buffer_usage ct_buffer_get_usage(const ct_buffer *buffer) {
    if (!buffer) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_get_usage: buffer is NULL");
        return CT_BUFFER_USAGE_ANY;
    }
    return buffer->usage;
}

ct_status ct_buffer_alloc_tensor(ct_buffer *buffer, ct_tensor *t, void *addr) {
    if (!buffer) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_alloc_tensor: buffer is NULL");
    if (!t) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_alloc_tensor: tensor is NULL");
    const char *name = ct_backend_tensor_name(t);
    if (t->view_src) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_alloc_tensor: tensor '%s' is a view of '%s'; use "
                       "ct_buffer_init_view", name, ct_backend_tensor_name(t->view_src));
    }
    if (t->buffer || t->data) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_alloc_tensor: tensor '%s' is already allocated (data %p)", name,
                       t->data);
    }
    if (buffer->n_children > 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_alloc_tensor: tensor '%s': the buffer is a multi-buffer of %zu "
                       "buffers; allocate in one of them", name, buffer->n_children);
    }
    char *base = ct_buffer_base(buffer);
    if (!base) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_alloc_tensor: tensor '%s': the buffer has no memory (size %zu)",
                       name, buffer->size);
    }
    size_t alloc_size;
    ct_status st = ct_buffer_type_alloc_size(buffer->buft, t, &alloc_size);
    if (st != CT_OK) return st;
    uintptr_t a = (uintptr_t)addr, b = (uintptr_t)base;
    if (a < b || alloc_size > buffer->size || a - b > buffer->size - alloc_size) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_alloc_tensor: tensor '%s' of %zu bytes at %p does not fit in "
                       "the buffer [%p, %p + %zu)", name, alloc_size, addr, (void *)base, (void *)base, buffer->size);
    }
    t->buffer = buffer;
    t->data = addr;
    if (buffer->iface.init_tensor) {
        st = buffer->iface.init_tensor(buffer, t);
        if (st != CT_OK) {
            t->buffer = NULL;
            t->data = NULL;
            return st;
        }
    }
    return CT_OK;
}

ct_status ct_buffer_init_view(ct_tensor *view) {
    if (!view) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_init_view: view is NULL");
    const char *name = ct_backend_tensor_name(view);
    ct_tensor *root = view->view_src;
    if (!root) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_init_view: tensor '%s' is not a view", name);
    if (!root->buffer || !root->data) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_init_view: view '%s': its view_src '%s' is not allocated", name,
                       ct_backend_tensor_name(root));
    }
    /* A view made after its root was allocated already names the root's buffer. */
    if (view->buffer && view->buffer != root->buffer) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_init_view: view '%s' is in another buffer than its view_src "
                       "'%s'", name, ct_backend_tensor_name(root));
    }
    size_t end, root_bytes = ct_nbytes(root), view_bytes = ct_nbytes(view);
    if (!ct_add_size(view->view_offs, view_bytes, &end) || end > root_bytes) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_init_view: view '%s' (offset %zu, %zu bytes) goes past the %zu "
                       "bytes of '%s'", name, view->view_offs, view_bytes, root_bytes, ct_backend_tensor_name(root));
    }
    void *old_data = view->data;
    ct_buffer *old_buffer = view->buffer;
    view->buffer = root->buffer;
    view->data = (char *)root->data + view->view_offs;
    if (root->buffer->iface.init_tensor) {
        ct_status st = root->buffer->iface.init_tensor(root->buffer, view);
        if (st != CT_OK) {
            view->buffer = old_buffer;
            view->data = old_data;
            return st;
        }
    }
    return CT_OK;
}

ct_status ct_check_transfer(const char *fn, const ct_tensor *t, bool have_data, size_t offset, size_t size,
                            ct_buffer **buf) {
    *buf = NULL;
    if (!t) return ct_fail(CT_INVALID_ARGUMENT, "%s: tensor is NULL", fn);
    if (size == 0) return CT_OK;
    if (!have_data) return ct_fail(CT_INVALID_ARGUMENT, "%s: data is NULL (size %zu)", fn, size);
    const char *name = ct_backend_tensor_name(t);
    ct_buffer *b = ct_tensor_data_buffer(t);
    if (!b) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: tensor '%s' is not in a buffer (%sbuffer == NULL)", fn, name,
                       t->view_src ? "view_src->" : "");
    }
    if (!t->data) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: tensor '%s' is not allocated (data == NULL)%s", fn, name,
                       t->view_src ? "; call ct_buffer_init_view" : "");
    }
    size_t end, nbytes = ct_nbytes(t);
    if (!ct_add_size(offset, size, &end)) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: tensor '%s': offset %zu + size %zu overflows", fn, name, offset, size);
    }
    if (end > nbytes) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: tensor '%s': offset %zu + size %zu > %zu bytes", fn, name, offset,
                       size, nbytes);
    }
    /* The tensor's own bytes must lie in its buffer, whatever its fields say. */
    uintptr_t base = (uintptr_t)ct_buffer_base(b), d = (uintptr_t)t->data;
    if (!base || d < base || nbytes > b->size || d - base > b->size - nbytes) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: tensor '%s' (%zu bytes at %p) is not inside its buffer (%zu bytes at "
                       "%p)", fn, name, nbytes, t->data, b->size, (void *)base);
    }
    *buf = b;
    return CT_OK;
}

ct_status ct_tensor_set(ct_tensor *t, const void *data, size_t offset, size_t size) {
    ct_buffer *b;
    ct_status st = ct_check_transfer("ct_tensor_set", t, data != NULL, offset, size, &b);
    if (st != CT_OK || !b) return st;
    if (!b->iface.set_tensor) {
        return ct_fail(CT_UNSUPPORTED, "ct_tensor_set: buffer type %s cannot write", ct_buft_label(b->buft));
    }
    return b->iface.set_tensor(b, t, data, offset, size);
}

ct_status ct_tensor_get(const ct_tensor *t, void *data, size_t offset, size_t size) {
    ct_buffer *b;
    ct_status st = ct_check_transfer("ct_tensor_get", t, data != NULL, offset, size, &b);
    if (st != CT_OK || !b) return st;
    if (!b->iface.get_tensor) {
        return ct_fail(CT_UNSUPPORTED, "ct_tensor_get: buffer type %s cannot read", ct_buft_label(b->buft));
    }
    return b->iface.get_tensor(b, t, data, offset, size);
}

ct_status ct_tensor_memset(ct_tensor *t, uint8_t value, size_t offset, size_t size) {
    ct_buffer *b;
    ct_status st = ct_check_transfer("ct_tensor_memset", t, true, offset, size, &b);
    if (st != CT_OK || !b) return st;
    if (!b->iface.memset_tensor) {
        return ct_fail(CT_UNSUPPORTED, "ct_tensor_memset: buffer type %s cannot memset", ct_buft_label(b->buft));
    }
    return b->iface.memset_tensor(b, t, value, offset, size);
}

/* Whether b's tensor addresses are where the bytes lie in this process's memory. */
static bool host_addressed(const ct_buffer *b) { return ct_buffer_is_host(b) || b->host_memory; }

bool ct_buffers_share_addresses(const ct_buffer *a, const ct_buffer *b) {
    return a == b || (a && b && host_addressed(a) && host_addressed(b));
}

ct_status ct_tensor_copy(const ct_tensor *src, ct_tensor *dst) {
    if (!src || !dst) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_tensor_copy: %s is NULL", !src ? "src" : "dst");
    }
    const char *sn = ct_backend_tensor_name(src), *dn = ct_backend_tensor_name(dst);
    if (src->type != dst->type || !ct_are_same_shape(src, dst) || !ct_is_contiguous(src) || !ct_is_contiguous(dst)) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_tensor_copy: src '%s' (%s [%lld,%lld,%lld,%lld]%s) and dst '%s' "
                       "(%s [%lld,%lld,%lld,%lld]%s) must be contiguous with the same type and shape", sn,
                       ct_type_name(src->type), (long long)src->ne[0], (long long)src->ne[1], (long long)src->ne[2],
                       (long long)src->ne[3], ct_is_contiguous(src) ? "" : ", not contiguous", dn,
                       ct_type_name(dst->type), (long long)dst->ne[0], (long long)dst->ne[1], (long long)dst->ne[2],
                       (long long)dst->ne[3], ct_is_contiguous(dst) ? "" : ", not contiguous");
    }
    size_t n = ct_nbytes(src);
    ct_buffer *sb, *db;
    ct_status st = ct_check_transfer("ct_tensor_copy", src, true, 0, n, &sb);
    if (st == CT_OK) st = ct_check_transfer("ct_tensor_copy", dst, true, 0, n, &db);
    if (st != CT_OK || !sb) return st;
    const bool same_space = ct_buffers_share_addresses(sb, db);
    uintptr_t s0 = (uintptr_t)src->data, d0 = (uintptr_t)dst->data;
    if (same_space && s0 == d0) return CT_OK;
    if (same_space && (s0 < d0 ? d0 - s0 < n : s0 - d0 < n)) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_tensor_copy: src '%s' (%p, buffer %s) and dst '%s' (%p, buffer %s) "
                       "overlap (%zu bytes, %zu apart)", sn, src->data, ct_buft_label(sb->buft), dn, dst->data,
                       ct_buft_label(db->buft), n, (size_t)(s0 < d0 ? d0 - s0 : s0 - d0));
    }
    /* the destination's buffer copies device to device (or host to device) where it can */
    if (db->iface.cpy_tensor && db->iface.cpy_tensor(db, src, dst)) return CT_OK;
    if (ct_buffer_is_host(sb)) return ct_tensor_set(dst, src->data, 0, n);
    if (ct_buffer_is_host(db)) return ct_tensor_get(src, dst->data, 0, n);
    /* otherwise through host memory */
    void *tmp = ct_malloc(n);
    if (!tmp) return ct_fail(CT_OUT_OF_MEMORY, "ct_tensor_copy: no host memory to stage %zu bytes of '%s'", n, sn);
    st = ct_tensor_get(src, tmp, 0, n);
    if (st == CT_OK) st = ct_tensor_set(dst, tmp, 0, n);
    ct_free(tmp);
    return st;
}
