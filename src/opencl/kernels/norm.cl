/* NORM, RMS_NORM, L2_NORM and GROUP_NORM of F32 data with the CPU reference's formulas
 * (L2: x / max(sqrt(sum x^2), eps); GROUP_NORM per i03, truncated last group, true
 * group sizes). Sums are float per work-item, then a tree (ct_red_sum, reduce.cl).
 * Elements are nb00 bytes apart (a multiple of 4). */

#define NM_NORM 0
#define NM_RMS 1
#define NM_L2 2
#define NM_KEEP 8 /* float4 per work-item held in registers: rows up to 8192 at 256 */

#define NM_ARGS                                                                                          \
    __global const uchar *src, ulong offs, __global uchar *dst, ulong offsd, int ne00, int ne01, int ne02, \
        int nrows, ulong nb00, ulong nb01, ulong nb02, ulong nb03, ulong nb0, ulong nb1, ulong nb2, ulong nb3, \
        float eps, __local float *scratch
/* A kernel's arguments: the tensors, ct_norm_args (kernel_args.h), the scratch. */
#define NM_KERNEL_ARGS \
    __global const uchar *src, ulong offs, __global uchar *dst, ulong offsd, const ct_norm_args a, __local float *scratch
#define NM_PASS(mode)                                                                                       \
    nm_rows(mode, src, offs, dst, offsd, a.ne00, a.ne01, a.ne02, a.nrows, a.nb00, a.nb01, a.nb02, a.nb03, a.nb0, \
            a.nb1, a.nb2, a.nb3, a.eps, scratch, 0, 0, 0, 0, 0, m0, 0, 0, 0, 0)

/* The fused MUL (fuse 1: norm * w, 2: w * norm, the MUL's operand order) of one normalized
 * value v at column i, then the fused ADD (m.add 1: product + r, 2: r + product): ct_xmul
 * and ct_xadd as the MUL and ADD nodes' kernels compute them, so the bytes are the unfused
 * nodes'. */
#define NM_W(i) (*(const __global float *)(wr + (ulong)((i) % m.ne10) * 4))
#define NM_R(i) (*(const __global float *)(rrow + (ulong)(i) * 4))
#define NM_MUL(v, i) (fuse == 1 ? ct_xmul((v), NM_W(i)) : fuse == 2 ? ct_xmul(NM_W(i), (v)) : (v))
#define NM_ADD(v, i) (m.add == 1 ? ct_xadd((v), NM_R(i)) : m.add == 2 ? ct_xadd(NM_R(i), (v)) : (v))
#define NM_FUSE(v, i) NM_ADD(NM_MUL(v, i), i)
/* The fused ADD before the norm (m.pre_add), element by element as the ADD's kernel. */
#define NM_XADD4(u, v) ((float4)(ct_xadd((u).s0, (v).s0), ct_xadd((u).s1, (v).s1), ct_xadd((u).s2, (v).s2), \
                                 ct_xadd((u).s3, (v).s3)))

/* Work-group (nx, ny): local row ly normalizes row get_group_id(0)*ny + ly. Rows past
 * nrows take part in the reductions (barriers) and write nothing. With m.pre_add the first
 * pass reads src + p, writes that sum and later passes read the sum back: each work-item
 * reads only the elements it wrote. */
void nm_rows(const int mode, NM_ARGS, const int fuse, __global const uchar *w, ulong offw, __global const uchar *r,
             ulong offr, const ct_norm_mul_args m, __global const uchar *p, ulong offp, __global uchar *sum,
             ulong offsum) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int row = get_group_id(0) * get_local_size(1) + get_local_id(1);
    const int rr = min(row, nrows - 1);
    const int i01 = rr % ne01, i02 = (rr / ne01) % ne02, i03 = rr / (ne01 * ne02);
    const ulong xrow = (ulong)i01 * nb01 + (ulong)i02 * nb02 + (ulong)i03 * nb03;
    const __global uchar *x = src + offs + xrow;
    __global uchar *y = dst + offsd + (ulong)i01 * nb1 + (ulong)i02 * nb2 + (ulong)i03 * nb3;
    const __global uchar *prow = m.pre_add ? p + offp + xrow : p;
    __global uchar *srow = m.pre_add ? sum + offsum + xrow : sum;
    const int store_sum = m.pre_add && row < nrows;
