/* Concurrency stress: many threads at once enumerate the devices, create
 * backends on every device (CPU with varying thread counts, REF, OpenCL where
 * present), allocate buffers, compute graphs of several ops and check every
 * result bit for bit against the same device's single-threaded computation of
 * the same inputs, made before the threads start. Bounded by a deadline as well
 * as an iteration count, so it stays short under ThreadSanitizer too. */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

enum { N_THREADS = 8, MAX_ITERS = 40, N_SETS = 3, MAX_DEVICES = 16 };
enum { K = 64, M = 9, N = 7, E = 24, T = 12, R = 5 };
static const double DEADLINE_S = 4.0;

typedef struct input_set {
    float w[K * M];
    float x[K * N];
    float tab[E * T];
    int32_t ids[R];
    int64_t idx[R];
} input_set;

typedef struct result {
    float nrm[M * N];
    float mmq[M * N];
    float rows[E * R];
    uint16_t dst[E * T];
    uint8_t xq[M * 34 * (K / 32)];
    float sums[N];
} result;

typedef struct device_entry {
    ct_device *dev;
    bool usable;           /* supports every node of the graph */
    result want[N_SETS];   /* single-threaded results */
} device_entry;

static input_set sets[N_SETS];
static device_entry devices[MAX_DEVICES];
static size_t n_devices;
static struct timespec t_start;

static double elapsed(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t_start.tv_sec) + 1e-9 * (double)(t.tv_nsec - t_start.tv_nsec);
}

typedef struct graph_ctx {
    ct_context *ctx;
    ct_graph *g;
    ct_tensor *w, *x, *tab, *ids, *idx, *dst, *xq;
    ct_tensor *nrm, *mmq, *rows, *sums;
} graph_ctx;

/* The graph: MUL_MAT (F32 and, through a CPY to Q8_0, quantized), RMS_NORM,
 * GET_ROWS, SET_ROWS into F16, SUM_ROWS of a transposed copy. */
static bool build(graph_ctx *gc) {
    memset(gc, 0, sizeof *gc);
    ct_context_params cp = {.mem_size = 32 * ct_tensor_overhead() + ct_graph_overhead(32), .no_alloc = true};
    gc->ctx = ct_context_new(cp);
    if (!gc->ctx) return false;
    ct_context *ctx = gc->ctx;
    gc->w = ct_tensor_new_2d(ctx, CT_TYPE_F32, K, M);
    gc->x = ct_tensor_new_2d(ctx, CT_TYPE_F32, K, N);
    gc->tab = ct_tensor_new_2d(ctx, CT_TYPE_F32, E, T);
    gc->ids = ct_tensor_new_1d(ctx, CT_TYPE_I32, R);
    gc->idx = ct_tensor_new_1d(ctx, CT_TYPE_I64, R);
    gc->dst = ct_tensor_new_2d(ctx, CT_TYPE_F16, E, T);
    gc->xq = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, K, M);
    ct_tensor *mm = ct_mul_mat(ctx, gc->w, gc->x);
    gc->nrm = ct_rms_norm(ctx, mm, 1e-5f);
    ct_tensor *wq = ct_cpy(ctx, gc->w, gc->xq);
    gc->mmq = ct_mul_mat(ctx, wq, gc->x);
    gc->rows = ct_get_rows(ctx, gc->tab, gc->ids);
    ct_tensor *sr = ct_set_rows(ctx, gc->dst, gc->rows, gc->idx);
    ct_tensor *xt = ct_cont(ctx, ct_transpose(ctx, gc->x));
    gc->sums = ct_sum_rows(ctx, ct_cont(ctx, ct_transpose(ctx, xt)));
    gc->g = ct_graph_new(ctx, 32);
    if (!gc->nrm || !gc->mmq || !gc->rows || !sr || !gc->sums || !gc->g) return false;
    ct_tensor_set_name(gc->rows, "rows");
    ct_tensor *outs[] = {gc->nrm, gc->mmq, sr, gc->sums};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        if (ct_graph_build_forward(gc->g, outs[i]) != CT_OK) return false;
    }
    return true;
}

static bool supports_all(ct_device *dev, const graph_ctx *gc) {
    for (int i = 0; i < ct_graph_n_nodes(gc->g); i++) {
        if (!ct_device_supports_op(dev, ct_graph_node(gc->g, i))) return false;
    }
    return true;
}

