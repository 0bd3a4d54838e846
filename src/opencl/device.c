/* OpenCL device contexts: one per device of every platform the ICD loader
 * reports, with its capabilities read once when it is acquired, a refcount and
 * a lock. The registration holds one reference until exit; backends and buffers
 * hold one each, so the context outlives whatever uses it. */
#include "opencl_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cl_khr_fp16's query (cl_ext.h), spelled out so that cl.h alone suffices */
#ifndef CL_DEVICE_HALF_FP_CONFIG
#define CL_DEVICE_HALF_FP_CONFIG 0x1033
#endif

enum { MIN_ALIGNMENT = 128, MAX_ALIGNMENT = 4096 };

static void info_string(cl_device_id d, cl_device_info what, char *out, size_t n) {
    size_t got = 0;
    out[0] = '\0';
    if (clGetDeviceInfo(d, what, n - 1, out, &got) != CL_SUCCESS) {
        /* Longer than n: take what fits. */
        size_t need = 0;
        if (clGetDeviceInfo(d, what, 0, NULL, &need) != CL_SUCCESS || need == 0) return;
        char *tmp = ct_malloc(need + 1);
        if (!tmp) return;
        if (clGetDeviceInfo(d, what, need, tmp, NULL) == CL_SUCCESS) {
            tmp[need] = '\0';
            snprintf(out, n, "%s", tmp);
        }
        ct_free(tmp);
        return;
    }
    out[got < n ? got : n - 1] = '\0';
}

/* The whole CL_DEVICE_EXTENSIONS string (ct_malloc'd), or NULL. */
static char *device_extensions(cl_device_id d) {
    size_t need = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &need) != CL_SUCCESS) return NULL;
    char *s = ct_malloc(need + 1);
    if (!s) return NULL;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, need, s, NULL) != CL_SUCCESS) {
        ct_free(s);
        return NULL;
    }
    s[need] = '\0';
    return s;
}

/* A whole space-separated token, so "cl_khr_fp16" does not match "cl_khr_fp16_x". */
static bool has_token(const char *list, const char *token) {
    if (!list) return false;
    size_t n = strlen(token);
    for (const char *p = list; (p = strstr(p, token)) != NULL; p += n) {
        bool start = p == list || p[-1] == ' ';
        bool end = p[n] == '\0' || p[n] == ' ';
        if (start && end) return true;
    }
    return false;
}

static cl_ulong info_ulong(cl_device_id d, cl_device_info what) {
    cl_ulong v = 0;
    if (clGetDeviceInfo(d, what, sizeof v, &v, NULL) != CL_SUCCESS) return 0;
    return v;
}

static cl_uint info_uint(cl_device_id d, cl_device_info what) {
    cl_uint v = 0;
    if (clGetDeviceInfo(d, what, sizeof v, &v, NULL) != CL_SUCCESS) return 0;
    return v;
}

/* "OpenCL C 1.2 pocl" -> 120. */
static int parse_cl_c_version(const char *s) {
    int major = 0, minor = 0;
    if (sscanf(s, "OpenCL C %d.%d", &major, &minor) != 2) return 110;
    return major * 100 + minor * 10;
}

/* OpenCL C 3.0 makes sub-groups an optional feature instead of an extension. */
static bool has_c_feature(cl_device_id d, const char *feature) {
#ifdef CL_DEVICE_OPENCL_C_FEATURES
    size_t need = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_FEATURES, 0, NULL, &need) != CL_SUCCESS || need == 0) return false;
    cl_name_version *v = ct_malloc(need);
    if (!v) return false;
    bool found = false;
    if (clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_FEATURES, need, v, NULL) == CL_SUCCESS) {
        for (size_t i = 0; i < need / sizeof *v; i++) {
            if (strncmp(v[i].name, feature, CL_NAME_VERSION_MAX_NAME_SIZE) == 0) found = true;
        }
    }
    ct_free(v);
    return found;
#else
    CT_UNUSED(d);
    CT_UNUSED(feature);
    return false;
