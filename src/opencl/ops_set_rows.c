/* SET_ROWS on OpenCL: dst[:, src1[i, i02 % ne11, i03 % ne12], i02, i03] = convert(src0[:, i, i02, i03]),
 * quantizing with common.cl's copies of the CPU quantizers (the same bytes). The
 * index check runs first; the row kernel writes nothing once it has raised the flag.
 * Duplicate indices in one batch leave the row of any one of their sources (the CPU
 * keeps the last): include/ctensor.h leaves which one wins to the backend. */
#include "ops_rows.h"
#include "tensor/tensor_internal.h"

static ct_ocl_kernel_id kernel_for(ct_type t) {
    switch (t) {
    case CT_TYPE_F32: return CT_OCL_K_SET_ROWS_F32;
    case CT_TYPE_F16: return CT_OCL_K_SET_ROWS_F16;
    case CT_TYPE_BF16: return CT_OCL_K_SET_ROWS_BF16;
    case CT_TYPE_Q8_0: return CT_OCL_K_SET_ROWS_Q8_0;
    case CT_TYPE_Q4_0: return CT_OCL_K_SET_ROWS_Q4_0;
    case CT_TYPE_Q4_1: return CT_OCL_K_SET_ROWS_Q4_1;
    case CT_TYPE_Q5_0: return CT_OCL_K_SET_ROWS_Q5_0;
    case CT_TYPE_Q5_1: return CT_OCL_K_SET_ROWS_Q5_1;
    case CT_TYPE_IQ4_NL: return CT_OCL_K_SET_ROWS_IQ4_NL;
    default: return CT_OCL_K_COUNT;
    }
}

/* The CPU backend's set (ct_set_rows_types_supported), when the kernels are there. */
bool ct_ocl_set_rows_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!op) return false;
    const ct_ocl_kernel_id kid = kernel_for(op->type);
    if (kid == CT_OCL_K_COUNT || !ct_ocl_kernel_available(dev, kid) ||
        !ct_ocl_kernel_available(dev, CT_OCL_K_CHECK_INDICES))
        return false;
    return ct_set_rows_types_supported(op);
}

/* ct_quant_rows_<t> (kernels/set_rows.cl) writes blocks straight out; its staged variant
 * through local memory; its wide variant, staged, takes CT_OCL_QT_NPER_WIDE blocks a team. */
enum { QT_PLAIN, QT_STAGED, QT_WIDE };

/* The kernel of a variant (CT_OCL_K_COUNT: none) and the blocks a team quantizes (NPER
 * of its instance). */
static ct_ocl_kernel_id quant_rows_kernel_for(ct_type t, int variant, size_t *nper) {
    *nper = variant == QT_WIDE ? CT_OCL_QT_NPER_WIDE : CT_OCL_QT_NPER;
#define QT_PICK(T)                                                                                    \
    variant == QT_WIDE ? CT_OCL_K_QUANT_ROWS_WIDE_##T                                                 \
                       : variant == QT_STAGED ? CT_OCL_K_QUANT_ROWS_STAGED_##T : CT_OCL_K_QUANT_ROWS_##T
    switch (t) {
    case CT_TYPE_Q8_0: return QT_PICK(Q8_0);
    case CT_TYPE_Q4_0: return QT_PICK(Q4_0);
    case CT_TYPE_Q4_1: return QT_PICK(Q4_1);
    case CT_TYPE_Q5_0: return QT_PICK(Q5_0);
    case CT_TYPE_Q5_1: return QT_PICK(Q5_1);
    case CT_TYPE_IQ4_NL: /* no wide kernel: its local sums take the space */
        if (variant == QT_WIDE) return CT_OCL_K_COUNT;
        return variant == QT_STAGED ? CT_OCL_K_QUANT_ROWS_STAGED_IQ4_NL : CT_OCL_K_QUANT_ROWS_IQ4_NL;
    default: return CT_OCL_K_COUNT;
    }
#undef QT_PICK
}

