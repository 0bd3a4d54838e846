/* OpenCL buffers over caller memory at any address, and the limits CT_OPENCL_MAX_SIZE sets
 * (docs/RELIABILITY.md, docs/BACKENDS.md):
 *   - every op family the OpenCL backend computes, on tensors in a buffer wrapped at a
 *     pointer offset by 0, 1, 2, 4 and 8 bytes from a page, with the device's limit and
 *     with limits that are not a page multiple: the CPU backend's bytes (GET_ROWS,
 *     SET_ROWS, CPY), its results within ggml's thresholds (MUL_MAT, the norms,
 *     SUM_ROWS, MEAN), or, for float arithmetic on data that is not 4-byte aligned,
 *     supports_op refusing the node and compute returning CT_UNSUPPORTED; never a crash;
 *   - the mapped buffer type accepts every size up to the maximum it advertises;
 *   - a wrapped buffer has at most one view per page;
 *   - CT_OPENCL_MAX_SIZE with a sign, garbage or a value below the minimum is refused
 *     with a warning;
 *   - ct_buffer_type_alloc and ct_buffer_clear out of memory (RLIMIT_AS) return
 *     CT_OUT_OF_MEMORY instead of aborting inside the driver.
 * CT_OPENCL_MAX_SIZE is read once per process, at device discovery, and a check that
 * could crash must not take the test with it, so each runs in a child: this program
 * again, exec'd with the arguments and environment it needs; a child killed by a signal
 * is a failure. Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl_hostptr");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

#include "opencl/opencl_internal.h"

#include <math.h>
#include <sys/resource.h>
#include <unistd.h>

enum { SKIP = 77 };

#define MIB ((size_t)1 << 20)
/* The wrapped region of the alignment children, the max_tensor_size they wrap it with,
 * and where their tensors start: past the first view when the limit is about 1 MiB. */
#define WRAP_BYTES (5 * MIB / 2)
#define WRAP_MAX_TENSOR ((size_t)64 << 10)
#define PLACE_AT (5 * MIB / 4)
/* Bytes of the host block before and after the wrapped region, filled with GUARD. */
#define GUARD_BYTES 4096
#define GUARD 0x5A

/* ---- warnings ------------------------------------------------------------------ */

static char warnings[8192];

static void log_capture(ct_log_level level, const char *message, void *user_data) {
    (void)user_data;
    if (level < CT_LOG_WARN) return;
    size_t n = strlen(warnings);
    snprintf(warnings + n, sizeof warnings - n, "%s\n", message);
    fprintf(stderr, "[log] %s\n", message);
}

/* ---- op families at any address ------------------------------------------------ */

/* Indices (every indexed tensor has 8 rows; distinct, so SET_ROWS is deterministic). */
static const int64_t IDX[4] = {5, 1, 7, 2};

typedef struct tcase {
    const char *name;
    ct_tensor *(*build)(ct_context *ctx);
    double nmse; /* 0: the CPU's bytes; else the largest normalized mean squared error */
} tcase;

static ct_tensor *idx_tensor(ct_context *ctx, ct_type t) { return ct_tensor_new_1d(ctx, t, 4); }

