/* CPY, DUP, CONT: the source's elements in logical row-major order, written in the
 * destination's logical row-major order, converting types on the way.
 *
 * Work-groups take nrptg source rows (local size 1) and, for long rows, a segment of
 * seglen units (nseg segments per row). A unit is q source elements:
 *   RAW      same type, one element or block copied as bytes (q = block size);
 *   CONVERT  between F32, F16 and BF16 (q = 1);
 *   QUANT    F32/F16/BF16 into one 32-block of the destination (q = 32);
 *   DEQ      16 elements of a source block into F32/F16/BF16 (q = 16).
 * A contiguous destination is passed flat (dflat): element n is at (n >> dshift) * nb0. */

/* CT_CPY_RAW, CT_CPY_CONVERT, CT_CPY_QUANT, CT_CPY_DEQ: kernel_args.h */

/* Coordinates of flat element n in a [ne0, ne1, ne2, ne3] tensor. */
void ct_cpy_coords(ulong n, ulong ne0, ulong ne1, ulong ne2, ulong *c) {
    ulong r;
    n = ct_udivmod(n, ne0, &r);
    c[0] = r;
    n = ct_udivmod(n, ne1, &r);
    c[1] = r;
    n = ct_udivmod(n, ne2, &r);
    c[2] = r;
    c[3] = n;
}

/* Bytes of an F32, F16 or BF16 element. */
uint ct_cpy_es(int t) { return t == CT_T_F32 ? 4u : 2u; }

float ct_cpy_load(const __global uchar *p, int t, int aligned) {
    if (t == CT_T_F32) return aligned ? *(const __global float *)p : as_float(ct_ld_u32(p));
    const ushort h = aligned ? *(const __global ushort *)p : ct_ld_u16(p);
    return t == CT_T_F16 ? ct_half_to_float(h) : ct_bf16_to_float(h);
}

void ct_cpy_store(__global uchar *p, float v, int t, int aligned) {
    if (t == CT_T_F32) {
        if (aligned) *(__global float *)p = v;
        else ct_st_u32(p, as_uint(v));
        return;
    }
    const ushort h = t == CT_T_F16 ? ct_float_to_half(v) : ct_float_to_bf16(v);
    if (aligned) *(__global ushort *)p = h;
    else ct_st_u16(p, h);
}

/* ts bytes in the widest words that align (a power of two dividing both addresses) allows. */
void ct_cpy_bytes(const __global uchar *sp, __global uchar *dp, uint ts, uint align) {
    if (align >= 8 && ts % 8 == 0) {
        for (uint i = 0; i < ts; i += 8) *(__global ulong *)(dp + i) = *(const __global ulong *)(sp + i);
    } else if (align >= 4 && ts % 4 == 0) {
        for (uint i = 0; i < ts; i += 4) *(__global uint *)(dp + i) = *(const __global uint *)(sp + i);
    } else if (align >= 2 && ts % 2 == 0) {
        for (uint i = 0; i < ts; i += 2) *(__global ushort *)(dp + i) = *(const __global ushort *)(sp + i);
    } else {
        for (uint i = 0; i < ts; i++) dp[i] = sp[i];
    }
}

/* 16 elements of a block of type t, starting at element 16*il. */
void ct_deq16(int t, const __global uchar *b, int il, float *y) {
    switch (t) {
    case CT_T_Q4_0: ct_deq16_q4_0(b, il, y); break;
    case CT_T_Q4_1: ct_deq16_q4_1(b, il, y); break;
    case CT_T_Q5_0: ct_deq16_q5_0(b, il, y); break;
    case CT_T_Q5_1: ct_deq16_q5_1(b, il, y); break;
    case CT_T_Q8_0: ct_deq16_q8_0(b, il, y); break;
    case CT_T_IQ4_NL: ct_deq16_iq4_nl(b, il, y); break;
    case CT_T_Q2_K: ct_deq16_q2_K(b, il, y); break;
    case CT_T_Q3_K: ct_deq16_q3_K(b, il, y); break;
    case CT_T_Q4_K: ct_deq16_q4_K(b, il, y); break;
    case CT_T_Q5_K: ct_deq16_q5_K(b, il, y); break;
    case CT_T_Q6_K: ct_deq16_q6_K(b, il, y); break;
    case CT_T_Q8_K: ct_deq16_q8_K(b, il, y); break;
    case CT_T_IQ4_XS: ct_deq16_iq4_xs(b, il, y); break;
    default:
        for (int l = 0; l < 16; l++) y[l] = 0.0f;
        break;
    }
}

