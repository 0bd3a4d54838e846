/* ct-ops: command line, and the devices and support subcommands. */
#include "ct_ops.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum {
    F_JSON = 1 << 0, F_OP = 1 << 1, F_DEV = 1 << 2, F_PAT = 1 << 3, F_VERB = 1 << 4,
    F_SEED = 1 << 5, F_THREADS = 1 << 6, F_PERF = 1 << 7, F_QUIET = 1 << 8,
};

typedef struct command {
    const char *name;
    int (*run)(const cto_opts *o);
    int flags;
    const char *synopsis;
    const char *help;
} command;

static const command commands[] = {
    {"devices", cto_cmd_devices, F_JSON, "devices [--json]",
     "Lists every backend registration and device: name, description, type, memory,\n"
     "capabilities and buffer types.\n"},
    {"selfcheck", cto_cmd_selfcheck, F_JSON | F_VERB | F_SEED, "selfcheck [--json] [-v] [--seed N]",
     "Prints the type table and checks the formats: fp16/bf16 conversion against an\n"
     "independent rounding, quantize/dequantize error bounds on random data, and that\n"
     "quantizing the same data twice gives the same bytes.\n"},
    {"support", cto_cmd_support, F_JSON | F_OP | F_DEV | F_PAT | F_VERB,
     "support [--json] [-o OP] [-b DEVICE] [-p SUBSTRING] [-v]",
     "Prints the op x type x device matrix of ct_device_supports_op over the test\n"
     "cases: yes (every case), part (some cases), no.\n"},
    {"test", cto_cmd_test, F_JSON | F_OP | F_DEV | F_PAT | F_VERB | F_SEED | F_THREADS | F_QUIET,
     "test [-o OP] [-b DEVICE] [-p SUBSTRING] [--json] [-v] [-q] [--seed N] [-t THREADS]",
     "Runs every case on the tested device and on its baseline (CPU, or REF when the\n"
     "tested device is CPU) node by node, and compares: copies, GET_ROWS and SET_ROWS\n"
     "byte for byte, the rest by NMSE normalized by the baseline. Without -b, every\n"
     "device except REF is tested. Sentinels around every tensor catch writes out of\n"
     "bounds. Prints each failure, then per device a table of passed / failed / not\n"
     "supported cases per op, and ends with 'N passed, N failed, N skipped' (skipped:\n"
     "not supported). -v prints every case. Progress goes to stderr (-q: none).\n"
     "--seed N repeats a run's data. CT_OPS_FAULT=output|sentinel|nan damages each\n"
     "result on purpose, to check that the comparison catches it.\n"},
    {"perf", cto_cmd_perf, F_JSON | F_OP | F_DEV | F_PAT | F_VERB | F_SEED | F_THREADS | F_PERF | F_QUIET,
     "perf [-o OP] [-b DEVICE] [-p SUBSTRING] [--json] [-q] [--quick] [--size-scale S] [--min-time SEC] "
     "[--copy-each] [-t THREADS]",
     "Times each case: us/run, GB/s (FLOP/s for MUL_MAT with n > 8) and GB/s as a\n"
     "fraction of the device's own copy bandwidth, measured first in the same run.\n"
     "--quick: small sizes and short runs. --size-scale S (0 < S <= 1) shrinks the\n"
     "big dimensions. --min-time: seconds to repeat each case (default 0.5).\n"
     "--copy-each: time the CPY kernel's copy again before each case and take the\n"
     "fraction of that (or of the buffer copy, if faster), for machines whose\n"
     "bandwidth drifts during a run (shared VMs).\n"
     "Without -b, every device except REF. Progress goes to stderr (-q: none).\n"},
};
#define N_COMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

static void usage(FILE *f) {
    fprintf(f, "usage: ct-ops <command> [options]\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  ct-ops %s\n", commands[i].synopsis);
    fprintf(f, "\noptions:\n"
               "  -o OP          only cases of this op (");
    for (int k = 0, shown = 0; k < CTO_KIND_COUNT; k++) {
        if (!cto_kind_listed((cto_kind)k)) continue;
        fprintf(f, "%s%s", shown ? (shown % 7 ? ", " : ",\n                 ") : "", cto_kind_name((cto_kind)k));
        shown++;
    }
    fprintf(f, ");\n"
               "                 repeatable, or a comma-separated list, in any letter case\n"
               "  -b DEVICE      only this device (see ct-ops devices)\n"
               "  -p SUBSTRING   only cases whose name contains SUBSTRING (case-sensitive)\n"
               "  --json         JSON Lines on stdout: one object per line, every one starting\n"
               "                 {\"schema\":%d,\"type\":...}; the first is the run record\n"
               "                 {\"type\":\"run\",\"command\":...,\"ctensor\":VERSION,...}. README.md\n"
               "                 lists each command's record types.\n"
               "  -v             verbose\n"
               "  -q, --quiet    no progress on stderr (test, perf)\n"
               "\n'ct-ops <command> --help' describes a command. Exit status: 0 success, 1 failure,\n"
               "2 usage error, including -o/-p filters that select no case.\n", CTO_JSON_SCHEMA);
}

