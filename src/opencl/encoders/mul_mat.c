/* MUL_MAT on OpenCL (kernels/mul_mat.cl). Kernel choice, in order:
 *   src1 elements not packed (nb10 != 4)       -> 1row (reads src1 with its stride)
 *   float src0 with ne00 == 4                  -> c4
 *   ne11 >= CT_OCL_MM_MIN_NE11, src0 not F32,
 *     and the device has tensor-core kernels   -> mmtc_y16 (src1 as packed 16-bit operand rows in the
 *                                                 work memory), then mmtc (CT_MMTC_BM x CT_MMTC_BN
 *                                                 tiles on mma.sync: kernels/mul_mm_tc.cl)
 *   2 <= ne11 <= CT_MVTC_MAX_N, src0 F16 or BF16,
 *     and the device has tensor-core kernels   -> mvtc (16 src0 rows x 8 src1 rows a work-group, the
 *                                                 warps splitting k: kernels/mul_mv_tc.cl)
 *   ne11 >= CT_OCL_MM_MIN_NE11 and the tiled kernel
 *     can run 256 work-items                   -> mm128 (128x128 tiles) from ne01 >= MM128_MIN_NE01 and
 *                                                 ne11 >= MM128_MIN_NE11 where it fits, else mm (64x64 tiles)
 *   quantized src0, rows of 64-value units
 *     in 4-byte aligned words (Q6_K: 2)          -> quantize_qy (src1 into 8-bit blocks in the work
 *                                                 buffer), then mvq (2 src0 rows per local row x 8 src1
 *                                                 rows, integer dot products; kernels/mul_mvq.cl)
 *   otherwise                                  -> mv (2 src0 rows per local row x 4 src1 rows)
 * An F16 src1 is first widened into packed F32 rows in the work memory (ct_mul_mat_f16_y,
 * after the 8-bit blocks where those are made too), and the node is then planned and
 * computed as with that F32 src1; mmtc_y16 reads an F16 src1 as it is. MUL_MAT_ID's grouped
 * path (encoders/mul_mat_id.c) picks its tiles (mmtc, mm128 or mm, as above) with
 * ct_ocl_mm_tiles_pick too.
 * The supported set is the CPU backend's, less what the kernels' int indices and
 * aligned loads cannot take (dims above INT_MAX, misaligned strides or views). Every
 * kernel takes ct_mul_mat_args (kernels/kernel_args.h). */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "types/types_internal.h"

#include <limits.h>

enum {
    MM_TILE = 64,
    MM_LOCAL_FLOATS = 2 * 32 * 65,
    MM128_TILE = 128,
    MM128_MIN_NE01 = 128, /* smaller shapes fill 128x128 tiles too thinly: the 64x64 ones waste less */
    MM128_MIN_NE11 = 64,
    /* fixed sizes: one build of each kernel on JIT-specializing drivers (PoCL) */
    MV_WG = 128,
    MVQY_MIN_NE11 = 4, /* src1 rows from which the staged-y kernels run (on the H200 they were slower at 2) */
    ROW_WG = 64,
    C4_WG = 64,
    F16Y_WG = 64,
    F16Y_ALIGN = 256, /* the offset of src1's copy (widened or 16-bit) in the work memory */
    Y16_WG = 64,
};

/* A type's kernels; CT_OCL_K_COUNT where it has none (c4 for quantized types; the 8-bit
 * ones for float types, mvqy for the types it is not faster for: kernels/mul_mvq.cl). */
typedef struct mm_kernels {
    ct_ocl_kernel_id mv, row, mm, c4, mm128, mmtc, mvtc;
    ct_ocl_kernel_id mvq, mvq1, mvqy; /* CT_MVQ_NR1 src1 rows a group; one; CT_MVQ_NR1 with y staged */
    ct_ocl_kernel_id mvq1_swiglu;     /* one src1 row, two src0, SWIGLU of the products */
} mm_kernels;

static mm_kernels kernels_for(ct_type t) {
    return (mm_kernels){
        .mv = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MV, t),
        .row = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MV_1ROW, t),
        .mm = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MM, t),
        .c4 = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MV_C4, t),
        .mm128 = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MM128, t),
        .mmtc = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MMTC, t),
        .mvtc = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MVTC, t),
        .mvq = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MVQ, t),
        .mvq1 = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MVQ1, t),
        .mvqy = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MVQY, t),
        .mvq1_swiglu = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MVQ1_SWIGLU, t),
    };
}

