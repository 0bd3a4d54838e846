/* FLASH_ATTN_EXT on OpenCL (kernels/flash_attn.cl, taking ct_flash_attn_args): a work-group
 * of 64 work-items per (block of up to 8 query rows, head, ne3 index); where the device has
 * the tensor-core kernel (kernels/flash_attn_tc.cl) the shapes it takes go to it instead,
 * 32 query rows a work-group of 4 warps. Shapes with few work-groups (the one-token decode)
 * split the keys over more of them and merge the partials with a reduce kernel (work
 * memory: 2 + Dv floats per row and split). */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "tensor/tensor_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

enum { FA_NX = 64, FA_QB = 8, FA_DPI = 8, FA_TARGET_GROUPS = 64 };
/* The work-groups the tensor-core kernel wants before it splits the keys: 256 (two per SM of
 * a 132-SM card) for prefill; 1024 under 16 query rows, where the keys' bytes are the work
 * (H100: one token over 4096 keys of 32 heads 100 -> 58 us, docs/PERF.md). */
enum { FA_TC_TARGET_GROUPS = 256, FA_TC_DECODE_TARGET_GROUPS = 1024, FA_TC_DECODE_ROWS = 16 };

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

/* The K/V types the tensor-core kernel reads: F16, and the 32-value blocks it dequantizes to
 * F16 (F32 and BF16 would be rounded to F16's range and precision). */
static bool tc_kv_type(const ct_tensor *t, const ct_ocl_device *dev) {
    switch (t->type) {
    case CT_TYPE_F16: /* 16-byte rows read by 2-byte loads at least */
        for (int i = 1; i < CT_MAX_DIMS; i++)
            if (t->nb[i] % 2 != 0) return false;
        return ct_ocl_start_aligned(dev, t, 2);
    case CT_TYPE_Q4_0:
    case CT_TYPE_Q4_1:
    case CT_TYPE_Q5_0:
    case CT_TYPE_Q5_1:
    case CT_TYPE_Q8_0:
    case CT_TYPE_IQ4_NL: return true;
    default: return false;
    }
}

/* The tensor-core kernel's local memory: its tiles, and the exchange area of the emulation. */
static size_t tc_scratch(const ct_ocl_device *dev, int64_t dk, int64_t dv) {
    return 4 * (size_t)CT_FATC_LOCAL_WORDS(dk, dv) + (dev->has_nv_mma ? 0 : CT_FATC_EMULATE_BYTES);
}

/* Whether the node goes to the tensor-core kernel: head sizes it takes, K and V types it
 * reads, and the kernel built, its work-group and its local memory there. It takes the
 * one-token decode too: its tiles load K and V with the whole work-group (the fp32 kernel's
 * work-items each walk a row: H100 3228 against 58 us for one token over 4096 keys). */
static bool tc_usable(ct_ocl_enc *enc, const ct_tensor *node) {
    const ct_ocl_device *dev = enc->be->dev;
    const ct_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
    const int64_t dk = q->ne[0], dv = v->ne[0];
    if (dk % 16 != 0 || dv % 16 != 0 || dk > CT_FATC_MAX_D || dv > CT_FATC_MAX_D) return false;
    if (!tc_kv_type(k, dev) || !tc_kv_type(v, dev) || !ct_ocl_kernel_available(dev, CT_OCL_K_FLASH_ATTN_EXT_TC_F32))
        return false;
    return ct_ocl_enc_clamp_wg(enc, CT_OCL_K_FLASH_ATTN_EXT_TC_F32, CT_FATC_WG) == CT_FATC_WG &&
           dev->local_mem >= tc_scratch(dev, dk, dv);
}

typedef struct fa_plan {
    bool tc; /* the tensor-core kernel */
    int qb, n_split, chunk;
    size_t groups[3];
    size_t work_bytes;
} fa_plan;

static fa_plan make_plan(ct_ocl_enc *enc, const ct_tensor *node) {
    const ct_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
    const int64_t n_q = q->ne[1], n_kv = k->ne[1];
    fa_plan p;
    p.tc = tc_usable(enc, node);
    /* query rows a work-group takes, keys a tile, work-groups wanted */
    const int rows = p.tc ? CT_FATC_BQ : FA_QB, tile = p.tc ? CT_FATC_BK : FA_NX;
    const int64_t target = !p.tc ? FA_TARGET_GROUPS
                           : n_q < FA_TC_DECODE_ROWS ? FA_TC_DECODE_TARGET_GROUPS
                                                     : FA_TC_TARGET_GROUPS;
    p.qb = n_q >= rows ? rows : (int)(n_q < 1 ? 1 : n_q);
    const int64_t qblocks = (n_q + p.qb - 1) / p.qb;
    const int64_t groups = qblocks * q->ne[2] * q->ne[3];
    p.n_split = 1;
    if (groups < target && n_kv >= 4 * tile) {
        int64_t s = (target + groups - 1) / (groups < 1 ? 1 : groups);
        if (s > n_kv / (2 * tile)) s = n_kv / (2 * tile);
        p.n_split = s < 1 ? 1 : (int)s;
    }
    /* whole tiles per split */
    const int64_t tiles = (n_kv + tile - 1) / tile;
    p.chunk = (int)((tiles + p.n_split - 1) / p.n_split * tile);
    if (p.chunk < tile) p.chunk = tile;
    p.groups[0] = (size_t)qblocks;
    p.groups[1] = (size_t)q->ne[2];
    p.groups[2] = (size_t)q->ne[3] * (size_t)p.n_split;
    p.work_bytes = p.n_split > 1 ? (size_t)ct_nrows(q) * (size_t)p.n_split * (size_t)(2 + v->ne[0]) * sizeof(float) : 0;
    return p;
}

ct_status ct_ocl_flash_attn_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes) {
    *bytes = ct_is_empty(node) ? 0 : make_plan(enc, node).work_bytes;
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
    const fa_plan p = make_plan(enc, node);
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
    const ct_ocl_kernel_id id = p.tc ? CT_OCL_K_FLASH_ATTN_EXT_TC_F32 : CT_OCL_K_FLASH_ATTN_EXT_F32;
    if ((!p.tc && ct_ocl_enc_clamp_wg(enc, id, FA_NX) != FA_NX) ||
        ct_ocl_enc_clamp_wg(enc, CT_OCL_K_FLASH_ATTN_REDUCE_F32, FA_NX) != FA_NX)
        return ct_ocl_enc_fail(enc, CT_UNSUPPORTED, "FLASH_ATTN_EXT needs work-groups of %d work-items", FA_NX);
    const cl_mem work = p.n_split > 1 ? ct_ocl_enc_work(enc, p.work_bytes) : NULL;
    const size_t local[3] = {FA_NX, 1, 1}, tc_local[3] = {CT_FATC_WG, 1, 1};
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
    if (p.tc) {
        ct_ocl_arg_local(enc, tc_scratch(enc->be->dev, q->ne[0], v->ne[0]));
        ct_ocl_enc_dispatch(enc, p.groups, tc_local);
    } else {
        ct_ocl_arg_local(enc, (size_t)FA_QB * (size_t)q->ne[0] * sizeof(float));
        ct_ocl_arg_local(enc, ((size_t)FA_QB * FA_NX + 3 * FA_QB + FA_NX) * sizeof(float));
        ct_ocl_enc_dispatch(enc, p.groups, local);
    }
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