/* An unknown -o op: the message lists the valid ones. */
static int unknown_op(const char *name) {
    fprintf(stderr, "ct-ops: unknown op '%s'; ops:", name);
    for (int k = 0; k < CTO_KIND_COUNT; k++) {
        if (cto_kind_listed((cto_kind)k)) fprintf(stderr, " %s", cto_kind_name((cto_kind)k));
    }
    fprintf(stderr, "\n(see ct-ops --help)\n");
    return CTO_EXIT_USAGE;
}

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "ct-ops: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see ct-ops --help)\n");
    return CTO_EXIT_USAGE;
}

bool cto_case_selected(const cto_opts *o, const cto_case *c) {
    if (o->n_ops > 0) {
        bool hit = false;
        for (int i = 0; i < o->n_ops && !hit; i++) {
            cto_kind k;
            if (!cto_kind_from_name(o->ops[i], &k)) continue;
            /* ct_cast builds a CPY node, so -o CPY takes the CAST cases too */
            hit = k == c->kind || (k == CTO_CPY && c->kind == CTO_CAST);
        }
        if (!hit) return false;
    }
    return !o->pattern || cto_contains(c->name, o->pattern);
}

size_t cto_count_selected(const cto_opts *o, const cto_case_list *l) {
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) n += cto_case_selected(o, &l->v[i]);
    if (n == 0) {
        fprintf(stderr, "ct-ops %s: no case matches", o->cmd);
        for (int i = 0; i < o->n_ops; i++) fprintf(stderr, "%s%s", i ? "," : " -o ", o->ops[i]);
        if (o->pattern) fprintf(stderr, " -p '%s'", o->pattern);
        fprintf(stderr, "; nothing was run (-p is a case-sensitive substring of the names that -v prints)\n");
    }
    return n;
}

static bool parse_double(const char *s, double *v) {
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return errno == 0 && end != s && *end == '\0';
}

static bool parse_u64(const char *s, uint64_t *v) {
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') return false; /* strtoull would take " -1" as 2^64 - 1 */
    *v = strtoull(s, &end, 0);
    return errno == 0 && end != s && *end == '\0';
}

