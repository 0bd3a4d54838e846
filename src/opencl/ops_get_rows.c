/* GET_ROWS on OpenCL: dst[:, i10, i11, i12] = dequant(src0[:, src1[i10, i11, i12], i11, i12]).
 * ct_check_indices runs first and raises the error flag on a bad index; the row
 * kernel then writes nothing. */
#include "ops_rows.h"
#include "tensor/tensor_internal.h"

static ct_ocl_kernel_id kernel_for(ct_type t) {
    switch (t) {
    case CT_TYPE_F32:
    case CT_TYPE_I32: return CT_OCL_K_GET_ROWS_X32;
    case CT_TYPE_F16: return CT_OCL_K_GET_ROWS_F16;
    case CT_TYPE_BF16: return CT_OCL_K_GET_ROWS_BF16;
    case CT_TYPE_Q4_0: return CT_OCL_K_GET_ROWS_Q4_0;
    case CT_TYPE_Q4_1: return CT_OCL_K_GET_ROWS_Q4_1;
    case CT_TYPE_Q5_0: return CT_OCL_K_GET_ROWS_Q5_0;
    case CT_TYPE_Q5_1: return CT_OCL_K_GET_ROWS_Q5_1;
    case CT_TYPE_Q8_0: return CT_OCL_K_GET_ROWS_Q8_0;
    case CT_TYPE_IQ4_NL: return CT_OCL_K_GET_ROWS_IQ4_NL;
    case CT_TYPE_Q2_K: return CT_OCL_K_GET_ROWS_Q2_K;
    case CT_TYPE_Q3_K: return CT_OCL_K_GET_ROWS_Q3_K;
    case CT_TYPE_Q4_K: return CT_OCL_K_GET_ROWS_Q4_K;
    case CT_TYPE_Q5_K: return CT_OCL_K_GET_ROWS_Q5_K;
    case CT_TYPE_Q6_K: return CT_OCL_K_GET_ROWS_Q6_K;
    case CT_TYPE_Q8_K: return CT_OCL_K_GET_ROWS_Q8_K;
    case CT_TYPE_IQ4_XS: return CT_OCL_K_GET_ROWS_IQ4_XS;
    default: return CT_OCL_K_COUNT;
    }
}

/* The CPU backend's set (ct_get_rows_types_supported), where the kernel exists. */
bool ct_ocl_get_rows_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!ct_get_rows_types_supported(op)) return false;
    const ct_ocl_kernel_id kid = kernel_for(op->src[0]->type);
    return kid != CT_OCL_K_COUNT && ct_ocl_kernel_available(dev, kid) &&
           ct_ocl_kernel_available(dev, CT_OCL_K_CHECK_INDICES);
}

ct_status ct_ocl_encode_check_indices(ct_ocl_backend *be, const ct_tensor *idx, int64_t limit) {
    if (ct_is_empty(idx)) return CT_OK;
    args a = {be, CT_OCL_K_CHECK_INDICES, 0, CT_OK};
    arg_tensor(&a, idx, "indices");
    arg_i64(&a, idx->ne[0]);
    arg_u64(&a, idx->nb[0]);
    arg_u64(&a, idx->nb[1]);
    arg_u64(&a, idx->nb[2]);
    arg_i32(&a, idx->type == CT_TYPE_I64);
    arg_i64(&a, limit);
    arg_flag(&a);
    if (a.st != CT_OK) return a.st;
    const size_t wg = ct_ocl_clamp_wg(be, a.kid, 256);
    const size_t local[3] = {wg, 1, 1};
    const size_t groups[3] = {((size_t)idx->ne[0] + wg - 1) / wg, (size_t)idx->ne[1], (size_t)idx->ne[2]};
    return ct_ocl_dispatch(be, a.kid, groups, local);
}

