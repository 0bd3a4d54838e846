/* GET_ROWS on OpenCL: dst[:, i10, i11, i12] = dequant(src0[:, src1[i10, i11, i12], i11, i12]).
 * ct_check_indices runs first and raises the error flag on a bad index (or the row kernel
 * checks a short list itself, rows.h); the row kernel then writes nothing. */
#include "rows.h"
#include "tensor/tensor_internal.h"

/* The CPU backend's set (ct_get_rows_types_supported), where the kernel exists. */
bool ct_ocl_get_rows_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!ct_get_rows_types_supported(op)) return false;
    const ct_ocl_kernel_id kid = ct_ocl_kernel_for(CT_OCL_FAMILY_GET_ROWS, op->src[0]->type);
    return kid != CT_OCL_K_COUNT && ct_ocl_kernel_available(dev, kid) &&
           ct_ocl_kernel_available(dev, CT_OCL_K_CHECK_INDICES);
}

ct_status ct_ocl_encode_get_rows(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_get_rows_supported(enc->be->dev, node));
    *n_nodes = 1;
    const ct_tensor *a = node->src[0], *b = node->src[1];
    if (ct_is_empty(node)) return CT_OK;
    const bool check_inline = ct_ocl_rows_check_inline(b);
    if (!check_inline) ct_ocl_encode_check_indices(enc, b, a->ne[1]);

    /* rows of packed elements (blocks always are) and a packed destination: ct_rows4 */
    const bool packed = ct_type_block_size(a->type) > 1 || a->nb[0] == ct_type_size(a->type) || a->ne[0] == 1;
    if (packed && (node->nb[0] == ct_type_size(node->type) || node->ne[0] == 1)) {
        const ct_ocl_rows_job j = {.src = a, .idx = b, .dst = node, .mode = CT_ROWS_GET, .check_all = check_inline,
                                   .ne0 = a->ne[0],
                                   .n1 = b->ne[0], .n2 = b->ne[1], .n3 = b->ne[2], .lim = a->ne[1],
                                   .snb = {a->nb[1], a->nb[2], a->nb[3]},
                                   .dnb = {node->nb[1], node->nb[2], node->nb[3]}};
        if (ct_ocl_try_rows4(enc, &j)) return enc->st;
    }
    if (check_inline) ct_ocl_encode_check_indices(enc, b, a->ne[1]); /* the kernel below checks none */

    const ct_ocl_kernel_id kid = ct_ocl_kernel_for(CT_OCL_FAMILY_GET_ROWS, a->type);
    size_t nth, nrptg;
    /* block types: a work-item takes 16 elements at a time */
    const size_t nk = (size_t)a->ne[0] / (ct_type_block_size(a->type) > 1 ? 16 : 1);
    ct_ocl_rows_wg(nk, ct_ocl_enc_clamp_wg(enc, kid, 1024), enc->be->dev->max_work_item_sizes[1], &nth, &nrptg);
    const cl_ulong a_addr = ct_ocl_enc_addr_bits(enc, a, "src0"), d_addr = ct_ocl_enc_addr_bits(enc, node, "dst");
    const ct_get_rows_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb10 = b->nb[0], .nb11 = b->nb[1], .nb12 = b->nb[2],
        .nb0 = node->nb[0], .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .ne00 = a->ne[0], .ne01 = a->ne[1], .ne10 = b->ne[0],
        .src_aligned = ct_ocl_alignment(a_addr, a->nb, 4) >= 4,
        .dst_aligned = ct_ocl_alignment(d_addr, node->nb, 4) >= 4,
    };
    ct_ocl_enc_kernel(enc, kid);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, b, "src1");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_flag(enc);
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {((size_t)b->ne[0] + nrptg - 1) / nrptg, (size_t)b->ne[1], (size_t)b->ne[2]};
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}