int main(int argc, char **argv) {
    static char op_buf[1024];
    cto_opts o;
    memset(&o, 0, sizeof o);
    o.size_scale = 1.0;
    o.min_time = -1.0;

    if (argc < 2) {
        usage(stderr);
        return CTO_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return CTO_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ct-ops (ctensor %s)\n", ct_version());
        return CTO_EXIT_OK;
    }
    const command *cmd = NULL;
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) cmd = &commands[i];
    if (!cmd) return usage_error("unknown command '%s'", argv[1]);
    o.cmd = cmd->name;

    size_t op_used = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int need = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: ct-ops %s\n\n%s", cmd->synopsis, cmd->help);
            return CTO_EXIT_OK;
        } else if (!strcmp(a, "--json")) {
            need = F_JSON;
            o.json = true;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            need = F_VERB;
            o.verbose = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            need = F_QUIET;
            o.quiet = true;
        } else if (!strcmp(a, "--quick")) {
            need = F_PERF;
            o.quick = true;
        } else if (!strcmp(a, "--copy-each")) {
            need = F_PERF;
            o.copy_each = true;
        } else if (!strcmp(a, "-o") || !strcmp(a, "-b") || !strcmp(a, "-p") || !strcmp(a, "--seed") ||
                   !strcmp(a, "-t") || !strcmp(a, "--size-scale") || !strcmp(a, "--min-time")) {
            if (!val) return usage_error("option %s needs a value", a);
            i++;
            if (!strcmp(a, "-o")) {
                need = F_OP;
                /* split a comma-separated list into the static buffer */
                size_t len = strlen(val);
                if (op_used + len + 1 > sizeof op_buf) return usage_error("too many ops in %s", "-o");
                char *copy = op_buf + op_used;
                memcpy(copy, val, len + 1);
                op_used += len + 1;
                const int n_before = o.n_ops;
                for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
                    cto_kind k;
                    if (!cto_kind_from_name(tok, &k)) return unknown_op(tok);
                    if (o.n_ops >= 32) return usage_error("too many ops in %s", "-o");
                    o.ops[o.n_ops++] = tok;
                }
                /* no op at all would select every op, the opposite of a filter */
                if (o.n_ops == n_before) return usage_error("option -o '%s' names no op", val);
            } else if (!strcmp(a, "-b")) {
                need = F_DEV;
                o.device = val;
            } else if (!strcmp(a, "-p")) {
                need = F_PAT;
                o.pattern = val;
            } else if (!strcmp(a, "--seed")) {
                need = F_SEED;
                if (!parse_u64(val, &o.seed)) return usage_error("bad seed '%s'", val);
                o.seed_set = true;
            } else if (!strcmp(a, "-t")) {
                uint64_t t;
                need = F_THREADS;
                if (!parse_u64(val, &t) || t < 1 || t > INT_MAX) return usage_error("bad thread count '%s'", val);
                o.n_threads = (int)t;
            } else if (!strcmp(a, "--size-scale")) {
                need = F_PERF;
                if (!parse_double(val, &o.size_scale) || !(o.size_scale > 0.0 && o.size_scale <= 1.0))
                    return usage_error("bad --size-scale '%s' (0 < S <= 1)", val);
            } else {
                need = F_PERF;
                if (!parse_double(val, &o.min_time) || !(o.min_time >= 0.0 && o.min_time <= 3600.0))
                    return usage_error("bad --min-time '%s'", val);
            }
        } else {
            return usage_error("unknown option '%s'", a);
        }
        if (!(cmd->flags & need)) {
            fprintf(stderr, "ct-ops: option %s does not apply to '%s'\n(see ct-ops %s --help)\n", a, cmd->name,
                    cmd->name);
            return CTO_EXIT_USAGE;
        }
    }
    if (o.n_threads > 0) {
        /* the CPU backend's own limit decides, so a count it refuses is a usage error, not ignored */
        ct_backend *be = NULL;
        ct_status st = ct_backend_init_by_name("CPU", NULL, &be);
        if (st == CT_OK) st = ct_backend_cpu_set_n_threads(be, o.n_threads);
        ct_backend_free(be);
        if (st != CT_OK) {
            fprintf(stderr, "ct-ops: bad thread count '%d': %s\n(see ct-ops --help)\n", o.n_threads, ct_last_error());
            return CTO_EXIT_USAGE;
        }
    }
    if (o.device && !ct_device_by_name(o.device)) {
        fprintf(stderr, "ct-ops: unknown device '%s'; devices:", o.device);
        for (size_t i = 0; i < ct_device_count(); i++) fprintf(stderr, " %s", ct_device_name(ct_device_get(i)));
        fprintf(stderr, "\n");
        return CTO_EXIT_USAGE;
    }
    int rc = cmd->run(&o);
    fflush(stdout);
    return rc;
}

/* ---- devices -------------------------------------------------------------- */

static const char *yn(bool b) {
    return b ? "yes" : "no";
}

static void json_buft(const char *key, ct_buffer_type *buft) {
    printf(",\"%s\":", key);
    if (!buft) {
        printf("null");
        return;
    }
    printf("{\"name\":");
    cto_json_str(stdout, ct_buffer_type_name(buft));
    printf(",\"alignment\":%zu,\"max_size\":%zu,\"is_host\":%s}", ct_buffer_type_alignment(buft),
           ct_buffer_type_max_size(buft), ct_buffer_type_is_host(buft) ? "true" : "false");
}

static void text_buft(const char *what, ct_buffer_type *buft) {
    if (!buft) {
        printf("  %s: none\n", what);
        return;
    }
    printf("  %s: %s (alignment %zu, max size %zu, host %s)\n", what, ct_buffer_type_name(buft),
           ct_buffer_type_alignment(buft), ct_buffer_type_max_size(buft), yn(ct_buffer_type_is_host(buft)));
}

