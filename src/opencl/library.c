/* The kernel library: one cl_program per device (and on NVIDIA a second, the 8-bit
 * mat-vec kernels register-capped: load_capped_mvq), built once under the device
 * lock from the sources embedded at build time, composed in the order the lists
 * below give, without fast-math options and with FP_CONTRACT OFF (quantization must
 * match the CPU bit for bit). Each built binary is cached on disk, keyed by device,
 * driver and a hash of everything that goes into the build (the composed sources
 * included); an entry that fails any check is rebuilt. Which program a kernel comes
 * from is kernels.def's program column. */
#include "opencl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const ct_ocl_kernel_info ct_ocl_kernel_table[CT_OCL_K_COUNT] = {
#define CT_OCL_KERNEL(id, name, gate, program) [CT_OCL_K_##id] = {name, gate, CT_OCL_PROGRAM_##program},
#include "kernels.def"
};

/* kernel id + 1 by family and type; 0: none. */
static const uint16_t kernel_by_type[CT_OCL_FAMILY_COUNT][CT_TYPE_COUNT] = {
#define CT_OCL_TYPED_KERNEL(id, family, type, name, gate, program) \
    [CT_OCL_FAMILY_##family][CT_TYPE_##type] = CT_OCL_K_##id + 1,
#define CT_OCL_KERNEL_ALIAS(id, family, type) [CT_OCL_FAMILY_##family][CT_TYPE_##type] = CT_OCL_K_##id + 1,
#include "kernels.def"
};
_Static_assert(CT_OCL_K_COUNT < UINT16_MAX, "kernel ids fit kernel_by_type");

ct_ocl_kernel_id ct_ocl_kernel_for(ct_ocl_family family, ct_type type) {
    CT_ASSERT((unsigned)family < CT_OCL_FAMILY_COUNT);
    if ((unsigned)type >= CT_TYPE_COUNT) return CT_OCL_K_COUNT;
    const unsigned k = kernel_by_type[family][type];
    return k ? (ct_ocl_kernel_id)(k - 1) : CT_OCL_K_COUNT;
}

/* The programs' sources (src/opencl/kernels), in the order they are composed: every
 * file may use what the files before it define. */
#define CT_OCL_HELPER_SOURCES "kernel_args.h", "common.cl", "fp16.cl", "dequant.cl", "quant.cl", "reduce.cl"
static const char *const library_sources[] = {CT_OCL_HELPER_SOURCES, "util.cl",    "cpy.cl",     "get_rows.cl",
                                              "set_rows.cl",
                                              "mul_mat_id.cl", /* before mul_mat.cl, whose MM_KERNELS use it */
                                              "mul_mat.cl",          "mul_mvq.cl", "norm.cl",
                                              "sum_rows.cl",         "unary.cl",   "binary.cl",
                                              "soft_max.cl",         "rope.cl",
                                              /* one line per family added since */
                                              "glu.cl",
                                              "sum.cl",
                                              "argsort.cl",
                                              "math.cl",
                                              "shape.cl",
                                              "flash_attn.cl",
                                              "mul_mm_tc.cl", /* after mul_mat.cl, whose loads it uses */
                                              "mul_mv_tc.cl", /* after mul_mm_tc.cl, whose products it uses */
                                              "flash_attn_tc.cl", /* after flash_attn.cl and mul_mm_tc.cl */
};
static const char *const mvq_sources[] = {"kernel_args.h", "common.cl", "fp16.cl", "dequant.cl", "mul_mvq.cl"};
static const char *const helper_sources[] = {CT_OCL_HELPER_SOURCES};

enum {
    MAX_SOURCES = 32, /* files in a program, the prelude included */
    PRELUDE_MAX = 2048,
    OPTIONS_MAX = 512,
    LOG_IN_MESSAGE = 360, /* the status message holds 512 bytes in all */
};

/* A program's sources and the prelude fit the arrays compose() fills: a build error, not
 * a crash at start-up, when a list outgrows them. */
_Static_assert(sizeof library_sources / sizeof *library_sources < MAX_SOURCES,
               "library_sources has MAX_SOURCES files or more: raise MAX_SOURCES");
_Static_assert(sizeof mvq_sources / sizeof *mvq_sources < MAX_SOURCES,
               "mvq_sources has MAX_SOURCES files or more: raise MAX_SOURCES");

/* Cache file layout: this header, then `size` bytes of program binary. */
static const char CACHE_MAGIC[8] = {'C', 'T', 'O', 'C', 'L', 'B', 'C', '1'};
typedef struct cache_header {
    char magic[8];
    uint64_t key;      /* hash of device, driver, options and source */
    uint64_t size;     /* bytes of binary that follow */
    uint64_t bin_hash; /* hash of those bytes */
} cache_header;
#define CACHE_MAX_BINARY ((uint64_t)1 << 30)

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t fnv1a_str(uint64_t h, const char *s) { return fnv1a(h, s, strlen(s) + 1); }

static void build_prelude(const ct_ocl_device *dev, char *out, size_t n) {
    snprintf(out, n,
             "#pragma OPENCL FP_CONTRACT OFF\n"
             "#define CT_HAS_SUBGROUPS %d\n"
             "#define CT_HAS_FP16 %d\n"
             "#define CT_FP16_CONVERT %d\n"
             "#define CT_HALF_BY_SCALE %d\n"
             "#define CT_HAS_FP64 %d\n"
             "#define CT_HAS_INT_DOT %d\n"
             "#define CT_HAS_NV_DP4A %d\n"
             "#define CT_HAS_NV_WARP %d\n"
             "#define CT_HAS_NV_MMA %d\n"
             "#define CT_MMA_EMULATE %d\n"
             "#define CT_CORRECTLY_ROUNDED_DIV %d\n"
             "#if CT_HAS_FP16\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#endif\n"
             "#if CT_HAS_FP64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
             "#if CT_HAS_SUBGROUPS && defined(cl_khr_subgroups)\n"
             "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n#endif\n"
             "#define CT_RAISE_ERROR(err, code) "
             "((void)atomic_cmpxchg((volatile __global int *)(err), 0, (code)))\n",
             dev->has_subgroups, dev->has_fp16, dev->has_fp16_exact, dev->has_half_scale, dev->has_fp64,
             dev->has_int_dot, dev->has_nv_dp4a, dev->has_nv_warp, dev->has_nv_mma, dev->mma_emulate && !dev->has_nv_mma,
             dev->has_correct_div_sqrt);
}

/* Whether CT_OPENCL_BUILD_OPTIONS may go to the compiler: printable ASCII words
 * separated by spaces, and every option that takes the next word as its argument
 * followed by one that is not an option. PoCL 3.1's compiler crashed the process on
 * a value ending in -D or -I. Otherwise why says what is wrong. */
static bool options_ok(const char *s, char *why, size_t n) {
    /* OpenCL's (-D, -I) and clang's that a driver may pass through */
    static const char *const takes_arg[] = {"-D", "-I", "-U", "-include", "-imacros", "-isystem", "-iquote",
                                            "-idirafter", "-Xclang", "-mllvm", "-x", "-o"};
    for (const char *c = s; *c; c++) {
        if (*c < ' ' || *c > '~') {
            snprintf(why, n, "byte 0x%02x at offset %zu is not printable ASCII", (unsigned char)*c, (size_t)(c - s));
            return false;
        }
    }
    const char *pending = NULL; /* an option still waiting for its argument */
    for (const char *w = s; *w;) {
        if (*w == ' ') {
            w++;
            continue;
        }
        size_t len = strcspn(w, " ");
        if (pending && *w == '-') break;
        pending = NULL;
        for (size_t i = 0; i < sizeof takes_arg / sizeof *takes_arg; i++) {
            if (strlen(takes_arg[i]) == len && strncmp(w, takes_arg[i], len) == 0) pending = takes_arg[i];
        }
        w += len;
    }
    if (pending) {
        snprintf(why, n, "%s without its argument", pending);
        return false;
    }
    return true;
}

static void build_options(const ct_ocl_device *dev, char *out, size_t n) {
    /* Sub-group built-ins need OpenCL C 2.0+; everything else is written for 1.2. */
    const char *std = dev->has_subgroups && dev->cl_c_version >= 300   ? "-cl-std=CL3.0"
                      : dev->has_subgroups && dev->cl_c_version >= 200 ? "-cl-std=CL2.0"
                      : dev->cl_c_version >= 120                       ? "-cl-std=CL1.2"
                                                                       : "";
    /* tuning experiments with compiler options or macros the kernels test with #ifdef,
     * without a rebuild (docs/BACKENDS.md); part of the cache key like every option */
    const char *extra = getenv("CT_OPENCL_BUILD_OPTIONS");
    char why[96];
    if (extra && strlen(extra) >= OPTIONS_MAX / 4) {
        ct_log(CT_LOG_WARN, "opencl: CT_OPENCL_BUILD_OPTIONS of %zu bytes ignored (max %d)", strlen(extra),
               OPTIONS_MAX / 4 - 1);
        extra = NULL;
    } else if (extra && !options_ok(extra, why, sizeof why)) {
        ct_log(CT_LOG_WARN, "opencl: CT_OPENCL_BUILD_OPTIONS refused (%s); building with the usual options", why);
        extra = NULL;
    }
    snprintf(out, n, "%s%s%s%s%s%s", std, dev->has_correct_div_sqrt ? " -cl-fp32-correctly-rounded-divide-sqrt" : "",
             dev->test_build_options ? " " : "", dev->test_build_options ? dev->test_build_options : "",
             extra ? " " : "", extra ? extra : "");
}

/* ---- the cache directory ----------------------------------------------------- */

bool ct_ocl_cache_dir(char *out, size_t n) {
    const char *env = getenv("CT_OPENCL_CACHE_DIR");
    int w;
    if (env) {
        if (!*env) return false; /* set but empty: caching off */
        w = snprintf(out, n, "%s", env);
    } else if ((env = getenv("XDG_CACHE_HOME")) && *env) {
        w = snprintf(out, n, "%s/ctensor", env);
    } else if ((env = getenv("HOME")) && *env) {
        w = snprintf(out, n, "%s/.cache/ctensor", env);
    } else {
        return false;
    }
    return w > 0 && (size_t)w < n;
}

/* mkdir -p. The cache directory itself is made 0700, the ones above it 0755 as by
 * any mkdir -p (they may be shared, such as ~/.cache). errno describes a failure. */
static bool make_dirs(const char *path) {
    char buf[4096];
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--; /* "a/b/" makes "a/b" 0700 */
    if (len == 0 || len >= sizeof buf) {
        errno = ENAMETOOLONG;
        return false;
    }
    memcpy(buf, path, len);
    buf[len] = '\0';
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, i == len ? 0700 : 0755) != 0 && errno != EEXIST) return false;
        buf[i] = c;
    }
    return true;
}