#define NM_X(i) (*(const __global float *)(x + (ulong)(i) * nb00))
#define NM_P(i) (*(const __global float *)(prow + (ulong)(i) * nb00))
#define NM_S(i) (*(__global float *)(srow + (ulong)(i) * nb00))
    const __global uchar *wr = fuse ? w + offw + (ulong)(i01 % m.ne11) * m.nbw1 + (ulong)(i02 % m.ne12) * m.nbw2 +
                                          (ulong)(i03 % m.ne13) * m.nbw3
                                    : w;
    const __global uchar *rrow = m.add ? r + offr + (ulong)i01 * m.nbr1 + (ulong)i02 * m.nbr2 + (ulong)i03 * m.nbr3 : r;

    /* packed, 16-byte aligned rows: float4 loads and stores (uniform over the group) */
    const int v4 = nb00 == 4 && nb0 == 4 && (ne00 & 3) == 0 && (((ulong)x | (ulong)y) & 15) == 0 &&
                   (((nb01 | nb02 | nb03 | nb1 | nb2 | nb3) & 15) == 0) &&
                   (!m.pre_add || (((ulong)prow | (ulong)srow) & 15) == 0);
    const __global float4 *x4 = (const __global float4 *)x;
    const __global float4 *p4 = (const __global float4 *)prow;
    __global float4 *s4 = (__global float4 *)srow;
    __global float4 *y4 = (__global float4 *)y;
    const int n4 = ne00 / 4;

    /* a row of at most NM_KEEP float4 per work-item is read once, into registers, its
     * loads all issued together; longer rows are read again by each later pass */
    float4 keep[NM_KEEP];
    const int kept = v4 && n4 <= NM_KEEP * nx;
    float s = 0.0f;
    if (kept) {
#pragma unroll
        for (int k = 0; k < NM_KEEP; k++) keep[k] = lx + k * nx < n4 ? x4[lx + k * nx] : (float4)0.0f;
        if (m.pre_add) {
#pragma unroll
            for (int k = 0; k < NM_KEEP; k++) {
                if (lx + k * nx >= n4) continue;
                keep[k] = NM_XADD4(keep[k], p4[lx + k * nx]);
                if (store_sum) s4[lx + k * nx] = keep[k];
            }
        }
#pragma unroll
        for (int k = 0; k < NM_KEEP; k++) {
            const float4 v = keep[k];
            if (lx + k * nx < n4)
                s += mode == NM_NORM ? (v.s0 + v.s1) + (v.s2 + v.s3)
                                     : (v.s0 * v.s0 + v.s1 * v.s1) + (v.s2 * v.s2 + v.s3 * v.s3);
        }
    } else if (v4) {
        for (int i = lx; i < n4; i += nx) {
            float4 v = x4[i];
            if (m.pre_add) {
                v = NM_XADD4(v, p4[i]);
                if (store_sum) s4[i] = v;
            }
            s += mode == NM_NORM ? (v.s0 + v.s1) + (v.s2 + v.s3) : (v.s0 * v.s0 + v.s1 * v.s1) + (v.s2 * v.s2 + v.s3 * v.s3);
        }
    } else {
        for (int i = lx; i < ne00; i += nx) {
            float v = NM_X(i);
            if (m.pre_add) {
                v = ct_xadd(v, NM_P(i));
                if (store_sum) NM_S(i) = v;
            }
            s += mode == NM_NORM ? v : v * v;
        }
    }
    s = ct_red_sum(s, scratch);
    if (m.pre_add) { /* later passes read the sums this work-item wrote */
        x = srow;
        x4 = (const __global float4 *)srow;
    }

    float mean = 0.0f, scale;
    if (mode == NM_NORM) {
        mean = s / (float)ne00;
        float s2 = 0.0f;
        if (kept) {
#pragma unroll
            for (int k = 0; k < NM_KEEP; k++) {
                const float4 v = keep[k] - mean;
                if (lx + k * nx < n4) s2 += (v.s0 * v.s0 + v.s1 * v.s1) + (v.s2 * v.s2 + v.s3 * v.s3);
            }
        } else if (v4) {
            for (int i = lx; i < n4; i += nx) {
                const float4 v = x4[i] - mean;
                s2 += (v.s0 * v.s0 + v.s1 * v.s1) + (v.s2 * v.s2 + v.s3 * v.s3);
            }
        } else {
            for (int i = lx; i < ne00; i += nx) {
                const float v = NM_X(i) - mean;
                s2 += v * v;
            }
        }
        s2 = ct_red_sum(s2, scratch);
        scale = 1.0f / sqrt(s2 / (float)ne00 + eps);
    } else if (mode == NM_RMS) {
        scale = 1.0f / sqrt(s / (float)ne00 + eps);
    } else {
        scale = 1.0f / fmax(sqrt(s), eps);
    }
    if (row >= nrows) return;
    if (fuse) {
        /* each value normalized as below, then multiplied by its weight */
        if (kept) {
#pragma unroll
            for (int k = 0; k < NM_KEEP; k++) {
                const int i4 = lx + k * nx;
                if (i4 >= n4) continue;
                const float4 v = (keep[k] - mean) * scale;
                y4[i4] = (float4)(NM_FUSE(v.s0, 4 * i4), NM_FUSE(v.s1, 4 * i4 + 1), NM_FUSE(v.s2, 4 * i4 + 2),
                                  NM_FUSE(v.s3, 4 * i4 + 3));
            }
            return;
        }
        for (int i = lx; i < ne00; i += nx) {
            const float v = (NM_X(i) - mean) * scale;
            *(__global float *)(y + (ulong)i * nb0) = NM_FUSE(v, i);
        }
        return;
    }
    if (kept) {
#pragma unroll
        for (int k = 0; k < NM_KEEP; k++)
            if (lx + k * nx < n4) y4[lx + k * nx] = (keep[k] - mean) * scale;
        return;
    }
    if (v4) {
        for (int i = lx; i < n4; i += nx) y4[i] = (x4[i] - mean) * scale;
        return;
    }
    for (int i = lx; i < ne00; i += nx) *(__global float *)(y + (ulong)i * nb0) = (NM_X(i) - mean) * scale;
