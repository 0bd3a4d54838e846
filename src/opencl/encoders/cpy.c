/* CPY, DUP, CONT on OpenCL: the source's elements in logical row-major order, written
 * in the destination's logical row-major order, converting types on the way (the
 * CPU's quantizers and dequantizers, bit for bit, from common.cl). */
#include "rows.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

/* The block formats quant.cl can produce: the 32-element ones. The super-block
 * quantizers (Q2_K..Q6_K, Q8_K, IQ4_XS) exist on the CPU only, as in ggml-metal
 * (docs/QUANTIZATION.md). */
static bool ocl_quantizes(ct_type t) {
    switch (t) {
    case CT_TYPE_Q8_0: case CT_TYPE_Q4_0: case CT_TYPE_Q4_1: case CT_TYPE_Q5_0: case CT_TYPE_Q5_1:
    case CT_TYPE_IQ4_NL:
        return true;
    default:
        return false;
    }
}

/* The CPU backend's set (ct_cpy_types_supported), when the kernels are there, less
 * the conversions into the super-block formats. */
bool ct_ocl_cpy_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!ct_ocl_kernel_available(dev, CT_OCL_K_CPY) || !ct_ocl_kernel_available(dev, CT_OCL_K_CPY_FLAT) ||
        !ct_ocl_kernel_available(dev, CT_OCL_K_CPY_CONTIG))
        return false;
    if (!ct_cpy_types_supported(op)) return false;
    const ct_type st = op->src[0]->type, dt = op->type;
    return st == dt || ct_type_block_size(dt) == 1 || ocl_quantizes(dt);
}

static int log2_of(int64_t v) {
    int s = 0;
    while (((int64_t)1 << s) < v) s++;
    return s;
}

enum {
    CPY_FLAT_U = 4, /* 16-byte chunks per work-item */
    CPY_CONTIG_WG = 256,
};
_Static_assert(CPY_FLAT_U <= CT_CPY_FLAT_MAX, "ct_cpy_flat takes at most CT_CPY_FLAT_MAX chunks a work-item");

static const size_t no_strides[4] = {0, 0, 0, 0};

static void encode_flat(ct_ocl_enc *enc, const ct_tensor *src, ct_tensor *dst, size_t bytes) {
    const ct_ocl_kernel_id kid = CT_OCL_K_CPY_FLAT;
    const cl_ulong s_addr = ct_ocl_enc_addr_bits(enc, src, "src0"), d_addr = ct_ocl_enc_addr_bits(enc, dst, "dst");
    const size_t wg = ct_ocl_enc_clamp_wg(enc, kid, 256);
    ct_ocl_enc_kernel(enc, kid);
    ct_ocl_arg_tensor(enc, src, "src0");
    ct_ocl_arg_tensor(enc, dst, "dst");
    ct_ocl_arg_u64(enc, bytes);
    ct_ocl_arg_u32(enc, ct_ocl_alignment(s_addr | d_addr, no_strides, 16));
    ct_ocl_arg_u32(enc, CPY_FLAT_U);
    const size_t chunks = bytes / 16 + (bytes % 16 != 0);
    const size_t local[3] = {wg, 1, 1};
    const size_t per_group = wg * CPY_FLAT_U;
    const size_t groups[3] = {(chunks + per_group - 1) / per_group, 1, 1};
    ct_ocl_enc_dispatch(enc, groups, local);
}

