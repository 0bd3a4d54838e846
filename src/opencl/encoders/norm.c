/* NORM, RMS_NORM, L2_NORM, GROUP_NORM on OpenCL (kernels/norm.cl, taking ct_norm_args).
 * Rows are spread over dim 0 of the work-group, and short rows are packed several to a
 * group (dim 1), so a group has ROWS_WG work-items whatever the row length. RMS_NORM takes
 * the MUL by its weight after it, and the ADD after that, into its kernel where they are
 * its only consumers; an ADD that makes the norm's input takes the norm and its MUL into
 * another (docs/BACKENDS.md, "Fusion"). */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

#include <limits.h>
#include <string.h>

enum { ROWS_WG = 256, GROUP_WG = 256 };

static ct_ocl_kernel_id kernel_for(ct_op op) {
    switch (op) {
    case CT_OP_NORM: return CT_OCL_K_NORM_F32;
    case CT_OP_RMS_NORM: return CT_OCL_K_RMS_NORM_F32;
    case CT_OP_L2_NORM: return CT_OCL_K_L2_NORM_F32;
    case CT_OP_GROUP_NORM: return CT_OCL_K_GROUP_NORM_F32;
    default: return CT_OCL_K_COUNT;
    }
}

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % sizeof(float) != 0) return false;
    return ct_ocl_start_aligned(dev, t, sizeof(float));
}

bool ct_ocl_norm_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op) return false;
    const ct_ocl_kernel_id id = kernel_for(op->op);
    if (id == CT_OCL_K_COUNT || !ct_ocl_kernel_available(dev, id)) return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32 || !ct_are_same_shape(a, op)) return false;
    if (op->op == CT_OP_GROUP_NORM && op->op_params[0] <= 0) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] < 0 || a->ne[i] > INT_MAX) return false;
    if (ct_nrows(a) > INT_MAX) return false;
    return strides_aligned(dev, a) && strides_aligned(dev, op);
}

/* (nx, ny): 32 work-items per row for rows up to 64, else ROWS_WG; ny rows fill the
 * group. Two shapes only, so JIT-specializing drivers (PoCL) build each kernel twice. */
static void rows_shape(ct_ocl_enc *enc, ct_ocl_kernel_id id, int64_t ne00, size_t local[3]) {
    const size_t max = ct_ocl_enc_clamp_wg(enc, id, ROWS_WG);
    size_t nx = ne00 <= 64 ? 32 : ROWS_WG;
    if (nx > max) nx = max;
    size_t ny = max / nx;
    if (ny > enc->be->dev->max_work_item_sizes[1]) ny = enc->be->dev->max_work_item_sizes[1];
    local[0] = nx, local[1] = ny ? ny : 1, local[2] = 1;
}

/* t's start and strides are multiples of 4 bytes. */
static bool f32_aligned(ct_ocl_enc *enc, const ct_tensor *t, const char *role) {
    return ct_ocl_alignment(ct_ocl_enc_addr_bits(enc, t, role), t->nb, 4) >= 4;
}

/* The MUL right after RMS_NORM node that ct_rms_norm_mul_f32 computes with it, or NULL:
 * as ggml-cuda's and ggml-metal's RMS_NORM + MUL fusion, all F32, node's only consumer
 * (ct_ocl_enc_fusable_next), the other operand w of packed rows (any repeat over the norm's
 * shape when the norm is the MUL's src0; the norm's own shape when it is src1, where the
 * MUL would not broadcast it), 4-byte aligned like the MUL's destination. *w_first: w is
 * the MUL's src0. at: node's place after the node being encoded (1 after a fused ADD). */
static ct_tensor *fused_mul(ct_ocl_enc *enc, const ct_tensor *node, int at, const ct_tensor **w, bool *w_first) {
    if (node->op != CT_OP_RMS_NORM) return NULL;
    ct_tensor *mul = ct_ocl_enc_fusable_next(enc, node, at + 1);
    if (!mul || mul->op != CT_OP_MUL) return NULL;
    *w_first = mul->src[1] == node;
    *w = mul->src[*w_first ? 0 : 1];
    if (*w == node || mul->type != CT_TYPE_F32 || (*w)->type != CT_TYPE_F32) return NULL;
    if ((*w)->nb[0] != sizeof(float) || !ct_are_same_shape(mul, node)) return NULL;
    if (*w_first && !ct_are_same_shape(*w, node)) return NULL;
    if (!f32_aligned(enc, *w, "src1") || !f32_aligned(enc, mul, "dst")) return NULL;
    return mul;
}