/* A cache entry is code the process will run (on PoCL a program binary is native
 * code), and the hash in its header only catches damage: whoever can write the
 * directory or the entry chooses that code. So both must be the effective user's
 * and writable by no one else (docs/BACKENDS.md). NULL when st passes, else the
 * reason (in buf when it has numbers). */
static const char *untrusted(const struct stat *st, bool dir, char *buf, size_t n) {
    if (dir && !S_ISDIR(st->st_mode)) return "not a directory";
    if (!dir && !S_ISREG(st->st_mode)) return "not a regular file";
    if (st->st_uid != geteuid()) {
        snprintf(buf, n, "owned by uid %u, not by this process's %u", (unsigned)st->st_uid, (unsigned)geteuid());
        return buf;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(buf, n, "group- or world-writable (mode 0%03o)", (unsigned)(st->st_mode & 07777));
        return buf;
    }
    return NULL;
}

/* The cache directory, opened and checked; every later access goes through the
 * descriptor (openat, renameat), so the path cannot be swapped after the check.
 * A symbolic link to the directory is followed: what is checked is the directory
 * opened. -1 when it does not exist and create is false, or cannot be made or
 * opened (a warning when create is true); also -1, with a warning and *refused
 * set, when it is not to be trusted: then it is neither read nor written. */
