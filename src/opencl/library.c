/* The kernel library: one cl_program per device (and on NVIDIA a second, the 8-bit
 * mat-vec kernels register-capped: load_capped_mvq), built once under the device
 * lock from the sources embedded at build time, without fast-math options and
 * with FP_CONTRACT OFF (quantization must match the CPU bit for bit). Each built
 * binary is cached on disk, keyed by device, driver and a hash of everything
 * that goes into the build; an entry that fails any check is rebuilt. */
#include "opencl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const ct_ocl_kernel_info ct_ocl_kernel_table[CT_OCL_K_COUNT] = {
#define CT_OCL_KERNEL(id, name, gate) [CT_OCL_K_##id] = {name, gate},
#include "kernels.def"
#undef CT_OCL_KERNEL
};

enum {
    PRELUDE_MAX = 2048,
    OPTIONS_MAX = 512,
    LOG_IN_MESSAGE = 360, /* the status message holds 512 bytes in all */
};

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
             "#define CT_CORRECTLY_ROUNDED_DIV %d\n"
             "#if CT_HAS_FP16\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#endif\n"
             "#if CT_HAS_FP64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
             "#if CT_HAS_SUBGROUPS && defined(cl_khr_subgroups)\n"
             "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n#endif\n"
             "#define CT_RAISE_ERROR(err, code) "
             "((void)atomic_cmpxchg((volatile __global int *)(err), 0, (code)))\n",
             dev->has_subgroups, dev->has_fp16, dev->has_fp16_exact, dev->has_half_scale, dev->has_fp64,
             dev->has_int_dot, dev->has_nv_dp4a, dev->has_nv_warp, dev->has_correct_div_sqrt);
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
    if (extra && strlen(extra) >= OPTIONS_MAX / 4) {
        ct_log(CT_LOG_WARN, "opencl: CT_OPENCL_BUILD_OPTIONS of %zu bytes ignored (max %d)", strlen(extra),
               OPTIONS_MAX / 4 - 1);
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

/* mkdir -p; errno describes a failure. */
static bool make_dirs(const char *path) {
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) {
        errno = ENAMETOOLONG;
        return false;
    }
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
        buf[i] = c;
    }
    struct stat st;
    if (stat(path, &st) != 0) return false;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return false;
    }
    return true;
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

/* <dir>/<device>-<driver>-<tag>-<key>.clbin; tag names the program ("lib", "mvq"). */
static bool cache_path(const ct_ocl_device *dev, const char *tag, uint64_t key, char *out, size_t n, char *dir,
                       size_t dn) {
    if (!ct_ocl_cache_dir(dir, dn)) return false;
    char dname[48], drv[48];
    sanitize(dname, sizeof dname, dev->device_name);
    sanitize(drv, sizeof drv, dev->driver_version);
    int w = snprintf(out, n, "%s/%s-%s-%s-%016llx.clbin", dir, dname, drv, tag, (unsigned long long)key);
    return w > 0 && (size_t)w < n;
}

