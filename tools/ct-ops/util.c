/* ct-ops helpers: random numbers, time, allocation, JSON and text output. */
#include "ct_ops.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

void cto_rng_seed(cto_rng *r, uint64_t seed) {
    r->s = seed;
}

/* splitmix64: small, fast, and the same sequence everywhere for a given seed. */
uint64_t cto_rng_u64(cto_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float cto_rng_float(cto_rng *r, float lo, float hi) {
    double u = (double)(cto_rng_u64(r) >> 40) / (double)(1ull << 24);
    float x = (float)(lo + (hi - lo) * u);
    return x < hi ? x : lo;
}

uint64_t cto_rng_below(cto_rng *r, uint64_t n) {
    return cto_rng_u64(r) % n;
}

double cto_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *cto_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "ct-ops: out of host memory (%zu bytes)\n", n);
        exit(CTO_EXIT_FAIL);
    }
    return p;
}

void *cto_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "ct-ops: out of host memory (%zu x %zu bytes)\n", n, size);
        exit(CTO_EXIT_FAIL);
    }
    return p;
}

void cto_json_rec(const char *type) {
    printf("{\"schema\":%d,\"type\":", CTO_JSON_SCHEMA);
    cto_json_str(stdout, type);
}

void cto_json_run(const char *command) {
    cto_json_rec("run");
    printf(",\"command\":");
    cto_json_str(stdout, command);
    printf(",\"ctensor\":");
    cto_json_str(stdout, ct_version());
}

void cto_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

void cto_json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

bool cto_streq_ci(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    }
    return *a == *b;
}

bool cto_contains(const char *hay, const char *needle) {
    return strstr(hay, needle) != NULL;
}

const char *cto_fmt_si(char *buf, size_t n, double v) {
    static const char *suffix[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (fabs(v) >= 1000.0 && i < 5) {
        v /= 1000.0;
        i++;
    }
    snprintf(buf, n, "%.2f %s", v, suffix[i]);
    return buf;
}

/* ---- progress ------------------------------------------------------------- */

static void fmt_secs(char *buf, size_t n, double s) {
    if (!(s >= 0.0) || s > 359999.0) snprintf(buf, n, "?");
    else if (s < 60.0) snprintf(buf, n, "%.0f s", s);
    else if (s < 3600.0) snprintf(buf, n, "%d min %02d s", (int)s / 60, (int)s % 60);
    else snprintf(buf, n, "%d h %02d min", (int)s / 3600, (int)s % 3600 / 60);
}

void cto_progress_start(cto_progress *p, bool quiet, const char *cmd, size_t total, const char *what) {
    memset(p, 0, sizeof *p);
    p->on = !quiet;
    p->tty = isatty(STDERR_FILENO) == 1;
    p->total = total;
    p->cmd = cmd;
    p->t_start = p->t_last = cto_now();
    p->interval = p->tty ? 0.1 : 5.0;
    const char *env = getenv("CT_OPS_PROGRESS_SECONDS");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (*end == '\0' && v >= 0.0 && v <= 3600.0) p->interval = v;
    }
    if (!p->on) return;
    fflush(stdout);
    fprintf(stderr, "ct-ops %s: %zu case%s%s%s\n", cmd, total, total == 1 ? "" : "s", what ? " " : "",
            what ? what : "");
}

void cto_progress_case(cto_progress *p, size_t done, const char *dev, const char *name) {
    if (!p->on) return;
    p->done = done;
    const double now = cto_now();
    if (done > 0 && now - p->t_last < p->interval) return;
    p->t_last = now;
    const double elapsed = now - p->t_start;
    char left[32];
    if (done == 0 || elapsed < 1e-3) snprintf(left, sizeof left, "?");
    else fmt_secs(left, sizeof left, elapsed / (double)done * (double)(p->total - done));
    const int pct = p->total ? (int)(100.0 * (double)done / (double)p->total) : 100;
    char line[200];
    int n = snprintf(line, sizeof line, "[%zu/%zu %3d%%, about %s left] %s: %s", done + 1, p->total, pct, left, dev,
                     name);
    if (p->tty) {
        /* one terminal line, so that \r returns to its start: cut to the terminal's width */
        struct winsize ws;
        int cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
        if (cols > (int)sizeof line) cols = (int)sizeof line;
        if (cols < 8) cols = 8;
        if (n >= cols) memcpy(line + cols - 4, "...", 4);
        fflush(stdout);
        fprintf(stderr, "\r%s\033[K", line);
        p->drawn = true;
    } else {
        if (n >= (int)sizeof line) memcpy(line + sizeof line - 4, "...", 4);
        fflush(stdout);
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
}

void cto_progress_clear(cto_progress *p) {
    if (p->on && p->tty && p->drawn) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        p->drawn = false;
    }
}

void cto_progress_end(cto_progress *p) {
    if (!p->on) return;
    cto_progress_clear(p);
    char took[32];
    fmt_secs(took, sizeof took, cto_now() - p->t_start);
    fflush(stdout);
    fprintf(stderr, "ct-ops %s: %zu case%s done in %s\n", p->cmd, p->total, p->total == 1 ? "" : "s", took);
}
