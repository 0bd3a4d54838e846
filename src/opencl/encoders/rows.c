/* The row engine (rows.h): the fast row kernels for GET_ROWS, SET_ROWS and CPY jobs,
 * and the index check. */
#include "rows.h"

/* The largest power of two up to cap dividing addr (ct_ocl_addr_bits) and every stride whose
 * extent exceeds 1. */
static unsigned rows_align(cl_ulong addr, const size_t nb[3], const int64_t ne[3], unsigned cap) {
    cl_ulong bits = addr;
    for (int k = 0; k < 3; k++)
        if (ne[k] > 1) bits |= nb[k];
    unsigned a = 1;
    while (a < cap && (bits & a) == 0) a *= 2;
    return a;
}

void ct_ocl_rows_job_align(ct_ocl_enc *enc, const ct_ocl_rows_job *j, cl_ulong extra_src, unsigned *src_align,
                           unsigned *dst_align) {
    const cl_ulong s_addr = ct_ocl_enc_addr_bits(enc, j->src, "src0");
    const cl_ulong d_addr = ct_ocl_enc_addr_bits(enc, j->dst, "dst");
    *src_align = *dst_align = 1;
    if (enc->st != CT_OK) return;
    const int64_t sn[3] = {j->mode == CT_ROWS_GET ? j->lim : j->n1, j->n2, j->n3};
    const int64_t dn[3] = {j->mode == CT_ROWS_SET ? j->lim : j->n1, j->n2, j->n3};
    *src_align = rows_align(s_addr | extra_src, j->snb, sn, 16);
    *dst_align = rows_align(d_addr, j->dnb, dn, 16);
}

void ct_ocl_encode_check_indices(ct_ocl_enc *enc, const ct_tensor *idx, int64_t limit) {
    if (ct_is_empty(idx)) return;
    const ct_ocl_kernel_id kid = CT_OCL_K_CHECK_INDICES;
    const size_t wg = ct_ocl_enc_clamp_wg(enc, kid, 256);
    ct_ocl_enc_kernel(enc, kid);
    ct_ocl_arg_tensor(enc, idx, "indices");
    ct_ocl_arg_i64(enc, idx->ne[0]);
    ct_ocl_arg_u64(enc, idx->nb[0]);
    ct_ocl_arg_u64(enc, idx->nb[1]);
    ct_ocl_arg_u64(enc, idx->nb[2]);
    ct_ocl_arg_i32(enc, idx->type == CT_TYPE_I64);
    ct_ocl_arg_i64(enc, limit);
    ct_ocl_arg_flag(enc);
    const size_t local[3] = {wg, 1, 1};
    const size_t groups[3] = {((size_t)idx->ne[0] + wg - 1) / wg, (size_t)idx->ne[1], (size_t)idx->ne[2]};
    ct_ocl_enc_dispatch(enc, groups, local);
}

/* The part of ct_rows_args every job sets the same way: its mapping and index tensor. */
static ct_rows_args job_args(const ct_ocl_rows_job *j) {
    const ct_tensor *c = j->idx;
    return (ct_rows_args){
        .nr1 = j->n1,
        .nb01 = j->snb[0], .nb02 = j->snb[1], .nb03 = j->snb[2],
        .nb1 = j->dnb[0], .nb2 = j->dnb[1], .nb3 = j->dnb[2],
        .ne11 = c ? c->ne[1] : 1, .ne12 = c ? c->ne[2] : 1,
        .nb10 = c ? c->nb[0] : 0, .nb11 = c ? c->nb[1] : 0, .nb12 = c ? c->nb[2] : 0,
        .lim = j->lim,
        .mode = j->mode,
        .is64 = c && c->type == CT_TYPE_I64,
        .check_all = c && j->check_all,
    };
}

/* The tensors around ct_rows_args, and the error flag where indices are read. */
static void job_launch(ct_ocl_enc *enc, const ct_ocl_rows_job *j, const ct_rows_args *a, const size_t groups[3],
                       const size_t local[3]) {
    ct_ocl_arg_tensor(enc, j->src, "src0");
    if (j->idx) ct_ocl_arg_tensor(enc, j->idx, "src1");
    else ct_ocl_arg_null_tensor(enc);
    ct_ocl_arg_tensor(enc, j->dst, "dst");
    ct_ocl_arg_bytes(enc, a, sizeof *a);
    if (j->idx) ct_ocl_arg_flag(enc);
    else ct_ocl_arg_no_flag(enc);
    ct_ocl_enc_dispatch(enc, groups, local);
}