/* Float to float or dequantizing, both contiguous: ct_cpy_contig (kernels/cpy.cl). */
static void encode_contig(ct_ocl_enc *enc, const ct_tensor *src, ct_tensor *dst, int64_t n_el) {
    const cl_ulong s_addr = ct_ocl_enc_addr_bits(enc, src, "src0"), d_addr = ct_ocl_enc_addr_bits(enc, dst, "dst");
    const ct_type stp = src->type, dtp = dst->type;
    int mode;
    int64_t n;
    unsigned bs = 1, bbytes = 0;
    if (ct_type_is_float(stp) && ct_type_is_float(dtp)) {
        mode = CT_CPY_CONVERT;
        n = (n_el + 3) / 4;
    } else {
        mode = CT_CPY_DEQ;
        n = n_el / 16;
        bs = (unsigned)ct_type_block_size(stp);
        bbytes = (unsigned)ct_type_size(stp);
    }
    const ct_ocl_kernel_id kid = CT_OCL_K_CPY_CONTIG;
    const size_t wg = ct_ocl_enc_clamp_wg(enc, kid, CPY_CONTIG_WG);
    ct_ocl_enc_kernel(enc, kid);
    ct_ocl_arg_tensor(enc, src, "src0");
    ct_ocl_arg_tensor(enc, dst, "dst");
    ct_ocl_arg_u64(enc, (uint64_t)n);
    ct_ocl_arg_u64(enc, (uint64_t)n_el);
    ct_ocl_arg_i32(enc, mode);
    ct_ocl_arg_i32(enc, (int32_t)stp);
    ct_ocl_arg_i32(enc, (int32_t)dtp);
    ct_ocl_arg_u32(enc, bs);
    ct_ocl_arg_u32(enc, bbytes);
    ct_ocl_arg_u32(enc, ct_ocl_alignment(s_addr, no_strides, 16));
    ct_ocl_arg_u32(enc, ct_ocl_alignment(d_addr, no_strides, 16));
    const size_t local[3] = {wg, 1, 1};
    const size_t groups[3] = {((size_t)n + wg - 1) / wg, 1, 1};
    ct_ocl_enc_dispatch(enc, groups, local);
}

/* Same type, source rows packed, destination contiguous: ct_cpy_rows_raw, in the widest
 * words (16, 8 or 4 bytes) that divide the row length and every row base. */
static bool try_rows_raw(ct_ocl_enc *enc, const ct_ocl_rows_job *j, size_t rowb) {
    const ct_ocl_device *dev = enc->be->dev;
    const ct_ocl_kernel_id kid = CT_OCL_K_CPY_ROWS_RAW;
    if (!ct_ocl_kernel_available(dev, kid)) return false;
    unsigned w, wd;
    ct_ocl_rows_job_align(enc, j, rowb, &w, &wd);
    if (wd < w) w = wd;
    if (w < 4) return enc->st != CT_OK; /* a recorded error ends the node */

    const size_t nw = rowb / w;
    const size_t nper =
        ct_ocl_rows_nper(nw * (size_t)j->n1 * (size_t)j->n2 * (size_t)j->n3, CT_CPY_NPER, dev->rows8_min_log2);
    const size_t nk = (nw + nper - 1) / nper;
    size_t nth, nrptg;
    ct_ocl_rows_wg(nk, ct_ocl_enc_clamp_wg(enc, kid, 256), dev->max_work_item_sizes[1], &nth, &nrptg);
    const size_t nseg = (nw + nth * nper - 1) / (nth * nper);
    ct_ocl_enc_kernel(enc, kid);
    ct_ocl_arg_tensor(enc, j->src, "src0");
    ct_ocl_arg_tensor(enc, j->dst, "dst");
    ct_ocl_arg_i64(enc, (int64_t)nw);
    ct_ocl_arg_i64(enc, j->n1);
    ct_ocl_arg_i64(enc, (int64_t)nseg);
    ct_ocl_arg_i32(enc, (int32_t)nper);
    for (int k = 0; k < 3; k++) ct_ocl_arg_u64(enc, j->snb[k]);
    for (int k = 0; k < 3; k++) ct_ocl_arg_u64(enc, j->dnb[k]);
    ct_ocl_arg_u32(enc, w);
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {(((size_t)j->n1 + nrptg - 1) / nrptg) * nseg, (size_t)j->n2, (size_t)j->n3};
    ct_ocl_enc_dispatch(enc, groups, local);
    return true;
}

/* Element bytes of the types ct_cpy_tile moves: 4 or 2 byte plain types; 0 otherwise. */
static unsigned tile_es(ct_type t) {
    if (ct_type_block_size(t) != 1) return 0;
    const size_t ts = ct_type_size(t);
    return ts == 4 || ts == 2 ? (unsigned)ts : 0;
}

