/* Fault injection for OpenCL object creation, for the reliability tests: the
 * OpenCL layer asks before every clCreate* whether to fail it, so a test can
 * make the n-th creation fail and check that a status comes back and nothing
 * leaks. Host allocations need no such hook: a test installs a failing
 * ct_allocator instead. Disabled (fail-at -1) unless a test sets it. */
#include "internal.h"

#include <stdatomic.h>

static atomic_long cl_fail_at = -1;
static atomic_long cl_count;

void ct_fault_set_cl_fail_at(long n) {
    atomic_store(&cl_fail_at, -1);
    atomic_store(&cl_count, 0);
    atomic_store(&cl_fail_at, n < 0 ? -1 : n);
}

long ct_fault_cl_count(void) { return atomic_load(&cl_count); }

bool ct_fault_cl_should_fail(const char *what) {
    /* Counted always, so that a run without failures tells how many points exist. */
    long index = atomic_fetch_add_explicit(&cl_count, 1, memory_order_relaxed);
    if (index != atomic_load_explicit(&cl_fail_at, memory_order_relaxed)) return false;
    ct_log(CT_LOG_DEBUG, "fault injection: failing OpenCL object creation #%ld (%s)", index, what ? what : "?");
    return true;
}
