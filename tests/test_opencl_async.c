/* The OpenCL backend's async transfers (ct_backend_tensor_set_async / get_async), from
 * inside (docs/BACKENDS.md):
 *   - they do not block: with the backend's queue held behind a marker that waits on a
 *     user event, both calls return, a get leaves the caller's memory untouched and a set
 *     into wrapped host memory leaves that memory as it was; once the event completes,
 *     ct_backend_synchronize makes both happen. (What this observes: the calls returned
 *     while the queue could not run them, so they were queued on the backend's queue
 *     and not done on the device's transfer queue. It does not time anything.)
 *   - the counters: each call queues one command per view it touches, a compute waits
 *     once for all the transfers queued before it (no wait of their own), a synchronize
 *     with nothing queued calls no clFinish;
 *   - a buffer over caller memory in several overlapping views (CT_OPENCL_MAX_SIZE=1M,
 *     read at device discovery, so in a child process): an async set across view
 *     boundaries writes every view holding those bytes (a kernel reading a tensor that
 *     only the second view holds whole sees them), an async get across boundaries reads
 *     them back, the bytes around stay.
 * Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl_async");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

#include "opencl/opencl_internal.h"

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

enum { SKIP = 77 };

#define MIB ((size_t)1 << 20)
#define KIB ((size_t)1 << 10)

static ct_context *new_ctx(void) {
    return ct_context_new((ct_context_params){.mem_size = 32 * ct_tensor_overhead() + ct_graph_overhead(8),
                                              .no_alloc = true});
}

/* ---- user events (not in ctensor's cl_api: only this test needs them) ---------- */

typedef cl_event(CL_API_CALL *create_user_event_fn)(cl_context, cl_int *);
typedef cl_int(CL_API_CALL *set_user_event_status_fn)(cl_event, cl_int);
typedef cl_int(CL_API_CALL *enqueue_marker_fn)(cl_command_queue, cl_uint, const cl_event *, cl_event *);

static create_user_event_fn create_user_event;
static set_user_event_status_fn set_user_event_status;
static enqueue_marker_fn enqueue_marker;

/* The library ctensor loaded (cl_api.c opens the same name), already in the process. */
static bool load_user_events(void) {
    const char *env = getenv("CT_OPENCL_LIBRARY");
    void *h = dlopen(env && *env ? env : "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    void *a = dlsym(h, "clCreateUserEvent"), *b = dlsym(h, "clSetUserEventStatus");
    void *c = dlsym(h, "clEnqueueMarkerWithWaitList");
    if (!a || !b || !c) return false;
    memcpy(&create_user_event, &a, sizeof a);
    memcpy(&set_user_event_status, &b, sizeof b);
    memcpy(&enqueue_marker, &c, sizeof c);
    return true;
}

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "test_opencl_async: an async transfer blocked behind the held queue\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(3);
}

/* ---- 1. not blocking; the counters ------------------------------------------------ */