static ct_tensor *b_get_rows_f32(ct_context *c) {
    return ct_get_rows(c, ct_tensor_new_2d(c, CT_TYPE_F32, 64, 8), idx_tensor(c, CT_TYPE_I32));
}
static ct_tensor *b_get_rows_f16(ct_context *c) {
    return ct_get_rows(c, ct_tensor_new_2d(c, CT_TYPE_F16, 64, 8), idx_tensor(c, CT_TYPE_I32));
}
static ct_tensor *b_get_rows_q8_0(ct_context *c) {
    return ct_get_rows(c, ct_tensor_new_2d(c, CT_TYPE_Q8_0, 64, 8), idx_tensor(c, CT_TYPE_I32));
}
static ct_tensor *b_get_rows_i32(ct_context *c) {
    return ct_get_rows(c, ct_tensor_new_2d(c, CT_TYPE_I32, 20, 8), idx_tensor(c, CT_TYPE_I32));
}
static ct_tensor *set_rows(ct_context *c, ct_type dst, ct_type src, ct_type idx) {
    ct_tensor *a = ct_tensor_new_2d(c, dst, 64, 8);
    ct_tensor *b = ct_tensor_new_2d(c, src, 64, 4);
    return ct_set_rows(c, a, b, idx_tensor(c, idx));
}
static ct_tensor *b_set_rows_f16(ct_context *c) { return set_rows(c, CT_TYPE_F16, CT_TYPE_F32, CT_TYPE_I64); }
static ct_tensor *b_set_rows_f32(ct_context *c) { return set_rows(c, CT_TYPE_F32, CT_TYPE_F32, CT_TYPE_I32); }
static ct_tensor *b_set_rows_q8_0(ct_context *c) { return set_rows(c, CT_TYPE_Q8_0, CT_TYPE_F32, CT_TYPE_I64); }
static ct_tensor *b_set_rows_q4_0_f16(ct_context *c) {
    return set_rows(c, CT_TYPE_Q4_0, CT_TYPE_F16, CT_TYPE_I32);
}
static ct_tensor *cpy(ct_context *c, ct_type st, ct_type dt, int64_t n0, int64_t n1) {
    return ct_cpy(c, ct_tensor_new_2d(c, st, n0, n1), ct_tensor_new_2d(c, dt, n0, n1));
}
static ct_tensor *b_cpy_f32_f32(ct_context *c) { return cpy(c, CT_TYPE_F32, CT_TYPE_F32, 64, 6); }
static ct_tensor *b_cpy_f32_f16(ct_context *c) { return cpy(c, CT_TYPE_F32, CT_TYPE_F16, 64, 6); }
static ct_tensor *b_cpy_f16_f32(ct_context *c) { return cpy(c, CT_TYPE_F16, CT_TYPE_F32, 64, 6); }
static ct_tensor *b_cpy_f32_q8_0(ct_context *c) { return cpy(c, CT_TYPE_F32, CT_TYPE_Q8_0, 64, 6); }
static ct_tensor *b_cpy_q8_0_f32(ct_context *c) { return cpy(c, CT_TYPE_Q8_0, CT_TYPE_F32, 64, 6); }
static ct_tensor *b_cpy_f32_bf16(ct_context *c) { return cpy(c, CT_TYPE_F32, CT_TYPE_BF16, 36, 5); }
static ct_tensor *b_cont_transposed(ct_context *c) {
    return ct_cont(c, ct_transpose(c, ct_tensor_new_2d(c, CT_TYPE_F32, 40, 36)));
}
static ct_tensor *b_cont_view(ct_context *c) {
    ct_tensor *a = ct_tensor_new_2d(c, CT_TYPE_F32, 64, 6);
    return ct_cont(c, ct_view_2d(c, a, 60, 5, a->nb[1], 4 * sizeof(float)));
}
static ct_tensor *b_dup_f16(ct_context *c) { return ct_dup(c, ct_tensor_new_2d(c, CT_TYPE_F16, 48, 7)); }
static ct_tensor *mul_mat(ct_context *c, ct_type t, int64_t k, int64_t m, int64_t n) {
    return ct_mul_mat(c, ct_tensor_new_2d(c, t, k, m), ct_tensor_new_2d(c, CT_TYPE_F32, k, n));
}
static ct_tensor *b_mul_mat_f32(ct_context *c) { return mul_mat(c, CT_TYPE_F32, 64, 16, 3); }
static ct_tensor *b_mul_mat_f16_tiles(ct_context *c) { return mul_mat(c, CT_TYPE_F16, 64, 32, 20); }
static ct_tensor *b_mul_mat_q8_0_vec(ct_context *c) { return mul_mat(c, CT_TYPE_Q8_0, 128, 16, 1); }
static ct_tensor *b_mul_mat_q8_0(ct_context *c) { return mul_mat(c, CT_TYPE_Q8_0, 128, 16, 5); }
static ct_tensor *b_mul_mat_q4_0(ct_context *c) { return mul_mat(c, CT_TYPE_Q4_0, 64, 8, 2); }
static ct_tensor *b_mul_mat_c4(ct_context *c) { return mul_mat(c, CT_TYPE_F32, 4, 8, 3); }
static ct_tensor *b_rms_norm(ct_context *c) { return ct_rms_norm(c, ct_tensor_new_2d(c, CT_TYPE_F32, 64, 4), 1e-6f); }
static ct_tensor *b_norm(ct_context *c) { return ct_norm(c, ct_tensor_new_2d(c, CT_TYPE_F32, 100, 3), 1e-5f); }
static ct_tensor *b_l2_norm(ct_context *c) { return ct_l2_norm(c, ct_tensor_new_2d(c, CT_TYPE_F32, 64, 4), 1e-6f); }
static ct_tensor *b_group_norm(ct_context *c) {
    return ct_group_norm(c, ct_tensor_new_3d(c, CT_TYPE_F32, 8, 2, 4), 2, 1e-6f);
}
static ct_tensor *b_sum_rows(ct_context *c) { return ct_sum_rows(c, ct_tensor_new_2d(c, CT_TYPE_F32, 64, 4)); }
static ct_tensor *b_mean(ct_context *c) { return ct_mean(c, ct_tensor_new_2d(c, CT_TYPE_F32, 33, 5)); }