static bool available(const ct_ocl_device *dev, ct_ocl_kernel_id id) {
    return id != CT_OCL_K_COUNT && ct_ocl_kernel_available(dev, id);
}

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t, int from, size_t a) {
    for (int i = from; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % a != 0) return false;
    return ct_ocl_start_aligned(dev, t, a);
}

bool ct_ocl_mul_mat_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || op->op != CT_OP_MUL_MAT || op->type != CT_TYPE_F32) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1];
    if (!a || !b || (b->type != CT_TYPE_F32 && b->type != CT_TYPE_F16)) return false;
    if (b->type == CT_TYPE_F16 && !ct_ocl_kernel_available(dev, CT_OCL_K_MUL_MAT_F16_Y)) return false;
    const mm_kernels k = kernels_for(a->type);
    if (!available(dev, k.mv) || !available(dev, k.row) || !available(dev, k.mm) ||
        (k.c4 != CT_OCL_K_COUNT && !available(dev, k.c4)))
        return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] < 0 || a->ne[i] > INT_MAX || b->ne[i] < 0 || b->ne[i] > INT_MAX) return false;
    int64_t nb12;
    if (!ct_mul_i64(b->ne[2], b->ne[3], &nb12) || nb12 > INT_MAX) return false;
    const int64_t blck = ct_type_block_size(a->type);
    if (a->ne[0] != b->ne[0] || blck <= 0 || a->ne[0] % blck != 0) return false;
    if (a->nb[0] != ct_type_size(a->type)) return false; /* src0 rows packed */
    for (int i = 2; i < 4; i++)
        if (a->ne[i] == 0 ? b->ne[i] != 0 : b->ne[i] % a->ne[i] != 0) return false;
    if (op->ne[0] != a->ne[1] || op->ne[1] != b->ne[1] || op->ne[2] != b->ne[2] || op->ne[3] != b->ne[3])
        return false;
    /* loads: src0 by blocks (2-byte fields; F32 by 4), src1 by its element, dst by float */
    return op->nb[0] == sizeof(float) && strides_aligned(dev, op, 1, 4) &&
           strides_aligned(dev, b, 0, ct_type_size(b->type)) &&
           strides_aligned(dev, a, 1, a->type == CT_TYPE_F32 ? 4 : 2);
}

/* The 128x128 kernel: available, 256 work-items allowed, and its local memory there. */
static bool mm128_usable(ct_ocl_enc *enc, ct_ocl_kernel_id id) {
    return available(enc->be->dev, id) && ct_ocl_enc_clamp_wg(enc, id, CT_OCL_MM_WG) == CT_OCL_MM_WG &&
           enc->be->dev->local_mem >= CT_MMT_LOCAL_FLOATS * sizeof(float);
}

/* The tensor-core kernel's local memory: its tiles, and the exchange area of the emulation. */
static size_t mmtc_scratch(const ct_ocl_device *dev) {
    return CT_MMTC_LOCAL_BYTES + (dev->has_nv_mma ? 0 : CT_MMTC_EMULATE_BYTES);
}

/* The tensor-core kernel: available for the type (the device built mma.sync or its
 * emulation), its work-group size allowed, and its local memory there. */
static bool mmtc_usable(ct_ocl_enc *enc, ct_ocl_kernel_id id) {
    return available(enc->be->dev, id) && ct_ocl_enc_clamp_wg(enc, id, CT_MMTC_WG) == CT_MMTC_WG &&
           enc->be->dev->local_mem >= mmtc_scratch(enc->be->dev);
}

bool ct_ocl_mm_tiles_pick(ct_ocl_enc *enc, ct_ocl_kernel_id mmtc, ct_ocl_kernel_id mm, ct_ocl_kernel_id mm128,
                          size_t ne01, size_t ne11, ct_ocl_mm_tiles *t) {
    if (mmtc_usable(enc, mmtc)) {
        *t = (ct_ocl_mm_tiles){.id = mmtc, .bm = CT_MMTC_BM, .bn = CT_MMTC_BN, .wg = CT_MMTC_WG,
                               .scratch = mmtc_scratch(enc->be->dev)};
        return true;
    }
    if (!available(enc->be->dev, mm) || ct_ocl_enc_clamp_wg(enc, mm, CT_OCL_MM_WG) != CT_OCL_MM_WG) return false;
    const bool big = ne01 >= MM128_MIN_NE01 && ne11 >= MM128_MIN_NE11 && mm128_usable(enc, mm128);
    t->id = big ? mm128 : mm;
    t->bm = t->bn = big ? MM128_TILE : MM_TILE;
    t->wg = CT_OCL_MM_WG;
    t->scratch = (big ? CT_MMT_LOCAL_FLOATS : MM_LOCAL_FLOATS) * sizeof(float);
    return true;
}

