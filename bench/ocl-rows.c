/* Why F16 -> F32 rows (GET_ROWS F16, CPY F16 -> F32) on the H200 sat at 68-72% of the
 * copy while the plain 1 : 2 mix of bench/ocl-mix.c (ushort4 -> uint4, zero-extended) ran at
 * 97%. Each kernel below converts 4-half units into 4-float units the way one part of the
 * library's ct_rows4/ct_rows8 does, and the table shows which part costs the rate:
 *   zx*   zero extension (the mix probe's r1w2)           cvt*  the hardware conversion with the
 *   mul*  exponent bits times 2^112 (an FMA-pipe multiply)      library's NaN rule (ct_half_to_float)
 *   ihf4  the library's integer path (no conversion unit, no subnormal operand), 4 units
 *   *1    one unit a work-item, 256 a group              *4    4 units a work-item, 256 a group
 *   *8    8 units a work-item, 128 a group (as ct_rows8)  *8i   the same, each group's row
 *                                                             through an index (as GET_ROWS)
 *   f2h4  F32 -> F16 (the library's rule), 4 units        cp4   uint4 copy, 4 units
 *   zb4   uchar4 -> uint4 zero-extended, 4 units (1 : 4, as dequantizing rows)
 *   i2f4  int8 -> float by the conversion unit, times 0.5   mag4  the same by a magic-number add
 * Random source bits (NaN, infinities and subnormals among them); two sizes: 512 MiB of
 * halves into 1 GiB, and 32 MiB into 64 MiB (a sixteenth) (CPY of 4096 x 4096) rotating over 8 places so
 * that no launch finds its source in the 60 MB L2. Median of 15 launches timed by events,
 * GB/s = (bytes read + written) / time, and the fraction of clEnqueueCopyBuffer's 1 GiB rate.
 * Every conversion kernel's output is checked against a host model of the library's rule.
 * Build: gcc -O2 bench/ocl-rows.c -lOpenCL -lm -o ocl-rows; ./ocl-rows [MIB [any]] runs on the
 * first GPU device (MIB: the large side, default 1024; "any": any device type, e.g. PoCL). */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "float h2f(ushort h) {\n"
    "  const uint em = h & 0x7FFFu;\n"
    "  const uint nan = ((uint)(h & 0x8000u) << 16) | 0x7FC00000u | (em << 13);\n"
    "  return em > 0x7C00u ? as_float(nan) : vload_half(0, (const __private half *)&h); }\n"
    "float h2f_mul(ushort h) {\n"
    "  const uint em = h & 0x7FFFu, s = (uint)(h & 0x8000u) << 16;\n"
    "  const uint fin = as_uint(as_float(em << 13) * 0x1p112f);\n"
    "  const uint spec = 0x7F800000u | (em << 13) | (em > 0x7C00u ? 0x400000u : 0u);\n"
    "  return as_float(s | (em >= 0x7C00u ? spec : fin)); }\n"
    "float h2f_int(ushort h) {\n"
    "  const uint em = h & 0x7FFFu, o = em << 13;\n"
    "  const uint special = o | 0x7F800000u | (em > 0x7C00u ? 0x400000u : 0u);\n"
    "  const uint normal = o + (112u << 23), sub = as_uint(as_float(o + (113u << 23)) - 0x1p-14f);\n"
    "  return as_float(((uint)(h & 0x8000u) << 16) | (em >= 0x7C00u ? special : em >= 0x0400u ? normal : sub)); }\n"
    "ushort f2h(float f) {\n"
    "  const uint x = as_uint(f); ushort h; vstore_half_rte(f, 0, (__private half *)&h);\n"
    "  return (x & 0x7FFFFFFFu) > 0x7F800000u ? (ushort)(((x >> 16) & 0x8000u) | 0x7E00u) : h; }\n"
    "uint4 zx(ushort4 h) { return convert_uint4(h); }\n"
    "uint4 cvt(ushort4 h) { return (uint4)(as_uint(h2f(h.s0)), as_uint(h2f(h.s1)), as_uint(h2f(h.s2)), as_uint(h2f(h.s3))); }\n"
    "uint4 mul(ushort4 h) { return (uint4)(as_uint(h2f_mul(h.s0)), as_uint(h2f_mul(h.s1)), as_uint(h2f_mul(h.s2)),\n"
    "                                    as_uint(h2f_mul(h.s3))); }\n"
    "uint4 hint(ushort4 h) { return (uint4)(as_uint(h2f_int(h.s0)), as_uint(h2f_int(h.s1)), as_uint(h2f_int(h.s2)),\n"
    "                                     as_uint(h2f_int(h.s3))); }\n"
    "ushort4 tohalf4(uint4 v) { return (ushort4)(f2h(as_float(v.s0)), f2h(as_float(v.s1)), f2h(as_float(v.s2)), f2h(as_float(v.s3))); }\n"
    "uint4 same(uint4 v) { return v; }\n"
    "uint4 zb(uchar4 b) { return convert_uint4(b); }\n"
    "uint4 i2f(uchar4 b) { return as_uint4(convert_float4(convert_int4(as_char4(b))) * 0.5f); }\n"
    "float mag1(uint b) { return (as_float(0x4B400000u + (uint)(int)as_char((uchar)b)) - 12582912.0f) * 0.5f; }\n"
    "uint4 mag(uchar4 b) { return as_uint4((float4)(mag1(b.s0), mag1(b.s1), mag1(b.s2), mag1(b.s3))); }\n"
    /* N units a work-item, nth apart, all loads before the stores; base by group (or index) */
    "#define LD(k, N) if ((k) < N) v##k = a[base + (k) * nth];\n"
    "#define ST(k, N, F) if ((k) < N) o[obase + (k) * nth] = F(v##k);\n"
    "#define KX(NAME, N, TI, TO, F, IDX)                                                  \\\n"
    "__kernel void NAME(__global const TI *a, __global TO *o, __global const int *idx) {    \\\n"
    "  const size_t nth = get_local_size(0), g = get_group_id(0), lid = get_local_id(0);   \\\n"
    "  const size_t obase = g * nth * N + lid;                                               \\\n"
    "  const size_t base = (IDX ? (size_t)idx[g] : g) * nth * N + lid;                       \\\n"
    "  TI v0, v1, v2, v3, v4, v5, v6, v7;                                                    \\\n"
    "  LD(0,N) LD(1,N) LD(2,N) LD(3,N) LD(4,N) LD(5,N) LD(6,N) LD(7,N)                                     \\\n"
    "  ST(0,N,F) ST(1,N,F) ST(2,N,F) ST(3,N,F) ST(4,N,F) ST(5,N,F) ST(6,N,F) ST(7,N,F) }\n"
    "KX(zx1, 1, ushort4, uint4, zx, 0)\n"
    "KX(cvt1, 1, ushort4, uint4, cvt, 0)\n"
    "KX(mul1, 1, ushort4, uint4, mul, 0)\n"
    "KX(zx4, 4, ushort4, uint4, zx, 0)\n"
    "KX(cvt4, 4, ushort4, uint4, cvt, 0)\n"
    "KX(mul4, 4, ushort4, uint4, mul, 0)\n"
    "KX(ihf4, 4, ushort4, uint4, hint, 0)\n"
    "KX(zx8, 8, ushort4, uint4, zx, 0)\n"
    "KX(cvt8, 8, ushort4, uint4, cvt, 0)\n"
    "KX(mul8, 8, ushort4, uint4, mul, 0)\n"
    "KX(zx8i, 8, ushort4, uint4, zx, 1)\n"
    "KX(cvt8i, 8, ushort4, uint4, cvt, 1)\n"
    "KX(mul8i, 8, ushort4, uint4, mul, 1)\n"
    "KX(f2h4, 4, uint4, ushort4, tohalf4, 0)\n"
    "KX(cp4, 4, uint4, uint4, same, 0)\n"
    "KX(zb4, 4, uchar4, uint4, zb, 0)\n"
    "KX(i2f4, 4, uchar4, uint4, i2f, 0)\n"
    "KX(mag4, 4, uchar4, uint4, mag, 0)\n";

