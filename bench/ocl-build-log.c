/* Builds an OpenCL source file on the first NVIDIA device and prints the build status and
 * the whole build log (the library's error message keeps 1 KB of it); with a third
 * argument, writes the program binary (PTX on NVIDIA) there.
 * cc -O1 bench/ocl-build-log.c -lOpenCL -o build-log && ./build-log SRC.cl "OPTIONS" [OUT.ptx] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *src = calloc(1, (size_t)n + 1);
    if (fread(src, 1, (size_t)n, f) != (size_t)n) return 2;
    fclose(f);
    cl_platform_id plats[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint p = 0; p < np; p++) {
        char name[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (!strstr(name, "NVIDIA")) continue;
        cl_device_id dev;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) continue;
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        const char *s = src;
        cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
        err = clBuildProgram(prog, 1, &dev, argv[2], NULL, NULL);
        printf("clBuildProgram: %d\n", err);
        size_t len = 0;
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = calloc(1, len + 1);
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        /* the driver warns once per kernel about noinline: only the rest is news */
        for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
            if (!strstr(line, "overriding noinline")) printf("%s\n", line);
        if (err == CL_SUCCESS && argc > 3) {
            size_t bsz = 0;
            clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bsz, &bsz, NULL);
            unsigned char *bin = malloc(bsz);
            clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
            FILE *o = fopen(argv[3], "wb");
            if (o) fwrite(bin, 1, bsz, o), fclose(o);
        }
        return err == CL_SUCCESS ? 0 : 1;
    }
    printf("no NVIDIA device\n");
    return 1;
}