/* ct_rows8_<t> (eight units a work-item) for float rows; CT_OCL_K_COUNT for others. */
static ct_ocl_kernel_id rows8_kernel_for(ct_type t) {
    switch (t) {
    case CT_TYPE_F32:
    case CT_TYPE_I32: return CT_OCL_K_ROWS8_F32;
    case CT_TYPE_F16: return CT_OCL_K_ROWS8_F16;
    case CT_TYPE_BF16: return CT_OCL_K_ROWS8_BF16;
    default: return CT_OCL_K_COUNT;
    }
}

static ct_ocl_kernel_id rows4_kernel_for(ct_type t) {
    switch (t) {
    case CT_TYPE_F32:
    case CT_TYPE_I32: return CT_OCL_K_ROWS4_F32;
    case CT_TYPE_F16: return CT_OCL_K_ROWS4_F16;
    case CT_TYPE_BF16: return CT_OCL_K_ROWS4_BF16;
    case CT_TYPE_Q4_0: return CT_OCL_K_ROWS4_Q4_0;
    case CT_TYPE_Q4_1: return CT_OCL_K_ROWS4_Q4_1;
    case CT_TYPE_Q5_0: return CT_OCL_K_ROWS4_Q5_0;
    case CT_TYPE_Q5_1: return CT_OCL_K_ROWS4_Q5_1;
    case CT_TYPE_Q8_0: return CT_OCL_K_ROWS4_Q8_0;
    case CT_TYPE_IQ4_NL: return CT_OCL_K_ROWS4_IQ4_NL;
    case CT_TYPE_Q2_K: return CT_OCL_K_ROWS4_Q2_K;
    case CT_TYPE_Q3_K: return CT_OCL_K_ROWS4_Q3_K;
    case CT_TYPE_Q4_K: return CT_OCL_K_ROWS4_Q4_K;
    case CT_TYPE_Q5_K: return CT_OCL_K_ROWS4_Q5_K;
    case CT_TYPE_Q6_K: return CT_OCL_K_ROWS4_Q6_K;
    case CT_TYPE_Q8_K: return CT_OCL_K_ROWS4_Q8_K;
    case CT_TYPE_IQ4_XS: return CT_OCL_K_ROWS4_IQ4_XS;
    default: return CT_OCL_K_COUNT;
    }
}

/* ct_rows_staged_<t>: the block types' rows through local memory. */
static ct_ocl_kernel_id rows_staged_kernel_for(ct_type t) {
    switch (t) {
    case CT_TYPE_Q4_0: return CT_OCL_K_ROWS_STAGED_Q4_0;
    case CT_TYPE_Q4_1: return CT_OCL_K_ROWS_STAGED_Q4_1;
    case CT_TYPE_Q5_0: return CT_OCL_K_ROWS_STAGED_Q5_0;
    case CT_TYPE_Q5_1: return CT_OCL_K_ROWS_STAGED_Q5_1;
    case CT_TYPE_Q8_0: return CT_OCL_K_ROWS_STAGED_Q8_0;
    case CT_TYPE_IQ4_NL: return CT_OCL_K_ROWS_STAGED_IQ4_NL;
    case CT_TYPE_Q2_K: return CT_OCL_K_ROWS_STAGED_Q2_K;
    case CT_TYPE_Q3_K: return CT_OCL_K_ROWS_STAGED_Q3_K;
    case CT_TYPE_Q4_K: return CT_OCL_K_ROWS_STAGED_Q4_K;
    case CT_TYPE_Q5_K: return CT_OCL_K_ROWS_STAGED_Q5_K;
    case CT_TYPE_Q6_K: return CT_OCL_K_ROWS_STAGED_Q6_K;
    case CT_TYPE_Q8_K: return CT_OCL_K_ROWS_STAGED_Q8_K;
    case CT_TYPE_IQ4_XS: return CT_OCL_K_ROWS_STAGED_IQ4_XS;
    default: return CT_OCL_K_COUNT;
    }
}

/* Whether ct_rows_staged_<t> takes rows of nu units of block type t split into
 * work-groups of (nth, nrptg) and nseg segments of nth * nper units (get_rows.cl says
 * what that kernel relies on). */
