/* ct-ops test: every case on a tested device and its baseline, node by node (docs/TESTING.md, How ct-ops test compares). */
#include "ct_ops.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { RES_OK, RES_FAIL, RES_UNSUPPORTED };

typedef struct result {
    int code;
    double nmse;      /* largest over the compared nodes; -1 when none was an NMSE compare */
    char msg[768];
} result;

typedef struct side {
    ct_device *dev;
    ct_backend *be;
    ct_context *ctx;
    cto_builder b;
    ct_graph *g;
    ct_buffer *buf;
} side;

static void fail(result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(result *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->code = RES_FAIL;
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
}

static bool isinf_or_max(float x) {
    return isinf(x) || x == FLT_MAX || x == -FLT_MAX;
}

/* Compares one node's output: a from the tested device, b from the baseline. */
static void compare_node(const cto_case *c, const ct_tensor *ta, const ct_tensor *tb, result *r) {
    size_t nbytes = ct_nbytes(ta);
    int64_t n = ct_nelements(ta);
    const char *node = ct_op_name(ta->op);
    uint8_t *a = cto_xmalloc(nbytes), *b = cto_xmalloc(nbytes);
    float *fa = cto_xmalloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    float *fb = cto_xmalloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    bool exact = cto_kind_exact(c->kind);
    double thr = cto_kind_max_nmse(c->kind);

    if (nbytes && (ct_tensor_get(ta, a, 0, nbytes) != CT_OK || ct_tensor_get(tb, b, 0, nbytes) != CT_OK)) {
        fail(r, "%s: reading the output failed: %s", node, ct_last_error());
        goto done;
    }
    bool conv = cto_tensor_to_float(ta, a, fa) && cto_tensor_to_float(tb, b, fb);
    if (exact && memcmp(a, b, nbytes) != 0) {
        size_t first = 0, count = 0;
        for (size_t i = 0; i < nbytes; i++) {
            if (a[i] != b[i]) {
                if (!count) first = i;
                count++;
            }
        }
        snprintf(r->msg, sizeof r->msg, "%s: %zu of %zu bytes differ, first at byte %zu", node, count, nbytes, first);
        if (conv) {
            for (int64_t i = 0; i < n; i++) {
                if (memcmp(&fa[i], &fb[i], sizeof(float)) != 0) {
                    size_t len = strlen(r->msg);
                    snprintf(r->msg + len, sizeof r->msg - len, "; element %lld: %.9g vs %.9g (baseline)",
                             (long long)i, (double)fa[i], (double)fb[i]);
                    break;
                }
            }
        }
        r->code = RES_FAIL;
        goto done;
    }
    if (exact) goto done; /* the same bytes: NaNs included (the binary ops' edge cases) */
    if (!conv) {
        if (!exact && memcmp(a, b, nbytes) != 0) fail(r, "%s: %s output differs and cannot be read as floats", node,
                                                      ct_type_name(ta->type));
        goto done;
    }
    double err = 0.0, ref = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(fa[i]) || isnan(fb[i])) {
            r->code = RES_FAIL;
            snprintf(r->msg, sizeof r->msg, "%s: NaN at element %lld (%g vs %g baseline)", node, (long long)i,
                     (double)fa[i], (double)fb[i]);
            goto done;
        }
        if (isinf_or_max(fa[i]) || isinf_or_max(fb[i])) {
            if (!(isinf_or_max(fa[i]) && isinf_or_max(fb[i]) && signbit(fa[i]) == signbit(fb[i]))) {
                r->code = RES_FAIL;
                snprintf(r->msg, sizeof r->msg, "%s: inf mismatch at element %lld (%g vs %g baseline)", node,
                         (long long)i, (double)fa[i], (double)fb[i]);
                goto done;
            }
            continue;
        }
        double d = (double)fa[i] - (double)fb[i];
        err += d * d;
        ref += (double)fb[i] * (double)fb[i];
    }
    if (!exact) {
        /* normalized by the baseline's output (docs/TESTING.md, How ct-ops test compares) */
        double nmse = err == 0.0 ? 0.0 : (ref > 0.0 ? err / ref : INFINITY);
        if (nmse > r->nmse) r->nmse = nmse;
        if (!(nmse <= thr)) {
            r->code = RES_FAIL;
            snprintf(r->msg, sizeof r->msg, "%s: NMSE = %.9g > %g", node, nmse, thr);
        }
    }
done:
    free(a);
    free(b);
    free(fa);
    free(fb);
}

