/* The OpenCL program cache against a hostile or damaged file system
 * (docs/BACKENDS.md, "Program cache"): the directory is created 0700; symbolic
 * links planted at the temporary names the writer once used are left alone;
 * an entry or a directory that another user owns or may write, a symbolic link,
 * a FIFO under an entry's name and an entry holding another program are refused
 * with a warning and the program is built from source; CT_OPENCL_BUILD_OPTIONS
 * that would crash the compiler is refused with a warning. Everything runs in a
 * scratch directory of its own. One valid entry, built once, is copied around,
 * so that few cases build from source. Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include "ctensor-backend-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl_cache");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

#include "opencl/opencl_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { SKIP = 77, N_OLD_TMP = 64 };

static char root[64];       /* the scratch directory (mkdtemp) */
static char cache_dir[128]; /* root/sub/cache: CT_OPENCL_CACHE_DIR */

/* ---- warnings ------------------------------------------------------------------ */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char warnings[8192]; /* every warning since clear_warnings, one a line */
static int n_warnings;

static void log_cb(ct_log_level level, const char *msg, void *data) {
    CT_UNUSED(data);
    if (level < CT_LOG_WARN) return;
    printf("    warning: %s\n", msg);
    pthread_mutex_lock(&log_lock);
    size_t len = strlen(warnings);
    snprintf(warnings + len, sizeof warnings - len, "%s\n", msg);
    n_warnings++;
    pthread_mutex_unlock(&log_lock);
}

static void clear_warnings(void) {
    pthread_mutex_lock(&log_lock);
    warnings[0] = '\0';
    n_warnings = 0;
    pthread_mutex_unlock(&log_lock);
}

/* Whether one warning line holds both a and b. */
static bool warned(const char *a, const char *b) {
    pthread_mutex_lock(&log_lock);
    bool found = false;
    for (const char *line = warnings; *line && !found;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)n, line);
        found = strstr(buf, a) && strstr(buf, b);
        line += n + (end ? 1 : 0);
    }
    pthread_mutex_unlock(&log_lock);
    return found;
}

#define CHECK_WARNED(a, b) CHECK_MSG(warned(a, b), "no warning names '%s' and '%s'; warnings:\n%s", a, b, warnings)

