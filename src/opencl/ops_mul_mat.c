/* MUL_MAT on OpenCL (kernels/mul_mat.cl). Kernel choice, in order:
 *   src1 elements not packed (nb10 != 4)       -> 1row (reads src1 with its stride)
 *   float src0 with ne00 == 4                  -> c4
 *   ne11 >= MM_MIN_NE11 and the tiled kernel
 *     can run 256 work-items                   -> mm128 (128x128 tiles) from ne01 >= MM128_MIN_NE01 and
 *                                                 ne11 >= MM128_MIN_NE11 where it fits, else mm (64x64 tiles)
 *   quantized src0, rows of 64-value units
 *     in 4-byte aligned words (Q6_K: 2)          -> quantize_qy (src1 into 8-bit blocks in the work
 *                                                 buffer), then mvq (2 src0 rows per local row x 8 src1
 *                                                 rows, integer dot products; kernels/mul_mvq.cl)
 *   otherwise                                  -> mv (2 src0 rows per local row x 4 src1 rows)
 * The supported set is the CPU backend's, less what the kernels' int indices and
 * aligned loads cannot take (dims above INT_MAX, misaligned strides or views). */
#include "opencl_internal.h"

#include <limits.h>

enum {
    MV_NR0 = 2, /* as kernels/mul_mat.cl */
    MV_NR1 = 4,
    MM_TILE = 64,
    MM_WG = 256,
    MM_LOCAL_FLOATS = 2 * 32 * 65,
    MM_MIN_NE11 = 16, /* from here on each weight read serves enough src1 rows for the tiles to pay */
    MM128_TILE = 128,
    MM128_LOCAL_FLOATS = 2 * 16 * 132 + 16, /* as kernels/mul_mat.cl: A and B [MMT_BK][MMT_LD], IQ4_NL's table */
    MM128_MIN_NE01 = 128, /* smaller shapes fill 128x128 tiles too thinly: the 64x64 ones waste less */
    MM128_MIN_NE11 = 64,
    /* fixed sizes: one build of each kernel on JIT-specializing drivers (PoCL) */
    MV_WG = 128,
    MVQ_NR0 = 2, /* as kernels/mul_mvq.cl */
    MVQ_NR1 = 8,
    MVQ_UNIT = 64, /* src0 values per work-item step */
    MVQY_MIN_NE11 = 4, /* src1 rows from which the staged-y kernels run (on the H200 they were slower at 2) */
    QY_WG = 64, /* as kernels/mul_mvq.cl: 8 blocks of 8 work-items */
    ROW_WG = 64,
    C4_WG = 64,
};

typedef struct mm_kernels {
    ct_ocl_kernel_id mv, row, mm, c4; /* c4 is CT_OCL_K_COUNT for quantized types */
    ct_ocl_kernel_id mm128;
    /* MVQ_NR1 src1 rows a group; one (every 8-bit type); MVQ_NR1 with y staged once a group
     * (kernels/mul_mvq.cl: the types it is faster for); CT_OCL_K_COUNT where a type has none */
    ct_ocl_kernel_id mvq, mvq1, mvqy;
} mm_kernels;