#endif
}

/* The least CT_OPENCL_MAX_SIZE taken: views over caller memory step by whole pages
 * (buffer.c), so a wrapped buffer has at most one view per page, and at 1 MiB a view
 * still holds a tensor of most of a MiB beside its page of overlap. Just above a
 * page, every view would hold next to nothing. */
#define MIN_ENV_MAX_SIZE ((size_t)1 << 20)

/* CT_OPENCL_MAX_SIZE: decimal digits only (no sign, space or other base: strtoull would
 * take "-18446744073709547520" for 4096), with an optional K, M or G suffix (powers of
 * 1024), at least MIN_ENV_MAX_SIZE. Anything else is a warning and no limit. */
static bool env_max_size(size_t *out) {
    const char *s = getenv("CT_OPENCL_MAX_SIZE");
    if (!s || !*s) return false;
    size_t v = 0, i = 0;
    bool overflow = false;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        overflow |= !ct_mul_size(v, 10, &v) || !ct_add_size(v, (size_t)(s[i] - '0'), &v);
    }
    unsigned shift = 0;
    const char u = s[i];
    if (u == 'K' || u == 'k') shift = 10, i++;
    else if (u == 'M' || u == 'm') shift = 20, i++;
    else if (u == 'G' || u == 'g') shift = 30, i++;
    const bool digits = i > 0 && s[0] >= '0' && s[0] <= '9';
    if (!digits || s[i] != '\0') {
        ct_log(CT_LOG_WARN, "opencl: ignoring CT_OPENCL_MAX_SIZE='%s': expected decimal digits with an optional K, "
               "M or G suffix (no sign, space or other characters)", s);
        return false;
    }
    if (overflow || v > (SIZE_MAX >> shift)) {
        ct_log(CT_LOG_WARN, "opencl: ignoring CT_OPENCL_MAX_SIZE='%s': more than SIZE_MAX bytes", s);
        return false;
    }
    v <<= shift;
    if (v < MIN_ENV_MAX_SIZE) {
        ct_log(CT_LOG_WARN, "opencl: ignoring CT_OPENCL_MAX_SIZE='%s': %zu bytes is below the minimum of %zu",
               s, v, MIN_ENV_MAX_SIZE);
        return false;
    }
    *out = v;
    return true;
}

/* Whether the device's compiler builds a probe kernel with inline PTX (NVIDIA's OpenCL has
 * neither cl_khr_integer_dot_product nor cl_khr_subgroups, and takes PTX instead); asked of
 * NVIDIA platforms only. A failure of any step just leaves the portable code in use. */
static bool probe_nv_ptx(ct_ocl_device *d, const char *src) {
    if (!strstr(d->platform_name, "NVIDIA")) return false;
    cl_int err;
    cl_program prog = CT_OCL_CREATE("clCreateProgramWithSource", &err,
                                    clCreateProgramWithSource(d->context, 1, &src, NULL, &err));
    if (err != CL_SUCCESS) return false;
    const bool ok = CT_OCL_BUILD(clBuildProgram(prog, 1, &d->device, "", NULL, NULL)) == CL_SUCCESS;
    clReleaseProgram(prog);
    return ok;
}

/* Builds src and runs its kernel ct_probe over `global` work-items, with buffer i of
 * size[i] bytes as argument i: host[i] copied in where in[i], read back into it otherwise.
 * False when any step fails. */