int cto_cmd_devices(const cto_opts *o) {
    size_t n_reg = ct_backend_reg_count(), n_dev = ct_device_count();
    int rc = CTO_EXIT_OK;
    if (o->json) {
        cto_json_run("devices");
        printf(",\"registrations\":%zu,\"devices\":%zu}\n", n_reg, n_dev);
    } else {
        printf("ctensor %s: %zu registration(s), %zu device(s)\n", ct_version(), n_reg, n_dev);
    }
    for (size_t i = 0; i < n_reg; i++) {
        ct_backend_reg *reg = ct_backend_reg_get(i);
        if (!reg) {
            rc = CTO_EXIT_FAIL;
            continue;
        }
        if (o->json) {
            cto_json_rec("registration");
            printf(",\"index\":%zu,\"name\":", i);
            cto_json_str(stdout, ct_backend_reg_name(reg));
            printf(",\"devices\":[");
            for (size_t j = 0; j < ct_backend_reg_dev_count(reg); j++) {
                printf("%s", j ? "," : "");
                cto_json_str(stdout, ct_device_name(ct_backend_reg_dev_get(reg, j)));
            }
            printf("]}\n");
        } else {
            printf("registration %zu: %s, %zu device(s)\n", i, ct_backend_reg_name(reg),
                   ct_backend_reg_dev_count(reg));
        }
    }
    for (size_t i = 0; i < n_dev; i++) {
        ct_device *dev = ct_device_get(i);
        ct_device_props p;
        memset(&p, 0, sizeof p);
        if (!dev || ct_device_get_props(dev, &p) != CT_OK) {
            fprintf(stderr, "ct-ops: device %zu: %s\n", i, ct_last_error());
            rc = CTO_EXIT_FAIL;
            continue;
        }
        ct_backend_reg *reg = ct_device_reg(dev);
        const char *reg_name = reg ? ct_backend_reg_name(reg) : "?";
        if (o->json) {
            cto_json_rec("device");
            printf(",\"index\":%zu,\"device\":", i);
            cto_json_str(stdout, p.name);
            printf(",\"description\":");
            cto_json_str(stdout, p.description);
            printf(",\"device_type\":");
            cto_json_str(stdout, ct_device_type_name(p.type));
            printf(",\"registration\":");
            cto_json_str(stdout, reg_name);
            printf(",\"memory_free\":%zu,\"memory_total\":%zu", p.memory_free, p.memory_total);
            printf(",\"caps\":{\"async\":%s,\"host_buffer\":%s,\"buffer_from_host_ptr\":%s,\"events\":%s}",
                   p.caps.async ? "true" : "false", p.caps.host_buffer ? "true" : "false",
                   p.caps.buffer_from_host_ptr ? "true" : "false", p.caps.events ? "true" : "false");
            json_buft("buffer_type", ct_device_buffer_type(dev));
            json_buft("host_buffer_type", ct_device_host_buffer_type(dev));
            printf("}\n");
        } else {
            printf("device %zu: %s\n", i, p.name);
            printf("  description: %s\n", p.description);
            printf("  type: %s\n", ct_device_type_name(p.type));
            printf("  registration: %s\n", reg_name);
            printf("  memory: %zu MiB free / %zu MiB total\n", p.memory_free >> 20, p.memory_total >> 20);
            printf("  caps: async %s, host_buffer %s, buffer_from_host_ptr %s, events %s\n", yn(p.caps.async),
                   yn(p.caps.host_buffer), yn(p.caps.buffer_from_host_ptr), yn(p.caps.events));
            text_buft("buffer type", ct_device_buffer_type(dev));
            text_buft("host buffer type", ct_device_host_buffer_type(dev));
        }
    }
    return rc;
}

/* ---- support -------------------------------------------------------------- */

static void type_label(const cto_case *c, char *buf, size_t n) {
    switch (c->kind) {
    case CTO_MUL_MAT:
        snprintf(buf, n, "%s x %s", ct_type_name(c->ta), ct_type_name(c->tb));
        break;
    case CTO_CPY: case CTO_CAST:
        snprintf(buf, n, "%s -> %s", ct_type_name(c->ta), ct_type_name(c->tb));
        break;
    case CTO_SET_ROWS:
        if (c->tb != CT_TYPE_F32 || c->ti != CT_TYPE_I64)
            snprintf(buf, n, "%s <- %s[%s]", ct_type_name(c->ta), ct_type_name(c->tb), ct_type_name(c->ti));
        else
            snprintf(buf, n, "%s", ct_type_name(c->ta));
        break;
    default:
        snprintf(buf, n, "%s", ct_type_name(c->ta));
    }
}

