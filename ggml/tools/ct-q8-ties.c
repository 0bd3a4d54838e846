/*
 * ct-q8-ties: the evidence for the one conformance exception (ggml/README.md). Quantizes
 * the same values to q8_0 with ggml-cpu's quantizer (ggml_get_type_traits_cpu(Q8_0)->from_float,
 * what ggml-cpu's CPY uses) and with ggml's reference (quantize_row_q8_0_ref), and reports,
 * per source type (values uniform in [-1, 1] rounded to bf16, f16 or kept f32, as
 * test-backend-ops draws them), how many quantized values differ and why. ggml-cpu's x86
 * quantizer scales by 127 / amax and rounds ties to even; the reference scales by
 * 1 / (amax / 127), which can be one ulp away, and rounds ties away from zero. A difference
 * is explained when it is one step and either the scaled value is an exact tie or the two
 * scaled values lie on either side of a half. Exits 1 on any other difference.
 */
#include "ggml-cpu.h"
#include "ggml.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ggml-base exports it (ggml-quants.h, not installed); the block is fp16 d then 32 int8. */
void quantize_row_q8_0_ref(const float *x, void *y, int64_t k);

#define QK 32
#define BLOCK 34
#define N (1 << 20)

int main(void) {
    ggml_cpu_init();
    const struct ggml_type_traits_cpu *tc = ggml_get_type_traits_cpu(GGML_TYPE_Q8_0);
    static float x[N];
    static unsigned char a[N / QK * BLOCK], b[N / QK * BLOCK];
    const char *names[] = {"bf16", "f16", "f32"};
    int bad = 0;
    for (int kind = 0; kind < 3; kind++) {
        srand(1234);
        for (int i = 0; i < N; i++) {
            float v = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
            if (kind == 0) v = ggml_bf16_to_fp32(ggml_fp32_to_bf16(v));
            if (kind == 1) v = ggml_fp16_to_fp32(ggml_fp32_to_fp16(v));
            x[i] = v;
        }
        tc->from_float(x, a, N);
        quantize_row_q8_0_ref(x, b, N);
        long diff = 0, ties = 0, even = 0, away = 0, scale = 0, blocks = 0, d_diff = 0;
        for (int blk = 0; blk < N / QK; blk++) {
            const unsigned char *pa = a + (size_t)blk * BLOCK, *pb = b + (size_t)blk * BLOCK;
            if (memcmp(pa, pb, 2) != 0) d_diff++;
            float amax = 0;
            for (int j = 0; j < QK; j++) amax = fmaxf(amax, fabsf(x[blk * QK + j]));
            const float id_cpu = amax != 0 ? 127.f / amax : 0.f;
            const float d_ref = amax / 127.f, id_ref = d_ref != 0 ? 1.0f / d_ref : 0.f;
            bool any = false;
            for (int j = 0; j < QK; j++) {
                int qa = (int8_t)pa[2 + j], qb = (int8_t)pb[2 + j];
                if (qa == qb) continue;
                any = true;
                diff++;
                const float vc = x[blk * QK + j] * id_cpu, vr = x[blk * QK + j] * id_ref;
                if (abs(qa - qb) != 1) continue;
                if (fabsf(vc - truncf(vc)) == 0.5f && vc == vr) {
                    ties++;
                    if (qa % 2 == 0) even++;
                    if (fabsf((float)qb) > fabsf(vr)) away++;
                } else if (fabsf(vc - roundf(vc)) >= 0.49f) {
                    scale++; /* the two scales put the value on either side of a half */
                }
            }
            blocks += any;
        }
        printf("%s -> q8_0: %d values, %ld differ by one step (in %ld of %d blocks; %ld block scales differ): "
               "%ld at exact ties (ggml-cpu's value even in %ld, the reference's away from zero in %ld), "
               "%ld next to a half where the two scales differ by an ulp, %ld unexplained\n",
               names[kind], N, diff, blocks, N / QK, d_diff, ties, even, away, scale, diff - ties - scale);
        if (ties + scale != diff || d_diff != 0) bad = 1;
    }
    return bad;
}