static const tcase CASES[] = {
    {"GET_ROWS F32", b_get_rows_f32, 0},
    {"GET_ROWS F16", b_get_rows_f16, 0},
    {"GET_ROWS Q8_0", b_get_rows_q8_0, 0},
    {"GET_ROWS I32", b_get_rows_i32, 0},
    {"SET_ROWS F32->F16", b_set_rows_f16, 0},
    {"SET_ROWS F32->F32", b_set_rows_f32, 0},
    {"SET_ROWS F32->Q8_0", b_set_rows_q8_0, 0},
    {"SET_ROWS F16->Q4_0", b_set_rows_q4_0_f16, 0},
    {"CPY F32->F32", b_cpy_f32_f32, 0},
    {"CPY F32->F16", b_cpy_f32_f16, 0},
    {"CPY F16->F32", b_cpy_f16_f32, 0},
    {"CPY F32->Q8_0", b_cpy_f32_q8_0, 0},
    {"CPY Q8_0->F32", b_cpy_q8_0_f32, 0},
    {"CPY F32->BF16", b_cpy_f32_bf16, 0},
    {"CONT transposed", b_cont_transposed, 0},
    {"CONT view", b_cont_view, 0},
    {"DUP F16", b_dup_f16, 0},
    {"MUL_MAT F32", b_mul_mat_f32, 5e-4},
    {"MUL_MAT F16 tiles", b_mul_mat_f16_tiles, 5e-4},
    {"MUL_MAT Q8_0 vec", b_mul_mat_q8_0_vec, 5e-4},
    {"MUL_MAT Q8_0", b_mul_mat_q8_0, 5e-4},
    {"MUL_MAT Q4_0", b_mul_mat_q4_0, 5e-4},
    {"MUL_MAT c4", b_mul_mat_c4, 5e-4},
    {"RMS_NORM", b_rms_norm, 1e-7},
    {"NORM", b_norm, 1e-7},
    {"L2_NORM", b_l2_norm, 1e-7},
    {"GROUP_NORM", b_group_norm, 1e-7},
    {"SUM_ROWS", b_sum_rows, 1e-7},
    {"MEAN", b_mean, 1e-7},
};
enum { N_CASES = sizeof CASES / sizeof CASES[0] };