static int cache_dir_open(const char *dir, bool create, bool *refused) {
    *refused = false;
    if (create && !make_dirs(dir)) {
        ct_log(CT_LOG_WARN, "opencl: cannot create the program cache directory %s: %s; continuing without the "
               "cache", dir, strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        if (create) {
            ct_log(CT_LOG_WARN, "opencl: cannot open the program cache directory %s: %s; continuing without the "
                   "cache", dir, strerror(errno));
        }
        return -1;
    }
    struct stat st;
    char buf[96];
    const char *why = fstat(fd, &st) != 0 ? strerror(errno) : untrusted(&st, true, buf, sizeof buf);
    if (why) {
        ct_log(CT_LOG_WARN, "opencl: not using the program cache directory %s: %s; building from source", dir, why);
        close(fd);
        *refused = true;
        return -1;
    }
    return fd;
}

/* Device and driver names become part of the file name: keep it portable. */
static void sanitize(char *out, size_t n, const char *s) {
    size_t j = 0;
    for (; *s && j + 1 < n && j < 40; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
        out[j++] = ok ? c : '_';
    }
    out[j] = '\0';
}

/* The cache directory, the entry's name in it, <device>-<driver>-<tag>-<key>.clbin
 * (tag names the program: "lib", "mvq"), and both joined for messages. */
typedef struct cache_loc {
    char dir[4096];
    char name[160];
    char path[4096 + 160];
} cache_loc;

static bool cache_locate(const ct_ocl_device *dev, const char *tag, uint64_t key, cache_loc *loc) {
    if (!ct_ocl_cache_dir(loc->dir, sizeof loc->dir)) return false;
    char dname[48], drv[48];
    sanitize(dname, sizeof dname, dev->device_name);
    sanitize(drv, sizeof drv, dev->driver_version);
    int w = snprintf(loc->name, sizeof loc->name, "%s-%s-%s-%016llx.clbin", dname, drv, tag, (unsigned long long)key);
    if (w <= 0 || (size_t)w >= sizeof loc->name) return false;
    w = snprintf(loc->path, sizeof loc->path, "%s/%s", loc->dir, loc->name);
    return w > 0 && (size_t)w < sizeof loc->path;
}

/* The cached binary, or NULL when absent or failing any check. The entry is opened
 * without following a link and without blocking (a FIFO or a device under its name
 * would otherwise hold the caller, and the device lock, in open()), then must be a
 * regular file we may trust; what is not, is warned about and rebuilt over. */
static unsigned char *cache_read(int dfd, const cache_loc *loc, uint64_t key, size_t *size) {
    int fd = openat(dfd, loc->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) {
            ct_log(CT_LOG_WARN, "opencl: ignoring the program cache entry %s: %s; rebuilding", loc->path,
                   errno == ELOOP ? "a symbolic link" : strerror(errno));
        }
        return NULL;
    }
    unsigned char *bin = NULL;
    cache_header h;
    struct stat st;
    char buf[96];
    const char *why = NULL;
    if (fstat(fd, &st) != 0) {
        why = strerror(errno);
    } else if ((why = untrusted(&st, false, buf, sizeof buf)) != NULL) {
        ct_log(CT_LOG_WARN, "opencl: ignoring the program cache entry %s: %s; rebuilding", loc->path, why);
        close(fd);
        return NULL;
    } else if (read(fd, &h, sizeof h) != (ssize_t)sizeof h) {
        why = "short header";
    } else if (memcmp(h.magic, CACHE_MAGIC, sizeof h.magic) != 0) {
        why = "bad magic";
    } else if (h.key != key) {
        why = "key mismatch";
    } else if (h.size == 0 || h.size > CACHE_MAX_BINARY || (uint64_t)st.st_size != sizeof h + h.size) {
        why = "bad size";
    } else if (!(bin = ct_malloc((size_t)h.size))) {
        why = "out of memory";
    } else if (read(fd, bin, (size_t)h.size) != (ssize_t)h.size) {
        why = "short binary";
    } else if (fnv1a(0xcbf29ce484222325ull, bin, (size_t)h.size) != h.bin_hash) {
        why = "binary hash mismatch";
    }
    close(fd);
    if (why) {
        ct_log(CT_LOG_INFO, "opencl: ignoring the program cache entry %s (%s); rebuilding", loc->path, why);
        ct_free(bin);
        return NULL;
    }
    *size = (size_t)h.size;
    return bin;
}

