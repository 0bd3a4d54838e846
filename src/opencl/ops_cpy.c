/* CPY, DUP, CONT on OpenCL: the source's elements in logical row-major order, written
 * in the destination's logical row-major order, converting types on the way (the
 * CPU's quantizers and dequantizers, bit for bit, from common.cl). */
#include "ops_rows.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

/* cpy.cl's unit kinds */
enum { MODE_RAW = 0, MODE_CONVERT = 1, MODE_QUANT = 2, MODE_DEQ = 3 };

/* The CPU backend's set (ct_cpy_types_supported), when the kernels are there. */
bool ct_ocl_cpy_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!ct_ocl_kernel_available(dev, CT_OCL_K_CPY) || !ct_ocl_kernel_available(dev, CT_OCL_K_CPY_FLAT) ||
        !ct_ocl_kernel_available(dev, CT_OCL_K_CPY_CONTIG))
        return false;
    return ct_cpy_types_supported(op);
}

static int log2_of(int64_t v) {
    int s = 0;
    while (((int64_t)1 << s) < v) s++;
    return s;
}

enum {
    CPY_FLAT_U = 4,      /* 16-byte chunks per work-item (at most CT_CPY_FLAT_MAX of kernels/cpy.cl) */
    CPY_CONTIG_WG = 256,
};

static ct_status encode_flat(ct_ocl_backend *be, const ct_tensor *src, ct_tensor *dst, size_t bytes) {
    const cl_ulong s_addr = ct_ocl_addr_bits(be->dev, src), d_addr = ct_ocl_addr_bits(be->dev, dst);
    const size_t zero[4] = {0, 0, 0, 0};
    args g = {be, CT_OCL_K_CPY_FLAT, 0, CT_OK};
    arg_tensor(&g, src, "src0");
    arg_tensor(&g, dst, "dst");
    arg_u64(&g, bytes);
    arg_u32(&g, ct_ocl_alignment(s_addr | d_addr, zero, 16));
    const unsigned nper = CPY_FLAT_U;
    arg_u32(&g, nper);
    if (g.st != CT_OK) return g.st;
    const size_t wg = ct_ocl_clamp_wg(be, g.kid, 256);
    const size_t chunks = bytes / 16 + (bytes % 16 != 0);
    const size_t local[3] = {wg, 1, 1};
    const size_t per_group = wg * nper;
    const size_t groups[3] = {(chunks + per_group - 1) / per_group, 1, 1};
    return ct_ocl_dispatch(be, g.kid, groups, local);
}

/* Float to float or dequantizing, both contiguous: ct_cpy_contig (kernels/cpy.cl). */
static ct_status encode_contig(ct_ocl_backend *be, const ct_tensor *src, ct_tensor *dst, int64_t n_el) {
    const cl_ulong s_addr = ct_ocl_addr_bits(be->dev, src), d_addr = ct_ocl_addr_bits(be->dev, dst);
    const ct_type stp = src->type, dtp = dst->type;
    int mode;
    int64_t n;
    unsigned bs = 1, bbytes = 0;
    if (ct_type_is_float(stp) && ct_type_is_float(dtp)) {
        mode = MODE_CONVERT;
        n = (n_el + 3) / 4;
    } else {
        mode = MODE_DEQ;
        n = n_el / 16;
        bs = (unsigned)ct_type_block_size(stp);
        bbytes = (unsigned)ct_type_size(stp);
    }
    const size_t zero[4] = {0, 0, 0, 0};
    args g = {be, CT_OCL_K_CPY_CONTIG, 0, CT_OK};
    arg_tensor(&g, src, "src0");
    arg_tensor(&g, dst, "dst");
    arg_u64(&g, (size_t)n);
    arg_u64(&g, (size_t)n_el);
    arg_i32(&g, mode);
    arg_i32(&g, (int)stp);
    arg_i32(&g, (int)dtp);
    arg_u32(&g, bs);
    arg_u32(&g, bbytes);
    arg_u32(&g, ct_ocl_alignment(s_addr, zero, 16));
    arg_u32(&g, ct_ocl_alignment(d_addr, zero, 16));
    if (g.st != CT_OK) return g.st;
    const size_t wg = ct_ocl_clamp_wg(be, g.kid, CPY_CONTIG_WG);
    const size_t local[3] = {wg, 1, 1};
    const size_t groups[3] = {((size_t)n + wg - 1) / wg, 1, 1};
    return ct_ocl_dispatch(be, g.kid, groups, local);
}

/* Same type, source rows packed, destination contiguous: ct_cpy_rows_raw, in the widest
 * words (16, 8 or 4 bytes) that divide the row length and every row base. */
