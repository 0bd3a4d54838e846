/* ct_context_alloc_tensors: packs a no-alloc context's tensors, in creation
 * order, into buffers of at most the type's max size (docs/TENSORS.md,
 * Allocating a context's tensors). Two passes over the same tensors: the first plans
 * the buffer sizes, the second places each tensor where the plan put it. */
#include "backend_internal.h"

#include <stdio.h>
#include <string.h>

static bool needs_space(const ct_tensor *t) { return t->data == NULL && t->view_src == NULL && t->buffer == NULL; }

typedef struct plan {
    size_t *sizes; /* bytes of each buffer */
    size_t n, cap;
} plan;

static bool plan_push(plan *p, size_t size) {
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 4;
        size_t *sizes = ct_malloc(cap * sizeof *sizes);
        if (!sizes) return false;
        if (p->n) memcpy(sizes, p->sizes, p->n * sizeof *sizes);
        ct_free(p->sizes);
        p->sizes = sizes;
        p->cap = cap;
    }
    p->sizes[p->n++] = size;
    return true;
}

/* Where the next tensor of alloc_size bytes goes: at the aligned end of the
 * current buffer, or at 0 in a new one; an error when no buffer can hold it. */
static ct_status place(size_t *cur, size_t alloc_size, size_t alignment, size_t max_size, const ct_tensor *t,
                       const ct_buffer_type *buft, bool *new_buffer, size_t *offset) {
    size_t start, end;
    *new_buffer = false;
    if (alloc_size > max_size) {
        return ct_fail(CT_OUT_OF_MEMORY, "ct_context_alloc_tensors: tensor '%s' needs %zu bytes, more than the max "
                       "size %zu of buffer type %s", ct_backend_tensor_name(t), alloc_size, max_size, ct_buft_label(buft));
    }
    if (!ct_align_up(*cur, alignment, &start) || !ct_add_size(start, alloc_size, &end) || end > max_size) {
        *new_buffer = true;
        start = 0;
        end = alloc_size;
    }
    *offset = start;
    *cur = end;
    return CT_OK;
}

/* Undoes the placements of the second pass: every tensor that got a buffer
 * from `buffers` loses it, so nothing points into freed memory. */
static void unplace(ct_context *ctx, ct_buffer *const *buffers, size_t n) {
    for (ct_tensor *t = ct_context_first_tensor(ctx); t; t = ct_context_next_tensor(ctx, t)) {
        for (size_t i = 0; i < n; i++) {
            if (t->buffer == buffers[i]) {
                t->buffer = NULL;
                t->data = NULL;
                break;
            }
        }
    }
}