/* Sets the inputs of one set, computes and reads the outputs (tensors allocated). */
static ct_status compute(ct_backend *be, graph_ctx *gc, const input_set *in, result *out) {
    ct_status st;
    uint16_t zero[E * T] = {0};
    memset(out, 0, sizeof *out);
    if ((st = ct_tensor_set(gc->w, in->w, 0, sizeof in->w)) != CT_OK ||
        (st = ct_tensor_set(gc->x, in->x, 0, sizeof in->x)) != CT_OK ||
        (st = ct_tensor_set(gc->tab, in->tab, 0, sizeof in->tab)) != CT_OK ||
        (st = ct_tensor_set(gc->ids, in->ids, 0, sizeof in->ids)) != CT_OK ||
        (st = ct_tensor_set(gc->idx, in->idx, 0, sizeof in->idx)) != CT_OK ||
        (st = ct_tensor_set(gc->dst, zero, 0, sizeof zero)) != CT_OK ||
        (st = ct_backend_graph_compute(be, gc->g)) != CT_OK || (st = ct_backend_synchronize(be)) != CT_OK ||
        (st = ct_tensor_get(gc->nrm, out->nrm, 0, sizeof out->nrm)) != CT_OK ||
        (st = ct_tensor_get(gc->mmq, out->mmq, 0, sizeof out->mmq)) != CT_OK ||
        (st = ct_tensor_get(gc->rows, out->rows, 0, sizeof out->rows)) != CT_OK ||
        (st = ct_tensor_get(gc->dst, out->dst, 0, sizeof out->dst)) != CT_OK ||
        (st = ct_tensor_get(gc->xq, out->xq, 0, sizeof out->xq)) != CT_OK ||
        (st = ct_tensor_get(gc->sums, out->sums, 0, sizeof out->sums)) != CT_OK) {
        return st;
    }
    return CT_OK;
}

typedef struct job {
    int id;
    int iters;
    int computes;
    int failures;
    int checks;
    char first_failure[256];
} job;