/* ---- ct_rows4 / ct_rows8 / ct_rows_staged ------------------------------------------ */

/* Whether ct_rows_staged_<t> takes rows of nu units of block type t split into
 * work-groups of (nth, nrptg) and nseg segments of nth * nper units (get_rows.cl says
 * what that kernel relies on). */
static bool rows_staged_fits(ct_ocl_enc *enc, ct_type t, unsigned src_align, size_t nu, size_t nth, size_t nrptg,
                             size_t nper, size_t nseg) {
    const size_t units_per_block = (size_t)ct_type_block_size(t) / 4;
    const size_t seg_units = nth * nper < nu ? nth * nper : nu;
    const size_t seg_bytes = seg_units / units_per_block * ct_type_size(t);
    const ct_ocl_kernel_id kid = ct_ocl_kernel_for(CT_OCL_FAMILY_ROWS_STAGED, t);
    return kid != CT_OCL_K_COUNT && ct_ocl_kernel_available(enc->be->dev, kid) &&
           ct_ocl_enc_clamp_wg(enc, kid, nth) == nth && src_align >= 16 && nrptg == 1 && nth >= 128 &&
           seg_bytes <= CT_OCL_STAGE_BYTES && enc->be->dev->local_mem >= CT_OCL_STAGE_BYTES &&
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

bool ct_ocl_try_rows4(ct_ocl_enc *enc, const ct_ocl_rows_job *j) {
    const ct_ocl_device *dev = enc->be->dev;
    const ct_type st = j->src->type, dt = j->dst->type;
    const ct_ocl_kernel_id kid = ct_ocl_kernel_for(CT_OCL_FAMILY_ROWS4, st);
    /* F32 and I32 move as bits; I32 only into I32 (GET_ROWS) */
    const bool int_rows = st == CT_TYPE_I32 || dt == CT_TYPE_I32;
    const unsigned vd = vec4_bytes(dt);
    if (kid == CT_OCL_K_COUNT || !ct_ocl_kernel_available(dev, kid) || vd == 0 || (int_rows && st != dt)) {
        return false;
    }
    /* block rows have whole blocks, read 2 bytes at a time; float rows whole vectors */
    const unsigned vs = ct_type_block_size(st) > 1 ? 2 : vec4_bytes(st);
    unsigned sa, da;
    ct_ocl_rows_job_align(enc, j, 0, &sa, &da);
    if (sa < vs || da < vd) return enc->st != CT_OK; /* a recorded error ends the node */

    const size_t nu = ((size_t)j->ne0 + 3) / 4;
    const size_t units = nu * (size_t)j->n1 * (size_t)j->n2 * (size_t)j->n3;
    /* 8 units a work-item: float rows through ct_rows8, block rows only through local
     * memory (ct_rows_staged, in segments of at most 1024 units, which its local array
     * holds); otherwise the job goes to ct_rows4 with at most 4 */
    const bool block = vs == 2;
    const ct_ocl_kernel_id wide = ct_ocl_kernel_for(block ? CT_OCL_FAMILY_ROWS_STAGED : CT_OCL_FAMILY_ROWS8, st);
    size_t nper = ct_ocl_rows_nper(units, CT_ROWS_NPER, dev->rows8_min_log2), nth, nrptg, nseg;
    ct_ocl_kernel_id use;
    bool staged;
    for (;;) {
        use = nper <= 4 ? kid : wide;
        const size_t nk = (nu + nper - 1) / nper, wg_max = block && 1024 / nper < 256 ? 1024 / nper : 256;
        const bool usable = use != CT_OCL_K_COUNT && ct_ocl_kernel_available(dev, use);
        ct_ocl_rows_wg(nk, usable ? ct_ocl_enc_clamp_wg(enc, use, wg_max) : wg_max, dev->max_work_item_sizes[1],
                       &nth, &nrptg);
        nseg = (nu + nth * nper - 1) / (nth * nper);
        staged = block && rows_staged_fits(enc, st, sa, nu, nth, nrptg, nper, nseg);
        if (nper <= 4 || (block ? staged : usable)) break;
        nper = ct_ocl_rows_nper(units, 4, dev->rows8_min_log2);
    }

    ct_rows_args a = job_args(j);
    a.ne0 = j->ne0;
    a.nseg = (int64_t)nseg;
    a.nper = (int32_t)nper;
    a.type = (int32_t)(dt == CT_TYPE_I32 ? CT_TYPE_F32 : dt);
    ct_ocl_enc_kernel(enc, staged ? wide : use);
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {(((size_t)j->n1 + nrptg - 1) / nrptg) * nseg, (size_t)j->n2, (size_t)j->n3};
    job_launch(enc, j, &a, groups, local);
    return true;
}

/* ---- ct_quant_rows ------------------------------------------------------------------- */

/* ct_quant_rows_<t> (kernels/set_rows.cl) writes blocks straight out; its staged variant
 * through local memory; its wide variant, staged, takes CT_QT_NPER_WIDE blocks a team
 * (IQ4_NL has none: its local sums take the space). */
static const struct {
    ct_ocl_family family;
    size_t nper;
} quant_variants[] = {
    {CT_OCL_FAMILY_QUANT_ROWS_WIDE, CT_QT_NPER_WIDE},
    {CT_OCL_FAMILY_QUANT_ROWS_STAGED, CT_QT_NPER},
};

bool ct_ocl_try_quant_rows(ct_ocl_enc *enc, const ct_ocl_rows_job *j) {
    const ct_ocl_device *dev = enc->be->dev;
    const ct_type st = j->src->type, dt = j->dst->type;
    size_t nper = CT_QT_NPER;
    ct_ocl_kernel_id kid = ct_ocl_kernel_for(CT_OCL_FAMILY_QUANT_ROWS, dt);
    if (kid == CT_OCL_K_COUNT || !ct_ocl_kernel_available(dev, kid) || j->ne0 % 32 != 0) return false;
    if (st != CT_TYPE_F32 && st != CT_TYPE_F16 && st != CT_TYPE_BF16) return false;
    /* a work-item loads 4 source elements at once; blocks are written 2 bytes at a time */
    const unsigned vs = st == CT_TYPE_F32 ? 16 : 8;
    unsigned sa, da;
    ct_ocl_rows_job_align(enc, j, 0, &sa, &da);
    if (sa < vs || da < 2) return enc->st != CT_OK;
    /* slices of 32 work-items (8 teams of 4), the local arrays sized for CT_QT_WG (IQ4_NL: 128) */
    const size_t wg_max = dt == CT_TYPE_IQ4_NL ? CT_QT_WG_IQ4_NL : CT_QT_WG;
    const size_t wg = ct_ocl_enc_clamp_wg(enc, kid, wg_max) & ~(size_t)(CT_QT_SLICE - 1);
    if (wg < CT_QT_SLICE) return enc->st != CT_OK;

    const int64_t nkr = j->ne0 / 32;
    const size_t nblk = (size_t)j->n1 * (size_t)nkr;
    /* whole slices in a row (their spans are then 16-byte aligned: 8 * nper blocks of an even
     * size): the blocks go out through local memory, when that kernel takes wg work-items; the
     * wide kernel for jobs of at least 2^rows8_min_log2 of its work-items (as ct_rows8: fewer
     * leave too few waves of groups) */
    const size_t items = nblk * 4 * (size_t)j->n2 * (size_t)j->n3; /* work-items at one block a team */
    for (size_t v = 0; v < sizeof quant_variants / sizeof *quant_variants; v++) {
        const size_t vn = quant_variants[v].nper;
        const ct_ocl_kernel_id kv = ct_ocl_kernel_for(quant_variants[v].family, dt);
        if (kv == CT_OCL_K_COUNT || da < 16 || (size_t)nkr % (CT_QT_SLICE / 4 * vn) != 0 ||
            !ct_ocl_kernel_available(dev, kv) || ct_ocl_enc_clamp_wg(enc, kv, wg) != wg)
            continue;
        if (quant_variants[v].family == CT_OCL_FAMILY_QUANT_ROWS_WIDE &&
            items / vn < ((size_t)1 << dev->rows8_min_log2))
            continue;
        kid = kv;
        nper = vn;
        break;
    }
    const size_t per_group = (wg / 4) * nper;
    ct_rows_args a = job_args(j);
    a.ne0 = nkr;
    a.type = (int32_t)st;
    ct_ocl_enc_kernel(enc, kid);
    const size_t local[3] = {wg, 1, 1};
    const size_t groups[3] = {(nblk + per_group - 1) / per_group, (size_t)j->n2, (size_t)j->n3};
    job_launch(enc, j, &a, groups, local);
    return true;
}
