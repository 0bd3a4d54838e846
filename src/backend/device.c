/* Generic wrappers over devices and buffer types: argument checks, defaults for
 * the optional vtable entries, then the call. */
#include "backend_internal.h"

#include <string.h>

/* ---- devices --------------------------------------------------------------- */

const char *ct_device_name(const ct_device *dev) {
    if (!dev) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_name: dev is NULL");
    return dev->iface.get_name(dev);
}

const char *ct_device_description(const ct_device *dev) {
    if (!dev) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_description: dev is NULL");
    return dev->iface.get_description(dev);
}

ct_device_type ct_device_get_type(const ct_device *dev) {
    if (!dev) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_device_get_type: dev is NULL");
        return CT_DEVICE_TYPE_CPU;
    }
    return dev->iface.get_type(dev);
}

ct_status ct_device_memory(const ct_device *dev, size_t *free_bytes, size_t *total_bytes) {
    if (free_bytes) *free_bytes = 0;
    if (total_bytes) *total_bytes = 0;
    if (!dev) return ct_fail(CT_INVALID_ARGUMENT, "ct_device_memory: dev is NULL");
    size_t f = 0, t = 0;
    ct_status st = dev->iface.get_memory(dev, &f, &t);
    if (st != CT_OK) return st;
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
    return CT_OK;
}

ct_status ct_device_get_props(const ct_device *dev, ct_device_props *props) {
    if (!props) return ct_fail(CT_INVALID_ARGUMENT, "ct_device_get_props: props is NULL");
    memset(props, 0, sizeof *props);
    if (!dev) return ct_fail(CT_INVALID_ARGUMENT, "ct_device_get_props: dev is NULL");
    if (dev->iface.get_props) {
        dev->iface.get_props(dev, props);
        return CT_OK;
    }
    props->name = dev->iface.get_name(dev);
    props->description = dev->iface.get_description(dev);
    props->type = dev->iface.get_type(dev);
    props->caps.buffer_from_host_ptr = dev->iface.buffer_from_host_ptr != NULL;
    props->caps.host_buffer = dev->iface.get_host_buffer_type != NULL;
    return dev->iface.get_memory(dev, &props->memory_free, &props->memory_total);
}

ct_backend_reg *ct_device_reg(const ct_device *dev) {
    if (!dev) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_reg: dev is NULL");
    return dev->reg;
}

ct_buffer_type *ct_device_buffer_type(const ct_device *dev) {
    if (!dev) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_buffer_type: dev is NULL");
    return dev->iface.get_buffer_type(dev);
}

ct_buffer_type *ct_device_host_buffer_type(const ct_device *dev) {
    if (!dev) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_host_buffer_type: dev is NULL");
    return dev->iface.get_host_buffer_type ? dev->iface.get_host_buffer_type(dev) : NULL;
}

ct_status ct_device_buffer_from_host_ptr(ct_device *dev, void *ptr, size_t size, size_t max_tensor_size,
                                         ct_buffer **buffer) {
    if (!buffer) return ct_fail(CT_INVALID_ARGUMENT, "ct_device_buffer_from_host_ptr: buffer is NULL");
    *buffer = NULL;
    if (!dev) return ct_fail(CT_INVALID_ARGUMENT, "ct_device_buffer_from_host_ptr: dev is NULL");
    if (!dev->iface.buffer_from_host_ptr) {
        return ct_fail(CT_UNSUPPORTED, "ct_device_buffer_from_host_ptr: device %s cannot wrap host memory",
                       dev->iface.get_name(dev));
    }
    if (!ptr && size > 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_device_buffer_from_host_ptr: ptr is NULL but size is %zu", size);
    }
    if (size == 0) return ct_buffer_type_alloc(dev->iface.get_buffer_type(dev), 0, buffer);
    size_t end;
    if (!ct_add_size((size_t)(uintptr_t)ptr, size, &end)) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_device_buffer_from_host_ptr: ptr %p + size %zu overflows", ptr, size);
    }
    ct_status st = dev->iface.buffer_from_host_ptr(dev, ptr, size, max_tensor_size, buffer);
    /* its tensors' addresses are ptr's: ct_tensor_copy then sees overlap with any other
     * buffer over the same memory */
    if (st == CT_OK && *buffer && ct_buffer_base(*buffer) == ptr) (*buffer)->host_memory = true;
    return st;
}

