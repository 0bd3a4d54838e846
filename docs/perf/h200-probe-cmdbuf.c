/* Probe (session 6): what does replaying 1000 small dependent kernels through
 * cl_khr_command_buffer cost on this driver, with nothing of ctensor in the way?
 * The kernel and its 18 arguments are h200-probe-launch.c's. Per launch, best of 5:
 *   enqueue  1000 clSetKernelArg x 18 + clEnqueueNDRangeKernel, one clFinish (the
 *            library without replay);
 *   sync     one command buffer of 1000 launches, a kernel object each, each launch
 *            waiting on the one before through a sync point (the library's recording),
 *            enqueued and finished;
 *   nosync   the same without sync points (in-order queue: the recorded order);
 *   x10      sync, the command buffer enqueued 10 times before one clFinish;
 *   order    whether the nosync buffer kept the recorded order: 1000 launches of a
 *            kernel alternating x = 3x and x = x + 1 (uint), checked on the host.
 * Build: gcc -O2 h200-probe-cmdbuf.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { N = 1000, ROUNDS = 5 };

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static const char *src =
    "__kernel void k(__global float *a, ulong ao, __global float *d, ulong dof, int n0, int n1, int n2,\n"
    "                int nr, ulong s0, ulong s1, ulong s2, ulong s3, ulong t0, ulong t1, ulong t2, ulong t3,\n"
    "                float eps, int pad) {\n"
    "  const int i = get_global_id(0);\n"
    "  if (i < n0) d[dof / 4 + i] = a[ao / 4 + i] * eps;\n"
    "}\n"
    "__kernel void order_step(__global uint *x, int op) {\n"
    "  const int i = get_global_id(0);\n"
    "  x[i] = op ? x[i] + 1u : x[i] * 3u;\n"
    "}\n";

static void set_args(cl_kernel k, cl_mem a, cl_mem d) {
    cl_ulong z = 0, s = 4;
    cl_int n = 64, one = 1;
    float eps = 1.0f;
    clSetKernelArg(k, 0, sizeof a, &a);
    clSetKernelArg(k, 1, sizeof z, &z);
    clSetKernelArg(k, 2, sizeof d, &d);
    clSetKernelArg(k, 3, sizeof z, &z);
    clSetKernelArg(k, 4, sizeof n, &n);
    for (int i = 5; i < 8; i++) clSetKernelArg(k, i, sizeof one, &one);
    for (int i = 8; i < 16; i++) clSetKernelArg(k, i, sizeof s, &s);
    clSetKernelArg(k, 16, sizeof eps, &eps);
    clSetKernelArg(k, 17, sizeof one, &one);
}

static clCreateCommandBufferKHR_fn cb_create;
static clFinalizeCommandBufferKHR_fn cb_finalize;
static clEnqueueCommandBufferKHR_fn cb_enqueue;
static clCommandNDRangeKernelKHR_fn cb_ndrange;
static clReleaseCommandBufferKHR_fn cb_release;

static cl_command_buffer_khr record(cl_command_queue q, cl_kernel *ks, int sync) {
    cl_int err;
    const size_t g = 64, l = 64;
    cl_command_buffer_khr cb = cb_create(1, &q, NULL, &err);
    if (err != CL_SUCCESS) return NULL;
    cl_sync_point_khr last = 0;
    for (int i = 0; i < N; i++) {
        err = cb_ndrange(cb, NULL, NULL, ks[i], 1, NULL, &g, &l, sync && i ? 1 : 0, sync && i ? &last : NULL,
                         sync ? &last : NULL, NULL);
        if (err != CL_SUCCESS) {
            printf("  clCommandNDRangeKernelKHR: %d\n", err);
            return NULL;
        }
    }
    if ((err = cb_finalize(cb)) != CL_SUCCESS) printf("  clFinalizeCommandBufferKHR: %d\n", err);
    return cb;
}

static double replay(cl_command_queue q, cl_command_buffer_khr cb, int times) {
    double best = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        clFinish(q);
        const double t0 = now_us();
        for (int i = 0; i < times; i++) cb_enqueue(0, NULL, cb, 0, NULL, NULL);
        clFinish(q);
        const double t = (now_us() - t0) / (N * times);
        if (t < best) best = t;
    }
    return best;
}

int main(void) {
    cl_platform_id plats[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint i = 0; i < np; i++) {
        cl_device_id dev;
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS || nd == 0) continue;
        char name[256], drv[64];
        clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
        clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
        /* what the device says, and what each lookup finds (call 25 found none on NVIDIA) */
        char ext[8192] = "";
        clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
        char pext[8192] = "";
        clGetPlatformInfo(plats[i], CL_PLATFORM_EXTENSIONS, sizeof pext - 1, pext, NULL);
        char dver[128] = "";
        clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof dver, dver, NULL);
        printf("%s (%s): device lists cl_khr_command_buffer: %s; platform lists it: %s\n", name, dver,
               strstr(ext, "cl_khr_command_buffer") ? "yes" : "no", strstr(pext, "cl_khr_command_buffer") ? "yes" : "no");
        for (const char *e = strstr(ext, "command"); e; e = strstr(e + 1, "command")) {
            const char *b0 = e;
            while (b0 > ext && b0[-1] != ' ') b0--;
            const char *e0 = strchr(e, ' ');
            printf("  extension: %.*s\n", (int)(e0 ? e0 - b0 : (long)strlen(b0)), b0);
            if (!e0) break;
            e = e0;
        }
        printf("  ForPlatform clCreateCommandBufferKHR: %p; clGetExtensionFunctionAddress: %p\n",
               clGetExtensionFunctionAddressForPlatform(plats[i], "clCreateCommandBufferKHR"),
               clGetExtensionFunctionAddress("clCreateCommandBufferKHR"));
        cb_create = clGetExtensionFunctionAddressForPlatform(plats[i], "clCreateCommandBufferKHR");
        cb_finalize = clGetExtensionFunctionAddressForPlatform(plats[i], "clFinalizeCommandBufferKHR");
        cb_enqueue = clGetExtensionFunctionAddressForPlatform(plats[i], "clEnqueueCommandBufferKHR");
        cb_ndrange = clGetExtensionFunctionAddressForPlatform(plats[i], "clCommandNDRangeKernelKHR");
        cb_release = clGetExtensionFunctionAddressForPlatform(plats[i], "clReleaseCommandBufferKHR");
        if (!cb_create || !cb_finalize || !cb_enqueue || !cb_ndrange || !cb_release) {
            printf("%s: no cl_khr_command_buffer\n", name);
            continue;
        }
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
        cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
            printf("%s: build failed\n", name);
            continue;
        }
        cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        static cl_kernel ks[N];
        for (int j = 0; j < N; j++) {
            ks[j] = clCreateKernel(p, "k", &err);
            set_args(ks[j], j & 1 ? b : a, j & 1 ? a : b);
        }
        /* the library without replay: one kernel object, all arguments set per launch */
        double best_enq = 1e30;
        const size_t g = 64, l = 64;
        for (int r = 0; r < ROUNDS + 1; r++) {
            clFinish(q);
            const double t0 = now_us();
            for (int j = 0; j < N; j++) {
                set_args(ks[0], j & 1 ? b : a, j & 1 ? a : b);
                clEnqueueNDRangeKernel(q, ks[0], 1, NULL, &g, &l, 0, NULL, NULL);
            }
            clFinish(q);
            const double t = (now_us() - t0) / N;
            if (r > 0 && t < best_enq) best_enq = t;
        }
        set_args(ks[0], a, b);
        double t_rec = now_us();
        cl_command_buffer_khr sync = record(q, ks, 1);
        t_rec = (now_us() - t_rec) / N;
        cl_command_buffer_khr nosync = record(q, ks, 0);
        printf("%s (driver %s), per launch of %d, best of %d:\n", name, drv, N, ROUNDS);
        printf("  enqueue %.2f us\n", best_enq);
        printf("  record  %.2f us (once)\n", t_rec);
        if (sync) {
            replay(q, sync, 1); /* warm-up */
            printf("  sync    %.2f us\n", replay(q, sync, 1));
            printf("  x10     %.2f us\n", replay(q, sync, 10));
            cb_release(sync);
        }
        if (nosync) {
            replay(q, nosync, 1);
            printf("  nosync  %.2f us\n", replay(q, nosync, 1));
            cb_release(nosync);
        }
        /* order: the order_step kernel, a kernel object per launch, no sync points */
        static cl_kernel st[N];
        cl_uint x0[64], want[64], got[64];
        for (int e = 0; e < 64; e++) want[e] = x0[e] = (cl_uint)e * 7u + 1u;
        clEnqueueWriteBuffer(q, a, CL_TRUE, 0, sizeof x0, x0, 0, NULL, NULL);
        for (int j = 0; j < N; j++) {
            const cl_int op = j & 1;
            st[j] = clCreateKernel(p, "order_step", &err);
            clSetKernelArg(st[j], 0, sizeof a, &a);
            clSetKernelArg(st[j], 1, sizeof op, &op);
            for (int e = 0; e < 64; e++) want[e] = op ? want[e] + 1u : want[e] * 3u;
        }
        cl_command_buffer_khr ord = record(q, st, 0);
        if (ord) {
            cb_enqueue(0, NULL, ord, 0, NULL, NULL);
            clEnqueueReadBuffer(q, a, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
            printf("  order   %s\n", memcmp(got, want, sizeof got) == 0 ? "kept (nosync)" : "NOT kept (nosync)");
            cb_release(ord);
        }
        for (int j = 0; j < N; j++) clReleaseKernel(st[j]);
        for (int j = 0; j < N; j++) clReleaseKernel(ks[j]);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseProgram(p);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    }
    return 0;
}
