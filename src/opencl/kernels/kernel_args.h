/* What the encoders (C) and the kernels (OpenCL C) must agree on, declared once and
 * included by both: the encoders #include it, library.c puts it first in every program.
 *
 * Scalar arguments of the kernel families with many of them travel as one struct
 * passed by value (OpenCL 1.2 allows structs as kernel arguments). The layouts hold
 * on both sides by construction: fixed-width fields, 8-byte ones first, then 4-byte
 * ones, padded to a multiple of 8 bytes by hand, so no compiler inserts padding; the
 * sizes are asserted on both sides, the offsets of the first 4-byte field on the C side
 * and where the OpenCL compiler has __builtin_offsetof (clang-based ones) on that side. */
#ifndef CT_OPENCL_KERNEL_ARGS_H
#define CT_OPENCL_KERNEL_ARGS_H

#ifdef __OPENCL_VERSION__
typedef ulong ct_u64;
typedef long ct_i64;
typedef uint ct_u32;
typedef int ct_i32;
typedef float ct_f32;
#define CT_ARGS_ASSERT(name, cond) typedef char ct_args_assert_##name[(cond) ? 1 : -1]
#if defined(__clang__)
#define CT_ARGS_OFFSET_ASSERT(name, type, field, off) CT_ARGS_ASSERT(name, __builtin_offsetof(type, field) == (off))
#else
#define CT_ARGS_OFFSET_ASSERT(name, type, field, off)
#endif
#else
#include <stddef.h>
#include <stdint.h>
typedef uint64_t ct_u64;
typedef int64_t ct_i64;
typedef uint32_t ct_u32;
typedef int32_t ct_i32;
typedef float ct_f32;
#define CT_ARGS_ASSERT(name, cond) _Static_assert(cond, #name)
#define CT_ARGS_OFFSET_ASSERT(name, type, field, off) CT_ARGS_ASSERT(name, offsetof(type, field) == (off))
#endif

/* ---- constants -------------------------------------------------------------------- */

/* mul_mat.cl: the mat-vec's src0 rows per local row and src1 rows per work-group; the
 * 128x128 tiled kernel's k step and local row (its local memory: A and B [BK][LD], and
 * IQ4_NL's table of 16 floats). */
#define CT_MV_NR0 2
#define CT_MV_NR1 4
#define CT_MMT_BK 16
#define CT_MMT_LD (128 + 4)
#define CT_MMT_LOCAL_FLOATS (2 * CT_MMT_BK * CT_MMT_LD + 16)
/* mul_mm_tc.cl: the tensor-core kernel's shape: a grid of CT_MMTC_WARPS_M x CT_MMTC_WARPS_N
 * warps, each CT_MMTC_TM x CT_MMTC_TN products of 16 src0 rows x 8 src1 rows; k steps of
 * CT_MMTC_BK; local rows of CT_MMTC_BK 16-bit values and 8 of padding (CT_MMTC_LDW words:
 * the 8 rows x 4 words of a fragment load then hit 32 distinct banks); its local memory
 * (A and B tiles, twice: one is filled while the other is read; IQ4_NL's table of 16
 * floats) and the words per warp its emulation adds. */
#ifndef CT_MMTC_WARPS_M
#define CT_MMTC_WARPS_M 2
#define CT_MMTC_WARPS_N 4
#define CT_MMTC_TM 4
#define CT_MMTC_TN 4
#endif
#define CT_MMTC_BK 32
#define CT_MMTC_WG (32 * CT_MMTC_WARPS_M * CT_MMTC_WARPS_N)
#define CT_MMTC_BM (16 * CT_MMTC_TM * CT_MMTC_WARPS_M)
#define CT_MMTC_BN (8 * CT_MMTC_TN * CT_MMTC_WARPS_N)
#define CT_MMTC_LDW (CT_MMTC_BK / 2 + 4)
#define CT_MMTC_LOCAL_BYTES (4 * (2 * (CT_MMTC_BM + CT_MMTC_BN) * CT_MMTC_LDW + 16))
#define CT_MMTC_XCH_WORDS 192
#define CT_MMTC_EMULATE_BYTES (4 * (CT_MMTC_WG / 32) * CT_MMTC_XCH_WORDS)
/* mul_mv_tc.cl: the tensor-core mat-vec's warps (they split k), the src1 rows it takes
 * (2 to CT_MVTC_MAX_N, 8 a work-group), its local memory (the warps' partial sums) and what
 * its emulation adds (mul_mm_tc.cl's exchange words per warp). */
