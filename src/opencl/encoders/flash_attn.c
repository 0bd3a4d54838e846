/* FLASH_ATTN_EXT on OpenCL (kernels/flash_attn.cl, taking ct_flash_attn_args): a work-group
 * of 64 work-items per (block of up to 8 query rows, head, ne3 index); the one-token decode
 * and other shapes with few work-groups split the keys over more of them and merge the
 * partials with a reduce kernel (work memory: 2 + Dv floats per row and split). */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "tensor/tensor_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

enum { FA_NX = 64, FA_QB = 8, FA_DPI = 8, FA_TARGET_GROUPS = 64 };

static bool dims_fit(const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->ne[i] < 0 || t->ne[i] > INT_MAX / 4) return false;
    return true;
}

bool ct_ocl_flash_attn_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !ct_flash_attn_node_valid(op)) return false;
    if (!ct_ocl_kernel_available(dev, CT_OCL_K_FLASH_ATTN_EXT_F32) ||
        !ct_ocl_kernel_available(dev, CT_OCL_K_FLASH_ATTN_REDUCE_F32))
        return false;
    const ct_tensor *q = op->src[0], *k = op->src[1], *v = op->src[2], *mask = op->src[3], *sinks = op->src[4];
    /* the work-group's private accumulators hold Dv <= 512; Q's rows in local memory Dk <= 576 */
    if (v->ne[0] > FA_NX * FA_DPI || q->ne[0] > 576) return false;
    if (q->nb[0] != sizeof(float) || k->nb[0] != ct_type_size(k->type) || v->nb[0] != ct_type_size(v->type))
        return false;
    if (op->nb[0] != sizeof(float) || !ct_ocl_start_aligned(dev, op, sizeof(float)) ||
        !ct_ocl_start_aligned(dev, q, sizeof(float)))
        return false;
    for (int i = 1; i < CT_MAX_DIMS; i++)
        if (q->nb[i] % sizeof(float) != 0 || op->nb[i] % sizeof(float) != 0) return false;
    if (!dims_fit(q) || !dims_fit(k) || !dims_fit(v) || !dims_fit(op)) return false;
    if (mask && (mask->nb[0] != sizeof(uint16_t) || !dims_fit(mask))) return false;
    if (sinks && (!ct_ocl_start_aligned(dev, sinks, sizeof(float)) || sinks->nb[0] % sizeof(float) != 0))
        return false;
    return true;
}

typedef struct fa_plan {
    int qb, n_split, chunk;
    size_t groups[3];
    size_t work_bytes;
} fa_plan;

static fa_plan make_plan(const ct_tensor *node) {
    const ct_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
    const int64_t n_q = q->ne[1], n_kv = k->ne[1];
    fa_plan p;
    p.qb = n_q >= FA_QB ? FA_QB : (int)(n_q < 1 ? 1 : n_q);
    const int64_t qblocks = (n_q + p.qb - 1) / p.qb;
    const int64_t groups = qblocks * q->ne[2] * q->ne[3];
    p.n_split = 1;
    if (groups < FA_TARGET_GROUPS && n_kv >= 4 * FA_NX) {
        int64_t s = (FA_TARGET_GROUPS + groups - 1) / (groups < 1 ? 1 : groups);
        if (s > n_kv / (2 * FA_NX)) s = n_kv / (2 * FA_NX);
        p.n_split = s < 1 ? 1 : (int)s;
    }
    /* whole tiles per split */
    const int64_t tiles = (n_kv + FA_NX - 1) / FA_NX;
    p.chunk = (int)((tiles + p.n_split - 1) / p.n_split * FA_NX);
    if (p.chunk < FA_NX) p.chunk = FA_NX;
    p.groups[0] = (size_t)qblocks;
    p.groups[1] = (size_t)q->ne[2];
    p.groups[2] = (size_t)q->ne[3] * (size_t)p.n_split;
    p.work_bytes = p.n_split > 1 ? (size_t)ct_nrows(q) * (size_t)p.n_split * (size_t)(2 + v->ne[0]) * sizeof(float) : 0;
    return p;
}

ct_status ct_ocl_flash_attn_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes) {
    CT_UNUSED(enc);
    *bytes = ct_is_empty(node) ? 0 : make_plan(node).work_bytes;
    return CT_OK;
}

static int q_round(ct_type t) {
    switch (t) {
    case CT_TYPE_F16: return 1;
    case CT_TYPE_BF16: return 2;
    case CT_TYPE_Q8_0: return 3;
    default: return 0;
    }
}