static bool write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

/* A new file in the directory for the entry's bytes, created exclusively (never an
 * existing file, nor through a link planted at its name) under a name no other
 * process can predict; -1 and errno on failure. */
static int create_temp(int dfd, const cache_loc *loc, char *tmp, size_t n) {
    static atomic_uint counter;
    for (int attempt = 0; attempt < 16; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        const uint64_t mix[4] = {(uint64_t)getpid(), atomic_fetch_add(&counter, 1u), (uint64_t)ts.tv_sec,
                                 (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&ts};
        const uint64_t r = fnv1a(0xcbf29ce484222325ull, mix, sizeof mix);
        snprintf(tmp, n, ".%s.%016llx.tmp", loc->name, (unsigned long long)r);
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

/* Writes to a temporary file and renames it, so readers in other processes see a
 * whole entry or none. Failure is a warning: the cache is only an optimization. */
static void cache_write(const ct_ocl_device *dev, cl_program prog, const cache_loc *loc, uint64_t key) {
    size_t size = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0 ||
        size > CACHE_MAX_BINARY) {
        ct_log(CT_LOG_DEBUG, "opencl: %s gives no program binary to cache", dev->name);
        return;
    }
    unsigned char *bin = ct_malloc(size);
    if (!bin) return;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
        ct_free(bin);
        return;
    }
    bool refused;
    int dfd = cache_dir_open(loc->dir, true, &refused); /* warns on failure */
    if (dfd < 0) {
        ct_free(bin);
        return;
    }
    char tmp[sizeof loc->name + 32];
    cache_header h;
    memcpy(h.magic, CACHE_MAGIC, sizeof h.magic);
    h.key = key;
    h.size = size;
    h.bin_hash = fnv1a(0xcbf29ce484222325ull, bin, size);
    int fd = create_temp(dfd, loc, tmp, sizeof tmp);
    bool ok = fd >= 0 && write_all(fd, &h, sizeof h) && write_all(fd, bin, size);
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        saved = errno;
        ok = false;
    }
    if (ok && renameat(dfd, tmp, dfd, loc->name) != 0) {
        saved = errno;
        ok = false;
    }
    if (!ok) {
        ct_log(CT_LOG_WARN, "opencl: cannot write the program cache %s: %s; continuing without the cache",
               loc->path, strerror(saved));
        if (fd >= 0) unlinkat(dfd, tmp, 0);
    }
    close(dfd);
    ct_free(bin);
}

