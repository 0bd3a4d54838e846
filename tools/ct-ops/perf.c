/* ct-ops perf: time per case, bandwidth beside the device's own copy bandwidth (docs/TESTING.md, How ct-ops perf measures). */
#include "ct_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sizing of one timed compute (scaled by --size-scale where marked). */
#define PERF_COMPUTE_BYTES (1024.0 * (1 << 20)) /* bytes the ops of one compute move (scaled) */
#define PERF_MAX_OPS 64                        /* ops per compute */
#define PERF_MAX_OUT_BYTES (1024.0 * (1 << 20)) /* outputs of the extra ops, in all */
#define PERF_CACHE_GUARD (256.0 * (1 << 20))  /* input sets span this much: past any LLC we run on */
#define PERF_MAX_SETS 16                        /* input sets per case (each is 2-3 tensors) */

typedef struct perf_result {
    enum { P_OK, P_UNSUPPORTED, P_SKIPPED, P_ERROR } code;
    int computes, n_rep, n_sets; /* graph computes timed; ops per compute; input sets they rotate over */
    double us, best_us;    /* per op (one of the n_rep copies) */
    double bytes, flops;   /* per op */
    char note[640];
} perf_result;

/* Bytes one op reads and writes: nbytes(out) + nbytes(srcs); CPY counts out
 * and src0; SET_ROWS the written rows, the source and the indices; GET_ROWS the
 * rows read, the indices and out; MUL_MAT with a small batch the weights. */
static double op_bytes(const cto_case *c, const ct_tensor *out) {
    switch (out->op) {
    case CT_OP_GET_ROWS: {
        const ct_tensor *src = out->src[0], *idx = out->src[1];
        double rows = (double)ct_nelements(idx);
        return rows * (double)ct_tensor_row_size(src) + (double)ct_nbytes(idx) + (double)ct_nbytes(out);
    }
    case CT_OP_CPY:
        return (double)ct_nbytes(out) + (double)ct_nbytes(out->src[0]);
    case CT_OP_SET_ROWS: {
        const ct_tensor *src = out->src[0], *idx = out->src[1];
        double rows = (double)ct_nrows(src);
        return rows * (double)ct_tensor_row_size(out) + (double)ct_nbytes(src) + (double)ct_nbytes(idx);
    }
    case CT_OP_MUL_MAT:
        if (!c->flops) return (double)ct_nbytes(out->src[0]);
        break;
    case CT_OP_MUL_MAT_ID: /* with a small batch the used experts' weights (at most one each) */
        if (!c->flops) {
            const double used = (double)ct_nelements(out->src[2]), n_as = (double)out->src[0]->ne[2];
            return (used < n_as ? used : n_as) * (double)ct_nbytes(out->src[0]) / (n_as > 0 ? n_as : 1.0);
        }
        break;
    default:
        break;
    }
    double b = (double)ct_nbytes(out);
    for (int i = 0; i < CT_MAX_SRC; i++)
        if (out->src[i]) b += (double)ct_nbytes(out->src[i]);
    return b;
}

