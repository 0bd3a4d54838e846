/* MUL_MAT_ID and ADD_ID on OpenCL (kernels/mul_mat_id.cl).
 *
 * MUL_MAT_ID: the types and shapes are MUL_MAT's: a node is supported where MUL_MAT would
 * take one expert's matrix times one of its src1 rows (ct_ocl_mul_mat_supported on that
 * node), with src1 rows of packed F32 or F16 and the type's id kernels; nothing here lists
 * types. An F16 src1 is widened first into packed F32 rows in the work memory
 * (ct_ocl_mm_widen_f16_y, as MUL_MAT does), which the kernels then read. Then:
 *   experts get fewer than CT_OCL_MM_MIN_NE11 rows on average (n_used * n_tokens / n_as)
 *                                          -> ct_mul_mv_id_<t>_f32: MUL_MAT's mat-vec body
 *                                             per (used expert, token), as ggml-metal's
 *                                             mul_mv_id: decode reads only the used experts
 *   from there on (MUL_MAT's rule: each weight read serves that many rows; counting
 *   tokens instead gave 64x64 tiles of one row in 64 to 128 sparse experts)
 *                                          -> the grouped path, as ggml-metal's and
 *                                             ggml-cuda's: ct_mul_mm_id_map lists each
 *                                             expert's (slot, token) entries in the work
 *                                             memory, then MUL_MAT's tiled kernel (the
 *                                             tensor cores' tiles where MUL_MAT would take
 *                                             them, else 64x64 or 128x128 ones;
 *                                             ct_ocl_mm_tiles_pick by the mean rows per
 *                                             expert) runs over each expert's
 *                                             gathered src1 rows and writes its dst rows:
 *                                             one launch a node, each weight read once per
 *                                             tile of an expert's rows, not once per token.
 * The grouped path needs the map's counters in local memory (two ints per expert); where
 * they do not fit, the mat-vec runs. Ids outside [0, n_as) give zero rows either way.
 * ADD_ID: one work-group row per dst row; F32 or F16 rows packed. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "tensor/tensor_internal.h"

#include <limits.h>
#include <string.h>

enum {
    MV_WG = 128,
    ADD_WG = 64,
    MAP_WG = 256,
    WORK_ALIGN = 256, /* the lists' offset in the work memory, after a widened src1 */
};

static bool available(const ct_ocl_device *dev, ct_ocl_kernel_id id) {
    return id != CT_OCL_K_COUNT && ct_ocl_kernel_available(dev, id);
}

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t, int from, size_t a) {
    for (int i = from; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % a != 0) return false;
    return ct_ocl_start_aligned(dev, t, a);
}

static bool dims_fit(const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->ne[i] > INT_MAX) return false;
    return true;
}

static bool add_id_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!ct_add_id_node_valid(op)) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1], *ids = op->src[2];
    if (!available(dev, ct_ocl_kernel_for(CT_OCL_FAMILY_ADD_ID, a->type))) return false;
    const size_t es = ct_type_size(a->type);
    if (a->nb[0] != es || b->nb[0] != es || op->nb[0] != es) return false;
    if (!dims_fit(a) || !dims_fit(b) || !dims_fit(ids) || ct_nrows(a) > INT_MAX) return false;
    return strides_aligned(dev, a, 1, es) && strides_aligned(dev, b, 1, es) && strides_aligned(dev, op, 1, es) &&
           strides_aligned(dev, ids, 0, 4);
}

/* The MUL_MAT node of one expert's matrix times one src1 row into one dst row. */
static void expert_node(const ct_tensor *op, ct_tensor *a, ct_tensor *b, ct_tensor *d) {
    *a = *op->src[0];
    a->ne[2] = 1;
    *b = *op->src[1];
    b->ne[1] = 1, b->ne[2] = 1;
    *d = *op;
    d->op = CT_OP_MUL_MAT;
    d->ne[1] = 1, d->ne[2] = 1;
    d->src[0] = a, d->src[1] = b, d->src[2] = NULL;
}

static bool mul_mat_id_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!ct_mul_mat_id_node_valid(op)) return false;
    const ct_tensor *as = op->src[0], *b = op->src[1], *ids = op->src[2];
    if (!available(dev, ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MV_ID, as->type))) return false;
    /* rows packed: the mat-vec reads F32 rows so, and F16 ones are widened to them */
    if ((b->type != CT_TYPE_F32 && b->type != CT_TYPE_F16) || b->nb[0] != ct_type_size(b->type)) return false;
    if (!dims_fit(as) || !dims_fit(b) || !dims_fit(ids) || !dims_fit(op)) return false;
    int64_t n_ids;
    if (!ct_mul_i64(op->ne[1], op->ne[2], &n_ids) || n_ids > INT_MAX) return false;
    if (as->nb[2] % (as->type == CT_TYPE_F32 ? 4 : 2) != 0 || !strides_aligned(dev, ids, 0, 4)) return false;
    ct_tensor a1, b1, d1;
    expert_node(op, &a1, &b1, &d1);
    return ct_ocl_mul_mat_supported(dev, &d1);
}

