/* OpenCL buffer types. "OpenCL<n>" buffers are device memory (one cl_mem,
 * CL_MEM_READ_WRITE) behind a placeholder address range, reached through the
 * device's transfer queue. "OpenCL<n>_Mapped" buffers wrap caller memory
 * (CL_MEM_USE_HOST_PTR) in overlapping views of at most max_size bytes, so any
 * tensor up to max_tensor_size lies wholly inside one view. */
#include "opencl_internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Tensor addresses in device buffers are offsets from this; it is never
 * dereferenced, only compared and subtracted. Aligned beyond any alignment. */
#define PLACEHOLDER_BASE ((char *)(uintptr_t)0x100000)

static ct_ocl_device *buft_device(const ct_buffer_type *buft) { return (ct_ocl_device *)buft->context; }

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* The context with room for n views after it. */
static ct_ocl_buffer *buffer_ctx_new(ct_ocl_device *dev, size_t n_views) {
    size_t bytes;
    if (!ct_mul_size(n_views, sizeof(ct_ocl_view), &bytes) || !ct_add_size(bytes, sizeof(ct_ocl_buffer), &bytes)) {
        return NULL;
    }
    ct_ocl_buffer *b = ct_calloc(1, bytes);
    if (!b) return NULL;
    b->dev = dev;
    b->views = (ct_ocl_view *)(b + 1);
    return b;
}

static void buffer_ctx_free(ct_ocl_buffer *b) {
    atomic_fetch_add(&ct_ocl_mem_epoch, 1); /* before any handle can be reused */
    for (size_t i = 0; i < b->n_views; i++) {
        if (b->views[i].mem) clReleaseMemObject(b->views[i].mem);
    }
    if (!b->mapped) atomic_fetch_sub(&b->dev->allocated, b->size);
    if (b->owned) ct_free(b->base);
    ct_free(b);
}

const ct_ocl_view *ct_ocl_buffer_find_view(const ct_ocl_buffer *buf, const void *data, size_t nbytes) {
    uintptr_t d = (uintptr_t)data;
    for (size_t i = 0; i < buf->n_views; i++) {
        const ct_ocl_view *v = &buf->views[i];
        uintptr_t s = (uintptr_t)v->data;
        if (d >= s && nbytes <= v->size && d - s <= v->size - nbytes) return v;
    }
    return NULL;
}

/* The view holding byte p (the first, when views overlap), or NULL. */
static const ct_ocl_view *view_at(const ct_ocl_buffer *buf, uintptr_t p) {
    for (size_t i = 0; i < buf->n_views; i++) {
        uintptr_t s = (uintptr_t)buf->views[i].data;
        if (p >= s && p - s < buf->views[i].size) return &buf->views[i];
    }
    return NULL;
}

static ct_status cl_error(const char *fn, const ct_buffer *buffer, const char *call, cl_int err) {
    return ct_fail(ct_ocl_is_oom(err) ? CT_OUT_OF_MEMORY : CT_DEVICE_ERROR,
                   "%s: buffer of type %s (%zu bytes): %s failed: %s (%d)", fn,
                   buffer->buft->iface.get_name(buffer->buft), buffer->size, call, ct_ocl_error_name(err), err);
}

/* Writes, or fills with *value when data is NULL, [p, p + size) of the buffer's
 * address range, on queue q (the device's transfer queue, or a backend's for an async
 * write: then not blocking, and *n_queued counts the commands queued). Every view
 * overlapping the range gets its part, so that views over the same caller bytes never
 * disagree. A fill always waits. */
