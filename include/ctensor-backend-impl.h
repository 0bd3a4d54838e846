/*
 * ctensor backend-author interface: the vtables behind the public backend API.
 *
 * A backend provides one ct_backend_reg (its registration), whose devices
 * provide buffer types, buffers and backends. The generic wrappers in
 * src/backend/ check every argument before calling through these tables, so an
 * implementation may assume: non-NULL objects of its own kind, offsets and sizes
 * inside the tensor, tensors allocated in a buffer of a type the device supports.
 *
 * Every function returning ct_status records a message with ct_fail() (from the
 * library's internal core) on failure. Optional entries may be NULL.
 */
#ifndef CTENSOR_BACKEND_IMPL_H
#define CTENSOR_BACKEND_IMPL_H

#include "ctensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CT_BACKEND_API_VERSION 2 /* 2: ct_backend_i's async transfer entries */

/* ---- buffer type --------------------------------------------------------- */

typedef struct ct_buffer_type_i {
    const char *(*get_name)(const ct_buffer_type *buft);
    /* size > 0 (the wrapper handles 0 with an empty buffer) */
    ct_status (*alloc_buffer)(ct_buffer_type *buft, size_t size, ct_buffer **buffer);
    size_t (*get_alignment)(const ct_buffer_type *buft);
    size_t (*get_max_size)(const ct_buffer_type *buft);        /* optional: SIZE_MAX */
    size_t (*get_alloc_size)(const ct_buffer_type *buft, const ct_tensor *t); /* optional: ct_nbytes; >= ct_nbytes */
    bool (*is_host)(const ct_buffer_type *buft);               /* optional: false */
} ct_buffer_type_i;

struct ct_buffer_type {
    ct_buffer_type_i iface;
    ct_device *device;
    void *context;
};

/* ---- buffer --------------------------------------------------------------- */

typedef struct ct_buffer_i {
    void (*free_buffer)(ct_buffer *buffer);                    /* optional: frees context; not the struct */
    void *(*get_base)(ct_buffer *buffer);
    ct_status (*init_tensor)(ct_buffer *buffer, ct_tensor *t); /* optional */
    ct_status (*memset_tensor)(ct_buffer *buffer, ct_tensor *t, uint8_t value, size_t offset, size_t size);
    ct_status (*set_tensor)(ct_buffer *buffer, ct_tensor *t, const void *data, size_t offset, size_t size);
    ct_status (*get_tensor)(ct_buffer *buffer, const ct_tensor *t, void *data, size_t offset, size_t size);
    bool (*cpy_tensor)(ct_buffer *buffer, const ct_tensor *src, ct_tensor *dst); /* optional: false = unsupported */
    ct_status (*clear)(ct_buffer *buffer, uint8_t value);
    void (*reset)(ct_buffer *buffer);                          /* optional */
} ct_buffer_i;

struct ct_buffer {
    ct_buffer_i iface;
    ct_buffer_type *buft;
    void *context;
    size_t size;
    ct_buffer_usage usage;
    /* A multi-buffer (several buffers allocated for one context) owns these. */
    ct_buffer **children;
    size_t n_children;
    /* Set by ct_device_buffer_from_host_ptr when tensor addresses are the caller's host
     * memory, which another buffer may wrap too (ct_tensor_copy compares such addresses). */
    bool host_memory;
};

/* The buffer holding t's bytes: a view's bytes live in its root's buffer (ggml's rule for
 * set/get). */
static inline ct_buffer *ct_tensor_data_buffer(const ct_tensor *t) {
    return t->view_src ? t->view_src->buffer : t->buffer;
}

/* Allocates the ct_buffer struct (through the allocator hooks); NULL + status on failure. */
ct_buffer *ct_buffer_init(ct_buffer_type *buft, ct_buffer_i iface, void *context, size_t size);
/* Whether tensor addresses in a and b compare: one buffer, or both holding real host addresses
 * (host buffers, caller memory that two buffers may both wrap). A device buffer's addresses
 * are placeholders that other device buffers reuse. */