/* The tensor-core mat-vec's local memory: partial sums, and the emulation's exchange area. */
static size_t mvtc_scratch(const ct_ocl_device *dev) {
    return CT_MVTC_LOCAL_BYTES + (dev->has_nv_mma ? 0 : CT_MVTC_EMULATE_BYTES);
}

/* The tensor-core mat-vec for ne11 src1 rows: the kernel built for the type (F16 and BF16,
 * whose fp32 mat-vec is bound by its FMAs from 2 rows on; the quantized types' 8-bit kernels
 * are not), its work-group size allowed, its local memory there. */
static bool mvtc_usable(ct_ocl_enc *enc, ct_ocl_kernel_id id, size_t ne11) {
    return ne11 >= 2 && ne11 <= CT_MVTC_MAX_N && available(enc->be->dev, id) &&
           ct_ocl_enc_clamp_wg(enc, id, CT_MVTC_WG) == CT_MVTC_WG &&
           enc->be->dev->local_mem >= mvtc_scratch(enc->be->dev);
}

/* A mat-vec work-group of `total` items as local rows of the fewest items (a power of two,
 * at most total) that cover a row's `units` steps: short rows get several local rows, so
 * no work-item idles. local[1] is the number of local rows. */
static void local_rows(size_t total, size_t units, size_t local[3]) {
    size_t lx = 1;
    while (lx < total && lx < units) lx *= 2;
    if (lx > total) lx = total;
    local[0] = lx, local[1] = total / lx, local[2] = 1;
}

/* The bytes of the stage of an 8-bit mat-vec team, which stages CT_MVQ_TEAM units of
 * CT_MVQ_NR0 rows at a time in local memory (kernels/mul_mvq.cl's mvq_lane_words). */
static size_t mvq_stage_bytes(ct_type t) {
    const size_t chunk = (size_t)CT_MVQ_TEAM * CT_MVQ_UNIT / (size_t)ct_type_block_size(t) * ct_type_size(t);
    return CT_MVQ_NR0 * CT_MVQ_TEAM * CT_MVQ_LANE_WORDS(chunk) * 4;
}

/* The kernel's local memory for `teams` teams: IQ4_NL's table (16 bytes), the teams'
 * stages, and in the staged-y kernels up to 12 bytes more to a 16-byte boundary and the
 * y stage (mvq_stage_y: 5 x CT_MVQ_TEAM int4 for each of CT_MVQ_NR1 src1 rows). */
static size_t mvq_scratch_bytes(ct_type t, size_t teams, bool staged_y) {
    return 16 + teams * mvq_stage_bytes(t) + (staged_y ? 16 + CT_MVQ_NR1 * 5 * CT_MVQ_TEAM * 16 : 0);
}

/* Teams in a work-group: as many as MV_WG work-items hold, 0 when not one fits. */
static size_t mvq_teams(ct_ocl_enc *enc, ct_ocl_kernel_id id, ct_type t, bool staged_y) {
    size_t teams = ct_ocl_enc_clamp_wg(enc, id, MV_WG) / CT_MVQ_TEAM;
    while (teams > 0 && mvq_scratch_bytes(t, teams, staged_y) > enc->be->dev->local_mem) teams--;
    return teams;
}

/* The 8-bit path applies: a quantized src0 in whole 64-value units whose words
 * the kernel can load (4-byte aligned rows; Q6_K's 210-byte blocks take 2), and a
 * work-group and local memory that hold a team. */
static bool mvq_applies(ct_ocl_enc *enc, const ct_tensor *a, const mm_kernels *k) {
    const ct_ocl_device *dev = enc->be->dev;
    if (!available(dev, k->mvq) || !ct_ocl_kernel_available(dev, CT_OCL_K_QUANTIZE_QY) ||
        ct_ocl_enc_clamp_wg(enc, CT_OCL_K_QUANTIZE_QY, CT_QY_WG) != CT_QY_WG ||
        mvq_teams(enc, k->mvq, a->type, false) == 0)
        return false;
    /* the kernel's byte offsets within a row are int */
    size_t row_bytes;
    const size_t a_align = a->type == CT_TYPE_Q6_K ? 2 : 4;
    if (a->ne[0] <= 0 || a->ne[0] % CT_MVQ_UNIT != 0 || ct_row_size(a->type, a->ne[0], &row_bytes) != CT_OK ||
        row_bytes > INT_MAX)
        return false;
    for (int i = 1; i < CT_MAX_DIMS; i++)
        if (a->nb[i] % a_align != 0) return false;
    return ct_ocl_enc_addr_bits(enc, a, "src0") % a_align == 0;
}