#define CT_MVTC_WARPS 8
#define CT_MVTC_WG (32 * CT_MVTC_WARPS)
#define CT_MVTC_MAX_N 15
#define CT_MVTC_LOCAL_BYTES (4 * CT_MVTC_WARPS * 32 * 4)
#define CT_MVTC_EMULATE_BYTES (4 * CT_MVTC_WARPS * CT_MMTC_XCH_WORDS)
/* flash_attn_tc.cl: FLASH_ATTN_EXT on the tensor cores: a work-group of CT_FATC_WG work-items
 * (4 warps) takes CT_FATC_BQ query rows of one head over the keys in tiles of CT_FATC_BK;
 * head sizes multiples of 16 up to CT_FATC_MAX_D. Its local memory, in 32-bit words: Q as
 * 16-bit rows of Dk values and 8 of padding (CT_FATC_LDQ), the tile of K (rows as Q's) or of
 * V (transposed: Dv rows of CT_FATC_LDP words), the scores (CT_FATC_LDS floats a row), the
 * probabilities as 16-bit rows (CT_FATC_LDP), two partial sums a work-item, each row's max,
 * sum and rescale, a flag a key and the tile's skip flags; the emulation adds mul_mm_tc.cl's
 * exchange words per warp. The padding puts a fragment load's 8 rows x 4 words on 32
 * distinct banks. */
#define CT_FATC_WG 128
#define CT_FATC_BQ 32
#define CT_FATC_BK 32
#define CT_FATC_MAX_D 256
#define CT_FATC_LDQ(dk) ((dk) / 2 + 4)
#define CT_FATC_LDP (CT_FATC_BK / 2 + 4)
#define CT_FATC_LDS (CT_FATC_BK + 1)
#define CT_FATC_KV_WORDS(dk, dv)                                                                 \
    (CT_FATC_BK * CT_FATC_LDQ(dk) > (dv) * CT_FATC_LDP ? CT_FATC_BK * CT_FATC_LDQ(dk) : (dv) * CT_FATC_LDP)
#define CT_FATC_LOCAL_WORDS(dk, dv)                                                              \
    (CT_FATC_BQ * CT_FATC_LDQ(dk) + CT_FATC_KV_WORDS(dk, dv) + CT_FATC_BQ * CT_FATC_LDS +        \
     CT_FATC_BQ * CT_FATC_LDP + 2 * CT_FATC_WG + 3 * CT_FATC_BQ + CT_FATC_BK + 4)
#define CT_FATC_EMULATE_BYTES (4 * (CT_FATC_WG / 32) * CT_MMTC_XCH_WORDS)
/* mul_mvq.cl: src0 rows per team, src1 rows per work-group, work-items of a team, src0
 * values per work-item step, and ct_quantize_qy's work-group (8 blocks of 8 work-items: a group of
 * blocks sharing one scale, ct_qy_group, never spans two work-groups). */
#define CT_MVQ_NR0 2
#define CT_MVQ_NR1 8
#define CT_MVQ_TEAM 32
#define CT_MVQ_UNIT 64
#define CT_QY_WG 64
/* The 32-bit words a lane of a team loads per chunk and row, for chunks of chunk_bytes
 * (CT_MVQ_TEAM units of a row). */
#define CT_MVQ_LANE_WORDS(chunk_bytes) (((chunk_bytes) + 4 * CT_MVQ_TEAM - 1) / (4 * CT_MVQ_TEAM))

/* The row engine (get_rows.cl, set_rows.cl, cpy.cl): how a job's row i1 of slice
 * (i2, i3) maps; the most units a work-item of ct_rows8 and ct_rows_staged takes
 * (ct_rows4: 4) and of ct_cpy_rows_raw; ct_cpy_flat's most 16-byte chunks a work-item;
 * ct_quant_rows' largest local size (its local arrays are sized for it; IQ4_NL's is
 * smaller), its slice (local sizes are multiples of it) and the blocks a team takes
 * (ct_quant_rows_wide: CT_QT_NPER_WIDE); ct_rows_staged's local array in 16-byte words
 * (1024 units of Q8_K: 16 blocks of 292 bytes). */