#define TCHECK(j, cond, ...)                                                                        \
    do {                                                                                            \
        (j)->checks++;                                                                              \
        if (!(cond) && (j)->failures++ == 0) {                                                      \
            int w_ = snprintf((j)->first_failure, sizeof (j)->first_failure, "line %d: %s: ",       \
                              __LINE__, #cond);                                                     \
            if (w_ > 0 && (size_t)w_ < sizeof (j)->first_failure)                                   \
                snprintf((j)->first_failure + w_, sizeof (j)->first_failure - (size_t)w_,           \
                         __VA_ARGS__);                                                              \
        }                                                                                           \
    } while (0)

static pthread_barrier_t start_barrier;

static bool is_host(ct_device *dev) {
    const char *reg = ct_backend_reg_name(ct_device_reg(dev));
    return reg && (strcmp(reg, "CPU") == 0 || strcmp(reg, "REF") == 0);
}

static void iteration(job *j, int iter) {
    /* enumerate, as another thread creates and computes */
    size_t n_dev = ct_device_count();
    TCHECK(j, n_dev == n_devices || (n_devices == MAX_DEVICES && n_dev > MAX_DEVICES), "%zu devices", n_dev);
    for (size_t d = 0; d < n_dev && d < MAX_DEVICES; d++) {
        ct_device *dev = ct_device_get(d);
        ct_device_props props;
        TCHECK(j, dev == devices[d].dev && ct_device_get_props(dev, &props) == CT_OK && props.name,
               "device %zu", d);
        TCHECK(j, ct_device_by_name(ct_device_name(dev)) != NULL, "by name %s", ct_device_name(dev));
    }
    for (size_t k = 0; k < n_devices; k++) {
        size_t d = ((size_t)j->id + (size_t)iter + k) % n_devices;
        if (!devices[d].usable) continue;
        ct_device *dev = devices[d].dev;
        char params[32];
        bool is_cpu = strcmp(ct_device_name(dev), "CPU") == 0;
        snprintf(params, sizeof params, "n_threads=%d", 1 + (j->id + iter) % 4);
        ct_backend *be = NULL;
        ct_status st = ct_device_init_backend(dev, is_cpu ? params : NULL, &be);
        TCHECK(j, st == CT_OK && be, "init %s: %s", ct_device_name(dev), ct_last_error());
        if (!be) continue;
        graph_ctx gc;
        ct_buffer *buf = NULL;
        bool built = build(&gc) && ct_context_alloc_tensors(gc.ctx, ct_backend_buffer_type(be), &buf) == CT_OK;
        TCHECK(j, built, "build and allocate: %s", ct_last_error());
        for (int s = 0; built && s < N_SETS; s++) {
            int set = (j->id + iter + s) % N_SETS;
            result got;
            st = compute(be, &gc, &sets[set], &got);
            j->computes++;
            TCHECK(j, st == CT_OK, "%s set %d: %s", ct_device_name(dev), set, ct_last_error());
            TCHECK(j, st != CT_OK || memcmp(&got, &devices[d].want[set], sizeof got) == 0,
                   "%s set %d (%s): results differ from the single-threaded run", ct_device_name(dev), set, params);
        }
        /* an error of this thread stays this thread's */
        if (built && (iter % 3) == 0) {
            int32_t bad[R] = {0, 1, T + j->id, 2, 3};
            char label[32], name[40], value[16];
            snprintf(label, sizeof label, "rows of thread %d", j->id);
            snprintf(name, sizeof name, "'%s'", label);
            snprintf(value, sizeof value, "%d", T + j->id);
            ct_tensor_set_name(gc.rows, label);
            TCHECK(j, ct_tensor_set(gc.ids, bad, 0, sizeof bad) == CT_OK, "set");
            st = ct_backend_graph_compute(be, gc.g);
            /* the host backends also name the value; OpenCL kernels only raise a flag */
            bool named = strstr(ct_last_error(), name) && (!is_host(dev) || strstr(ct_last_error(), value));
            TCHECK(j, st == CT_INDEX_OUT_OF_RANGE && ct_last_status() == st && named, "%s: %s: %s",
                   ct_device_name(dev), ct_status_str(st), ct_last_error());
        }
        ct_buffer_free(buf);
        ct_context_free(gc.ctx);
        ct_backend_free(be);
    }
}

static void *thread_main(void *arg) {
    job *j = arg;
    pthread_barrier_wait(&start_barrier);
    for (int iter = 0; iter < MAX_ITERS && (iter == 0 || elapsed() < DEADLINE_S); iter++) {
        iteration(j, iter);
        j->iters++;
    }
    return NULL;
}

int main(void) {
    tu_init("test_stress");
    setenv("CT_OPENCL_GRAPH_REPLAY", "1", 1); /* OpenCL graph replay on CPU devices too (PoCL) */
    for (int s = 0; s < N_SETS; s++) {
        tu_fill_uniform(sets[s].w, K * M, -1.0f, 1.0f);
        tu_fill_uniform(sets[s].x, K * N, -1.0f, 1.0f);
        tu_fill_uniform(sets[s].tab, E * T, -8.0f, 8.0f);
        for (int i = 0; i < R; i++) {
            sets[s].ids[i] = (int32_t)tu_rand_below(T);
            sets[s].idx[i] = (int64_t)(i * 2 + tu_rand_below(2)); /* distinct */
        }
    }

    /* the single-threaded results, one per device and input set */
    n_devices = ct_device_count();
    if (n_devices > MAX_DEVICES) n_devices = MAX_DEVICES;
    size_t usable = 0;
    for (size_t d = 0; d < n_devices; d++) {
        device_entry *de = &devices[d];
        de->dev = ct_device_get(d);
        graph_ctx gc;
        CHECK(build(&gc));
        de->usable = supports_all(de->dev, &gc);
        ct_backend *be = NULL;
        ct_buffer *buf = NULL;
        bool is_cpu = strcmp(ct_device_name(de->dev), "CPU") == 0;
        if (de->usable) {
            CHECK(ct_device_init_backend(de->dev, is_cpu ? "n_threads=1" : NULL, &be) == CT_OK);
            CHECK(be && ct_context_alloc_tensors(gc.ctx, ct_backend_buffer_type(be), &buf) == CT_OK);
        }
        for (int s = 0; be && s < N_SETS; s++) CHECK(compute(be, &gc, &sets[s], &de->want[s]) == CT_OK);
        if (be) {
            usable++;
            /* spot checks that the baseline is right, not merely repeatable */
            const result *w = &de->want[0];
            for (int i = 0; i < R; i++) {
                CHECK(memcmp(w->rows + i * E, sets[0].tab + sets[0].ids[i] * E, E * sizeof(float)) == 0);
                CHECK(ct_fp16_to_fp32(w->dst[sets[0].idx[i] * E]) ==
                      ct_fp16_to_fp32(ct_fp32_to_fp16(sets[0].tab[sets[0].ids[i] * E])));
            }
            for (int c = 0; c < N; c++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += sets[0].x[c * K + k];
                CHECK_MSG(fabs(w->sums[c] - s) < 1e-4, "%s: sum %d: %g vs %g", ct_device_name(de->dev), c, w->sums[c],
                          s);
            }
        }
        printf("%s: %s\n", ct_device_name(de->dev), de->usable ? "stressed" : "skipped (refuses a node of the graph)");
        ct_buffer_free(buf);
        ct_backend_free(be);
        ct_context_free(gc.ctx);
    }
    CHECK(usable >= 2);

    clock_gettime(CLOCK_MONOTONIC, &t_start);
    pthread_t threads[N_THREADS];
    job jobs[N_THREADS];
    CHECK(pthread_barrier_init(&start_barrier, NULL, N_THREADS) == 0);
    for (int i = 0; i < N_THREADS; i++) {
        jobs[i] = (job){.id = i};
        CHECK(pthread_create(&threads[i], NULL, thread_main, &jobs[i]) == 0);
    }
    int iters = 0, computes = 0, checks = 0;
    for (int i = 0; i < N_THREADS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK_MSG(jobs[i].failures == 0, "thread %d: %d failures, first: %s", i, jobs[i].failures,
                  jobs[i].first_failure);
        iters += jobs[i].iters;
        computes += jobs[i].computes;
        checks += jobs[i].checks;
    }
    pthread_barrier_destroy(&start_barrier);
    printf("%d threads, %d iterations, %d graph computes on %zu devices, %d checks in %.2f s\n", N_THREADS, iters,
           computes, usable, checks, elapsed());
    CHECK(computes >= N_THREADS * N_SETS);
    return tu_finish();
}