/* Source dim 1 packed and dim 0 not, destination contiguous: ct_cpy_tile, when both are
 * the same 2- or 4-byte type or both float types, and the elements are aligned. */
static bool try_tile(ct_ocl_enc *enc, const ct_tensor *src, ct_tensor *dst) {
    const ct_ocl_kernel_id kid = CT_OCL_K_CPY_TILE;
    const ct_type st = src->type, dt = dst->type;
    const unsigned ses = tile_es(st), des = tile_es(dt);
    const bool raw = st == dt;
    if (ses == 0 || des == 0 || (!raw && !(ct_type_is_float(st) && ct_type_is_float(dt)))) return false;
    if (src->nb[1] != ses || src->nb[0] == ses || src->ne[0] < 2 || src->ne[1] < 2) return false;
    if (!ct_ocl_kernel_available(enc->be->dev, kid) || ct_ocl_enc_clamp_wg(enc, kid, 256) < 256 ||
        enc->be->dev->max_work_item_sizes[1] < 8)
        return enc->st != CT_OK;
    if (ct_ocl_alignment(ct_ocl_enc_addr_bits(enc, src, "src0"), src->nb, ses) < ses ||
        ct_ocl_enc_addr_bits(enc, dst, "dst") % des != 0)
        return enc->st != CT_OK;

    const size_t ntx = ((size_t)src->ne[0] + 31) / 32, nty = ((size_t)src->ne[1] + 31) / 32;
    const size_t dnb1 = (size_t)src->ne[0] * des, dnb2 = dnb1 * (size_t)src->ne[1], dnb3 = dnb2 * (size_t)src->ne[2];
    ct_ocl_enc_kernel(enc, kid);
    ct_ocl_arg_tensor(enc, src, "src0");
    ct_ocl_arg_tensor(enc, dst, "dst");
    ct_ocl_arg_i64(enc, src->ne[0]);
    ct_ocl_arg_i64(enc, src->ne[1]);
    for (int k = 0; k < 4; k++) ct_ocl_arg_u64(enc, src->nb[k]);
    ct_ocl_arg_u64(enc, dnb1);
    ct_ocl_arg_u64(enc, dnb2);
    ct_ocl_arg_u64(enc, dnb3);
    ct_ocl_arg_u64(enc, ntx);
    ct_ocl_arg_i32(enc, raw);
    ct_ocl_arg_i32(enc, (int32_t)st);
    ct_ocl_arg_i32(enc, (int32_t)dt);
    ct_ocl_arg_u32(enc, ses);
    ct_ocl_arg_u32(enc, des);
    const size_t local[3] = {32, 8, 1};
    const size_t groups[3] = {ntx * nty, (size_t)src->ne[2], (size_t)src->ne[3]};
    ct_ocl_enc_dispatch(enc, groups, local);
    return true;
}

/* The fast paths into a contiguous destination: raw rows, converted or dequantized rows,
 * quantized blocks (source rows packed), or tiles (source dim 1 packed). */
static bool try_fast(ct_ocl_enc *enc, const ct_tensor *src, ct_tensor *node) {
    const ct_type st = src->type, dt = node->type;
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    const size_t ts = ct_type_size(st);
    if (src->nb[0] != ts && src->ne[0] != bs) return try_tile(enc, src, node);
    /* rows in the destination's flat order; a contiguous source is one long row */
    ct_ocl_rows_job j = {.src = src, .dst = node, .mode = CT_ROWS_CPY, .ne0 = src->ne[0], .n1 = src->ne[1],
                         .n2 = src->ne[2], .n3 = src->ne[3], .snb = {src->nb[1], src->nb[2], src->nb[3]}};
    if (ct_is_contiguous(src)) {
        j.ne0 = ct_nelements(src);
        j.n1 = j.n2 = j.n3 = 1;
    }
    j.lim = j.n1;
    const size_t drow = (size_t)(j.ne0 / bd) * ct_type_size(dt);
    j.dnb[0] = drow;
    j.dnb[1] = drow * (size_t)j.n1;
    j.dnb[2] = j.dnb[1] * (size_t)j.n2;
    if (st == dt) return try_rows_raw(enc, &j, (size_t)(j.ne0 / bs) * ts);
    if (ct_type_is_float(dt)) return ct_ocl_try_rows4(enc, &j);
    return ct_type_is_float(st) && ct_ocl_try_quant_rows(enc, &j);
}