__kernel void ct_cpy(__global const uchar *s0, ulong s0_offs, __global uchar *d, ulong d_offs, const ct_cpy_args a) {
    const long ne00 = a.ne00, ne01 = a.ne01, ne02 = a.ne02, ne0 = a.ne0, ne1 = a.ne1, ne2 = a.ne2;
    const ulong nb00 = a.nb00, nb01 = a.nb01, nb02 = a.nb02, nb03 = a.nb03;
    const ulong nb0 = a.nb0, nb1 = a.nb1, nb2 = a.nb2, nb3 = a.nb3;
    const int dflat = a.dflat, dshift = a.dshift, mode = a.mode, stype = a.stype, dtype = a.dtype;
    const long q = a.q, nk = a.nk, nseg = a.nseg, seglen = a.seglen;
    const uint ts = a.ts, salign = a.salign, dalign = a.dalign;
    const long gx = get_group_id(0);
    const long i01 = (gx / nseg) * (long)get_local_size(1) + (long)get_local_id(1);
    if (i01 >= ne01) return;
    const long seg = gx % nseg;
    const ulong i02 = get_group_id(1), i03 = get_group_id(2);
    const __global uchar *srow = s0 + s0_offs + (ulong)i01 * nb01 + i02 * nb02 + i03 * nb03;
    __global uchar *dbase = d + d_offs;
    const ulong n0 = (((ulong)i03 * (ulong)ne02 + i02) * (ulong)ne01 + (ulong)i01) * (ulong)ne00;
    const long kend = min(nk, (seg + 1) * seglen);
    const long nth = get_local_size(0);
    const int sal = salign >= ct_cpy_es(stype), dal = dalign >= ct_cpy_es(dtype);
    ulong c[4] = {0, 0, 0, 0};
    long cn = -1; /* the flat element c holds, -1 before the first */
    for (long k = seg * seglen + (long)get_local_id(0); k < kend; k += nth) {
        const ulong n = n0 + (ulong)(k * q);
        /* where dst element n + t lies: flat, in the row of c, or found again by division */
        __global uchar *dp;
        if (dflat) {
            dp = dbase + (n >> dshift) * nb0;
        } else {
            if (cn >= 0 && c[0] + (n - (ulong)cn) < (ulong)ne0) {
                c[0] += n - (ulong)cn;
            } else {
                ct_cpy_coords(n, (ulong)ne0, (ulong)ne1, (ulong)ne2, c);
            }
            cn = (long)n;
            dp = dbase + (c[0] >> dshift) * nb0 + c[1] * nb1 + c[2] * nb2 + c[3] * nb3;
        }
        if (mode == CT_CPY_RAW) {
            ct_cpy_bytes(srow + (ulong)k * nb00, dp, ts, min(salign, dalign));
        } else if (mode == CT_CPY_CONVERT) {
            ct_cpy_store(dp, ct_cpy_load(srow + (ulong)k * nb00, stype, sal), dtype, dal);
        } else if (mode == CT_CPY_QUANT) {
            float x[32];
            const __global uchar *sp = srow + (ulong)(32 * k) * nb00;
            for (int t = 0; t < 32; t++) x[t] = ct_cpy_load(sp + (ulong)t * nb00, stype, sal);
            ct_quantize_block(dtype, x, dp);
        } else {
            /* DEQ: q = 16 elements of the block (16 k) / bs, which is nb00 bytes wide */
            float y[16];
            const long bs = ts; /* elements per source block, passed in ts for this mode */
            ct_deq16(stype, srow + (ulong)((16 * k) / bs) * nb00, (int)(((16 * k) % bs) / 16), y);
            for (int t = 0; t < 16; t++) {
                __global uchar *p;
                if (dflat) {
                    p = dbase + (n + t) * nb0;
                } else if (c[0] + t < (ulong)ne0) {
                    p = dp + (ulong)t * nb0;
                } else {
                    ulong e[4];
                    ct_cpy_coords(n + t, (ulong)ne0, (ulong)ne1, (ulong)ne2, e);
                    p = dbase + e[0] * nb0 + e[1] * nb1 + e[2] * nb2 + e[3] * nb3;
                }
                ct_cpy_store(p, y[t], dtype, dal);
            }
        }
    }
}

/* Same type, both contiguous: n bytes. Each work-item moves nper (1..CT_CPY_FLAT_MAX)
 * 16-byte chunks a work-group apart (coalesced), all loads issued before the stores so
 * more bytes are in flight per thread; a work-group covers 16 * nper * local_size bytes. */