static ct_status write_range_on(const char *fn, ct_buffer *buffer, cl_command_queue q, bool blocking, uintptr_t p,
                                const void *data, const uint8_t *value, size_t size, unsigned *n_queued) {
    ct_ocl_buffer *b = buffer->context;
    uintptr_t end = p + size;
    for (size_t i = 0; i < b->n_views; i++) {
        const ct_ocl_view *v = &b->views[i];
        uintptr_t vs = (uintptr_t)v->data, ve = vs + v->size;
        uintptr_t lo = p > vs ? p : vs, hi = end < ve ? end : ve;
        if (lo >= hi) continue;
        cl_int err;
        if (data) {
            err = clEnqueueWriteBuffer(q, v->mem, blocking ? CL_TRUE : CL_FALSE, lo - vs, hi - lo,
                                       (const char *)data + (lo - p), 0, NULL, NULL);
            if (err != CL_SUCCESS) return cl_error(fn, buffer, "clEnqueueWriteBuffer", err);
            if (n_queued) ++*n_queued;
        } else {
            cl_event ev = NULL;
            err = clEnqueueFillBuffer(q, v->mem, value, 1, lo - vs, hi - lo, 0, NULL, &ev);
            if (err == CL_SUCCESS) {
                err = clWaitForEvents(1, &ev);
                clReleaseEvent(ev);
            }
            if (err != CL_SUCCESS) return cl_error(fn, buffer, "clEnqueueFillBuffer", err);
        }
    }
    return CT_OK;
}

static ct_status write_range(const char *fn, ct_buffer *buffer, uintptr_t p, const void *data, const uint8_t *value,
                             size_t size) {
    ct_ocl_buffer *b = buffer->context;
    return write_range_on(fn, buffer, b->dev->queue, true, p, data, value, size, NULL);
}

/* Reads [p, p + size), each byte from the first view holding it, on queue q (as
 * write_range_on). */
static ct_status read_range_on(const char *fn, ct_buffer *buffer, cl_command_queue q, bool blocking, uintptr_t p,
                               void *data, size_t size, unsigned *n_queued) {
    ct_ocl_buffer *b = buffer->context;
    char *out = data;
    while (size > 0) {
        const ct_ocl_view *v = view_at(b, p);
        if (!v) {
            return ct_fail(CT_INVALID_ARGUMENT, "%s: address %p is in no view of buffer %s", fn, (void *)p,
                           buffer->buft->iface.get_name(buffer->buft));
        }
        uintptr_t vs = (uintptr_t)v->data;
        size_t n = v->size - (p - vs);
        if (n > size) n = size;
        cl_int err = clEnqueueReadBuffer(q, v->mem, blocking ? CL_TRUE : CL_FALSE, p - vs, n, out, 0, NULL, NULL);
        if (err != CL_SUCCESS) return cl_error(fn, buffer, "clEnqueueReadBuffer", err);
        if (n_queued) ++*n_queued;
        out += n;
        p += n;
        size -= n;
    }
    return CT_OK;
}

static ct_status read_range(const char *fn, ct_buffer *buffer, uintptr_t p, void *data, size_t size) {
    ct_ocl_buffer *b = buffer->context;
    return read_range_on(fn, buffer, b->dev->queue, true, p, data, size, NULL);
}

ct_status ct_ocl_buffer_write_async(const char *fn, ct_buffer *buffer, cl_command_queue q, const ct_tensor *t,
                                    const void *data, size_t offset, size_t size, unsigned *n_queued) {
    return write_range_on(fn, buffer, q, false, (uintptr_t)t->data + offset, data, NULL, size, n_queued);
}

ct_status ct_ocl_buffer_read_async(const char *fn, ct_buffer *buffer, cl_command_queue q, const ct_tensor *t,
                                   void *data, size_t offset, size_t size, unsigned *n_queued) {
    return read_range_on(fn, buffer, q, false, (uintptr_t)t->data + offset, data, size, n_queued);
}

/* ---- buffer interface ---------------------------------------------------------- */

static void buffer_free(ct_buffer *buffer) {
    ct_ocl_buffer *b = buffer->context;
    ct_ocl_device *dev = b->dev;
    buffer_ctx_free(b);
    ct_ocl_device_release(dev);
}

static void *buffer_get_base(ct_buffer *buffer) { return ((ct_ocl_buffer *)buffer->context)->base; }

static ct_status buffer_memset_tensor(ct_buffer *buffer, ct_tensor *t, uint8_t value, size_t offset, size_t size) {
    return write_range("ct_tensor_memset", buffer, (uintptr_t)t->data + offset, NULL, &value, size);
}