/* ---- building ---------------------------------------------------------------- */

/* The compiler's log, squeezed onto one line and cut to fit a status message. */
static void build_log(const ct_ocl_device *dev, cl_program prog, char *out, size_t n) {
    out[0] = '\0';
    size_t len = 0;
    if (clGetProgramBuildInfo(prog, dev->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) != CL_SUCCESS || len == 0) {
        return;
    }
    char *log = ct_malloc(len + 1);
    if (!log) return;
    if (clGetProgramBuildInfo(prog, dev->device, CL_PROGRAM_BUILD_LOG, len, log, NULL) != CL_SUCCESS) {
        ct_free(log);
        return;
    }
    log[len] = '\0';
    ct_log(CT_LOG_DEBUG, "opencl: %s build log:\n%s", dev->name, log);
    /* The first error is what matters; warnings before it are dropped. */
    const char *start = strstr(log, "error");
    if (!start) start = log;
    while (start > log && start[-1] != '\n') start--;
    size_t j = 0;
    const char *p = start;
    for (; *p && j + 4 < n; p++) {
        if (*p == '\n' || *p == '\r') {
            if (j > 0 && out[j - 1] != ' ') out[j++] = ' ';
        } else {
            out[j++] = *p;
        }
    }
    if (*p) {
        memcpy(out + j, "...", 3);
        j += 3;
    }
    out[j] = '\0';
    ct_free(log);
}

