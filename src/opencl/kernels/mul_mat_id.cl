/* MUL_MAT_ID and ADD_ID.
 *
 * MUL_MAT_ID, few tokens: ct_mul_mv_id_<t>_f32, made for every src0 type by mul_mat.cl's
 * MM_KERNELS (MMID_KERNELS below, expanded there): one dst row (i1, i2) per work-group
 * column z = i1 + i2 * n_used; it reads the expert e = ids[i1, i2] and runs MUL_MAT's
 * mat-vec body (mm_mv_n) on expert e's matrix and src1 row (i1 % ne11, i2) as a one-row
 * product, as ggml-metal's mul_mv_id does; an id outside [0, n_as) gives zeros.
 * MUL_MAT_ID, many tokens (grouped, as ggml-metal's and ggml-cuda's mul_mm_id): first
 * ct_mul_mm_id_map, one work-group, lists for each expert the entries v = i2 * n_used + i1
 * routed to it (the CT_MMID_MAP_* layout of kernel_args.h in the work memory; ids outside
 * [0, n_as) in an extra list n_as); then ct_mul_mm_id_<t>_f32 / ct_mul_mm128_id_<t>_f32 /
 * ct_mul_mmtc_id_<t>_f32 (tensor cores), MUL_MAT's tiled kernels (mm_mm_tile, mm_mm128_tile,
 * mul_mm_tc.cl's mm_tc_tile_f32y) with the work-group's expert in
 * dim 2, reading src1 rows and writing dst rows through the expert's list, so each tile of
 * an expert's weights is read once for up to 64 or 128 of its rows. List n_as writes zeros.
 * ADD_ID: ct_add_id_<t>: one work-group row per dst row, floats added and rounded once. */

/* The per-expert lists: counts with local atomics, offsets by a prefix sum, then each
 * entry placed at its expert's next free slot. The order within a list varies from run to
 * run; the results do not, since each dst row is computed on its own. */
__kernel void ct_mul_mm_id_map(__global const uchar *ids, ulong offsi, __global uchar *work, ulong offsm,
                               const ct_mul_mat_id_args a, __local int *lc) {
    const int tid = get_local_id(0), nt = get_local_size(0), nl = a.n_as + 1, n_ids = a.n_used * a.n_tokens;
    __local int *cnt = lc, *cur = lc + nl;
    __global int *m = (__global int *)(work + offsm);
    for (int e = tid; e < nl; e += nt) cnt[e] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int v = tid; v < n_ids; v += nt) {
        const int i1 = v % a.n_used, i2 = v / a.n_used;
        const int e = *(const __global int *)(ids + offsi + (ulong)i1 * a.nbi0 + (ulong)i2 * a.nbi1);
        atomic_inc(&cnt[e >= 0 && e < a.n_as ? e : a.n_as]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid == 0) {
        int s = 0;
        for (int e = 0; e < nl; e++) {
            cur[e] = s;
            s += cnt[e];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = tid; e < nl; e += nt) {
        m[CT_MMID_MAP_COUNT(e)] = cnt[e];
        m[CT_MMID_MAP_OFFSET(a.n_as, e)] = cur[e];
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* the starts are read before the placing moves them */
    for (int v = tid; v < n_ids; v += nt) {
        const int i1 = v % a.n_used, i2 = v / a.n_used;
        const int e = *(const __global int *)(ids + offsi + (ulong)i1 * a.nbi0 + (ulong)i2 * a.nbi1);
        m[CT_MMID_MAP_LIST(a.n_as) + atomic_inc(&cur[e >= 0 && e < a.n_as ? e : a.n_as])] = v;
    }
}

/* A grouped kernel's arguments and the expert's list: its rows, as mm_rows. */
#define MMID_TILE_ARGS(SCRATCH_T, SCRATCH)                                                                       \
    __global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1, __global uchar *dst,     \
        ulong offsd, __global const uchar *work, ulong offsm, const ct_mul_mat_id_args a,                     \
        __local SCRATCH_T *SCRATCH
#define MMID_LIST()                                                                                               \
    const int e = get_group_id(2);                                                                                \
    const __global int *m = (const __global int *)(work + offsm);                                                 \
    const int n1 = m[CT_MMID_MAP_COUNT(e)];                                                                       \
    const mm_rows rows = {m + CT_MMID_MAP_LIST(a.n_as) + m[CT_MMID_MAP_OFFSET(a.n_as, e)], a.n_used, a.ne11, a.nb11, \
                       a.nb12, a.nb1, a.nb2};                                                                     \
    const __global uchar *x0 = src0 + offs0 + (ulong)e * a.nb02, *y0 = src1 + offs1;                             \
    __global uchar *d0 = dst + offsd

/* The tiles of an expert's rows: dim 1 spans up to n_tokens rows; an expert listed more
 * often (an id repeated within a token) loops. n1 and e are the same for the whole
 * work-group, so every work-item meets the tiles' barriers. List n_as (ids outside
 * [0, n_as)) gets zeros in its dst rows instead. */
#define MMID_TILES(TILE, T, BM, BN, SCRATCH)                                                                      \
    MMID_LIST();                                                                                                  \
    const int r0 = get_group_id(0) * BM;                                                                          \
    if (e == a.n_as) {                                                                                            \
        for (int r1 = get_group_id(1) * BN; r1 < n1; r1 += get_num_groups(1) * BN)                                \
            for (int i = get_local_id(0); i < BM * BN; i += get_local_size(0)) {                                  \
                const int r = r0 + i % BM, c = r1 + i / BM;                                                       \
                if (r < a.ne01 && c < n1) ((__global float *)(d0 + mm_doff(1, rows, c)))[r] = 0.0f;              \
            }                                                                                                     \
        return;                                                                                                   \
    }                                                                                                             \
    for (int r1 = get_group_id(1) * BN; r1 < n1; r1 += get_num_groups(1) * BN) {                                 \
        TILE(T, 1, x0, y0, d0, a.ne00, a.ne01, a.nb01, r0, r1, n1, rows, SCRATCH);                                \
        barrier(CLK_LOCAL_MEM_FENCE); /* the next tile rewrites the local memory */                               \
    }

#define MMTID_KERNELS(name, T)                                                                                    \
    __kernel void ct_mul_mm128_id_##name##_f32(MMID_TILE_ARGS(float4, scratch4)) {                                \
        MMID_TILES(mm_mm128_tile, T, MMT_BM, MMT_BN, scratch4)                                                     \
    }

/* On the tensor cores (mul_mm_tc.cl's tiles; expanded there, where they are built) */
#define MMTCID_KERNELS(name, T)                                                                                   \
    __kernel void ct_mul_mmtc_id_##name##_f32(MMID_TILE_ARGS(uint4, scratch4)) {                                  \
        MMID_TILES(mm_tc_tile_f32y, T, CT_MMTC_BM, CT_MMTC_BN, scratch4)                                               \
    }