/* How a node is computed: one kernel, or (mvq) src1 quantized into the work memory
 * first. */
typedef struct mm_plan {
    ct_ocl_kernel_id id;
    size_t groups[3], local[3], scratch;
    bool mvq;
    size_t work_bytes; /* mvq: src1 quantized (per src1 row: ne00 bytes of q, ne00 / 32 (d, s) pairs of 8 bytes) */
    bool f16y;         /* src1 F16: widened first to packed F32 rows at y_offset of the work memory */
    bool y16;          /* tensor-core tiles: src1 as packed 16-bit operand rows at y_offset instead */
    size_t y_offset, y_bytes, y_row_bytes; /* f16y or y16: where src1's copy lies, its bytes, a row's */
} mm_plan;

static void plan_mvq(ct_ocl_enc *enc, const ct_tensor *node, const mm_kernels *k, mm_plan *p) {
    const ct_tensor *a = node->src[0], *b = node->src[1];
    const size_t ne01 = (size_t)a->ne[1], ne11 = (size_t)b->ne[1];
    const size_t nbatch = (size_t)b->ne[2] * (size_t)b->ne[3];
    size_t nrows;
    if (!ct_mul_size(ne11, nbatch, &nrows) || !ct_mul_size(nrows, (size_t)a->ne[0] / 32 * 40, &p->work_bytes)) {
        ct_ocl_enc_fail(enc, CT_INVALID_ARGUMENT, "src1 '%s' of %zu x %zu rows of %lld values quantizes to more "
                        "than SIZE_MAX bytes", b->name[0] ? b->name : "(unnamed)", ne11, nbatch,
                        (long long)a->ne[0]);
        return;
    }
    /* one src1 row: the kernel that keeps one row's accumulators */
    const bool one = ne11 == 1 && available(enc->be->dev, k->mvq1) && mvq_teams(enc, k->mvq1, a->type, false) > 0;
    /* from MVQY_MIN_NE11 src1 rows: y staged once a group, where the type has that kernel */
    const bool staged_y = ne11 >= MVQY_MIN_NE11 && available(enc->be->dev, k->mvqy) &&
                          mvq_teams(enc, k->mvqy, a->type, true) > 0;
    p->mvq = true;
    p->id = one ? k->mvq1 : staged_y ? k->mvqy : k->mvq;
    /* 1-D groups of teams, CT_MVQ_NR0 rows each */
    const size_t teams = mvq_teams(enc, p->id, a->type, staged_y);
    if (teams == 0) { /* the kernel could not be created (the failure is on enc) */
        if (enc->st == CT_OK) ct_ocl_enc_fail(enc, CT_DEVICE_ERROR, "%s: no work-group fits", ct_ocl_kernel_table[p->id].name);
        return;
    }
    p->local[0] = teams * CT_MVQ_TEAM, p->local[1] = 1, p->local[2] = 1;
    const size_t rows_per_group = CT_MVQ_NR0 * teams;
    p->scratch = mvq_scratch_bytes(a->type, teams, staged_y);
    p->groups[0] = (ne01 + rows_per_group - 1) / rows_per_group;
    p->groups[1] = one ? 1 : (ne11 + CT_MVQ_NR1 - 1) / CT_MVQ_NR1;
    p->groups[2] = nbatch;
}

/* The bytes of a row of src1's 16-bit operands: ne10 values rounded up to 8 (16-byte rows). */
static size_t y16_row_bytes(const ct_tensor *b) { return ((size_t)b->ne[0] + 7) / 8 * 8 * sizeof(uint16_t); }

/* The work memory of src1's rows as the kernel reads them (row_bytes each), after what the
 * kernel plan took. */