static bool kernels_for(ct_type t, mm_kernels *k) {
#define MM_CASE(T, C4, MVQ, MVQ1, MVQY)                                                                          \
    case CT_TYPE_##T:                                                                                             \
        *k = (mm_kernels){CT_OCL_K_MUL_MV_##T##_F32, CT_OCL_K_MUL_MV_##T##_F32_1ROW, CT_OCL_K_MUL_MM_##T##_F32, C4, \
                          CT_OCL_K_MUL_MM128_##T##_F32, MVQ, MVQ1, MVQY};                                       \
        return true;
#define NONE CT_OCL_K_COUNT
#define MVQ(T) CT_OCL_K_MUL_MVQ_##T##_F32
#define MVQ1(T) CT_OCL_K_MUL_MVQ1_##T##_F32
#define MVQY(T) CT_OCL_K_MUL_MVQY_##T##_F32
    switch (t) {
        MM_CASE(F32, CT_OCL_K_MUL_MV_F32_F32_C4, NONE, NONE, NONE)
        MM_CASE(F16, CT_OCL_K_MUL_MV_F16_F32_C4, NONE, NONE, NONE)
        MM_CASE(BF16, CT_OCL_K_MUL_MV_BF16_F32_C4, NONE, NONE, NONE)
        MM_CASE(Q4_0, NONE, MVQ(Q4_0), MVQ1(Q4_0), NONE)
        MM_CASE(Q4_1, NONE, MVQ(Q4_1), MVQ1(Q4_1), MVQY(Q4_1))
        MM_CASE(Q5_0, NONE, MVQ(Q5_0), MVQ1(Q5_0), MVQY(Q5_0))
        MM_CASE(Q5_1, NONE, MVQ(Q5_1), MVQ1(Q5_1), MVQY(Q5_1))
        MM_CASE(Q8_0, NONE, MVQ(Q8_0), MVQ1(Q8_0), MVQY(Q8_0))
        MM_CASE(IQ4_NL, NONE, MVQ(IQ4_NL), MVQ1(IQ4_NL), NONE)
        MM_CASE(Q4_K, NONE, MVQ(Q4_K), MVQ1(Q4_K), NONE)
        MM_CASE(Q5_K, NONE, MVQ(Q5_K), MVQ1(Q5_K), MVQY(Q5_K))
        MM_CASE(Q6_K, NONE, MVQ(Q6_K), MVQ1(Q6_K), MVQY(Q6_K))
    default: return false;
    }
#undef MVQY
#undef MVQ1
#undef MVQ
#undef NONE
#undef MM_CASE
}

/* The 128x128 kernel: available, 256 work-items allowed, and its local memory there. */
static bool mm128_usable(const ct_ocl_backend *be, ct_ocl_kernel_id id) {
    if (!ct_ocl_kernel_available(be->dev, id) || ct_ocl_clamp_wg(be, id, MM_WG) != MM_WG) return false;
    cl_ulong local = 0; /* the device caps do not keep it; one query per large MUL_MAT is cheap */
    if (clGetDeviceInfo(be->dev->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL) != CL_SUCCESS)
        return false;
    return local >= MM128_LOCAL_FLOATS * sizeof(float);
}

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t, int from, size_t a) {
    for (int i = from; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % a != 0) return false;
    return ct_ocl_start_aligned(dev, t, a);
}

bool ct_ocl_mul_mat_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || op->op != CT_OP_MUL_MAT || op->type != CT_TYPE_F32) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1];
    mm_kernels k;
    if (!a || !b || b->type != CT_TYPE_F32 || !kernels_for(a->type, &k)) return false;
    if (!ct_ocl_kernel_available(dev, k.mv) || !ct_ocl_kernel_available(dev, k.row) ||
        !ct_ocl_kernel_available(dev, k.mm) || (k.c4 != CT_OCL_K_COUNT && !ct_ocl_kernel_available(dev, k.c4)))
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
    /* loads: src0 by blocks (2-byte fields; F32 by 4), src1 and dst by float */
    return op->nb[0] == sizeof(float) && strides_aligned(dev, op, 1, 4) && strides_aligned(dev, b, 0, 4) &&
           strides_aligned(dev, a, 1, a->type == CT_TYPE_F32 ? 4 : 2);
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

/* Work-items of an 8-bit mat-vec team, which stages MVQ_TEAM units of MVQ_NR0 rows at a
 * time in local memory (kernels/mul_mvq.cl); the stage's bytes (mvq_lane_words there). */
enum { MVQ_TEAM = 32 };
static size_t mvq_stage_bytes(ct_type t) {
    const size_t chunk = (size_t)MVQ_TEAM * MVQ_UNIT / (size_t)ct_type_block_size(t) * ct_type_size(t);
    const size_t lane_words = (chunk + 4 * MVQ_TEAM - 1) / (4 * MVQ_TEAM);
    return MVQ_NR0 * MVQ_TEAM * lane_words * 4;
}

