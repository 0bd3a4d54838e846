/* Fault injection for OpenCL object creation, for the reliability tests: the
 * OpenCL layer asks before every clCreate* whether to fail it, so a test can
 * make the n-th creation fail and check that a status comes back and nothing
 * leaks. Host allocations need no such hook: a test installs a failing
 * ct_allocator instead. Disabled (fail-at -1) unless a test sets it.
 *
 * The site registry shows that the fault-injection test fails every site the
 * rest of the suite reaches: with CT_FAULT_SITES_FILE set, each allocation or
 * creation site (file:line) reached is remembered, and at exit appended to the
 * file, marked "failed" when one of its calls failed. */
#include "internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_long cl_fail_at = -1;
static atomic_long cl_count;

void ct_fault_set_cl_fail_at(long n) {
    atomic_store(&cl_fail_at, -1);
    atomic_store(&cl_count, 0);
    atomic_store(&cl_fail_at, n < 0 ? -1 : n);
}

long ct_fault_cl_count(void) { return atomic_load(&cl_count); }

bool ct_fault_cl_should_fail(const char *what, const char *file, int line) {
    /* Counted always, so that a run without failures tells how many points exist. */
    long index = atomic_fetch_add_explicit(&cl_count, 1, memory_order_relaxed);
    bool fail = index == atomic_load_explicit(&cl_fail_at, memory_order_relaxed);
    ct_fault_site_reached(CT_FAULT_SITE_OPENCL, file, line, fail);
    if (!fail) return false;
    ct_log(CT_LOG_DEBUG, "fault injection: failing OpenCL object creation #%ld (%s)", index, what ? what : "?");
    return true;
}

/* ---- the site registry -------------------------------------------------------- */

/* A fixed open-addressing set keyed by the __FILE__ pointer and line: it is
 * filled from inside the allocator, so it must not allocate. */
enum { SITE_SLOTS = 1024, SITE_PATH_MAX = 4096 };

typedef struct site {
    const char *file; /* NULL: empty slot */
    int line;
    unsigned char kind;
    bool failed;
} site;

static site sites[SITE_SLOTS];
static int n_sites;
static bool sites_overflow;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t sites_once = PTHREAD_ONCE_INIT;
static atomic_bool sites_enabled;
static char sites_path[SITE_PATH_MAX];

/* The path from the source root: the part from the last "src/" on. */
static const char *relative_path(const char *file) {
    const char *rel = file;
    for (const char *p = strstr(file, "src/"); p; p = strstr(p + 1, "src/")) {
        if (p == file || p[-1] == '/') rel = p;
    }
    return rel;
}

static void write_sites(void) {
    int fd = open(sites_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    pthread_mutex_lock(&sites_lock);
    char line[SITE_PATH_MAX + 64];
    bool ok = true;
    for (int i = 0; ok && i <= SITE_SLOTS; i++) {
        int len;
        if (i == SITE_SLOTS) { /* the checker fails on this line rather than miss sites */
            if (!sites_overflow) break;
            len = snprintf(line, sizeof line, "overflow (more than %d sites)\n", SITE_SLOTS * 3 / 4);
        } else if (sites[i].file) {
            const site *st = &sites[i];
            len = snprintf(line, sizeof line, "%s %s:%d%s\n", st->kind == CT_FAULT_SITE_HOST ? "host" : "opencl",
                           relative_path(st->file), st->line, st->failed ? " failed" : "");
        } else {
            continue;
        }
        /* one write per line: O_APPEND keeps the lines of concurrent processes whole */
        ok = len > 0 && (size_t)len < sizeof line && write(fd, line, (size_t)len) == len;
    }
    pthread_mutex_unlock(&sites_lock);
    close(fd);
}

static void sites_init(void) {
    const char *path = getenv("CT_FAULT_SITES_FILE");
    if (!path || !*path || strlen(path) >= sizeof sites_path) return;
    memcpy(sites_path, path, strlen(path) + 1);
    if (atexit(write_sites) == 0) atomic_store(&sites_enabled, true);
}

void ct_fault_site_reached(ct_fault_site_kind kind, const char *file, int line, bool failed) {
    pthread_once(&sites_once, sites_init);
    if (!atomic_load_explicit(&sites_enabled, memory_order_relaxed) || !file) return;
    size_t h = ((size_t)(uintptr_t)file >> 3) * 31u + (size_t)line * 2654435761u + (size_t)kind;
    pthread_mutex_lock(&sites_lock);
    for (size_t probe = 0; probe < SITE_SLOTS; probe++) {
        site *s = &sites[(h + probe) % SITE_SLOTS];
        if (s->file == file && s->line == line && s->kind == (unsigned char)kind) {
            s->failed |= failed;
            break;
        }
        if (!s->file) {
            /* keep a quarter free so that probes stay short */
            if (n_sites >= SITE_SLOTS * 3 / 4) {
                sites_overflow = true;
                break;
            }
            *s = (site){.file = file, .line = line, .kind = (unsigned char)kind, .failed = failed};
            n_sites++;
            break;
        }
    }
    pthread_mutex_unlock(&sites_lock);
}