/* CT_OPS_FAULT=output|sentinel|nan damages the result after compute, so that a
 * test of ct-ops itself can see each check fail. */
static void inject_fault(ct_tensor *t[2], ct_tensor *sentinel0, uint8_t sentinel_byte) {
    const char *f = getenv("CT_OPS_FAULT");
    size_t nbytes = ct_nbytes(t[0]);
    uint8_t byte;
    if (!f || nbytes == 0) return;
    if (!strcmp(f, "output") && ct_tensor_get(t[0], &byte, nbytes - 1, 1) == CT_OK) {
        byte ^= 0x40;
        ct_tensor_set(t[0], &byte, nbytes - 1, 1);
    } else if (!strcmp(f, "sentinel") && sentinel0) {
        byte = sentinel_byte ^ 0x01;
        ct_tensor_set(sentinel0, &byte, 0, 1);
    } else if (!strcmp(f, "nan") && t[0]->type == CT_TYPE_F32) {
        float nan = NAN;
        ct_tensor_set(t[0], &nan, 0, sizeof nan);
        ct_tensor_set(t[1], &nan, 0, sizeof nan);
    }
}

typedef struct saved {
    ct_tensor *t[2];
    uint8_t *bytes;
    size_t n;
} saved;

static void run_case(const cto_case *c, side s[2], cto_rng *rng, result *r) {
    ct_tensor *out[2] = {NULL, NULL};
    saved *sent = NULL;
    int n_sent = 0;
    memset(r, 0, sizeof *r);
    r->nmse = -1.0;

    for (int i = 0; i < 2; i++) {
        s[i].ctx = NULL;
        s[i].buf = NULL;
    }
    for (int i = 0; i < 2; i++) {
        s[i].ctx = cto_case_context(1);
        if (!s[i].ctx) {
            fail(r, "ct_context_new failed: %s", ct_last_error());
            goto done;
        }
        memset(&s[i].b, 0, sizeof s[i].b);
        s[i].b.ctx = s[i].ctx;
        s[i].b.sentinels = true;
        if (!cto_case_build(c, &s[i].b, 1, &out[i]) || !cto_builder_finish(&s[i].b)) {
            fail(r, "building the graph failed: %s", s[i].b.err);
            goto done;
        }
        s[i].g = ct_graph_new(s[i].ctx, 256);
        if (!s[i].g || ct_graph_build_forward(s[i].g, out[i]) != CT_OK) {
            fail(r, "building the graph failed: %s", ct_last_error());
            goto done;
        }
    }
    int n_nodes = ct_graph_n_nodes(s[0].g);
    if (n_nodes != ct_graph_n_nodes(s[1].g)) {
        fail(r, "the two graphs differ in size");
        goto done;
    }

    for (int k = 0; k < n_nodes; k++) {
        for (int i = 0; i < 2; i++) {
            ct_tensor *t = ct_graph_node(s[i].g, k);
            if (!ct_device_supports_op(s[i].dev, t)) {
                r->code = RES_UNSUPPORTED;
                snprintf(r->msg, sizeof r->msg, "%s", ct_device_name(s[i].dev));
                goto done;
            }
        }
    }

    for (int i = 0; i < 2; i++) {
        ct_status st = ct_context_alloc_tensors(s[i].ctx, ct_device_buffer_type(s[i].dev), &s[i].buf);
        if (st != CT_OK) {
            fail(r, "%s: ct_context_alloc_tensors failed: %s", ct_device_name(s[i].dev), ct_last_error());
            goto done;
        }
    }

    /* identical contents on both sides; the contexts hold the same tensors in the same order */
    sent = cto_xcalloc(CTO_MAX_LEAF, sizeof *sent);
    for (ct_tensor *t0 = ct_context_first_tensor(s[0].ctx), *t1 = ct_context_first_tensor(s[1].ctx); t0 && t1;
         t0 = ct_context_next_tensor(s[0].ctx, t0), t1 = ct_context_next_tensor(s[1].ctx, t1)) {
        size_t nbytes = ct_nbytes(t0);
        if (t0->view_src || nbytes == 0) continue;
        const cto_leaf *leaf = cto_builder_leaf(&s[0].b, t0);
        uint8_t *bytes = cto_xmalloc(nbytes);
        cto_fill_tensor(t0, leaf, rng, bytes, false);
        if (ct_tensor_set(t0, bytes, 0, nbytes) != CT_OK || ct_tensor_set(t1, bytes, 0, nbytes) != CT_OK) {
            fail(r, "ct_tensor_set failed: %s", ct_last_error());
            free(bytes);
            goto done;
        }
        if (leaf && leaf->init == CTO_INIT_SENTINEL && n_sent < CTO_MAX_LEAF) {
            sent[n_sent].t[0] = t0;
            sent[n_sent].t[1] = t1;
            sent[n_sent].bytes = bytes;
            sent[n_sent].n = nbytes;
            n_sent++;
        } else {
            free(bytes);
        }
    }

    for (int k = 0; k < n_nodes && r->code == RES_OK; k++) {
        ct_tensor *t[2];
        for (int i = 0; i < 2; i++) t[i] = ct_graph_node(s[i].g, k);
        /* view nodes are computed too (a backend must accept them as no-ops) but not compared */
        for (int i = 0; i < 2; i++) {
            ct_graph *gv = ct_graph_view(s[i].ctx, s[i].g, k, k + 1);
            ct_status st = gv ? ct_backend_graph_compute(s[i].be, gv) : ct_last_status();
            if (st == CT_OK) st = ct_backend_synchronize(s[i].be);
            if (st != CT_OK) {
                r->code = RES_FAIL;
                snprintf(r->msg, sizeof r->msg, "%s: computing node %d (%s) failed: %s", ct_device_name(s[i].dev), k,
                         ct_op_name(t[i]->op), ct_last_error());
                goto done;
            }
        }
        if (ct_op_is_view(t[0]->op)) continue;
        inject_fault(t, n_sent ? sent[0].t[0] : NULL, n_sent ? sent[0].bytes[0] : 0);
        compare_node(c, t[0], t[1], r);
    }

    for (int j = 0; j < n_sent && r->code == RES_OK; j++) {
        uint8_t *got = cto_xmalloc(sent[j].n);
        for (int i = 0; i < 2 && r->code == RES_OK; i++) {
            if (ct_tensor_get(sent[j].t[i], got, 0, sent[j].n) != CT_OK || memcmp(got, sent[j].bytes, sent[j].n)) {
                r->code = RES_FAIL;
                snprintf(r->msg, sizeof r->msg, "%s: sentinel %d of %d was overwritten (write out of bounds)",
                         ct_device_name(s[i].dev), j, n_sent);
            }
        }
        free(got);
    }

done:
    if (sent) {
        for (int j = 0; j < n_sent; j++) free(sent[j].bytes);
        free(sent);
    }
    for (int i = 0; i < 2; i++) {
        ct_buffer_free(s[i].buf);
        ct_context_free(s[i].ctx);
        s[i].buf = NULL;
        s[i].ctx = NULL;
    }
}

