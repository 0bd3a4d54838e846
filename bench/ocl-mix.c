/* The device's bandwidth by read/write mix, with nothing of ctensor in
 * the way. Row ops move bytes in fixed ratios (GET_ROWS F16 -> F32 reads 2 bytes for every
 * 4 it writes, Q4_0 -> F32 0.56 for 4, SET_ROWS F32 -> Q8_0 4 for 1.06), and ct-ops perf
 * rates them against a copy (1 : 1). Each kernel here streams a 1 GiB source (or
 * destination) with 16-byte accesses, one vector per work-item, and reports (bytes read +
 * written) / time, best of 10 launches timed by events:
 *   read     float4 loads, one float per 64 work-items written (a sum, so nothing is elided)
 *   write    uint4 stores of a constant
 *   copy     uint4 -> uint4                       (1 : 1)
 *   r1w2     ushort4 -> uint4 (zero-extended)     (1 : 2, as F16 -> F32)
 *   r2w1     uint4 -> ushort4 (the high halves)   (2 : 1, as F32 -> F16)
 *   r1w4     uchar4 -> uint4                      (1 : 4, as Q8_0 -> F32 roughly)
 *   r4w1     uint4 -> uchar4                      (4 : 1, as F32 -> Q8_0 roughly)
 *   clcopy   clEnqueueCopyBuffer                  (1 : 1, the driver's copy)
 * Build: gcc -O2 bench/ocl-mix.c -lOpenCL -o ocl-mix */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

static const char *src =
    "__kernel void rd(__global const float4 *a, __global float *o) {\n"
    "  const size_t i = get_global_id(0); const float4 v = a[i];\n"
    "  const float s = v.x + v.y + v.z + v.w;\n"
    "  if (s == 1234.5f) o[i / 64] = s; }\n"
    "__kernel void wr(__global const uint4 *a, __global uint4 *o) { o[get_global_id(0)] = (uint4)(1u, 2u, 3u, 4u); }\n"
    "__kernel void cp(__global const uint4 *a, __global uint4 *o) { o[get_global_id(0)] = a[get_global_id(0)]; }\n"
    "__kernel void r1w2(__global const ushort4 *a, __global uint4 *o) {\n"
    "  o[get_global_id(0)] = convert_uint4(a[get_global_id(0)]); }\n"
    "__kernel void r2w1(__global const uint4 *a, __global ushort4 *o) {\n"
    "  o[get_global_id(0)] = convert_ushort4(a[get_global_id(0)] >> 16); }\n"
    "__kernel void r1w4(__global const uchar4 *a, __global uint4 *o) {\n"
    "  o[get_global_id(0)] = convert_uint4(a[get_global_id(0)]); }\n"
    "__kernel void r4w1(__global const uint4 *a, __global uchar4 *o) {\n"
    "  o[get_global_id(0)] = convert_uchar4(a[get_global_id(0)] >> 24); }\n";

typedef struct {
    const char *name;
    int rbytes, wbytes; /* per work-item */
} kcase;

static double best_ms(cl_command_queue q, cl_kernel k, size_t n) {
    double best = 1e30;
    const size_t l = 256;
    for (int r = 0; r < 11; r++) {
        cl_event e;
        clEnqueueNDRangeKernel(q, k, 1, NULL, &n, &l, 0, NULL, &e);
        clWaitForEvents(1, &e);
        cl_ulong t0, t1;
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        clReleaseEvent(e);
        const double ms = (double)(t1 - t0) / 1e6;
        if (r > 0 && ms < best) best = ms; /* the first is a warm-up */
    }
    return best;
}

int main(void) {
    cl_platform_id plats[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint pi = 0; pi < np; pi++) {
        cl_device_id dev;
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS || nd == 0) continue;
        char name[256], drv[64];
        clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
        clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
        cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
            printf("%s: build failed\n", name);
            continue;
        }
        const size_t big = (size_t)1 << 30;
        cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, NULL, &err);
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, NULL, &err);
        const cl_uint zero = 0;
        clEnqueueFillBuffer(q, a, &zero, sizeof zero, 0, big, 0, NULL, NULL);
        clEnqueueFillBuffer(q, b, &zero, sizeof zero, 0, big, 0, NULL, NULL);
        clFinish(q);
        printf("%s (driver %s): GB/s = (bytes read + written) / kernel time, 1 GiB streams\n", name, drv);
        static const kcase cases[] = {{"rd", 16, 0},  {"wr", 0, 16},   {"cp", 16, 16}, {"r1w2", 8, 16},
                                      {"r2w1", 16, 8}, {"r1w4", 4, 16}, {"r4w1", 16, 4}};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            cl_kernel k = clCreateKernel(p, cases[c].name, &err);
            clSetKernelArg(k, 0, sizeof a, &a);
            clSetKernelArg(k, 1, sizeof b, &b);
            const int big_side = cases[c].rbytes > cases[c].wbytes ? cases[c].rbytes : cases[c].wbytes;
            const size_t n = big / (size_t)big_side;
            const double ms = best_ms(q, k, n);
            const double bytes = (double)n * (cases[c].rbytes + cases[c].wbytes);
            printf("  %-6s r:w %2d:%-2d %8.3f ms %7.0f GB/s (read %5.0f, write %5.0f)\n", cases[c].name,
                   cases[c].rbytes, cases[c].wbytes, ms, bytes / ms / 1e6, n * (double)cases[c].rbytes / ms / 1e6,
                   n * (double)cases[c].wbytes / ms / 1e6);
            clReleaseKernel(k);
        }
        double best = 1e30;
        for (int r = 0; r < 11; r++) {
            cl_event e;
            clEnqueueCopyBuffer(q, a, b, 0, 0, big, 0, NULL, &e);
            clWaitForEvents(1, &e);
            cl_ulong t0, t1;
            clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
            clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
            clReleaseEvent(e);
            if (r > 0 && (t1 - t0) / 1e6 < best) best = (t1 - t0) / 1e6;
        }
        printf("  clcopy r:w  1:1  %8.3f ms %7.0f GB/s\n", best, 2.0 * big / best / 1e6);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        clReleaseProgram(p);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    }
    return 0;
}
