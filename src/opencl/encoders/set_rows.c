/* SET_ROWS on OpenCL: dst[:, src1[i, i02 % ne11, i03 % ne12], i02, i03] = convert(src0[:, i, i02, i03]),
 * quantizing with quant.cl's copies of the CPU quantizers (the same bytes). The
 * index check runs first (in the row kernel itself for a short list, rows.h); the row
 * kernel writes nothing once it has raised the flag.
 * Duplicate indices in one batch leave the row of any one of their sources (the CPU
 * keeps the last): include/ctensor.h leaves which one wins to the backend. */
#include "rows.h"
#include "tensor/tensor_internal.h"

/* The CPU backend's set (ct_set_rows_types_supported), when the kernels are there. */
bool ct_ocl_set_rows_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!op) return false;
    const ct_ocl_kernel_id kid = ct_ocl_kernel_for(CT_OCL_FAMILY_SET_ROWS, op->type);
    if (kid == CT_OCL_K_COUNT || !ct_ocl_kernel_available(dev, kid) ||
        !ct_ocl_kernel_available(dev, CT_OCL_K_CHECK_INDICES))
        return false;
    return ct_set_rows_types_supported(op);
}

ct_status ct_ocl_encode_set_rows(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_set_rows_supported(enc->be->dev, node));
    *n_nodes = 1;
    const ct_tensor *b = node->src[0], *c = node->src[1];
    if (ct_is_empty(b)) return CT_OK;
    const bool check_inline = ct_ocl_rows_check_inline(c);
    if (!check_inline) ct_ocl_encode_check_indices(enc, c, node->ne[1]);

    /* packed source rows (the destination's are): ct_rows4 or ct_quant_rows */
    if (b->nb[0] == ct_type_size(b->type) || b->ne[0] == 1) {
        const ct_ocl_rows_job j = {.src = b, .idx = c, .dst = node, .mode = CT_ROWS_SET, .check_all = check_inline,
                                   .ne0 = b->ne[0],
                                   .n1 = b->ne[1], .n2 = b->ne[2], .n3 = b->ne[3], .lim = node->ne[1],
                                   .snb = {b->nb[1], b->nb[2], b->nb[3]},
                                   .dnb = {node->nb[1], node->nb[2], node->nb[3]}};
        const bool done = ct_type_block_size(node->type) > 1 ? ct_ocl_try_quant_rows(enc, &j) : ct_ocl_try_rows4(enc, &j);
        if (done) return enc->st;
    }
    if (check_inline) ct_ocl_encode_check_indices(enc, c, node->ne[1]); /* the kernel below checks none */

    const unsigned es_src = (unsigned)ct_type_size(b->type);
    const size_t ts_dst = ct_type_size(node->type);
    const unsigned es_dst = ct_type_block_size(node->type) == 1 ? (unsigned)ts_dst : 1u;
    const int64_t nk0 = node->ne[0] / ct_type_block_size(node->type);

    const ct_ocl_kernel_id kid = ct_ocl_kernel_for(CT_OCL_FAMILY_SET_ROWS, node->type);
    size_t nth, nrptg;
    ct_ocl_rows_wg((size_t)nk0, ct_ocl_enc_clamp_wg(enc, kid, 1024), enc->be->dev->max_work_item_sizes[1], &nth,
                   &nrptg);
    const cl_ulong b_addr = ct_ocl_enc_addr_bits(enc, b, "src0"), d_addr = ct_ocl_enc_addr_bits(enc, node, "dst");
    const ct_set_rows_args args = {
        .nb00 = b->nb[0], .nb01 = b->nb[1], .nb02 = b->nb[2], .nb03 = b->nb[3],
        .nb10 = c->nb[0], .nb11 = c->nb[1], .nb12 = c->nb[2],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .nk0 = nk0, .ne01 = b->ne[1], .ne11 = c->ne[1], .ne12 = c->ne[2], .ne1 = node->ne[1],
        .is64 = c->type == CT_TYPE_I64,
        .src_f16 = b->type == CT_TYPE_F16,
        .src_aligned = ct_ocl_alignment(b_addr, b->nb, es_src) >= es_src,
        .dst_aligned = ct_ocl_alignment(d_addr, node->nb, es_dst) >= es_dst,
    };
    ct_ocl_enc_kernel(enc, kid);
    ct_ocl_arg_tensor(enc, b, "src0");
    ct_ocl_arg_tensor(enc, c, "src1");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_flag(enc);
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {((size_t)b->ne[1] + nrptg - 1) / nrptg, (size_t)b->ne[2], (size_t)b->ne[3]};
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}