ct_status ct_context_alloc_tensors(ct_context *ctx, ct_buffer_type *buft, ct_buffer **buffer) {
    if (!buffer) return ct_fail(CT_INVALID_ARGUMENT, "ct_context_alloc_tensors: buffer is NULL");
    *buffer = NULL;
    if (!ctx) return ct_fail(CT_INVALID_ARGUMENT, "ct_context_alloc_tensors: ctx is NULL");
    if (!buft) return ct_fail(CT_INVALID_ARGUMENT, "ct_context_alloc_tensors: buft is NULL");
    if (!ct_context_no_alloc(ctx)) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_context_alloc_tensors: the context was not created with no_alloc");
    }
    size_t alignment = ct_buffer_type_alignment(buft);
    size_t max_size = ct_buffer_type_max_size(buft);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || max_size == 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_context_alloc_tensors: buffer type %s has alignment %zu and max size "
                       "%zu", ct_buft_label(buft), alignment, max_size);
    }

    /* Pass 1: buffer sizes. */
    plan p = {0};
    size_t cur = 0, offset, alloc_size;
    bool new_buffer, open = false;
    ct_status st = CT_OK;
    for (ct_tensor *t = ct_context_first_tensor(ctx); t; t = ct_context_next_tensor(ctx, t)) {
        if (!needs_space(t)) continue;
        size_t prev = cur;
        st = ct_buffer_type_alloc_size(buft, t, &alloc_size);
        if (st == CT_OK) st = place(&cur, alloc_size, alignment, max_size, t, buft, &new_buffer, &offset);
        if (st != CT_OK) break;
        if (open && new_buffer && !plan_push(&p, prev)) {
            st = ct_fail(CT_OUT_OF_MEMORY, "ct_context_alloc_tensors: cannot allocate the plan of %zu buffers", p.n + 1);
            break;
        }
        open = true;
    }
    if (st == CT_OK && open && !plan_push(&p, cur)) {
        st = ct_fail(CT_OUT_OF_MEMORY, "ct_context_alloc_tensors: cannot allocate the plan of %zu buffers", p.n + 1);
    }
    if (st != CT_OK) {
        ct_free(p.sizes);
        return st;
    }

    /* The buffers; a buffer holding only empty tensors still gets a byte, so
     * that every tensor ends up with a non-NULL data pointer. */
    ct_buffer **bufs = NULL;
    ct_buffer *result = NULL;
    size_t n_bufs = 0, total = 0;
    if (p.n > 0) {
        bufs = ct_calloc(p.n, sizeof *bufs);
        if (!bufs) {
            st = ct_fail(CT_OUT_OF_MEMORY, "ct_context_alloc_tensors: cannot allocate a list of %zu buffers", p.n);
        }
    }
    for (size_t i = 0; st == CT_OK && i < p.n; i++, n_bufs++) {
        size_t size = p.sizes[i] ? p.sizes[i] : 1;
        st = ct_buffer_type_alloc(buft, size, &bufs[i]);
        if (st != CT_OK) {
            char inner[256];
            snprintf(inner, sizeof inner, "%s", ct_last_error());
            st = ct_fail(st, "ct_context_alloc_tensors: buffer %zu of %zu (%zu bytes) of type %s: %s", i + 1, p.n,
                         size, ct_buft_label(buft), inner);
        } else if (!ct_add_size(total, size, &total)) {
            st = ct_fail(CT_OUT_OF_MEMORY, "ct_context_alloc_tensors: total size overflows after %zu buffers", i + 1);
        }
    }
    if (st == CT_OK && p.n == 1) {
        result = bufs[0];
        ct_free(bufs);
        bufs = &result;
    } else if (st == CT_OK && p.n > 1) {
        result = ct_buffer_init(buft, (ct_buffer_i){0}, NULL, total);
        if (!result) {
            st = ct_last_status();
        } else {
            result->children = bufs;
            result->n_children = n_bufs;
        }
    }
    if (st != CT_OK) {
        for (size_t i = 0; i < n_bufs; i++) ct_buffer_free(bufs[i]);
        ct_free(bufs);
        ct_free(p.sizes);
        return st;
    }
    ct_free(p.sizes);

    /* Pass 2: the same walk, now placing each tensor. */
    size_t idx = 0;
    cur = 0;
    open = false;
    for (ct_tensor *t = ct_context_first_tensor(ctx); t && st == CT_OK; t = ct_context_next_tensor(ctx, t)) {
        if (!needs_space(t)) continue;
        st = ct_buffer_type_alloc_size(buft, t, &alloc_size);
        if (st == CT_OK) st = place(&cur, alloc_size, alignment, max_size, t, buft, &new_buffer, &offset);
        if (st != CT_OK) break;
        if (open && new_buffer) idx++;
        open = true;
        if (idx >= n_bufs) {
            st = ct_fail(CT_INVALID_ARGUMENT, "ct_context_alloc_tensors: tensor '%s' changed size between passes",
                         ct_backend_tensor_name(t));
            break;
        }
        st = ct_buffer_alloc_tensor(bufs[idx], t, (char *)ct_buffer_base(bufs[idx]) + offset);
    }

    /* Views of anything now in a buffer. */
    for (ct_tensor *t = ct_context_first_tensor(ctx); t && st == CT_OK; t = ct_context_next_tensor(ctx, t)) {
        if (t->view_src && (!t->buffer || !t->data) && t->view_src->buffer && t->view_src->data) {
            st = ct_buffer_init_view(t);
        }
    }

    if (st != CT_OK) {
        unplace(ctx, bufs, n_bufs);
        ct_buffer_free(result);
        return st;
    }
    *buffer = result;
    return CT_OK;
}