static cl_program build_from_binary(const ct_ocl_device *dev, const unsigned char *bin, size_t size,
                                    const char *options, const char *path) {
    cl_int err, bin_status = CL_SUCCESS;
    cl_program prog = CT_OCL_CREATE("clCreateProgramWithBinary", &err,
        clCreateProgramWithBinary(dev->context, 1, &dev->device, &size, &bin, &bin_status, &err));
    if (err == CL_SUCCESS && bin_status == CL_SUCCESS) {
        err = CT_OCL_BUILD(clBuildProgram(prog, 1, &dev->device, options, NULL, NULL));
        if (err == CL_SUCCESS) return prog;
    }
    ct_log(CT_LOG_INFO, "opencl: %s rejects the cached program %s (%s (%d)); rebuilding from source", dev->name, path,
           ct_ocl_error_name(err != CL_SUCCESS ? err : bin_status), err != CL_SUCCESS ? err : bin_status);
    if (prog) clReleaseProgram(prog);
    return NULL;
}

/* Whether prog defines every kernel the device may create from it: for the library
 * every kernel, else those kernels.def assigns to program. An entry that passes every other check may
 * still hold another program (a colliding key, a planted or foreign file); installed,
 * it would fail every backend init in every process (docs/BACKENDS.md). */
static bool has_kernels(const ct_ocl_device *dev, cl_program prog, ct_ocl_program_id program, const char *path) {
    size_t len = 0;
    char *names = NULL;
    const char *missing = NULL;
    if (clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &len) != CL_SUCCESS || len == 0 ||
        !(names = ct_malloc(len + 1)) ||
        clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, len, names, NULL) != CL_SUCCESS) {
        ct_log(CT_LOG_INFO, "opencl: %s: cannot list the kernels of the cached program %s%s; rebuilding", dev->name,
               path, names || len == 0 ? "" : " (out of memory)");
        ct_free(names);
        return false;
    }
    names[len] = '\0';
    for (int k = 0; k < CT_OCL_K_COUNT && !missing; k++) {
        const char *name = ct_ocl_kernel_table[k].name;
        if (!ct_ocl_kernel_available(dev, (ct_ocl_kernel_id)k)) continue;
        if (program != CT_OCL_PROGRAM_LIBRARY && ct_ocl_kernel_table[k].program != program) continue;
        /* names is "a;b;c": the name must be one whole item */
        const size_t n = strlen(name);
        const char *p = names;
        while ((p = strstr(p, name)) != NULL && !((p == names || p[-1] == ';') && (p[n] == ';' || p[n] == '\0'))) p++;
        if (!p) missing = name;
    }
    if (missing) {
        ct_log(CT_LOG_WARN, "opencl: %s: the program cache entry %s holds another program (no kernel %s); ignoring "
               "it and building from source", dev->name, path, missing);
    }
    ct_free(names);
    return !missing;
}

/* One program from the sources srcs[0..n): from the disk cache when a valid entry
 * exists (key: tag, device, driver, options and sources) and defines program p's
 * kernels, else compiled and cached. tag names its cache
 * file, what names it in messages. */
