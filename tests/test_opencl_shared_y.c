/* OpenCL MUL_MATs that share src1 (docs/BACKENDS.md, "Shared src1"): the q, k and v
 * projections of one input, or a feed-forward's gate and up, run on the same src1, and the
 * later ones take the copy of src1 (8-bit blocks, or F32 widened from F16) that the first
 * left in the work memory instead of making it again, while nothing took the work memory or
 * wrote src1 in between. Each graph is computed on the CPU backend, on an OpenCL backend
 * whole, and on the same OpenCL backend one MUL_MAT per graph. Checked:
 *   - the whole graph's results are the same bytes as the one-product graphs', and within
 *     the mat-vec threshold of the CPU's;
 *   - the whole graph launched the quantizing (or widening) kernel as often as expected,
 *     counted by the backend's profile (CT_OPENCL_PROFILE is set for it): once for
 *     products in a row, or with a node between that leaves both alone (a SCALE, as a
 *     model's ROPE between q and k); again after a copy into src1, after a MUL_MAT of
 *     another src1 or a long row's ARGSORT (which take the work memory), after a Q6_K weight
 *     (whose blocks are laid out apart), between a weight whose src1 blocks share a scale
 *     per 256 values (Q4_K) and one with a scale per block (Q8_0), and on another src1.
 * Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl_shared_y");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

#include "opencl/opencl_internal.h"

enum { SKIP = 77, MAX_T = 32, MAX_MM = 4 };

/* What lies between the first and the second product. */
enum { NOTHING, SCALE_FIRST, COPY_INTO_Y, OTHER_PRODUCT, LONG_ARGSORT };

/* One case: MUL_MATs of weights of types w[i] (m rows each, k wide) by one src1 of n
 * columns of type yt; `between` the first two; `other_y` gives the last MUL_MAT a src1 of
 * its own. */
typedef struct mm_case {
    const char *what;
    ct_type w[MAX_MM];
    int n_mm;
    int64_t m, k, n;
    ct_type yt;
    int between;
    bool other_y;
    int want_y_kernels; /* launches of the quantizing or widening kernel in the whole graph */
} mm_case;

static ct_backend *cpu, *ocl;

static void fill(ct_tensor *t, int salt) {
    const size_t n = ct_nbytes(t);
    uint8_t *bytes = malloc(n);
    if (!bytes) return;
    if (t->type == CT_TYPE_F32) {
        for (size_t i = 0; i < n / 4; i++) {
            const float v = (float)((double)(((i + 1) * 2654435761u + (size_t)salt * 40503u) % 2001) / 1000.0 - 1.0);
            memcpy(bytes + 4 * i, &v, 4);
        }
    } else if (t->type == CT_TYPE_F16) {
        for (size_t i = 0; i < n / 2; i++) {
            const uint16_t h = (uint16_t)((0x3000 + (i * 7 + (size_t)salt) % 0x0c00) | ((i & 1) << 15));
            memcpy(bytes + 2 * i, &h, 2);
        }
    } else { /* a weight */
        tu_fill_quantized(t->type, bytes, ct_nelements(t), (unsigned)salt);
    }
    ct_tensor_set(t, bytes, 0, n);
    free(bytes);
}