static ct_status try_rows_raw(ct_ocl_backend *be, const ct_ocl_rows_job *j, size_t rowb, bool *done) {
    *done = false;
    const ct_ocl_kernel_id kid = CT_OCL_K_CPY_ROWS_RAW;
    if (!ct_ocl_kernel_available(be->dev, kid)) return CT_OK;
    unsigned w, wd;
    ct_status st = ct_ocl_rows_job_align(be, j, rowb, &w, &wd);
    if (st != CT_OK) return st;
    if (wd < w) w = wd;
    if (w < 4) return CT_OK;

    const size_t nw = rowb / w;
    const size_t nper =
        ct_ocl_rows_nper(nw * (size_t)j->n1 * (size_t)j->n2 * (size_t)j->n3, CT_OCL_CPY_NPER, be->dev->rows8_min_log2);
    const size_t nk = (nw + nper - 1) / nper;
    size_t nth, nrptg;
    ct_ocl_rows_wg(nk, ct_ocl_clamp_wg(be, kid, 256), be->dev->max_work_item_sizes[1], &nth, &nrptg);
    const size_t nseg = (nw + nth * nper - 1) / (nth * nper);
    args g = {be, kid, 0, CT_OK};
    arg_tensor(&g, j->src, "src0");
    arg_tensor(&g, j->dst, "dst");
    arg_i64(&g, (int64_t)nw);
    arg_i64(&g, j->n1);
    arg_i64(&g, (int64_t)nseg);
    arg_i32(&g, (int)nper);
    for (int k = 0; k < 3; k++) arg_u64(&g, j->snb[k]);
    for (int k = 0; k < 3; k++) arg_u64(&g, j->dnb[k]);
    arg_u32(&g, w);
    if (g.st != CT_OK) return g.st;
    *done = true;
    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {(((size_t)j->n1 + nrptg - 1) / nrptg) * nseg, (size_t)j->n2, (size_t)j->n3};
    return ct_ocl_dispatch(be, kid, groups, local);
}

/* Element bytes of the types ct_cpy_tile moves: 4 or 2 byte plain types; 0 otherwise. */
static unsigned tile_es(ct_type t) {
    if (ct_type_block_size(t) != 1) return 0;
    const size_t ts = ct_type_size(t);
    return ts == 4 || ts == 2 ? (unsigned)ts : 0;
}

/* Source dim 1 packed and dim 0 not, destination contiguous: ct_cpy_tile, when both are
 * the same 2- or 4-byte type or both float types, and the elements are aligned. */
static ct_status try_tile(ct_ocl_backend *be, const ct_tensor *src, ct_tensor *dst, bool *done) {
    *done = false;
    const ct_ocl_kernel_id kid = CT_OCL_K_CPY_TILE;
    const ct_type st = src->type, dt = dst->type;
    const unsigned ses = tile_es(st), des = tile_es(dt);
    const bool raw = st == dt;
    if (ses == 0 || des == 0 || (!raw && !(ct_type_is_float(st) && ct_type_is_float(dt)))) return CT_OK;
    if (src->nb[1] != ses || src->nb[0] == ses || src->ne[0] < 2 || src->ne[1] < 2) return CT_OK;
    if (!ct_ocl_kernel_available(be->dev, kid) || ct_ocl_clamp_wg(be, kid, 256) < 256 ||
        be->dev->max_work_item_sizes[1] < 8)
        return CT_OK;
    if (ct_ocl_alignment(ct_ocl_addr_bits(be->dev, src), src->nb, ses) < ses ||
        !ct_ocl_start_aligned(be->dev, dst, des))
        return CT_OK;

    const size_t ntx = ((size_t)src->ne[0] + 31) / 32, nty = ((size_t)src->ne[1] + 31) / 32;
    const size_t dnb1 = (size_t)src->ne[0] * des, dnb2 = dnb1 * (size_t)src->ne[1], dnb3 = dnb2 * (size_t)src->ne[2];
    args g = {be, kid, 0, CT_OK};
    arg_tensor(&g, src, "src0");
    arg_tensor(&g, dst, "dst");
    arg_i64(&g, src->ne[0]);
    arg_i64(&g, src->ne[1]);
    for (int k = 0; k < 4; k++) arg_u64(&g, src->nb[k]);
    arg_u64(&g, dnb1);
    arg_u64(&g, dnb2);
    arg_u64(&g, dnb3);
    arg_u64(&g, ntx);
    arg_i32(&g, raw);
    arg_i32(&g, (int)st);
    arg_i32(&g, (int)dt);
    arg_u32(&g, ses);
    arg_u32(&g, des);
    if (g.st != CT_OK) return g.st;
    *done = true;
    const size_t local[3] = {32, 8, 1};
    const size_t groups[3] = {ntx * nty, (size_t)src->ne[2], (size_t)src->ne[3]};
    return ct_ocl_dispatch(be, kid, groups, local);
}

/* The fast paths into a contiguous destination: raw rows, converted or dequantized rows,
 * quantized blocks (source rows packed), or tiles (source dim 1 packed). */