bool ct_ocl_mul_mat_id_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op) return false;
    return op->op == CT_OP_ADD_ID ? add_id_supported(dev, op) : mul_mat_id_supported(dev, op);
}

static ct_status encode_add_id(ct_ocl_enc *enc, ct_tensor *node) {
    const ct_tensor *a = node->src[0], *b = node->src[1], *ids = node->src[2];
    const ct_ocl_kernel_id id = ct_ocl_kernel_for(CT_OCL_FAMILY_ADD_ID, a->type);
    const ct_add_id_args args = {
        .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3], .nb11 = b->nb[1],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3], .nbi0 = ids->nb[0], .nbi1 = ids->nb[1],
        .ne0 = (int32_t)a->ne[0], .ne1 = (int32_t)a->ne[1], .ne2 = (int32_t)a->ne[2], .n_as = (int32_t)b->ne[1],
        .nrows = (int32_t)ct_nrows(a),
    };
    /* rows of up to 64 values: 32 work-items a row, several rows a group */
    const size_t wg = ct_ocl_enc_clamp_wg(enc, id, ADD_WG);
    size_t lx = a->ne[0] <= 32 ? 32 : wg;
    if (lx > wg) lx = wg;
    size_t ly = wg / lx;
    if (ly > enc->be->dev->max_work_item_sizes[1]) ly = enc->be->dev->max_work_item_sizes[1];
    if (ly == 0) ly = 1;
    const size_t local[3] = {lx, ly, 1};
    const size_t groups[3] = {((size_t)args.nrows + ly - 1) / ly, 1, 1};
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, b, "src1");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_tensor(enc, ids, "src2");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

/* How a MUL_MAT_ID node runs: the mat-vec or the grouped path (tiled), and what it keeps in
 * the work memory: an F16 src1's F32 rows at 0, the experts' lists at map_offset. */
typedef struct mmid_plan {
    bool tiled, f16y;
    ct_ocl_mm_tiles tiles;
    size_t map_wg, map_local, y_bytes, map_offset, work_bytes;
} mmid_plan;

static void plan(ct_ocl_enc *enc, const ct_tensor *node, mmid_plan *p) {
    const ct_tensor *as = node->src[0], *b = node->src[1], *ids = node->src[2];
    const size_t n_as = (size_t)as->ne[2], n_ids = (size_t)ids->ne[0] * (size_t)ids->ne[1];
    *p = (mmid_plan){0};
    p->f16y = b->type == CT_TYPE_F16;
    if (p->f16y && (!ct_mul_size((size_t)b->ne[0] * sizeof(float), (size_t)b->ne[1], &p->y_bytes) ||
                    !ct_mul_size(p->y_bytes, (size_t)b->ne[2], &p->y_bytes))) {
        ct_ocl_enc_fail(enc, CT_INVALID_ARGUMENT, "src1 '%s' of %lld x %lld x %lld F16 values widens to more than "
                        "SIZE_MAX bytes", b->name[0] ? b->name : "(unnamed)", (long long)b->ne[0],
                        (long long)b->ne[1], (long long)b->ne[2]);
        return;
    }
    p->work_bytes = p->y_bytes;
    const ct_ocl_kernel_id map = CT_OCL_K_MUL_MM_ID_MAP;
    /* the map's two counters per list (n_as + 1 lists) in local memory */
    p->map_local = 2 * (n_as + 1) * sizeof(int32_t);
    /* MUL_MAT's rule on the rows each weight read serves: the mean rows an expert gets */
    const size_t rows = n_as > 0 ? n_ids / n_as : n_ids;
    if (rows < CT_OCL_MM_MIN_NE11 || !ct_ocl_kernel_available(enc->be->dev, map) ||
        p->map_local > enc->be->dev->local_mem)
        return;
    p->map_wg = ct_ocl_enc_clamp_wg(enc, map, MAP_WG);
    if (!ct_ocl_mm_tiles_pick(enc, ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MMTC_ID, as->type),
                              ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MM_ID, as->type),
                                 ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MM128_ID, as->type),
                                 (size_t)as->ne[1], rows, &p->tiles))
        return;
    /* counts, offsets and entries (n_ids <= INT_MAX: supported()) after the widened src1 */
    size_t off;
    if (!ct_add_size(p->y_bytes, WORK_ALIGN - 1, &off) ||
        !ct_add_size(off / WORK_ALIGN * WORK_ALIGN, (2 * (n_as + 1) + n_ids) * sizeof(int32_t), &p->work_bytes)) {
        ct_ocl_enc_fail(enc, CT_INVALID_ARGUMENT, "src1 '%s' and the lists of %zu experts take more than SIZE_MAX "
                        "bytes of work memory", b->name[0] ? b->name : "(unnamed)", n_as);
        return;
    }
    p->map_offset = off / WORK_ALIGN * WORK_ALIGN;
    p->tiled = true;
}

ct_status ct_ocl_mul_mat_id_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes) {
    *bytes = 0;
    if (node->op != CT_OP_MUL_MAT_ID) return CT_OK;
    CT_ASSERT(ct_ocl_mul_mat_id_supported(enc->be->dev, node));
    if (ct_is_empty(node)) return CT_OK;
    mmid_plan p;
    plan(enc, node, &p);
    *bytes = p.work_bytes;
    return enc->st;
}

