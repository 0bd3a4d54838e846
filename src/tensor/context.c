/* Contexts: one arena per context holding tensor headers, tensor data (unless
 * no_alloc) and graphs, carved front to back and released all at once. */
#include "tensor/tensor_internal.h"

#include <string.h>

size_t ct_tensor_overhead(void) {
    return (sizeof(ct_tensor_obj) + CT_MEM_ALIGN - 1) & ~(size_t)(CT_MEM_ALIGN - 1);
}

ct_context *ct_context_new(ct_context_params params) {
    if (params.mem_buffer != NULL && (uintptr_t)params.mem_buffer % CT_MEM_ALIGN != 0) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_context_new: mem_buffer=%p is not aligned to %d bytes",
                            params.mem_buffer, CT_MEM_ALIGN);
    }
    ct_context *ctx = ct_malloc(sizeof *ctx);
    if (ctx == NULL) {
        return CT_FAIL_NULL(CT_OUT_OF_MEMORY, "ct_context_new: cannot allocate the context (%zu bytes)",
                            sizeof *ctx);
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->no_alloc = params.no_alloc;
    /* Only whole CT_MEM_ALIGN units are usable, so every carve stays aligned. */
    ctx->mem_size = params.mem_size & ~(size_t)(CT_MEM_ALIGN - 1);
    if (params.mem_buffer != NULL) {
        ctx->mem = params.mem_buffer;
    } else if (ctx->mem_size > 0) {
        ctx->mem = ct_aligned_alloc(CT_MEM_ALIGN, ctx->mem_size);
        if (ctx->mem == NULL) {
            ct_free(ctx);
            return CT_FAIL_NULL(CT_OUT_OF_MEMORY, "ct_context_new: cannot allocate an arena of %zu bytes",
                                params.mem_size);
        }
        ctx->mem_owned = true;
    }
    return ctx;
}

void ct_context_free(ct_context *ctx) {
    if (ctx == NULL) return;
    if (ctx->mem_owned) ct_free(ctx->mem);
    ct_free(ctx);
}

size_t ct_context_used(const ct_context *ctx) { return ctx ? ctx->used : 0; }
size_t ct_context_size(const ct_context *ctx) { return ctx ? ctx->mem_size : 0; }
bool ct_context_no_alloc(const ct_context *ctx) { return ctx ? ctx->no_alloc : false; }

void *ct_context_alloc(ct_context *ctx, size_t size, const char *func, const char *what) {
    size_t need;
    size_t avail = ctx->mem_size - ctx->used;
    if (!ct_align_up(size, CT_MEM_ALIGN, &need) || need > avail) {
        return CT_FAIL_NULL(CT_OUT_OF_MEMORY,
                            "%s: context arena full: %s needs %zu bytes but %zu of %zu are free", func, what, size,
                            avail, ctx->mem_size);
    }
    void *p = ctx->mem + ctx->used;
    ctx->used += need;
    return p;
}

void ct_context_link(ct_context *ctx, ct_tensor_obj *obj) {
    obj->next = NULL;
    if (ctx->last) {
        ctx->last->next = obj;
    } else {
        ctx->first = obj;
    }
    ctx->last = obj;
}

ct_tensor *ct_context_first_tensor(const ct_context *ctx) {
    if (ctx == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_context_first_tensor: ctx is NULL");
    return ctx->first ? &ctx->first->tensor : NULL;
}

ct_tensor *ct_context_next_tensor(const ct_context *ctx, const ct_tensor *tensor) {
    if (ctx == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_context_next_tensor: ctx is NULL");
    if (tensor == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_context_next_tensor: tensor is NULL");
    uintptr_t p = (uintptr_t)tensor, base = (uintptr_t)ctx->mem;
    if (ctx->mem == NULL || p < base || p - base >= ctx->used) {
        /* only the address: what lies at a foreign pointer may be no tensor, or not ours to read */
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                            "ct_context_next_tensor: tensor %p is not a tensor of this context (arena %p, %zu bytes "
                            "used)", (const void *)tensor, (void *)ctx->mem, ctx->used);
    }
    const ct_tensor_obj *obj = (const ct_tensor_obj *)tensor;
    return obj->next ? &obj->next->tensor : NULL;
}

ct_tensor *ct_context_get_tensor(const ct_context *ctx, const char *name) {
    if (ctx == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_context_get_tensor: ctx is NULL");
    if (name == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_context_get_tensor: name is NULL");
    for (ct_tensor_obj *obj = ctx->first; obj; obj = obj->next) {
        if (strcmp(obj->tensor.name, name) == 0) return &obj->tensor;
    }
    return NULL;
}
