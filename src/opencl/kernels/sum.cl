/* SUM, CUMSUM and ARGMAX of F32 tensors (taking ct_reduce_args, kernel_args.h).
 * SUM: one work-group, float sums per work-item over the flattened elements, then
 * ct_red_sum (reduce.cl). CUMSUM: one work-group per row, each work-item a contiguous
 * chunk: the chunks' sums, their exclusive scan, then each chunk walked again from its
 * offset in float. ARGMAX: one work-group per row, ggml-cpu's running maximum as
 * reductions: the last non-NaN index p, the last NaN q and the last maximum; when a NaN
 * lies before p, the maximum again after the last such NaN. */

#define RD_X(x, i) (*(const __global float *)((x) + (ulong)(i) * a.nb00))

__kernel void ct_sum_f32(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                         const ct_reduce_args a, __local float *scratch) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const ulong n0 = (ulong)a.ne00, n01 = n0 * (ulong)a.ne01, n012 = n01 * (ulong)a.ne02;
    const ulong n = n012 * (ulong)a.ne03;
    float s = 0.0f;
    for (ulong e = lx; e < n; e += nx) {
        const ulong i3 = e / n012, r3 = e - i3 * n012, i2 = r3 / n01, r2 = r3 - i2 * n01, i1 = r2 / n0,
                    i0 = r2 - i1 * n0;
        s += *(const __global float *)(src + offs + i0 * a.nb00 + i1 * a.nb01 + i2 * a.nb02 + i3 * a.nb03);
    }
    s = ct_red_sum(s, scratch);
    if (lx == 0) *(__global float *)(dst + offsd) = s;
}

__kernel void ct_cumsum_f32(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                            const ct_reduce_args a, __local float *scratch) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int row = get_group_id(0);
    const int i01 = row % a.ne01, i02 = (row / a.ne01) % a.ne02, i03 = row / (a.ne01 * a.ne02);
    const __global uchar *x = src + offs + (ulong)i01 * a.nb01 + (ulong)i02 * a.nb02 + (ulong)i03 * a.nb03;
    __global float *y = (__global float *)(dst + offsd + (ulong)i01 * a.nb1 + (ulong)i02 * a.nb2 + (ulong)i03 * a.nb3);
    const int c = (a.ne00 + nx - 1) / nx;
    const int i0 = min(lx * c, a.ne00), i1 = min(i0 + c, a.ne00);
    float s = 0.0f;
    for (int i = i0; i < i1; i++) s = i == i0 ? RD_X(x, i) : s + RD_X(x, i);
    scratch[lx] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lx == 0) {
        float acc = 0.0f;
        for (int t = 0; t < nx; t++) {
            const float v = scratch[t];
            scratch[t] = acc;
            acc = t == 0 ? v : acc + v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float v = scratch[lx];
    for (int i = i0; i < i1; i++) {
        v = i == 0 ? RD_X(x, 0) : v + RD_X(x, i);
        y[i] = v;
    }
}

/* Whether (v2, i2) beats (v1, i1) for ARGMAX: larger, or equal and later; i < 0 is none. */
static inline bool am_better(float v1, int i1, float v2, int i2) {
    return i2 >= 0 && (i1 < 0 || v2 > v1 || (v2 == v1 && i2 > i1));
}

/* Reduces (bv, bi) by am_better and p, q by max over the work-group; every work-item
 * gets the results. sv holds nx floats, si, sp and sq nx ints. */
static void am_reduce(float *bv, int *bi, int *p, int *q, __local float *sv, __local int *si, __local int *sp,
                      __local int *sq) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    sv[lx] = *bv, si[lx] = *bi, sp[lx] = *p, sq[lx] = *q;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int n = nx; n > 1;) {
        const int h = (n + 1) >> 1;
        if (lx < n - h) {
            if (am_better(sv[lx], si[lx], sv[lx + h], si[lx + h])) sv[lx] = sv[lx + h], si[lx] = si[lx + h];
            sp[lx] = max(sp[lx], sp[lx + h]);
            sq[lx] = max(sq[lx], sq[lx + h]);
        }
        n = h;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *bv = sv[0], *bi = si[0], *p = sp[0], *q = sq[0];
}

__kernel void ct_argmax_f32(__global const uchar *src, ulong offs, __global uchar *dst, ulong offsd,
                            const ct_reduce_args a, __local float *sv, __local int *si, __local int *sp,
                            __local int *sq) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int row = get_group_id(0), n = a.ne00;
    const __global uchar *x = src + offs + (ulong)row * a.nb01;
    float bv = 0.0f;
    int bi = -1, p = -1, q = -1;
    for (int i = lx; i < n; i += nx) {
        const float v = RD_X(x, i);
        if (isnan(v)) {
            q = i;
        } else {
            p = i;
            if (bi < 0 || v >= bv) bv = v, bi = i;
        }
    }
    am_reduce(&bv, &bi, &p, &q, sv, si, sp, sq);
    int res = bi;
    if (p < 0) {
        res = 0; /* an empty or all-NaN row */
    } else if (q >= 0) {
        int j = q, unused = -1;
        if (q > p) { /* NaNs at the end change nothing: the last NaN before p */
            j = -1;
            for (int i = lx; i < p; i += nx)
                if (isnan(RD_X(x, i))) j = i;
            float uv = 0.0f;
            int ui = -1;
            am_reduce(&uv, &ui, &j, &unused, sv, si, sp, sq);
        }
        /* the search restarts after the NaN j: the last maximum of (j, p] */
        bv = 0.0f, bi = -1;
        for (int i = j + 1 + lx; i <= p; i += nx) {
            const float v = RD_X(x, i);
            if (bi < 0 || v >= bv) bv = v, bi = i;
        }
        int up = -1, uq = -1;
        am_reduce(&bv, &bi, &up, &uq, sv, si, sp, sq);
        res = bi;
    }
    if (lx == 0) *(__global int *)(dst + offsd + (ulong)row * a.nb1) = res;
}
