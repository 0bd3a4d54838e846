/* Probe (session 6): the library's 1000-node graph spends 7.7 us a node in the host
 * (call 26), the driver's bare enqueue of a trivial kernel 4.4-4.6 (calls 19, 25). Which
 * part of a real node's launch costs the rest? Host time per launch (18 clSetKernelArg +
 * clEnqueueNDRangeKernel, 1000 dependent launches on an in-order queue, best of 5):
 *   1d        h200-probe-launch.c's kernel: 1-D, 64 work-items;
 *   3d        the same kernel launched as RMS_NORM's 64-float rows are: 3-D, local (32, 8, 1);
 *   3d+local  and a __local argument (1 KiB, set each launch) that the kernel uses with a barrier;
 *   3d+static the same kernel with a fixed __local array instead of the argument;
 *   3d+local, args once  only the two buffer arguments set each launch.
 * Build: gcc -O2 h200-probe-launch-shape.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { N = 1000, ROUNDS = 5 };

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

#define ARGS                                                                                              \
    "__global float *a, ulong ao, __global float *d, ulong dof, int n0, int n1, int n2, int nr, ulong s0, " \
    "ulong s1, ulong s2, ulong s3, ulong t0, ulong t1, ulong t2, ulong t3, float eps, int pad"
static const char *src =
    "__kernel void k(" ARGS ") {\n"
    "  const int i = get_global_id(0);\n"
    "  if (i < n0) d[dof / 4 + i] = a[ao / 4 + i] * eps;\n"
    "}\n"
    "__kernel void kl(" ARGS ", __local float *l) {\n"
    "  const int i = get_local_id(0) + 32 * get_local_id(1);\n"
    "  l[i] = a[ao / 4 + (i & 63)] * eps;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (i < n0) d[dof / 4 + i] = l[i ^ 1];\n"
    "}\n"
    "__kernel void ks(" ARGS ") {\n"
    "  __local float l[256];\n"
    "  const int i = get_local_id(0) + 32 * get_local_id(1);\n"
    "  l[i] = a[ao / 4 + (i & 63)] * eps;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (i < n0) d[dof / 4 + i] = l[i ^ 1];\n"
    "}\n";

static void set_args(cl_kernel k, cl_mem a, cl_mem d, int local_arg, int all) {
    cl_ulong z = 0, s = 4;
    cl_int n = 64, one = 1;
    float eps = 1.0f;
    clSetKernelArg(k, 0, sizeof a, &a);
    clSetKernelArg(k, 2, sizeof d, &d);
    if (!all) return;
    clSetKernelArg(k, 1, sizeof z, &z);
    clSetKernelArg(k, 3, sizeof z, &z);
    clSetKernelArg(k, 4, sizeof n, &n);
    for (int i = 5; i < 8; i++) clSetKernelArg(k, i, sizeof one, &one);
    for (int i = 8; i < 16; i++) clSetKernelArg(k, i, sizeof s, &s);
    clSetKernelArg(k, 16, sizeof eps, &eps);
    clSetKernelArg(k, 17, sizeof one, &one);
    if (local_arg) clSetKernelArg(k, 18, 256 * sizeof(float), NULL);
}

static double chain(cl_command_queue q, cl_kernel k, cl_mem a, cl_mem b, int dims, int local_arg, int all) {
    const size_t g1 = 64, l1 = 64, g3[3] = {32, 8, 1}, l3[3] = {32, 8, 1};
    double best = 1e30;
    set_args(k, a, b, local_arg, 1);
    for (int r = 0; r < ROUNDS + 1; r++) {
        clFinish(q);
        const double t0 = now_us();
        for (int i = 0; i < N; i++) {
            set_args(k, i & 1 ? b : a, i & 1 ? a : b, local_arg, all);
            if (dims == 1) clEnqueueNDRangeKernel(q, k, 1, NULL, &g1, &l1, 0, NULL, NULL);
            else clEnqueueNDRangeKernel(q, k, 3, NULL, g3, l3, 0, NULL, NULL);
        }
        clFinish(q);
        const double t = (now_us() - t0) / N;
        if (r > 0 && t < best) best = t;
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
        char name[256];
        clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
        cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
            printf("%s: build failed\n", name);
            continue;
        }
        cl_kernel k = clCreateKernel(p, "k", &err), kl = clCreateKernel(p, "kl", &err),
                  ks = clCreateKernel(p, "ks", &err);
        cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        printf("%s, host us per launch (1000 dependent launches, best of %d):\n", name, ROUNDS);
        printf("  1d                    %.2f\n", chain(q, k, a, b, 1, 0, 1));
        printf("  3d                    %.2f\n", chain(q, k, a, b, 3, 0, 1));
        printf("  3d+local              %.2f\n", chain(q, kl, a, b, 3, 1, 1));
        printf("  3d+static             %.2f\n", chain(q, ks, a, b, 3, 0, 1));
        printf("  3d+local, args once   %.2f\n", chain(q, kl, a, b, 3, 1, 0));
        printf("  1d (again)            %.2f\n", chain(q, k, a, b, 1, 0, 1));
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseKernel(k);
        clReleaseKernel(kl);
        clReleaseKernel(ks);
        clReleaseProgram(p);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    }
    return 0;
}