bool ct_buffers_share_addresses(const ct_buffer *a, const ct_buffer *b);

/* ---- device --------------------------------------------------------------- */

typedef struct ct_device_i {
    const char *(*get_name)(const ct_device *dev);
    const char *(*get_description)(const ct_device *dev);
    ct_status (*get_memory)(const ct_device *dev, size_t *free_bytes, size_t *total_bytes);
    ct_device_type (*get_type)(const ct_device *dev);
    void (*get_props)(const ct_device *dev, ct_device_props *props);
    ct_status (*init_backend)(ct_device *dev, const char *params, ct_backend **backend);
    ct_buffer_type *(*get_buffer_type)(const ct_device *dev);
    ct_buffer_type *(*get_host_buffer_type)(const ct_device *dev); /* optional */
    ct_status (*buffer_from_host_ptr)(ct_device *dev, void *ptr, size_t size, size_t max_tensor_size,
                                      ct_buffer **buffer);         /* optional */
    /* Called by ct_device_supports_op for ops in the list that compute something;
     * the view ops (ct_op_is_view) are answered there, true for every device. */
    bool (*supports_op)(const ct_device *dev, const ct_tensor *op);
    bool (*supports_buft)(const ct_device *dev, const ct_buffer_type *buft);
} ct_device_i;

struct ct_device {
    ct_device_i iface;
    ct_backend_reg *reg;
    void *context;
};

/* ---- registration --------------------------------------------------------- */

typedef struct ct_backend_reg_i {
    const char *(*get_name)(const ct_backend_reg *reg);
    size_t (*get_device_count)(const ct_backend_reg *reg);
    ct_device *(*get_device)(const ct_backend_reg *reg, size_t index);
    void *(*get_proc_address)(const ct_backend_reg *reg, const char *name); /* optional */
} ct_backend_reg_i;

struct ct_backend_reg {
    int api_version; /* CT_BACKEND_API_VERSION */
    ct_backend_reg_i iface;
    void *context;
};

/* Optional, found through get_proc_address: releases what a registration holds
 * (device contexts). The registry calls it once, at exit, after which no device
 * of the registration is used. */
#define CT_BACKEND_REG_RELEASE_PROC "ct_backend_reg_release"
typedef void (*ct_backend_reg_release_fn)(ct_backend_reg *reg);

/* ---- backend (a stream on one device) ------------------------------------ */

typedef struct ct_backend_i {
    const char *(*get_name)(const ct_backend *backend);
    void (*free)(ct_backend *backend);                         /* frees context and the struct */
    ct_status (*synchronize)(ct_backend *backend);            /* optional: required with the async entries */
    ct_status (*graph_compute)(ct_backend *backend, ct_graph *graph);
    void (*set_abort_callback)(ct_backend *backend, ct_abort_callback callback, void *user_data);
    /* optional (NULL: the wrapper synchronizes, then calls the buffer's blocking entry);
     * size > 0, the tensor in a buffer the device supports; may return before done */
    ct_status (*set_tensor_async)(ct_backend *backend, ct_tensor *t, const void *data, size_t offset, size_t size);
    ct_status (*get_tensor_async)(ct_backend *backend, const ct_tensor *t, void *data, size_t offset, size_t size);
} ct_backend_i;

struct ct_backend {
    uint8_t guid[16];
    ct_backend_i iface;
    ct_device *device;
    void *context;
};

/* The built-in registrations, called once by the registry's initialization. */
ct_backend_reg *ct_backend_cpu_reg(void);
ct_backend_reg *ct_backend_ref_reg(void);
#ifdef CT_HAVE_OPENCL
ct_backend_reg *ct_backend_opencl_reg(void); /* zero devices without an OpenCL platform */
#endif

#ifdef __cplusplus
}
#endif

#endif /* CTENSOR_BACKEND_IMPL_H */