static ct_status buffer_set_tensor(ct_buffer *buffer, ct_tensor *t, const void *data, size_t offset, size_t size) {
    return write_range("ct_tensor_set", buffer, (uintptr_t)t->data + offset, data, NULL, size);
}

static ct_status buffer_get_tensor(ct_buffer *buffer, const ct_tensor *t, void *data, size_t offset, size_t size) {
    return read_range("ct_tensor_get", buffer, (uintptr_t)t->data + offset, data, size);
}

/* Device to device within one OpenCL device, or host to device; else false. */
static bool buffer_cpy_tensor(ct_buffer *buffer, const ct_tensor *src, ct_tensor *dst) {
    ct_ocl_buffer *b = buffer->context;
    const ct_buffer *sb = ct_tensor_data_buffer(src);
    size_t n = ct_nbytes(src);
    if (!sb) return false;
    if (sb->buft->iface.is_host && sb->buft->iface.is_host(sb->buft)) {
        return write_range("ct_tensor_copy", buffer, (uintptr_t)dst->data, src->data, NULL, n) == CT_OK;
    }
    if (!ct_ocl_is_own_buft(b->dev, sb->buft) || b->mapped) return false;
    const ct_ocl_view *sv = ct_ocl_buffer_find_view(sb->context, src->data, n);
    const ct_ocl_view *dv = ct_ocl_buffer_find_view(b, dst->data, n);
    if (!sv || !dv) return false;
    cl_event ev = NULL;
    cl_int err = clEnqueueCopyBuffer(b->dev->queue, sv->mem, dv->mem, (size_t)((char *)src->data - sv->data),
                                     (size_t)((char *)dst->data - dv->data), n, 0, NULL, &ev);
    if (err == CL_SUCCESS) {
        err = clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
    }
    if (err != CL_SUCCESS) {
        cl_error("ct_tensor_copy", buffer, "clEnqueueCopyBuffer", err);
        return false;
    }
    return true;
}

static ct_status buffer_clear(ct_buffer *buffer, uint8_t value) {
    ct_ocl_buffer *b = buffer->context;
    return write_range("ct_buffer_clear", buffer, (uintptr_t)b->base, NULL, &value, b->size);
}

static const ct_buffer_i buffer_iface = {
    .free_buffer = buffer_free,
    .get_base = buffer_get_base,
    .init_tensor = NULL,
    .memset_tensor = buffer_memset_tensor,
    .set_tensor = buffer_set_tensor,
    .get_tensor = buffer_get_tensor,
    .cpy_tensor = buffer_cpy_tensor,
    .clear = buffer_clear,
    .reset = NULL,
};

/* ---- device buffers ------------------------------------------------------------ */

static const char *buft_get_name(const ct_buffer_type *buft) { return buft_device(buft)->name; }

static size_t buft_get_alignment(const ct_buffer_type *buft) { return buft_device(buft)->alignment; }

static size_t buft_get_max_size(const ct_buffer_type *buft) { return buft_device(buft)->max_size; }

static bool buft_is_host(const ct_buffer_type *buft) {
    CT_UNUSED(buft);
    return false;
}

/* Wraps a context in a ct_buffer, taking a device reference; frees it on failure. */
static ct_status buffer_finish(ct_buffer_type *buft, ct_ocl_buffer *b, size_t size, ct_buffer **buffer) {
    ct_ocl_device_retain(b->dev);
    *buffer = ct_buffer_init(buft, buffer_iface, b, size);
    if (!*buffer) {
        ct_ocl_device *dev = b->dev; /* buffer_ctx_free frees b */
        buffer_ctx_free(b);
        ct_ocl_device_release(dev);
        return ct_last_status();
    }
    return CT_OK;
}

cl_mem_flags ct_ocl_device_mem_flags(const ct_ocl_device *dev) {
    /* A CPU device's memory is host memory, so asking for it as such costs nothing, and
     * it makes PoCL allocate at creation, where a failure is an error code: otherwise it
     * allocates at the buffer's first command, and a failure there asserts inside the
     * driver (pocl_create_migration_commands), whichever command it is (clear, write,
     * read, kernel). tests/test_opencl_hostptr.c reproduces it. */
    return CL_MEM_READ_WRITE | (dev->type == CT_DEVICE_TYPE_CPU ? CL_MEM_ALLOC_HOST_PTR : 0);
}