/* The kernel's local memory for `teams` teams: IQ4_NL's table (16 bytes), the teams'
 * stages, and in the staged-y kernels up to 12 bytes more to a 16-byte boundary and the
 * y stage (mvq_stage_y: 5 x MVQ_TEAM int4 for each of MVQ_NR1 src1 rows). */
static size_t mvq_scratch_bytes(ct_type t, size_t teams, bool staged_y) {
    return 16 + teams * mvq_stage_bytes(t) + (staged_y ? 16 + MVQ_NR1 * 5 * MVQ_TEAM * 16 : 0);
}

/* Teams in a work-group: as many as MV_WG work-items hold, 0 when not one fits. */
static size_t mvq_teams(const ct_ocl_backend *be, ct_ocl_kernel_id id, ct_type t, bool staged_y) {
    size_t teams = ct_ocl_clamp_wg(be, id, MV_WG) / MVQ_TEAM;
    while (teams > 0 && mvq_scratch_bytes(t, teams, staged_y) > be->dev->local_mem) teams--;
    return teams;
}

/* The 8-bit path applies: a quantized src0 in whole 64-value units whose words
 * the kernel can load (4-byte aligned rows; Q6_K's 210-byte blocks take 2), and a
 * work-group and local memory that hold a team. */
static bool mvq_applies(const ct_ocl_backend *be, const ct_tensor *a, const mm_kernels *k) {
    if (k->mvq == CT_OCL_K_COUNT || !ct_ocl_kernel_available(be->dev, k->mvq) ||
        !ct_ocl_kernel_available(be->dev, CT_OCL_K_QUANTIZE_QY) ||
        ct_ocl_clamp_wg(be, CT_OCL_K_QUANTIZE_QY, QY_WG) != QY_WG || mvq_teams(be, k->mvq, a->type, false) == 0)
        return false;
    /* the kernel's byte offsets within a row are int */
    size_t row_bytes;
    return a->ne[0] > 0 && a->ne[0] % MVQ_UNIT == 0 && ct_row_size(a->type, a->ne[0], &row_bytes) == CT_OK &&
           row_bytes <= INT_MAX && strides_aligned(be->dev, a, 1, a->type == CT_TYPE_Q6_K ? 2 : 4);
}