#define CT_ROWS_CPY 0
#define CT_ROWS_GET 1
#define CT_ROWS_SET 2
#define CT_ROWS_NPER 8
#define CT_CPY_NPER 4
#define CT_CPY_FLAT_MAX 8
#define CT_QT_WG 256
#define CT_QT_WG_IQ4_NL 128
#define CT_QT_SLICE 32
#define CT_QT_NPER 2
#define CT_QT_NPER_WIDE 4
#define CT_STAGE_WORDS 292

/* cpy.cl's unit kinds. */
#define CT_CPY_RAW 0
#define CT_CPY_CONVERT 1
#define CT_CPY_QUANT 2
#define CT_CPY_DEQ 3

/* ---- argument structs -------------------------------------------------------------- */

/* NORM, RMS_NORM, L2_NORM and GROUP_NORM (norm.cl): src0 [ne00, ne01, ne02, ...] with
 * strides nb00.., dst's strides nb0..; nrows rows in all; GROUP_NORM's channels (dim 2)
 * per group. */
typedef struct ct_norm_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb0, nb1, nb2, nb3;
    ct_i32 ne00, ne01, ne02, nrows;
    ct_i32 channels_per_group;
    ct_f32 eps;
} ct_norm_args;
CT_ARGS_ASSERT(norm_args_size, sizeof(ct_norm_args) == 88);
CT_ARGS_OFFSET_ASSERT(norm_args_ne00, ct_norm_args, ne00, 64);

/* RMS_NORM fused with the MUL by its weight, and optionally the ADD after it (norm.cl's
 * ct_rms_norm_mul_f32): the weight w of packed F32 rows [ne10, ne11, ne12, ne13] repeating
 * over the norm's shape, with strides nbw1..; w_first: the MUL's operands are (w, norm), else
 * (norm, w). add: 0 no ADD, 1 ADD(product, r), 2 ADD(r, product), r of packed F32 rows of the
 * norm's shape with strides nbr1... ct_norm_args then holds the last fused node's
 * destination strides in nb0.. pre_add: the norm's input is ADD(src, p) (ct_add_rms_norm_mul_f32),
 * src, p and the sum (written too: the ADD's result) in one layout, src's strides nb00.. */
typedef struct ct_norm_mul_args {
    ct_u64 nbw1, nbw2, nbw3;
    ct_u64 nbr1, nbr2, nbr3;
    ct_i32 ne10, ne11, ne12, ne13;
    ct_i32 w_first, add;
    ct_i32 pre_add, pad0;
} ct_norm_mul_args;
CT_ARGS_ASSERT(norm_mul_args_size, sizeof(ct_norm_mul_args) == 80);

/* SUM_ROWS and MEAN (sum_rows.cl): as ct_norm_args, dst's rows one element. */
typedef struct ct_sum_rows_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb1, nb2, nb3;
    ct_i32 ne00, ne01, ne02, nrows;
} ct_sum_rows_args;
CT_ARGS_ASSERT(sum_rows_args_size, sizeof(ct_sum_rows_args) == 72);
CT_ARGS_OFFSET_ASSERT(sum_rows_args_ne00, ct_sum_rows_args, ne00, 56);

/* SOFT_MAX (soft_max.cl): src0 [ne00, ne01, ne02, ne03] with strides nb00.., the mask's
 * strides nb10.. and its broadcast dims ne12, ne13 (mask_type: 0 none, 1 F32, 2 F16), the
 * sinks' stride nbs0 (has_sinks), dst's strides nb1.. (dst's elements are packed); ALiBi's
 * n_head_log2, m0 and m1 as the host computed them (max_bias > 0). */
typedef struct ct_soft_max_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb10, nb11, nb12, nb13;
    ct_u64 nb1, nb2, nb3;
    ct_u64 nbs0;
    ct_i32 ne00, ne01, ne02, ne12, ne13;
    ct_i32 mask_type, has_sinks, n_head_log2;
    ct_f32 scale, max_bias, m0, m1;
} ct_soft_max_args;
CT_ARGS_ASSERT(soft_max_args_size, sizeof(ct_soft_max_args) == 144);
CT_ARGS_OFFSET_ASSERT(soft_max_args_ne00, ct_soft_max_args, ne00, 96);