/* ---- files ------------------------------------------------------------------------ */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The one kernel-library entry in the cache directory, or false. */
static bool find_entry(char *out, size_t n) {
    DIR *d = opendir(cache_dir);
    if (!d) return false;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const size_t len = strlen(e->d_name), tail = strlen("-lib-0123456789abcdef.clbin");
        if (len >= tail && strcmp(e->d_name + len - 6, ".clbin") == 0 &&
            strncmp(e->d_name + len - tail, "-lib-", 5) == 0) {
            snprintf(out, n, "%s/%s", cache_dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    return found == 1;
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The files in the cache directory but other programs' entries (NVIDIA's devices also
 * cache a register-capped program): the library's entry and anything left beside it. */
static int count_library_files(void) {
    DIR *d = opendir(cache_dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    const size_t tail = strlen("-lib-0123456789abcdef.clbin");
    while ((e = readdir(d)) != NULL) {
        const size_t len = strlen(e->d_name);
        const bool other_program = len >= tail && strcmp(e->d_name + len - 6, ".clbin") == 0 &&
                                   strncmp(e->d_name + len - tail, "-lib-", 5) != 0;
        n += e->d_name[0] != '.' && !other_program;
    }
    closedir(d);
    return n;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *p = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n)) != NULL &&
        fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *size = p ? (size_t)n : 0;
    return p;
}

/* Replaces whatever is at path (a file, a link, a FIFO) with a regular file of mode `mode`. */
static void write_file(const char *path, const void *p, size_t n, mode_t mode) {
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
    CHECK_MSG(fd >= 0, "cannot create %s: %s", path, strerror(errno));
    if (fd < 0) return;
    CHECK(write(fd, p, n) == (ssize_t)n);
    CHECK(fchmod(fd, mode) == 0); /* whatever the umask */
    close(fd);
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(path, 0700);
            remove_tree(path);
        } else {
            unlink(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

/* ---- inits ------------------------------------------------------------------------ */

/* The program dropped, a backend created and freed: where the program came from,
 * or NONE when the init failed (its message printed). */
static ct_ocl_program_origin init_origin(ct_device *dev) {
    ct_ocl_device *d = ct_ocl_device_of(dev);
    ct_ocl_device_reset_program(d);
    ct_backend *b = NULL;
    if (ct_device_init_backend(dev, NULL, &b) != CT_OK) {
        fprintf(stderr, "  init: %s\n", ct_last_error());
        return CT_OCL_PROGRAM_NONE;
    }
    ct_backend_free(b);
    return d->program_origin;
}

static const char *origin_name(ct_ocl_program_origin o) {
    return o == CT_OCL_PROGRAM_SOURCE ? "source" : o == CT_OCL_PROGRAM_CACHE ? "cache" : "failed";
}

#define CHECK_ORIGIN(dev, want)                                                                          \
    do {                                                                                                 \
        double t0_ = now();                                                                              \
        ct_ocl_program_origin got_ = init_origin(dev);                                                   \
        printf("    init: %s (%.1f s)\n", origin_name(got_), now() - t0_);                               \
        CHECK_MSG(got_ == (want), "the program came from %s, expected %s", origin_name(got_),          \
                  origin_name(want));                                                                    \
    } while (0)

/* ---- the cases -------------------------------------------------------------------- */

static unsigned char *good;    /* a valid kernel-library entry, as the library wrote it */
static size_t good_size;
static char entry[512];        /* its path */

/* The first init creates the directory (and its parent) and writes the entry: the
 * directory 0700 and the entry neither group- nor world-writable, both ours. */
static void test_created(ct_device *dev) {
    printf("  a new cache directory\n");
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_SOURCE);
    struct stat st;
    CHECK(lstat(cache_dir, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_MSG((st.st_mode & 07777) == 0700, "the cache directory has mode 0%o, expected 0700",
              (unsigned)(st.st_mode & 07777));
    CHECK(st.st_uid == geteuid());
    CHECK(find_entry(entry, sizeof entry));
    CHECK(lstat(entry, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
          (st.st_mode & (S_IWGRP | S_IWOTH)) == 0);
    good = read_file(entry, &good_size);
    CHECK(good != NULL && good_size > 32);
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_CACHE);
}

/* Symbolic links at every temporary name the writer used to take
 * ("<entry>.<pid>.<n>.tmp", O_CREAT | O_TRUNC, following links) must be left as they
 * are, and so must the file they point at; the entry is written all the same. */
static void test_planted_tmp_links(ct_device *dev) {
    printf("  symbolic links at the old temporary names\n");
    char victim[128], link_path[600], target[128];
    snprintf(victim, sizeof victim, "%s/victim", root);
    static const char precious[] = "precious bytes that are not a program binary";
    write_file(victim, precious, sizeof precious, 0644);
    for (int i = 0; i < N_OLD_TMP; i++) {
        snprintf(link_path, sizeof link_path, "%s.%ld.%d.tmp", entry, (long)getpid(), i);
        CHECK(symlink(victim, link_path) == 0);
    }
    unlink(entry); /* so the next init builds and writes it */
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_SOURCE);

    size_t n = 0;
    unsigned char *now_there = read_file(victim, &n);
    CHECK_MSG(now_there && n == sizeof precious && memcmp(now_there, precious, n) == 0,
              "the file a planted link points at was overwritten (%zu bytes now)", n);
    free(now_there);
    for (int i = 0; i < N_OLD_TMP; i++) {
        snprintf(link_path, sizeof link_path, "%s.%ld.%d.tmp", entry, (long)getpid(), i);
        struct stat st;
        ssize_t len = readlink(link_path, target, sizeof target - 1);
        if (len >= 0) target[len] = '\0';
        CHECK_MSG(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode) && len > 0 && strcmp(target, victim) == 0,
                  "the planted link %s was moved or changed", link_path);
        unlink(link_path);
    }
    struct stat st;
    CHECK_MSG(lstat(entry, &st) == 0 && S_ISREG(st.st_mode), "the entry %s is not a regular file", entry);
    CHECK_MSG(count_library_files() == 1, "%d files in the cache directory, expected the entry alone",
              count_library_files());
    unlink(victim);
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_CACHE);
}

/* A FIFO under the entry's name. A watchdog opens its other end when the init
 * has been stuck in open() for a while (that releases it); it must never need to. */
static atomic_bool init_done;
static atomic_bool fifo_blocked;
static char fifo_path[512];

static void *fifo_watchdog(void *arg) {
    CT_UNUSED(arg);
    const double start = now();
    while (!atomic_load(&init_done)) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        /* A reader that opens without O_NONBLOCK waits in open() for a writer; one that
         * opens with it holds the FIFO for microseconds. After 2 s, a reader there is a
         * blocked one. */
        if (now() - start < 2.0) continue;
        int fd = open(fifo_path, O_WRONLY | O_NONBLOCK);
        if (fd >= 0) {
            /* once the rebuilt entry has replaced the FIFO, this opens that regular file
             * (an init slower than 2 s, as under sanitizers): no reader was blocked */
            struct stat st;
            if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) atomic_store(&fifo_blocked, true);
            close(fd); /* end of file for the reader: it goes on */
        }
    }
    return NULL;
}