/* The ADD right after the fused MUL that the same kernel also computes (ggml-cuda's
 * RMS_NORM + MUL + ADD: a post-norm and its residual), or NULL: the MUL's only consumer,
 * all F32, the other operand r of the norm's shape in packed rows, 4-byte aligned like the
 * ADD's destination. *r_first: r is the ADD's src0. */
static ct_tensor *fused_add(ct_ocl_enc *enc, const ct_tensor *mul, int at, const ct_tensor **r, bool *r_first) {
    ct_tensor *add = ct_ocl_enc_fusable_next(enc, mul, at + 2);
    if (!add || add->op != CT_OP_ADD) return NULL;
    *r_first = add->src[1] == mul;
    *r = add->src[*r_first ? 0 : 1];
    if (*r == mul || add->type != CT_TYPE_F32 || (*r)->type != CT_TYPE_F32) return NULL;
    if ((*r)->nb[0] != sizeof(float) || !ct_are_same_shape(*r, mul) || !ct_are_same_shape(add, mul)) return NULL;
    if (!f32_aligned(enc, *r, "src1") || !f32_aligned(enc, add, "dst")) return NULL;
    return add;
}

/* Whether the ADD pre, being encoded, makes the input of the RMS_NORM after it in a way
 * ct_add_rms_norm_mul_f32 computes with the norm (ggml-cuda's ADD + RMS_NORM + MUL: the
 * residual sum and the next layer's norm): the norm is the next node, takes pre as its input
 * and fuses its MUL; pre's operands and result are contiguous F32 of one shape, 4-byte
 * aligned. pre's result may have other consumers: the kernel writes it too. */
static bool pre_add_fusable(ct_ocl_enc *enc, const ct_tensor *pre, const ct_tensor **norm) {
    const int j = enc->node_index + 1;
    if (!enc->uses || pre->op != CT_OP_ADD || j >= ct_graph_n_nodes(enc->graph)) return false;
    const ct_tensor *n = ct_graph_node(enc->graph, j), *a = pre->src[0], *b = pre->src[1];
    if (n->op != CT_OP_RMS_NORM || n->src[0] != pre || ct_is_empty(n)) return false;
    if (pre->type != CT_TYPE_F32 || a->type != CT_TYPE_F32 || b->type != CT_TYPE_F32) return false;
    if (!ct_are_same_shape(a, pre) || !ct_are_same_shape(b, pre)) return false;
    if (!ct_is_contiguous(a) || !ct_is_contiguous(b) || !ct_is_contiguous(pre)) return false;
    *norm = n;
    return f32_aligned(enc, a, "src0") && f32_aligned(enc, b, "src1") && f32_aligned(enc, pre, "dst");
}

/* Whether the fused kernel's writes (dst, and pre's sum when an ADD comes first) may race
 * with what it reads (ct_ocl_fused_write_clashes): the norm's input a (pre's operands), the
 * weight w, the residual r, the sum read back. */
static bool writes_clash(const ct_tensor *pre, const ct_tensor *dst, const ct_tensor *a, const ct_tensor *w,
                         const ct_tensor *r) {
    const ct_tensor *in[] = {a, pre ? pre->src[1] : NULL, w, r, pre};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        if (!in[i]) continue;
        if (ct_ocl_fused_write_clashes(dst, in[i])) return true;
        if (pre && in[i] != pre && ct_ocl_fused_write_clashes(pre, in[i])) return true;
    }
    return false;
}

/* Encodes node, fused with the nodes after it that its kernel takes (the status is enc->st);
 * pre: the ADD before it that makes its input, or NULL. False, with nothing encoded, when pre
 * is given but the norm cannot take its MUL. */