/* MUL_MAT (mul_mat.cl, mul_mvq.cl): dst[r0, r1, i12, i13] = sum_k src0[k, r0, i12/r2,
 * i13/r3] * src1[k, r1, i12, i13]. The 8-bit path reads src1 as work_rows rows
 * quantized into the work memory by ct_quantize_qy (q6_k: in Q6_K's units; qy_group:
 * blocks sharing one scale, 1 or 8, src/types/types_internal.h's ct_qy_group). */
typedef struct ct_mul_mat_args {
    ct_u64 nb01, nb02, nb03;
    ct_u64 nb10, nb11, nb12, nb13;
    ct_u64 nb1, nb2, nb3;
    ct_u64 work_rows;
    ct_i32 ne00, ne01, ne11, ne12;
    ct_i32 r2, r3;
    ct_i32 q6_k;
    ct_i32 qy_group;
} ct_mul_mat_args;
CT_ARGS_ASSERT(mul_mat_args_size, sizeof(ct_mul_mat_args) == 120);
CT_ARGS_OFFSET_ASSERT(mul_mat_args_ne00, ct_mul_mat_args, ne00, 88);

/* MUL_MAT_ID (mul_mat_id.cl; its kernels per src0 type are made in mul_mat.cl): dst row
 * (i1, i2) = src0's expert ids[i1, i2] times src1 row (i1 % ne11, i2); an id outside
 * [0, n_as) gives zeros. n_tokens = ids' ne1 = dst's ne2. */
typedef struct ct_mul_mat_id_args {
    ct_u64 nb01, nb02;
    ct_u64 nb11, nb12;
    ct_u64 nb1, nb2;
    ct_u64 nbi0, nbi1;
    ct_i32 ne00, ne01, ne11, n_used, n_as;
    ct_i32 n_tokens;
} ct_mul_mat_id_args;
/* The grouped path's expert lists (ct_mul_mm_id_map), ints in the work memory: the count
 * of each list e in [0, n_as] (list n_as: ids outside [0, n_as)), then each list's start
 * in the entries, then the entries v = i2 * n_used + i1, list after list. */
#define CT_MMID_MAP_COUNT(e) (e)
#define CT_MMID_MAP_OFFSET(n_as, e) ((n_as) + 1 + (e))
#define CT_MMID_MAP_LIST(n_as) (2 * ((n_as) + 1))
CT_ARGS_ASSERT(mul_mat_id_args_size, sizeof(ct_mul_mat_id_args) == 88);
CT_ARGS_OFFSET_ASSERT(mul_mat_id_args_ne00, ct_mul_mat_id_args, ne00, 64);

/* ADD_ID (mul_mat_id.cl): dst[:, i1, i2, i3] = src0[:, i1, i2, i3] + src1[:, ids[i1, i2]]
 * (nothing added for an id outside [0, n_as)); rows packed, F32 or F16. */
typedef struct ct_add_id_args {
    ct_u64 nb01, nb02, nb03;
    ct_u64 nb11;
    ct_u64 nb1, nb2, nb3;
    ct_u64 nbi0, nbi1;
    ct_i32 ne0, ne1, ne2, n_as;
    ct_i32 nrows;
    ct_i32 pad0;
} ct_add_id_args;
CT_ARGS_ASSERT(add_id_args_size, sizeof(ct_add_id_args) == 96);
CT_ARGS_OFFSET_ASSERT(add_id_args_ne0, ct_add_id_args, ne0, 72);

/* GET_ROWS's kernels ct_get_rows_<t> (get_rows.cl): dst row i10 of slice (i11, i12) from
 * src0 row src1[i10, i11, i12]; src0 [ne00, ne01, ...], ne10 indices a slice; whether
 * src0's and dst's elements are 4-byte aligned. */
typedef struct ct_get_rows_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb10, nb11, nb12;
    ct_u64 nb0, nb1, nb2, nb3;
    ct_i64 ne00, ne01, ne10;
    ct_i32 src_aligned, dst_aligned;
} ct_get_rows_args;
CT_ARGS_ASSERT(get_rows_args_size, sizeof(ct_get_rows_args) == 120);
CT_ARGS_OFFSET_ASSERT(get_rows_args_src_aligned, ct_get_rows_args, src_aligned, 112);

