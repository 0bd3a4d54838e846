/* The CPU backend's AVX2 dot kernels in cache: TSC cycles per 256 values of one src0 row
 * of 4096 against one src1 row (the best of 30 runs of 200 calls, so another tenant of a
 * shared VM shows as outliers, not as the figure), and a hash of their outputs for
 * ny = 1..4 at 64 offsets, which must not change when a kernel is only made faster.
 * gcc -O2 -mavx2 -Iinclude -Isrc bench/cpu-dot.c build/libctensor.a -lm -lpthread -ldl -o cpu-dot
 * ./cpu-dot [TYPE] */
#include "cpu/simd.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>
int main(int argc, char **argv) {
    const ct_type types[] = {CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_Q8_0, CT_TYPE_IQ4_NL, CT_TYPE_Q4_K, CT_TYPE_Q5_K, CT_TYPE_Q6_K};
    const int64_t k = 4096, nb = k / 32;
    unsigned char *x = aligned_alloc(64, 1 << 20);
    for (int i = 0; i < (1 << 20); i++) x[i] = (unsigned char)(rand() & 0x3f); /* scales small, fp16 d's finite */
    /* four src1 rows of random blocks: each its own d and s, so a block's scale in the wrong lane shows */
    ct_block_qy *y = aligned_alloc(64, sizeof(ct_block_qy) * nb * 4);
    for (int i = 0; i < 4 * nb; i++) {
        y[i].d = (float)(rand() % 1000 + 1) * 1e-4f;
        y[i].s = (float)(rand() % 4001 - 2000);
        for (int j = 0; j < 32; j++) y[i].qs[j] = (int8_t)(rand() % 255 - 127);
    }
    const ct_block_qy *yy[1] = {y};
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        if (argc > 1 && strcmp(argv[1], ct_type_name(types[ti]))) continue;
        ct_dot_q_fn f = ct_cpu_dot_q_avx2(types[ti]);
        if (!f) continue;
        double best = 1e30; float out[4], sink = 0;
        unsigned h = 0;
        for (int o = 0; o < 64; o++) {
            const ct_block_qy *y4[4] = {y, y + nb, y + 2 * nb, y + 3 * nb};
            for (int ny = 1; ny <= 4; ny++) {
                f(nb, x + 3 * o, 0, 1, y4, ny, out);
                for (int j = 0; j < ny; j++) { unsigned u; memcpy(&u, &out[j], 4); h = h * 31 + u; }
            }
        }
        printf("%-8s hash %08x\n", ct_type_name(types[ti]), h);
        for (int rep = 0; rep < 30; rep++) {
            const unsigned long long c0 = __rdtsc();
            for (int it = 0; it < 200; it++) { f(nb, x, 0, 1, yy, 1, out); sink += out[0]; }
            const double c = (double)(__rdtsc() - c0) / (200.0 * k / 256.0);
            if (c < best) best = c;
        }
        printf("%-8s %6.1f TSC cycles / 256 values%s\n", ct_type_name(types[ti]), best, sink == 12345.f ? " " : "");
    }
    return 0;
}