/* CT_CPY_FLAT_MAX: kernel_args.h */
__kernel void ct_cpy_flat(__global const uchar *s0, ulong s0_offs, __global uchar *d, ulong d_offs, ulong n,
                          uint align, uint nper) {
    const ulong wg = get_local_size(0);
    const ulong base = (ulong)get_group_id(0) * wg * nper + get_local_id(0);
    const __global uchar *sb = s0 + s0_offs;
    __global uchar *db = d + d_offs;
    if (align >= 16 && (base + (nper - 1) * wg + 1) * 16 <= n) {
        uint4 v[CT_CPY_FLAT_MAX];
#pragma unroll
        for (uint u = 0; u < CT_CPY_FLAT_MAX; u++)
            if (u < nper) v[u] = ((const __global uint4 *)sb)[base + u * wg];
#pragma unroll
        for (uint u = 0; u < CT_CPY_FLAT_MAX; u++)
            if (u < nper) ((__global uint4 *)db)[base + u * wg] = v[u];
        return;
    }
    for (uint u = 0; u < nper; u++) {
        const ulong i = (base + u * wg) * 16;
        if (i >= n) return;
        if (i + 16 <= n && align >= 16) {
            *(__global uint4 *)(db + i) = *(const __global uint4 *)(sb + i);
        } else {
            const uint m = (uint)min(n - i, (ulong)16);
            ct_cpy_bytes(sb + i, db + i, m, m == 16 ? align : 1);
        }
    }
}

/* Float to float or dequantizing, both contiguous: unit u of n units is, by mode,
 *   CONVERT  elements 4u..4u+3 (those below nel);
 *   DEQ      16 elements of source block 16u / bs (bs elements, bbytes bytes a block).
 * Wide loads and stores where salign and dalign (alignments of the two bases) allow. */
__kernel void ct_cpy_contig(__global const uchar *s0, ulong s0_offs, __global uchar *d, ulong d_offs, ulong n,
                            ulong nel, int mode, int stype, int dtype, uint bs, uint bbytes, uint salign,
                            uint dalign) {
    const ulong u = get_global_id(0);
    const __global uchar *sb = s0 + s0_offs;
    __global uchar *db = d + d_offs;
    const uint ses = ct_cpy_es(stype), des = ct_cpy_es(dtype);
    if (u >= n) return;
    if (mode == CT_CPY_CONVERT) {
        const ulong e = 4 * u;
        float v[4];
        if (e + 4 <= nel && salign >= 4 * ses) {
            if (stype == CT_T_F32) {
                vstore4(*(const __global float4 *)(sb + 4 * e), 0, v);
            } else {
                const ushort4 h = *(const __global ushort4 *)(sb + 2 * e);
                const ushort hv[4] = {h.s0, h.s1, h.s2, h.s3};
                for (int t = 0; t < 4; t++) v[t] = stype == CT_T_F16 ? ct_half_to_float(hv[t]) : ct_bf16_to_float(hv[t]);
            }
        } else {
            for (int t = 0; t < 4; t++) v[t] = e + t < nel ? ct_cpy_load(sb + (e + t) * ses, stype, salign >= ses) : 0.0f;
        }
        if (e + 4 <= nel && dalign >= 4 * des) {
            if (dtype == CT_T_F32) {
                *(__global float4 *)(db + 4 * e) = vload4(0, v);
            } else {
                ushort h[4];
                for (int t = 0; t < 4; t++) h[t] = dtype == CT_T_F16 ? ct_float_to_half(v[t]) : ct_float_to_bf16(v[t]);
                *(__global ushort4 *)(db + 2 * e) = (ushort4)(h[0], h[1], h[2], h[3]);
            }
        } else {
            for (int t = 0; t < 4; t++)
                if (e + t < nel) ct_cpy_store(db + (e + t) * des, v[t], dtype, dalign >= des);
        }
        return;
    }
    float y[16];
    const ulong e = 16 * u;
    ct_deq16(stype, sb + (e / bs) * bbytes, (int)((e % bs) / 16), y);
    __global uchar *dp = db + e * des;
    if (dtype == CT_T_F32 && dalign >= 16) {
        for (int t = 0; t < 4; t++) ((__global float4 *)dp)[t] = vload4(t, y);
    } else {
        for (int t = 0; t < 16; t++) ct_cpy_store(dp + (ulong)t * des, y[t], dtype, dalign >= des);
    }
}

/* Same type, source rows packed, destination contiguous (dnb1.. describe its flat order):
 * each row is nw words of w bytes (16, 8 or 4: w divides every row base). A work-item
 * moves nper (at most CT_CPY_NPER) words a work-group row apart, all loaded before any
 * is stored; work-groups hold nrptg rows (local size 1) or a segment of a long row (nseg
 * a row). */
