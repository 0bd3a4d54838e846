/* Kernel profiling (CT_OPENCL_PROFILE=1, read at backend creation; docs/BACKENDS.md,
 * "Profiling"): each launch of a compute takes an event, whose device start and end are
 * read once the compute has waited, and summed per kernel. The backend's free logs the
 * sums with the computes' wall, submit and device times, so a run shows whether its
 * time is the kernels', the gaps between them or the host's. */
#include "opencl_internal.h"

#include <time.h>

uint64_t ct_ocl_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reads and releases the events taken so far into the sums. The caller has waited for
 * them, or waits in clGetEventProfilingInfo's stead (a full list mid-compute). */
static void collect(ct_ocl_profile *p) {
    for (int i = 0; i < p->n; i++) {
        cl_event e = p->events[i];
        cl_ulong start = 0, end = 0;
        if (clWaitForEvents(1, &e) != CL_SUCCESS ||
            clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) != CL_SUCCESS ||
            clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) != CL_SUCCESS || end < start) {
            p->lost++;
        } else {
            p->launches[p->kernel_of[i]]++;
            p->device_ns[p->kernel_of[i]] += end - start;
            p->compute_busy_ns += end - start;
            if (start < p->compute_first) p->compute_first = start;
            if (end > p->compute_last) p->compute_last = end;
        }
        clReleaseEvent(e);
    }
    p->n = 0;
}

cl_event *ct_ocl_profile_slot(ct_ocl_backend *be, uint32_t id) {
    ct_ocl_profile *p = &be->profile;
    if (p->n == CT_OCL_PROFILE_EVENTS) collect(p); /* waits: only computes of this many launches */
    p->kernel_of[p->n] = (uint16_t)id;
    return &p->events[p->n++];
}

void ct_ocl_profile_begin(ct_ocl_backend *be) {
    ct_ocl_profile *p = &be->profile;
    p->compute_first = ~(cl_ulong)0;
    p->compute_last = 0;
    p->compute_busy_ns = 0;
    p->compute_start_ns = ct_ocl_now_ns();
}

void ct_ocl_profile_end(ct_ocl_backend *be) {
    ct_ocl_profile *p = &be->profile;
    collect(p);
    p->computes++;
    p->wall_ns += ct_ocl_now_ns() - p->compute_start_ns;
    p->busy_ns += p->compute_busy_ns;
    if (p->compute_last > p->compute_first) p->span_ns += p->compute_last - p->compute_first;
}

/* Kernel ids by device time, most first (few ids: an insertion sort). */
static void sort_ids(int *ids, int n, const uint64_t *ns) {
    for (int i = 1; i < n; i++) {
        int v = ids[i], j = i;
        for (; j > 0 && ns[ids[j - 1]] < ns[v]; j--) ids[j] = ids[j - 1];
        ids[j] = v;
    }
}

void ct_ocl_profile_report(ct_ocl_backend *be) {
    ct_ocl_profile *p = &be->profile;
    collect(p); /* a compute that failed before its end */
    if (!p->computes) return;
    const double ms = 1e-6;
    ct_log(CT_LOG_WARN, "opencl profile: %s: %llu computes: wall %.3f ms, host submit %.3f ms, device span %.3f "
           "ms, kernels %.3f ms (%llu launches without times)", be->dev->name, (unsigned long long)p->computes,
           p->wall_ns * ms, p->submit_ns * ms, p->span_ns * ms, p->busy_ns * ms, (unsigned long long)p->lost);
    int ids[CT_OCL_PROFILE_KINDS], n = 0;
    for (int k = 0; k < CT_OCL_PROFILE_KINDS; k++) {
        if (p->launches[k]) ids[n++] = k;
    }
    sort_ids(ids, n, p->device_ns);
    for (int i = 0; i < n; i++) {
        int k = ids[i];
        ct_log(CT_LOG_WARN, "opencl profile: %s: %-36s %9llu launches %10.3f ms %8.2f us each %5.1f%%",
               be->dev->name, k < CT_OCL_K_COUNT ? ct_ocl_kernel_table[k].name : "(replayed command buffer)",
               (unsigned long long)p->launches[k], p->device_ns[k] * ms, p->device_ns[k] * 1e-3 / (double)p->launches[k],
               p->busy_ns ? 100.0 * (double)p->device_ns[k] / (double)p->busy_ns : 0.0);
    }
}