static ct_status buft_alloc_buffer(ct_buffer_type *buft, size_t size, ct_buffer **buffer) {
    ct_ocl_device *dev = buft_device(buft);
    ct_ocl_buffer *b = buffer_ctx_new(dev, 1);
    if (!b) return ct_fail(CT_OUT_OF_MEMORY, "ct_buffer_type_alloc: %s: out of host memory", dev->name);
    cl_int err;
    cl_mem mem = CT_OCL_CREATE("clCreateBuffer", &err,
                               clCreateBuffer(dev->context, ct_ocl_device_mem_flags(dev), size, NULL, &err));
    if (err != CL_SUCCESS) {
        ct_free(b);
        return ct_fail(ct_ocl_is_oom(err) || err == CL_INVALID_BUFFER_SIZE ? CT_OUT_OF_MEMORY : CT_DEVICE_ERROR,
                       "ct_buffer_type_alloc: %s: clCreateBuffer of %zu bytes failed: %s (%d)", dev->name, size,
                       ct_ocl_error_name(err), err);
    }
    b->base = PLACEHOLDER_BASE;
    b->size = size;
    b->views[0] = (ct_ocl_view){PLACEHOLDER_BASE, size, mem};
    b->n_views = 1;
    atomic_fetch_add(&dev->allocated, size);
    return buffer_finish(buft, b, size, buffer);
}

/* ---- mapped buffers ------------------------------------------------------------ */

static const char *buft_mapped_get_name(const ct_buffer_type *buft) { return buft_device(buft)->mapped_name; }

/* The largest view over caller memory: the device's limit rounded down to a page, since
 * views start on pages (make_views). Also what the mapped type advertises: it allocates
 * page-aligned memory, so every size up to this is one view. */
static size_t mapped_max(const ct_ocl_device *dev) { return dev->max_size / page_size() * page_size(); }

static size_t buft_mapped_get_max_size(const ct_buffer_type *buft) { return mapped_max(buft_device(buft)); }

/* Views over [ptr, ptr + size). Each starts on a page boundary (but not before
 * ptr) and none reaches past ptr + size: a driver may copy a USE_HOST_PTR
 * buffer back whole, and the bytes around the caller's are not ours. So the first
 * starts at ptr, at any alignment: encoders judge alignment from the address
 * (ct_ocl_addr_bits). Views step by whole pages, so there is at most one per page. */
static ct_status make_views(const char *fn, ct_ocl_device *dev, char *ptr, size_t size, size_t max_tensor_size,
                            ct_ocl_buffer **out) {
    *out = NULL;
    const size_t page = page_size();
    const size_t max = mapped_max(dev);
    size_t offs = (uintptr_t)ptr % page, span, span_aligned, step = 0, n_views = 1;
    if (!ct_add_size(size, offs, &span) || !ct_align_up(span, page, &span_aligned)) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: %s: size %zu overflows when page-aligned", fn, dev->name, size);
    }
    if (span_aligned > max) {
        size_t pages = max_tensor_size / page + (max_tensor_size % page != 0) + 1, ovlp;
        if (!ct_mul_size(pages, page, &ovlp) || ovlp >= max) {
            return ct_fail(CT_INVALID_ARGUMENT, "%s: %s: max_tensor_size %zu does not fit in views of max_size %zu "
                           "bytes (overlap %zu pages)", fn, dev->name, max_tensor_size, max, pages);
        }
        step = max - ovlp;
        n_views = span / step + (span % step != 0);
    }
    ct_ocl_buffer *b = buffer_ctx_new(dev, n_views);
    if (!b) return ct_fail(CT_OUT_OF_MEMORY, "%s: %s: out of host memory for %zu views", fn, dev->name, n_views);
    b->mapped = true;
    b->base = ptr;
    b->size = size;
    char *start = ptr - offs;
    for (size_t k = 0; k < n_views; k++) {
        size_t i = k * step;
        char *vs = start + i;
        char *ve = (n_views == 1 || i + max > span) ? start + span_aligned : vs + max;
        if (vs < ptr) vs = ptr;
        if (ve > ptr + size) ve = ptr + size;
        cl_int err;
        cl_mem mem = CT_OCL_CREATE("clCreateBuffer", &err,
                                    clCreateBuffer(dev->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, (size_t)(ve - vs), vs,
                                    &err));
        if (err != CL_SUCCESS) {
            ct_status st = ct_fail(ct_ocl_is_oom(err) ? CT_OUT_OF_MEMORY : CT_DEVICE_ERROR,
                                   "%s: %s: clCreateBuffer(CL_MEM_USE_HOST_PTR) of view %zu/%zu "
                                   "(%zu bytes at %p) failed: %s (%d)", fn, dev->name, k, n_views, (size_t)(ve - vs),
                                   (void *)vs, ct_ocl_error_name(err), err);
            buffer_ctx_free(b);
            return st;
        }
        b->views[b->n_views++] = (ct_ocl_view){vs, (size_t)(ve - vs), mem};
    }
    *out = b;
    return CT_OK;
}