static void plan_y_copy(ct_ocl_enc *enc, const ct_tensor *b, size_t row_bytes, mm_plan *p) {
    size_t nrows, off;
    if (!ct_mul_size((size_t)b->ne[1], (size_t)b->ne[2] * (size_t)b->ne[3], &nrows) ||
        !ct_mul_size(nrows, row_bytes, &p->y_bytes) || !ct_add_size(p->work_bytes, F16Y_ALIGN - 1, &off) ||
        !ct_add_size(off / F16Y_ALIGN * F16Y_ALIGN, p->y_bytes, &nrows)) {
        ct_ocl_enc_fail(enc, CT_INVALID_ARGUMENT, "src1 '%s' of %lld x %lld x %lld values takes more than "
                        "SIZE_MAX bytes of work memory", b->name[0] ? b->name : "(unnamed)", (long long)b->ne[0],
                        (long long)b->ne[1], (long long)(b->ne[2] * b->ne[3]));
        return;
    }
    p->y_offset = off / F16Y_ALIGN * F16Y_ALIGN;
    p->y_row_bytes = row_bytes;
    p->work_bytes = nrows;
}

static void plan(ct_ocl_enc *enc, const ct_tensor *node, mm_plan *p) {
    const ct_tensor *a = node->src[0], *b = node->src[1];
    const mm_kernels k = kernels_for(a->type);
    const size_t ne00 = (size_t)a->ne[0], ne01 = (size_t)a->ne[1], ne11 = (size_t)b->ne[1];
    const size_t nbatch = (size_t)b->ne[2] * (size_t)b->ne[3];
    const bool is_float = a->type == CT_TYPE_F32 || a->type == CT_TYPE_F16 || a->type == CT_TYPE_BF16;
    *p = (mm_plan){.local = {1, 1, 1}};
    ct_ocl_mm_tiles tiles;
    /* an F16 src1 is read as its packed F32 copy */
    if (b->type == CT_TYPE_F32 && b->nb[0] != sizeof(float)) {
        p->id = k.row;
        p->local[0] = ct_ocl_enc_clamp_wg(enc, p->id, ROW_WG);
        p->groups[0] = ne01, p->groups[1] = ne11, p->groups[2] = nbatch;
        p->scratch = p->local[0] * sizeof(float);
    } else if (is_float && ne00 == 4) {
        p->id = k.c4;
        p->local[0] = ct_ocl_enc_clamp_wg(enc, p->id, C4_WG);
        p->groups[0] = (ne01 + p->local[0] - 1) / p->local[0], p->groups[1] = (ne11 + 3) / 4, p->groups[2] = nbatch;
        p->scratch = sizeof(float);
    } else if (mvtc_usable(enc, k.mvtc, ne11)) {
        p->id = k.mvtc;
        p->local[0] = CT_MVTC_WG;
        p->groups[0] = (ne01 + 15) / 16, p->groups[1] = (ne11 + 7) / 8, p->groups[2] = nbatch;
        p->scratch = mvtc_scratch(enc->be->dev);
    } else if (ne11 >= CT_OCL_MM_MIN_NE11 && ct_ocl_mm_tiles_pick(enc, k.mmtc, k.mm, k.mm128, ne01, ne11, &tiles)) {
        p->id = tiles.id;
        p->local[0] = tiles.wg;
        p->groups[0] = (ne01 + tiles.bm - 1) / tiles.bm, p->groups[1] = (ne11 + tiles.bn - 1) / tiles.bn;
        p->groups[2] = nbatch;
        p->scratch = tiles.scratch;
        p->y16 = tiles.id == k.mmtc; /* MUL_MMTC_Y16 has the mmtc kernels' gate and program */
    } else if (mvq_applies(enc, a, &k)) {
        plan_mvq(enc, node, &k, p);
    } else {
        p->id = k.mv;
        local_rows(ct_ocl_enc_clamp_wg(enc, p->id, MV_WG), (ne00 + 7) / 8, p->local);
        const size_t rows_per_group = CT_MV_NR0 * p->local[1];
        p->groups[0] = (ne01 + rows_per_group - 1) / rows_per_group;
        p->groups[1] = (ne11 + CT_MV_NR1 - 1) / CT_MV_NR1;
        p->groups[2] = nbatch;
        const size_t floats = CT_MV_NR0 * CT_MV_NR1 * p->local[0] * p->local[1];
        p->scratch = (floats < 16 ? 16 : floats) * sizeof(float); /* IQ4_NL's table */
    }
    if (enc->st != CT_OK) return;
    if (p->y16) {
        plan_y_copy(enc, b, y16_row_bytes(b), p);
    } else if (b->type == CT_TYPE_F16) {
        p->f16y = true;
        plan_y_copy(enc, b, (size_t)b->ne[0] * sizeof(float), p);
    }
}

