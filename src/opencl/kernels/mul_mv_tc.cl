/* MUL_MAT with a few src1 rows (2 to CT_MVTC_MAX_N) on NVIDIA's tensor cores:
 * ct_mul_mvtc_<t>_f32. The mat-vec kernels' fp32 FMAs grow with the src1 rows while the
 * weight bytes do not, so from a few rows they are bound by instructions; here each warp
 * runs m16n8k16 products (mul_mm_tc.cl's tc_mma: PTX mma.sync, or its emulation) on 16
 * src0 rows x 8 src1 rows straight from registers, and the kernel stays bound by the
 * weights' bytes. F16 and BF16 src0 (the quantized types' 8-bit mat-vec is not bound by
 * its multiply-adds), operands as mul_mm_tc.cl's: src1 rounded to src0's type.
 *
 * Work-group: CT_MVTC_WARPS warps on 16 src0 rows and 8 src1 rows (group (i, j, batch):
 * rows 16i.., src1 rows 8j..); the warps split k. A product's k order is free as long as A
 * and B follow the same one, so lane (g, q) feeds the 16 k of an instruction from the 8
 * consecutive values of its own group of 8 (group 4c + q of chunk c: four lanes read a
 * row's 64 contiguous bytes of F16), A's rows g and g + 8 and B's row g alike: no
 * exchange between lanes, no local memory on the way. The warps' partial sums meet in
 * local memory in a fixed order (deterministic). */

#if CT_HAS_NV_MMA || CT_MMA_EMULATE

#define TV_U 2 /* chunks (32 k) per warp and step, their loads issued together */

void mv_tc(const int t, MM_ARGS) {
    const int bf = t == MM_BF16;
    const int tid = get_local_id(0), lane = tid & 31, w = tid >> 5, g = lane >> 2, q = lane & 3;
    const int r0 = get_group_id(0) * 16, c0 = get_group_id(1) * 8;
    const int im = get_group_id(2), i12 = im % ne12, i13 = im / ne12;
    const __global uchar *x0 = src0 + offs0 + (ulong)(i12 / r2) * nb02 + (ulong)(i13 / r3) * nb03;
    /* rows past ne01 read the last row (never stored); src1 rows past ne11 are zeros */
    const __global uchar *xlo = x0 + (ulong)min(r0 + g, ne01 - 1) * nb01;
    const __global uchar *xhi = x0 + (ulong)min(r0 + g + 8, ne01 - 1) * nb01;
    const __global float *y =
        (const __global float *)(src1 + offs1 + (ulong)i12 * nb12 + (ulong)i13 * nb13 +
                                 (ulong)min(c0 + g, ne11 - 1) * nb11);
    const int xa16 = ((ulong)x0 & 15) == 0 && (nb01 & 15) == 0;
    const int ya16 = ((ulong)y & 15) == 0;
    /* the emulation's exchange area, then the warps' partial sums */
    __local uint *xch = (__local uint *)scratch;
    __local float *part = scratch + (CT_HAS_NV_MMA ? 0 : CT_MVTC_WARPS * CT_MMTC_XCH_WORDS);

    const int ngroups = (ne00 + 7) / 8, nchunks = (ngroups + 3) / 4;
    const int steps = (nchunks + CT_MVTC_WARPS * TV_U - 1) / (CT_MVTC_WARPS * TV_U);
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    /* the same number of steps for every warp: the emulation's barriers need it */
    for (int s = 0; s < steps; s++) {
        uint4 al[TV_U], ah[TV_U], bv[TV_U];
#pragma unroll
        for (int u = 0; u < TV_U; u++) {
            /* neighbouring warps on neighbouring chunks */
            const int gi = 4 * ((s * TV_U + u) * CT_MVTC_WARPS + w) + q;
            float8 yv = (float8)0.0f;
            al[u] = (uint4)0, ah[u] = (uint4)0;
            if (gi < ngroups) {
                if (c0 + g < ne11) yv = mm_ld8y(y, gi, ne00, ya16);
                al[u] = mmt_raw16(xlo, gi, ne00, xa16);
                ah[u] = mmt_raw16(xhi, gi, ne00, xa16);
            }
            bv[u] = tc_pack8(yv, bf);
        }
#pragma unroll
        for (int u = 0; u < TV_U; u++) {
            /* values 0-3 of the group as the instruction's k 2q, 2q+1, 2q+8, 2q+9, then 4-7 */
            const uint a0[4] = {al[u].s0, ah[u].s0, al[u].s1, ah[u].s1}, b0[2] = {bv[u].s0, bv[u].s1};
            tc_mma(c, a0, b0, xch, bf);
            const uint a1[4] = {al[u].s2, ah[u].s2, al[u].s3, ah[u].s3}, b1[2] = {bv[u].s2, bv[u].s3};
            tc_mma(c, a1, b1, xch, bf);
        }
    }

    /* c[e]: row g + 8 (e >> 1), src1 row 2q + (e & 1); summed over the warps in order */
#pragma unroll
    for (int e = 0; e < 4; e++) part[(w * 32 + lane) * 4 + e] = c[e];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid < 128) {
        const int l = tid >> 2, e = tid & 3;
        float sum = 0.0f;
        for (int v = 0; v < CT_MVTC_WARPS; v++) sum += part[(v * 32 + l) * 4 + e];
        const int r = r0 + (l >> 2) + 8 * (e >> 1), col = c0 + 2 * (l & 3) + (e & 1);
        if (r < ne01 && col < ne11)
            ((__global float *)(dst + offsd + (ulong)i12 * nb2 + (ulong)i13 * nb3 + (ulong)col * nb1))[r] = sum;
    }
}

#define MVTC_KERNELS(name, T)                                                                            \
    __kernel void ct_mul_mvtc_##name##_f32(MM_KERNEL_ARGS(float, scratch)) { mv_tc(T, MM_KERNEL_PASS(scratch)); }
MVTC_KERNELS(f16, MM_F16)
MVTC_KERNELS(bf16, MM_BF16)

#endif /* CT_HAS_NV_MMA || CT_MMA_EMULATE */