static ct_status try_fast(ct_ocl_backend *be, const ct_tensor *src, ct_tensor *node, bool *done) {
    *done = false;
    const ct_type st = src->type, dt = node->type;
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    const size_t ts = ct_type_size(st);
    if (src->nb[0] != ts && src->ne[0] != bs) return try_tile(be, src, node, done);
    /* rows in the destination's flat order; a contiguous source is one long row */
    ct_ocl_rows_job j = {.src = src, .dst = node, .mode = CT_OCL_ROWS_CPY, .ne0 = src->ne[0], .n1 = src->ne[1],
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
    if (st == dt) return try_rows_raw(be, &j, (size_t)(j.ne0 / bs) * ts, done);
    if (ct_type_is_float(dt)) return ct_ocl_try_rows4(be, &j, done);
    return ct_type_is_float(st) ? ct_ocl_try_quant_rows(be, &j, done) : CT_OK;
}

ct_status ct_ocl_encode_cpy(ct_ocl_backend *be, ct_tensor *node) {
    const ct_tensor *src = node->src[0];
    const int64_t n_el = ct_nelements(node);
    if (n_el == 0) return CT_OK;
    const ct_type st = src->type, dt = node->type;
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    const bool dflat = ct_is_contiguous(node);
    if (st == dt && dflat && ct_is_contiguous(src))
        return encode_flat(be, src, node, (size_t)(n_el / bs) * ct_type_size(st));
    if (dflat) {
        bool done;
        const ct_status s = try_fast(be, src, node, &done);
        if (s != CT_OK || done) return s;
    }

    /* unaligned contiguous copies; unaligned QUANT stays on ct_cpy (one work-item a block) */
    if (dflat && ct_is_contiguous(src) && !(ct_type_is_float(st) && !ct_type_is_float(dt)))
        return encode_contig(be, src, node, n_el);

    int mode;
    int64_t q;
    unsigned ts = 0;
    if (st == dt) {
        mode = MODE_RAW;
        q = bs;
        ts = (unsigned)ct_type_size(st);
    } else if (ct_type_is_float(st) && ct_type_is_float(dt)) {
        mode = MODE_CONVERT;
        q = 1;
    } else if (ct_type_is_float(st)) {
        mode = MODE_QUANT;
        q = bd;
    } else {
        mode = MODE_DEQ;
        q = 16;
        ts = (unsigned)bs; /* DEQ reads the source's block size from ts */
    }

    const cl_ulong s_addr = ct_ocl_addr_bits(be->dev, src), d_addr = ct_ocl_addr_bits(be->dev, node);

    const int64_t nk = src->ne[0] / q;
    args g = {be, CT_OCL_K_CPY, 0, CT_OK};
    size_t nth, nrptg;
    ct_ocl_rows_wg((size_t)nk, ct_ocl_clamp_wg(be, g.kid, 1024), be->dev->max_work_item_sizes[1], &nth, &nrptg);
    /* Long rows are split into segments of a few units per thread, so that one row
     * still fills many work-groups. */
    int64_t seglen = nk, nseg = 1;
    if (nk > (int64_t)(8 * nth)) {
        seglen = (int64_t)(4 * nth);
        nseg = (nk + seglen - 1) / seglen;
    }

    arg_tensor(&g, src, "src0");
    arg_tensor(&g, node, "dst");
    arg_i64(&g, src->ne[0]);
    arg_i64(&g, src->ne[1]);
    arg_i64(&g, src->ne[2]);
    for (int k = 0; k < 4; k++) arg_u64(&g, src->nb[k]);
    arg_i64(&g, dflat ? n_el : node->ne[0]);
    arg_i64(&g, dflat ? 1 : node->ne[1]);
    arg_i64(&g, dflat ? 1 : node->ne[2]);
    for (int k = 0; k < 4; k++) arg_u64(&g, node->nb[k]);
    arg_i32(&g, dflat);
    arg_i32(&g, log2_of(bd));
    arg_i32(&g, mode);
    arg_i32(&g, (int)st);
    arg_i32(&g, (int)dt);
    arg_i64(&g, q);
    arg_u32(&g, ts);
    arg_i64(&g, nk);
    arg_i64(&g, nseg);
    arg_i64(&g, seglen);
    arg_u32(&g, ct_ocl_alignment(s_addr, src->nb, 8));
    arg_u32(&g, ct_ocl_alignment(d_addr, node->nb, 8));
    if (g.st != CT_OK) return g.st;

    const size_t local[3] = {nth, nrptg, 1};
    const size_t groups[3] = {(((size_t)src->ne[1] + nrptg - 1) / nrptg) * (size_t)nseg, (size_t)src->ne[2],
                              (size_t)src->ne[3]};
    return ct_ocl_dispatch(be, g.kid, groups, local);
}