static void test_fifo(ct_device *dev) {
    printf("  a FIFO under the entry's name\n");
    snprintf(fifo_path, sizeof fifo_path, "%s", entry);
    unlink(entry);
    CHECK(mkfifo(entry, 0600) == 0);
    atomic_store(&init_done, false);
    atomic_store(&fifo_blocked, false);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fifo_watchdog, NULL) == 0);
    clear_warnings();
    const double t0 = now();
    ct_ocl_program_origin o = init_origin(dev);
    atomic_store(&init_done, true);
    pthread_join(t, NULL);
    printf("    init: %s (%.1f s)\n", origin_name(o), now() - t0);
    CHECK_MSG(!atomic_load(&fifo_blocked), "the init was blocked in open() on the FIFO %s", entry);
    CHECK(o == CT_OCL_PROGRAM_SOURCE);
    CHECK_WARNED(entry, "regular file");
    struct stat st;
    CHECK_MSG(lstat(entry, &st) == 0 && S_ISREG(st.st_mode), "the FIFO was not replaced by the rebuilt entry");
}

/* A symbolic link under the entry's name, to a valid entry elsewhere. */
static void test_entry_link(ct_device *dev) {
    printf("  a symbolic link under the entry's name\n");
    char elsewhere[128];
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere.clbin", root);
    write_file(elsewhere, good, good_size, 0600);
    unlink(entry);
    CHECK(symlink(elsewhere, entry) == 0);
    clear_warnings();
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_SOURCE);
    CHECK_WARNED(entry, "link");
    struct stat st;
    CHECK(lstat(entry, &st) == 0 && S_ISREG(st.st_mode));
    unlink(elsewhere);
}

/* A valid entry that another user could have written, or that another user
 * owns: refused with a warning naming it, the program built from source. */
static void test_untrusted_entry(ct_device *dev, mode_t mode, uid_t owner, const char *reason) {
    printf("  an entry of mode 0%o, owner %u\n", (unsigned)mode, (unsigned)owner);
    write_file(entry, good, good_size, mode);
    if (owner != geteuid()) CHECK(chown(entry, owner, (gid_t)-1) == 0);
    clear_warnings();
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_SOURCE);
    CHECK_WARNED(entry, reason);
    /* rewritten as an entry of ours */
    struct stat st;
    CHECK(lstat(entry, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
          (st.st_mode & (S_IWGRP | S_IWOTH)) == 0);
}

/* A directory that another user could write, or owns: neither read nor
 * written, with a warning naming it; the program built from source. */
static void test_untrusted_dir(ct_device *dev, mode_t mode, uid_t owner, const char *reason) {
    printf("  a cache directory of mode 0%o, owner %u\n", (unsigned)mode, (unsigned)owner);
    write_file(entry, good, good_size, 0600);
    struct stat before, after;
    CHECK(stat(entry, &before) == 0);
    CHECK(chmod(cache_dir, mode) == 0);
    if (owner != geteuid()) CHECK(chown(cache_dir, owner, (gid_t)-1) == 0);
    clear_warnings();
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_SOURCE);
    CHECK_WARNED(cache_dir, reason);
    CHECK_MSG(stat(entry, &after) == 0 && after.st_ino == before.st_ino && after.st_mtime == before.st_mtime,
              "the entry in a directory not trusted was rewritten");
    CHECK(count_library_files() == 1);
    CHECK(chown(cache_dir, geteuid(), (gid_t)-1) == 0);
    CHECK(chmod(cache_dir, 0700) == 0);
}