/* src1 into 8-bit blocks in the work buffer, then the integer-dot mat-vec. */
static ct_status encode_mvq(ct_ocl_backend *be, ct_tensor *node, const mm_kernels *k) {
    const ct_tensor *a = node->src[0], *b = node->src[1];
    const cl_int ne00 = (cl_int)a->ne[0], ne01 = (cl_int)a->ne[1];
    const cl_int ne11 = (cl_int)b->ne[1], ne12 = (cl_int)b->ne[2];
    const cl_int r2 = (cl_int)(b->ne[2] / a->ne[2]), r3 = (cl_int)(b->ne[3] / a->ne[3]);
    const size_t nbatch = (size_t)b->ne[2] * (size_t)b->ne[3];
    /* per src1 row: ne00 bytes of q and ne00 / 32 (d, s) pairs of 8 bytes */
    size_t nrows, bytes;
    if (!ct_mul_size((size_t)ne11, nbatch, &nrows) || !ct_mul_size(nrows, (size_t)ne00 / 32 * 40, &bytes)) {
        return ct_ocl_fail(be, CT_INVALID_ARGUMENT, "src1 '%s' of %d x %zu rows of %d values quantizes to more "
                           "than SIZE_MAX bytes", b->name[0] ? b->name : "(unnamed)", ne11, nbatch, ne00);
    }
    cl_mem work;
    ct_status st = ct_ocl_work_buffer(be, bytes, &work);
    if (st != CT_OK) return st;
    const cl_ulong nrows_arg = nrows;

    const ct_ocl_kernel_id qy = CT_OCL_K_QUANTIZE_QY;
    const cl_ulong nb11 = b->nb[1], nb12 = b->nb[2], nb13 = b->nb[3];
    size_t groups[3], local[3] = {1, 1, 1};
    local[0] = QY_WG; /* four values per work-item */
    groups[0] = ((size_t)ne00 / 4 + QY_WG - 1) / QY_WG, groups[1] = (size_t)ne11, groups[2] = nbatch;
    st = ct_ocl_set_arg_tensor(be, qy, 0, b, "src1");
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 2, ne00);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 3, ne11);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 4, ne12);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 5, nb11);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 6, nb12);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 7, nb13);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 8, work);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 9, nrows_arg);
    const cl_int q6k = a->type == CT_TYPE_Q6_K; /* the work layout follows src0's units */
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, qy, 10, q6k);
    if (st == CT_OK) st = ct_ocl_dispatch(be, qy, groups, local);
    if (st != CT_OK) return st;

    /* one src1 row: the kernel that keeps one row's accumulators */
    const bool one = ne11 == 1 && k->mvq1 != CT_OCL_K_COUNT && ct_ocl_kernel_available(be->dev, k->mvq1) &&
                     mvq_teams(be, k->mvq1, a->type, false) > 0;
    /* from MVQY_MIN_NE11 src1 rows: y staged once a group, where the type has that kernel */
    const bool staged_y = ne11 >= MVQY_MIN_NE11 && k->mvqy != CT_OCL_K_COUNT &&
                          ct_ocl_kernel_available(be->dev, k->mvqy) && mvq_teams(be, k->mvqy, a->type, true) > 0;
    const ct_ocl_kernel_id id = one ? k->mvq1 : staged_y ? k->mvqy : k->mvq;
    /* 1-D groups of teams, MVQ_NR0 rows each */
    const size_t teams = mvq_teams(be, id, a->type, staged_y);
    local[0] = teams * MVQ_TEAM, local[1] = 1, local[2] = 1;
    const size_t rows_per_group = MVQ_NR0 * teams, scratch = mvq_scratch_bytes(a->type, teams, staged_y);
    groups[0] = ((size_t)ne01 + rows_per_group - 1) / rows_per_group;
    groups[1] = one ? 1 : ((size_t)ne11 + MVQ_NR1 - 1) / MVQ_NR1;
    groups[2] = nbatch;

    const cl_ulong nb01 = a->nb[1], nb02 = a->nb[2], nb03 = a->nb[3];
    const cl_ulong nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];
    st = ct_ocl_set_arg_tensor(be, id, 0, a, "src0");
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 2, work);
    if (st == CT_OK) st = ct_ocl_set_arg_tensor(be, id, 3, node, "dst");
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 5, ne00);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 6, ne01);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 7, nb01);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 8, nb02);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 9, nb03);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 10, ne11);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 11, ne12);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 12, nb1);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 13, nb2);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 14, nb3);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 15, r2);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 16, r3);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 17, nrows_arg);
    if (st == CT_OK) st = ct_ocl_set_arg_local(be, id, 18, scratch);
    if (st == CT_OK) st = ct_ocl_dispatch(be, id, groups, local);
    return st;
}

