/* MUL_MAT_ID and ADD_ID.
 *
 * MUL_MAT_ID: ct_mul_mv_id_<t>_f32, made for every src0 type by mul_mat.cl's MM_KERNELS
 * (MMID_KERNELS below, expanded there): one dst row (i1, i2) per work-group column z =
 * i1 + i2 * n_used; it reads the expert e = ids[i1, i2] and runs MUL_MAT's mat-vec body
 * (mm_mv_n) on expert e's matrix and src1 row (i1 % ne11, i2) as a one-row product, as
 * ggml-metal's mul_mv_id does; an id outside [0, n_as) gives zeros.
 * ADD_ID: ct_add_id_<t>: one work-group row per dst row, floats added and rounded once. */

#define MMID_KERNELS(name, T)                                                                                     \
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