ct_backend *cto_backend_new(const cto_opts *o, ct_device *dev) {
    ct_backend *be = NULL;
    if (ct_device_init_backend(dev, NULL, &be) != CT_OK) {
        fprintf(stderr, "ct-ops: cannot start a backend on %s: %s\n", ct_device_name(dev), ct_last_error());
        return NULL;
    }
    if (o->n_threads > 0 && ct_backend_is_cpu(be) && ct_backend_cpu_set_n_threads(be, o->n_threads) != CT_OK) {
        fprintf(stderr, "ct-ops: %s: %s\n", ct_device_name(dev), ct_last_error());
        ct_backend_free(be);
        return NULL;
    }
    return be;
}

static ct_device *baseline_of(ct_device *dev) {
    ct_device *cpu = ct_device_by_name("CPU");
    return dev == cpu ? ct_device_by_name("REF") : cpu;
}

typedef struct counts {
    int passed, failed, skipped;
} counts;

static void print_case(const cto_opts *o, const cto_case *c, ct_device *dev, ct_device *base, const result *r,
                       double ms, cto_progress *pr) {
    static const char *codes[3] = {"OK", "FAIL", "not supported"};
    if (o->json) {
        cto_progress_clear(pr); /* stdout may be the same terminal */
        cto_json_rec("case");
        printf(",\"device\":");
        cto_json_str(stdout, ct_device_name(dev));
        printf(",\"baseline\":");
        cto_json_str(stdout, ct_device_name(base));
        printf(",\"op\":");
        cto_json_str(stdout, cto_kind_name(c->kind));
        printf(",\"case\":");
        cto_json_str(stdout, c->name);
        printf(",\"status\":");
        cto_json_str(stdout, codes[r->code]);
        printf(",\"nmse\":");
        cto_json_num(stdout, r->nmse >= 0 ? r->nmse : NAN);
        printf(",\"max_nmse\":");
        cto_json_num(stdout, cto_kind_exact(c->kind) ? 0.0 : cto_kind_max_nmse(c->kind));
        printf(",\"exact\":%s,\"ms\":", cto_kind_exact(c->kind) ? "true" : "false");
        cto_json_num(stdout, ms);
        printf(",\"message\":");
        cto_json_str(stdout, r->msg);
        printf("}\n");
        return;
    }
    /* without -v only failures: the per-op table counts the rest */
    if (r->code != RES_FAIL && !o->verbose) return;
    cto_progress_clear(pr);
    if (r->code == RES_UNSUPPORTED) printf("  %s: not supported [%s]\n", c->name, r->msg);
    else if (r->code == RES_FAIL) printf("  %s: FAIL: %s\n", c->name, r->msg);
    else if (r->nmse >= 0) printf("  %s: OK (nmse=%.3g, %.2f ms)\n", c->name, r->nmse, ms);
    else printf("  %s: OK (bytes equal, %.2f ms)\n", c->name, ms);
    fflush(stdout);
}

