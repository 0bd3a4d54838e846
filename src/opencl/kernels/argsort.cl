/* ARGSORT and TOP_K of F32 rows (taking ct_argsort_args, kernel_args.h), sorted by one
 * total order: by value (ascending or descending), equal values by index, NaNs last.
 * Any correct sort gives the same indices under it, so the results equal the CPU's and
 * REF's stable merge sorts byte for byte. A row of ne00 is cut into blocks of len (a
 * power of two; the last one padded with indices past the row, which sort after
 * everything): ct_argsort_block_f32 sorts each block in local memory (bitonic), then
 * ct_argsort_merge_f32 merges sorted runs pairwise (each work-item finds its share of
 * the output by a binary search of the merge path), once per doubling of the run length.
 * Only the first top indices of a run are written and read (TOP_K keeps k). */

#define AS_X(x, i) (*(const __global float *)((x) + (ulong)(i) * a.nb00))

/* Whether (va, ia) goes before (vb, ib); indices n and past are padding. */
static inline bool as_before(float va, int ia, float vb, int ib, int n, int desc) {
    if (ia >= n || ib >= n) return ia < n || (ib >= n && ia < ib);
    const bool na = isnan(va), nb = isnan(vb);
    if (na || nb) return na && nb ? ia < ib : nb;
    if (va != vb) return desc ? va > vb : va < vb;
    return ia < ib;
}

static inline const __global uchar *as_row(const __global uchar *src, const ct_argsort_args a, int r) {
    const int i01 = r % a.ne01, i02 = (r / a.ne01) % a.ne02, i03 = r / (a.ne01 * a.ne02);
    return src + (ulong)i01 * a.nb01 + (ulong)i02 * a.nb02 + (ulong)i03 * a.nb03;
}

/* Work-group (nx): block get_group_id(0) of row get_group_id(1); kv, ki hold len each. */
__kernel void ct_argsort_block_f32(__global const uchar *src, ulong offs, __global uchar *out, ulong offo,
                                   const ct_argsort_args a, __local float *kv, __local int *ki) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int r = get_group_id(1), n = a.ne00, B = a.len;
    const int i00 = get_group_id(0) * B;
    const __global uchar *x = as_row(src + offs, a, r);
    for (int t = lx; t < B; t += nx) {
        const int i = i00 + t;
        ki[t] = i;
        kv[t] = i < n ? AS_X(x, i) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 2; k <= B; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = lx; t < B / 2; t += nx) {
                const int lo = ((t & ~(j - 1)) << 1) | (t & (j - 1)), hi = lo + j;
                const bool up = (lo & k) == 0;
                const float vl = kv[lo], vh = kv[hi];
                const int il = ki[lo], ih = ki[hi];
                if (up ? as_before(vh, ih, vl, il, n, a.desc) : as_before(vl, il, vh, ih, n, a.desc)) {
                    kv[lo] = vh, kv[hi] = vl;
                    ki[lo] = ih, ki[hi] = il;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    const int cnt = min(min(B, n - i00), a.top);
    __global int *y = (__global int *)(out + offo) + (ulong)r * a.ld_out + i00;
    for (int t = lx; t < cnt; t += nx) y[t] = ki[t];
}

/* Work-group (nx): runs get_group_id(0)*2 and +1 (of len) of row get_group_id(1). */
__kernel void ct_argsort_merge_f32(__global const uchar *src, ulong offs, __global const uchar *in, ulong offi,
                                   __global uchar *out, ulong offo, const ct_argsort_args a) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int r = get_group_id(1), n = a.ne00, len = a.len;
    const int start = get_group_id(0) * 2 * len;
    const int len0 = min(min(len, max(0, n - start)), a.top);
    const int len1 = min(min(len, max(0, n - start - len)), a.top);
    const int total = min(len0 + len1, a.top);
    const int chunk = (total + nx - 1) / nx;
    const int k0 = lx * chunk, k1 = min(k0 + chunk, total);
    if (k0 >= k1) return;
    const __global uchar *x = as_row(src + offs, a, r);
    const __global int *A = (const __global int *)(in + offi) + (ulong)r * a.ld_in + start;
    const __global int *Bv = A + len;
    __global int *y = (__global int *)(out + offo) + (ulong)r * a.ld_out + start;
    int lo = max(0, k0 - len1), hi = min(k0, len0);
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        const int ia = A[mid], ib = Bv[k0 - mid - 1];
        if (as_before(AS_X(x, ia), ia, AS_X(x, ib), ib, n, a.desc)) lo = mid + 1;
        else hi = mid;
    }
    int i = lo, j = k0 - lo;
    int ia = i < len0 ? A[i] : 0, ib = j < len1 ? Bv[j] : 0;
    float va = i < len0 ? AS_X(x, ia) : 0.0f, vb = j < len1 ? AS_X(x, ib) : 0.0f;
    for (int k = k0; k < k1; k++) {
        if (i < len0 && (j >= len1 || as_before(va, ia, vb, ib, n, a.desc))) {
            y[k] = ia;
            if (++i < len0) ia = A[i], va = AS_X(x, ia);
        } else {
            y[k] = ib;
            if (++j < len1) ib = Bv[j], vb = AS_X(x, ib);
        }
    }
}