static bool encode(ct_ocl_enc *enc, const ct_tensor *node, const ct_tensor *pre, int *n_nodes) {
    const int at = pre ? 1 : 0;
    const ct_tensor *a = pre ? pre->src[0] : node->src[0], *w = NULL;
    bool w_first = false;
    const ct_tensor *mul = fused_mul(enc, node, at, &w, &w_first), *r = NULL;
    bool r_first = false;
    const ct_tensor *add = mul ? fused_add(enc, mul, at, &r, &r_first) : NULL;
    if (add && writes_clash(pre, add, a, w, r)) add = NULL; /* the MUL alone may still fuse */
    if (mul && !add && writes_clash(pre, mul, a, w, NULL)) mul = NULL;
    const bool group = node->op == CT_OP_GROUP_NORM;
    const ct_ocl_kernel_id fused_id = pre ? CT_OCL_K_ADD_RMS_NORM_MUL_F32 : CT_OCL_K_RMS_NORM_MUL_F32;
    size_t local[3], groups[3], scratch;
    if (!group) {
        /* the unfused kernel's row width, so the sums are added in the same order */
        rows_shape(enc, kernel_for(node->op), node->ne[0], local);
        const size_t max = mul ? ct_ocl_enc_max_wg(enc, fused_id) : 0;
        if (mul && max / local[0] == 0) mul = add = NULL;
        if (mul && local[1] > max / local[0]) local[1] = max / local[0];
    }
    if (pre && !mul && enc->st == CT_OK) return false; /* the ADD goes on its own */
    const ct_tensor *dst = add ? add : mul ? mul : node;
    const ct_ocl_kernel_id id = mul ? fused_id : kernel_for(node->op);
    ct_norm_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb0 = dst->nb[0], .nb1 = dst->nb[1], .nb2 = dst->nb[2], .nb3 = dst->nb[3],
        .ne00 = (int32_t)a->ne[0], .ne01 = (int32_t)a->ne[1], .ne02 = (int32_t)a->ne[2],
        .nrows = (int32_t)ct_nrows(a),
    };
    memcpy(&args.eps, &node->op_params[group ? 1 : 0], sizeof args.eps);
    if (group) {
        const int64_t n_groups = node->op_params[0];
        args.channels_per_group = (int32_t)((a->ne[2] + n_groups - 1) / n_groups);
        /* only the groups that hold channels: the last may be short, later ones empty */
        groups[0] = (size_t)((args.ne02 + args.channels_per_group - 1) / args.channels_per_group);
        groups[1] = (size_t)a->ne[3], groups[2] = 1;
        local[0] = ct_ocl_enc_clamp_wg(enc, id, GROUP_WG), local[1] = 1, local[2] = 1;
        scratch = local[0] * sizeof(float);
    } else {
        groups[0] = ((size_t)args.nrows + local[1] - 1) / local[1], groups[1] = 1, groups[2] = 1;
        scratch = local[0] * local[1] * sizeof(float);
    }
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, dst, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_local(enc, scratch);
    if (mul) {
        ct_norm_mul_args m = {
            .nbw1 = w->nb[1], .nbw2 = w->nb[2], .nbw3 = w->nb[3],
            .ne10 = (int32_t)w->ne[0], .ne11 = (int32_t)w->ne[1], .ne12 = (int32_t)w->ne[2], .ne13 = (int32_t)w->ne[3],
            .w_first = w_first, .add = add ? (r_first ? 2 : 1) : 0,
        };
        if (add) m.nbr1 = r->nb[1], m.nbr2 = r->nb[2], m.nbr3 = r->nb[3];
        ct_ocl_arg_tensor(enc, w, "src1");
        if (add) ct_ocl_arg_tensor(enc, r, "src1");
        else ct_ocl_arg_null_tensor(enc);
        m.pre_add = pre != NULL;
        ct_ocl_arg_bytes(enc, &m, sizeof m);
        if (pre) {
            ct_ocl_arg_tensor(enc, pre->src[1], "src1");
            ct_ocl_arg_tensor(enc, pre, "dst");
        }
        *n_nodes = at + (add ? 3 : 2);
    }
    ct_ocl_enc_dispatch(enc, groups, local);
    return true;
}

ct_status ct_ocl_encode_norm(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_norm_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    encode(enc, node, NULL, n_nodes);
    return enc->st;
}

bool ct_ocl_encode_add_norm(ct_ocl_enc *enc, ct_tensor *add, int *n_nodes) {
    const ct_tensor *norm = NULL;
    if (ct_is_empty(add) || !pre_add_fusable(enc, add, &norm)) return false;
    return encode(enc, norm, add, n_nodes);
}
