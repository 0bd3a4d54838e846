/* Probe (session 3): does NVIDIA's OpenCL expose cl_khr_integer_dot_product, and does
 * its compiler take inline PTX dp4a? Build: gcc h200-probe-intdot.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

static const char *src_khr =
    "#pragma OPENCL EXTENSION cl_khr_integer_dot_product : enable\n"
    "__kernel void k(__global int *o, uint a, uint b) { o[0] = dot_4x8packed_us_int(a, b); }\n";
static const char *src_ptx =
    "__kernel void k(__global int *o, uint a, uint b) { int r; int c = 0;\n"
    " asm(\"dp4a.u32.s32 %0, %1, %2, %3;\" : \"=r\"(r) : \"r\"(a), \"r\"(b), \"r\"(c)); o[0] = r; }\n";

static void try_src(cl_context ctx, cl_device_id d, cl_command_queue q, const char *name, const char *src) {
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    err = clBuildProgram(p, 1, &d, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        printf("  %s: build failed %d: %.600s\n", name, err, log);
        clReleaseProgram(p);
        return;
    }
    cl_kernel k = clCreateKernel(p, "k", &err);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
    cl_uint a = 0x0f0a0301u, b = 0x80ff7f02u; /* u8 {1,3,10,15} x s8 {2,127,-1,-128} */
    clSetKernelArg(k, 0, sizeof m, &m);
    clSetKernelArg(k, 1, 4, &a);
    clSetKernelArg(k, 2, 4, &b);
    size_t g = 1;
    err = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &g, 0, NULL, NULL);
    int r = 0;
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, 4, &r, 0, NULL, NULL);
    printf("  %s: enqueue %d result %d (expect %d)\n", name, err, r, 1 * 2 + 3 * 127 + 10 * -1 + 15 * -128);
    clReleaseMemObject(m);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

int main(void) {
    cl_platform_id plats[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint i = 0; i < np; i++) {
        cl_device_id devs[8];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 8, devs, &nd) != CL_SUCCESS) continue;
        for (cl_uint j = 0; j < nd; j++) {
            char name[256], ext[16384], ver[256];
            clGetDeviceInfo(devs[j], CL_DEVICE_NAME, sizeof name, name, NULL);
            clGetDeviceInfo(devs[j], CL_DEVICE_VERSION, sizeof ver, ver, NULL);
            clGetDeviceInfo(devs[j], CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
            printf("%s | %s\n  extensions: %s\n", name, ver, ext);
            cl_int err;
            cl_context ctx = clCreateContext(NULL, 1, &devs[j], NULL, NULL, &err);
            cl_command_queue q = clCreateCommandQueueWithProperties(ctx, devs[j], NULL, &err);
            try_src(ctx, devs[j], q, "khr dot_4x8packed_us_int", src_khr);
            try_src(ctx, devs[j], q, "inline PTX dp4a", src_ptx);
            clReleaseCommandQueue(q);
            clReleaseContext(ctx);
        }
    }
    return 0;
}
