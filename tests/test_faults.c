/* Allocation fault injection. For n = 0, 1, 2, ... the n-th host allocation
 * (through a counting ct_allocator) or the n-th OpenCL object creation (through
 * ct_fault_set_cl_fail_at) fails, until a run reaches no injection point. Every
 * failure must come back as a status with a message, leave no half-built object
 * behind (outputs NULL, tensors unplaced), let the same call succeed when retried,
 * and leak nothing: the live allocation count returns to where it was (and
 * LeakSanitizer checks the rest in the ASan build). A run that absorbed a fault
 * must still give the fault-free outputs, bit for bit.
 *
 * The registry initializes once per process, so it is exercised in a forked
 * child per n; the first backend on an OpenCL device builds the device's program
 * once per process, so that is swept in one child of its own; the scenario on
 * every device (CPU, REF, OpenCL) in-process. Then device faults: bad row
 * indices, an aborted compute, a host-pointer buffer, an unwritable program cache.
 * Run by ctest, the sites (file:line) it failed are checked against every site
 * the rest of the suite reaches (fault_site_coverage, docs/RELIABILITY.md). */
#include "core/internal.h"
#include "testutil.h"

#ifdef CT_HAVE_OPENCL
#  include "opencl/opencl_internal.h"

#  include <dirent.h>
#endif

#include <execinfo.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the counting allocator -------------------------------------------- */

static atomic_long alloc_count;  /* allocations since the last arm() */
static atomic_long alloc_fail_at = -1;
static atomic_long live_allocs;  /* outstanding allocations made through these hooks */
static atomic_bool alloc_fired;
static long cl_fail_at = -1;     /* as last armed */
static bool cl_fired;            /* kept across disarm(), which resets the library's count */

/* Distinct call paths (two return addresses above the allocator) that reached an
 * allocation: "sites", as opposed to points (the n of a run). */
enum { MAX_PATHS = 1024 };
static pthread_mutex_t paths_lock = PTHREAD_MUTEX_INITIALIZER;
static void *paths[MAX_PATHS][2];
static int n_paths;
static bool record_paths;

static void record_path(void) {
    void *frames[6];
    int n = backtrace(frames, 6);
    /* frames: this function, counting_alloc, ct_aligned_alloc, then callers (ct_malloc may be inlined). */
    void *a = n > 3 ? frames[3] : NULL, *b = n > 4 ? frames[4] : NULL;
    pthread_mutex_lock(&paths_lock);
    bool found = false;
    for (int i = 0; i < n_paths && !found; i++) found = paths[i][0] == a && paths[i][1] == b;
    if (!found && n_paths < MAX_PATHS) {
        paths[n_paths][0] = a;
        paths[n_paths][1] = b;
        n_paths++;
    }
    pthread_mutex_unlock(&paths_lock);
}

static void *counting_alloc(size_t size, size_t alignment, void *user_data) {
    CT_UNUSED(user_data);
    if (record_paths) record_path();
    long index = atomic_fetch_add(&alloc_count, 1);
    if (index == atomic_load(&alloc_fail_at)) {
        atomic_store(&alloc_fired, true);
        if (getenv("CT_FAULTS_TRACE")) { /* where the injected failure happens, for addr2line */
            void *frames[12];
            fprintf(stderr, "injected failure of host allocation %ld (%zu bytes) at:\n", index, size);
            backtrace_symbols_fd(frames, backtrace(frames, 12), 2);
        }
        return NULL;
    }
    void *p = NULL;
    if (posix_memalign(&p, alignment, size) != 0) return NULL;
    atomic_fetch_add(&live_allocs, 1);
    return p;
}

static void counting_free(void *ptr, void *user_data) {
    CT_UNUSED(user_data);
    if (!ptr) return;
    atomic_fetch_sub(&live_allocs, 1);
    free(ptr);
}

static const ct_allocator counting = {counting_alloc, counting_free, NULL};

typedef enum fault_kind { FAULT_HOST, FAULT_CL } fault_kind;

/* Makes the n-th allocation (or OpenCL creation) from now fail; n < 0: none. */
static void arm(fault_kind kind, long n) {
    atomic_store(&alloc_fired, false);
    atomic_store(&alloc_fail_at, kind == FAULT_HOST ? n : -1);
    atomic_store(&alloc_count, 0);
    cl_fired = false;
    cl_fail_at = kind == FAULT_CL ? n : -1;
    ct_fault_set_cl_fail_at(cl_fail_at);
}

/* Whether the armed fault has happened (so far in this run). */
static bool fired(void) {
    if (cl_fail_at >= 0 && ct_fault_cl_count() > cl_fail_at) cl_fired = true;
    return atomic_load(&alloc_fired) || cl_fired;
}

static void disarm(void) {
    (void)fired();
    atomic_store(&alloc_fail_at, -1);
    cl_fail_at = -1;
    ct_fault_set_cl_fail_at(-1);
}

/* ---- the scenario ---------------------------------------------------------- */

enum { K = 64, M = 6, N = 5, E = 32, T = 10, R = 4 };

typedef struct inputs {
    float w[K * M];
    uint8_t wq[M * 34 * (K / 32)]; /* Q8_0 */
    float x[K * N];
    float tab[E * T];
    int32_t ids[R];
    int64_t idx[R];
    uint16_t dst0[E * T];
    float host[E];
} inputs;

typedef struct outputs {
    float nrm[M * N];
    float mmq[M * N];
    uint16_t dst[E * T];
    uint8_t xq[N * 34 * (K / 32)];
    float cv[(E / 2) * T];
    float host[E];
    float staged[E]; /* row 0 of tab, copied from the device buffer into the host-pointer one */
} outputs;

static inputs in;

