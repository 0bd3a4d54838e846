/* Internal helpers shared by every layer: error recording, logging, checked
 * size arithmetic and allocation through the caller's hooks. Not installed. */
#ifndef CT_CORE_INTERNAL_H
#define CT_CORE_INTERNAL_H

#include "ctensor.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#  define CT_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#  define CT_PRINTF(fmt_index, first_arg)
#endif

/* Records status and a printf-style message as this thread's last error, logs it
 * at debug level, and returns status, so that `return ct_fail(...)` reads well.
 * Convention: the message starts with the public function's name,
 * "ct_set_rows: src ne[0]=255 but dst ne[0]=256". */
ct_status ct_fail(ct_status status, const char *fmt, ...) CT_PRINTF(2, 3);
ct_status ct_failv(ct_status status, const char *fmt, va_list ap);

/* The same for constructors returning a pointer: records, then returns NULL. */
#define CT_FAIL_NULL(status, ...) ((void)ct_fail((status), __VA_ARGS__), (void *)0)

/* Logs through the caller's callback when level >= the set minimum. */
void ct_log(ct_log_level level, const char *fmt, ...) CT_PRINTF(2, 3);

/* Allocation through the hooks of ct_set_allocator. ct_malloc aligns to 16 bytes
 * (the largest scalar alignment); ct_calloc zeroes; a zero size allocates 1 byte
 * so that NULL always means failure. They do not record an error: callers do. */
void ct_free(void *ptr);
/* The allocating calls are macros that pass their source location, so that the
 * fault-injection coverage check (src/core/fault.c) can name every site. */
void *ct_malloc_at(size_t size, const char *file, int line);
void *ct_calloc_at(size_t count, size_t size, const char *file, int line);
void *ct_aligned_alloc_at(size_t alignment, size_t size, const char *file, int line);
#define ct_malloc(size) ct_malloc_at((size), __FILE__, __LINE__)
#define ct_calloc(count, size) ct_calloc_at((count), (size), __FILE__, __LINE__)
#define ct_aligned_alloc(alignment, size) ct_aligned_alloc_at((alignment), (size), __FILE__, __LINE__)

/* Checked arithmetic: return false (leaving *out unspecified) on overflow. */
static inline bool ct_mul_size(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool ct_add_size(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool ct_mul_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool ct_add_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
/* Rounds up to a multiple of align (a power of two); false on overflow. */
static inline bool ct_align_up(size_t v, size_t align, size_t *out) {
    size_t t;
    if (!ct_add_size(v, align - 1, &t)) return false;
    *out = t & ~(align - 1);
    return true;
}

#define CT_UNUSED(x) ((void)(x))

/* An internal invariant: something an earlier check already guaranteed (a backend's
 * supports_op before its encoder runs, say). Checked in debug and sanitizer builds,
 * nothing in release. Never for caller input: that fails with a ct_status. */
#if !defined(NDEBUG) || defined(CT_SANITIZE_BUILD)
#  include <stdio.h>
#  include <stdlib.h>
#  define CT_ASSERT(cond)                                                                                  \
    ((cond) ? (void)0                                                                                      \
            : (fprintf(stderr, "%s:%d: internal assertion failed: %s\n", __FILE__, __LINE__, #cond), abort()))
#else
#  define CT_ASSERT(cond) ((void)0)
#endif
#define CT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Fault injection (src/core/fault.c), for the reliability tests. The OpenCL
 * layer calls ct_fault_cl_should_fail before every clCreate* (buffer, program,
 * kernel, queue, context) and treats true as that call failing with
 * CL_OUT_OF_HOST_MEMORY. Every call is counted; ct_fault_set_cl_fail_at(n)
 * resets the count and makes call number n (from 0) fail, -1 none. */
bool ct_fault_cl_should_fail(const char *what, const char *file, int line);
void ct_fault_set_cl_fail_at(long n);
long ct_fault_cl_count(void);

/* The site registry: with CT_FAULT_SITES_FILE set, every allocation and OpenCL
 * creation site reached (and whether one of its calls failed) is appended to
 * that file at exit, for tests/python/check_fault_sites.py. */
typedef enum ct_fault_site_kind { CT_FAULT_SITE_HOST, CT_FAULT_SITE_OPENCL } ct_fault_site_kind;
void ct_fault_site_reached(ct_fault_site_kind kind, const char *file, int line, bool failed);

#endif
