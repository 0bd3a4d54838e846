/*
 * test_ggml_graph_cache: the plugin keeps a graph's translation between computes and
 * translates afresh when anything it read differs (ggml/README.md, graph_compute).
 *
 *   test_ggml_graph_cache PLUGIN
 *
 * On every device the plugin registers, one backend computes a sequence of graphs. Each
 * graph is built in the same caller memory and placed in the same buffer, so consecutive
 * graphs have equal tensor addresses (as a freed graph's memory reused for the next one
 * has, and as llama.cpp rebuilds its decode graph token after token) and differ only where
 * a step says: new input values, op_params, a view's offset, data addresses, an op at the
 * same address, the node count, shapes, a re-allocated buffer. Each step's result must
 * equal, bit for bit, that of a new backend of the same device (which translates), match
 * ggml-cpu's, and differ from the step before's; and with CT_GGML_DEBUG=1 (set by ctest)
 * the plugin's log must say the kept translation ran where nothing changed and a new one
 * everywhere else.
 */
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 4
#define VIEW_ROWS 2
#define MAX_WIDTH 96
#define MEM_BYTES (1u << 20)
#define BUF_BYTES (1u << 20)

/* A graph: x [width, ROWS]; `layers` times h = scale(rms_norm(h, eps) * w, scale) (+ w with
 * add); then the rows from view_row of the last h, transposed and made contiguous. */
typedef struct spec {
    const char *what;
    int width, layers;
    bool add;
    float eps, scale;
    int view_row;
    size_t pad; /* bytes of the buffer left before the first tensor */
    int seed;   /* the input values */
    bool realloc_buffer;
    int expect; /* the plugin's log for this step: 1 kept translation, 0 translated, -1 either */
} spec;

/* One ggml graph at a time on one backend, built in mem and placed in buf. */
typedef struct runner {
    ggml_backend_t be;
    ggml_backend_buffer_t buf;
    void *mem;
} runner;

static int n_kept, n_translated;

static void log_cb(enum ggml_log_level level, const char *text, void *ud) {
    (void)ud;
    if (strstr(text, "ggml-ctensor:") && strstr(text, ": the kept translation")) n_kept++;
    else if (strstr(text, "ggml-ctensor:") && strstr(text, " nodes: translated")) n_translated++;
    else if (level >= GGML_LOG_LEVEL_WARN) fputs(text, stderr);
}

static bool runner_init(runner *r, ggml_backend_dev_t dev) {
    r->be = ggml_backend_dev_init(dev, NULL);
    r->mem = malloc(MEM_BYTES);
    r->buf = r->be ? ggml_backend_alloc_buffer(r->be, BUF_BYTES) : NULL;
    return r->be && r->mem && r->buf;
}

static void runner_free(runner *r) {
    if (r->buf) ggml_backend_buffer_free(r->buf);
    if (r->be) ggml_backend_free(r->be);
    free(r->mem);
}

/* Computes s on r; the result (VIEW_ROWS * width floats) into out. */
static bool compute(runner *r, const spec *s, float *out) {
    struct ggml_init_params ip = {.mem_size = MEM_BYTES, .mem_buffer = r->mem, .no_alloc = true};
    struct ggml_context *ctx = ggml_init(ip);
    if (!ctx) return false;
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s->width, ROWS);
    struct ggml_tensor *w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, s->width);
    ggml_set_input(x);
    ggml_set_input(w);
    struct ggml_tensor *h = x;
    for (int l = 0; l < s->layers; l++) {
        h = ggml_rms_norm(ctx, h, s->eps);
        h = s->add ? ggml_add(ctx, h, w) : ggml_mul(ctx, h, w);
        h = ggml_scale(ctx, h, s->scale);
    }
    struct ggml_tensor *v = ggml_view_2d(ctx, h, s->width, VIEW_ROWS, h->nb[1], (size_t)s->view_row * h->nb[1]);
    struct ggml_tensor *res = ggml_cont(ctx, ggml_transpose(ctx, v));
    ggml_set_output(res);
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, res);

    bool ok = true;
    struct ggml_tallocr ta = ggml_tallocr_new(r->buf);
    ta.offset += s->pad;
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t && ok; t = ggml_get_next_tensor(ctx, t)) {
        if (!t->view_src) ok = ggml_tallocr_alloc(&ta, t) == GGML_STATUS_SUCCESS;
    }
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t && ok; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src) ok = ggml_backend_view_init(t) == GGML_STATUS_SUCCESS;
    }
    if (ok) {
        float xv[MAX_WIDTH * ROWS], wv[MAX_WIDTH];
        for (int i = 0; i < s->width * ROWS; i++) xv[i] = sinf(0.37f * (float)i + (float)s->seed);
        for (int i = 0; i < s->width; i++) wv[i] = 0.5f + (float)(i % 7) / 10.0f;
        ggml_backend_tensor_set(x, xv, 0, ggml_nbytes(x));
        ggml_backend_tensor_set(w, wv, 0, ggml_nbytes(w));
        ok = ggml_backend_graph_compute(r->be, gf) == GGML_STATUS_SUCCESS;
    }
    if (ok) ggml_backend_tensor_get(res, out, 0, ggml_nbytes(res));
    ggml_free(ctx);
    return ok;
}

