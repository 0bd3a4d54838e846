/* ARGSORT and TOP_K of F32 rows (taking ct_argsort_args, kernel_args.h), sorted by one
 * total order: by value (ascending or descending), equal values by index, NaNs last.
 * Any correct sort gives the same indices under it, so the results equal the CPU's and
 * REF's byte for byte. Each element becomes one 64-bit key whose unsigned order is that
 * order (as_key: the value's bits mapped to an unsigned order, -0 as +0, inverted for
 * descending, NaNs above all; the index in the low half), so every comparison is one
 * integer compare. A row of ne00 is cut into blocks of len (a power of two; the last one
 * padded with keys past every real one): ct_argsort_block_f32 sorts each block in local
 * memory (bitonic), then ct_argsort_merge_f32 merges sorted runs pairwise (each work-item
 * finds its share of the output by a binary search of the merge path), once per doubling
 * of the run length. Runs are kept as keys in the work memory; the last pass writes the
 * indices (the keys' low halves). Only the first top keys of a run are written and read
 * (TOP_K keeps k). */

static inline ulong as_key(float v, int i, int desc) {
    if (v == 0.0f) v = 0.0f;
    const uint u = as_uint(v);
    uint o = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    if (desc) o = ~o;
    if (isnan(v)) o = 0xFFFFFFFFu;
    return ((ulong)o << 32) | (uint)i;
}

/* Work-group (nx): block get_group_id(0) of row get_group_id(1); keys holds len. Writes
 * the block's first min(len, top) keys (out_idx: as I32 indices) at its place in the row. */
__kernel void ct_argsort_block_f32(__global const uchar *src, ulong offs, __global uchar *out, ulong offo,
                                   const ct_argsort_args a, const int out_idx, __local ulong *keys) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int r = get_group_id(1), n = a.ne00, B = a.len;
    const int i00 = get_group_id(0) * B;
    const int i01 = r % a.ne01, i02 = (r / a.ne01) % a.ne02, i03 = r / (a.ne01 * a.ne02);
    const __global uchar *x = src + offs + (ulong)i01 * a.nb01 + (ulong)i02 * a.nb02 + (ulong)i03 * a.nb03;
    for (int t = lx; t < B; t += nx) {
        const int i = i00 + t;
        keys[t] = i < n ? as_key(*(const __global float *)(x + (ulong)i * a.nb00), i, a.desc)
                        : (0xFFFFFFFFul << 32) | (uint)i; /* padding: after every key of the row */
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 2; k <= B; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = lx; t < B / 2; t += nx) {
                const int lo = ((t & ~(j - 1)) << 1) | (t & (j - 1)), hi = lo + j;
                const ulong kl = keys[lo], kh = keys[hi];
                if (((lo & k) == 0) == (kh < kl)) {
                    keys[lo] = kh;
                    keys[hi] = kl;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    const int cnt = min(min(B, n - i00), a.top);
    if (out_idx) {
        __global int *y = (__global int *)(out + offo) + (ulong)r * a.ld_out + i00;
        for (int t = lx; t < cnt; t += nx) y[t] = (int)(uint)keys[t];
    } else {
        __global ulong *y = (__global ulong *)(out + offo) + (ulong)r * a.ld_out + i00;
        for (int t = lx; t < cnt; t += nx) y[t] = keys[t];
    }
}

/* Work-group (nx): runs get_group_id(0)*2 and +1 (of len keys) of row get_group_id(1). */
__kernel void ct_argsort_merge_f32(__global const uchar *in, ulong offi, __global uchar *out, ulong offo,
                                   const ct_argsort_args a, const int out_idx) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int r = get_group_id(1), n = a.ne00, len = a.len;
    const int start = get_group_id(0) * 2 * len;
    const int len0 = min(min(len, max(0, n - start)), a.top);
    const int len1 = min(min(len, max(0, n - start - len)), a.top);
    const int total = min(len0 + len1, a.top);
    const int chunk = (total + nx - 1) / nx;
    const int k0 = lx * chunk, k1 = min(k0 + chunk, total);
    if (k0 >= k1) return;
    const __global ulong *A = (const __global ulong *)(in + offi) + (ulong)r * a.ld_in + start;
    const __global ulong *Bv = A + len;
    int lo = max(0, k0 - len1), hi = min(k0, len0);
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (A[mid] < Bv[k0 - mid - 1]) lo = mid + 1;
        else hi = mid;
    }
    int i = lo, j = k0 - lo;
    __global int *yi = (__global int *)(out + offo) + (ulong)r * a.ld_out + start;
    __global ulong *yk = (__global ulong *)(out + offo) + (ulong)r * a.ld_out + start;
    ulong ka = i < len0 ? A[i] : ~0ul, kb = j < len1 ? Bv[j] : ~0ul;
    for (int k = k0; k < k1; k++) {
        ulong v;
        if (i < len0 && (j >= len1 || ka < kb)) {
            v = ka;
            ka = ++i < len0 ? A[i] : ~0ul;
        } else {
            v = kb;
            kb = ++j < len1 ? Bv[j] : ~0ul;
        }
        if (out_idx) yi[k] = (int)(uint)v;
        else yk[k] = v;
    }
}