typedef struct {
    const char *name;
    int n, wg, rbytes, wbytes; /* units a work-item, group size, bytes a unit */
    int conv;                  /* output check: 0 none (zx, cp, zb), 1 h2f, 2 f2h, 3 int8 * 0.5 */
    int indexed;
} kcase;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* The library's F16 -> F32 (ct_half_to_float) and F32 -> F16 (ct_float_to_half) on the host. */
static uint32_t h2f_model(uint16_t h) {
    const uint32_t em = h & 0x7FFFu, s = (uint32_t)(h & 0x8000u) << 16;
    if (em > 0x7C00u) return s | 0x7FC00000u | (em << 13);
    if (em == 0x7C00u) return s | 0x7F800000u;
    float f = ldexpf((float)em, -24);
    if (em >= 0x400u) f = ldexpf(1.0f + (float)(em & 0x3FFu) / 1024.0f, (int)(em >> 10) - 15);
    uint32_t u;
    memcpy(&u, &f, 4);
    return s | u;
}
static uint16_t f2h_model(uint32_t x) {
    const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);
    if (ax >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);
    float f;
    memcpy(&f, &ax, 4);
    if (ax < 0x38800000u) return (uint16_t)(sign | (uint16_t)nearbyintf(ldexpf(f, 24)));
    const uint32_t v = ax - (112u << 23);
    return (uint16_t)(sign | ((v + 0x0FFFu + ((v >> 13) & 1u)) >> 13));
}