/* SET_ROWS's kernels ct_set_rows_<t> (set_rows.cl): src0 row i01 of slice (i02, i03) into
 * dst row src1[i01, i02 % ne11, i03 % ne12] (< ne1); nk0 units a row (elements, or blocks
 * of a block type); is64: I64 indices; src_f16: an F16 source; whether src0's elements and
 * dst's are aligned to their size. */
typedef struct ct_set_rows_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb10, nb11, nb12;
    ct_u64 nb1, nb2, nb3;
    ct_i64 nk0, ne01, ne11, ne12, ne1;
    ct_i32 is64, src_f16, src_aligned, dst_aligned;
} ct_set_rows_args;
CT_ARGS_ASSERT(set_rows_args_size, sizeof(ct_set_rows_args) == 136);
CT_ARGS_OFFSET_ASSERT(set_rows_args_is64, ct_set_rows_args, is64, 120);

/* CPY's general kernel ct_cpy (cpy.cl): src0 [ne00, ne01, ne02, ...] with strides nb00..,
 * dst [ne0, ne1, ne2, ...] with strides nb0.. (dflat: dst contiguous, taken as one flat
 * row of 2^dshift-element blocks); mode CT_CPY_*; q elements a unit (ts: the unit's bytes
 * for RAW, the source block size for DEQ); nk units a row in nseg segments of seglen;
 * salign/dalign the alignments the tensors' elements have. */
typedef struct ct_cpy_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb0, nb1, nb2, nb3;
    ct_i64 ne00, ne01, ne02;
    ct_i64 ne0, ne1, ne2;
    ct_i64 q, nk, nseg, seglen;
    ct_i32 dflat, dshift, mode, stype, dtype;
    ct_u32 ts, salign, dalign;
} ct_cpy_args;
CT_ARGS_ASSERT(cpy_args_size, sizeof(ct_cpy_args) == 176);
CT_ARGS_OFFSET_ASSERT(cpy_args_dflat, ct_cpy_args, dflat, 144);

/* The row engine's fast kernels, ct_rows4/ct_rows8/ct_rows_staged (get_rows.cl) and
 * ct_quant_rows (set_rows.cl): rows (i1 < nr1, i2, i3) of ne0 elements (ct_quant_rows:
 * ne0 counts 32-blocks), in nseg segments of nper units a work-item; source row
 * strides nb01..nb03, destination nb1..nb3; mode CT_ROWS_*, the index tensor's
 * (is64, its dims 1 and 2, strides nb10..nb12) and the bound lim of indexed rows;
 * type the destination's (ct_rows*) or source's (ct_quant_rows) ct_type; check_all: every
 * work-item checks the whole index list (nr1 x ne11 x ne12) before its row (ct_indices_ok). */
typedef struct ct_rows_args {
    ct_i64 ne0, nr1, nseg;
    ct_u64 nb01, nb02, nb03;
    ct_u64 nb1, nb2, nb3;
    ct_i64 ne11, ne12;
    ct_u64 nb10, nb11, nb12;
    ct_i64 lim;
    ct_i32 nper, mode, is64, type;
    ct_i32 check_all, pad0;
} ct_rows_args;
CT_ARGS_ASSERT(rows_args_size, sizeof(ct_rows_args) == 144);
CT_ARGS_OFFSET_ASSERT(rows_args_nper, ct_rows_args, nper, 120);

/* UNARY and SCALE (unary.cl): src0 [ne00, ne01, ne02, ...] with strides nb00..,
 * dst's strides nb0..; n = ne00 * nrows elements in all, one a work-item. UNARY: op is
 * the ct_unary_op, p[0..3] XIELU's op_params[1..4]; SCALE: p[0] = s, p[1] = b. */
typedef struct ct_unary_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb0, nb1, nb2, nb3;
    ct_u64 n;
    ct_i32 ne00, ne01, ne02, op;
    ct_f32 p[4];
} ct_unary_args;
CT_ARGS_ASSERT(unary_args_size, sizeof(ct_unary_args) == 104);
CT_ARGS_OFFSET_ASSERT(unary_args_ne00, ct_unary_args, ne00, 72);
/* SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU, FILL (math.cl) take ct_unary_args with op one
 * of these and p[0], p[1] the node's op_params[0], [1]. */