/* An entry with a consistent header holding another program (here a
 * one-kernel program this test builds): the init must build from source and
 * rewrite the entry, and the next init must load that. */
static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void test_foreign_program(ct_device *dev) {
    printf("  an entry holding another program\n");
    ct_ocl_device *d = ct_ocl_device_of(dev);
    static const char *src = "__kernel void ct_foreign(__global int *p) { p[0] = 1; }\n";
    cl_int err;
    cl_program prog = clCreateProgramWithSource(d->context, 1, &src, NULL, &err);
    CHECK(err == CL_SUCCESS);
    if (err != CL_SUCCESS) return;
    CHECK(clBuildProgram(prog, 1, &d->device, "", NULL, NULL) == CL_SUCCESS);
    size_t size = 0;
    CHECK(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) == CL_SUCCESS && size > 0);
    /* the header as library.c lays it out: magic, key, size, hash of the binary */
    const size_t header = 8 + 3 * sizeof(uint64_t);
    unsigned char *file = calloc(1, header + size);
    unsigned char *bin = file ? file + header : NULL;
    CHECK(file && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS);
    clReleaseProgram(prog);
    if (!file) return;
    memcpy(file, good, 16); /* the valid entry's magic and key */
    uint64_t n = size, hash = fnv1a(bin, size);
    memcpy(file + 16, &n, 8);
    memcpy(file + 24, &hash, 8);
    write_file(entry, file, header + size, 0600);
    free(file);
    clear_warnings();
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_SOURCE);
    CHECK_WARNED(entry, "ct_");
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_CACHE); /* the rewritten entry */
}

/* The mat-vec kernels' own program (built on NVIDIA, here through the test hook)
 * holds only the ct_mul_mvq kernels: its entry must pass the kernel check and be
 * loaded, not rebuilt (a rebuild would rename a new file into place). */
static bool find_mvq_entry(char *out, size_t n) {
    DIR *d = opendir(cache_dir);
    if (!d) return false;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const size_t len = strlen(e->d_name);
        if (len > 6 && strcmp(e->d_name + len - 6, ".clbin") == 0 && strstr(e->d_name, "-mvq-")) {
            snprintf(out, n, "%s/%s", cache_dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    return found == 1;
}

/* Removes the mat-vec program's entries: a device that builds that program anyway
 * (NVIDIA's) has written one under its own options before the test's. */
static void remove_mvq_entries(void) {
    DIR *d = opendir(cache_dir);
    if (!d) return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (!strstr(e->d_name, "-mvq-")) continue;
        snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
        CHECK(unlink(path) == 0);
    }
    closedir(d);
}

static void test_mvq_entry(ct_device *dev) {
    printf("  the mat-vec kernels' program from its entry\n");
    remove_mvq_entries();
    ct_ocl_device *d = ct_ocl_device_of(dev);
    const char *had = d->test_mvq_options;
    d->test_mvq_options = "";
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_CACHE); /* the library; the mat-vec program built and written */
    char mvq[512];
    struct stat before, after;
    CHECK(find_mvq_entry(mvq, sizeof mvq) && stat(mvq, &before) == 0);
    clear_warnings();
    CHECK_ORIGIN(dev, CT_OCL_PROGRAM_CACHE);
    CHECK(d->program_mvq != NULL && n_warnings == 0);
    CHECK_MSG(stat(mvq, &after) == 0 && after.st_ino == before.st_ino, "the mat-vec program's entry was rebuilt");
    unlink(mvq);
    d->test_mvq_options = had;
    /* Put back what the usual options cache (a device that builds the mat-vec program
     * writes its entry again), so later cases find every program cached. */
    CHECK(init_origin(dev) != CT_OCL_PROGRAM_NONE);
    ct_ocl_device_reset_program(d);
}

/* In a child process (PoCL's compiler crashed on some): values of
 * CT_OPENCL_BUILD_OPTIONS that leave an option without its argument or hold
 * unprintable bytes are refused with a warning naming the variable, and the init
 * goes on with the usual options (so here loads the valid entry). */
static const char *const bad_options[] = {
    "-D", "-I", "-DCT_A=1 -D", "-cl-mad-enable -I", "-D ", "-I  ", "-DCT_A=1\x01", "-DCT_A=1\n-D", "-D -I x",
};