static bool run_probe_kernel(ct_ocl_device *d, const char *src, size_t global, int nbuf, void *const host[],
                             const size_t size[], const bool in[]) {
    enum { MAX_BUFS = 4 };
    cl_mem m[MAX_BUFS] = {NULL};
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_int err = CL_SUCCESS;
    bool ok = nbuf <= MAX_BUFS;
    if (ok)
        prog = CT_OCL_CREATE("clCreateProgramWithSource", &err,
                             clCreateProgramWithSource(d->context, 1, &src, NULL, &err));
    ok = ok && err == CL_SUCCESS && CT_OCL_BUILD(clBuildProgram(prog, 1, &d->device, "", NULL, NULL)) == CL_SUCCESS;
    if (ok) k = CT_OCL_CREATE("clCreateKernel", &err, clCreateKernel(prog, "ct_probe", &err));
    ok = ok && err == CL_SUCCESS;
    for (int i = 0; ok && i < nbuf; i++) {
        const cl_mem_flags flags = in[i] ? CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR : CL_MEM_WRITE_ONLY;
        m[i] = CT_OCL_CREATE("clCreateBuffer", &err,
                             clCreateBuffer(d->context, flags, size[i], in[i] ? host[i] : NULL, &err));
        ok = err == CL_SUCCESS && clSetKernelArg(k, (cl_uint)i, sizeof m[i], &m[i]) == CL_SUCCESS;
    }
    ok = ok && clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS;
    for (int i = 0; ok && i < nbuf; i++)
        if (!in[i])
            ok = clEnqueueReadBuffer(d->queue, m[i], CL_TRUE, 0, size[i], host[i], 0, NULL, NULL) == CL_SUCCESS;
    for (int i = 0; i < nbuf && i < MAX_BUFS; i++)
        if (m[i]) clReleaseMemObject(m[i]);
    if (k) clReleaseKernel(k);
    if (prog) clReleaseProgram(prog);
    return ok;
}

/* Whether the device's fp16 conversions are exact (what the kernels' CT_FP16_CONVERT
 * needs): those of cl_khr_fp16 where the device has it, else the core vload_half /
 * vstore_half_rte. CL_DEVICE_HALF_FP_CONFIG with denormals and round to nearest says
 * so; where it says nothing (NVIDIA has no cl_khr_fp16 and reports 0) a kernel converts
 * every non-NaN half to float and floats around every half's rounding boundary (ties
 * both ways, sticky bits) to half, and the results must equal the CPU's. Any failure
 * means no, and the kernels convert in integer arithmetic. */
bool ct_ocl_probe_fp16_exact(ct_ocl_device *d) {
    cl_device_fp_config hfp = 0;
    if (d->has_fp16 && clGetDeviceInfo(d->device, CL_DEVICE_HALF_FP_CONFIG, sizeof hfp, &hfp, NULL) == CL_SUCCESS &&
        (hfp & CL_FP_DENORM) && (hfp & CL_FP_ROUND_TO_NEAREST))
        return true;
    const char *src = d->has_fp16 ? "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
                                    "__kernel void ct_probe(__global const ushort *h, __global float *f,\n"
                                    "                       __global const float *x, __global ushort *y) {\n"
                                    "    const size_t i = get_global_id(0);\n"
                                    "    f[i] = (float)as_half(h[i]);\n"
                                    "    y[i] = as_ushort(convert_half_rte(x[i]));\n"
                                    "}\n"
                                  : "__kernel void ct_probe(__global const half *h, __global float *f,\n"
                                    "                       __global const float *x, __global half *y) {\n"
                                    "    const size_t i = get_global_id(0);\n"
                                    "    f[i] = vload_half(i, h);\n"
                                    "    vstore_half_rte(x[i], i, y);\n"
                                    "}\n";
    enum { NH = 1 << 16, LOWS = 6, NX = NH * LOWS };
    static const uint16_t lows[LOWS] = {0x0000, 0x1000, 0x0FFF, 0x1001, 0xF000, 0x2000};
    uint16_t *h = ct_malloc(NX * sizeof *h), *y = ct_malloc(NX * sizeof *y);
    float *f = ct_malloc(NX * sizeof *f), *x = ct_malloc(NX * sizeof *x);
    bool ok = h && y && f && x;
    for (uint32_t i = 0; ok && i < NX; i++) {
        h[i] = (uint16_t)i;
        const uint32_t bits = ((i % NH) << 16) | lows[i / NH];
        memcpy(&x[i], &bits, sizeof bits);
    }
    void *const host[4] = {h, f, x, y};
    const size_t sizes[4] = {NX * sizeof *h, NX * sizeof *f, NX * sizeof *x, NX * sizeof *y};
    static const bool in[4] = {true, false, true, false};
    ok = ok && run_probe_kernel(d, src, NX, 4, host, sizes, in);
    for (uint32_t i = 0; ok && i < NX; i++) {
        const float want_f = ct_fp16_to_fp32(h[i]);
        if ((h[i] & 0x7FFFu) <= 0x7C00u && memcmp(&want_f, &f[i], sizeof want_f) != 0) ok = false;
        if (!isnan(x[i]) && y[i] != ct_fp32_to_fp16(x[i])) ok = false;
    }
    ct_free(h);
    ct_free(y);
    ct_free(f);
    ct_free(x);
    return ok;
}