static bool rows_staged_fits(const ct_ocl_backend *be, ct_type t, unsigned src_align, size_t nu, size_t nth,
                             size_t nrptg, size_t nper, size_t nseg) {
    const size_t units_per_block = (size_t)ct_type_block_size(t) / 4;
    const size_t seg_units = nth * nper < nu ? nth * nper : nu;
    const size_t seg_bytes = seg_units / units_per_block * ct_type_size(t);
    const ct_ocl_kernel_id kid = rows_staged_kernel_for(t);
    return ct_ocl_kernel_available(be->dev, kid) && ct_ocl_clamp_wg(be, kid, nth) == nth && src_align >= 16 &&
           nrptg == 1 && nth >= 128 && seg_bytes <= CT_OCL_STAGE_BYTES && be->dev->local_mem >= CT_OCL_STAGE_BYTES &&
           (nseg == 1 || (seg_units % units_per_block == 0 && seg_bytes % 16 == 0));
}

/* Bytes of 4 elements of a float row (the vector a unit loads or stores), 0 for other types. */
static unsigned vec4_bytes(ct_type t) {
    switch (t) {
    case CT_TYPE_F32:
    case CT_TYPE_I32: return 16;
    case CT_TYPE_F16:
    case CT_TYPE_BF16: return 8;
    default: return 0;
    }
}

ct_status ct_ocl_try_rows4(ct_ocl_backend *be, const ct_ocl_rows_job *j, bool *done) {
    *done = false;
    const ct_type st = j->src->type, dt = j->dst->type;
    const ct_ocl_kernel_id kid = rows4_kernel_for(st);
    /* F32 and I32 move as bits; I32 only into I32 (GET_ROWS) */
    const bool int_rows = st == CT_TYPE_I32 || dt == CT_TYPE_I32;
    const unsigned vd = vec4_bytes(dt);
    if (kid == CT_OCL_K_COUNT || !ct_ocl_kernel_available(be->dev, kid) || vd == 0 || (int_rows && st != dt)) {
        return CT_OK;
    }
    /* block rows have whole blocks, read 2 bytes at a time; float rows whole vectors */
    const unsigned vs = ct_type_block_size(st) > 1 ? 2 : vec4_bytes(st);
    unsigned sa, da;
    ct_status status = ct_ocl_rows_job_align(be, j, 0, &sa, &da);
    if (status != CT_OK) return status;
    if (sa < vs || da < vd) return CT_OK;

    const size_t nu = ((size_t)j->ne0 + 3) / 4;
    const size_t units = nu * (size_t)j->n1 * (size_t)j->n2 * (size_t)j->n3;
    /* 8 units a work-item: float rows through ct_rows8, block rows only through local
     * memory (ct_rows_staged, in segments of at most 1024 units, which its local array
     * holds); otherwise the job goes to ct_rows4 with at most 4 */
    const bool block = vs == 2;
    size_t nper = ct_ocl_rows_nper(units, CT_OCL_ROWS_NPER, be->dev->rows8_min_log2), nth, nrptg, nseg;
    ct_ocl_kernel_id use;
    bool staged;
    for (;;) {
        use = nper <= 4 ? kid : block ? rows_staged_kernel_for(st) : rows8_kernel_for(st);
        const size_t nk = (nu + nper - 1) / nper, wg_max = block && 1024 / nper < 256 ? 1024 / nper : 256;
        ct_ocl_rows_wg(nk, ct_ocl_clamp_wg(be, use, wg_max), be->dev->max_work_item_sizes[1], &nth, &nrptg);
        nseg = (nu + nth * nper - 1) / (nth * nper);
        staged = block && rows_staged_fits(be, st, sa, nu, nth, nrptg, nper, nseg);
        if (nper <= 4 || (block ? staged : ct_ocl_kernel_available(be->dev, use))) break;
        nper = ct_ocl_rows_nper(units, 4, be->dev->rows8_min_log2);
    }

    args g = {be, staged ? rows_staged_kernel_for(st) : use, 0, CT_OK};
    arg_tensor(&g, j->src, "src0");
    if (j->idx) arg_tensor(&g, j->idx, "src1");
    else arg_null_tensor(&g);
    arg_tensor(&g, j->dst, "dst");
    arg_i64(&g, j->ne0);
    arg_i64(&g, j->n1);
    arg_i64(&g, (int64_t)nseg);
    arg_i32(&g, (int)nper);
    for (int k = 0; k < 3; k++) arg_u64(&g, j->snb[k]);
    for (int k = 0; k < 3; k++) arg_u64(&g, j->dnb[k]);
    arg_rows_index(&g, j);
    arg_i32(&g, (int)(dt == CT_TYPE_I32 ? CT_TYPE_F32 : dt));
    if (j->idx) arg_flag(&g);
    else arg_no_flag(&g);
    if (g.st != CT_OK) return g.st;
    *done = true;
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {(((size_t)j->n1 + nrptg - 1) / nrptg) * nseg, (size_t)j->n2, (size_t)j->n3};
    return ct_ocl_dispatch(be, g.kid, groups, local);
}

