/* Version, status strings, the per-thread last error, logging and the
 * allocator hooks: the ground every other layer reports through. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__STDC_NO_ATOMICS__)
#  include <stdatomic.h>
#endif

const char *ct_version(void) { return CT_VERSION_STRING; }
int ct_version_number(void) { return CT_VERSION_NUMBER; }

const char *ct_status_str(ct_status status) {
    switch (status) {
    case CT_OK: return "ok";
    case CT_INVALID_ARGUMENT: return "invalid argument";
    case CT_UNSUPPORTED: return "unsupported";
    case CT_OUT_OF_MEMORY: return "out of memory";
    case CT_INDEX_OUT_OF_RANGE: return "index out of range";
    case CT_DEVICE_ERROR: return "device error";
    case CT_ABORTED: return "aborted";
    }
    return "unknown status";
}

/* ---- per-thread last error ---------------------------------------------- */

enum { ERROR_MESSAGE_MAX = 512 };

static _Thread_local ct_status tls_status = CT_OK;
static _Thread_local char tls_message[ERROR_MESSAGE_MAX];

ct_status ct_last_status(void) { return tls_status; }
const char *ct_last_error(void) { return tls_message; }

void ct_clear_error(void) {
    tls_status = CT_OK;
    tls_message[0] = '\0';
}

ct_status ct_failv(ct_status status, const char *fmt, va_list ap) {
    vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    tls_status = status;
    ct_log(CT_LOG_DEBUG, "%s (%s)", tls_message, ct_status_str(status));
    return status;
}

ct_status ct_fail(ct_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ct_failv(status, fmt, ap);
    va_end(ap);
    return status;
}

/* ---- logging -------------------------------------------------------------- */

/* The callback pair is swapped under a lock-free pointer to a static slot so a
 * log call racing a ct_log_set_callback sees one consistent pair. */
typedef struct log_sink {
    ct_log_callback callback;
    void *user_data;
} log_sink;

static log_sink sink_slots[2];
static _Atomic(log_sink *) current_sink = NULL;
static atomic_int sink_next = 0;
static atomic_int min_level = CT_LOG_WARN;

static const char *level_name(ct_log_level level) {
    switch (level) {
    case CT_LOG_DEBUG: return "debug";
    case CT_LOG_INFO: return "info";
    case CT_LOG_WARN: return "warning";
    case CT_LOG_ERROR: return "error";
    case CT_LOG_NONE: break;
    }
    return "log";
}

/* CT_ASSERT's failure: a bug in the library, never a caller's mistake. */
void ct_assert_fail(const char *cond, const char *file, int line) {
    fprintf(stderr, "ctensor: internal assertion failed at %s:%d: %s\n", file, line, cond);
    abort();
}

void ct_log_set_callback(ct_log_callback callback, void *user_data) {
    if (!callback) {
        atomic_store(&current_sink, NULL);
        return;
    }
    int slot = atomic_fetch_add(&sink_next, 1) & 1;
    sink_slots[slot].callback = callback;
    sink_slots[slot].user_data = user_data;
    atomic_store(&current_sink, &sink_slots[slot]);
}

void ct_log_set_level(ct_log_level level) {
    if (level < CT_LOG_DEBUG) level = CT_LOG_DEBUG;
    if (level > CT_LOG_NONE) level = CT_LOG_NONE;
    atomic_store(&min_level, (int)level);
}

ct_log_level ct_log_get_level(void) { return (ct_log_level)atomic_load(&min_level); }

void ct_log(ct_log_level level, const char *fmt, ...) {
    if ((int)level < atomic_load(&min_level) || level >= CT_LOG_NONE) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log_sink *sink = atomic_load(&current_sink);
    if (sink) {
        sink->callback(level, line, sink->user_data);
    } else {
        fprintf(stderr, "ctensor: %s: %s\n", level_name(level), line);
    }
}

/* ---- allocation hooks ----------------------------------------------------- */

static void *default_alloc(size_t size, size_t alignment, void *user_data) {
    CT_UNUSED(user_data);
    void *p = NULL;
    if (posix_memalign(&p, alignment, size) != 0) return NULL;
    return p;
}

static void default_free(void *ptr, void *user_data) {
    CT_UNUSED(user_data);
    free(ptr);
}

static ct_allocator allocator = {default_alloc, default_free, NULL};

ct_status ct_set_allocator(const ct_allocator *hooks) {
    if (!hooks) {
        allocator = (ct_allocator){default_alloc, default_free, NULL};
        return CT_OK;
    }
    if (!hooks->alloc || !hooks->free) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_set_allocator: alloc=%p and free=%p must both be set",
                       (void *)(uintptr_t)hooks->alloc, (void *)(uintptr_t)hooks->free);
    }
    allocator = *hooks;
    return CT_OK;
}

void *ct_aligned_alloc_at(size_t alignment, size_t size, const char *file, int line) {
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    if (alignment & (alignment - 1)) return NULL;
    void *p = allocator.alloc(size ? size : 1, alignment, allocator.user_data);
    ct_fault_site_reached(CT_FAULT_SITE_HOST, file, line, p == NULL);
    return p;
}

void *ct_malloc_at(size_t size, const char *file, int line) { return ct_aligned_alloc_at(16, size, file, line); }

void *ct_calloc_at(size_t count, size_t size, const char *file, int line) {
    size_t total;
    if (!ct_mul_size(count, size, &total)) return NULL;
    void *p = ct_malloc_at(total, file, line);
    if (p) memset(p, 0, total);
    return p;
}

void ct_free(void *ptr) {
    if (ptr) allocator.free(ptr, allocator.user_data);
}
