/* Runs a probe kernel ct_probe(in, out, __local pad, __local l) as the library's cp.async
 * probe does (one work-group of 64, `in` 320 words of a known pattern), on the first
 * NVIDIA device, and prints every call's status and the first words of `out`: to see
 * which form of a probe faults, each in a process of its own.
 * cc -O1 h200-probe-run.c -lOpenCL -o probe-run && ./probe-run PROBE.cl */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 64, WORDS = 5 * N };

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    static char src[1 << 16];
    size_t n = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    src[n] = 0;
    cl_platform_id plats[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint p = 0; p < np; p++) {
        char name[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
        cl_device_id dev;
        if (!strstr(name, "NVIDIA") || clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) continue;
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
        const char *s = src;
        cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
        err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
        printf("build %d\n", err);
        if (err != CL_SUCCESS) return 1;
        cl_kernel k = clCreateKernel(prog, "ct_probe", &err);
        uint32_t in[WORDS], out[WORDS];
        for (uint32_t i = 0; i < WORDS; i++) in[i] = 0x9E3779B9u * (i + 1), out[i] = 0xdeadbeefu;
        cl_mem mi = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in, in, &err);
        cl_mem mo = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof out, out, &err);
        clSetKernelArg(k, 0, sizeof mi, &mi);
        clSetKernelArg(k, 1, sizeof mo, &mo);
        clSetKernelArg(k, 2, N * sizeof(uint32_t), NULL);
        clSetKernelArg(k, 3, WORDS * sizeof(uint32_t), NULL);
        const size_t global = N, local = N;
        printf("enqueue %d\n", clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
        printf("finish %d\n", clFinish(q));
        printf("read %d\n", clEnqueueReadBuffer(q, mo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
        int bad = 0;
        for (uint32_t i = 0; i < N; i++) {
            const uint32_t o = i ^ 1u;
            bad += out[i] != in[o];
            for (uint32_t j = 0; j < 4; j++) bad += out[N + 4 * i + j] != in[N + 4 * o + j];
        }
        printf("probe check: %d words differ\n", bad);
        for (int r = 0; r < 5; r++) {
            printf("out[%3d..]:", r * N);
            for (int i = 0; i < 4; i++) printf(" %08x", out[r * N + i]);
            printf("   in: %08x %08x\n", in[r * N + 1], in[r * N]);
        }
        err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
        cl_program again = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
        printf("a second build after the run: %d\n", clBuildProgram(again, 1, &dev, "", NULL, NULL));
        return 0;
    }
    printf("no NVIDIA device\n");
    return 1;
}
