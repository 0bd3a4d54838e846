/* ADD, SUB, MUL, DIV, ADD1 on OpenCL (kernels/binary.cl, taking ct_binary_args): one pass
 * over dst's rows, each row's elements over a work-group's consecutive work-items, short
 * rows packed several to a group. All-F32 rows of unit stride take the per-op kernels,
 * anything else ct_binary. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "tensor/tensor_internal.h"

#include <limits.h>

enum { BIN_WG = 256 };

static ct_ocl_kernel_id f32_kernel(ct_op op) {
    switch (op) {
    case CT_OP_SUB: return CT_OCL_K_SUB_F32;
    case CT_OP_MUL: return CT_OCL_K_MUL_F32;
    case CT_OP_DIV: return CT_OCL_K_DIV_F32;
    default: return CT_OCL_K_ADD_F32;
    }
}

static int bin_code(ct_op op) {
    switch (op) {
    case CT_OP_SUB: return CT_BIN_SUB;
    case CT_OP_MUL: return CT_BIN_MUL;
    case CT_OP_DIV: return CT_BIN_DIV;
    default: return CT_BIN_ADD;
    }
}

static bool fits_int(const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->ne[i] > INT_MAX) return false;
    return ct_nrows(t) <= INT_MAX;
}

bool ct_ocl_binary_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !ct_binary_node_valid(op)) return false;
    if (!ct_ocl_kernel_available(dev, CT_OCL_K_BINARY) || !ct_ocl_kernel_available(dev, f32_kernel(op->op)))
        return false;
    return fits_int(op->src[0]) && fits_int(op->src[1]);
}

/* t's start and strides are multiples of its element size. */
static bool aligned(ct_ocl_enc *enc, const ct_tensor *t, const char *role) {
    const unsigned ts = (unsigned)ct_type_size(t->type);
    return ct_ocl_alignment(ct_ocl_enc_addr_bits(enc, t, role), t->nb, ts) >= ts;
}

ct_status ct_ocl_encode_binary(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_binary_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    if (ct_ocl_encode_add_norm(enc, node, n_nodes) || enc->st != CT_OK) return enc->st;
    const ct_tensor *a = node->src[0], *b = node->src[1];
    const bool al = aligned(enc, a, "src0") && aligned(enc, b, "src1") && aligned(enc, node, "dst");
    const bool f32 = a->type == CT_TYPE_F32 && b->type == CT_TYPE_F32 && node->type == CT_TYPE_F32;
    const bool unit = a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float) && node->nb[0] == sizeof(float);
    const ct_ocl_kernel_id id = f32 && unit && al ? f32_kernel(node->op) : CT_OCL_K_BINARY;
    const int64_t nrows = ct_nrows(a);

    /* (nx, ny): nx the power of two covering a row up to BIN_WG, ny rows fill the group */
    const size_t max = ct_ocl_enc_clamp_wg(enc, id, BIN_WG);
    size_t nx = 1;
    while (nx < (size_t)a->ne[0] && nx < max) nx *= 2;
    if (nx > max) nx = max;
    size_t ny = max / nx;
    if (ny > enc->be->dev->max_work_item_sizes[1]) ny = enc->be->dev->max_work_item_sizes[1];
    if (ny == 0) ny = 1;
    const size_t local[3] = {nx, ny, 1};
    const size_t groups[3] = {((size_t)nrows + ny - 1) / ny, 1, 1};

    const ct_binary_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb10 = b->nb[0], .nb11 = b->nb[1], .nb12 = b->nb[2], .nb13 = b->nb[3],
        .nb0 = node->nb[0], .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .ne0 = (int32_t)a->ne[0], .ne1 = (int32_t)a->ne[1], .ne2 = (int32_t)a->ne[2], .nrows = (int32_t)nrows,
        .ne10 = (int32_t)b->ne[0], .ne11 = (int32_t)b->ne[1], .ne12 = (int32_t)b->ne[2], .ne13 = (int32_t)b->ne[3],
        .op = bin_code(node->op),
        .f16_0 = a->type == CT_TYPE_F16, .f16_1 = b->type == CT_TYPE_F16, .f16_d = node->type == CT_TYPE_F16,
        .aligned = al,
    };
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, b, "src1");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}