/* A small deterministic generator, so both backends get the same bytes. */
static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Bytes for leaf t (creation index i of case c). */
static bool leaf_bytes(const ct_tensor *t, int c, int i, uint8_t *out) {
    uint64_t s = (uint64_t)c * 1000 + (uint64_t)i;
    const int64_t n = ct_nelements(t);
    if (t->type == CT_TYPE_I32 || t->type == CT_TYPE_I64) {
        for (int64_t k = 0; k < n; k++) {
            if (t->type == CT_TYPE_I32) ((int32_t *)out)[k] = (int32_t)IDX[k % 4];
            else ((int64_t *)out)[k] = IDX[k % 4];
        }
        return true;
    }
    float *f = malloc((size_t)n * sizeof *f);
    if (!f) return false;
    for (int64_t k = 0; k < n; k++) f[k] = (float)((double)(mix(&s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    const int64_t row = t->ne[0];
    bool ok = true;
    for (int64_t r = 0; r < n / row && ok; r++)
        ok = ct_quantize_row(t->type, f + r * row, out + (size_t)r * t->nb[1], row) == CT_OK;
    free(f);
    return ok;
}

typedef struct run {
    ct_context *ctx;
    ct_tensor *out;
    ct_graph *graph;
} run;

static bool run_build(run *r, int c) {
    ct_context_params p = {.mem_size = 32 * ct_tensor_overhead() + ct_graph_overhead(32), .no_alloc = true};
    r->ctx = ct_context_new(p);
    r->out = r->ctx ? CASES[c].build(r->ctx) : NULL;
    r->graph = r->out ? ct_graph_new(r->ctx, 32) : NULL;
    return r->graph && ct_graph_build_forward(r->graph, r->out) == CT_OK;
}

static bool fill_leaves(run *r, int c) {
    int i = 0;
    for (ct_tensor *t = ct_context_first_tensor(r->ctx); t; t = ct_context_next_tensor(r->ctx, t), i++) {
        if (t->op != CT_OP_NONE || t->view_src) continue;
        const size_t n = ct_nbytes(t);
        uint8_t *b = malloc(n);
        bool ok = b && leaf_bytes(t, c, i, b) && ct_tensor_set(t, b, 0, n) == CT_OK;
        free(b);
        if (!ok) return false;
    }
    return true;
}

static double nmse(const float *ref, const float *x, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) return INFINITY;
        num += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    return den > 0 ? num / den : num;
}

/* Case c with its tensors at host + cursor on, in buffer buf over caller memory,
 * against the CPU backend. */
static void align_case(int c, ct_device *dev, ct_backend *cpu, ct_backend *ocl, ct_buffer *buf, char *at,
                       size_t off) {
    const tcase *tc = &CASES[c];
    run rc = {0}, ro = {0};
    ct_buffer *cbuf = NULL;
    if (!run_build(&rc, c) || !run_build(&ro, c)) {
        CHECK_MSG(false, "%s: cannot build: %s", tc->name, ct_last_error());
        goto done;
    }
    CHECK(ct_context_alloc_tensors(rc.ctx, ct_backend_buffer_type(cpu), &cbuf) == CT_OK);
    /* roots packed from `at`, 64 bytes apart: each starts `off` bytes past a 16-byte boundary */
    char *p = at;
    for (ct_tensor *t = ct_context_first_tensor(ro.ctx); t; t = ct_context_next_tensor(ro.ctx, t)) {
        if (t->view_src) continue;
        size_t sz = 0;
        CHECK(ct_buffer_type_alloc_size(ct_buffer_get_type(buf), t, &sz) == CT_OK);
        CHECK_MSG(ct_buffer_alloc_tensor(buf, t, p) == CT_OK, "%s: %s", tc->name, ct_last_error());
        p += (sz + 63) / 64 * 64;
    }
    for (ct_tensor *t = ct_context_first_tensor(ro.ctx); t; t = ct_context_next_tensor(ro.ctx, t))
        if (t->view_src) CHECK(ct_buffer_init_view(t) == CT_OK);
    if (!fill_leaves(&rc, c) || !fill_leaves(&ro, c)) {
        CHECK_MSG(false, "%s: cannot set the inputs: %s", tc->name, ct_last_error());
        goto done;
    }
    CHECK_MSG(ct_backend_graph_compute(cpu, rc.graph) == CT_OK, "%s on CPU: %s", tc->name, ct_last_error());

    bool supported = true;
    for (int i = 0; i < ct_graph_n_nodes(ro.graph); i++)
        supported &= ct_device_supports_op(dev, ct_graph_node(ro.graph, i));
    /* Copies move bytes at any address; float arithmetic needs its floats 4-byte aligned. */
    if (tc->nmse == 0 || off % 4 == 0) CHECK_MSG(supported, "%s at +%zu: not supported", tc->name, off);
    const ct_status st = ct_backend_graph_compute(ocl, ro.graph);
    if (!supported) {
        printf("%s at +%zu: refused by supports_op\n", tc->name, off);
        CHECK_MSG(st == CT_UNSUPPORTED && strstr(ct_last_error(), "not supported"),
                  "%s at +%zu: supports_op refused it, compute returned %s: %s", tc->name, off, ct_status_str(st),
                  ct_last_error());
        goto done;
    }
    CHECK_MSG(st == CT_OK, "%s at +%zu: %s", tc->name, off, ct_last_error());
    if (st != CT_OK) goto done;
    /* every root: inputs unchanged (or written by SET_ROWS exactly), outputs compared */
    for (ct_tensor *a = ct_context_first_tensor(rc.ctx), *b = ct_context_first_tensor(ro.ctx); a && b;
         a = ct_context_next_tensor(rc.ctx, a), b = ct_context_next_tensor(ro.ctx, b)) {
        if (a->view_src) continue;
        const size_t n = ct_nbytes(a);
        uint8_t *x = malloc(n), *y = malloc(n);
        if (x && y && ct_tensor_get(a, x, 0, n) == CT_OK && ct_tensor_get(b, y, 0, n) == CT_OK) {
            if (a->op == CT_OP_NONE || tc->nmse == 0) {
                CHECK_MSG(memcmp(x, y, n) == 0, "%s at +%zu: tensor %s differs from the CPU's bytes", tc->name, off,
                          ct_op_name(a->op));
            } else {
                const double e = nmse((const float *)x, (const float *)y, n / sizeof(float));
                CHECK_MSG(e <= tc->nmse, "%s at +%zu: NMSE %g > %g", tc->name, off, e, tc->nmse);
            }
        } else {
            CHECK_MSG(false, "%s: cannot read a result: %s", tc->name, ct_last_error());
        }
        free(x);
        free(y);
    }
done:
    ct_buffer_free(cbuf);
    ct_context_free(rc.ctx);
    ct_context_free(ro.ctx);
}

/* Child: every case on tensors in a buffer wrapped at page + off. */
static int child_align(size_t off) {
    tu_init("test_opencl_hostptr align");
    ct_device *dev = tu_opencl_device();
    if (!dev) return SKIP;
    ct_backend *cpu = NULL, *ocl = NULL;
    if (ct_backend_cpu_init(&cpu) != CT_OK || ct_device_init_backend(dev, NULL, &ocl) != CT_OK) {
        fprintf(stderr, "cannot create the backends: %s\n", ct_last_error());
        ct_backend_free(cpu);
        return 1;
    }
    const size_t page = tu_page_size();
    uint8_t *block = aligned_alloc(page, WRAP_BYTES + 2 * GUARD_BYTES);
    char *ptr = (char *)block + GUARD_BYTES + off;
    memset(block, GUARD, WRAP_BYTES + 2 * GUARD_BYTES);
    ct_buffer *buf = NULL;
    CHECK_MSG(ct_device_buffer_from_host_ptr(dev, ptr, WRAP_BYTES, WRAP_MAX_TENSOR, &buf) == CT_OK, "%s",
              ct_last_error());
    if (buf) {
        const ct_ocl_buffer *ob = buf->context;
        printf("pointer page + %zu, max_size %zu: %zu views\n", off, ct_ocl_device_of(dev)->max_size, ob->n_views);
        for (int c = 0; c < N_CASES; c++) align_case(c, dev, cpu, ocl, buf, ptr + PLACE_AT, off);
        ct_buffer_free(buf);
    }
    /* nothing written outside the caller's bytes */
    for (size_t i = 0; i < GUARD_BYTES + off; i++) CHECK_MSG(block[i] == GUARD, "byte %zu before the buffer", i);
    for (size_t i = GUARD_BYTES + off + WRAP_BYTES; i < WRAP_BYTES + 2 * GUARD_BYTES; i++)
        CHECK_MSG(block[i] == GUARD, "byte %zu after the buffer", i);
    free(block);
    ct_backend_free(ocl);
    ct_backend_free(cpu);
    return tu_finish();
}

/* ---- CT_OPENCL_MAX_SIZE, the mapped type's maximum and the views ---------------- */

/* Child: the device's max_size is expect and a warning was logged (or not); the mapped
 * buffer type takes every size it advertises; a wrapped buffer has at most one view per
 * page, each starting on a page after the first. */
static int child_env(size_t expect, bool warned) {
    ct_log_set_callback(log_capture, NULL);
    tu_init("test_opencl_hostptr env");
    ct_device *dev = tu_opencl_device();
    if (!dev) return SKIP;
    ct_ocl_device *d = ct_ocl_device_of(dev);
    const char *env = getenv("CT_OPENCL_MAX_SIZE");
    const size_t page = tu_page_size();
    printf("max_size %zu, expected %zu\n", d->max_size, expect);
    CHECK_MSG(d->max_size == expect, "CT_OPENCL_MAX_SIZE='%s': max_size %zu, expected %zu", env, d->max_size,
              expect);
    const bool has_warning = strstr(warnings, "CT_OPENCL_MAX_SIZE") != NULL;
    CHECK_MSG(has_warning == warned, "CT_OPENCL_MAX_SIZE='%s': %s warning (log: '%s')", env,
              warned ? "expected a" : "unexpected", warnings);
    if (warned && has_warning) CHECK_MSG(strstr(warnings, env) != NULL, "the warning does not quote '%s'", env);

    /* the mapped type: a page multiple it accepts whole */
    ct_buffer_type *mapped = &d->buft_mapped;
    const size_t mmax = ct_buffer_type_max_size(mapped);
    CHECK_MSG(mmax % page == 0 && mmax <= d->max_size && mmax + page > d->max_size,
              "%s advertises %zu bytes with max_size %zu", ct_buffer_type_name(mapped), mmax, d->max_size);
    if (d->max_size <= 64 * MIB) {
        ct_buffer *b = NULL;
        CHECK_MSG(ct_buffer_type_alloc(mapped, mmax, &b) == CT_OK, "%s: %zu bytes: %s", ct_buffer_type_name(mapped),
                  mmax, ct_last_error());
        ct_buffer_free(b);
        ct_context_params p = {.mem_size = 4 * ct_tensor_overhead(), .no_alloc = true};
        ct_context *ctx = ct_context_new(p);
        ct_tensor *t = ctx ? ct_tensor_new_1d(ctx, CT_TYPE_I8, (int64_t)mmax) : NULL;
        b = NULL;
        CHECK_MSG(t && ct_context_alloc_tensors(ctx, mapped, &b) == CT_OK && b, "ct_context_alloc_tensors of %zu "
                  "bytes in %s: %s", mmax, ct_buffer_type_name(mapped), ct_last_error());
        if (b) CHECK(ct_tensor_memset(t, 3, 0, mmax) == CT_OK);
        ct_buffer_free(b);
        ct_context_free(ctx);
    }

    /* views: at most one per page, page-aligned after the first */
    const size_t wrap = d->max_size < MIB ? 256 << 10 : 4 * MIB; /* a limit below 1 MiB would make millions */
    char *block = aligned_alloc(page, wrap + page);
    char *ptr = block + 100;
    memset(block, 0, wrap + page);
    ct_buffer *b = NULL;
    bool paged = true;
    CHECK_MSG(ct_device_buffer_from_host_ptr(dev, ptr, wrap, 4096, &b) == CT_OK, "%s", ct_last_error());
    if (b) {
        const ct_ocl_buffer *ob = b->context;
        const size_t bound = (wrap + 100) / page + 1;
        printf("%zu bytes with max_tensor_size 4096: %zu views\n", wrap, ob->n_views);
        CHECK_MSG(ob->n_views <= bound, "%zu views over %zu bytes (at most %zu)", ob->n_views, wrap, bound);
        for (size_t i = 1; i < ob->n_views; i++) paged &= (uintptr_t)ob->views[i].data % page == 0;
        CHECK_MSG(paged, "a view after the first starts off a page");
        ct_buffer_free(b);
    }
    /* max_tensor_size leaving less than a page between views: refused, not a view per byte */
    if (paged && mmax > 2 * page && mmax < wrap) {
        b = NULL;
        CHECK(ct_device_buffer_from_host_ptr(dev, ptr, wrap, mmax - page - 1, &b) == CT_INVALID_ARGUMENT && !b);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "max_tensor_size");
        ct_buffer_free(b);
        /* a page between views: one view per page at most */
        CHECK(ct_device_buffer_from_host_ptr(dev, ptr, wrap, mmax - 2 * page, &b) == CT_OK && b);
        if (b) CHECK(((const ct_ocl_buffer *)b->context)->n_views <= (wrap + 100) / page + 1);
        ct_buffer_free(b);
    }
    free(block);
    return tu_finish();
}

/* ---- out of memory ------------------------------------------------------------- */

/* Child: a device buffer allocated and cleared with too little address space left
 * returns CT_OUT_OF_MEMORY (PoCL allocates device buffers at first use, and asserts
 * there when that allocation fails); with the limit lifted the same calls succeed. */
static int child_oom(void) {
    tu_init("test_opencl_hostptr oom");
#if defined(__SANITIZE_ADDRESS__)
    printf("SKIP: AddressSanitizer's shadow leaves no room for an address-space limit\n");
    return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    printf("SKIP: AddressSanitizer's shadow leaves no room for an address-space limit\n");
    return 0;
#endif
#endif
    ct_device *dev = tu_opencl_device();
    if (!dev) return SKIP;
    ct_ocl_device *d = ct_ocl_device_of(dev);
    ct_buffer_type *types[2] = {ct_device_buffer_type(dev), &d->buft_mapped};
    size_t size = 256 * MIB;
    if (size > ct_buffer_type_max_size(types[0])) size = ct_buffer_type_max_size(types[0]) / 2;
    unsigned long vm_pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%lu", &vm_pages) != 1) {
        printf("SKIP: no /proc/self/statm\n");
        if (f) fclose(f);
        return 0;
    }
    fclose(f);
    struct rlimit old;
    CHECK(getrlimit(RLIMIT_AS, &old) == 0);
    for (int k = 0; k < 2; k++) {
        const char *name = ct_buffer_type_name(types[k]);
        struct rlimit lim = old;
        lim.rlim_cur = (rlim_t)vm_pages * tu_page_size() + 64 * MIB;
        CHECK(setrlimit(RLIMIT_AS, &lim) == 0);
        ct_buffer *b = NULL;
        ct_status st = ct_buffer_type_alloc(types[k], size, &b);
        if (st == CT_OK) {
            st = ct_buffer_clear(b, 7);
            if (st != CT_OK) CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_buffer_clear");
            ct_buffer_free(b);
        } else {
            CHECK(!b);
            CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_buffer_type_alloc");
            CHECK_MSG(strstr(ct_last_error(), name) || strstr(ct_last_error(), d->name), "%s", ct_last_error());
        }
        printf("%s: %zu bytes with %lu MiB of address space left: %s\n", name, size, 64ul, ct_status_str(st));
        /* on a CPU device its memory is the host's: the limit must be felt */
        if (d->type == CT_DEVICE_TYPE_CPU) CHECK_MSG(st == CT_OUT_OF_MEMORY, "%s: %s", name, ct_status_str(st));
        CHECK(setrlimit(RLIMIT_AS, &old) == 0);
        /* the cause gone, the same calls succeed */
        b = NULL;
        CHECK_MSG(ct_buffer_type_alloc(types[k], size, &b) == CT_OK && b, "%s: %s", name, ct_last_error());
        if (b) CHECK_MSG(ct_buffer_clear(b, 7) == CT_OK, "%s", ct_last_error());
        ct_buffer_free(b);
    }
    return tu_finish();
}