/* 1: every non-view node supported, 0: not, -1: the graph could not be built. */
static int case_supported(const cto_case *c, ct_device *dev) {
    ct_context *ctx = cto_case_context(1);
    if (!ctx) return -1;
    cto_builder b;
    memset(&b, 0, sizeof b);
    b.ctx = ctx;
    ct_tensor *out = NULL;
    ct_graph *g = NULL;
    int res = -1;
    if (cto_case_build(c, &b, 1, &out) && (g = ct_graph_new(ctx, 256)) && ct_graph_build_forward(g, out) == CT_OK) {
        res = 1;
        for (int i = 0; i < ct_graph_n_nodes(g) && res; i++) {
            ct_tensor *t = ct_graph_node(g, i);
            if (ct_op_is_view(t->op)) continue;
            if (!ct_device_supports_op(dev, t)) res = 0;
        }
    }
    ct_context_free(ctx);
    return res;
}

typedef struct srow {
    cto_kind kind;
    char type[64];
    int n_cases;
    int yes[64], built[64];
} srow;

int cto_cmd_support(const cto_opts *o) {
    ct_device *devs[64];
    int n_dev = 0;
    if (o->device) {
        devs[n_dev++] = ct_device_by_name(o->device);
    } else {
        for (size_t i = 0; i < ct_device_count() && n_dev < 64; i++) devs[n_dev++] = ct_device_get(i);
    }
    cto_case_list cases = {NULL, 0, 0};
    cto_cases_test(&cases);
    if (cto_count_selected(o, &cases) == 0) {
        cto_case_list_free(&cases);
        return CTO_EXIT_USAGE;
    }
    srow *rows = cto_xcalloc(cases.n + 1, sizeof *rows);
    int n_rows = 0, n_errors = 0;
    for (size_t i = 0; i < cases.n; i++) {
        const cto_case *c = &cases.v[i];
        if (!cto_case_selected(o, c)) continue;
        char label[64];
        type_label(c, label, sizeof label);
        srow *r = NULL;
        for (int j = 0; j < n_rows && !r; j++)
            if (rows[j].kind == c->kind && !strcmp(rows[j].type, label)) r = &rows[j];
        if (!r) {
            r = &rows[n_rows++];
            r->kind = c->kind;
            snprintf(r->type, sizeof r->type, "%s", label);
        }
        r->n_cases++;
        for (int d = 0; d < n_dev; d++) {
            int s = case_supported(c, devs[d]);
            if (s < 0) {
                n_errors++;
                if (o->verbose) fprintf(stderr, "ct-ops: %s: cannot build: %s\n", c->name, ct_last_error());
                continue;
            }
            r->built[d]++;
            r->yes[d] += s;
        }
    }
    static const char *cells[3] = {"no", "part", "yes"};
    if (o->json) {
        cto_json_run("support");
        printf(",\"devices\":[");
        for (int d = 0; d < n_dev; d++) {
            printf("%s", d ? "," : "");
            cto_json_str(stdout, ct_device_name(devs[d]));
        }
        printf("]}\n");
    } else {
        printf("%-10s %-22s", "op", "type");
        for (int d = 0; d < n_dev; d++) printf(" %-8s", ct_device_name(devs[d]));
        printf("\n");
    }
    for (int j = 0; j < n_rows; j++) {
        srow *r = &rows[j];
        if (o->json) {
            cto_json_rec("support");
            printf(",\"op\":");
            cto_json_str(stdout, cto_kind_name(r->kind));
            printf(",\"types\":");
            cto_json_str(stdout, r->type);
            printf(",\"cases\":%d,\"support\":{", r->n_cases);
        } else {
            printf("%-10s %-22s", cto_kind_name(r->kind), r->type);
        }
        for (int d = 0; d < n_dev; d++) {
            int cell = r->yes[d] == 0 ? 0 : (r->yes[d] == r->built[d] ? 2 : 1);
            if (o->json) {
                printf("%s", d ? "," : "");
                cto_json_str(stdout, ct_device_name(devs[d]));
                printf(":\"%s\"", cells[cell]);
            } else {
                printf(" %-8s", cells[cell]);
            }
        }
        printf(o->json ? "}}\n" : "\n");
    }
    if (o->json) {
        cto_json_rec("summary");
        printf(",\"rows\":%d,\"build_errors\":%d}\n", n_rows, n_errors);
    } else if (n_errors) {
        printf("%d case(s) could not be built (-v names them)\n", n_errors);
    }
    free(rows);
    cto_case_list_free(&cases);
    return n_errors ? CTO_EXIT_FAIL : CTO_EXIT_OK;
}