bool ct_device_supports_op(const ct_device *dev, const ct_tensor *op) {
    if (!dev || !op) return false;
    if ((unsigned)op->op >= (unsigned)CT_OP_COUNT) return false;
    if (ct_op_is_view(op->op)) return true; /* nothing to compute: every device holds one */
    return dev->iface.supports_op(dev, op);
}

bool ct_device_supports_buft(const ct_device *dev, const ct_buffer_type *buft) {
    if (!dev || !buft) return false;
    return dev->iface.supports_buft(dev, buft);
}

ct_status ct_device_init_backend(ct_device *dev, const char *params, ct_backend **backend) {
    if (!backend) return ct_fail(CT_INVALID_ARGUMENT, "ct_device_init_backend: backend is NULL");
    *backend = NULL;
    if (!dev) return ct_fail(CT_INVALID_ARGUMENT, "ct_device_init_backend: dev is NULL");
    ct_status st = dev->iface.init_backend(dev, params, backend);
    if (st != CT_OK) *backend = NULL;
    return st;
}

/* ---- buffer types ---------------------------------------------------------- */

const char *ct_buft_label(const ct_buffer_type *buft) {
    const char *name = buft && buft->iface.get_name ? buft->iface.get_name(buft) : NULL;
    return name ? name : "(unnamed)";
}

const char *ct_buffer_type_name(const ct_buffer_type *buft) {
    if (!buft) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_buffer_type_name: buft is NULL");
    return buft->iface.get_name(buft);
}

size_t ct_buffer_type_alignment(const ct_buffer_type *buft) {
    if (!buft) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_type_alignment: buft is NULL");
        return 0;
    }
    return buft->iface.get_alignment(buft);
}

size_t ct_buffer_type_max_size(const ct_buffer_type *buft) {
    if (!buft) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_type_max_size: buft is NULL");
        return 0;
    }
    return buft->iface.get_max_size ? buft->iface.get_max_size(buft) : SIZE_MAX;
}

bool ct_buffer_type_is_host(const ct_buffer_type *buft) {
    return buft && buft->iface.is_host && buft->iface.is_host(buft);
}

ct_device *ct_buffer_type_device(const ct_buffer_type *buft) {
    if (!buft) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_buffer_type_device: buft is NULL");
    return buft->device;
}

ct_status ct_buffer_type_alloc_size(const ct_buffer_type *buft, const ct_tensor *t, size_t *size) {
    if (!size) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_type_alloc_size: size is NULL");
    *size = 0;
    if (!buft) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_type_alloc_size: buft is NULL");
    if (!t) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_type_alloc_size: tensor is NULL");
    size_t nbytes = ct_nbytes(t);
    if (!buft->iface.get_alloc_size) {
        *size = nbytes;
        return CT_OK;
    }
    size_t s = buft->iface.get_alloc_size(buft, t);
    if (s < nbytes) {
        return ct_fail(CT_DEVICE_ERROR, "ct_buffer_type_alloc_size: buffer type %s gives %zu bytes for tensor '%s' "
                       "of %zu bytes", ct_buft_label(buft), s, ct_backend_tensor_name(t), nbytes);
    }
    *size = s;
    return CT_OK;
}

ct_status ct_buffer_type_alloc(ct_buffer_type *buft, size_t size, ct_buffer **buffer) {
    if (!buffer) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_type_alloc: buffer is NULL");
    *buffer = NULL;
    if (!buft) return ct_fail(CT_INVALID_ARGUMENT, "ct_buffer_type_alloc: buft is NULL");
    if (size == 0) {
        /* ggml's dummy: a valid buffer with no memory and nothing to call. */
        *buffer = ct_buffer_init(buft, (ct_buffer_i){0}, NULL, 0);
        return *buffer ? CT_OK : ct_last_status();
    }
    size_t max_size = ct_buffer_type_max_size(buft);
    if (size > max_size) {
        return ct_fail(CT_OUT_OF_MEMORY, "ct_buffer_type_alloc: size %zu exceeds the max size %zu of buffer type %s",
                       size, max_size, ct_buft_label(buft));
    }
    ct_status st = buft->iface.alloc_buffer(buft, size, buffer);
    if (st != CT_OK) {
        *buffer = NULL;
        return st;
    }
    if (!*buffer) {
        return ct_fail(CT_DEVICE_ERROR, "ct_buffer_type_alloc: buffer type %s returned no buffer for %zu bytes",
                       ct_buft_label(buft), size);
    }
    return CT_OK;
}