static ct_status load_program(ct_ocl_device *dev, const char *fn, const char *tag, const char *what,
                              ct_ocl_program_id p, const char *options, const char **srcs, const size_t *lens,
                              cl_uint n, cl_program *out, ct_ocl_program_origin *origin) {
    uint64_t key = fnv1a_str(0xcbf29ce484222325ull, "ctensor-opencl-program-v2");
    key = fnv1a_str(key, tag);
    key = fnv1a_str(key, dev->platform_name);
    key = fnv1a_str(key, dev->device_name);
    key = fnv1a_str(key, dev->driver_version);
    key = fnv1a_str(key, options);
    for (cl_uint i = 0; i < n; i++) key = fnv1a(key, srcs[i], lens[i]);

    cache_loc loc;
    bool cached = cache_locate(dev, tag, key, &loc);
    bool refused = false;
    const int dfd = cached ? cache_dir_open(loc.dir, false, &refused) : -1;
    if (refused) cached = false; /* warned: neither read nor written */
    if (dfd >= 0) {
        size_t size = 0;
        unsigned char *bin = cache_read(dfd, &loc, key, &size);
        close(dfd);
        if (bin) {
            cl_program prog = build_from_binary(dev, bin, size, options, loc.path);
            ct_free(bin);
            if (prog && !has_kernels(dev, prog, p, loc.path)) {
                clReleaseProgram(prog);
                prog = NULL;
            }
            if (prog) {
                *out = prog;
                *origin = CT_OCL_PROGRAM_CACHE;
                ct_log(CT_LOG_DEBUG, "opencl: %s loaded %s from %s", dev->name, what, loc.path);
                return CT_OK;
            }
        }
    }

    cl_int err;
    cl_program prog = CT_OCL_CREATE("clCreateProgramWithSource", &err,
                                    clCreateProgramWithSource(dev->context, n, srcs, lens, &err));
    if (err != CL_SUCCESS) {
        return ct_fail(CT_DEVICE_ERROR, "%s: device %s: clCreateProgramWithSource for %s failed: %s (%d)", fn,
                       dev->name, what, ct_ocl_error_name(err), err);
    }
    err = CT_OCL_BUILD(clBuildProgram(prog, 1, &dev->device, options, NULL, NULL));
    if (err != CL_SUCCESS) {
        char log[LOG_IN_MESSAGE];
        build_log(dev, prog, log, sizeof log);
        clReleaseProgram(prog);
        return ct_fail(CT_DEVICE_ERROR, "%s: device %s: building %s failed: %s (%d); options '%s'; log: %s", fn,
                       dev->name, what, ct_ocl_error_name(err), err, options, log[0] ? log : "(empty)");
    }
    *out = prog;
    *origin = CT_OCL_PROGRAM_SOURCE;
    if (cached) cache_write(dev, prog, &loc, key);
    return CT_OK;
}

bool ct_ocl_find_source(const char *name, const char **text, size_t *len) {
    for (size_t i = 0; i < ct_ocl_source_file_count; i++) {
        if (strcmp(ct_ocl_source_files[i].name, name) == 0) {
            *text = ct_ocl_source_files[i].text;
            *len = ct_ocl_source_files[i].len;
            return true;
        }
    }
    return false;
}

const char *const *ct_ocl_helper_sources(size_t *n) {
    *n = sizeof helper_sources / sizeof *helper_sources;
    return helper_sources;
}

/* srcs/lens: the prelude, then the named files; *n their count. False (a broken build:
 * a listed file was not embedded) with the error recorded. */
static bool compose(const ct_ocl_device *dev, const char *fn, const char *prelude, const char *const *names,
                    size_t n_names, const char **srcs, size_t *lens, cl_uint *n) {
    srcs[0] = prelude;
    lens[0] = strlen(prelude);
    CT_ASSERT(n_names < MAX_SOURCES); /* the static asserts below MAX_SOURCES hold it */
    for (size_t i = 0; i < n_names; i++) {
        if (!ct_ocl_find_source(names[i], &srcs[i + 1], &lens[i + 1])) {
            ct_fail(CT_DEVICE_ERROR, "%s: device %s: the kernel source %s was not embedded at build time", fn,
                    dev->name, names[i]);
            return false;
        }
    }
    *n = (cl_uint)(n_names + 1);
    return true;
}

/* The 8-bit mat-vec kernels hold 123-164 registers a work-item as NVIDIA's compiler
 * leaves them; at 128 or fewer four 128-item groups fit a multiprocessor (65536
 * registers), and 4096 rows' 512 groups run in one wave on the H200's 132. Capped there,
 * the mat-vec gained up to 13 points of copy at n = 2 and 1-4 at n = 1 (H200);
 * capping the whole library cost the F16/BF16 mat-vec 7-10
 * points, and NVIDIA's OpenCL caps only per program. So on a device with
 * cl_nv_compiler_options those kernels come from a second program, mvq_sources
 * built with the cap; any failure leaves them to the library. */
enum { MVQ_MAX_REGISTERS = 128 };