/* ---- the parent ---------------------------------------------------------------- */

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "align") == 0) return child_align(strtoul(argv[2], NULL, 10));
    if (argc >= 4 && strcmp(argv[1], "env") == 0) return child_env(strtoull(argv[2], NULL, 10), argv[3][0] == '1');
    if (argc >= 2 && strcmp(argv[1], "oom") == 0) return child_oom();

    tu_init("test_opencl_hostptr");
    unsetenv("CT_OPENCL_MAX_SIZE"); /* the device's own limit here; children get theirs */
    ct_device *dev = tu_opencl_device();
    if (!dev) {
        printf("SKIP: no OpenCL device\n");
        return tu_finish() ? 1 : SKIP;
    }
    const size_t dflt = ct_ocl_device_of(dev)->max_size;
    printf("device %s: %s, max_size %zu\n", ct_device_name(dev), ct_device_description(dev), dflt);

    /* 1. every op family at pointers off a 16-byte boundary, and with views that started
     * off one (limits of 1 MiB + off put the second view's start at off mod 16) */
    static const char *const offs[] = {"0", "1", "2", "4", "8"};
    char what[96];
    for (int i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "op families at page + %s", offs[i]);
        tu_run_self(what, "CT_OPENCL_MAX_SIZE", NULL, (const char *const[]){"align", offs[i], NULL});
    }
    static const char *const odd_max[] = {"1048577", "1048578", "1048580", "1048584"};
    for (int i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "op families at page + %s, second view", offs[i + 1]);
        tu_run_self(what, "CT_OPENCL_MAX_SIZE", odd_max[i], (const char *const[]){"align", offs[i + 1], NULL});
    }

    /* 10, 11, 12. CT_OPENCL_MAX_SIZE: refused with a warning, or taken */
    char dflt_s[32], two_m[32], odd[32];
    snprintf(dflt_s, sizeof dflt_s, "%zu", dflt);
    snprintf(two_m, sizeof two_m, "%zu", dflt < 2 * MIB ? dflt : 2 * MIB);
    snprintf(odd, sizeof odd, "%zu", dflt < MIB + 1 ? dflt : MIB + 1);
    static const char *const refused[] = {"-18446744073709547520", "+2M", " 2M", "2M ", "-1M", "0x200000",
                                          "8193", "4096", "1K", "0", "99999999999G", "M"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        tu_run_self("CT_OPENCL_MAX_SIZE refused", "CT_OPENCL_MAX_SIZE", refused[i],
                    (const char *const[]){"env", dflt_s, "1", NULL});
    }
    tu_run_self("CT_OPENCL_MAX_SIZE taken", "CT_OPENCL_MAX_SIZE", "2M", (const char *const[]){"env", two_m, "0", NULL});
    tu_run_self("CT_OPENCL_MAX_SIZE taken", "CT_OPENCL_MAX_SIZE", "2097152",
                (const char *const[]){"env", two_m, "0", NULL});
    tu_run_self("CT_OPENCL_MAX_SIZE off a page", "CT_OPENCL_MAX_SIZE", "1048577",
                (const char *const[]){"env", odd, "0", NULL});
    tu_run_self("the device's limit", "CT_OPENCL_MAX_SIZE", NULL, (const char *const[]){"env", dflt_s, "0", NULL});

    /* 8. out of memory */
    tu_run_self("allocate and clear out of memory", "CT_OPENCL_MAX_SIZE", NULL, (const char *const[]){"oom", NULL});
    return tu_finish();
}

#endif