/* Whether the kernels take a half to float by scaling its bits (CT_HALF_BY_SCALE): a
 * finite half's exponent and mantissa bits, moved into a float's and multiplied by 2^112,
 * are its value exactly where the multiply keeps subnormal operands. On PoCL that made
 * GET_ROWS F16 1.8x faster than vload_half (a library call there); on NVIDIA it cost
 * GET_ROWS F16 3 points against the conversion instruction (measured on an
 * H100), so NVIDIA platforms keep that. Elsewhere a kernel scales every finite
 * magnitude and the results must equal the CPU's conversion. */
bool ct_ocl_probe_half_scale(ct_ocl_device *d) {
    if (strstr(d->platform_name, "NVIDIA")) return false;
    static const char src[] = "__kernel void ct_probe(__global float *f) {\n"
                              "    const uint i = get_global_id(0);\n"
                              "    f[i] = as_float(i << 13) * 0x1p112f;\n"
                              "}\n";
    enum { NF = 0x7C00 }; /* the finite magnitudes */
    float *f = ct_malloc(NF * sizeof *f);
    void *const host[1] = {f};
    const size_t size[1] = {NF * sizeof *f};
    static const bool in[1] = {false};
    bool ok = f && run_probe_kernel(d, src, NF, 1, host, size, in);
    for (uint32_t i = 0; ok && i < NF; i++) {
        const float want = ct_fp16_to_fp32((uint16_t)i);
        ok = memcmp(&want, &f[i], sizeof want) == 0;
    }
    ct_free(f);
    return ok;
}

/* The cl_khr_command_buffer entry points, when the device can record our queue's
 * commands: its required queue properties must be ones our plain in-order queue has
 * (none). Any missing piece leaves the device without graph replay. */
static bool load_cmdbuf_api(ct_ocl_device *d, cl_device_id id) {
    cl_command_queue_properties required = 0;
    if (clGetDeviceInfo(id, CT_CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES, sizeof required, &required,
                        NULL) != CL_SUCCESS ||
        required != 0) {
        return false;
    }
    void *f[5];
    static const char *const names[5] = {"clCreateCommandBufferKHR", "clFinalizeCommandBufferKHR",
                                         "clReleaseCommandBufferKHR", "clEnqueueCommandBufferKHR",
                                         "clCommandNDRangeKernelKHR"};
    for (int i = 0; i < 5; i++) {
        f[i] = clGetExtensionFunctionAddressForPlatform(d->platform, names[i]);
        if (!f[i]) return false;
    }
    /* object pointers to function pointers, as with dlsym (cl_api.c) */
    memcpy(&d->cmdbuf.create, &f[0], sizeof f[0]);
    memcpy(&d->cmdbuf.finalize, &f[1], sizeof f[1]);
    memcpy(&d->cmdbuf.release, &f[2], sizeof f[2]);
    memcpy(&d->cmdbuf.enqueue, &f[3], sizeof f[3]);
    memcpy(&d->cmdbuf.ndrange, &f[4], sizeof f[4]);
    return true;
}