ct_status ct_ocl_encode_flash_attn(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_flash_attn_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2], *mask = node->src[3],
                    *sinks = node->src[4];
    const fa_plan p = make_plan(node);
    ct_flash_attn_args a = {
        .nbq1 = q->nb[1], .nbq2 = q->nb[2], .nbq3 = q->nb[3],
        .nbk1 = k->nb[1], .nbk2 = k->nb[2], .nbk3 = k->nb[3],
        .nbv1 = v->nb[1], .nbv2 = v->nb[2], .nbv3 = v->nb[3],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .dk = (int32_t)q->ne[0], .dv = (int32_t)v->ne[0], .n_q = (int32_t)q->ne[1], .n_kv = (int32_t)k->ne[1],
        .n_head = (int32_t)q->ne[2], .rk2 = (int32_t)(q->ne[2] / k->ne[2]), .rv2 = (int32_t)(q->ne[2] / v->ne[2]),
        .nem2 = 1, .nem3 = 1,
        .k_type = (int32_t)k->type, .v_type = (int32_t)v->type, .q_round = q_round(ct_flash_attn_q_type(node)),
        .qb = p.qb, .n_split = p.n_split, .chunk = p.chunk,
    };
    float scale, max_bias, softcap;
    memcpy(&scale, &node->op_params[0], sizeof scale);
    memcpy(&max_bias, &node->op_params[1], sizeof max_bias);
    memcpy(&softcap, &node->op_params[2], sizeof softcap);
    a.scale = softcap != 0.0f ? scale / softcap : scale;
    a.softcap = softcap;
    a.max_bias = max_bias;
    const uint32_t n_head_log2 = 1u << (uint32_t)floor(log2((double)q->ne[2]));
    a.n_head_log2 = (int32_t)n_head_log2;
    a.m0 = powf(2.0f, -(max_bias) / (float)n_head_log2);
    a.m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);
    if (mask) {
        a.has_mask = 1;
        a.nbm1 = mask->nb[1], a.nbm2 = mask->nb[2], a.nbm3 = mask->nb[3];
        a.nem2 = (int32_t)mask->ne[2], a.nem3 = (int32_t)mask->ne[3];
    }
    if (sinks) {
        a.has_sinks = 1;
        a.nbs0 = sinks->nb[0];
    }
    const ct_ocl_kernel_id id = CT_OCL_K_FLASH_ATTN_EXT_F32;
    if (ct_ocl_enc_clamp_wg(enc, id, FA_NX) != FA_NX || ct_ocl_enc_clamp_wg(enc, CT_OCL_K_FLASH_ATTN_REDUCE_F32, FA_NX) != FA_NX)
        return ct_ocl_enc_fail(enc, CT_UNSUPPORTED, "FLASH_ATTN_EXT needs work-groups of %d work-items", FA_NX);
    const cl_mem work = p.n_split > 1 ? ct_ocl_enc_work(enc, p.work_bytes) : NULL;
    const size_t local[3] = {FA_NX, 1, 1};
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, q, "q");
    ct_ocl_arg_tensor(enc, k, "k");
    ct_ocl_arg_tensor(enc, v, "v");
    if (mask) ct_ocl_arg_tensor(enc, mask, "mask");
    else ct_ocl_arg_null_tensor(enc);
    if (sinks) ct_ocl_arg_tensor(enc, sinks, "sinks");
    else ct_ocl_arg_null_tensor(enc);
    ct_ocl_arg_tensor(enc, node, "dst");
    if (work) {
        ct_ocl_arg_mem(enc, work);
        ct_ocl_arg_u64(enc, 0);
    } else {
        ct_ocl_arg_null_tensor(enc);
    }
    ct_ocl_arg_bytes(enc, &a, sizeof a);
    ct_ocl_arg_local(enc, (size_t)FA_QB * (size_t)q->ne[0] * sizeof(float));
    ct_ocl_arg_local(enc, ((size_t)FA_QB * FA_NX + 3 * FA_QB + FA_NX) * sizeof(float));
    ct_ocl_enc_dispatch(enc, p.groups, local);
    if (p.n_split > 1) {
        const size_t rgroups[3] = {(size_t)q->ne[1], (size_t)q->ne[2], (size_t)q->ne[3]};
        ct_ocl_enc_kernel(enc, CT_OCL_K_FLASH_ATTN_REDUCE_F32);
        ct_ocl_arg_mem(enc, work);
        ct_ocl_arg_u64(enc, 0);
        if (sinks) ct_ocl_arg_tensor(enc, sinks, "sinks");
        else ct_ocl_arg_null_tensor(enc);
        ct_ocl_arg_tensor(enc, node, "dst");
        ct_ocl_arg_bytes(enc, &a, sizeof a);
        ct_ocl_enc_dispatch(enc, rgroups, local);
    }
    return enc->st;
}