static void test_not_blocking(ct_device *dev) {
    if (!load_user_events()) {
        printf("   (no clCreateUserEvent / clEnqueueMarkerWithWaitList: non-blocking check skipped)\n");
        return;
    }
    ct_backend *backend = NULL;
    CHECK(ct_device_init_backend(dev, NULL, &backend) == CT_OK);
    if (!backend) return;
    ct_ocl_backend *be = backend->context;
    ct_ocl_device *d = ct_ocl_device_of(dev);

    const size_t n = 256 * KIB, page = tu_page_size();
    ct_context *ctx = new_ctx();
    ct_tensor *t = ct_tensor_new_1d(ctx, CT_TYPE_I8, (int64_t)n);
    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, ct_device_buffer_type(dev), &buf) == CT_OK);
    /* wrapped host memory: a set's result is visible in it without any CL call */
    unsigned char *host = aligned_alloc(page, n);
    ct_buffer *mbuf = NULL;
    CHECK(host && ct_device_buffer_from_host_ptr(dev, host, n, n, &mbuf) == CT_OK);
    ct_tensor *m = ct_tensor_new_1d(ctx, CT_TYPE_I8, (int64_t)n);
    CHECK(mbuf && ct_buffer_alloc_tensor(mbuf, m, host) == CT_OK);

    unsigned char *x = malloc(n), *x2 = malloc(n), *y = malloc(n);
    tu_fill_bytes(x, n);
    tu_fill_bytes(x2, n);
    memset(host, 0x11, n);
    memset(y, 0xAB, n);
    CHECK(ct_tensor_set(t, x2, 0, n) == CT_OK); /* t holds x2 before the async set */

    cl_int err;
    cl_event gate = create_user_event(d->context, &err);
    CHECK(err == CL_SUCCESS);
    CHECK(enqueue_marker(be->queue, 1, &gate, NULL) == CL_SUCCESS);
    const uint64_t queued0 = be->n_async_queued, waits0 = be->n_waits;

    /* Held queue: a call that waits for its transfer never returns; the alarm ends it. */
    signal(SIGALRM, on_alarm);
    alarm(20);
    CHECK(ct_backend_tensor_set_async(backend, t, x, 0, n) == CT_OK);
    CHECK(ct_backend_tensor_get_async(backend, t, y, 0, n) == CT_OK);
    CHECK(ct_backend_tensor_set_async(backend, m, x, 0, n) == CT_OK);
    alarm(0);
    CHECK(be->n_async_queued - queued0 == 3 && be->async_pending && be->n_waits == waits0);
    size_t untouched = 0, host_old = 0;
    for (size_t i = 0; i < n; i++) {
        untouched += y[i] == 0xAB;
        host_old += host[i] == 0x11;
    }
    CHECK_MSG(untouched == n, "get_async wrote %zu bytes before the queue ran", n - untouched);
    CHECK_MSG(host_old == n, "set_async into wrapped memory wrote %zu bytes before the queue ran", n - host_old);

    CHECK(set_user_event_status(gate, CL_COMPLETE) == CL_SUCCESS);
    CHECK(ct_backend_synchronize(backend) == CT_OK);
    clReleaseEvent(gate);
    CHECK(be->n_waits == waits0 + 1 && !be->async_pending);
    /* in order: the get ran after the set before it */
    CHECK_MSG(memcmp(y, x, n) == 0, "get_async after set_async read other bytes");
    unsigned char *r = malloc(n);
    CHECK(ct_tensor_get(m, r, 0, n) == CT_OK && memcmp(r, x, n) == 0);
    /* nothing queued: no clFinish */
    CHECK(ct_backend_synchronize(backend) == CT_OK && be->n_waits == waits0 + 1);

    /* a compute after async sets: one wait, its own, for all of them */
    ct_tensor *src = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4096), *dst = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4096);
    ct_buffer *buf2 = NULL;
    CHECK(ct_context_alloc_tensors(ctx, ct_device_buffer_type(dev), &buf2) == CT_OK);
    ct_graph *g = ct_graph_new(ctx, 8);
    CHECK(g && ct_graph_build_forward(g, ct_cpy(ctx, src, dst)) == CT_OK);
    float v[4096], w[4096];
    tu_fill_uniform(v, 4096, -1, 1);
    const uint64_t waits1 = be->n_waits, queued1 = be->n_async_queued;
    for (int k = 0; k < 4; k++) {
        CHECK(ct_backend_tensor_set_async(backend, src, v + k * 1024, k * 1024 * sizeof(float),
                                          1024 * sizeof(float)) == CT_OK);
    }
    CHECK(be->n_waits == waits1);
    CHECK(ct_backend_graph_compute(backend, g) == CT_OK);
    CHECK(be->n_waits == waits1 + 1 && !be->async_pending);
    CHECK(ct_backend_tensor_get_async(backend, dst, w, 0, sizeof w) == CT_OK);
    CHECK(ct_backend_synchronize(backend) == CT_OK);
    CHECK(be->n_waits == waits1 + 2 && be->n_async_queued == queued1 + 5);
    CHECK(memcmp(v, w, sizeof v) == 0);
    printf("   4 async sets + compute + async get + synchronize: %llu waits on the backend's queue\n",
           (unsigned long long)(be->n_waits - waits1));

    ct_backend_free(backend);
    ct_buffer_free(buf2);
    ct_buffer_free(mbuf);
    ct_buffer_free(buf);
    ct_context_free(ctx);
    free(host);
    free(x);
    free(x2);
    free(y);
    free(r);
}

/* ---- 2. overlapping views (child, CT_OPENCL_MAX_SIZE=1M) ------------------------- */

#define WRAP (3 * MIB)
#define WRAP_MAX_TENSOR (64 * KIB)