/* Host memory wrapped like caller memory, owned by the buffer. */
static ct_status buft_mapped_alloc_buffer(ct_buffer_type *buft, size_t size, ct_buffer **buffer) {
    ct_ocl_device *dev = buft_device(buft);
    size_t aligned;
    if (!ct_align_up(size, page_size(), &aligned)) {
        return ct_fail(CT_OUT_OF_MEMORY, "ct_buffer_type_alloc: %s: size %zu overflows", dev->mapped_name, size);
    }
    char *mem = ct_aligned_alloc(page_size(), aligned);
    if (!mem) {
        return ct_fail(CT_OUT_OF_MEMORY, "ct_buffer_type_alloc: %s: cannot allocate %zu host bytes", dev->mapped_name,
                       aligned);
    }
    ct_ocl_buffer *b;
    ct_status st = make_views("ct_buffer_type_alloc", dev, mem, size, size, &b);
    if (st != CT_OK) {
        ct_free(mem);
        return st;
    }
    b->owned = true;
    return buffer_finish(buft, b, size, buffer);
}

ct_status ct_ocl_buffer_from_host_ptr(ct_device *device, void *ptr, size_t size, size_t max_tensor_size,
                                      ct_buffer **buffer) {
    ct_ocl_device *dev = ct_ocl_device_of(device);
    ct_ocl_buffer *b;
    ct_status st = make_views("ct_device_buffer_from_host_ptr", dev, ptr, size, max_tensor_size, &b);
    if (st != CT_OK) return st;
    ct_log(CT_LOG_DEBUG, "opencl: %s: wrapped %zu bytes at %p in %zu views", dev->name, size, ptr, b->n_views);
    return buffer_finish(&dev->buft_mapped, b, size, buffer);
}

bool ct_ocl_is_own_buft(const ct_ocl_device *dev, const ct_buffer_type *buft) {
    return buft == &dev->buft || buft == &dev->buft_mapped;
}

void ct_ocl_buffer_types_init(ct_ocl_device *dev) {
    snprintf(dev->mapped_name, sizeof dev->mapped_name, "%s_Mapped", dev->name);
    dev->buft = (ct_buffer_type){
        .iface = {
            .get_name = buft_get_name,
            .alloc_buffer = buft_alloc_buffer,
            .get_alignment = buft_get_alignment,
            .get_max_size = buft_get_max_size,
            .get_alloc_size = NULL,
            .is_host = buft_is_host,
        },
        .device = &dev->dev,
        .context = dev,
    };
    dev->buft_mapped = dev->buft;
    dev->buft_mapped.iface.get_name = buft_mapped_get_name;
    dev->buft_mapped.iface.alloc_buffer = buft_mapped_alloc_buffer;
    dev->buft_mapped.iface.get_max_size = buft_mapped_get_max_size;
}
