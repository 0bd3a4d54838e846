/* OpenCL kernel profiling (docs/BACKENDS.md, "Profiling"; CT_OPENCL_PROFILE, read at backend
 * creation). On one OpenCL device, a chain of ADDs (x = x + y, nodes long) is computed by a
 * backend made without the setting and by one made with it. Checked:
 *   - both give the same bytes (profiling changes no result);
 *   - the profiled backend's free logs one summary line (the computes it ran, no launch
 *     without times, kernels' time within the device's span) and per-kernel lines whose
 *     launches add up to every launch made;
 *   - a chain longer than the events a compute keeps (CT_OCL_PROFILE_EVENTS), whose events
 *     are read mid-compute, counts every launch too;
 *   - the backend made without the settings logs nothing.
 * Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl_profile");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

#include "opencl/opencl_internal.h"

enum { SKIP = 77, N = 1000, LOG_CAP = 64 };

/* What the log callback saw: the profile's lines. */
static struct {
    int n;
    char lines[LOG_CAP][256];
} seen;

static void on_log(ct_log_level level, const char *message, void *user_data) {
    (void)level;
    (void)user_data;
    if (strstr(message, "opencl profile:") && seen.n < LOG_CAP) snprintf(seen.lines[seen.n++], 256, "%s", message);
}

/* Computes x = x + y `nodes` times, `computes` times, on be; the result's N floats in out. */
static bool chain(ct_backend *be, int nodes, int computes, float *out) {
    const size_t max_nodes = (size_t)nodes + 8;
    ct_context *ctx = ct_context_new((ct_context_params){
        .mem_size = (max_nodes + 4) * ct_tensor_overhead() + ct_graph_overhead(max_nodes), .no_alloc = true});
    ct_graph *g = ctx ? ct_graph_new(ctx, max_nodes) : NULL;
    ct_tensor *x = g ? ct_tensor_new_1d(ctx, CT_TYPE_F32, N) : NULL, *y = x ? ct_tensor_new_1d(ctx, CT_TYPE_F32, N) : NULL;
    ct_tensor *h = x;
    for (int i = 0; i < nodes && h && y; i++) h = ct_add(ctx, h, y);
    bool ok = h && y && ct_graph_build_forward(g, h) == CT_OK;
    ct_buffer *buf = NULL;
    ok = ok && ct_context_alloc_tensors(ctx, ct_backend_buffer_type(be), &buf) == CT_OK;
    float v[N], w[N];
    for (int i = 0; i < N; i++) {
        v[i] = (float)(i % 97) * 0.25f - 12.0f;
        w[i] = (float)(i % 13) * 0.125f + 1.0f / 1024.0f;
    }
    ok = ok && ct_tensor_set(x, v, 0, sizeof v) == CT_OK && ct_tensor_set(y, w, 0, sizeof w) == CT_OK;
    for (int c = 0; c < computes && ok; c++) ok = ct_backend_graph_compute(be, g) == CT_OK;
    ok = ok && ct_tensor_get(h, out, 0, N * sizeof *out) == CT_OK;
    CHECK_MSG(ok, "chain of %d on %s: %s", nodes, ct_backend_name(be), ct_last_error());
    ct_buffer_free(buf);
    ct_context_free(ctx);
    return ok;
}

/* Checks the lines a profiled backend's free logged: `computes` computes, `launches` in all. */
static void check_report(int computes, unsigned long long launches) {
    CHECK_MSG(seen.n >= 2, "%d profile lines logged", seen.n);
    if (seen.n < 2) return;
    unsigned long long lost = 1, sum = 0;
    double wall = 0, submit = 0, span = 0, busy = 0;
    const char *s = strstr(seen.lines[0], "computes:");
    CHECK_MSG(s && sscanf(s, "computes: wall %lf ms, host submit %lf ms, device span %lf ms, kernels %lf ms (%llu",
                          &wall, &submit, &span, &busy, &lost) == 5,
              "summary line: %s", seen.lines[0]);
    const char *cs = strstr(seen.lines[0], " computes:");
    while (cs && cs > seen.lines[0] && cs[-1] >= '0' && cs[-1] <= '9') cs--;
    CHECK_MSG(cs && strtoull(cs, NULL, 10) == (unsigned long long)computes, "computes: %s", seen.lines[0]);
    CHECK_MSG(lost == 0, "%llu launches without times", lost);
    CHECK_MSG(busy > 0 && busy <= span * 1.001 + 1e-3 && submit <= wall, "times: wall %g submit %g span %g busy %g",
              wall, submit, span, busy);
    for (int i = 1; i < seen.n; i++) {
        const char *l = strstr(seen.lines[i], " launches");
        const char *d = l;
        while (d && d > seen.lines[i] && d[-1] >= '0' && d[-1] <= '9') d--;
        CHECK_MSG(l && d < l, "kernel line: %s", seen.lines[i]);
        if (l && d < l) sum += strtoull(d, NULL, 10);
    }
    CHECK_MSG(sum == launches, "%llu launches logged, %llu made", sum, launches);
}

static void run(ct_device *dev, int nodes, int computes) {
    static float plain[N], profiled[N];
    ct_backend *ref = NULL, *be = NULL;
    unsetenv("CT_OPENCL_PROFILE");
    CHECK(ct_device_init_backend(dev, NULL, &ref) == CT_OK);
    setenv("CT_OPENCL_PROFILE", "1", 1);
    CHECK(ct_device_init_backend(dev, NULL, &be) == CT_OK);
    unsetenv("CT_OPENCL_PROFILE");
    if (!ref || !be) return;
    CHECK(!((ct_ocl_backend *)ref->context)->profile.on && ((ct_ocl_backend *)be->context)->profile.on);
    const bool ok = chain(ref, nodes, 1, plain) && chain(be, nodes, computes, profiled);
    CHECK_MSG(!ok || memcmp(plain, profiled, sizeof plain) == 0, "chain of %d: profiled result differs", nodes);
    seen.n = 0;
    ct_backend_free(ref);
    CHECK_MSG(seen.n == 0, "a backend without CT_OPENCL_PROFILE logged %d profile lines", seen.n);
    ct_backend_free(be);
    if (ok) check_report(computes, (unsigned long long)nodes * (unsigned long long)computes);
    printf("chain of %d ADDs, %d computes: %d profile lines\n", nodes, computes, seen.n);
    for (int i = 0; i < seen.n && i < 3; i++) printf("  %s\n", seen.lines[i]);
}

int main(void) {
    tu_init("test_opencl_profile");
    ct_device *dev = tu_opencl_device();
    if (!dev) {
        printf("SKIP: no OpenCL device\n");
        return SKIP;
    }
    ct_log_set_callback(on_log, NULL);
    run(dev, 7, 3);
    run(dev, CT_OCL_PROFILE_EVENTS + 100, 1);
    ct_log_set_callback(NULL, NULL);
    return tu_finish();
}

#endif