static int child_views(void) {
    tu_init("test_opencl_async views");
    ct_device *dev = tu_opencl_device();
    if (!dev) return SKIP;
    ct_ocl_device *d = ct_ocl_device_of(dev);
    CHECK_MSG(d->max_size == MIB, "max_size %zu: CT_OPENCL_MAX_SIZE not taken", d->max_size);
    const size_t page = tu_page_size();
    unsigned char *host = aligned_alloc(page, WRAP), *orig = malloc(WRAP), *back = malloc(WRAP);
    tu_fill_bytes(orig, WRAP);
    memcpy(host, orig, WRAP);
    ct_buffer *mbuf = NULL;
    CHECK(ct_device_buffer_from_host_ptr(dev, host, WRAP, WRAP_MAX_TENSOR, &mbuf) == CT_OK);
    if (!mbuf) return tu_finish();
    const ct_ocl_buffer *ob = mbuf->context;
    printf("   %zu views over %zu bytes\n", ob->n_views, (size_t)WRAP);
    CHECK(ob->n_views >= 3);
    const size_t v1 = (size_t)(ob->views[1].data - (char *)host), v0_end = ob->views[0].size;
    CHECK(v1 < v0_end); /* they overlap */

    ct_context *ctx = new_ctx();
    ct_tensor *whole = ct_tensor_new_1d(ctx, CT_TYPE_I8, (int64_t)WRAP);
    ct_tensor_set_name(whole, "whole");
    /* 64 KiB of F32 from 32 KiB before view 0's end: only view 1 holds it whole */
    const size_t s_at = v0_end - 32 * KIB, s_n = 64 * KIB;
    ct_tensor *s = ct_tensor_new_1d(ctx, CT_TYPE_F32, (int64_t)(s_n / 4));
    ct_tensor *dd = ct_tensor_new_1d(ctx, CT_TYPE_F32, (int64_t)(s_n / 4));
    CHECK(ct_buffer_alloc_tensor(mbuf, whole, host) == CT_OK);
    CHECK(ct_buffer_alloc_tensor(mbuf, s, host + s_at) == CT_OK);
    ct_buffer *dbuf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, ct_device_buffer_type(dev), &dbuf) == CT_OK);
    CHECK(ct_ocl_buffer_find_view(ob, s->data, s_n) == &ob->views[1]);
    ct_graph *g = ct_graph_new(ctx, 8);
    CHECK(g && ct_graph_build_forward(g, ct_cpy(ctx, s, dd)) == CT_OK);

    ct_backend *backend = NULL;
    CHECK(ct_device_init_backend(dev, NULL, &backend) == CT_OK);
    if (!backend) return tu_finish();
    ct_ocl_backend *be = backend->context;

    /* range A covers s and more, across view 0 / view 1; range B crosses view 1 / view 2 */
    unsigned char *xa = malloc(96 * KIB), *xb = malloc(200 * KIB);
    tu_fill_bytes(xa, 96 * KIB);
    tu_fill_bytes(xb, 200 * KIB);
    const size_t a_at = s_at - 16 * KIB, v2 = (size_t)(ob->views[2].data - (char *)host);
    const size_t b_at = v2 - 50 * KIB;
    uint64_t q0 = be->n_async_queued;
    CHECK(ct_backend_tensor_set_async(backend, whole, xa, a_at, 96 * KIB) == CT_OK);
    CHECK_MSG(be->n_async_queued - q0 == 2, "range A queued %llu writes, expected one per view (2)",
              (unsigned long long)(be->n_async_queued - q0));
    q0 = be->n_async_queued;
    CHECK(ct_backend_tensor_set_async(backend, whole, xb, b_at, 200 * KIB) == CT_OK);
    CHECK(be->n_async_queued - q0 >= 2);
    CHECK(ct_backend_graph_compute(backend, g) == CT_OK); /* reads s through view 1 */
    unsigned char *ys = malloc(s_n), *yb = malloc(200 * KIB);
    memset(yb, 0, 200 * KIB);
    CHECK(ct_backend_tensor_get_async(backend, dd, ys, 0, s_n) == CT_OK);
    CHECK(ct_backend_tensor_get_async(backend, whole, yb, b_at, 200 * KIB) == CT_OK);
    CHECK(ct_backend_synchronize(backend) == CT_OK);
    CHECK_MSG(memcmp(ys, xa + 16 * KIB, s_n) == 0, "view 1 did not get the async write of view 0's tail");
    CHECK_MSG(memcmp(yb, xb, 200 * KIB) == 0, "get_async across views 1/2 differs");
    /* everything else kept, read back blocking (the device's queue, after the synchronize) */
    memcpy(orig + a_at, xa, 96 * KIB);
    memcpy(orig + b_at, xb, 200 * KIB);
    CHECK(ct_tensor_get(whole, back, 0, WRAP) == CT_OK);
    CHECK_MSG(memcmp(back, orig, WRAP) == 0, "the wrapped buffer differs outside the written ranges");

    ct_backend_free(backend);
    ct_buffer_free(dbuf);
    ct_buffer_free(mbuf);
    ct_context_free(ctx);
    free(host);
    free(orig);
    free(back);
    free(xa);
    free(xb);
    free(ys);
    free(yb);
    return tu_finish();
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "views") == 0) return child_views();
    tu_init("test_opencl_async");
    ct_device *dev = tu_opencl_device();
    if (!dev) {
        printf("SKIP: no OpenCL device\n");
        return tu_finish() ? 1 : SKIP;
    }
    printf("device %s: %s\n", ct_device_name(dev), ct_device_description(dev));
    printf("-- not blocking, counters\n");
    test_not_blocking(dev);
    tu_run_self("views", "CT_OPENCL_MAX_SIZE", "1M", (const char *const[]){"views", NULL});
    return tu_finish();
}

#endif