static int child_build_options(void) {
    ct_log_set_callback(log_cb, NULL);
    ct_device *dev = tu_opencl_device();
    if (!dev) return 2;
    /* Every program cached under the usual options first (on NVIDIA's devices the parent's
     * cases leave the mat-vec program's entry to be rebuilt), so each case below shows that
     * a refused value leaves the usual options: the init loads what they cached. */
    if (init_origin(dev) == CT_OCL_PROGRAM_NONE) return 1;
    int bad = 0;
    for (size_t i = 0; i < sizeof bad_options / sizeof *bad_options; i++) {
        printf("    CT_OPENCL_BUILD_OPTIONS case %zu\n", i);
        fflush(stdout);
        setenv("CT_OPENCL_BUILD_OPTIONS", bad_options[i], 1);
        clear_warnings();
        ct_ocl_program_origin o = init_origin(dev);
        if (o != CT_OCL_PROGRAM_CACHE || !warned("CT_OPENCL_BUILD_OPTIONS", "refused")) {
            fprintf(stderr, "  case %zu: the program came from %s; warnings:\n%s", i, origin_name(o), warnings);
            bad++;
        }
    }
    /* A valid value still reaches the compiler: the test hook's build error (the compiler
     * prints "1 error generated." on stderr). */
    setenv("CT_OPENCL_BUILD_OPTIONS", "-DCT_TEST_BUILD_ERROR -I /nonexistent", 1);
    ct_ocl_device_reset_program(ct_ocl_device_of(dev));
    ct_backend *b = NULL;
    if (ct_device_init_backend(dev, NULL, &b) != CT_DEVICE_ERROR ||
        !strstr(ct_last_error(), "build error requested by the test hook")) {
        fprintf(stderr, "  valid options: %s\n", ct_last_error());
        bad++;
    }
    ct_backend_free(b);
    return bad ? 1 : 0;
}

/* In a child: the compiler crash it checks against would end the test. */
static void test_build_options(void) {
    tu_run_self("CT_OPENCL_BUILD_OPTIONS without an option's argument", "CT_OPENCL_BUILD_OPTIONS", NULL,
                (const char *const[]){"--build-options", NULL});
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--build-options") == 0) return child_build_options();
    tu_init("test_opencl_cache");
    snprintf(root, sizeof root, "/tmp/ct_opencl_cache_XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    /* a directory the library creates, parent and all */
    snprintf(cache_dir, sizeof cache_dir, "%s/sub/cache", root);
    setenv("CT_OPENCL_CACHE_DIR", cache_dir, 1);
    unsetenv("CT_OPENCL_BUILD_OPTIONS");

    ct_device *dev = tu_opencl_device();
    if (!dev) {
        printf("SKIP: no OpenCL device%s\n", getenv("CT_TEST_OPENCL_DEVICE") ? " of that name" : "");
        remove_tree(root);
        return tu_finish() ? 1 : SKIP;
    }
    printf("device %s: %s\n", ct_device_name(dev), ct_device_description(dev));
    ct_log_set_callback(log_cb, NULL);
    const double t0 = now();

    test_created(dev);
    const int fds = count_entries("/proc/self/fd"); /* every refusal must close what it opened */
    if (good) {
        test_planted_tmp_links(dev);
        test_fifo(dev);
        test_entry_link(dev);
        test_untrusted_entry(dev, 0620, geteuid(), "writable");
        test_untrusted_entry(dev, 0602, geteuid(), "writable");
        test_untrusted_dir(dev, 0770, geteuid(), "writable");
        test_untrusted_dir(dev, 0707, geteuid(), "writable");
        if (geteuid() == 0) { /* only root can give a file away */
            test_untrusted_entry(dev, 0600, 12345, "owned by");
            test_untrusted_dir(dev, 0700, 12345, "owned by");
        } else {
            printf("  (not root: the ownership cases are skipped)\n");
        }
        test_foreign_program(dev);
        test_mvq_entry(dev);
        write_file(entry, good, good_size, 0600);
        test_build_options();
    }
    CHECK_MSG(count_entries("/proc/self/fd") == fds, "%d file descriptors open, %d after the first init",
              count_entries("/proc/self/fd"), fds);
    printf("%.1f s\n", now() - t0);

    ct_log_set_callback(NULL, NULL);
    free(good);
    remove_tree(root);
    return tu_finish();
}

#endif