ct_status ct_ocl_encode_get_rows(ct_ocl_backend *be, ct_tensor *node) {
    const ct_tensor *a = node->src[0], *b = node->src[1];
    if (ct_is_empty(node)) return CT_OK;
    ct_status st = ct_ocl_encode_check_indices(be, b, a->ne[1]);
    if (st != CT_OK) return st;

    /* rows of packed elements (blocks always are) and a packed destination: ct_rows4 */
    const bool packed = ct_type_block_size(a->type) > 1 || a->nb[0] == ct_type_size(a->type) || a->ne[0] == 1;
    if (packed && (node->nb[0] == ct_type_size(node->type) || node->ne[0] == 1)) {
        const ct_ocl_rows_job j = {.src = a, .idx = b, .dst = node, .mode = CT_OCL_ROWS_GET, .ne0 = a->ne[0],
                                   .n1 = b->ne[0], .n2 = b->ne[1], .n3 = b->ne[2], .lim = a->ne[1],
                                   .snb = {a->nb[1], a->nb[2], a->nb[3]},
                                   .dnb = {node->nb[1], node->nb[2], node->nb[3]}};
        bool done;
        st = ct_ocl_try_rows4(be, &j, &done);
        if (st != CT_OK || done) return st;
    }

    args g = {be, kernel_for(a->type), 0, CT_OK};
    arg_tensor(&g, a, "src0");
    arg_tensor(&g, b, "src1");
    arg_tensor(&g, node, "dst");
    arg_i64(&g, a->ne[0]);
    arg_i64(&g, a->ne[1]);
    arg_i64(&g, b->ne[0]);
    for (int k = 0; k < 4; k++) arg_u64(&g, a->nb[k]);
    for (int k = 0; k < 3; k++) arg_u64(&g, b->nb[k]);
    for (int k = 0; k < 4; k++) arg_u64(&g, node->nb[k]);
    arg_i32(&g, ct_ocl_alignment(ct_ocl_addr_bits(be->dev, a), a->nb, 4) >= 4);
    arg_i32(&g, ct_ocl_alignment(ct_ocl_addr_bits(be->dev, node), node->nb, 4) >= 4);
    arg_flag(&g);
    if (g.st != CT_OK) return g.st;

    size_t nth, nrptg;
    /* block types: a work-item takes 16 elements at a time */
    const size_t nk = (size_t)a->ne[0] / (ct_type_block_size(a->type) > 1 ? 16 : 1);
    ct_ocl_rows_wg(nk, ct_ocl_clamp_wg(be, g.kid, 1024), be->dev->max_work_item_sizes[1], &nth,
                   &nrptg);
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {((size_t)b->ne[0] + nrptg - 1) / nrptg, (size_t)b->ne[1], (size_t)b->ne[2]};
    return ct_ocl_dispatch(be, g.kid, groups, local);
}