#define MMID_KERNELS(name, T)                                                                                     \
    __kernel void ct_mul_mm_id_##name##_f32(MMID_TILE_ARGS(float, scratch)) {                                     \
        MMID_TILES(mm_mm_tile, T, MM_BM, MM_BN, scratch)                                                           \
    }                                                                                                             \
    __kernel void ct_mul_mv_id_##name##_f32(__global const uchar *src0, ulong offs0, __global const uchar *src1,  \
                                            ulong offs1, __global uchar *dst, ulong offsd,                       \
                                            __global const uchar *ids, ulong offsi, const ct_mul_mat_id_args a,  \
                                            __local float *scratch) {                                            \
        const int z = get_group_id(2), i1 = z % a.n_used, i2 = z / a.n_used;                                   \
        const int e = *(const __global int *)(ids + offsi + (ulong)i1 * a.nbi0 + (ulong)i2 * a.nbi1);          \
        const ulong od = offsd + (ulong)i1 * a.nb1 + (ulong)i2 * a.nb2;                                         \
        if (e < 0 || e >= a.n_as) {                                                                             \
            const int r0 = (get_group_id(0) * get_local_size(1) + get_local_id(1)) * MV_NR0;                    \
            if (get_local_id(0) == 0)                                                                           \
                for (int r = r0; r < min(r0 + MV_NR0, a.ne01); r++) ((__global float *)(dst + od))[r] = 0.0f;  \
            return;                                                                                             \
        }                                                                                                       \
        mm_mv_n(T, MV_NR0, 1, src0, offs0 + (ulong)e * a.nb02, src1,                                             \
                offs1 + (ulong)(i1 % a.ne11) * a.nb11 + (ulong)i2 * a.nb12, dst, od, a.ne00, a.ne01, a.nb01, 0, \
                0, 1, 1, 4, a.nb11, 0, 0, a.nb1, 0, 0, 1, 1, scratch);                                          \
    }

#define ADD_ID_KERNEL(name, T, LOAD, STORE)                                                                      \
    __kernel void ct_add_id_##name(__global const uchar *src0, ulong offs0, __global const uchar *src1,          \
                                   ulong offs1, __global uchar *dst, ulong offsd, __global const uchar *ids,     \
                                   ulong offsi, const ct_add_id_args a) {                                        \
        const int r = get_group_id(0) * get_local_size(1) + get_local_id(1);                                    \
        if (r >= a.nrows) return;                                                                               \
        const int i1 = r % a.ne1, i2 = (r / a.ne1) % a.ne2, i3 = r / (a.ne1 * a.ne2);                          \
        const __global T *x = (const __global T *)(src0 + offs0 + (ulong)i1 * a.nb01 + (ulong)i2 * a.nb02 +     \
                                                   (ulong)i3 * a.nb03);                                          \
        __global T *d = (__global T *)(dst + offsd + (ulong)i1 * a.nb1 + (ulong)i2 * a.nb2 + (ulong)i3 * a.nb3); \
        const int e = *(const __global int *)(ids + offsi + (ulong)i1 * a.nbi0 + (ulong)i2 * a.nbi1);          \
        if (e < 0 || e >= a.n_as) {                                                                             \
            for (int i = get_local_id(0); i < a.ne0; i += get_local_size(0)) STORE(LOAD(x, i), d, i);            \
            return;                                                                                             \
        }                                                                                                       \
        const __global T *y = (const __global T *)(src1 + offs1 + (ulong)e * a.nb11);                          \
        for (int i = get_local_id(0); i < a.ne0; i += get_local_size(0))                                         \
            STORE(ct_xadd(LOAD(x, i), LOAD(y, i)), d, i); /* the CPU's NaNs */                                  \
    }

#define ADD_ID_LD_F32(p, i) ((p)[i])
#define ADD_ID_ST_F32(v, p, i) ((p)[i] = (v))
/* F16 through fp16.cl's conversions, the CPU's (NaN payloads included) */
#define ADD_ID_LD_F16(p, i) ct_half_to_float((p)[i])
#define ADD_ID_ST_F16(v, p, i) ((p)[i] = ct_float_to_half(v))
ADD_ID_KERNEL(f32, float, ADD_ID_LD_F32, ADD_ID_ST_F32)
ADD_ID_KERNEL(f16, ushort, ADD_ID_LD_F16, ADD_ID_ST_F16)