ct_status ct_ocl_try_quant_rows(ct_ocl_backend *be, const ct_ocl_rows_job *j, bool *done) {
    *done = false;
    const ct_type st = j->src->type;
    size_t nper;
    ct_ocl_kernel_id kid = quant_rows_kernel_for(j->dst->type, QT_PLAIN, &nper);
    if (kid == CT_OCL_K_COUNT || !ct_ocl_kernel_available(be->dev, kid) || j->ne0 % 32 != 0) return CT_OK;
    if (st != CT_TYPE_F32 && st != CT_TYPE_F16 && st != CT_TYPE_BF16) return CT_OK;
    /* a work-item loads 4 source elements at once; blocks are written 2 bytes at a time */
    const unsigned vs = st == CT_TYPE_F32 ? 16 : 8;
    unsigned sa, da;
    ct_status status = ct_ocl_rows_job_align(be, j, 0, &sa, &da);
    if (status != CT_OK) return status;
    if (sa < vs || da < 2) return CT_OK;
    /* slices of 32 work-items (8 teams of 4), the local arrays sized for CT_OCL_QT_WG (IQ4_NL: 128) */
    const size_t wg_max = j->dst->type == CT_TYPE_IQ4_NL ? CT_OCL_QT_WG_IQ4_NL : CT_OCL_QT_WG;
    const size_t wg = ct_ocl_clamp_wg(be, kid, wg_max) & ~(size_t)(CT_OCL_QT_SLICE - 1);
    if (wg < CT_OCL_QT_SLICE) return CT_OK;

    const int64_t nkr = j->ne0 / 32;
    const size_t nblk = (size_t)j->n1 * (size_t)nkr;
    /* whole slices in a row (their spans are then 16-byte aligned: 8 * nper blocks of an even
     * size): the blocks go out through local memory, when that kernel takes wg work-items; the
     * wide kernel for jobs of at least 2^rows8_min_log2 of its work-items (as ct_rows8: fewer
     * leave too few waves of groups) */
    const size_t items = nblk * 4 * (size_t)j->n2 * (size_t)j->n3; /* work-items at one block a team */
    for (int v = QT_WIDE; v >= QT_STAGED; v--) {
        size_t vn;
        const ct_ocl_kernel_id kv = quant_rows_kernel_for(j->dst->type, v, &vn);
        if (kv == CT_OCL_K_COUNT || da < 16 || (size_t)nkr % (CT_OCL_QT_SLICE / 4 * vn) != 0 ||
            !ct_ocl_kernel_available(be->dev, kv) || ct_ocl_clamp_wg(be, kv, wg) != wg)
            continue;
        if (v == QT_WIDE && items / vn < ((size_t)1 << be->dev->rows8_min_log2)) continue;
        kid = kv;
        nper = vn;
        break;
    }
    const size_t per_group = (wg / 4) * nper;
    args g = {be, kid, 0, CT_OK};
    arg_tensor(&g, j->src, "src0");
    if (j->idx) arg_tensor(&g, j->idx, "src1");
    else arg_null_tensor(&g);
    arg_tensor(&g, j->dst, "dst");
    arg_i64(&g, nkr);
    arg_i64(&g, j->n1);
    for (int k = 0; k < 3; k++) arg_u64(&g, j->snb[k]);
    for (int k = 0; k < 3; k++) arg_u64(&g, j->dnb[k]);
    arg_rows_index(&g, j);
    arg_i32(&g, (int)st);
    if (j->idx) arg_flag(&g);
    else arg_no_flag(&g);
    if (g.st != CT_OK) return g.st;
    *done = true;
    const size_t local[3] = {wg, 1, 1};
    const size_t groups[3] = {(nblk + per_group - 1) / per_group, (size_t)j->n2, (size_t)j->n3};
    return ct_ocl_dispatch(be, kid, groups, local);
}

ct_status ct_ocl_encode_set_rows(ct_ocl_backend *be, ct_tensor *node) {
    const ct_tensor *b = node->src[0], *c = node->src[1];
    if (ct_is_empty(b)) return CT_OK;
    ct_status st = ct_ocl_encode_check_indices(be, c, node->ne[1]);
    if (st != CT_OK) return st;

    /* packed source rows (the destination's are): ct_rows4 or ct_quant_rows */
    if (b->nb[0] == ct_type_size(b->type) || b->ne[0] == 1) {
        const ct_ocl_rows_job j = {.src = b, .idx = c, .dst = node, .mode = CT_OCL_ROWS_SET, .ne0 = b->ne[0],
                                   .n1 = b->ne[1], .n2 = b->ne[2], .n3 = b->ne[3], .lim = node->ne[1],
                                   .snb = {b->nb[1], b->nb[2], b->nb[3]},
                                   .dnb = {node->nb[1], node->nb[2], node->nb[3]}};
        bool done;
        st = ct_type_block_size(node->type) > 1 ? ct_ocl_try_quant_rows(be, &j, &done)
                                                : ct_ocl_try_rows4(be, &j, &done);
        if (st != CT_OK || done) return st;
    }

    const unsigned es_src = (unsigned)ct_type_size(b->type);
    const size_t ts_dst = ct_type_size(node->type);
    const unsigned es_dst = ct_type_block_size(node->type) == 1 ? (unsigned)ts_dst : 1u;
    const int64_t nk0 = node->ne[0] / ct_type_block_size(node->type);

    args g = {be, kernel_for(node->type), 0, CT_OK};
    arg_tensor(&g, b, "src0");
    arg_tensor(&g, c, "src1");
    arg_tensor(&g, node, "dst");
    arg_i64(&g, nk0);
    arg_i64(&g, b->ne[1]);
    for (int k = 0; k < 4; k++) arg_u64(&g, b->nb[k]);
    arg_i64(&g, c->ne[1]);
    arg_i64(&g, c->ne[2]);
    for (int k = 0; k < 3; k++) arg_u64(&g, c->nb[k]);
    for (int k = 1; k < 4; k++) arg_u64(&g, node->nb[k]);
    arg_i64(&g, node->ne[1]);
    arg_i32(&g, c->type == CT_TYPE_I64);
    arg_i32(&g, b->type == CT_TYPE_F16);
    arg_i32(&g, ct_ocl_alignment(ct_ocl_addr_bits(be->dev, b), b->nb, es_src) >= es_src);
    arg_i32(&g, ct_ocl_alignment(ct_ocl_addr_bits(be->dev, node), node->nb, es_dst) >= es_dst);
    arg_flag(&g);
    if (g.st != CT_OK) return g.st;

    size_t nth, nrptg;
    ct_ocl_rows_wg((size_t)nk0, ct_ocl_clamp_wg(be, g.kid, 1024), be->dev->max_work_item_sizes[1], &nth, &nrptg);
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {((size_t)b->ne[1] + nrptg - 1) / nrptg, (size_t)b->ne[2], (size_t)b->ne[3]};
    return ct_ocl_dispatch(be, g.kid, groups, local);
}