/* Per device: passed / failed / not supported of each op that had cases. */
static void print_op_table(const cto_opts *o, ct_device *dev, counts per_op[CTO_KIND_COUNT]) {
    if (!o->json) printf("  %-12s %7s %7s %14s\n", "op", "passed", "failed", "not supported");
    for (int k = 0; k < CTO_KIND_COUNT; k++) {
        const counts *c = &per_op[k];
        if (c->passed + c->failed + c->skipped == 0) continue;
        if (o->json) {
            cto_json_rec("op");
            printf(",\"device\":");
            cto_json_str(stdout, ct_device_name(dev));
            printf(",\"op\":");
            cto_json_str(stdout, cto_kind_name((cto_kind)k));
            printf(",\"passed\":%d,\"failed\":%d,\"not_supported\":%d}\n", c->passed, c->failed, c->skipped);
        } else {
            printf("  %-12s %7d %7d %14d\n", cto_kind_name((cto_kind)k), c->passed, c->failed, c->skipped);
        }
    }
}

static int test_device(const cto_opts *o, ct_device *dev, ct_device *base, const cto_case_list *cases, cto_rng *rng,
                       counts *total, cto_progress *pr) {
    side s[2];
    memset(s, 0, sizeof s);
    s[0].dev = dev;
    s[1].dev = base;
    s[0].be = cto_backend_new(o, dev);
    s[1].be = s[0].be ? cto_backend_new(o, base) : NULL;
    if (!s[0].be || !s[1].be) {
        ct_backend_free(s[0].be);
        total->failed++;
        return CTO_EXIT_FAIL;
    }
    size_t mfree = 0, mtotal = 0;
    ct_device_memory(dev, &mfree, &mtotal);
    cto_progress_clear(pr);
    if (o->json) {
        cto_json_rec("device");
        printf(",\"device\":");
        cto_json_str(stdout, ct_device_name(dev));
        printf(",\"description\":");
        cto_json_str(stdout, ct_device_description(dev));
        printf(",\"baseline\":");
        cto_json_str(stdout, ct_device_name(base));
        printf(",\"memory_free\":%zu,\"memory_total\":%zu}\n", mfree, mtotal);
    } else {
        printf("Testing %s (%s, %zu/%zu MiB free) against %s\n", ct_device_name(dev), ct_device_description(dev),
               mfree >> 20, mtotal >> 20, ct_device_name(base));
    }
    fflush(stdout);

    double t_start = cto_now();
    counts cnt = {0, 0, 0};
    counts per_op[CTO_KIND_COUNT];
    memset(per_op, 0, sizeof per_op);
    for (size_t i = 0; i < cases->n; i++) {
        const cto_case *c = &cases->v[i];
        if (!cto_case_selected(o, c)) continue;
        cto_progress_case(pr, pr->done, ct_device_name(dev), c->name);
        result r;
        double t0 = cto_now();
        run_case(c, s, rng, &r);
        double t1 = cto_now();
        pr->done++;
        print_case(o, c, dev, base, &r, 1e3 * (t1 - t0), pr);
        counts *po = &per_op[c->kind];
        if (r.code == RES_OK) cnt.passed++, po->passed++;
        else if (r.code == RES_FAIL) cnt.failed++, po->failed++;
        else cnt.skipped++, po->skipped++;
    }
    cto_progress_clear(pr);
    print_op_table(o, dev, per_op);
    if (!o->json)
        printf("%s: %d passed, %d failed, %d not supported (%.1f s)\n", ct_device_name(dev), cnt.passed, cnt.failed,
               cnt.skipped, cto_now() - t_start);
    fflush(stdout);
    total->passed += cnt.passed;
    total->failed += cnt.failed;
    total->skipped += cnt.skipped;
    ct_backend_free(s[0].be);
    ct_backend_free(s[1].be);
    return cnt.failed ? CTO_EXIT_FAIL : CTO_EXIT_OK;
}