static double op_flops(const ct_tensor *out) {
    if (out->op == CT_OP_FLASH_ATTN_EXT) {
        /* the two matrix products: n_q * n_head * ne3 rows of n_kv * (Dk + Dv) multiply-adds */
        const ct_tensor *q = out->src[0], *k = out->src[1], *v = out->src[2];
        return 2.0 * (double)ct_nrows(q) * (double)k->ne[1] * (double)(k->ne[0] + v->ne[0]);
    }
    /* MUL_MAT_ID: every result element is one k-long dot product too */
    if (out->op != CT_OP_MUL_MAT && out->op != CT_OP_MUL_MAT_ID) return 0.0;
    return 2.0 * (double)out->src[0]->ne[0] * (double)ct_nelements(out);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Fills a root tensor; big uniform ones by repeating a random block, in pieces. */
static bool fill(ct_tensor *t, const cto_leaf *leaf, cto_rng *rng) {
    size_t nbytes = ct_nbytes(t);
    if (!leaf || nbytes == 0) return true;
    enum { CHUNK_ELEMS = 1 << 20 };
    int64_t blck = ct_type_block_size(t->type);
    size_t chunk = (size_t)(CHUNK_ELEMS / blck) * ct_type_size(t->type);
    bool ok = true;
    if (leaf->init == CTO_INIT_UNIFORM && nbytes > chunk) {
        uint8_t *pat = cto_xmalloc(chunk);
        cto_fill_uniform(t->type, CHUNK_ELEMS, leaf->lo, leaf->hi, rng, pat);
        for (size_t off = 0; ok && off < nbytes; off += chunk)
            ok = ct_tensor_set(t, pat, off, nbytes - off < chunk ? nbytes - off : chunk) == CT_OK;
        free(pat);
        return ok;
    }
    uint8_t *bytes = cto_xmalloc(nbytes);
    cto_fill_tensor(t, leaf, rng, bytes, true);
    ok = ct_tensor_set(t, bytes, 0, nbytes) == CT_OK;
    free(bytes);
    return ok;
}

static void perf_case(const cto_opts *o, ct_device *dev, ct_backend *be, const cto_case *c, double min_time,
                      double scale, cto_rng *rng, perf_result *r) {
    memset(r, 0, sizeof *r);
    ct_context *ctx = NULL;
    ct_buffer *buf = NULL;
    ct_tensor **outs = NULL;
    double *times = NULL;
    cto_builder b;

    /* plan with one copy: support, sizes, memory */
    ct_tensor *out1 = NULL;
    ctx = cto_case_context(1);
    memset(&b, 0, sizeof b);
    b.ctx = ctx;
    if (!ctx || !cto_case_build(c, &b, 1, &out1)) {
        r->code = P_ERROR;
        snprintf(r->note, sizeof r->note, "building the graph failed: %s", ctx ? b.err : ct_last_error());
        goto done;
    }
    ct_graph *g = ct_graph_new(ctx, 1200);
    if (!g || ct_graph_build_forward(g, out1) != CT_OK) {
        r->code = P_ERROR;
        snprintf(r->note, sizeof r->note, "building the graph failed: %s", ct_last_error());
        goto done;
    }
    for (int i = 0; i < ct_graph_n_nodes(g); i++) {
        ct_tensor *t = ct_graph_node(g, i);
        if (!ct_op_is_view(t->op) && !ct_device_supports_op(dev, t)) {
            r->code = P_UNSUPPORTED;
            snprintf(r->note, sizeof r->note, "%s", ct_device_name(dev));
            goto done;
        }
    }
    double need = 0.0;
    for (ct_tensor *t = ct_context_first_tensor(ctx); t; t = ct_context_next_tensor(ctx, t))
        if (!t->view_src) need += (double)ct_nbytes(t) + 4096.0;
    double out_bytes = out1->view_src ? 0.0 : (double)ct_nbytes(out1);
    r->bytes = op_bytes(c, out1);
    r->flops = op_flops(out1);
    int n_rep = 1, n_sets = 1;
    if (c->kind != CTO_CHAIN) {
        /* Enough ops per compute that the wait at its end costs little, and enough input
         * sets, used in turn, that an op never finds its inputs in the last-level cache
         * left there by the op before it. */
        n_rep = r->bytes > 0 ? (int)fmin(PERF_MAX_OPS, fmax(1.0, ceil(PERF_COMPUTE_BYTES * scale / r->bytes)))
                             : PERF_MAX_OPS;
        while (n_rep > 1 && out_bytes * n_rep > PERF_MAX_OUT_BYTES) n_rep /= 2;
        n_sets = need > 0 ? (int)fmin(n_rep, fmin(PERF_MAX_SETS, ceil(PERF_CACHE_GUARD / need))) : 1;
        /* every set's inputs are leaves of one builder (FLASH_ATTN_EXT has four) */
        const int sets_fit = (CTO_MAX_LEAF - 1) / (b.n_leaf > 0 ? b.n_leaf : 1);
        if (n_sets > sets_fit) n_sets = sets_fit > 0 ? sets_fit : 1;
    }
    need = need * n_sets + out_bytes * (n_rep - n_sets);
    size_t mfree = 0, mtotal = 0;
    ct_device_memory(dev, &mfree, &mtotal);
    if (mfree > 0 && need > 0.8 * (double)mfree) {
        r->code = P_SKIPPED;
        snprintf(r->note, sizeof r->note, "needs %.0f MiB, %s has %zu MiB free (try --size-scale)", need / (1 << 20),
                 ct_device_name(dev), mfree >> 20);
        goto done;
    }
    ct_context_free(ctx);

    /* the real graph: n_rep ops, op i on input set i % n_sets */
    ctx = cto_case_context(n_rep + 8 * n_sets);
    memset(&b, 0, sizeof b);
    b.ctx = ctx;
    outs = cto_xcalloc((size_t)n_rep, sizeof *outs);
    for (int s = 0; s < n_sets; s++) {
        int count = (n_rep - s + n_sets - 1) / n_sets;
        ct_tensor **set_outs = cto_xcalloc((size_t)count, sizeof *set_outs);
        bool ok = ctx && cto_case_build(c, &b, count, set_outs);
        for (int k = 0; ok && k < count; k++) outs[s + k * n_sets] = set_outs[k];
        free(set_outs);
        if (!ok) {
            r->code = P_ERROR;
            snprintf(r->note, sizeof r->note, "building the graph failed: %s", ctx ? b.err : ct_last_error());
            goto done;
        }
    }
    g = ct_graph_new(ctx, (size_t)(n_rep + 8 * n_sets) * 4 + 1200);
    for (int i = 0; g && i < n_rep; i++) {
        if (ct_graph_build_forward(g, outs[i]) != CT_OK) g = NULL;
    }
    if (!g) {
        r->code = P_ERROR;
        snprintf(r->note, sizeof r->note, "building the graph failed: %s", ct_last_error());
        goto done;
    }
    if (ct_context_alloc_tensors(ctx, ct_device_buffer_type(dev), &buf) != CT_OK) {
        r->code = P_SKIPPED;
        snprintf(r->note, sizeof r->note, "allocation failed: %s", ct_last_error());
        goto done;
    }
    for (ct_tensor *t = ct_context_first_tensor(ctx); t; t = ct_context_next_tensor(ctx, t)) {
        if (t->view_src) continue;
        if (!fill(t, cto_builder_leaf(&b, t), rng)) {
            r->code = P_ERROR;
            snprintf(r->note, sizeof r->note, "ct_tensor_set failed: %s", ct_last_error());
            goto done;
        }
    }

    enum { MAX_RUNS = 100000 };
    times = cto_xmalloc(sizeof(double) * MAX_RUNS);
    ct_status st = ct_backend_graph_compute(be, g);
    if (st == CT_OK) st = ct_backend_synchronize(be);
    if (st != CT_OK) {
        r->code = P_ERROR;
        snprintf(r->note, sizeof r->note, "compute failed: %s", ct_last_error());
        goto done;
    }
    int runs = 0;
    {
        /* at least one timed run after the warm-up, which may carry one-time costs (kernel builds) */
        double t0, total = 0.0;
        while (runs < MAX_RUNS && (runs == 0 || total < min_time)) {
            t0 = cto_now();
            st = ct_backend_graph_compute(be, g);
            if (st == CT_OK) st = ct_backend_synchronize(be);
            double dt = cto_now() - t0;
            if (st != CT_OK) {
                r->code = P_ERROR;
                snprintf(r->note, sizeof r->note, "compute failed: %s", ct_last_error());
                goto done;
            }
            times[runs++] = dt;
            total += dt;
        }
    }
    qsort(times, (size_t)runs, sizeof(double), cmp_double);
    r->computes = runs;
    r->n_rep = n_rep;
    r->n_sets = n_sets;
    r->us = 1e6 * times[runs / 2] / n_rep;
    r->best_us = 1e6 * times[0] / n_rep;
    r->code = P_OK;
    (void)o;

done:
    free(times);
    free(outs);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

static void print_result(const cto_opts *o, ct_device *dev, const cto_case *c, const perf_result *r, double copy_gbps) {
    static const char *codes[4] = {"ok", "not supported", "skipped", "error"};
    double sec = r->us * 1e-6;
    double gbps = r->code == P_OK && sec > 0 ? r->bytes / sec / 1e9 : NAN;
    double gflops = r->code == P_OK && sec > 0 && c->flops ? r->flops / sec / 1e9 : NAN;
    double frac = copy_gbps > 0 ? gbps / copy_gbps : NAN;
    if (o->json) {
        cto_json_rec("perf");
        printf(",\"device\":");
        cto_json_str(stdout, ct_device_name(dev));
        printf(",\"op\":");
        cto_json_str(stdout, cto_kind_name(c->kind));
        printf(",\"case\":");
        cto_json_str(stdout, c->name);
        printf(",\"status\":");
        cto_json_str(stdout, codes[r->code]);
        if (r->code == P_OK) {
            printf(",\"runs\":%d,\"computes\":%d,\"ops_per_compute\":%d,\"input_sets\":%d,\"us_per_run\":",
                   r->computes * r->n_rep, r->computes, r->n_rep, r->n_sets);
            cto_json_num(stdout, r->us);
            printf(",\"best_us\":");
            cto_json_num(stdout, r->best_us);
            printf(",\"bytes_per_run\":");
            cto_json_num(stdout, r->bytes);
            printf(",\"gbps\":");
            cto_json_num(stdout, gbps);
            printf(",\"copy_gbps\":");
            cto_json_num(stdout, copy_gbps);
            printf(",\"bw_frac\":");
            cto_json_num(stdout, frac);
            if (c->flops) {
                printf(",\"flops_per_run\":");
                cto_json_num(stdout, r->flops);
                printf(",\"gflops\":");
                cto_json_num(stdout, gflops);
            }
            if (c->kind == CTO_CHAIN) {
                printf(",\"us_per_node\":");
                cto_json_num(stdout, r->us / (double)c->n);
            }
        }
        printf(",\"note\":");
        cto_json_str(stdout, r->note);
        printf("}\n");
        return;
    }
    if (r->code == P_UNSUPPORTED) {
        printf("  %s: not supported [%s]\n", c->name, r->note);
        return;
    }
    if (r->code != P_OK) {
        printf("  %s: %s: %s\n", c->name, codes[r->code], r->note);
        return;
    }
    char a[32], bw[64] = "";
    if (c->kind == CTO_CHAIN) snprintf(bw, sizeof bw, "%.3f us/node", r->us / (double)c->n);
    else if (c->flops) snprintf(bw, sizeof bw, "%sFLOP/s", cto_fmt_si(a, sizeof a, gflops * 1e9));
    else snprintf(bw, sizeof bw, "%.2f GB/s (%.1f%% of copy)", gbps, 100.0 * frac);
    printf("  %s: %d runs, %.2f us/run, %s", c->name, r->computes * r->n_rep, r->us, bw);
    if (o->verbose)
        printf(" [best %.2f us, %d computes of %d ops on %d input sets, %.0f kB/run]", r->best_us, r->computes,
               r->n_rep, r->n_sets, r->bytes / 1e3);
    printf("\n");
}

/* GB/s (bytes read + written) of ct_tensor_copy between two tensors of `bytes` each
 * in the device's buffer type, median of the copies timed over min_time; NAN with a
 * note when it cannot run. */
static double driver_copy_gbps(ct_device *dev, size_t bytes, double min_time, size_t *out_bytes, char *note,
                               size_t note_size) {
    double gbps = NAN;
    ct_context_params p = {.mem_size = 4 * ct_tensor_overhead() + 4096, .mem_buffer = NULL, .no_alloc = true};
    ct_context *ctx = ct_context_new(p);
    ct_buffer *buf = NULL;
    enum { MAX_COPIES = 10000 };
    double *times = cto_xmalloc(sizeof(double) * MAX_COPIES);
    size_t mfree = 0, mtotal = 0;
    ct_device_memory(dev, &mfree, &mtotal);
    while (mfree > 0 && bytes > (1 << 20) && 2.0 * (double)bytes > 0.5 * (double)mfree) bytes /= 2;
    bytes &= ~(size_t)3;
    *out_bytes = bytes;
    ct_tensor *a = ctx ? ct_tensor_new_1d(ctx, CT_TYPE_F32, (int64_t)(bytes / 4)) : NULL;
    ct_tensor *b = ctx ? ct_tensor_new_1d(ctx, CT_TYPE_F32, (int64_t)(bytes / 4)) : NULL;
    if (!a || !b || ct_context_alloc_tensors(ctx, ct_device_buffer_type(dev), &buf) != CT_OK ||
        ct_tensor_memset(a, 0x3c, 0, bytes) != CT_OK || ct_tensor_copy(a, b) != CT_OK) {
        snprintf(note, note_size, "the buffer copy could not be measured: %s", ct_last_error());
        goto done;
    }
    int n = 0;
    for (double total = 0.0; n < MAX_COPIES && (n < 3 || total < min_time);) {
        double t0 = cto_now();
        if (ct_tensor_copy(n % 2 ? b : a, n % 2 ? a : b) != CT_OK) {
            snprintf(note, note_size, "the buffer copy failed: %s", ct_last_error());
            goto done;
        }
        times[n] = cto_now() - t0;
        total += times[n++];
    }
    qsort(times, (size_t)n, sizeof(double), cmp_double);
    gbps = 2.0 * (double)bytes / times[n / 2] / 1e9;
done:
    free(times);
    ct_buffer_free(buf);
    ct_context_free(ctx);
    return gbps;
}

int cto_cmd_perf(const cto_opts *o) {
    double scale = o->size_scale;
    if (o->quick && scale > 1.0 / 64) scale = 1.0 / 64;
    double min_time = o->min_time >= 0 ? o->min_time : (o->quick ? 0.02 : 0.5);

    ct_device *devs[64];
    int n_dev = 0;
    if (o->device) {
        devs[n_dev++] = ct_device_by_name(o->device);
    } else {
        ct_device *ref = ct_device_by_name("REF");
        for (size_t i = 0; i < ct_device_count() && n_dev < 64; i++)
            if (ct_device_get(i) != ref) devs[n_dev++] = ct_device_get(i);
    }
    cto_rng rng;
    const uint64_t seed = o->seed_set ? o->seed : (uint64_t)(cto_now() * 1e6);
    cto_rng_seed(&rng, seed);
    cto_case_list cases = {NULL, 0, 0};
    cto_cases_perf(&cases, scale);
    const size_t n_sel = cto_count_selected(o, &cases);
    if (n_sel == 0) {
        cto_case_list_free(&cases);
        return CTO_EXIT_USAGE;
    }
    if (o->json) {
        cto_json_run("perf");
        printf(",\"seed\":%llu,\"cases\":%zu,\"devices\":%d}\n", (unsigned long long)seed, n_sel, n_dev);
        fflush(stdout);
    }
    char what[256];
    if (n_dev == 1) {
        snprintf(what, sizeof what, "on %s, after its copy bandwidth", ct_device_name(devs[0]));
    } else {
        int len = snprintf(what, sizeof what, "(%zu on each of", n_sel);
        for (int i = 0; i < n_dev && len > 0 && (size_t)len < sizeof what; i++)
            len += snprintf(what + len, sizeof what - (size_t)len, "%s %s", i ? "," : "", ct_device_name(devs[i]));
        if (len > 0 && (size_t)len < sizeof what) snprintf(what + len, sizeof what - (size_t)len, ", each after its copy bandwidth)");
    }
    cto_progress pr;
    cto_progress_start(&pr, o->quiet, "perf", n_sel * (size_t)n_dev, what);
    int n_status[4] = {0, 0, 0, 0};

    int rc = CTO_EXIT_OK;
    for (int d = 0; d < n_dev; d++) {
        ct_device *dev = devs[d];
        ct_backend *be = cto_backend_new(o, dev);
        if (!be) {
            rc = CTO_EXIT_FAIL;
            continue;
        }
        /* The device's copy bandwidth, two ways: our F32 -> F32 CPY kernel, and the
         * buffer's own device-to-device copy (clEnqueueCopyBuffer; memcpy on the CPU).
         * Fractions are of the faster one. */
        cto_case cc;
        memset(&cc, 0, sizeof cc);
        cc.kind = CTO_CPY;
        cc.ta = cc.tb = CT_TYPE_F32;
        cc.ne[0] = (int64_t)fmax(1 << 16, (double)(32 << 20) * scale);
        cc.ne[1] = cc.ne[2] = cc.ne[3] = 1;
        for (int i = 0; i < 4; i++) cc.per[i] = cc.per2[i] = i;
        cc.lo = -1.0f;
        cc.hi = 1.0f;
        snprintf(cc.name, sizeof cc.name, "CPY(type_src=f32,type_dst=f32,ne=[%lld,1,1,1])", (long long)cc.ne[0]);
        perf_result cr;
        perf_case(o, dev, be, &cc, min_time, scale, &rng, &cr);
        double kernel_gbps = cr.code == P_OK ? cr.bytes / (cr.us * 1e-6) / 1e9 : NAN;
        if (cr.code != P_OK) {
            cto_progress_clear(&pr);
            fprintf(stderr, "ct-ops: %s: measuring the copy bandwidth failed: %s\n", ct_device_name(dev), cr.note);
            rc = CTO_EXIT_FAIL;
        }
        size_t driver_bytes = 0;
        char driver_note[256] = "";
        double driver_gbps = driver_copy_gbps(dev, (size_t)fmax(1 << 20, (double)(1u << 30) * scale), min_time,
                                              &driver_bytes, driver_note, sizeof driver_note);
        cto_progress_clear(&pr);
        if (driver_note[0]) fprintf(stderr, "ct-ops: %s: %s\n", ct_device_name(dev), driver_note);
        double copy_gbps = isnan(driver_gbps) || kernel_gbps >= driver_gbps ? kernel_gbps : driver_gbps;
        if (o->json) {
            ct_backend_reg *reg = ct_device_reg(dev);
            cto_json_rec("device");
            printf(",\"device\":");
            cto_json_str(stdout, ct_device_name(dev));
            printf(",\"description\":");
            cto_json_str(stdout, ct_device_description(dev));
            printf(",\"registration\":");
            cto_json_str(stdout, reg ? ct_backend_reg_name(reg) : "?");
            printf(",\"copy_case\":");
            cto_json_str(stdout, cc.name);
            printf(",\"copy_bytes\":");
            cto_json_num(stdout, cr.bytes);
            printf(",\"copy_kernel_gbps\":");
            cto_json_num(stdout, kernel_gbps);
            printf(",\"copy_driver_bytes\":");
            cto_json_num(stdout, 2.0 * (double)driver_bytes);
            printf(",\"copy_driver_gbps\":");
            cto_json_num(stdout, driver_gbps);
            printf(",\"copy_gbps\":");
            cto_json_num(stdout, copy_gbps);
            printf(",\"min_time\":");
            cto_json_num(stdout, min_time);
            printf(",\"size_scale\":");
            cto_json_num(stdout, scale);
            printf("}\n");
        } else {
            printf("Device %s (%s): copy bandwidth %.2f GB/s: CPY kernel %.2f GB/s (%.0f MiB read+write per op), "
                   "buffer copy %.2f GB/s (%.0f MiB read+write)\n", ct_device_name(dev), ct_device_description(dev),
                   copy_gbps, kernel_gbps, cr.bytes / (1 << 20), driver_gbps, 2.0 * (double)driver_bytes / (1 << 20));
        }
        fflush(stdout);
        for (size_t i = 0; i < cases.n; i++) {
            const cto_case *c = &cases.v[i];
            if (!cto_case_selected(o, c)) continue;
            double case_copy_gbps = copy_gbps;
            if (o->copy_each && cr.code == P_OK) {
                perf_case(o, dev, be, &cc, min_time, scale, &rng, &cr);
                const double now_gbps = cr.code == P_OK ? cr.bytes / (cr.us * 1e-6) / 1e9 : NAN;
                case_copy_gbps = isnan(driver_gbps) || now_gbps >= driver_gbps ? now_gbps : driver_gbps;
            }
            perf_result r;
            cto_progress_case(&pr, pr.done, ct_device_name(dev), c->name);
            perf_case(o, dev, be, c, min_time, scale, &rng, &r);
            pr.done++;
            cto_progress_clear(&pr);
            print_result(o, dev, c, &r, case_copy_gbps);
            fflush(stdout);
            n_status[r.code]++;
            if (r.code == P_ERROR) rc = CTO_EXIT_FAIL;
        }
        ct_backend_free(be);
    }
    cto_case_list_free(&cases);
    cto_progress_end(&pr);
    if (o->json) {
        cto_json_rec("summary");
        printf(",\"ok\":%d,\"not_supported\":%d,\"skipped\":%d,\"errors\":%d,\"devices\":%d}\n", n_status[P_OK],
               n_status[P_UNSUPPORTED], n_status[P_SKIPPED], n_status[P_ERROR], n_dev);
    }
    return rc;
}