ct_status ct_ocl_encode_cpy(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_cpy_supported(enc->be->dev, node));
    *n_nodes = 1;
    const ct_tensor *src = node->src[0];
    const int64_t n_el = ct_nelements(node);
    if (n_el == 0) return CT_OK;
    const ct_type st = src->type, dt = node->type;
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    const bool dflat = ct_is_contiguous(node);
    if (st == dt && dflat && ct_is_contiguous(src)) {
        encode_flat(enc, src, node, (size_t)(n_el / bs) * ct_type_size(st));
        return enc->st;
    }
    if (dflat && try_fast(enc, src, node)) return enc->st;

    /* unaligned contiguous copies; unaligned QUANT stays on ct_cpy (one work-item a block) */
    if (dflat && ct_is_contiguous(src) && !(ct_type_is_float(st) && !ct_type_is_float(dt))) {
        encode_contig(enc, src, node, n_el);
        return enc->st;
    }

    int mode;
    int64_t q;
    unsigned ts = 0;
    if (st == dt) {
        mode = CT_CPY_RAW;
        q = bs;
        ts = (unsigned)ct_type_size(st);
    } else if (ct_type_is_float(st) && ct_type_is_float(dt)) {
        mode = CT_CPY_CONVERT;
        q = 1;
    } else if (ct_type_is_float(st)) {
        mode = CT_CPY_QUANT;
        q = bd;
    } else {
        mode = CT_CPY_DEQ;
        q = 16;
        ts = (unsigned)bs; /* DEQ reads the source's block size from ts */
    }

    const cl_ulong s_addr = ct_ocl_enc_addr_bits(enc, src, "src0"), d_addr = ct_ocl_enc_addr_bits(enc, node, "dst");

    const ct_ocl_kernel_id kid = CT_OCL_K_CPY;
    const int64_t nk = src->ne[0] / q;
    size_t nth, nrptg;
    ct_ocl_rows_wg((size_t)nk, ct_ocl_enc_clamp_wg(enc, kid, 1024), enc->be->dev->max_work_item_sizes[1], &nth,
                   &nrptg);
    /* Long rows are split into segments of a few units per thread, so that one row
     * still fills many work-groups. */
    int64_t seglen = nk, nseg = 1;
    if (nk > (int64_t)(8 * nth)) {
        seglen = (int64_t)(4 * nth);
        nseg = (nk + seglen - 1) / seglen;
    }

    const ct_cpy_args args = {
        .nb00 = src->nb[0], .nb01 = src->nb[1], .nb02 = src->nb[2], .nb03 = src->nb[3],
        .nb0 = node->nb[0], .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .ne00 = src->ne[0], .ne01 = src->ne[1], .ne02 = src->ne[2],
        .ne0 = dflat ? n_el : node->ne[0], .ne1 = dflat ? 1 : node->ne[1], .ne2 = dflat ? 1 : node->ne[2],
        .q = q, .nk = nk, .nseg = nseg, .seglen = seglen,
        .dflat = dflat, .dshift = log2_of(bd), .mode = mode, .stype = (int32_t)st, .dtype = (int32_t)dt,
        .ts = ts, .salign = ct_ocl_alignment(s_addr, src->nb, 8), .dalign = ct_ocl_alignment(d_addr, node->nb, 8),
    };
    ct_ocl_enc_kernel(enc, kid);
    ct_ocl_arg_tensor(enc, src, "src0");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {(((size_t)src->ne[1] + nrptg - 1) / nrptg) * (size_t)nseg, (size_t)src->ne[2],
                              (size_t)src->ne[3]};
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}