static void make_inputs(void) {
    tu_fill_uniform(in.w, K * M, -1.0f, 1.0f);
    float wf[K * M];
    tu_fill_uniform(wf, K * M, -2.0f, 2.0f);
    for (int r = 0; r < M; r++) {
        CHECK(ct_quantize_row(CT_TYPE_Q8_0, wf + r * K, in.wq + r * 34 * (K / 32), K) == CT_OK);
    }
    tu_fill_uniform(in.x, K * N, -1.0f, 1.0f);
    tu_fill_uniform(in.tab, E * T, -4.0f, 4.0f);
    for (int i = 0; i < R; i++) {
        in.ids[i] = (int32_t)tu_rand_below(T);
        in.idx[i] = (int64_t)((i * 3 + tu_rand_below(3)) % T); /* distinct: 0..2, 3..5, 6..8, 9 */
    }
    in.idx[R - 1] = T - 1;
    for (int i = 0; i < E * T; i++) in.dst0[i] = ct_fp32_to_fp16(tu_rand_uniform(-1.0f, 1.0f));
    tu_fill_uniform(in.host, E, -1.0f, 1.0f);
}

typedef struct run {
    fault_kind kind;
    long n;             /* the failing index, -1 for none */
    int failures_seen;  /* calls that returned a status because of the fault */
    bool bad;           /* a check failed */
} run;

/* A call failed: it must be the injected fault, reported as a status with a
 * message naming a public function. Then faults are off, and the caller retries. */
static void on_failure(run *r, const char *what, ct_status st) {
    r->failures_seen++;
    CHECK_MSG(fired(), "%s failed (%s: %s) without an injected fault (n=%ld)", what, ct_status_str(st),
              ct_last_error(), r->n);
    CHECK_MSG(st == ct_last_status(), "%s returned %s but the last status is %s", what, ct_status_str(st),
              ct_status_str(ct_last_status()));
    bool status_ok = r->kind == FAULT_HOST ? st == CT_OUT_OF_MEMORY : st == CT_OUT_OF_MEMORY || st == CT_DEVICE_ERROR;
    CHECK_MSG(status_ok, "%s: an injected %s fault gave %s: %s", what, r->kind == FAULT_HOST ? "host" : "OpenCL",
              ct_status_str(st), ct_last_error());
    CHECK_MSG(strncmp(ct_last_error(), "ct_", 3) == 0, "%s: message '%s' does not name a public function", what,
              ct_last_error());
    disarm();
}

