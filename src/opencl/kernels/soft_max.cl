/* SOFT_MAX of F32 rows (ct_soft_max_args, kernel_args.h) with the CPU reference's formula:
 * w = x*scale + slope*mask, M = max(max w, sink), y = exp(w - M) / (sum exp(w - M) + exp(sink - M)).
 * One work-group per row; the max and the sum are work-group reductions (ct_red_max and
 * ct_red_sum of reduce.cl), the sum in float per work-item. Rows of up to SM_KEEP elements a
 * work-item stay in registers between the passes; longer ones go through dst (each
 * work-item reads and writes only its own elements, so dst may alias src0). */

#define SM_KEEP 16

/* Work-group (i01, i02, i03) computes that row. */
__kernel void ct_soft_max_f32(__global const uchar *src, ulong offs, __global const uchar *mask, ulong offsm,
                              __global const uchar *sinks, ulong offss, __global uchar *dst, ulong offsd,
                              const ct_soft_max_args a, __local float *scratch) {
    const int lx = get_local_id(0), nx = get_local_size(0), ne00 = a.ne00;
    const int i01 = get_group_id(0), i02 = get_group_id(1), i03 = get_group_id(2);
    const __global uchar *x = src + offs + (ulong)i01 * a.nb01 + (ulong)i02 * a.nb02 + (ulong)i03 * a.nb03;
    __global float *y = (__global float *)(dst + offsd + (ulong)i01 * a.nb1 + (ulong)i02 * a.nb2 + (ulong)i03 * a.nb3);
    const __global uchar *m = mask + offsm + (ulong)i01 * a.nb11 + (ulong)(i02 % a.ne12) * a.nb12 +
                              (ulong)(i03 % a.ne13) * a.nb13;
    const int mt = a.mask_type;
    const float scale = a.scale;
    float slope = 1.0f;
    if (a.max_bias > 0.0f) {
        const int nl2 = a.n_head_log2;
        slope = i02 < nl2 ? pow(a.m0, (float)(i02 + 1)) : pow(a.m1, (float)(2 * (i02 - nl2) + 1));
    }
    const ulong nb00 = a.nb00, nb10 = a.nb10;
#define SM_X(i) (*(const __global float *)(x + (ulong)(i) * nb00))
#define SM_W(i)                                                                                            \
    (mt == 0   ? SM_X(i) * scale                                                                          \
     : mt == 1 ? SM_X(i) * scale + slope * *(const __global float *)(m + (ulong)(i) * nb10)              \
               : SM_X(i) * scale + slope * ct_lda_f16(m + (ulong)(i) * nb10))

    float keep[SM_KEEP];
    const int kept = ne00 <= SM_KEEP * nx;
    const int nk = (ne00 + nx - 1) / nx; /* elements a work-item in the kept path, uniform over the group */
    float lmax = -INFINITY;
    if (kept) {
#pragma unroll
        for (int k = 0; k < SM_KEEP; k++) {
            if (k >= nk) break;
            const int i = lx + k * nx;
            keep[k] = i < ne00 ? SM_W(i) : -INFINITY;
            lmax = fmax(lmax, keep[k]);
        }
    } else {
        for (int i = lx; i < ne00; i += nx) {
            const float w = SM_W(i);
            y[i] = w;
            lmax = fmax(lmax, w);
        }
    }
#undef SM_W
#undef SM_X
    float max = ct_red_max(lmax, scratch);
    float sink = 0.0f;
    if (a.has_sinks) {
        sink = *(const __global float *)(sinks + offss + (ulong)i02 * a.nbs0);
        max = max > sink ? max : sink;
    }
    float s = 0.0f;
    if (kept) {
#pragma unroll
        for (int k = 0; k < SM_KEEP; k++) {
            if (k >= nk) break;
            if (lx + k * nx < ne00) {
                keep[k] = exp(keep[k] - max);
                s += keep[k];
            }
        }
    } else {
        for (int i = lx; i < ne00; i += nx) {
            const float e = exp(y[i] - max);
            y[i] = e;
            s += e;
        }
    }
    s = ct_red_sum(s, scratch);
    if (a.has_sinks) s += exp(sink - max);
    const float inv = 1.0f / s;
    if (kept) {
#pragma unroll
        for (int k = 0; k < SM_KEEP && k < nk; k++)
            if (lx + k * nx < ne00) y[lx + k * nx] = keep[k] * inv;
    } else {
        for (int i = lx; i < ne00; i += nx) y[i] *= inv;
    }
}
