#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

_Atomic int tu_failures = 0;
_Atomic int tu_checks = 0;
static const char *tu_name = "test";
/* Atomic so that tests may draw random numbers and CHECK from several threads. */
static _Atomic uint64_t tu_state;

/* The environment as the test started. tu_run_self passes this copy to its children:
 * ocl-icd splits OCL_ICD_FILENAMES in place when OpenCL is first used, so the live
 * environment can list fewer drivers by then (seen on a machine whose
 * OCL_ICD_FILENAMES named PoCL and NVIDIA's driver). */
static char **tu_environ;

static void tu_save_environ(void) {
    if (tu_environ) return;
    size_t n = 0;
    while (environ[n]) n++;
    tu_environ = calloc(n + 1, sizeof *tu_environ);
    for (size_t i = 0; tu_environ && i < n; i++) tu_environ[i] = strdup(environ[i]); /* NULL ends it early */
}

void tu_init(const char *test_name) {
    tu_save_environ();
    tu_name = test_name;
    const char *env = getenv("CT_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) ^ (uint64_t)clock() << 20);
    tu_state = seed ? seed : 1;
    printf("%s: seed %llu (set CT_TEST_SEED to repeat)\n", tu_name, (unsigned long long)seed);
}

int tu_finish(void) {
    printf("%s: %d checks, %d failed\n", tu_name, tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}

/* splitmix64: small, fast, good enough for test data */
uint64_t tu_rand_u64(void) {
    uint64_t z = atomic_fetch_add(&tu_state, 0x9E3779B97F4A7C15ull) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t tu_rand_u32(void) { return (uint32_t)(tu_rand_u64() >> 32); }

float tu_rand_uniform(float lo, float hi) {
    double u = (double)(tu_rand_u64() >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

float tu_rand_normal(void) {
    double u1 = ((double)(tu_rand_u64() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = (double)(tu_rand_u64() >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

int64_t tu_rand_below(int64_t n) { return n > 0 ? (int64_t)(tu_rand_u64() % (uint64_t)n) : 0; }

void tu_fill_uniform(float *x, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = tu_rand_uniform(lo, hi);
}

void tu_fill_bytes(void *p, size_t n) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)tu_rand_u64();
}

void tu_fill_quantized(ct_type t, void *out, int64_t count, unsigned salt) {
    float *x = malloc((size_t)count * sizeof *x);
    for (int64_t i = 0; x && i < count; i++) {
        x[i] = (float)((double)((((size_t)i + 1) * 2246822519u + (size_t)salt * 3266489917u) % 4001) / 2000.0 - 1.0);
    }
    size_t bytes = 0;
    if ((!x || ct_quantize_row(t, x, out, count) != CT_OK) && ct_row_size(t, count, &bytes) == CT_OK) {
        memset(out, 0, bytes);
    }
    free(x);
}

bool tu_opencl_device_selected(const ct_device *dev) {
    const char *only = getenv("CT_TEST_OPENCL_DEVICE");
    return !only || strcmp(only, ct_device_name(dev)) == 0;
}

ct_device *tu_opencl_device(void) {
    ct_backend_reg *reg = ct_backend_reg_by_name("OpenCL");
    for (size_t i = 0; reg && i < ct_backend_reg_dev_count(reg); i++) {
        ct_device *d = ct_backend_reg_dev_get(reg, i);
        if (tu_opencl_device_selected(d)) return d;
    }
    return NULL;
}

size_t tu_page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

void tu_run_self(const char *what, const char *name, const char *value, const char *const *args) {
    /* The environment is built before the fork: the parent has the driver's threads, so
     * the child only calls execve. */
    char **const start_env = tu_environ ? tu_environ : environ;
    size_t n_env = 0, name_len = strlen(name);
    while (start_env[n_env]) n_env++;
    char **env = calloc(n_env + 2, sizeof *env);
    char *var = NULL;
    const char *argv[8] = {"child"};
    for (int i = 0; args[i] && i < 6; i++) argv[i + 1] = args[i];
    if (!env) {
        CHECK_MSG(false, "%s: out of memory", what);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n_env; i++)
        if (strncmp(start_env[i], name, name_len) != 0 || start_env[i][name_len] != '=') env[k++] = start_env[i];
    if (value) {
        size_t len = name_len + strlen(value) + 2;
        var = malloc(len);
        if (var) snprintf(var, len, "%s=%s", name, value);
        env[k++] = var;
    }
    printf("-- %s", what);
    if (value) printf(" (%s='%s')", name, value);
    printf("\n");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execve("/proc/self/exe", (char *const *)argv, env);
        _exit(127);
    }
    int status = 0;
    const bool waited = pid > 0 && waitpid(pid, &status, 0) == pid;
    free(var);
    free(env);
    if (!waited) {
        CHECK_MSG(false, "%s: cannot run a child", what);
    } else if (WIFSIGNALED(status)) {
        CHECK_MSG(false, "%s: the child was killed by signal %d (%s)", what, WTERMSIG(status),
                  strsignal(WTERMSIG(status)));
    } else {
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child exited with %d", what,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
}

static const int8_t tu_kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* The nearest table value by a linear scan; a NaN compares false everywhere and ends at 15. */
static int iq4_nl_naive_nearest(float a) {
    if (a <= tu_kvalues_iq4nl[0]) return 0;
    if (a >= tu_kvalues_iq4nl[15]) return 15;
    int up = 1;
    while (up < 15 && !(a < tu_kvalues_iq4nl[up])) up++; /* first value above a */
    const float below = a - (float)tu_kvalues_iq4nl[up - 1];
    const float above = (float)tu_kvalues_iq4nl[up] - a;
    return below < above ? up - 1 : up;
}

void tu_iq4_nl_naive(const float *x, uint8_t out[18]) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    if (amax < 1e-15f) {
        out[0] = out[1] = 0;
        memset(out + 2, 0x88, 16);
        return;
    }
    const float d0 = max / -127.0f;
    const float id = 1.0f / d0;
    float sumqx = 0.0f, sumq2 = 0.0f;
    int idx[32];
    for (int j = 0; j < 32; j++) {
        const float a = id * x[j];
        idx[j] = iq4_nl_naive_nearest(a);
        const float q = (float)tu_kvalues_iq4nl[idx[j]];
        const float w = x[j] * x[j];
        const float wq = w * q;
        const float t1 = wq * x[j];
        const float t2 = wq * q;
        sumqx = sumqx + t1;
        sumq2 = sumq2 + t2;
    }
    /* a NaN element makes sumq2 NaN, and ggml's `sumq2 > 0` test then stores d = 0 */
    const float df = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
    const ct_fp16 d = df != df ? 0x7E00 : ct_fp32_to_fp16(df); /* one canonical NaN scale */
    out[0] = (uint8_t)(d & 0xFF);
    out[1] = (uint8_t)(d >> 8);
    for (int j = 0; j < 16; j++) out[2 + j] = (uint8_t)(idx[j] | idx[j + 16] << 4);
}

void tu_iq4_nl_edge_block(float *x, int kind) {
    for (int j = 0; j < 32; j++) x[j] = tu_rand_uniform(-1.0f, 1.0f);
    switch (kind) {
    case 0: x[5] = NAN; break;
    case 1: x[0] = tu_bits_f32(0xFFC00321u); break; /* a negative NaN with a payload, first */
    case 2: x[31] = -NAN; x[0] = 100.0f; break;
    case 3: for (int j = 0; j < 32; j += 4) x[j] = NAN; break;
    case 4: x[7] = INFINITY; break;
    case 5: x[7] = -INFINITY; break;
    case 6: x[0] = -INFINITY; x[9] = INFINITY; break;
    case 7: x[7] = INFINITY; x[9] = NAN; break;
    case 8: for (int j = 0; j < 32; j++) x[j] = NAN; break;
    case 9: for (int j = 0; j < 32; j++) x[j] *= 1e-16f; x[4] = NAN; break; /* below 1e-15: zero block */
    case 10: x[3] = 0x1.020408p+57f; break; /* the least max whose 127^2 * max^2 overflows: d NaN */
    case 11: x[3] = -0x1.020406p+57f; break; /* one float below it: sumqx overflows, d infinite */
    case 12: x[3] = 3e38f; x[4] = -1e19f; break;
    case 13: x[3] = 1e13f; break;
    case 14: for (int j = 0; j < 32; j++) x[j] = (j & 1) ? 0x1p64f : -0x1p64f; break; /* x^2 = inf */
    case 15: x[11] = FLT_MAX; x[12] = NAN; break;
    case 16: x[tu_rand_below(32)] = tu_bits_f32(0x7FC00000u | tu_rand_u32()); break; /* NaN, any payload */
    case 17: for (int j = 0; j < 32; j++) x[j] *= 1e18f; break; /* sumq2 overflows from many elements */
    case 18: x[tu_rand_below(32)] = NAN; x[tu_rand_below(32)] = 1e20f; break;
    default: x[tu_rand_below(32)] = tu_rand_below(2) ? INFINITY : -INFINITY; break;
    }
}
