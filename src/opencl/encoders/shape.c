/* REPEAT, CONCAT, PAD, ARANGE and ACC on OpenCL (kernels/shape.cl, ct_shape_args): one unit of
 * the destination a work-item over a 2-d launch (dim 0, rows); ACC copies a first (a REPEAT of a onto its
 * own shape) unless in place, then adds b into the window. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "tensor/tensor_internal.h"

#include <string.h>

enum { WG = 256 };

/* Whether t's start and every stride are multiples of a. */
static bool aligned_to(const ct_ocl_device *dev, const ct_tensor *t, size_t a) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % a != 0) return false;
    return ct_ocl_start_aligned(dev, t, a);
}

bool ct_ocl_shape_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || !ct_shape_node_valid(op) || !ct_ocl_kernel_available(dev, CT_OCL_K_SHAPE)) return false;
    switch (op->op) {
    case CT_OP_PAD: /* F32 loads and stores */
    case CT_OP_ARANGE:
    case CT_OP_ACC:
        for (int s = 0; s < 2; s++)
            if (op->src[s] && !aligned_to(dev, op->src[s], sizeof(float))) return false;
        return aligned_to(dev, op, sizeof(float));
    default: return true; /* bytes, unit by unit */
    }
}

/* The strides and unit counts of t (nothing: zeros and ones), dim 0 in units of bs elements. */
#define SET_T(A, NB, NE, t, bs)                                                                                   \
    do {                                                                                                          \
        const ct_tensor *t_ = (t);                                                                                \
        A.NB##0 = t_ ? t_->nb[0] : 0, A.NB##1 = t_ ? t_->nb[1] : 0, A.NB##2 = t_ ? t_->nb[2] : 0;                 \
        A.NB##3 = t_ ? t_->nb[3] : 0;                                                                             \
        A.NE##0 = t_ ? t_->ne[0] / (bs) : 1, A.NE##1 = t_ ? t_->ne[1] : 1, A.NE##2 = t_ ? t_->ne[2] : 1;          \
        A.NE##3 = t_ ? t_->ne[3] : 1;                                                                             \
    } while (0)

/* vec: every address and stride of the launch's tensors a multiple of es (a power of two up to 8). */
static bool vec_ok(ct_ocl_enc *enc, const ct_tensor *const t[3], size_t es) {
    if (es != 1 && es != 2 && es != 4 && es != 8) return false;
    static const char *const roles[3] = {"src0", "src1", "dst"};
    for (int k = 0; k < 3; k++) {
        if (!t[k]) continue;
        if (ct_ocl_alignment(ct_ocl_enc_addr_bits(enc, t[k], roles[k]), t[k]->nb, 8) < es) return false;
    }
    return true;
}

static void launch(ct_ocl_enc *enc, const ct_tensor *s0, const ct_tensor *s1, const ct_tensor *d, ct_shape_args *a) {
    if (a->n == 0) return;
    /* dim 0 in work-groups of up to WG (fewer for short rows), the rows in the launch's dim 1,
     * at most 65535 (every device's limit there) with the kernel looping over the rest: no
     * division of a flat index per work-item */
    const size_t wg = ct_ocl_enc_clamp_wg(enc, CT_OCL_K_SHAPE, WG), nrows = (size_t)(a->ne1 * a->ne2 * a->ne3);
    size_t w = 1;
    while (w < wg && w < (size_t)a->ne0) w *= 2;
    const size_t local[3] = {w, 1, 1};
    const size_t groups[3] = {((size_t)a->ne0 + w - 1) / w, nrows < 65535 ? nrows : 65535, 1};
    ct_ocl_enc_kernel(enc, CT_OCL_K_SHAPE);
    if (s0) ct_ocl_arg_tensor(enc, s0, "src0");
    else ct_ocl_arg_null_tensor(enc);
    if (s1) ct_ocl_arg_tensor(enc, s1, "src1");
    else ct_ocl_arg_null_tensor(enc);
    ct_ocl_arg_tensor(enc, d, "dst");
    ct_ocl_arg_bytes(enc, a, sizeof *a);
    ct_ocl_enc_dispatch(enc, groups, local);
}

ct_status ct_ocl_encode_shape(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_shape_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0], *b = node->src[1];
    const int64_t bs = ct_type_block_size(node->type);
    ct_shape_args args;
    memset(&args, 0, sizeof args);
    SET_T(args, nb0, ne0, a, node->op == CT_OP_CONCAT ? bs : 1);
    SET_T(args, nb1, ne1, b, node->op == CT_OP_CONCAT ? bs : 1);
    SET_T(args, nb, ne, node, bs);
    args.es = (int32_t)ct_type_size(node->type);
    const ct_tensor *ts[3] = {a, b, node};
    switch (node->op) {
    case CT_OP_REPEAT: args.op = CT_SHAPE_REPEAT; break;
    case CT_OP_CONCAT: args.op = CT_SHAPE_CONCAT; args.p[0] = node->op_params[0]; break;
    case CT_OP_PAD: args.op = CT_SHAPE_PAD; memcpy(args.p, node->op_params, 9 * sizeof(int32_t)); break;
    case CT_OP_ARANGE: args.op = CT_SHAPE_ARANGE; memcpy(args.f, node->op_params, 3 * sizeof(float)); break;
    case CT_OP_ACC: {
        if (node->data != a->data) { /* not in place */
            /* the copy of a: a REPEAT of a onto dst (both contiguous F32) */
            ct_shape_args c = args;
            c.op = CT_SHAPE_REPEAT;
            c.vec = 1;
            c.n = (ct_u64)ct_nelements(node);
            launch(enc, a, NULL, node, &c);
        }
        args.op = CT_SHAPE_ACC;
        memcpy(args.p, node->op_params, 4 * sizeof(int32_t));
        args.ne0 = b->ne[0], args.ne1 = b->ne[1], args.ne2 = b->ne[2], args.ne3 = b->ne[3]; /* the launch runs over b */
        args.vec = 1;
        args.n = (ct_u64)ct_nelements(b);
        launch(enc, a, b, node, &args);
        return enc->st;
    }
    default: return ct_ocl_enc_fail(enc, CT_UNSUPPORTED, "ct_ocl_encode_shape: op %s", ct_op_name(node->op));
    }
    args.vec = vec_ok(enc, ts, (size_t)args.es);
    args.n = (ct_u64)(args.ne0 * args.ne1 * args.ne2 * args.ne3);
    launch(enc, a, b, node, &args);
    return enc->st;
}