int cto_cmd_test(const cto_opts *o) {
    ct_device *devs[64], *bases[64];
    int n_dev = 0;
    if (o->device) {
        ct_device *dev = ct_device_by_name(o->device);
        if (!dev) {
            fprintf(stderr, "ct-ops: unknown device '%s' (see ct-ops devices)\n", o->device);
            return CTO_EXIT_USAGE;
        }
        ct_device *base = baseline_of(dev);
        if (!base || base == dev) {
            fprintf(stderr, "ct-ops: no baseline device for %s (the baseline is CPU, and REF for CPU)\n",
                    ct_device_name(dev));
            return CTO_EXIT_FAIL;
        }
        devs[0] = dev;
        bases[0] = base;
        n_dev = 1;
    } else {
        ct_device *ref = ct_device_by_name("REF");
        for (size_t i = 0; i < ct_device_count() && n_dev < 64; i++) {
            ct_device *dev = ct_device_get(i);
            ct_device *base = baseline_of(dev);
            if (dev == ref) continue;
            if (!base || base == dev) {
                fprintf(stderr, "ct-ops: skipping %s: no baseline device\n", ct_device_name(dev));
                continue;
            }
            devs[n_dev] = dev;
            bases[n_dev] = base;
            n_dev++;
        }
    }

    cto_case_list cases = {NULL, 0, 0};
    cto_cases_test(&cases);
    const size_t n_sel = cto_count_selected(o, &cases);
    if (n_sel == 0) {
        cto_case_list_free(&cases);
        return CTO_EXIT_USAGE;
    }

    cto_rng rng;
    uint64_t seed = o->seed_set ? o->seed : (uint64_t)(cto_now() * 1e6);
    cto_rng_seed(&rng, seed);
    if (o->json) {
        cto_json_run("test");
        printf(",\"seed\":%llu,\"cases\":%zu,\"devices\":%d}\n", (unsigned long long)seed, n_sel, n_dev);
    } else {
        printf("seed: %llu\n", (unsigned long long)seed);
    }
    fflush(stdout);

    /* "on CPU (against REF)", or "1768 on each of CPU, OpenCL0" */
    char what[256];
    if (n_dev == 1) {
        snprintf(what, sizeof what, "on %s (against %s)", ct_device_name(devs[0]), ct_device_name(bases[0]));
    } else {
        int len = snprintf(what, sizeof what, "(%zu on each of", n_sel);
        for (int i = 0; i < n_dev && len > 0 && (size_t)len < sizeof what; i++)
            len += snprintf(what + len, sizeof what - (size_t)len, "%s %s", i ? "," : "", ct_device_name(devs[i]));
        if (len > 0 && (size_t)len < sizeof what) snprintf(what + len, sizeof what - (size_t)len, ")");
    }
    cto_progress pr;
    cto_progress_start(&pr, o->quiet, "test", n_sel * (size_t)n_dev, what);
    counts total = {0, 0, 0};
    int rc = CTO_EXIT_OK;
    for (int i = 0; i < n_dev; i++)
        if (test_device(o, devs[i], bases[i], &cases, &rng, &total, &pr) != CTO_EXIT_OK) rc = CTO_EXIT_FAIL;
    cto_case_list_free(&cases);
    cto_progress_end(&pr);

    if (o->json) {
        cto_json_rec("summary");
        printf(",\"passed\":%d,\"failed\":%d,\"skipped\":%d,\"devices\":%d}\n", total.passed, total.failed,
               total.skipped, n_dev);
        fprintf(stderr, "%d passed, %d failed, %d skipped\n", total.passed, total.failed, total.skipped);
    } else {
        printf("%d passed, %d failed, %d skipped\n", total.passed, total.failed, total.skipped);
    }
    return rc;
}