ct_status ct_ocl_encode_mul_mat(ct_ocl_backend *be, ct_tensor *node) {
    const ct_tensor *a = node->src[0], *b = node->src[1];
    mm_kernels k;
    if (!ct_ocl_mul_mat_supported(be->dev, node) || !kernels_for(a->type, &k)) {
        return ct_ocl_fail(be, CT_UNSUPPORTED, "MUL_MAT of src0 %s, src1 %s into dst %s is not supported",
                           a ? ct_type_name(a->type) : "none", b ? ct_type_name(b->type) : "none",
                           ct_type_name(node->type));
    }
    if (ct_is_empty(node)) return CT_OK;

    const cl_int ne00 = (cl_int)a->ne[0], ne01 = (cl_int)a->ne[1];
    const cl_int ne11 = (cl_int)b->ne[1], ne12 = (cl_int)b->ne[2];
    const cl_int r2 = (cl_int)(b->ne[2] / a->ne[2]), r3 = (cl_int)(b->ne[3] / a->ne[3]);
    const size_t nbatch = (size_t)b->ne[2] * (size_t)b->ne[3];
    const bool is_float = a->type == CT_TYPE_F32 || a->type == CT_TYPE_F16 || a->type == CT_TYPE_BF16;

    ct_ocl_kernel_id id;
    size_t groups[3], local[3] = {1, 1, 1}, scratch;
    if (b->nb[0] != sizeof(float)) {
        id = k.row;
        local[0] = ct_ocl_clamp_wg(be, id, ROW_WG);
        groups[0] = (size_t)ne01, groups[1] = (size_t)ne11, groups[2] = nbatch;
        scratch = local[0] * sizeof(float);
    } else if (is_float && ne00 == 4) {
        id = k.c4;
        local[0] = ct_ocl_clamp_wg(be, id, C4_WG);
        groups[0] = ((size_t)ne01 + local[0] - 1) / local[0], groups[1] = ((size_t)ne11 + 3) / 4, groups[2] = nbatch;
        scratch = sizeof(float);
    } else if (ne11 >= MM_MIN_NE11 && ct_ocl_clamp_wg(be, k.mm, MM_WG) == MM_WG) {
        const bool big = ne01 >= MM128_MIN_NE01 && ne11 >= MM128_MIN_NE11 && mm128_usable(be, k.mm128);
        const size_t tile = big ? MM128_TILE : MM_TILE;
        id = big ? k.mm128 : k.mm;
        local[0] = MM_WG;
        groups[0] = ((size_t)ne01 + tile - 1) / tile, groups[1] = ((size_t)ne11 + tile - 1) / tile;
        groups[2] = nbatch;
        scratch = (big ? MM128_LOCAL_FLOATS : MM_LOCAL_FLOATS) * sizeof(float);
    } else if (mvq_applies(be, a, &k)) {
        return encode_mvq(be, node, &k);
    } else {
        id = k.mv;
        const size_t nr0 = MV_NR0, nr1 = MV_NR1;
        local_rows(ct_ocl_clamp_wg(be, id, MV_WG), ((size_t)ne00 + 7) / 8, local);
        const size_t rows_per_group = nr0 * local[1];
        groups[0] = ((size_t)ne01 + rows_per_group - 1) / rows_per_group;
        groups[1] = ((size_t)ne11 + nr1 - 1) / nr1;
        groups[2] = nbatch;
        scratch = nr0 * nr1 * local[0] * local[1];
        scratch = (scratch < 16 ? 16 : scratch) * sizeof(float); /* IQ4_NL's table */
    }

    const cl_ulong nb01 = a->nb[1], nb02 = a->nb[2], nb03 = a->nb[3];
    const cl_ulong nb10 = b->nb[0], nb11 = b->nb[1], nb12 = b->nb[2], nb13 = b->nb[3];
    const cl_ulong nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];
    ct_status st = ct_ocl_set_arg_tensor(be, id, 0, a, "src0");
    if (st == CT_OK) st = ct_ocl_set_arg_tensor(be, id, 2, b, "src1");
    if (st == CT_OK) st = ct_ocl_set_arg_tensor(be, id, 4, node, "dst");
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 6, ne00);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 7, ne01);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 8, nb01);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 9, nb02);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 10, nb03);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 11, ne11);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 12, ne12);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 13, nb10);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 14, nb11);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 15, nb12);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 16, nb13);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 17, nb1);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 18, nb2);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 19, nb3);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 20, r2);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 21, r3);
    if (st == CT_OK) st = ct_ocl_set_arg_local(be, id, 22, scratch);
    if (st == CT_OK) st = ct_ocl_dispatch(be, id, groups, local);
    return st;
}
