/* ct-ops helpers: random numbers, time, allocation, JSON and text output. */
#include "ct_ops.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