#define CT_MATH_SQR 0
#define CT_MATH_SQRT 1
#define CT_MATH_SIN 2
#define CT_MATH_COS 3
#define CT_MATH_LOG 4
#define CT_MATH_CLAMP 5
#define CT_MATH_LEAKY_RELU 6
#define CT_MATH_FILL 7
/* REPEAT, CONCAT, PAD, ARANGE and ACC (shape.cl): one unit (an element, or a block of a block type
 * in dim 0) of dst a work-item over a 2-d launch (ne0, and the rows ne1*ne2*ne3; ACC's window: b's
 * shape), n units in all. ne00.. and ne0.. count units; es is the unit's bytes and vec whether every address
 * and stride is a multiple of es in {1, 2, 4, 8} (else es bytes one at a time). op is a
 * CT_SHAPE_*; p: CONCAT p[0] = dim, PAD p[0..8] its op_params, ACC p[0..3] nb1, nb2, nb3,
 * offset; f: ARANGE f[0] start, f[2] step. CT_SHAPE_REPEAT of a into dst of a's shape is a
 * copy (ACC's first step). */
#define CT_SHAPE_REPEAT 0
#define CT_SHAPE_CONCAT 1
#define CT_SHAPE_PAD 2
#define CT_SHAPE_ARANGE 3
#define CT_SHAPE_ACC 4
typedef struct ct_shape_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb10, nb11, nb12, nb13;
    ct_u64 nb0, nb1, nb2, nb3;
    ct_i64 ne00, ne01, ne02, ne03;
    ct_i64 ne10, ne11, ne12, ne13;
    ct_i64 ne0, ne1, ne2, ne3;
    ct_u64 n;
    ct_i32 op, es, vec, pad_;
    ct_i32 p[10];
    ct_f32 f[4];
} ct_shape_args;
CT_ARGS_ASSERT(shape_args_size, sizeof(ct_shape_args) == 272);
CT_ARGS_OFFSET_ASSERT(shape_args_op, ct_shape_args, op, 200);
/* ADD, SUB, MUL, DIV, ADD1 (binary.cl): dst[i0, i1, i2, i3] = src0[same] op src1[i0 % ne10,
 * i1 % ne11, i2 % ne12, i3 % ne13]; dst has src0's shape (ne0..ne2, nrows rows). op is a
 * CT_BIN_*; f16_0, f16_1, f16_d say which of src0, src1, dst are F16 (else F32);
 * aligned: every tensor's start and strides are multiples of its element size. */
#define CT_BIN_ADD 0
#define CT_BIN_SUB 1
#define CT_BIN_MUL 2
#define CT_BIN_DIV 3
typedef struct ct_binary_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb10, nb11, nb12, nb13;
    ct_u64 nb0, nb1, nb2, nb3;
    ct_i32 ne0, ne1, ne2, nrows;
    ct_i32 ne10, ne11, ne12, ne13;
    ct_i32 op, f16_0, f16_1, f16_d;
    ct_i32 aligned, pad;
} ct_binary_args;
CT_ARGS_ASSERT(binary_args_size, sizeof(ct_binary_args) == 152);
CT_ARGS_OFFSET_ASSERT(binary_args_ne0, ct_binary_args, ne0, 96);
/* ROPE (rope.cl): src0 [ne0, ne1, ne2, ne3] with strides nb00.., dst's nb0..; positions
 * nbp and freq factors nbf bytes apart (has_ff 0: none); the angles' constants as the
 * CPU computes them on the host (theta_scale = powf(freq_base, -2/n_dims), YaRN's corr
 * dims, attn_factor times YaRN's magnitude scale). */
typedef struct ct_rope_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb0, nb1, nb2, nb3;
    ct_u64 nbp, nbf;
    ct_i32 ne0, ne1, ne2, ne3;
    ct_i32 n_dims, mode, n_offs, has_ff;
    ct_i32 s0, s1, s2, s3;
    ct_f32 theta_scale, freq_scale, ext_factor, mscale, corr0, corr1;
} ct_rope_args;
CT_ARGS_ASSERT(rope_args_size, sizeof(ct_rope_args) == 152);
CT_ARGS_OFFSET_ASSERT(rope_args_ne0, ct_rope_args, ne0, 80);