static const spec steps[] = {
    {"first compute", 64, 2, false, 1e-6f, 0.5f, 1, 0, 1, false, 0},
    {"new inputs", 64, 2, false, 1e-6f, 0.5f, 1, 0, 2, false, 1},
    {"new inputs again", 64, 2, false, 1e-6f, 0.5f, 1, 0, 3, false, 1},
    {"SCALE's op_params", 64, 2, false, 1e-6f, 2.0f, 1, 0, 3, false, 0},
    {"RMS_NORM's op_params", 64, 2, false, 0.25f, 2.0f, 1, 0, 3, false, 0},
    {"a view's offset", 64, 2, false, 0.25f, 2.0f, 2, 0, 3, false, 0},
    {"data addresses", 64, 2, false, 0.25f, 2.0f, 2, 4096, 7, false, 0},
    {"another op at the same address", 64, 2, true, 0.25f, 2.0f, 2, 4096, 3, false, 0},
    {"more nodes", 64, 3, true, 0.25f, 2.0f, 2, 4096, 3, false, 0},
    {"shapes", 96, 3, true, 0.25f, 2.0f, 2, 4096, 3, false, 0},
    {"the same graph", 96, 3, true, 0.25f, 2.0f, 2, 4096, 4, false, 1},
    /* the new buffer may take the old one's addresses: then the translation is the same */
    {"a re-allocated buffer", 96, 3, true, 0.25f, 2.0f, 2, 4096, 5, true, -1},
    {"new inputs after it", 96, 3, true, 0.25f, 2.0f, 2, 4096, 6, false, 1},
    {"back to the first graph", 64, 2, false, 1e-6f, 0.5f, 1, 0, 1, false, 0},
};

static int test_device(ggml_backend_dev_t dev, ggml_backend_dev_t cpu) {
    const char *name = ggml_backend_dev_name(dev);
    int failures = 0;
    runner kept = {0}, ref = {0};
    if (!runner_init(&kept, dev) || !runner_init(&ref, cpu)) {
        fprintf(stderr, "%s: cannot start the backends\n", name);
        runner_free(&kept);
        runner_free(&ref);
        return 1;
    }
    float prev[VIEW_ROWS * MAX_WIDTH];
    int prev_n = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        const spec *s = &steps[i];
        const int n = VIEW_ROWS * s->width;
        float got[VIEW_ROWS * MAX_WIDTH], fresh_out[VIEW_ROWS * MAX_WIDTH], want[VIEW_ROWS * MAX_WIDTH];
        if (s->realloc_buffer) {
            ggml_backend_buffer_free(kept.buf);
            kept.buf = ggml_backend_alloc_buffer(kept.be, BUF_BYTES);
            if (!kept.buf) {
                fprintf(stderr, "%s: cannot allocate a buffer\n", name);
                failures++;
                break;
            }
        }
        n_kept = n_translated = 0;
        bool ok = compute(&kept, s, got);
        const int step_kept = n_kept, step_translated = n_translated;
        runner fresh = {0};
        ok = ok && runner_init(&fresh, dev) && compute(&fresh, s, fresh_out) && compute(&ref, s, want);
        runner_free(&fresh);
        if (!ok) {
            fprintf(stderr, "%s: step %zu (%s): a compute failed\n", name, i, s->what);
            failures++;
            continue;
        }
        const char *why = NULL;
        char msg[160];
        if (memcmp(got, fresh_out, (size_t)n * sizeof *got) != 0) why = "differs from a new backend's result";
        for (int j = 0; j < n && !why; j++) {
            if (!(fabsf(got[j] - want[j]) <= 1e-4f * (1.0f + fabsf(want[j])))) {
                snprintf(msg, sizeof msg, "[%d] = %.7g, ggml-cpu %.7g", j, got[j], want[j]);
                why = msg;
            }
        }
        if (!why && n == prev_n && memcmp(want, prev, (size_t)n * sizeof *want) == 0) {
            why = "ggml-cpu's result is the step before's: the step tests nothing";
        }
        if (!why && step_kept + step_translated != 1) {
            snprintf(msg, sizeof msg, "%d kept and %d new translations logged (is CT_GGML_DEBUG=1 set?)", step_kept,
                     step_translated);
            why = msg;
        }
        if (!why && s->expect >= 0 && step_kept != s->expect) {
            why = s->expect ? "translated again, the kept translation expected" : "the kept translation ran";
        }
        printf("%s: step %2zu %-32s %s%s\n", name, i, s->what, why ? "FAIL: " : "ok", why ? why : "");
        failures += why != NULL;
        memcpy(prev, want, (size_t)n * sizeof *want);
        prev_n = n;
    }
    runner_free(&kept);
    runner_free(&ref);
    return failures;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PLUGIN\n", argv[0]);
        return 2;
    }
    ggml_log_set(log_cb, NULL);
    ggml_backend_reg_t reg = ggml_backend_load(argv[1]);
    ggml_backend_dev_t cpu = ggml_backend_dev_by_name("CPU");
    if (!reg || !cpu) {
        fprintf(stderr, "test_ggml_graph_cache: %s\n", !reg ? "the plugin did not load" : "ggml has no CPU device");
        return 1;
    }
    int failures = 0, devices = 0;
    for (size_t i = 0; i < ggml_backend_reg_dev_count(reg); i++) {
        failures += test_device(ggml_backend_reg_dev_get(reg, i), cpu);
        devices++;
    }
    if (devices == 0) {
        fprintf(stderr, "test_ggml_graph_cache: the plugin registered no device\n");
        return 1;
    }
    printf("%d devices, %d failures\n", devices, failures);
    return failures != 0;
}