static ct_status encode_mul_mat_id(ct_ocl_enc *enc, ct_tensor *node) {
    const ct_tensor *as = node->src[0], *b = node->src[1], *ids = node->src[2];
    mmid_plan p;
    plan(enc, node, &p);
    if (enc->st != CT_OK) return enc->st;
    const cl_mem work = p.work_bytes > 0 ? ct_ocl_enc_work(enc, p.work_bytes) : NULL;
    if (p.f16y) ct_ocl_mm_widen_f16_y(enc, b, work, 0);
    /* src1 as the kernels read it: the tensor, or its widened rows */
    const ct_u64 nb11 = p.f16y ? (ct_u64)b->ne[0] * sizeof(float) : b->nb[1];
    const ct_mul_mat_id_args args = {
        .nb01 = as->nb[1], .nb02 = as->nb[2], .nb11 = nb11, .nb12 = p.f16y ? nb11 * (ct_u64)b->ne[1] : b->nb[2],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nbi0 = ids->nb[0], .nbi1 = ids->nb[1],
        .ne00 = (int32_t)as->ne[0], .ne01 = (int32_t)as->ne[1], .ne11 = (int32_t)b->ne[1],
        .n_used = (int32_t)node->ne[1], .n_as = (int32_t)as->ne[2], .n_tokens = (int32_t)node->ne[2],
    };
#define MMID_ARG_SRC1()                                        \
    do {                                                       \
        if (p.f16y) {                                          \
            ct_ocl_arg_mem(enc, work);                         \
            ct_ocl_arg_u64(enc, 0);                            \
        } else {                                               \
            ct_ocl_arg_tensor(enc, b, "src1");                 \
        }                                                      \
    } while (0)
    if (p.tiled) {
        /* the experts' lists, one work-group ... */
        const size_t map_local[3] = {p.map_wg, 1, 1}, map_groups[3] = {1, 1, 1};
        ct_ocl_enc_kernel(enc, CT_OCL_K_MUL_MM_ID_MAP);
        ct_ocl_arg_tensor(enc, ids, "src2");
        ct_ocl_arg_mem(enc, work);
        ct_ocl_arg_u64(enc, p.map_offset);
        ct_ocl_arg_bytes(enc, &args, sizeof args);
        ct_ocl_arg_local(enc, p.map_local);
        ct_ocl_enc_dispatch(enc, map_groups, map_local);
        /* ... then the tiles: dim 1 spans n_tokens rows (what an expert gets when each token
         * names it once; more loop), dim 2 the experts and the list of ids outside them */
        const size_t bm = p.tiles.bm, bn = p.tiles.bn, local[3] = {p.tiles.wg, 1, 1};
        const size_t groups[3] = {((size_t)as->ne[1] + bm - 1) / bm, ((size_t)node->ne[2] + bn - 1) / bn,
                                  (size_t)as->ne[2] + 1};
        ct_ocl_enc_kernel(enc, p.tiles.id);
        ct_ocl_arg_tensor(enc, as, "src0");
        MMID_ARG_SRC1();
        ct_ocl_arg_tensor(enc, node, "dst");
        ct_ocl_arg_mem(enc, work);
        ct_ocl_arg_u64(enc, p.map_offset);
        ct_ocl_arg_bytes(enc, &args, sizeof args);
        ct_ocl_arg_local(enc, p.tiles.scratch);
        ct_ocl_enc_dispatch(enc, groups, local);
        return enc->st;
    }
    const ct_ocl_kernel_id id = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MV_ID, as->type);
    /* MUL_MAT's mat-vec shape (encoders/mul_mat.c): local rows of the fewest work-items
     * (a power of two) that cover a row's 8-value units, CT_MV_NR0 src0 rows each */
    const size_t total = ct_ocl_enc_clamp_wg(enc, id, MV_WG), units = ((size_t)as->ne[0] + 7) / 8;
    size_t lx = 1;
    while (lx < total && lx < units) lx *= 2;
    if (lx > total) lx = total;
    const size_t local[3] = {lx, total / lx, 1};
    const size_t rows_per_group = CT_MV_NR0 * local[1];
    const size_t groups[3] = {((size_t)as->ne[1] + rows_per_group - 1) / rows_per_group, 1,
                              (size_t)node->ne[1] * (size_t)node->ne[2]};
    const size_t floats = CT_MV_NR0 * CT_MV_NR1 * local[0] * local[1];
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, as, "src0");
    MMID_ARG_SRC1();
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_tensor(enc, ids, "src2");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_local(enc, (floats < 16 ? 16 : floats) * sizeof(float)); /* IQ4_NL's table */
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
#undef MMID_ARG_SRC1
}

ct_status ct_ocl_encode_mul_mat_id(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_mul_mat_id_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    return node->op == CT_OP_ADD_ID ? encode_add_id(enc, node) : encode_mul_mat_id(enc, node);
}
