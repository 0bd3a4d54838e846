/* SUM_ROWS and MEAN of F32 rows: float sums per work-item, then a tree (ct_red_sum,
 * reduce.cl). Work-group (nx, ny): local row ly sums row get_group_id(0)*ny + ly;
 * elements are nb00 bytes apart. */

#define SR_ARGS                                                                                          \
    __global const uchar *src, ulong offs, __global uchar *dst, ulong offsd, int ne00, int ne01, int ne02, \
        int nrows, ulong nb00, ulong nb01, ulong nb02, ulong nb03, ulong nb1, ulong nb2, ulong nb3,          \
        __local float *scratch

void sr_rows(const bool mean, SR_ARGS) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    const int row = get_group_id(0) * get_local_size(1) + get_local_id(1);
    const int rr = min(row, nrows - 1);
    const int i01 = rr % ne01, i02 = (rr / ne01) % ne02, i03 = rr / (ne01 * ne02);
    const __global uchar *x = src + offs + (ulong)i01 * nb01 + (ulong)i02 * nb02 + (ulong)i03 * nb03;
    float s = 0.0f;
    for (int i = lx; i < ne00; i += nx) s += *(const __global float *)(x + (ulong)i * nb00);
    s = ct_red_sum(s, scratch);
    if (row < nrows && lx == 0) {
        __global float *y = (__global float *)(dst + offsd + (ulong)i01 * nb1 + (ulong)i02 * nb2 + (ulong)i03 * nb3);
        *y = mean ? s / (float)ne00 : s;
    }
}

/* A kernel's arguments: the tensors, ct_sum_rows_args (kernel_args.h), the scratch. */
#define SR_KERNEL_ARGS                                                                                      \
    __global const uchar *src, ulong offs, __global uchar *dst, ulong offsd, const ct_sum_rows_args a,      \
        __local float *scratch
#define SR_PASS(mean)                                                                                       \
    sr_rows(mean, src, offs, dst, offsd, a.ne00, a.ne01, a.ne02, a.nrows, a.nb00, a.nb01, a.nb02, a.nb03, a.nb1, \
            a.nb2, a.nb3, scratch)

__kernel void ct_sum_rows_f32(SR_KERNEL_ARGS) { SR_PASS(false); }

__kernel void ct_mean_f32(SR_KERNEL_ARGS) { SR_PASS(true); }