static double event_ms(cl_event e) {
    cl_ulong t0, t1;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    return (double)(t1 - t0) / 1e6;
}
static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    /* argv[1]: the large side in MiB (default 1024); argv[2] "any": any device type (PoCL here) */
    const size_t big = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20, rowb = 4096 * 4; /* 4096 floats a row */
    const cl_device_type want = argc > 2 && !strcmp(argv[2], "any") ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_GPU;
    cl_platform_id plats[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint pi = 0; pi < np && !dev; pi++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[pi], want, 1, &dev, &nd) != CL_SUCCESS || nd == 0) dev = NULL;
    }
    if (!dev) return printf("no GPU device\n"), 1;
    char name[256], drv[64];
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        static char log[1 << 20];
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        return printf("build failed:\n%.3000s\n", log), 1;
    }
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, NULL, &err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, big, NULL, &err);
    const size_t nidx = big / rowb; /* enough for any case's groups */
    cl_mem ib = clCreateBuffer(ctx, CL_MEM_READ_WRITE, nidx * sizeof(int), NULL, &err);
    { /* random bits, 64 MiB repeated; a random permutation of row indices */
        const size_t pat = big < ((size_t)64 << 20) ? big : (size_t)64 << 20;
        uint32_t *h = malloc(pat);
        for (size_t i = 0; i < pat / 4; i++) h[i] = next32();
        for (size_t off = 0; off < big; off += pat) clEnqueueWriteBuffer(q, a, CL_TRUE, off, pat, h, 0, NULL, NULL);
        free(h);
    }
    printf("%s (driver %s)\n", name, drv);
    double copy_best = 1e30;
    for (int r = 0; r < 11; r++) {
        cl_event e;
        clEnqueueCopyBuffer(q, a, b, 0, 0, big, 0, NULL, &e);
        clWaitForEvents(1, &e);
        if (r > 0 && event_ms(e) < copy_best) copy_best = event_ms(e);
        clReleaseEvent(e);
    }
    const double copy_gbs = 2.0 * big / copy_best / 1e6;
    printf("clEnqueueCopyBuffer %zu MiB: %.0f GB/s (best of 10)\n", big >> 20, copy_gbs);
    static const kcase cases[] = {
        {"zx1", 1, 256, 8, 16, 0, 0},   {"cvt1", 1, 256, 8, 16, 1, 0},  {"mul1", 1, 256, 8, 16, 1, 0},
        {"zx4", 4, 256, 8, 16, 0, 0},   {"cvt4", 4, 256, 8, 16, 1, 0},  {"mul4", 4, 256, 8, 16, 1, 0},
        {"ihf4", 4, 256, 8, 16, 1, 0},
        {"zx8", 8, 128, 8, 16, 0, 0},   {"cvt8", 8, 128, 8, 16, 1, 0},  {"mul8", 8, 128, 8, 16, 1, 0},
        {"zx8i", 8, 128, 8, 16, 0, 1},  {"cvt8i", 8, 128, 8, 16, 1, 1}, {"mul8i", 8, 128, 8, 16, 1, 1},
        {"f2h4", 4, 256, 16, 8, 2, 0},  {"cp4", 4, 256, 16, 16, 0, 0},  {"zb4", 4, 256, 4, 16, 0, 0},
        {"i2f4", 4, 256, 4, 16, 3, 0},  {"mag4", 4, 256, 4, 16, 3, 0}};
    printf("%-6s %8s %8s %6s | %8s %8s %6s   (median of 15; small: 8 places in turn)\n", "kernel", "big ms", "GB/s",
           "ofcopy", "small us", "GB/s", "ofcopy");
    int bad_total = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const kcase *k = &cases[c];
        cl_kernel kk = clCreateKernel(p, k->name, &err);
        if (err != CL_SUCCESS) return printf("%s: no kernel (%d)\n", k->name, err), 1;
        double med[2];
        for (int size = 0; size < 2; size++) {
            /* units in the larger side: 1 GiB, or 64 MiB (4096 x 4096 floats) */
            const size_t side = size == 0 ? big : big / 16;
            const int bigger = k->rbytes > k->wbytes ? k->rbytes : k->wbytes;
            const size_t units = side / (size_t)bigger, per_group = (size_t)k->n * k->wg, groups = units / per_group;
            const size_t gsz = groups * k->wg, lsz = k->wg;
            const size_t src_bytes = units * k->rbytes, dst_bytes = units * k->wbytes;
            const int places = size == 0 ? 1 : 8;
            if (k->indexed) { /* group g reads row perm[g] of the same shape */
                int *perm = malloc(groups * sizeof(int));
                for (size_t i = 0; i < groups; i++) perm[i] = (int)i;
                for (size_t i = groups - 1; i > 0; i--) {
                    size_t j = next32() % (i + 1);
                    int t = perm[i];
                    perm[i] = perm[j];
                    perm[j] = t;
                }
                clEnqueueWriteBuffer(q, ib, CL_TRUE, 0, groups * sizeof(int), perm, 0, NULL, NULL);
                free(perm);
            }
            double t[16];
            for (int r = 0; r < 16; r++) {
                const int pl = r % places;
                cl_buffer_region rs = {pl * src_bytes, src_bytes}, rd = {pl * dst_bytes, dst_bytes};
                cl_mem sa = clCreateSubBuffer(a, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &rs, &err);
                cl_mem sb = clCreateSubBuffer(b, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &rd, &err);
                clSetKernelArg(kk, 0, sizeof sa, &sa);
                clSetKernelArg(kk, 1, sizeof sb, &sb);
                clSetKernelArg(kk, 2, sizeof ib, &ib);
                cl_event e;
                err = clEnqueueNDRangeKernel(q, kk, 1, NULL, &gsz, &lsz, 0, NULL, &e);
                if (err != CL_SUCCESS) return printf("%s: launch failed (%d)\n", k->name, err), 1;
                clWaitForEvents(1, &e);
                t[r] = event_ms(e);
                clReleaseEvent(e);
                if (r == 15 && k->conv) { /* check 1 Mi units of the last launch, place pl */
                    const size_t cu = units < ((size_t)1 << 20) ? units : ((size_t)1 << 20);
                    unsigned char *in = malloc(cu * k->rbytes), *out = malloc(cu * k->wbytes);
                    int *perm = malloc(cu / per_group * sizeof(int) + sizeof(int));
                    clEnqueueReadBuffer(q, a, CL_TRUE, pl * src_bytes, cu * k->rbytes, in, 0, NULL, NULL);
                    clEnqueueReadBuffer(q, b, CL_TRUE, pl * dst_bytes, cu * k->wbytes, out, 0, NULL, NULL);
                    if (k->indexed) clEnqueueReadBuffer(q, ib, CL_TRUE, 0, cu / per_group * sizeof(int), perm, 0, NULL, NULL);
                    int bad = 0;
                    for (size_t u = 0; u < cu && !k->indexed; u++)
                        for (int e4 = 0; e4 < 4; e4++) {
                            if (k->conv == 3) {
                                const float want = (float)(int8_t)in[u * 4 + e4] * 0.5f;
                                bad += memcmp(&want, out + u * 16 + 4 * e4, 4) != 0;
                            } else if (k->conv == 1) {
                                uint16_t h;
                                uint32_t f;
                                memcpy(&h, in + u * 8 + 2 * e4, 2);
                                memcpy(&f, out + u * 16 + 4 * e4, 4);
                                bad += f != h2f_model(h);
                            } else {
                                uint32_t x;
                                uint16_t h;
                                memcpy(&x, in + u * 16 + 4 * e4, 4);
                                memcpy(&h, out + u * 8 + 2 * e4, 2);
                                bad += h != f2h_model(x);
                            }
                        }
                    if (k->indexed) { /* output group g = row perm[g] of the source; check rows in the read range */
                        for (size_t g = 0; g < cu / per_group; g++) {
                            if ((size_t)perm[g] >= cu / per_group) continue;
                            for (size_t u = 0; u < per_group; u++)
                                for (int e4 = 0; e4 < 4; e4++) {
                                    uint16_t h;
                                    uint32_t f;
                                    memcpy(&h, in + ((size_t)perm[g] * per_group + u) * 8 + 2 * e4, 2);
                                    memcpy(&f, out + (g * per_group + u) * 16 + 4 * e4, 4);
                                    bad += f != h2f_model(h);
                                }
                        }
                    }
                    if (bad) printf("  %s: %d wrong values\n", k->name, bad);
                    bad_total += bad;
                    free(in);
                    free(out);
                    free(perm);
                }
                clReleaseMemObject(sa);
                clReleaseMemObject(sb);
            }
            qsort(t + 1, 15, sizeof t[0], cmpd); /* the first is a warm-up */
            med[size] = t[8];
            const double gbs = (double)(src_bytes + dst_bytes) / med[size] / 1e6;
            if (size == 0) printf("%-6s %8.3f %8.0f %5.0f%% |", k->name, med[0], gbs, 100 * gbs / copy_gbs);
            else printf(" %8.1f %8.0f %5.0f%%\n", med[1] * 1e3, gbs, 100 * gbs / copy_gbs);
        }
        clReleaseKernel(kk);
    }
    printf("conversion checks: %d wrong values\n", bad_total);
    return bad_total != 0;
}