/* CT_CPY_NPER: kernel_args.h */
__kernel void ct_cpy_rows_raw(__global const uchar *s0, ulong s0_offs, __global uchar *d, ulong d_offs, long nw,
                              long nr1, long nseg, int nper, ulong nb01, ulong nb02, ulong nb03, ulong dnb1,
                              ulong dnb2, ulong dnb3, uint w) {
    ulong seg;
    const ulong rg = ct_udivmod(get_group_id(0), (ulong)nseg, &seg);
    const long i1 = (long)(rg * get_local_size(1) + get_local_id(1));
    if (i1 >= nr1) return;
    const ulong i2 = get_group_id(1), i3 = get_group_id(2);
    const __global uchar *src = s0 + s0_offs + (ulong)i1 * nb01 + i2 * nb02 + i3 * nb03;
    __global uchar *dst = d + d_offs + (ulong)i1 * dnb1 + i2 * dnb2 + i3 * dnb3;
    const long nth = get_local_size(0);
    const long u0 = (long)seg * nth * nper + (long)get_local_id(0);
    /* words past the row or past nper */
    const long lim = min(nw, u0 + nper * nth);
    uint4 v[CT_CPY_NPER];
    if (w == 16) {
        for (int k = 0; k < CT_CPY_NPER; k++)
            if (u0 + k * nth < lim) v[k] = ((const __global uint4 *)src)[u0 + k * nth];
        for (int k = 0; k < CT_CPY_NPER; k++)
            if (u0 + k * nth < lim) ((__global uint4 *)dst)[u0 + k * nth] = v[k];
    } else if (w == 8) {
        for (int k = 0; k < CT_CPY_NPER; k++)
            if (u0 + k * nth < lim) v[k].s01 = ((const __global uint2 *)src)[u0 + k * nth];
        for (int k = 0; k < CT_CPY_NPER; k++)
            if (u0 + k * nth < lim) ((__global uint2 *)dst)[u0 + k * nth] = v[k].s01;
    } else {
        for (int k = 0; k < CT_CPY_NPER; k++)
            if (u0 + k * nth < lim) v[k].s0 = ((const __global uint *)src)[u0 + k * nth];
        for (int k = 0; k < CT_CPY_NPER; k++)
            if (u0 + k * nth < lim) ((__global uint *)dst)[u0 + k * nth] = v[k].s0;
    }
}

/* Transposes: the source's dim 1 is packed (nb01 = ses) and its dim 0 is not; the
 * destination is contiguous (dnb1.. describe its flat order). A 32x8 work-group moves a
 * 32x32 tile through local memory, reading along source dim 1 and writing along
 * destination dim 0, both coalesced; the padded tile rows keep the column accesses free
 * of bank conflicts. raw: the same type, ses bytes of bits (2 or 4); else F32, F16 and
 * BF16 converted. Group dim 0 counts ntx tiles along dim 0 times the tiles along dim 1. */
__kernel void ct_cpy_tile(__global const uchar *s0, ulong s0_offs, __global uchar *d, ulong d_offs, long ne00,
                          long ne01, ulong nb00, ulong nb01, ulong nb02, ulong nb03, ulong dnb1, ulong dnb2,
                          ulong dnb3, ulong ntx, int raw, int stype, int dtype, uint ses, uint des) {
    __local uint tile[32][33];
    const int tx = get_local_id(0), ty = get_local_id(1);
    ulong bx;
    const ulong by = ct_udivmod(get_group_id(0), ntx, &bx);
    const long i0b = (long)bx * 32, i1b = (long)by * 32;
    const __global uchar *sb = s0 + s0_offs + get_group_id(1) * nb02 + get_group_id(2) * nb03;
    __global uchar *db = d + d_offs + get_group_id(1) * dnb2 + get_group_id(2) * dnb3;
    for (int k = 0; k < 32; k += 8) {
        const long i0 = i0b + ty + k, i1 = i1b + tx;
        if (i0 < ne00 && i1 < ne01) {
            const __global uchar *p = sb + (ulong)i0 * nb00 + (ulong)i1 * nb01;
            uint v;
            if (!raw) v = as_uint(ct_cpy_load(p, stype, 1));
            else if (ses == 4) v = *(const __global uint *)p;
            else v = *(const __global ushort *)p;
            tile[ty + k][tx] = v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < 32; k += 8) {
        const long i0 = i0b + tx, i1 = i1b + ty + k;
        if (i0 < ne00 && i1 < ne01) {
            __global uchar *p = db + (ulong)i0 * des + (ulong)i1 * dnb1;
            const uint v = tile[tx][ty + k];
            if (!raw) ct_cpy_store(p, as_float(v), dtype, 1);
            else if (des == 4) *(__global uint *)p = v;
            else *(__global ushort *)p = (ushort)v;
        }
    }
}