void ct_ocl_mm_widen_f16_y(ct_ocl_enc *enc, const ct_tensor *b, cl_mem work, size_t y_offset) {
    const ct_mul_mat_args wargs = {
        .nb10 = b->nb[0], .nb11 = b->nb[1], .nb12 = b->nb[2], .nb13 = b->nb[3],
        .ne00 = (int32_t)b->ne[0], .ne11 = (int32_t)b->ne[1], .ne12 = (int32_t)b->ne[2],
    };
    const size_t local[3] = {F16Y_WG, 1, 1};
    const size_t groups[3] = {((size_t)b->ne[0] + F16Y_WG - 1) / F16Y_WG, (size_t)b->ne[1],
                              (size_t)b->ne[2] * (size_t)b->ne[3]};
    const cl_ulong y_off = y_offset;
    ct_ocl_enc_kernel(enc, CT_OCL_K_MUL_MAT_F16_Y);
    ct_ocl_arg_tensor(enc, b, "src1");
    ct_ocl_arg_mem(enc, work);
    ct_ocl_arg_u64(enc, y_off);
    ct_ocl_arg_bytes(enc, &wargs, sizeof wargs);
    ct_ocl_enc_dispatch(enc, groups, local);
}

/* src1 b (F32 or F16) as the tensor-core tiles' 16-bit operands (kernels/mul_mm_tc.cl): F16 for
 * an F16 src0, else BF16, in packed rows of y16_row_bytes (zeros after ne10 values), laid out
 * as ct_ocl_mm_widen_f16_y's rows, at y_offset of work. */
static void y16_copy(ct_ocl_enc *enc, ct_type a_type, const ct_tensor *b, cl_mem work, size_t y_offset) {
    const ct_mul_mat_args yargs = {
        .nb10 = b->nb[0], .nb11 = b->nb[1], .nb12 = b->nb[2], .nb13 = b->nb[3],
        .ne00 = (int32_t)b->ne[0], .ne11 = (int32_t)b->ne[1], .ne12 = (int32_t)b->ne[2],
    };
    const size_t local[3] = {Y16_WG, 1, 1};
    const size_t groups[3] = {(((size_t)b->ne[0] + 7) / 8 + Y16_WG - 1) / Y16_WG, (size_t)b->ne[1],
                              (size_t)b->ne[2] * (size_t)b->ne[3]};
    ct_ocl_enc_kernel(enc, CT_OCL_K_MUL_MMTC_Y16);
    ct_ocl_arg_tensor(enc, b, "src1");
    ct_ocl_arg_mem(enc, work);
    ct_ocl_arg_u64(enc, y_offset);
    ct_ocl_arg_bytes(enc, &yargs, sizeof yargs);
    ct_ocl_arg_i32(enc, a_type != CT_TYPE_F16);
    ct_ocl_arg_i32(enc, b->type == CT_TYPE_F16);
    ct_ocl_enc_dispatch(enc, groups, local);
}

ct_status ct_ocl_mul_mat_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes) {
    CT_ASSERT(ct_ocl_mul_mat_supported(enc->be->dev, node));
    *bytes = 0;
    if (ct_is_empty(node)) return CT_OK;
    mm_plan p;
    plan(enc, node, &p);
    if (p.mvq || p.f16y || p.y16) *bytes = p.work_bytes;
    return enc->st;
}

/* The forms src1 takes in the work memory (ct_ocl_enc.work_y): 8-bit blocks (in Q6_K's
 * layout or the others', a scale per block or per 8: ct_qy_group), widened to F32, or
 * the tensor cores' F16 or BF16 rows. */
enum { Y_NONE, Y_QUANTIZED, Y_QUANTIZED_GROUPED, Y_QUANTIZED_Q6_K, Y_WIDENED, Y_F16, Y_BF16 };

static int y_form(const mm_plan *p, ct_type a_type) {
    if (p->mvq) {
        if (a_type == CT_TYPE_Q6_K) return Y_QUANTIZED_Q6_K;
        return ct_qy_group(a_type) > 1 ? Y_QUANTIZED_GROUPED : Y_QUANTIZED;
    }
    if (p->f16y) return Y_WIDENED;
    if (p->y16) return a_type == CT_TYPE_F16 ? Y_F16 : Y_BF16;
    return Y_NONE;
}