/* The case's graph on be: every product (or only product `only`, when >= 0), results in res. */
static bool compute(const mm_case *c, ct_backend *be, int only, float *res[MAX_MM], uint64_t *y_kernels) {
    ct_context *ctx = ct_context_new(
        (ct_context_params){.mem_size = MAX_T * ct_tensor_overhead() + ct_graph_overhead(MAX_T), .no_alloc = true});
    ct_graph *g = ctx ? ct_graph_new(ctx, MAX_T) : NULL;
    bool ok = g != NULL;
    ct_tensor *y = ok ? ct_tensor_new_2d(ctx, c->yt, c->k, c->n) : NULL;
    ct_tensor *y2 = ok && (c->other_y || c->between != NOTHING) ? ct_tensor_new_2d(ctx, c->yt, c->k, c->n) : NULL;
    /* src1 reaches the products through a view, as a model's reshaped activations do */
    ct_tensor *yv = y ? ct_view_2d(ctx, y, c->k, c->n, y->nb[1], 0) : NULL;
    ct_tensor *w[MAX_MM] = {0}, *p[MAX_MM] = {0};
    for (int i = 0; i < c->n_mm && ok; i++) {
        w[i] = ct_tensor_new_2d(ctx, c->w[i], c->k, c->m);
        ct_tensor *src1 = c->other_y && i == c->n_mm - 1 ? y2 : yv;
        p[i] = w[i] && src1 ? ct_mul_mat(ctx, w[i], src1) : NULL;
        ok = p[i] != NULL;
    }
    ct_tensor *wz = ok && c->between == OTHER_PRODUCT ? ct_tensor_new_2d(ctx, c->w[0], c->k, c->m) : NULL;
    /* rows past one sorting block are merged through the work memory */
    ct_tensor *z = ok && c->between == LONG_ARGSORT ? ct_tensor_new_1d(ctx, CT_TYPE_F32, 5000) : NULL;
    ct_tensor *mid = !ok ? NULL
                     : c->between == SCALE_FIRST   ? ct_scale(ctx, p[0], 0.5f)
                     : c->between == COPY_INTO_Y   ? ct_cpy(ctx, y2, y)
                     : c->between == OTHER_PRODUCT ? (wz ? ct_mul_mat(ctx, wz, y2) : NULL)
                     : c->between == LONG_ARGSORT  ? (z ? ct_argsort(ctx, z, CT_SORT_ORDER_ASC) : NULL)
                                                   : NULL;
    ok = ok && (c->between == NOTHING || mid);
    /* the node between comes before the second product in every graph, so that the
     * one-product graphs read what the whole one reads */
    for (int i = 0; i < c->n_mm && ok; i++) {
        if (i == 1 && mid) ok = ct_graph_build_forward(g, mid) == CT_OK;
        if (ok && (only < 0 || only == i)) ok = ct_graph_build_forward(g, p[i]) == CT_OK;
    }
    ct_buffer *buf = NULL;
    ok = ok && ct_context_alloc_tensors(ctx, ct_backend_buffer_type(be), &buf) == CT_OK;
    CHECK_MSG(ok, "%s: building on %s: %s", c->what, ct_backend_name(be), ct_last_error());
    if (ok) {
        fill(y, 1);
        if (y2) fill(y2, 2);
        if (wz) fill(wz, 9);
        if (z) fill(z, 3);
        for (int i = 0; i < c->n_mm; i++) fill(w[i], 10 + i);
    }
    ct_ocl_backend *ob = ct_backend_is_cpu(be) ? NULL : be->context;
    const uint64_t q0 = ob ? ob->profile.launches[CT_OCL_K_QUANTIZE_QY] + ob->profile.launches[CT_OCL_K_MUL_MAT_F16_Y] : 0;
    ok = ok && ct_backend_graph_compute(be, g) == CT_OK;
    CHECK_MSG(ok, "%s: compute on %s: %s", c->what, ct_backend_name(be), ct_last_error());
    if (y_kernels && ob) {
        *y_kernels = ob->profile.launches[CT_OCL_K_QUANTIZE_QY] + ob->profile.launches[CT_OCL_K_MUL_MAT_F16_Y] - q0;
    }
    for (int i = 0; i < c->n_mm && ok; i++) {
        if (only >= 0 && only != i) continue;
        res[i] = malloc(ct_nbytes(p[i]));
        ok = res[i] && ct_tensor_get(p[i], res[i], 0, ct_nbytes(p[i])) == CT_OK;
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
    return ok;
}

static void run(const mm_case *c) {
    float *want[MAX_MM] = {0}, *whole[MAX_MM] = {0}, *alone[MAX_MM] = {0};
    uint64_t y_kernels = 0;
    bool ok = compute(c, cpu, -1, want, NULL) && compute(c, ocl, -1, whole, &y_kernels);
    for (int i = 0; i < c->n_mm && ok; i++) ok = compute(c, ocl, i, alone, NULL);
    const size_t n = (size_t)(c->m * c->n);
    for (int i = 0; i < c->n_mm && ok; i++) {
        CHECK_MSG(memcmp(whole[i], alone[i], n * sizeof(float)) == 0, "%s: product %d differs from its own graph's",
                  c->what, i);
        double err = 0, ref = 0;
        for (size_t j = 0; j < n; j++) {
            err += ((double)whole[i][j] - want[i][j]) * ((double)whole[i][j] - want[i][j]);
            ref += (double)want[i][j] * want[i][j];
        }
        CHECK_MSG(err <= 5e-4 * ref, "%s: product %d NMSE %g against the CPU", c->what, i, ref > 0 ? err / ref : err);
    }
    CHECK_MSG(!ok || y_kernels == (uint64_t)c->want_y_kernels, "%s: %llu src1 copies made, expected %d", c->what,
              (unsigned long long)y_kernels, c->want_y_kernels);
    printf("%s: %llu src1 copies for %d products\n", c->what, (unsigned long long)y_kernels, c->n_mm);
    for (int i = 0; i < MAX_MM; i++) {
        free(want[i]);
        free(whole[i]);
        free(alone[i]);
    }
}

int main(void) {
    tu_init("test_opencl_shared_y");
    ct_device *dev = tu_opencl_device();
    if (!dev) {
        printf("SKIP: no OpenCL device\n");
        return SKIP;
    }
    setenv("CT_OPENCL_PROFILE", "1", 1); /* the launch counts */
    CHECK(ct_backend_cpu_init(&cpu) == CT_OK);
    CHECK(ct_device_init_backend(dev, NULL, &ocl) == CT_OK);
    unsetenv("CT_OPENCL_PROFILE");
    if (!cpu || !ocl) return tu_finish();
    ct_log_set_level(CT_LOG_ERROR); /* the profile's lines at the backend's free */
    const ct_type Q4_0 = CT_TYPE_Q4_0, Q8_0 = CT_TYPE_Q8_0, Q4_K = CT_TYPE_Q4_K, Q5_K = CT_TYPE_Q5_K, Q6_K = CT_TYPE_Q6_K;
    const mm_case cases[] = {
        {"q, k, v: Q4_0, one column", {Q4_0, Q4_0, Q4_0}, 3, 96, 256, 1, CT_TYPE_F32, NOTHING, false, 1},
        {"gate, up: Q4_K, Q5_K, 3 columns", {Q4_K, Q5_K}, 2, 64, 512, 3, CT_TYPE_F32, NOTHING, false, 1},
        {"Q4_K, Q8_0 (a scale per 256 values, per 32)", {Q4_K, Q8_0}, 2, 64, 512, 3, CT_TYPE_F32, NOTHING, false, 2},
        {"Q4_K, Q6_K, Q6_K, Q4_0 (the layouts apart)", {Q4_K, Q6_K, Q6_K, Q4_0}, 4, 40, 256, 2, CT_TYPE_F32,
         NOTHING, false, 3},
        {"a SCALE between", {Q8_0, Q8_0, Q8_0}, 3, 32, 256, 1, CT_TYPE_F32, SCALE_FIRST, false, 1},
        {"a copy into src1 between", {Q8_0, Q4_0, Q4_0}, 3, 32, 256, 1, CT_TYPE_F32, COPY_INTO_Y, false, 2},
        {"a product of another src1 between", {Q4_0, Q4_0, Q4_0}, 3, 32, 256, 1, CT_TYPE_F32, OTHER_PRODUCT, false,
         3},
        {"an ARGSORT of a long row between", {Q4_0, Q4_0}, 2, 32, 256, 1, CT_TYPE_F32, LONG_ARGSORT, false, 2},
        {"the last on another src1", {Q4_0, Q4_0, Q4_0}, 3, 32, 256, 1, CT_TYPE_F32, NOTHING, true, 2},
        {"F16 src1, quantized weights", {Q4_0, Q8_0}, 2, 48, 256, 1, CT_TYPE_F16, NOTHING, false, 2},
        {"F16 src1, F16 weights", {CT_TYPE_F16, CT_TYPE_F16, CT_TYPE_F16}, 3, 48, 128, 2, CT_TYPE_F16, NOTHING,
         false, 1},
        {"F16 src1, a copy into it between", {CT_TYPE_F16, CT_TYPE_F16}, 2, 48, 128, 2, CT_TYPE_F16, COPY_INTO_Y,
         false, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run(&cases[i]);
    ct_backend_free(ocl);
    ct_backend_free(cpu);
    return tu_finish();
}

#endif