#undef NM_X
#undef NM_P
#undef NM_S
}

/* The unfused kernels pass no weight (m0: unused arguments). */
__constant ct_norm_mul_args m0 = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0};

__kernel void ct_norm_f32(NM_KERNEL_ARGS) { NM_PASS(NM_NORM); }

__kernel void ct_rms_norm_f32(NM_KERNEL_ARGS) { NM_PASS(NM_RMS); }

__kernel void ct_l2_norm_f32(NM_KERNEL_ARGS) { NM_PASS(NM_L2); }

/* RMS_NORM, the MUL by its weight and optionally the ADD after it in one pass
 * (encoders/norm.c says when): dst is the last node's, the others' results are never
 * written. */
__kernel void ct_rms_norm_mul_f32(NM_KERNEL_ARGS, __global const uchar *w, ulong offw, __global const uchar *r,
                                  ulong offr, const ct_norm_mul_args m) {
    nm_rows(NM_RMS, src, offs, dst, offsd, a.ne00, a.ne01, a.ne02, a.nrows, a.nb00, a.nb01, a.nb02, a.nb03, a.nb0,
            a.nb1, a.nb2, a.nb3, a.eps, scratch, m.w_first ? 2 : 1, w, offw, r, offr, m, 0, 0, 0, 0);
}

/* The same after the ADD that makes the norm's input (m.pre_add: src + p, written to sum). */
__kernel void ct_add_rms_norm_mul_f32(NM_KERNEL_ARGS, __global const uchar *w, ulong offw, __global const uchar *r,
                                      ulong offr, const ct_norm_mul_args m, __global const uchar *p, ulong offp,
                                      __global uchar *sum, ulong offsum) {
    nm_rows(NM_RMS, src, offs, dst, offsd, a.ne00, a.ne01, a.ne02, a.nrows, a.nb00, a.nb01, a.nb02, a.nb03, a.nb0,
            a.nb1, a.nb2, a.nb3, a.eps, scratch, m.w_first ? 2 : 1, w, offw, r, offr, m, p, offp, sum, offsum);
}

/* One work-group per (group, i03): channels [g*cpg, min((g+1)*cpg, ne02)), every
 * element of them, flat index i -> (i00, i01, channel). The encoder dispatches only
 * non-empty groups. */
__kernel void ct_group_norm_f32(NM_KERNEL_ARGS) {
    const int ne00 = a.ne00, ne01 = a.ne01, ne02 = a.ne02, cpg = a.channels_per_group;
    const ulong nb00 = a.nb00, nb01 = a.nb01, nb02 = a.nb02, nb03 = a.nb03;
    const ulong nb0 = a.nb0, nb1 = a.nb1, nb2 = a.nb2, nb3 = a.nb3;
    const float eps = a.eps;
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int c0 = get_group_id(0) * cpg, c1 = min(c0 + cpg, ne02);
    const int i03 = get_group_id(1);
    const __global uchar *x = src + offs + (ulong)i03 * nb03 + (ulong)c0 * nb02;
    __global uchar *y = dst + offsd + (ulong)i03 * nb3 + (ulong)c0 * nb2;
    const long plane = (long)ne00 * ne01, n = plane * (c1 - c0);
#define GN_OFF(i, s0, s1, s2) \
    ((ulong)((i) % ne00) * (s0) + (ulong)(((i) / ne00) % ne01) * (s1) + (ulong)((i) / plane) * (s2))
#define GN_X(i) (*(const __global float *)(x + GN_OFF(i, nb00, nb01, nb02)))

    float s = 0.0f;
    for (long i = lx; i < n; i += nx) s += GN_X(i);
    s = ct_red_sum(s, scratch);
    const float mean = s / (float)n;

    float s2 = 0.0f;
    for (long i = lx; i < n; i += nx) {
        const float v = GN_X(i) - mean;
        s2 += v * v;
    }
    s2 = ct_red_sum(s2, scratch);
    const float scale = 1.0f / sqrt(s2 / (float)n + eps);

    for (long i = lx; i < n; i += nx) *(__global float *)(y + GN_OFF(i, nb0, nb1, nb2)) = (GN_X(i) - mean) * scale;
#undef GN_X
#undef GN_OFF
}