/* The SWIGLU that ct_mul_mvq1_swiglu_<t>_f32 computes with node and the MUL_MAT after it
 * (a feed-forward's gate and up, one token), or NULL: node runs the one-row 8-bit kernel
 * (plan p); the next node multiplies src1 by a src0 of node's type, shape and row stride;
 * the node after is SWIGLU of the two products (either order), their only consumer. All
 * F32, one src1 row, no batch, the result apart from both weights. *pair: that MUL_MAT. */
static ct_tensor *fused_swiglu(ct_ocl_enc *enc, const ct_tensor *node, const mm_plan *p, const mm_kernels *k,
                               const ct_tensor **pair) {
    const ct_tensor *a = node->src[0], *b = node->src[1];
    if (!p->mvq || p->id != k->mvq1 || !available(enc->be->dev, k->mvq1_swiglu)) return NULL;
    if (ct_nelements(b) != b->ne[0] || node->type != CT_TYPE_F32) return NULL;
    const int j = enc->node_index + 1;
    if (!enc->uses || j >= ct_graph_n_nodes(enc->graph)) return NULL;
    const ct_tensor *m2 = ct_graph_node(enc->graph, j);
    if (m2->op != CT_OP_MUL_MAT || m2->src[1] != b || m2->type != CT_TYPE_F32) return NULL;
    const ct_tensor *a2 = m2->src[0];
    if (a2->type != a->type || !ct_are_same_shape(a2, a) || a2->nb[1] != a->nb[1] || !mvq_applies(enc, a2, k)) {
        return NULL;
    }
    ct_tensor *glu = ct_ocl_enc_fusable_next(enc, node, 2);
    if (!glu || ct_ocl_enc_fusable_next(enc, m2, 2) != glu || glu->op != CT_OP_GLU) return NULL;
    if (glu->op_params[0] != CT_GLU_OP_SWIGLU || !glu->src[1] || glu->type != CT_TYPE_F32) return NULL;
    if (!((glu->src[0] == node && glu->src[1] == m2) || (glu->src[0] == m2 && glu->src[1] == node))) return NULL;
    if (!ct_are_same_shape(glu, node) || !ct_is_contiguous(glu)) return NULL;
    if (ct_ocl_enc_addr_bits(enc, glu, "dst") % sizeof(float) != 0) return NULL;
    /* every work-group reads both weights whole while writing its rows */
    if (ct_ocl_fused_write_clashes(glu, a) || ct_ocl_fused_write_clashes(glu, a2)) return NULL;
    *pair = m2;
    return glu;
}

/* Whether the work memory holds src1 b in form at offset as an earlier MUL_MAT left it: no
 * node took the work memory since, and no node from that one on wrote b's bytes (views
 * write nothing; a node writes its own bytes only). Between q, k and v lie their ROPEs. */
static bool work_y_held(const ct_ocl_enc *enc, const ct_tensor *b, int form, size_t offset) {
    if (form == Y_NONE || enc->work_y.src != b || enc->work_y.form != form || enc->work_y.offset != offset ||
        enc->work_y.take != enc->work_takes) {
        return false;
    }
    for (int i = enc->work_y.node; i < enc->node_index; i++) {
        const ct_tensor *n = ct_graph_node(enc->graph, i);
        if (!ct_op_is_view(n->op) && !ct_is_empty(n) && ct_ocl_may_overlap(n, b)) return false;
    }
    return true;
}

ct_status ct_ocl_encode_mul_mat(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_mul_mat_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0], *b = node->src[1];
    const mm_kernels k = kernels_for(a->type);
    mm_plan p;
    plan(enc, node, &p);
    if (enc->st != CT_OK) return enc->st;
    /* src1 as the kernels read it: the tensor, or its copy in the work memory; a MUL_MAT
     * before this one (q, k and v of one input; gate and up) may have left that copy */
    const int form = y_form(&p, a->type);
    const bool held = work_y_held(enc, b, form, p.y_offset);
    const cl_mem work = form != Y_NONE ? ct_ocl_enc_work(enc, p.work_bytes) : NULL;
    if (form != Y_NONE) {
        enc->work_y.src = b, enc->work_y.node = enc->node_index, enc->work_y.take = enc->work_takes;
        enc->work_y.form = form, enc->work_y.offset = p.y_offset;
    }
    ct_u64 nb1x[4] = {b->nb[0], b->nb[1], b->nb[2], b->nb[3]};
    if (p.f16y || p.y16) { /* the copy's packed rows, as plan_y_copy sized them */
        nb1x[0] = p.f16y ? sizeof(float) : sizeof(uint16_t);
        nb1x[1] = p.y_row_bytes;
        nb1x[2] = nb1x[1] * (ct_u64)b->ne[1];
        nb1x[3] = nb1x[2] * (ct_u64)b->ne[2];
        if (held) {
            /* made by the node before */
        } else if (p.f16y) {
            ct_ocl_mm_widen_f16_y(enc, b, work, p.y_offset);
        } else {
            y16_copy(enc, a->type, b, work, p.y_offset);
        }
    }
    const ct_mul_mat_args args = {
        .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb10 = nb1x[0], .nb11 = nb1x[1], .nb12 = nb1x[2], .nb13 = nb1x[3],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .work_rows = p.mvq ? (uint64_t)b->ne[1] * (uint64_t)b->ne[2] * (uint64_t)b->ne[3] : 0,
        .ne00 = (int32_t)a->ne[0], .ne01 = (int32_t)a->ne[1], .ne11 = (int32_t)b->ne[1], .ne12 = (int32_t)b->ne[2],
        .r2 = (int32_t)(b->ne[2] / a->ne[2]), .r3 = (int32_t)(b->ne[3] / a->ne[3]),
        .q6_k = a->type == CT_TYPE_Q6_K, /* the work layout follows src0's units */
        .qy_group = ct_qy_group(a->type),
    };
    const cl_ulong y_off = p.y_offset;