/* GLU (glu.cl): dst [ne0, ne1, ne2, ...] with strides nb1..; x of element (i0, i1, i2, i3)
 * at xo + i0*size + i1*nb01 + i2*nb02 + i3*nb03 of src0, g at go + ... nb11.. of src1 (src0
 * again for the fused form, xo and go the byte offsets of its row's halves). op is the
 * ct_glu_op; alpha and limit op_params[2] and [3]. */
typedef struct ct_glu_args {
    ct_u64 nb01, nb02, nb03;
    ct_u64 nb11, nb12, nb13;
    ct_u64 nb1, nb2, nb3;
    ct_u64 xo, go;
    ct_i32 ne0, ne1, ne2, op;
    ct_f32 alpha, limit;
} ct_glu_args;
CT_ARGS_ASSERT(glu_args_size, sizeof(ct_glu_args) == 112);
CT_ARGS_OFFSET_ASSERT(glu_args_ne0, ct_glu_args, ne0, 88);
/* SUM, CUMSUM and ARGMAX (sum.cl): src0 [ne00, ne01, ne02, ne03] with strides nb00..,
 * dst's strides nb1.. (CUMSUM's rows packed; ARGMAX's dst is [ne01] I32 packed). */
typedef struct ct_reduce_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 nb1, nb2, nb3;
    ct_i32 ne00, ne01, ne02, ne03;
} ct_reduce_args;
CT_ARGS_ASSERT(reduce_args_size, sizeof(ct_reduce_args) == 72);
CT_ARGS_OFFSET_ASSERT(reduce_args_ne00, ct_reduce_args, ne00, 56);

/* ARGSORT and TOP_K (argsort.cl): src0's rows [ne00] with strides nb00..; the buffers
 * passes read and write hold ld_in / ld_out keys (or, dst, I32 indices) per row (row r at
 * r * ld); len: the block size (block sort) or the length of the sorted runs merged
 * pairwise (merge); top: how many leading entries of a sorted run are kept (ne00 for
 * ARGSORT); desc: the order. */
typedef struct ct_argsort_args {
    ct_u64 nb00, nb01, nb02, nb03;
    ct_u64 ld_in, ld_out;
    ct_i32 ne00, ne01, ne02, nrows;
    ct_i32 len, top, desc, pad;
} ct_argsort_args;
CT_ARGS_ASSERT(argsort_args_size, sizeof(ct_argsort_args) == 80);
CT_ARGS_OFFSET_ASSERT(argsort_args_ne00, ct_argsort_args, ne00, 48);

/* FLASH_ATTN_EXT (flash_attn.cl): q, k, v, the mask's and dst's strides (dims 1..3), the sinks'
 * stride; Dk, Dv, n_q, n_kv, n_head, the K and V head ratios rk2 = n_head / k's ne2 and rv2,
 * the mask's broadcast dims; k_type/v_type (CT_T_*), q_round (0 none, 1 F16, 2 BF16, 3 Q8_0:
 * ct_flash_attn_q_type), has_mask/has_sinks; qb query rows per work-group, n_split key chunks
 * of chunk keys (n_split > 1: partials into the work memory, merged by the reduce kernel);
 * the softmax's constants (scale already divided by logit_softcap when that is not 0). */
typedef struct ct_flash_attn_args {
    ct_u64 nbq1, nbq2, nbq3;
    ct_u64 nbk1, nbk2, nbk3;
    ct_u64 nbv1, nbv2, nbv3;
    ct_u64 nbm1, nbm2, nbm3;
    ct_u64 nbs0, nb1, nb2, nb3;
    ct_i32 dk, dv, n_q, n_kv, n_head, rk2, rv2, nem2, nem3;
    ct_i32 k_type, v_type, q_round, has_mask, has_sinks, n_head_log2, qb, n_split, chunk;
    ct_f32 scale, softcap, max_bias, m0, m1, pad0;
} ct_flash_attn_args;
CT_ARGS_ASSERT(flash_attn_args_size, sizeof(ct_flash_attn_args) == 224);
CT_ARGS_OFFSET_ASSERT(flash_attn_args_dk, ct_flash_attn_args, dk, 128);

#endif