static void read_caps(ct_ocl_device *d, cl_device_id id) {
    cl_device_type t = 0;
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    d->type = (t & CL_DEVICE_TYPE_GPU) ? CT_DEVICE_TYPE_GPU
              : (t & CL_DEVICE_TYPE_CPU) ? CT_DEVICE_TYPE_CPU
                                          : CT_DEVICE_TYPE_ACCEL;

    char version[128];
    info_string(id, CL_DEVICE_OPENCL_C_VERSION, version, sizeof version);
    d->cl_c_version = parse_cl_c_version(version);
    info_string(id, CL_DEVICE_NAME, d->device_name, sizeof d->device_name);
    info_string(id, CL_DRIVER_VERSION, d->driver_version, sizeof d->driver_version);
    d->platform_name[0] = '\0';
    clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof d->platform_name - 1, d->platform_name, NULL);
    d->platform_name[sizeof d->platform_name - 1] = '\0';
    snprintf(d->description, sizeof d->description, "%s: %s", d->platform_name, d->device_name);

    char *ext = device_extensions(id);
    /* The khr sub-group built-ins are declared for OpenCL C 2.0 and later only. */
    d->has_subgroups = (has_token(ext, "cl_khr_subgroups") && d->cl_c_version >= 200) ||
                       (d->cl_c_version >= 300 && has_c_feature(id, "__opencl_c_subgroups"));
    d->has_fp16 = has_token(ext, "cl_khr_fp16");
    d->rows8_min_log2 = 20;
    d->has_fp64 = has_token(ext, "cl_khr_fp64") || info_ulong(id, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
    d->has_int_dot = has_token(ext, "cl_khr_integer_dot_product");
    d->has_cmdbuf = has_token(ext, "cl_khr_command_buffer") && load_cmdbuf_api(d, id);
    d->has_nv_compiler_options = has_token(ext, "cl_nv_compiler_options");
    ct_free(ext);
    d->features = (d->has_subgroups ? CT_OCL_FEAT_SUBGROUPS : 0u) | (d->has_fp16 ? CT_OCL_FEAT_FP16 : 0u) |
                  (d->has_fp64 ? CT_OCL_FEAT_FP64 : 0u) | (d->has_int_dot ? CT_OCL_FEAT_INT_DOT : 0u);

    cl_device_fp_config fp = 0;
    clGetDeviceInfo(id, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL);
    d->has_correct_div_sqrt = (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;

    size_t wg = 0;
    clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    d->max_work_group_size = wg ? wg : 1;
    /* OpenCL guarantees at least 3 dimensions; a fixed array avoids an allocation
     * whose failure would silently change the work-group limits. */
    size_t items[3] = {1, 1, 1};
    cl_uint dims = info_uint(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    if (dims >= 3 && dims <= 16) {
        size_t all[16] = {0};
        if (clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof all[0], all, NULL) == CL_SUCCESS) {
            memcpy(items, all, sizeof items);
        }
    }
    for (int i = 0; i < 3; i++) d->max_work_item_sizes[i] = items[i] ? items[i] : 1;
    const cl_ulong local_mem = info_ulong(id, CL_DEVICE_LOCAL_MEM_SIZE);
    d->local_mem = local_mem > SIZE_MAX ? SIZE_MAX : (size_t)local_mem;

    cl_ulong max_alloc = info_ulong(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    d->max_size = max_alloc > SIZE_MAX ? SIZE_MAX : (size_t)max_alloc;
    size_t env;
    if (env_max_size(&env) && env < d->max_size) d->max_size = env;
    cl_ulong global = info_ulong(id, CL_DEVICE_GLOBAL_MEM_SIZE);
    d->global_mem = global > SIZE_MAX ? SIZE_MAX : (size_t)global;

    size_t align = info_uint(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
    size_t a = MIN_ALIGNMENT;
    while (a < align && a < MAX_ALIGNMENT) a *= 2;
    d->alignment = a;
}

static ct_ocl_device *device_create(int index, cl_platform_id platform, cl_device_id id) {
    ct_ocl_device *d = ct_calloc(1, sizeof *d);
    if (!d) {
        ct_log(CT_LOG_WARN, "opencl: out of memory creating device %d", index);
        return NULL;
    }
    if (pthread_mutex_init(&d->lock, NULL) != 0) {
        ct_free(d);
        ct_log(CT_LOG_WARN, "opencl: cannot create the lock of device %d", index);
        return NULL;
    }
    d->index = index;
    d->platform = platform;
    d->device = id;
    snprintf(d->name, sizeof d->name, "OpenCL%d", index);
    read_caps(d, id);
    atomic_init(&d->allocated, 0);

    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    d->context = CT_OCL_CREATE("clCreateContext", &err, clCreateContext(props, 1, &id, NULL, NULL, &err));
    if (err == CL_SUCCESS) d->queue = CT_OCL_CREATE("clCreateCommandQueue", &err, clCreateCommandQueue(d->context, id, 0, &err));
    if (err != CL_SUCCESS) {
        ct_log(CT_LOG_WARN, "opencl: skipping device '%s': cannot create a context and queue: %s (%d)",
               d->description, ct_ocl_error_name(err), err);
        if (d->context) clReleaseContext(d->context);
        pthread_mutex_destroy(&d->lock);
        ct_free(d);
        return NULL;
    }
    /* dp4a for the quantized mat-vec; the warp shuffle and warp barrier for the team quantizers */
    d->has_nv_dp4a = probe_nv_ptx(d, "__kernel void ct_probe(__global int *o) { int r;\n"
                                     "asm(\"dp4a.s32.s32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(o[0]), \"r\"(o[1]), \"r\"(0));\n"
                                     "o[2] = r; }\n");
    d->has_nv_warp = probe_nv_ptx(d, "__kernel void ct_probe(__global int *o) { int r;\n"
                                     "asm volatile(\"shfl.sync.bfly.b32 %0, %1, 1, 0x1f, 0xffffffff;\" : \"=r\"(r) : \"r\"(o[0]));\n"
                                     "asm volatile(\"bar.warp.sync 0xffffffff;\" ::: \"memory\");\n"
                                     "o[1] = r; }\n");
    /* the warp matrix product, in F16 and BF16, and the packing conversions for the tensor-core matmul */
    d->has_nv_mma = probe_nv_ptx(d, "__kernel void ct_probe(__global uint *o) { float d[4], e[4]; uint p, r;\n"
                                    "asm(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                                    "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\" : \"=f\"(d[0]), \"=f\"(d[1]), "
                                    "\"=f\"(d[2]), \"=f\"(d[3]) : \"r\"(o[0]), \"r\"(o[1]), \"r\"(o[2]), "
                                    "\"r\"(o[3]), \"r\"(o[4]), \"r\"(o[5]), \"f\"(0.0f), \"f\"(0.0f), "
                                    "\"f\"(0.0f), \"f\"(0.0f));\n"
                                    "asm(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                                    "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\" : \"=f\"(e[0]), \"=f\"(e[1]), "
                                    "\"=f\"(e[2]), \"=f\"(e[3]) : \"r\"(o[0]), \"r\"(o[1]), \"r\"(o[2]), "
                                    "\"r\"(o[3]), \"r\"(o[4]), \"r\"(o[5]), \"f\"(d[0]), \"f\"(d[1]), "
                                    "\"f\"(d[2]), \"f\"(d[3]));\n"
                                    "asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(p) : \"f\"(e[0]), \"f\"(e[1]));\n"
                                    "asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(e[2]), \"f\"(e[3]));\n"
                                    "o[6] = p ^ r; }\n");
    /* tests and debugging: the same kernels on any device, through the portable emulation */
    d->mma_emulate = ct_ocl_env_switch("CT_OPENCL_MMA_EMULATE", false);
    if (d->has_nv_mma || d->mma_emulate) d->features |= CT_OCL_FEAT_MMA;
    ct_ocl_buffer_types_init(d);
    d->refcount = 1;
    ct_log(CT_LOG_DEBUG, "opencl: %s = '%s' (%s, OpenCL C %d, driver %s): max_size %zu, global %zu, "
           "wg %zu, subgroups %d, fp16 %d, fp64 %d, correctly rounded div %d, int dot %d, PTX dp4a %d, PTX warp %d, "
           "PTX mma %d (emulated %d), command buffers %d",
           d->name,
           d->description, ct_device_type_name(d->type), d->cl_c_version, d->driver_version, d->max_size,
           d->global_mem, d->max_work_group_size, d->has_subgroups, d->has_fp16, d->has_fp64, d->has_correct_div_sqrt,
           d->has_int_dot, d->has_nv_dp4a, d->has_nv_warp, d->has_nv_mma, d->mma_emulate, d->has_cmdbuf);
    return d;
}

size_t ct_ocl_devices_enumerate(ct_ocl_device ***out) {
    *out = NULL;
    if (!ct_cl_load()) return 0; /* no OpenCL library: logged by the loader */
    cl_uint n_platforms = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &n_platforms);
    if (err != CL_SUCCESS || n_platforms == 0) {
        /* -1001 (CL_PLATFORM_NOT_FOUND_KHR) is the ICD loader's "no platform installed". */
        ct_log(CT_LOG_DEBUG, "opencl: no platform (clGetPlatformIDs: %s (%d))", ct_ocl_error_name(err), err);
        return 0;
    }
    cl_platform_id *platforms = ct_calloc(n_platforms, sizeof *platforms);
    if (!platforms) return 0;
    if (clGetPlatformIDs(n_platforms, platforms, NULL) != CL_SUCCESS) {
        ct_free(platforms);
        return 0;
    }

    size_t count = 0, cap = 0;
    ct_ocl_device **list = NULL;
    for (cl_uint p = 0; p < n_platforms; p++) {
        cl_uint n_dev = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n_dev) != CL_SUCCESS || n_dev == 0) continue;
        cl_device_id *ids = ct_calloc(n_dev, sizeof *ids);
        if (!ids) break;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n_dev, ids, NULL) != CL_SUCCESS) n_dev = 0;
        for (cl_uint i = 0; i < n_dev; i++) {
            if (count == cap) {
                size_t ncap = cap ? cap * 2 : 4;
                ct_ocl_device **grown = ct_calloc(ncap, sizeof *grown);
                if (!grown) break;
                if (count) memcpy(grown, list, count * sizeof *list);
                ct_free(list);
                list = grown;
                cap = ncap;
            }
            ct_ocl_device *d = device_create((int)count, platforms[p], ids[i]);
            if (d) list[count++] = d;
        }
        ct_free(ids);
    }
    ct_free(platforms);
    *out = list;
    return count;
}

bool ct_ocl_env_switch(const char *name, bool if_unset) {
    const char *v = getenv(name);
    return v && *v ? strcmp(v, "0") != 0 : if_unset;
}

void ct_ocl_device_retain(ct_ocl_device *dev) {
    pthread_mutex_lock(&dev->lock);
    dev->refcount++;
    pthread_mutex_unlock(&dev->lock);
}

void ct_ocl_device_release(ct_ocl_device *dev) {
    if (!dev) return;
    pthread_mutex_lock(&dev->lock);
    int left = dev->refcount > 0 ? --dev->refcount : -1;
    pthread_mutex_unlock(&dev->lock);
    if (left < 0) ct_log(CT_LOG_ERROR, "opencl: %s released more often than acquired", dev->name);
    if (left != 0) return;
    if (dev->program) clReleaseProgram(dev->program);
    if (dev->program_mvq) clReleaseProgram(dev->program_mvq);
    clReleaseCommandQueue(dev->queue);
    clReleaseContext(dev->context);
    ct_free(dev->test_build_options);
    pthread_mutex_destroy(&dev->lock);
    ct_free(dev);
}
