/* Many threads using the backend layer at once: the registry's first use,
 * device enumeration, CPU backends with their own thread pools, buffers,
 * computes and per-thread error messages. Meant to run under ThreadSanitizer
 * too (-DCT_SANITIZE=thread). */
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>

enum { N_THREADS = 8, N_ITERS = 50, ROWS = 6, COLS = 33 };

static pthread_barrier_t start;

typedef struct job {
    int id;
    uint64_t rng;
    int failures;
    int checks;
    char first_failure[256];
} job;

/* The harness's CHECK counts in globals; threads count in their job instead. */
#define TCHECK(j, cond)                                                                            \
    do {                                                                                           \
        (j)->checks++;                                                                             \
        if (!(cond) && (j)->failures++ == 0) {                                                     \
            snprintf((j)->first_failure, sizeof (j)->first_failure, "line %d: %s (last error: %s)", \
                     __LINE__, #cond, ct_last_error());                                            \
        }                                                                                          \
    } while (0)

static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void one_iteration(job *j, int iter) {
    /* the registry, from every thread at once */
    size_t n_dev = ct_device_count();
    TCHECK(j, n_dev >= 1);
    for (size_t d = 0; d < n_dev; d++) {
        ct_device *dev = ct_device_get(d);
        ct_device_props props;
        TCHECK(j, dev != NULL && ct_device_get_props(dev, &props) == CT_OK && props.name && props.description);
    }
    ct_device *cpu = ct_device_by_name("cpu");
    TCHECK(j, cpu != NULL && cpu == ct_device_get(0));

    ct_backend *be = NULL;
    char params[32];
    snprintf(params, sizeof params, "n_threads=%d", 1 + (j->id + iter) % 3);
    TCHECK(j, ct_backend_init_by_name("CPU", params, &be) == CT_OK);
    if (!be) return;

    ct_context_params cp = {.mem_size = 16 * ct_tensor_overhead() + ct_graph_overhead(16), .no_alloc = true};
    ct_context *ctx = ct_context_new(cp);
    TCHECK(j, ctx != NULL);
    if (!ctx) {
        ct_backend_free(be);
        return;
    }
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, COLS, ROWS);
    ct_tensor *b = ct_tensor_new_2d(ctx, CT_TYPE_F32, COLS, ROWS);
    ct_tensor *ids = ct_tensor_new_1d(ctx, CT_TYPE_I32, 2);
    ct_tensor *copy = ct_cpy(ctx, a, b);
    ct_tensor *rows = ct_get_rows(ctx, a, ids);
    ct_tensor_set_name(rows, "rows");
    ct_graph *g = ct_graph_new(ctx, 16);
    TCHECK(j, copy && rows && g);
    TCHECK(j, ct_graph_build_forward(g, copy) == CT_OK && ct_graph_build_forward(g, rows) == CT_OK);

    ct_buffer *buf = NULL;
    TCHECK(j, ct_context_alloc_tensors(ctx, ct_backend_buffer_type(be), &buf) == CT_OK && buf);
    float x[ROWS * COLS], y[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)(int64_t)(next_rand(&j->rng) % 2001) - 1000.0f;
    int32_t want[2] = {(int32_t)(next_rand(&j->rng) % ROWS), (int32_t)(next_rand(&j->rng) % ROWS)};
    TCHECK(j, ct_tensor_set(a, x, 0, sizeof x) == CT_OK);
    TCHECK(j, ct_tensor_set(ids, want, 0, sizeof want) == CT_OK);
    TCHECK(j, ct_backend_graph_compute(be, g) == CT_OK);
    TCHECK(j, ct_tensor_get(b, y, 0, sizeof y) == CT_OK && memcmp(x, y, sizeof x) == 0);
    TCHECK(j, ct_tensor_get(rows, y, 0, 2 * COLS * sizeof(float)) == CT_OK);
    TCHECK(j, memcmp(y, x + want[0] * COLS, COLS * sizeof(float)) == 0);
    TCHECK(j, memcmp(y + COLS, x + want[1] * COLS, COLS * sizeof(float)) == 0);

    /* an error stays on this thread, with this thread's values */
    int32_t bad[2] = {0, ROWS + j->id};
    TCHECK(j, ct_tensor_set(ids, bad, 0, sizeof bad) == CT_OK);
    TCHECK(j, ct_backend_graph_compute(be, g) == CT_INDEX_OUT_OF_RANGE);
    char expect[32];
    snprintf(expect, sizeof expect, "%d", ROWS + j->id);
    TCHECK(j, ct_last_status() == CT_INDEX_OUT_OF_RANGE && strstr(ct_last_error(), "node 'rows' (GET_ROWS)") &&
                  strstr(ct_last_error(), expect));

    ct_buffer_free(buf);
    ct_context_free(ctx);
    ct_backend_free(be);

    /* backends created and dropped without a compute, and the best one */
    ct_backend *best = NULL;
    TCHECK(j, ct_backend_init_best(&best) == CT_OK && best != NULL);
    ct_backend_free(best);
}

static void *thread_main(void *arg) {
    job *j = arg;
    pthread_barrier_wait(&start);
    for (int iter = 0; iter < N_ITERS; iter++) one_iteration(j, iter);
    return NULL;
}

int main(void) {
    tu_init("test_threads");
    pthread_t threads[N_THREADS];
    job jobs[N_THREADS];
    CHECK(pthread_barrier_init(&start, NULL, N_THREADS) == 0);
    for (int i = 0; i < N_THREADS; i++) {
        jobs[i] = (job){.id = i, .rng = tu_rand_u64()};
        CHECK(pthread_create(&threads[i], NULL, thread_main, &jobs[i]) == 0);
    }
    int total = 0;
    for (int i = 0; i < N_THREADS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK_MSG(jobs[i].failures == 0, "thread %d: %d failures, first: %s", i, jobs[i].failures,
                  jobs[i].first_failure);
        total += jobs[i].checks;
    }
    for (int i = 0; i < N_THREADS; i++) CHECK(jobs[i].checks == jobs[0].checks && jobs[0].checks > N_ITERS);
    printf("%d checks in %d threads\n", total, N_THREADS);
    pthread_barrier_destroy(&start);
    return tu_finish();
}
