/* ct-ops perf: time per case, bandwidth beside the device's own copy bandwidth (SPEC.md section 7.4). */
#include "ct_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct perf_result {
    enum { P_OK, P_UNSUPPORTED, P_SKIPPED, P_ERROR } code;
    int computes, n_rep;  /* graph computes timed; op copies per compute */
    double us, best_us;    /* per op (one of the n_rep copies) */
    double bytes, flops;   /* per op */
    char note[640];
} perf_result;

static bool is_view_op(ct_op op) {
    return op == CT_OP_NONE || op == CT_OP_VIEW || op == CT_OP_RESHAPE || op == CT_OP_PERMUTE ||
           op == CT_OP_TRANSPOSE;
}

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
    default:
        break;
    }
    double b = (double)ct_nbytes(out);
    for (int i = 0; i < CT_MAX_SRC; i++)
        if (out->src[i]) b += (double)ct_nbytes(out->src[i]);
    return b;
}

static double op_flops(const ct_tensor *out) {
    if (out->op != CT_OP_MUL_MAT) return 0.0;
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
                      cto_rng *rng, perf_result *r) {
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
        if (!is_view_op(t->op) && !ct_device_supports_op(dev, t)) {
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
    int n_rep = 1;
    if (c->kind != CTO_CHAIN) {
        /* several copies of a small op in one graph, so per-compute overhead does not dominate */
        double target = 16.0 * (1 << 20);
        n_rep = r->bytes > 0 ? (int)fmin(64.0, fmax(1.0, target / r->bytes)) : 64;
        while (n_rep > 1 && out_bytes * n_rep > 64.0 * (1 << 20)) n_rep /= 2;
    }
    need += out_bytes * (n_rep - 1);
    size_t mfree = 0, mtotal = 0;
    ct_device_memory(dev, &mfree, &mtotal);
    if (mfree > 0 && need > 0.8 * (double)mfree) {
        r->code = P_SKIPPED;
        snprintf(r->note, sizeof r->note, "needs %.0f MiB, %s has %zu MiB free (try --size-scale)", need / (1 << 20),
                 ct_device_name(dev), mfree >> 20);
        goto done;
    }
    ct_context_free(ctx);

    /* the real graph: n_rep copies of the op on the same inputs */
    ctx = cto_case_context(n_rep);
    memset(&b, 0, sizeof b);
    b.ctx = ctx;
    outs = cto_xcalloc((size_t)n_rep, sizeof *outs);
    if (!ctx || !cto_case_build(c, &b, n_rep, outs)) {
        r->code = P_ERROR;
        snprintf(r->note, sizeof r->note, "building the graph failed: %s", ctx ? b.err : ct_last_error());
        goto done;
    }
    g = ct_graph_new(ctx, (size_t)n_rep * 4 + 1200);
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
        printf("{\"type\":\"perf\",\"device\":");
        cto_json_str(stdout, ct_device_name(dev));
        printf(",\"op\":");
        cto_json_str(stdout, cto_kind_name(c->kind));
        printf(",\"case\":");
        cto_json_str(stdout, c->name);
        printf(",\"status\":");
        cto_json_str(stdout, codes[r->code]);
        if (r->code == P_OK) {
            printf(",\"runs\":%d,\"computes\":%d,\"ops_per_compute\":%d,\"us_per_run\":", r->computes * r->n_rep,
                   r->computes, r->n_rep);
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
        printf(" [best %.2f us, %d computes of %d ops, %.0f kB/run]", r->best_us, r->computes, r->n_rep,
               r->bytes / 1e3);
    printf("\n");
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
    cto_rng_seed(&rng, o->seed_set ? o->seed : (uint64_t)(cto_now() * 1e6));
    cto_case_list cases = {NULL, 0, 0};
    cto_cases_perf(&cases, scale);

    int rc = CTO_EXIT_OK;
    for (int d = 0; d < n_dev; d++) {
        ct_device *dev = devs[d];
        ct_backend *be = cto_backend_new(o, dev);
        if (!be) {
            rc = CTO_EXIT_FAIL;
            continue;
        }
        /* the device's own copy bandwidth: a big contiguous F32 -> F32 CPY */
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
        perf_case(o, dev, be, &cc, min_time, &rng, &cr);
        double copy_gbps = cr.code == P_OK ? cr.bytes / (cr.us * 1e-6) / 1e9 : NAN;
        if (cr.code != P_OK) {
            fprintf(stderr, "ct-ops: %s: measuring the copy bandwidth failed: %s\n", ct_device_name(dev), cr.note);
            rc = CTO_EXIT_FAIL;
        }
        if (o->json) {
            printf("{\"type\":\"device\",\"device\":");
            cto_json_str(stdout, ct_device_name(dev));
            printf(",\"description\":");
            cto_json_str(stdout, ct_device_description(dev));
            printf(",\"copy_case\":");
            cto_json_str(stdout, cc.name);
            printf(",\"copy_bytes\":");
            cto_json_num(stdout, cr.bytes);
            printf(",\"copy_gbps\":");
            cto_json_num(stdout, copy_gbps);
            printf(",\"min_time\":");
            cto_json_num(stdout, min_time);
            printf(",\"size_scale\":");
            cto_json_num(stdout, scale);
            printf("}\n");
        } else {
            printf("Device %s (%s): copy bandwidth %.2f GB/s (%.0f MiB read+write per run)\n", ct_device_name(dev),
                   ct_device_description(dev), copy_gbps, cr.bytes / (1 << 20));
        }
        fflush(stdout);
        for (size_t i = 0; i < cases.n; i++) {
            const cto_case *c = &cases.v[i];
            if (!cto_case_selected(o, c)) continue;
            perf_result r;
            perf_case(o, dev, be, c, min_time, &rng, &r);
            print_result(o, dev, c, &r, copy_gbps);
            fflush(stdout);
            if (r.code == P_ERROR) rc = CTO_EXIT_FAIL;
        }
        ct_backend_free(be);
    }
    cto_case_list_free(&cases);
    return rc;
}
