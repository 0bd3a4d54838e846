/* What does one small kernel launch cost on this OpenCL driver, with
 * nothing of ctensor in the way? The 1000-node graph (CHAIN in ct-ops perf) is 1000
 * dependent launches on one in-order queue; this measures, per launch:
 *   setarg   one clSetKernelArg of an int (the library sets ~18 a node);
 *   enqueue  the host's clEnqueueNDRangeKernel alone (the queue then drained);
 *   chain    1000 launches of a kernel with 18 arguments (all set each time) and one
 *            clFinish, as the library does: wall time / 1000;
 *   bare     the same with no argument set between launches;
 *   ooo      the same on an out-of-order queue (no dependency between launches: the
 *            floor the driver's launch rate sets, not something a graph may use).
 * Each figure is the best of 5 rounds. Build: gcc -O2 bench/ocl-launch.c -lOpenCL -o ocl-launch */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { N = 1000, ROUNDS = 5, NARGS = 18 };

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A kernel shaped like ct_rms_norm_f32's launch (two buffers, offsets, 14 scalars). */
static const char *src =
    "__kernel void k(__global float *a, ulong ao, __global float *d, ulong dof, int n0, int n1, int n2,\n"
    "                int nr, ulong s0, ulong s1, ulong s2, ulong s3, ulong t0, ulong t1, ulong t2, ulong t3,\n"
    "                float eps, int pad) {\n"
    "  const int i = get_global_id(0);\n"
    "  if (i < n0) d[dof / 4 + i] = a[ao / 4 + i] * eps;\n"
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

/* Best-of-ROUNDS microseconds per launch; *enq_us gets the host's share (enqueue calls only). */
static double chain(cl_command_queue q, cl_kernel k, cl_mem a, cl_mem b, int with_args, double *enq_us) {
    const size_t g = 64, l = 64;
    double best = 1e30, best_enq = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        clFinish(q);
        const double t0 = now_us();
        double enq = 0;
        for (int i = 0; i < N; i++) {
            const double e0 = now_us();
            if (with_args) set_args(k, i & 1 ? b : a, i & 1 ? a : b);
            clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL);
            enq += now_us() - e0;
        }
        clFinish(q);
        const double t = (now_us() - t0) / N;
        if (t < best) best = t;
        if (enq / N < best_enq) best_enq = enq / N;
    }
    if (enq_us) *enq_us = best_enq;
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
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
        cl_command_queue qo = clCreateCommandQueue(ctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
        cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
            printf("%s: build failed\n", name);
            continue;
        }
        cl_kernel k = clCreateKernel(p, "k", &err);
        cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
        set_args(k, a, b);
        chain(q, k, a, b, 1, NULL); /* warm-up */

        double best_set = 1e30;
        for (int r = 0; r < ROUNDS; r++) {
            const cl_int v = r;
            const double t0 = now_us();
            for (int i = 0; i < 100000; i++) clSetKernelArg(k, 4 + (i & 3), sizeof v, &v);
            const double t = (now_us() - t0) / 100000;
            if (t < best_set) best_set = t;
        }
        set_args(k, a, b);
        double enq_args, enq_bare, enq_ooo;
        const double t_args = chain(q, k, a, b, 1, &enq_args);
        const double t_bare = chain(q, k, a, b, 0, &enq_bare);
        const double t_ooo = chain(qo, k, a, b, 0, &enq_ooo);
        printf("%s (driver %s), per launch, best of %d rounds of %d:\n", name, drv, ROUNDS, N);
        printf("  setarg  %.3f us per clSetKernelArg (x%d = %.2f us a launch)\n", best_set, NARGS, best_set * NARGS);
        printf("  chain   %.2f us per launch (host in set+enqueue: %.2f us)\n", t_args, enq_args);
        printf("  bare    %.2f us per launch (host in enqueue: %.2f us)\n", t_bare, enq_bare);
        printf("  ooo     %.2f us per launch (host in enqueue: %.2f us)\n", t_ooo, enq_ooo);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseKernel(k);
        clReleaseProgram(p);
        clReleaseCommandQueue(qo);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    }
    return 0;
}