#define MM_ARG_SRC1()                                          \
    do {                                                       \
        if (p.f16y || p.y16) {                                 \
            ct_ocl_arg_mem(enc, work);                         \
            ct_ocl_arg_u64(enc, y_off);                        \
        } else {                                               \
            ct_ocl_arg_tensor(enc, b, "src1");                 \
        }                                                      \
    } while (0)
    if (!p.mvq) {
        ct_ocl_enc_kernel(enc, p.id);
        ct_ocl_arg_tensor(enc, a, "src0");
        MM_ARG_SRC1();
        ct_ocl_arg_tensor(enc, node, "dst");
        ct_ocl_arg_bytes(enc, &args, sizeof args);
        ct_ocl_arg_local(enc, p.scratch);
        ct_ocl_enc_dispatch(enc, p.groups, p.local);
        return enc->st;
    }

    /* src1 into 8-bit blocks in the work memory, four values a work-item ... */
    if (!held) {
        const size_t qy_local[3] = {CT_QY_WG, 1, 1};
        const size_t qy_groups[3] = {((size_t)a->ne[0] / 4 + CT_QY_WG - 1) / CT_QY_WG, (size_t)b->ne[1],
                                     (size_t)b->ne[2] * (size_t)b->ne[3]};
        ct_ocl_enc_kernel(enc, CT_OCL_K_QUANTIZE_QY);
        MM_ARG_SRC1();
        ct_ocl_arg_mem(enc, work);
        ct_ocl_arg_bytes(enc, &args, sizeof args);
        ct_ocl_enc_dispatch(enc, qy_groups, qy_local);
    }
    /* ... then the integer-dot mat-vec, or with the next MUL_MAT and their SWIGLU */
    const ct_tensor *pair = NULL, *glu = fused_swiglu(enc, node, &p, &k, &pair);
    const size_t teams = glu ? mvq_teams(enc, k.mvq1_swiglu, a->type, false) : 0;
    if (glu && teams > 0) {
        const ct_tensor *x = glu->src[0] == node ? a : pair->src[0], *g = glu->src[0] == node ? pair->src[0] : a;
        const size_t local[3] = {teams * CT_MVQ_TEAM, 1, 1};
        const size_t groups[3] = {((size_t)a->ne[1] + CT_MVQ_NR0 * teams - 1) / (CT_MVQ_NR0 * teams), 1, 1};
        ct_ocl_enc_kernel(enc, k.mvq1_swiglu);
        ct_ocl_arg_tensor(enc, x, "src0");
        ct_ocl_arg_mem(enc, work);
        ct_ocl_arg_tensor(enc, glu, "dst");
        ct_ocl_arg_bytes(enc, &args, sizeof args);
        ct_ocl_arg_local(enc, mvq_scratch_bytes(a->type, teams, false));
        ct_ocl_arg_tensor(enc, g, "src0");
        ct_ocl_enc_dispatch(enc, groups, local);
        *n_nodes = 3;
        return enc->st;
    }
    ct_ocl_enc_kernel(enc, p.id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_mem(enc, work);
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_local(enc, p.scratch);
    ct_ocl_enc_dispatch(enc, p.groups, p.local);
    return enc->st;
#undef MM_ARG_SRC1
}