/* A pointer-returning call that failed. */
#define RETRY_PTR(r, var, call)                                                          \
    do {                                                                                 \
        (var) = (call);                                                                  \
        if (!(var)) {                                                                    \
            on_failure((r), #call, ct_last_status());                                    \
            (var) = (call);                                                              \
            CHECK_MSG((var) != NULL, "retry of %s: %s", #call, ct_last_error());         \
        }                                                                                \
    } while (0)

/* A status-returning call with output pointer `out` (NULL after a failure). */
#define RETRY_ST(r, out, call)                                                           \
    do {                                                                                 \
        ct_status st_ = (call);                                                          \
        if (st_ != CT_OK) {                                                              \
            on_failure((r), #call, st_);                                                 \
            CHECK_MSG((out) == NULL, "%s failed but left an object", #call);             \
            st_ = (call);                                                                \
            CHECK_MSG(st_ == CT_OK, "retry of %s: %s", #call, ct_last_error());          \
        }                                                                                \
    } while (0)

/* Every tensor of ctx still unallocated (after a failed ct_context_alloc_tensors). */
static bool none_placed(const ct_context *ctx) {
    for (ct_tensor *t = ct_context_first_tensor(ctx); t; t = ct_context_next_tensor(ctx, t)) {
        if (t->buffer || t->data) return false;
    }
    return true;
}

/* Tensors, views, op constructors and a graph in a context that owns its data. */
static void scenario_data_context(run *r) {
    ct_context_params cp = {.mem_size = 8 * ct_tensor_overhead() + 8 * 4096 + ct_graph_overhead(16)};
    ct_context *ctx;
    RETRY_PTR(r, ctx, ct_context_new(cp));
    if (!ctx) return;
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 16, 8);
    ct_tensor *v = ct_view_2d(ctx, a, 8, 8, a ? a->nb[1] : 0, 0);
    ct_tensor *p = ct_transpose(ctx, v);
    ct_tensor *s = ct_sum_rows(ctx, p);
    ct_graph *g = ct_graph_new(ctx, 16);
    CHECK(a && v && p && s && g && ct_graph_build_forward(g, s) == CT_OK && ct_graph_n_nodes(g) >= 1);
    ct_context_free(ctx);
}

/* The whole flow on one device; fills *out. */
static void scenario_device(run *r, ct_device *dev, outputs *out) {
    memset(out, 0, sizeof *out);
    scenario_data_context(r);

    ct_context_params cp = {.mem_size = 32 * ct_tensor_overhead() + ct_graph_overhead(32), .no_alloc = true};
    ct_context *ctx;
    RETRY_PTR(r, ctx, ct_context_new(cp));
    if (!ctx) return;
    ct_tensor *w = ct_tensor_new_2d(ctx, CT_TYPE_F32, K, M);
    ct_tensor *wq = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, K, M);
    ct_tensor *x = ct_tensor_new_2d(ctx, CT_TYPE_F32, K, N);
    ct_tensor *tab = ct_tensor_new_2d(ctx, CT_TYPE_F32, E, T);
    ct_tensor *ids = ct_tensor_new_1d(ctx, CT_TYPE_I32, R);
    ct_tensor *idx = ct_tensor_new_1d(ctx, CT_TYPE_I64, R);
    ct_tensor *dst = ct_tensor_new_2d(ctx, CT_TYPE_F16, E, T);
    ct_tensor *xq = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, K, N);
    ct_tensor *vd = ct_tensor_new_2d(ctx, CT_TYPE_F32, E / 2, T);
    ct_tensor *mm = ct_mul_mat(ctx, w, x);
    ct_tensor *nrm = ct_rms_norm(ctx, mm, 1e-6f);
    ct_tensor *mmq = ct_mul_mat(ctx, wq, x);
    ct_tensor *rows = ct_get_rows(ctx, tab, ids);
    ct_tensor *sr = ct_set_rows(ctx, dst, rows, idx);
    ct_tensor *cq = ct_cpy(ctx, x, xq);
    ct_tensor *v = tab ? ct_view_2d(ctx, tab, E / 2, T, tab->nb[1], (E / 2) * sizeof(float)) : NULL;
    ct_tensor *cv = ct_cpy(ctx, v, vd);
    ct_graph *g = ct_graph_new(ctx, 32);
    bool built = w && wq && x && tab && ids && idx && dst && xq && vd && nrm && mmq && sr && cq && cv && g;
    CHECK_MSG(built, "building the graph: %s", ct_last_error());
    if (built) {
        ct_tensor *outs[] = {nrm, mmq, sr, cq, cv};
        for (size_t i = 0; i < CT_ARRAY_LEN(outs); i++) CHECK(ct_graph_build_forward(g, outs[i]) == CT_OK);
        for (int i = 0; i < ct_graph_n_nodes(g); i++) {
            CHECK_MSG(ct_device_supports_op(dev, ct_graph_node(g, i)), "%s refuses node %d (%s)",
                      ct_device_name(dev), i, ct_op_name(ct_graph_node(g, i)->op));
        }
    }

    ct_buffer *buf = NULL;
    ct_buffer_type *buft = ct_device_buffer_type(dev);
    {
        ct_status st = ct_context_alloc_tensors(ctx, buft, &buf);
        if (st != CT_OK) {
            on_failure(r, "ct_context_alloc_tensors", st);
            CHECK(buf == NULL && none_placed(ctx));
            st = ct_context_alloc_tensors(ctx, buft, &buf);
            CHECK_MSG(st == CT_OK, "retry of ct_context_alloc_tensors: %s", ct_last_error());
        }
    }

    ct_backend *be = NULL;
    const char *params = strcmp(ct_device_name(dev), "CPU") == 0 ? "n_threads=2" : NULL;
    RETRY_ST(r, be, ct_device_init_backend(dev, params, &be));

    /* a zero-size buffer and, where the device has the cap, one wrapping host
     * memory, then one more of that buffer's type where it is another (OpenCL's
     * mapped host memory, which then allocates the memory itself) */
    ct_buffer *empty = NULL, *hostbuf = NULL, *mapped = NULL;
    RETRY_ST(r, empty, ct_buffer_type_alloc(buft, 0, &empty));
    ct_device_props props;
    CHECK(ct_device_get_props(dev, &props) == CT_OK);
    float host[E];
    memcpy(host, in.host, sizeof host);
    ct_context *hctx = NULL;
    ct_tensor *ht = NULL;
    if (props.caps.buffer_from_host_ptr) {
        RETRY_ST(r, hostbuf, ct_device_buffer_from_host_ptr(dev, host, sizeof host, sizeof host, &hostbuf));
        ct_context_params hp = {.mem_size = 2 * ct_tensor_overhead(), .no_alloc = true};
        RETRY_PTR(r, hctx, ct_context_new(hp));
        ht = hctx ? ct_tensor_new_1d(hctx, CT_TYPE_F32, E) : NULL;
        CHECK(ht && hostbuf && ct_buffer_alloc_tensor(hostbuf, ht, ct_buffer_base(hostbuf)) == CT_OK);
        if (ht && ht->buffer) CHECK(ct_tensor_get(ht, out->host, 0, sizeof out->host) == CT_OK);
        ct_buffer_type *host_buft = hostbuf ? ct_buffer_get_type(hostbuf) : NULL;
        if (host_buft && host_buft != buft) {
            RETRY_ST(r, mapped, ct_buffer_type_alloc(host_buft, 3 * sizeof host, &mapped));
            CHECK(mapped && ct_buffer_size(mapped) == 3 * sizeof host && ct_buffer_clear(mapped, 0x5a) == CT_OK);
        }
    }

    if (built && buf && be) {
        CHECK(ct_tensor_set(w, in.w, 0, sizeof in.w) == CT_OK);
        CHECK(ct_tensor_set(wq, in.wq, 0, sizeof in.wq) == CT_OK);
        CHECK(ct_tensor_set(x, in.x, 0, sizeof in.x) == CT_OK);
        CHECK(ct_tensor_set(tab, in.tab, 0, sizeof in.tab) == CT_OK);
        CHECK(ct_tensor_set(ids, in.ids, 0, sizeof in.ids) == CT_OK);
        CHECK(ct_tensor_set(idx, in.idx, 0, sizeof in.idx) == CT_OK);
        /* three times: OpenCL plays a graph, records it on its second sight, replays it on the third */
        for (int rep = 0; rep < 3; rep++) {
            CHECK(ct_tensor_set(dst, in.dst0, 0, sizeof in.dst0) == CT_OK);
            ct_status st = ct_backend_graph_compute(be, g);
            if (st != CT_OK) {
                on_failure(r, "ct_backend_graph_compute", st);
                /* a failed compute leaves the backend usable; set dst again, SET_ROWS may have run */
                CHECK(ct_tensor_set(dst, in.dst0, 0, sizeof in.dst0) == CT_OK);
                st = ct_backend_graph_compute(be, g);
                CHECK_MSG(st == CT_OK, "retry of ct_backend_graph_compute: %s", ct_last_error());
            }
        }
        CHECK(ct_backend_synchronize(be) == CT_OK);
        CHECK(ct_tensor_get(nrm, out->nrm, 0, sizeof out->nrm) == CT_OK);
        CHECK(ct_tensor_get(mmq, out->mmq, 0, sizeof out->mmq) == CT_OK);
        CHECK(ct_tensor_get(dst, out->dst, 0, sizeof out->dst) == CT_OK);
        CHECK(ct_tensor_get(xq, out->xq, 0, sizeof out->xq) == CT_OK);
        CHECK(ct_tensor_get(vd, out->cv, 0, sizeof out->cv) == CT_OK);
        /* a copy between two buffers of the device that neither can do by itself (on
         * OpenCL: device memory into wrapped host memory) is staged through host memory */
        ct_tensor *row0 = ct_view_1d(ctx, tab, E, 0);
        if (row0 && ht && ht->buffer) {
            ct_status st = ct_tensor_copy(row0, ht);
            if (st != CT_OK) {
                on_failure(r, "ct_tensor_copy", st);
                st = ct_tensor_copy(row0, ht);
                CHECK_MSG(st == CT_OK, "retry of ct_tensor_copy: %s", ct_last_error());
            }
            CHECK(ct_tensor_get(ht, out->staged, 0, sizeof out->staged) == CT_OK);
        } else {
            CHECK_MSG(!props.caps.buffer_from_host_ptr, "no view of tab: %s", ct_last_error());
            memcpy(out->staged, in.tab, sizeof out->staged); /* nothing to copy into on this device */
        }
    }

    ct_buffer_free(hostbuf);
    ct_context_free(hctx);
    ct_buffer_free(mapped);
    ct_buffer_free(empty);
    ct_backend_free(be);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* The fault-free outputs must be right, not merely repeatable. */
static void check_reference(const outputs *o) {
    for (int i = 0; i < R; i++) {
        for (int e = 0; e < E; e++) {
            float want = ct_fp16_to_fp32(ct_fp32_to_fp16(in.tab[in.ids[i] * E + e]));
            CHECK_MSG(tu_same_f32(ct_fp16_to_fp32(o->dst[in.idx[i] * E + e]), want), "dst row %lld col %d",
                      (long long)in.idx[i], e);
        }
    }
    for (int t = 0; t < T; t++) {
        for (int e = 0; e < E / 2; e++) CHECK(tu_same_f32(o->cv[t * (E / 2) + e], in.tab[t * E + E / 2 + e]));
    }
    for (int c = 0; c < N; c++) {
        double ss = 0;
        float mm[M];
        for (int rr = 0; rr < M; rr++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += (double)in.w[rr * K + k] * in.x[c * K + k];
            mm[rr] = (float)acc;
            ss += acc * acc;
        }
        double scale = 1.0 / sqrt(ss / M + 1e-6);
        for (int rr = 0; rr < M; rr++) {
            double want = mm[rr] * scale;
            CHECK_MSG(fabs(o->nrm[c * M + rr] - want) < 1e-4 * (1 + fabs(want)), "nrm[%d] %g vs %g", c * M + rr,
                      o->nrm[c * M + rr], want);
        }
    }
    CHECK(memcmp(o->staged, in.tab, sizeof o->staged) == 0);
    uint8_t xq[sizeof o->xq];
    for (int c = 0; c < N; c++) CHECK(ct_quantize_row(CT_TYPE_Q8_0, in.x + c * K, xq + c * 34 * (K / 32), K) == CT_OK);
    CHECK(memcmp(xq, o->xq, sizeof xq) == 0);
}

static bool same_outputs(const outputs *a, const outputs *b) {
    return memcmp(a, b, sizeof *a) == 0;
}

/* In-process: the n-th host allocation or OpenCL creation of the scenario
 * fails, for every n until a run reaches none. Returns the points. */
static long sweep_in_process(ct_device *dev, const outputs *ref, fault_kind kind) {
    const char *kname = kind == FAULT_HOST ? "host allocation" : "OpenCL creation";
    long n = 0;
    for (;; n++) {
        run r = {.kind = kind, .n = n};
        long live0 = atomic_load(&live_allocs);
        int failures0 = tu_failures;
        outputs out;
        arm(kind, n);
        scenario_device(&r, dev, &out);
        bool reached = fired();
        disarm();
        CHECK_MSG(atomic_load(&live_allocs) == live0, "%s, %s %ld failing: %ld allocations leaked",
                  ct_device_name(dev), kname, n, atomic_load(&live_allocs) - live0);
        CHECK_MSG(same_outputs(&out, ref), "%s, %s %ld failing: outputs differ from the fault-free run",
                  ct_device_name(dev), kname, n);
        if (tu_failures != failures0) {
            fprintf(stderr, "  (%s, %s %ld failing: %d calls failed)\n", ct_device_name(dev), kname, n,
                    r.failures_seen);
            if (tu_failures > 50) break;
        }
        if (!reached) break;
    }
    return n;
}

/* ---- forked children: the registry and non-host devices ---------------- */

enum { CHILD_NOT_REACHED = 10, CHILD_HANDLED = 11, CHILD_CHECK_FAILED = 12, CHILD_LEAKED = 13 };

/* Runs after the registry's own teardown (atexit runs in reverse order). */
static void child_leak_check(void) {
    long live = atomic_load(&live_allocs);
    if (live != 0) {
        fprintf(stderr, "child: %ld allocations still live after the registry's teardown\n", live);
        fflush(stderr);
        _exit(CHILD_LEAKED);
    }
}

static bool is_host_device(ct_device *dev) {
    const char *name = ct_backend_reg_name(ct_device_reg(dev));
    return name && (strcasecmp(name, "CPU") == 0 || strcasecmp(name, "REF") == 0);
}

enum { MAX_OCL = 8 };

/* What a child sends back. */
typedef struct child_report {
    size_t n_devices;
    char names[MAX_OCL][CT_MAX_NAME];
    outputs outs[MAX_OCL];
    long points;
} child_report;

static void child_start(void) {
    atexit(child_leak_check); /* registered before the registry's teardown, so it runs after it */
    CHECK(ct_set_allocator(&counting) == CT_OK);
}

/* The registry's initialization with the n-th point failing: the host devices
 * are always there, and an OpenCL device may be left out, but nothing crashes
 * or leaks, and every device listed computes the scenario (fault-free) as in
 * the fault-free child: a fault must not leave a device silently degraded. */
static int child_registry(fault_kind kind, long n, child_report *rep) {
    int failures0 = tu_failures;
    child_start();
    arm(kind, n);
    size_t n_dev = ct_device_count();
    bool reached = fired();
    disarm();
    CHECK(n_dev >= 2 && ct_device_by_name("CPU") != NULL && ct_device_by_name("REF") != NULL);
    for (size_t d = 0; d < n_dev; d++) {
        ct_device *dev = ct_device_get(d);
        ct_device_props props;
        CHECK(dev && ct_device_get_props(dev, &props) == CT_OK && props.name);
        if (!dev || is_host_device(dev) || rep->n_devices == MAX_OCL) continue;
        run r = {.kind = kind, .n = -1};
        snprintf(rep->names[rep->n_devices], CT_MAX_NAME, "%s", ct_device_name(dev));
        scenario_device(&r, dev, &rep->outs[rep->n_devices++]);
    }
    if (tu_failures != failures0) return CHILD_CHECK_FAILED;
    return reached ? CHILD_HANDLED : CHILD_NOT_REACHED;
}

#ifdef CT_HAVE_OPENCL
static bool is_opencl_device(ct_device *dev) {
    const char *name = ct_backend_reg_name(ct_device_reg(dev));
    return name && strcasecmp(name, "OpenCL") == 0;
}

/* Empties the child's program-cache directory. */
static void clear_cache(const char *dir) {
    DIR *dp = opendir(dir);
    if (!dp) return;
    char path[1024];
    for (struct dirent *e; (e = readdir(dp)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(dp);
}

typedef enum program_state { PROGRAM_COLD, PROGRAM_WARM, PROGRAM_BROKEN } program_state;

/* One sweep of backend inits on an OpenCL device, the program dropped before
 * each so that every init loads it again: from source with an empty cache
 * (COLD: create, build, the cache write), from the cache (WARM: read, create
 * from binary, build, and a failed binary build falling back to source), or
 * with a build error (BROKEN: every init fails, host faults reach the build
 * log). Once a fault lands after the program is in place, later points are
 * the kernels, which a WARM sweep goes on through without dropping it. */
static long first_init_sweep(ct_device *dev, const char *cache, program_state state, fault_kind kind) {
    ct_ocl_device *d = ct_ocl_device_of(dev);
    if (state == PROGRAM_BROKEN) CHECK(ct_ocl_device_set_test_build_options(d, "-DCT_TEST_BUILD_ERROR") == CT_OK);
    if (state == PROGRAM_WARM) { /* a fault-free load from source fills the cache */
        clear_cache(cache);
        ct_ocl_device_reset_program(d);
        ct_backend *be = NULL;
        CHECK(ct_device_init_backend(dev, NULL, &be) == CT_OK);
        ct_backend_free(be);
    }
    bool reload = true;
    long n = 0;
    for (;; n++) {
        if (reload) {
            if (state != PROGRAM_WARM) clear_cache(cache);
            ct_ocl_device_reset_program(d);
        }
        ct_backend *be = NULL;
        int refs = d->refcount;
        arm(kind, n);
        ct_status st = ct_device_init_backend(dev, NULL, &be);
        bool reached = fired();
        disarm();
        if (state == PROGRAM_BROKEN) { /* the build error, or the injected fault before the build */
            CHECK_MSG(be == NULL && (st == CT_DEVICE_ERROR || (reached && st == CT_OUT_OF_MEMORY)),
                      "broken build, host allocation %ld failing: %s", n, ct_last_error());
            CHECK(strncmp(ct_last_error(), "ct_device_init_backend: ", 24) == 0 && d->program == NULL);
            CHECK(d->refcount == refs);
        } else if (st != CT_OK) {
            run r = {.kind = kind, .n = n};
            on_failure(&r, "ct_device_init_backend", st);
            CHECK(be == NULL && d->refcount == refs);
            if (d->program) reload = false;
        }
        ct_backend_free(be);
        if (!reached || tu_failures > 50 || (!reload && state == PROGRAM_COLD)) break;
    }
    if (state == PROGRAM_BROKEN) CHECK(ct_ocl_device_set_test_build_options(d, NULL) == CT_OK);
    return n;
}
#endif

/* The first backend on each OpenCL device builds (or loads) the device's
 * program, once per process, here with a program cache of the child's own:
 * with the n-th point failing, for every n, the init returns a status and no
 * backend, and a later init tries again. All n in one child, the program
 * dropped between them (first_init_sweep). */
static int child_first_init(fault_kind kind, long n_unused, child_report *rep) {
    CT_UNUSED(n_unused);
    int failures0 = tu_failures;
#ifdef CT_HAVE_OPENCL
    char cache[] = "/tmp/ct_faults_cache_XXXXXX";
    CHECK(mkdtemp(cache) != NULL);
    setenv("CT_OPENCL_CACHE_DIR", cache, 1);
    child_start();
    size_t n_dev = ct_device_count();
    for (size_t d = 0; d < n_dev; d++) {
        ct_device *dev = ct_device_get(d);
        if (!dev || !is_opencl_device(dev)) continue;
        rep->points += first_init_sweep(dev, cache, PROGRAM_COLD, kind);
        rep->points += first_init_sweep(dev, cache, PROGRAM_WARM, kind);
        if (kind == FAULT_HOST) {
            rep->points += first_init_sweep(dev, cache, PROGRAM_BROKEN, kind);
            /* the test hook's own copy of the options */
            arm(FAULT_HOST, 0);
            ct_status st = ct_ocl_device_set_test_build_options(ct_ocl_device_of(dev), "-DX");
            run r = {.kind = kind, .n = 0};
            if (st != CT_OK) on_failure(&r, "ct_ocl_device_set_test_build_options", st);
            disarm();
            CHECK(r.failures_seen == 1 && ct_ocl_device_set_test_build_options(ct_ocl_device_of(dev), NULL) == CT_OK);
            rep->points++;
        }
        ct_backend *be = NULL;
        CHECK(ct_device_init_backend(dev, NULL, &be) == CT_OK);
        ct_backend_free(be);
        rep->n_devices++;
    }
    clear_cache(cache);
    rmdir(cache);
#else
    CT_UNUSED(kind);
    CT_UNUSED(rep);
#endif
    if (tu_failures != failures0) return CHILD_CHECK_FAILED;
    return CHILD_NOT_REACHED;
}

typedef int (*child_fn)(fault_kind kind, long n, child_report *rep);

/* Runs fn in a child; its report comes back through a pipe. Returns the exit code. */
static int run_child(child_fn fn, fault_kind kind, long n, child_report *rep) {
    int fds[2];
    memset(rep, 0, sizeof *rep);
    if (pipe(fds) != 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        int code = fn(kind, n, rep);
        if (write(fds[1], rep, sizeof *rep) != (ssize_t)sizeof *rep) code = CHILD_CHECK_FAILED;
        close(fds[1]);
        exit(code);
    }
    close(fds[1]);
    size_t have = 0;
    while (have < sizeof *rep) {
        ssize_t rd = read(fds[0], (char *)rep + have, sizeof *rep - have);
        if (rd <= 0) break;
        have += (size_t)rd;
    }
    close(fds[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (have != sizeof *rep && (code == CHILD_NOT_REACHED || code == CHILD_HANDLED)) return -2;
    return code;
}

/* One child per n for the registry, until a child reaches no injection point. */
static long sweep_registry(fault_kind kind, size_t *n_devices) {
    child_report ref, rep;
    const char *kname = kind == FAULT_HOST ? "host allocation" : "OpenCL creation";
    int code = run_child(child_registry, kind, -1, &ref);
    CHECK_MSG(code == CHILD_NOT_REACHED, "fault-free registry child ended with code %d", code);
    for (size_t i = 0; i < ref.n_devices; i++) check_reference(&ref.outs[i]);
    *n_devices = ref.n_devices;
    long n = 0;
    for (;; n++) {
        code = run_child(child_registry, kind, n, &rep);
        bool ok = code == CHILD_NOT_REACHED || code == CHILD_HANDLED;
        CHECK_MSG(ok, "registry child with %s %ld failing ended with code %d", kname, n, code);
        for (size_t i = 0; i < rep.n_devices; i++) {
            size_t j = 0;
            while (j < ref.n_devices && strcmp(ref.names[j], rep.names[i]) != 0) j++;
            CHECK_MSG(j < ref.n_devices, "%s %ld failing: device %s is new", kname, n, rep.names[i]);
            CHECK_MSG(j == ref.n_devices || same_outputs(&ref.outs[j], &rep.outs[i]),
                      "registry with %s %ld failing: device %s computes other outputs", kname, n, rep.names[i]);
        }
        if (code == CHILD_NOT_REACHED) {
            CHECK(rep.n_devices == ref.n_devices);
            break;
        }
        if (!ok || tu_failures > 50) break;
    }
    return n;
}

static long sweep_first_init(fault_kind kind) {
    child_report rep;
    int code = run_child(child_first_init, kind, 0, &rep);
    CHECK_MSG(code == CHILD_NOT_REACHED, "first-init child (%s faults) ended with code %d",
              kind == FAULT_HOST ? "host" : "OpenCL", code);
    return rep.points;
}

/* ---- device faults ---------------------------------------------------------- */

typedef struct host_device {
    ct_device *dev;
    outputs ref;
} host_device;

/* Every other device still computes the scenario right. */
static void others_work(const host_device *devs, size_t n, size_t except, const char *after) {
    for (size_t j = 0; j < n; j++) {
        if (j == except) continue;
        run r = {.kind = FAULT_HOST, .n = -1};
        outputs out;
        scenario_device(&r, devs[j].dev, &out);
        CHECK_MSG(same_outputs(&out, &devs[j].ref), "after %s on %s, %s gives other outputs", after,
                  ct_device_name(devs[except].dev), ct_device_name(devs[j].dev));
    }
}

static bool abort_now(void *user_data) {
    ++*(int *)user_data;
    return true;
}

/* An out-of-range row index, an aborted compute and a host-pointer buffer on
 * one device: each a status, and the device and the others keep working. */
static void device_faults(const host_device *devs, size_t n, size_t i) {
    ct_device *dev = devs[i].dev;
    const char *dname = ct_device_name(dev);
    ct_context_params cp = {.mem_size = 16 * ct_tensor_overhead() + 2 * ct_graph_overhead(8), .no_alloc = true};
    ct_context *ctx = ct_context_new(cp);
    CHECK(ctx != NULL);
    if (!ctx) return;
    ct_tensor *tab = ct_tensor_new_2d(ctx, CT_TYPE_F32, E, T);
    ct_tensor *ids = ct_tensor_new_1d(ctx, CT_TYPE_I32, R);
    ct_tensor *rows = ct_get_rows(ctx, tab, ids);
    ct_tensor *dst = ct_tensor_new_2d(ctx, CT_TYPE_F32, E, T);
    ct_tensor *guard = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4 * E); /* placed after dst in the same buffer */
    ct_tensor *idx = ct_tensor_new_1d(ctx, CT_TYPE_I64, R);
    ct_tensor *sr = ct_set_rows(ctx, dst, rows, idx);
    ct_tensor_set_name(rows, "rows");
    ct_tensor_set_name(sr, "sr");
    ct_graph *g1 = ct_graph_new(ctx, 8), *g2 = ct_graph_new(ctx, 8);
    CHECK(g1 && g2 && guard && ct_graph_build_forward(g1, rows) == CT_OK && ct_graph_build_forward(g2, sr) == CT_OK);
    ct_buffer *buf = NULL;
    ct_backend *be = NULL;
    CHECK(ct_context_alloc_tensors(ctx, ct_device_buffer_type(dev), &buf) == CT_OK);
    CHECK(ct_device_init_backend(dev, NULL, &be) == CT_OK);
    if (!buf || !be || !g1 || !g2 || !guard) goto done;

    float got[E * R], pattern[4 * E], check[4 * E], dst0[E * T];
    tu_fill_uniform(pattern, 4 * E, -9.0f, 9.0f);
    tu_fill_uniform(dst0, E * T, -1.0f, 1.0f);
    CHECK(ct_tensor_set(tab, in.tab, 0, sizeof in.tab) == CT_OK);
    CHECK(ct_tensor_set(guard, pattern, 0, sizeof pattern) == CT_OK);
    CHECK(ct_tensor_set(dst, dst0, 0, sizeof dst0) == CT_OK);

    /* GET_ROWS with a row past the end, then SET_ROWS with a negative and a too-large row */
    int32_t bad_ids[R] = {0, 1, T + 3, 2};
    CHECK(ct_tensor_set(ids, bad_ids, 0, sizeof bad_ids) == CT_OK);
    CHECK_MSG(ct_backend_graph_compute(be, g1) == CT_INDEX_OUT_OF_RANGE, "%s: %s", dname, ct_last_error());
    /* the host backends name the value; OpenCL kernels only raise a flag */
    CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, is_host_device(dev) ? "13" : "node 'rows' (GET_ROWS)");
    others_work(devs, n, i, "an out-of-range GET_ROWS index");
    CHECK(ct_tensor_set(ids, in.ids, 0, sizeof in.ids) == CT_OK);
    int64_t bad_idx[2][R] = {{0, 1, -1, 2}, {0, T, 1, 2}};
    for (int k = 0; k < 2; k++) {
        CHECK(ct_tensor_set(idx, bad_idx[k], 0, sizeof bad_idx[k]) == CT_OK);
        CHECK_MSG(ct_backend_graph_compute(be, g2) == CT_INDEX_OUT_OF_RANGE, "%s: %s", dname, ct_last_error());
        CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, !is_host_device(dev) ? "node 'sr' (SET_ROWS)" : k == 0 ? "-1" : "10");
        CHECK(ct_tensor_get(guard, check, 0, sizeof check) == CT_OK && memcmp(check, pattern, sizeof check) == 0);
    }
    CHECK(ct_tensor_set(idx, in.idx, 0, sizeof in.idx) == CT_OK);
    CHECK(ct_backend_graph_compute(be, g1) == CT_OK && ct_tensor_get(rows, got, 0, sizeof got) == CT_OK);
    for (int k = 0; k < R; k++) CHECK(memcmp(got + k * E, in.tab + in.ids[k] * E, E * sizeof(float)) == 0);

    /* the abort callback: a status, then the backend computes again once it is removed */
    int calls = 0;
    ct_backend_set_abort_callback(be, abort_now, &calls);
    CHECK_MSG(ct_backend_graph_compute(be, g2) == CT_ABORTED && calls >= 1, "%s: %s", dname, ct_last_error());
    CHECK_ERROR(CT_ABORTED, "ct_backend_graph_compute");
    others_work(devs, n, i, "an aborted compute");
    ct_backend_set_abort_callback(be, NULL, NULL);
    CHECK(ct_tensor_set(dst, dst0, 0, sizeof dst0) == CT_OK);
    CHECK(ct_backend_graph_compute(be, g2) == CT_OK && ct_backend_synchronize(be) == CT_OK);
    float out_dst[E * T];
    CHECK(ct_tensor_get(dst, out_dst, 0, sizeof out_dst) == CT_OK);
    for (int k = 0; k < R; k++) {
        CHECK(memcmp(out_dst + in.idx[k] * E, in.tab + in.ids[k] * E, E * sizeof(float)) == 0);
    }
    CHECK(ct_tensor_get(guard, check, 0, sizeof check) == CT_OK && memcmp(check, pattern, sizeof check) == 0);

    /* A buffer over caller memory: freeing the buffer leaves the memory to the
     * caller (who frees it after the buffer: the documented contract). */
    ct_device_props props;
    CHECK(ct_device_get_props(dev, &props) == CT_OK);
    if (props.caps.buffer_from_host_ptr) {
        float *mem = malloc(4 * E * sizeof(float));
        ct_buffer *hb = NULL;
        CHECK(mem && ct_device_buffer_from_host_ptr(dev, mem, 4 * E * sizeof(float), 4 * E * sizeof(float), &hb) ==
                         CT_OK);
        ct_context *hctx = ct_context_new((ct_context_params){.mem_size = ct_tensor_overhead(), .no_alloc = true});
        ct_tensor *ht = hctx ? ct_tensor_new_1d(hctx, CT_TYPE_F32, 4 * E) : NULL;
        CHECK(ht && hb && ct_buffer_alloc_tensor(hb, ht, ct_buffer_base(hb)) == CT_OK);
        if (ht && ht->buffer) {
            CHECK(ct_tensor_set(ht, pattern, 0, sizeof pattern) == CT_OK);
            CHECK(ct_tensor_get(ht, check, 0, sizeof check) == CT_OK && memcmp(check, pattern, sizeof check) == 0);
        }
        bool host = ct_buffer_is_host(hb);
        ct_buffer_free(hb);
        ct_context_free(hctx);
        if (mem && host) CHECK(memcmp(mem, pattern, sizeof pattern) == 0);
        free(mem); /* a double free here, if the buffer had freed it, stops the ASan build */
        others_work(devs, n, i, "a host-pointer buffer freed before its memory");
    }
done:
    ct_backend_free(be);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* Out-of-range registry and device indices: statuses, nothing else changes. */
static void index_faults(void) {
    size_t n_dev = ct_device_count(), n_reg = ct_backend_reg_count();
    CHECK(ct_device_get(n_dev) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "out of range");
    CHECK(ct_device_get(SIZE_MAX) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "out of range");
    CHECK(ct_backend_reg_get(n_reg + 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "out of range");
    ct_backend_reg *reg = ct_backend_reg_get(0);
    CHECK(reg && ct_backend_reg_dev_get(reg, ct_backend_reg_dev_count(reg)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "out of range");
    CHECK(ct_device_count() == n_dev && ct_backend_reg_count() == n_reg);
}

static int warnings_about_cache;

static void count_cache_warnings(ct_log_level level, const char *message, void *user_data) {
    CT_UNUSED(user_data);
    if (level >= CT_LOG_WARN && strstr(message, "cache")) warnings_about_cache++;
}

/* A program-cache directory that cannot be created: non-host devices still
 * build their program, compute right, and warn. In a child, since the cache
 * directory is read once per process. */
static void unwritable_cache(const char *blocker) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int failures0 = tu_failures;
        char dir[512];
        snprintf(dir, sizeof dir, "%s/cache", blocker); /* under a regular file: mkdir fails, even for root */
        setenv("CT_OPENCL_CACHE_DIR", dir, 1);
        ct_log_set_level(CT_LOG_WARN);
        ct_log_set_callback(count_cache_warnings, NULL);
        size_t n_dev = ct_device_count(), k = 0;
        for (size_t d = 0; d < n_dev; d++) {
            ct_device *dev = ct_device_get(d);
            if (!dev || is_host_device(dev)) continue;
            run r = {.kind = FAULT_HOST, .n = -1};
            outputs out;
            scenario_device(&r, dev, &out);
            check_reference(&out);
            k++;
        }
        CHECK_MSG(k == 0 || warnings_about_cache > 0, "%zu devices built a program without warning about the cache",
                  k);
        printf("unwritable program cache: %zu non-host device(s) computed right, %d warning(s)\n", k,
               warnings_about_cache);
        exit(tu_failures != failures0 ? CHILD_CHECK_FAILED : CHILD_NOT_REACHED);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_NOT_REACHED, "unwritable-cache child: status %d",
              status);
}

enum { MAX_DEVICES = 16 };

int main(void) {
    tu_init("test_faults");
    setenv("CT_OPENCL_GRAPH_REPLAY", "1", 1); /* OpenCL graph replay on CPU devices too (PoCL) */
    make_inputs();
    ct_log_set_level(CT_LOG_NONE);

    /* Before the registry exists in this process: each child initializes its own. */
    size_t n_ocl = 0;
    long reg_host = sweep_registry(FAULT_HOST, &n_ocl);
    long reg_cl = sweep_registry(FAULT_CL, &n_ocl);
    printf("registry (%zu non-host devices), one child per n: %ld host allocation points, %ld OpenCL creation "
           "points\n", n_ocl, reg_host, reg_cl);
    long init_host = sweep_first_init(FAULT_HOST), init_cl = sweep_first_init(FAULT_CL);
    printf("first backend init (program build) of each non-host device: %ld host allocation points, %ld OpenCL "
           "creation points\n", init_host, init_cl);
    char blocker[] = "/tmp/ct_faults_XXXXXX";
    int fd = mkstemp(blocker);
    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        unwritable_cache(blocker);
        unlink(blocker);
    }

    /* Every device in-process: a fault-free reference, then every point of the scenario. */
    CHECK(ct_set_allocator(&counting) == CT_OK);
    long total = reg_host + reg_cl + init_host + init_cl;
    static host_device devs[MAX_DEVICES];
    size_t n_devs = 0;
    for (size_t d = 0; d < ct_device_count() && n_devs < MAX_DEVICES; d++) {
        host_device *hd = &devs[n_devs++];
        hd->dev = ct_device_get(d);
        run r = {.kind = FAULT_HOST, .n = -1};
        arm(FAULT_HOST, -1);
        scenario_device(&r, hd->dev, &hd->ref); /* builds an OpenCL device's program, kept to the end */
        CHECK(r.failures_seen == 0);
        check_reference(&hd->ref);
        record_paths = true;
        long host_points = sweep_in_process(hd->dev, &hd->ref, FAULT_HOST);
        record_paths = false;
        long cl_points = sweep_in_process(hd->dev, &hd->ref, FAULT_CL);
        printf("%s: %ld host allocation and %ld OpenCL creation points, each failed once: a status, no leak, the "
               "same outputs after a retry\n", ct_device_name(hd->dev), host_points, cl_points);
        total += host_points + cl_points;
    }
    printf("fault injection: %ld points exercised in all, %d distinct host allocation call paths in-process\n", total,
           n_paths);
    CHECK(total > 10 && n_paths > 5);

    /* Device faults on every device, each followed by a check of the others. */
    for (size_t i = 0; i < n_devs; i++) device_faults(devs, n_devs, i);
    index_faults();
    printf("device faults (bad row index, abort, host-pointer buffer) on %zu devices, each followed by the others\n",
           n_devs);
    CHECK(ct_set_allocator(NULL) == CT_OK);
    return tu_finish();
}
