/*
 * ct-graph-chain: the per-node cost of a long ggml graph on one ggml device, for the
 * ctensor plugin's devices and ggml's own alike (bench/plugin-nodes.sh, docs/PERF.md).
 *
 *   ct-graph-chain -dev NAME [-l LAYERS] [-n WIDTH] [-r REPS] [--norm-only]
 *
 * The graph is a decode step's skeleton: LAYERS (default 300) times
 *   h = h + rms_norm(h) * w_l        (RMS_NORM, MUL, ADD: 3 nodes a layer)
 * on one row of WIDTH (default 640, Gemma 3 270M's) floats, the norm's MUL the pattern
 * ggml's GPU backends and ctensor's OpenCL backend fuse; --norm-only drops the MUL
 * (2 nodes a layer, nothing to fuse). Graph allocated by ggml-alloc on the device's buffer
 * type, computed once to warm up, then REPS (default 50) times; prints, one item a line:
 *   device: NAME
 *   nodes: N
 *   graph: T us (median of REPS computes)
 *   per node: T/N us
 *   host per node: C/N us   (the calling thread's CPU time per compute over N: the host's
 *                            work of translating, encoding and launching, plus any time a
 *                            driver spins in its wait)
 *   checksum: the sum of the result (for comparing runs: equal with fusion on and off)
 * GGML_BACKEND_PATH loads the plugin (ggml_backend_load_all).
 */
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double thread_cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(const char *argv0) {
    fprintf(stderr, "usage: %s -dev NAME [-l LAYERS] [-n WIDTH] [-r REPS] [--norm-only]\n", argv0);
    exit(2);
}

int main(int argc, char **argv) {
    const char *dev_name = NULL;
    int layers = 300, width = 640, reps = 50;
    int norm_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-dev") && i + 1 < argc) dev_name = argv[++i];
        else if (!strcmp(argv[i], "-l") && i + 1 < argc) layers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) width = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--norm-only")) norm_only = 1;
        else usage(argv[0]);
    }
    if (!dev_name || layers < 1 || width < 1 || reps < 1) usage(argv[0]);

    ggml_backend_load_all();
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(dev_name);
    if (!dev) {
        fprintf(stderr, "ct-graph-chain: no device %s; devices:", dev_name);
        for (size_t i = 0; i < ggml_backend_dev_count(); i++)
            fprintf(stderr, " %s", ggml_backend_dev_name(ggml_backend_dev_get(i)));
        fprintf(stderr, "\n");
        return 1;
    }
    ggml_backend_t be = ggml_backend_dev_init(dev, NULL);
    if (!be) {
        fprintf(stderr, "ct-graph-chain: cannot start %s\n", dev_name);
        return 1;
    }

    const size_t n_tensors = (size_t)layers * 4 + 8;
    struct ggml_init_params ip = {
        .mem_size = n_tensors * ggml_tensor_overhead() + ggml_graph_overhead_custom(n_tensors, false),
        .mem_buffer = NULL,
        .no_alloc = true};
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *h0 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, width);
    ggml_set_input(h0);
    struct ggml_tensor **w = malloc((size_t)layers * sizeof *w);
    struct ggml_tensor *h = h0;
    for (int l = 0; l < layers; l++) {
        struct ggml_tensor *n = ggml_rms_norm(ctx, h, 1e-6f);
        if (!norm_only) {
            w[l] = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, width);
            n = ggml_mul(ctx, n, w[l]);
        }
        h = ggml_add(ctx, h, n);
    }
    ggml_set_output(h);
    struct ggml_cgraph *gf = ggml_new_graph_custom(ctx, n_tensors, false);
    ggml_build_forward_expand(gf, h);

    /* the weights and input live in a buffer of their own; ggml-alloc places the rest */
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(ctx, be);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(be));
    if (!wbuf || !galloc || !ggml_gallocr_alloc_graph(galloc, gf)) {
        fprintf(stderr, "ct-graph-chain: allocation failed on %s\n", dev_name);
        return 1;
    }
    float *buf = malloc((size_t)width * sizeof *buf);
    for (int i = 0; i < width; i++) buf[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    ggml_backend_tensor_set(h0, buf, 0, (size_t)width * sizeof *buf);
    for (int l = 0; l < layers && !norm_only; l++) {
        for (int i = 0; i < width; i++) buf[i] = 0.9f + (float)((i + l) % 7) / 30.0f;
        ggml_backend_tensor_set(w[l], buf, 0, (size_t)width * sizeof *buf);
    }

    if (ggml_backend_graph_compute(be, gf) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "ct-graph-chain: compute failed on %s\n", dev_name);
        return 1;
    }
    double *t = malloc((size_t)reps * sizeof *t);
    const double cpu0 = thread_cpu_us();
    for (int r = 0; r < reps; r++) {
        const double t0 = now_us();
        ggml_backend_graph_compute(be, gf);
        ggml_backend_synchronize(be);
        t[r] = now_us() - t0;
    }
    const double cpu = (thread_cpu_us() - cpu0) / reps;
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    const double med = t[reps / 2];
    const int nodes = ggml_graph_n_nodes(gf);
    ggml_backend_tensor_get(h, buf, 0, (size_t)width * sizeof *buf);
    double sum = 0;
    for (int i = 0; i < width; i++) sum += buf[i];

    printf("device: %s\n", dev_name);
    printf("nodes: %d\n", nodes);
    printf("graph: %.1f us (median of %d computes)\n", med, reps);
    printf("per node: %.3f us\n", med / nodes);
    printf("host per node: %.3f us\n", cpu / nodes);
    printf("checksum: %.9g\n", sum);

    free(t);
    free(buf);
    free(w);
    ggml_gallocr_free(galloc);
    ggml_backend_buffer_free(wbuf);
    ggml_free(ctx);
    ggml_backend_free(be);
    return 0;
}