static void load_capped_mvq(ct_ocl_device *dev, const char *fn, const char *prelude, const char *options) {
    if (!dev->has_nv_compiler_options && !dev->test_mvq_options) return;
    char cap[32];
    snprintf(cap, sizeof cap, "-cl-nv-maxrregcount=%d", MVQ_MAX_REGISTERS);
    char capped[2 * OPTIONS_MAX];
    snprintf(capped, sizeof capped, "%s %s", options, dev->test_mvq_options ? dev->test_mvq_options : cap);
    /* the caller's call succeeds either way: the error state it had is kept */
    const ct_status had = ct_last_status();
    char had_msg[512];
    snprintf(had_msg, sizeof had_msg, "%s", ct_last_error());
    ct_ocl_program_origin origin;
    const char *srcs[MAX_SOURCES];
    size_t lens[MAX_SOURCES];
    cl_uint n = 0;
    if (!compose(dev, fn, prelude, mvq_sources, sizeof mvq_sources / sizeof *mvq_sources, srcs, lens, &n) ||
        load_program(dev, fn, "mvq", "the mat-vec kernels' program", CT_OCL_PROGRAM_MVQ, capped, srcs, lens, n,
                     &dev->program_mvq, &origin) != CT_OK) {
        ct_log(CT_LOG_WARN, "opencl: %s; the ct_mul_mvq kernels come from the kernel library", ct_last_error());
        dev->program_mvq = NULL;
        if (had == CT_OK) ct_clear_error();
        else ct_fail(had, "%s", had_msg);
    }
}

ct_status ct_ocl_library_load(ct_ocl_device *dev, const char *fn) {
    if (dev->program) return CT_OK;

    /* probed here, not at device discovery: only a process that computes on the device pays for it */
    dev->has_fp16_exact = ct_ocl_probe_fp16_exact(dev);
    dev->has_half_scale = ct_ocl_probe_half_scale(dev);
    ct_log(CT_LOG_DEBUG, "opencl: %s: exact fp16 conversions %d, halves by scaling %d", dev->name, dev->has_fp16_exact,
           dev->has_half_scale);
    char prelude[PRELUDE_MAX], options[OPTIONS_MAX];
    build_prelude(dev, prelude, sizeof prelude);
    build_options(dev, options, sizeof options);

    const char *srcs[MAX_SOURCES];
    size_t lens[MAX_SOURCES];
    cl_uint n = 0;
    if (!compose(dev, fn, prelude, library_sources, sizeof library_sources / sizeof *library_sources, srcs, lens,
                 &n))
        return ct_last_status();
    ct_status st = load_program(dev, fn, "lib", "the kernel library", CT_OCL_PROGRAM_LIBRARY, options, srcs, lens, n,
                                &dev->program, &dev->program_origin);
    if (st != CT_OK) return st;
    dev->program_builds++;
    load_capped_mvq(dev, fn, prelude, options);
    return CT_OK;
}

void ct_ocl_device_reset_program(ct_ocl_device *dev) {
    pthread_mutex_lock(&dev->lock);
    if (dev->program) clReleaseProgram(dev->program);
    if (dev->program_mvq) clReleaseProgram(dev->program_mvq);
    dev->program = dev->program_mvq = NULL;
    dev->program_origin = CT_OCL_PROGRAM_NONE;
    pthread_mutex_unlock(&dev->lock);
}

ct_status ct_ocl_device_set_test_build_options(ct_ocl_device *dev, const char *options) {
    char *copy = NULL;
    if (options) {
        size_t n = strlen(options);
        if (n >= OPTIONS_MAX / 2) {
            return ct_fail(CT_INVALID_ARGUMENT, "ct_ocl_device_set_test_build_options: options of %zu bytes (max %d)",
                           n, OPTIONS_MAX / 2 - 1);
        }
        copy = ct_malloc(n + 1);
        if (!copy) return ct_fail(CT_OUT_OF_MEMORY, "ct_ocl_device_set_test_build_options: out of memory");
        memcpy(copy, options, n + 1);
    }
    pthread_mutex_lock(&dev->lock);
    ct_free(dev->test_build_options);
    dev->test_build_options = copy;
    pthread_mutex_unlock(&dev->lock);
    return CT_OK;
}