/* The cached binary, or NULL when absent or failing any check. */
static unsigned char *cache_read(const char *path, uint64_t key, size_t *size) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return NULL;
    unsigned char *bin = NULL;
    cache_header h;
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0 || read(fd, &h, sizeof h) != (ssize_t)sizeof h) {
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
        ct_log(CT_LOG_INFO, "opencl: ignoring the program cache entry %s (%s); rebuilding", path, why);
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

/* Writes to a temporary file and renames it, so readers in other processes see a
 * whole entry or none. Failure is a warning: the cache is only an optimization. */
static void cache_write(const ct_ocl_device *dev, cl_program prog, const char *path, const char *dir,
                        uint64_t key) {
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
    if (!make_dirs(dir)) {
        ct_log(CT_LOG_WARN, "opencl: cannot create the program cache directory %s: %s; continuing without the "
               "cache", dir, strerror(errno));
        ct_free(bin);
        return;
    }
    char tmp[4200];
    static atomic_uint counter;
    snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", path, (long)getpid(), atomic_fetch_add(&counter, 1u));
    cache_header h;
    memcpy(h.magic, CACHE_MAGIC, sizeof h.magic);
    h.key = key;
    h.size = size;
    h.bin_hash = fnv1a(0xcbf29ce484222325ull, bin, size);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool ok = fd >= 0 && write_all(fd, &h, sizeof h) && write_all(fd, bin, size);
    int saved = errno;
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) {
        saved = errno;
        ok = false;
    }
    if (!ok) {
        ct_log(CT_LOG_WARN, "opencl: cannot write the program cache %s: %s; continuing without the cache", path,
               strerror(saved));
        if (fd >= 0) unlink(tmp);
    }
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

/* One program from the sources srcs[0..n): from the disk cache when a valid entry
 * exists (key: tag, device, driver, options and sources), else compiled and cached.
 * tag names its cache file, what names it in messages. */
static ct_status load_program(ct_ocl_device *dev, const char *fn, const char *tag, const char *what,
                              const char *options, const char **srcs, const size_t *lens, cl_uint n,
                              cl_program *out, ct_ocl_program_origin *origin) {
    uint64_t key = fnv1a_str(0xcbf29ce484222325ull, "ctensor-opencl-program-v1");
    key = fnv1a_str(key, tag);
    key = fnv1a_str(key, dev->platform_name);
    key = fnv1a_str(key, dev->device_name);
    key = fnv1a_str(key, dev->driver_version);
    key = fnv1a_str(key, options);
    for (cl_uint i = 0; i < n; i++) key = fnv1a(key, srcs[i], lens[i]);

    char path[4096], dir[4096];
    bool cached = cache_path(dev, tag, key, path, sizeof path, dir, sizeof dir);
    if (cached) {
        size_t size = 0;
        unsigned char *bin = cache_read(path, key, &size);
        if (bin) {
            cl_program prog = build_from_binary(dev, bin, size, options, path);
            ct_free(bin);
            if (prog) {
                *out = prog;
                *origin = CT_OCL_PROGRAM_CACHE;
                ct_log(CT_LOG_DEBUG, "opencl: %s loaded %s from %s", dev->name, what, path);
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
    if (cached) cache_write(dev, prog, path, dir, key);
    return CT_OK;
}

/* The part of the embedded source that came from the file `name` (embed.cmake puts
 * each file after a line `#line 1 "<name>"`), or false when there is none. */
static bool embedded_file(const char *name, const char **p, size_t *n) {
    char marker[64];
    snprintf(marker, sizeof marker, "#line 1 \"%s\"\n", name);
    const char *start = strstr(ct_ocl_kernels_source, marker);
    if (!start) return false;
    const char *end = strstr(start + strlen(marker), "#line 1 \"");
    *p = start;
    *n = end ? (size_t)(end - start) : strlen(start);
    return true;
}

/* The 8-bit mat-vec kernels hold 123-164 registers a work-item as NVIDIA's compiler
 * leaves them; at 128 or fewer four 128-item groups fit a multiprocessor (65536
 * registers), and 4096 rows' 512 groups run in one wave on the H200's 132. Capped there,
 * the mat-vec gained up to 13 points of copy at n = 2 and 1-4 at n = 1 (docs/perf/
 * NOTES-h200.md, calls 57-58); capping the whole library cost the F16/BF16 mat-vec 7-10
 * points, and NVIDIA's OpenCL caps only per program. So on a device with
 * cl_nv_compiler_options those kernels come from a second program, common.cl and
 * mul_mvq.cl built with the cap; any failure leaves them to the library. */
enum { MVQ_MAX_REGISTERS = 128 };

static void load_capped_mvq(ct_ocl_device *dev, const char *fn, const char *prelude, const char *options) {
    if (!dev->has_nv_compiler_options && !dev->test_mvq_options) return;
    char cap[32];
    snprintf(cap, sizeof cap, "-cl-nv-maxrregcount=%d", MVQ_MAX_REGISTERS);
    const char *srcs[3] = {prelude};
    size_t lens[3] = {strlen(prelude)};
    if (!embedded_file("common.cl", &srcs[1], &lens[1]) || !embedded_file("mul_mvq.cl", &srcs[2], &lens[2])) {
        ct_log(CT_LOG_WARN, "opencl: %s: common.cl or mul_mvq.cl missing from the embedded source", dev->name);
        return;
    }
    char capped[2 * OPTIONS_MAX];
    snprintf(capped, sizeof capped, "%s %s", options, dev->test_mvq_options ? dev->test_mvq_options : cap);
    /* the caller's call succeeds either way: the error state it had is kept */
    const ct_status had = ct_last_status();
    char had_msg[512];
    snprintf(had_msg, sizeof had_msg, "%s", ct_last_error());
    ct_ocl_program_origin origin;
    if (load_program(dev, fn, "mvq", "the mat-vec kernels' program", capped, srcs, lens, 3, &dev->program_mvq,
                     &origin) != CT_OK) {
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

    const char *srcs[2] = {prelude, ct_ocl_kernels_source};
    const size_t lens[2] = {strlen(prelude), ct_ocl_kernels_source_len};
    ct_status st = load_program(dev, fn, "lib", "the kernel library", options, srcs, lens, 2, &dev->program,
                                &dev->program_origin);
    if (st != CT_OK) return st;
    dev->program_builds++;
    load_capped_mvq(dev, fn, prelude, options);
    return CT_OK;
}

cl_program ct_ocl_kernel_program(const ct_ocl_device *dev, ct_ocl_kernel_id k) {
    const bool mvq = strncmp(ct_ocl_kernel_table[k].name, "ct_mul_mvq", strlen("ct_mul_mvq")) == 0;
    return mvq && dev->program_mvq ? dev->program_mvq : dev->program;
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
