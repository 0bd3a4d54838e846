/* FLASH_ATTN_EXT on NVIDIA's tensor cores (ct_flash_attn_args, kernel_args.h): F16 or 32-value
 * block K and V, head sizes multiples of 16 up to CT_FATC_MAX_D, prefill and decode alike
 * (the encoder picks it; flash_attn.cl's kernel takes the rest). Needs
 * flash_attn.cl (dequantization, Q8_0 rounding, ALiBi slope) and mul_mm_tc.cl (tc_mma,
 * tc_pack2; built where mma.sync or its emulation is).
 *
 * Work-group (query block, head, i3 * n_split + split) of 4 warps takes CT_FATC_BQ rows of
 * Q, rounded as flash_attn.cl rounds them and then to F16, and walks its keys in tiles of
 * CT_FATC_BK: the mask's tile and K's (as F16) go to local memory, and a tile whose mask is
 * -inf for every row is skipped; S = Q K^T on the tensor cores (warp w: rows 16 (w & 1),
 * keys 16 (w >> 1)), scaled, soft-capped and masked; 4 work-items a row take its max, turn
 * the scores into exp(s - M) as F16 and sum them in fp32, while the tile of V is stored
 * transposed; then O = O * exp(Mold - M) + P V on the tensor cores (warp w: rows 16 (w & 1),
 * half w >> 1 of Dv). The end is flash_attn.cl's: dst (sink, 1/S) or the split's partial.
 *
 * Differences from the fp32 kernel: Q, K, V and P as F16 operands (products exact in fp32,
 * sums the tensor cores'; a Q value past F16's 65504 becomes inf, as in ggml-cuda); V rows of keys that every row of the tile masks are zeros, but a
 * key masked for some rows only is multiplied by their zero probability (an inf or NaN
 * there reaches them, where the fp32 kernel skips it). */

#if CT_HAS_NV_MMA || CT_MMA_EMULATE

#define FT_WG CT_FATC_WG
#define FT_BQ CT_FATC_BQ
#define FT_BK CT_FATC_BK
#define FT_LDP CT_FATC_LDP
#define FT_LDS CT_FATC_LDS
#define FT_MAX_NT (CT_FATC_MAX_D / 16) /* n-tiles of 8 a warp's half of Dv holds */

/* 16 values of a K or V row from value e (a multiple of 16) as F16, two to a word: F16 bits as
 * they are (16-byte loads where a16), a block type dequantized and rounded. */
void fatc_load16(const int t, const __global uchar *row, const int e, const int a16, uint *w) {
    if (t == CT_T_F16) {
        const __global uchar *p = row + 2 * (ulong)e;
        uint4 lo, hi;
        if (a16) {
            lo = ((const __global uint4 *)p)[0];
            hi = ((const __global uint4 *)p)[1];
        } else {
            lo = as_uint4(vload8(0, (const __global ushort *)p));
            hi = as_uint4(vload8(1, (const __global ushort *)p));
        }
        w[0] = lo.s0, w[1] = lo.s1, w[2] = lo.s2, w[3] = lo.s3;
        w[4] = hi.s0, w[5] = hi.s1, w[6] = hi.s2, w[7] = hi.s3;
        return;
    }
    float y[16];
    fa_deq16(t, row + (e >> 5) * fa_block_bytes(t), (e >> 4) & 1, y);
    for (int i = 0; i < 8; i++) w[i] = tc_pack2(y[2 * i], y[2 * i + 1], 0);
}

__kernel void ct_flash_attn_ext_tc_f32(__global const uchar *q, ulong offq, __global const uchar *k, ulong offk,
                                       __global const uchar *v, ulong offv, __global const uchar *mask, ulong offm,
                                       __global const uchar *sinks, ulong offs, __global uchar *dst, ulong offd,
                                       __global float *part, ulong offp, const ct_flash_attn_args a,
                                       __local uint4 *scratch4) {
    const int tid = get_local_id(0), lane = tid & 31, w = tid >> 5, g = lane >> 2, q4 = lane & 3;
    const int i1 = get_group_id(0) * FT_BQ, h = get_group_id(1);
    const int i3 = get_group_id(2) / a.n_split, split = get_group_id(2) % a.n_split;
    const int nr = min(FT_BQ, a.n_q - i1);
    const int dk = a.dk, dv = a.dv, ldq = CT_FATC_LDQ(dk);
    /* local memory: CT_FATC_LOCAL_WORDS (kernel_args.h), in this order */
    __local uint *lq = (__local uint *)scratch4;
    __local uint *lkv = lq + FT_BQ * ldq;
    __local float *ls = (__local float *)(lkv + CT_FATC_KV_WORDS(dk, dv));
    __local uint *lp = (__local uint *)(ls + FT_BQ * FT_LDS);
    __local float *lmax = (__local float *)(lp + FT_BQ * FT_LDP), *lsum = lmax + FT_WG;
    __local float *lM = lsum + FT_WG, *lS = lM + FT_BQ, *lms = lS + FT_BQ;
    __local int *lcol = (__local int *)(lms + FT_BQ), *lany = lcol + FT_BK;
    __local uint *xch = (__local uint *)(lany + 4);

    /* Q's rows as F16, zeros past nr */
    const __global uchar *qb = q + offq + (ulong)h * a.nbq2 + (ulong)i3 * a.nbq3;
    for (int idx = tid; idx < FT_BQ * (dk / 16); idx += FT_WG) {
        const int r = idx / (dk / 16), e = 16 * (idx % (dk / 16));
        float y[16];
        if (r < nr) {
            const __global float *x = (const __global float *)(qb + (ulong)(i1 + r) * a.nbq1) + e;
            if (a.q_round == 3) {
                float b[32];
                fa_round_q8_0(x - (e & 16), b);
                for (int j = 0; j < 16; j++) y[j] = b[(e & 16) + j];
            } else {
                for (int j = 0; j < 16; j++) y[j] = x[j];
            }
        } else {
            for (int j = 0; j < 16; j++) y[j] = 0.0f;
        }
        __local uint *d = lq + r * ldq + e / 2;
        for (int j = 0; j < 8; j++) d[j] = tc_pack2(y[2 * j], y[2 * j + 1], 0);
    }
    if (tid < FT_BQ) {
        lM[tid] = -INFINITY;
        lS[tid] = 0.0f;
    }
    if (tid < FT_BK) lcol[tid] = 0;
    if (tid < 2) lany[tid] = 0;

    const float slope = fa_slope(&a, h);
    const __global uchar *kb = k + offk + (ulong)(h / a.rk2) * a.nbk2 + (ulong)i3 * a.nbk3;
    const __global uchar *vb = v + offv + (ulong)(h / a.rv2) * a.nbv2 + (ulong)i3 * a.nbv3;
    const __global uchar *mb = mask + offm + (ulong)(h % a.nem2) * a.nbm2 + (ulong)(i3 % a.nem3) * a.nbm3;
    const int kt = a.k_type, vt = a.v_type;
    const int ka16 = ((ulong)kb & 15) == 0 && (a.nbk1 & 15) == 0, va16 = ((ulong)vb & 15) == 0 && (a.nbv1 & 15) == 0;
    /* warp w's rows 16 mt; its keys 16 kh of a tile in S, its Dv columns c0 + [0, Dv / 2) in O */
    const int mt = w & 1, kh = w >> 1, ntw = dv / 16, c0 = (w >> 1) * (dv / 2);
    const int rr = tid >> 2, quarter = tid & 3; /* the softmax: 4 work-items a row, 8 keys each */

    float o[FT_MAX_NT][4];
TC_UNROLL
    for (int n = 0; n < FT_MAX_NT; n++)
TC_UNROLL
        for (int e = 0; e < 4; e++) o[n][e] = 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);

    const int j_begin = split * a.chunk, j_end = min(a.n_kv, j_begin + a.chunk);
    int tile = 0;
    for (int j0 = j_begin; j0 < j_end; j0 += FT_BK, tile++) {
        const int cnt = min(FT_BK, j_end - j0);
        /* the mask's tile (slope applied; -inf past the rows and keys) into ls, which keys any
         * row takes (lcol) and whether any (lany, by the tile's parity); K's tile as F16 */
        int mine = 0;
        for (int idx = tid; idx < FT_BQ * FT_BK; idx += FT_WG) {
            const int r = idx / FT_BK, c = idx % FT_BK;
            float m = -INFINITY;
            if (r < nr && c < cnt)
                m = a.has_mask ? slope * ct_ld_f16(mb + (ulong)(i1 + r) * a.nbm1 + 2 * (ulong)(j0 + c)) : 0.0f;
            ls[r * FT_LDS + c] = m;
            if (m != -INFINITY) {
                mine = 1;
                lcol[c] = 1; /* every writer stores 1 */
            }
        }
        if (mine) lany[tile & 1] = 1;
        /* the other parity's flag, last tile's: every work-item read it before a barrier this
         * one passed (the S barrier, or the last one where that tile was skipped and it is 0) */
        if (tid == 0) lany[(tile + 1) & 1] = 0;
        for (int idx = tid; idx < FT_BK * (dk / 16); idx += FT_WG) {
            const int c = idx % FT_BK, e = 16 * (idx / FT_BK);
            uint wv[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            if (c < cnt) fatc_load16(kt, kb + (ulong)(j0 + c) * a.nbk1, e, ka16, wv);
            __local uint4 *d = (__local uint4 *)(lkv + c * ldq + e / 2);
            d[0] = (uint4)(wv[0], wv[1], wv[2], wv[3]);
            d[1] = (uint4)(wv[4], wv[5], wv[6], wv[7]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!lany[tile & 1]) continue; /* the same for the whole work-group */

        /* S = Q K^T: rows 16 mt + [0, 16), keys 16 kh + [0, 16) */
        float sacc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
        for (int ks = 0; ks < dk / 16; ks++) {
            const __local uint *pa = lq + (16 * mt + g) * ldq + 8 * ks + q4;
            const uint af[4] = {pa[0], pa[8 * ldq], pa[4], pa[8 * ldq + 4]};
TC_UNROLL
            for (int j = 0; j < 2; j++) {
                const __local uint *pb = lkv + (16 * kh + 8 * j + g) * ldq + 8 * ks + q4;
                const uint bfr[2] = {pb[0], pb[4]};
                tc_mma(sacc[j], af, bfr, xch, 0);
            }
        }
TC_UNROLL
        for (int j = 0; j < 2; j++) {
TC_UNROLL
            for (int e = 0; e < 4; e++) {
                const int r = 16 * mt + g + 8 * (e >> 1), c = 16 * kh + 8 * j + 2 * q4 + (e & 1);
                const float m = ls[r * FT_LDS + c];
                float x = -INFINITY;
                if (m != -INFINITY) {
                    x = sacc[j][e] * a.scale;
                    if (a.softcap != 0.0f) x = a.softcap * tanh(x);
                    x += m;
                }
                ls[r * FT_LDS + c] = x;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* each quarter row's max; V's tile transposed (Dv rows of keys), zeros for the keys no
         * row takes */
        float pmax = -INFINITY;
        for (int i = 0; i < 8; i++) pmax = fmax(pmax, ls[rr * FT_LDS + 8 * quarter + i]);
        lmax[tid] = pmax;
        __local ushort *lvt = (__local ushort *)lkv;
        for (int idx = tid; idx < FT_BK * (dv / 16); idx += FT_WG) {
            const int c = idx % FT_BK, e = 16 * (idx / FT_BK);
            uint wv[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            if (lcol[c]) fatc_load16(vt, vb + (ulong)(j0 + c) * a.nbv1, e, va16, wv);
            for (int i = 0; i < 16; i++) lvt[(e + i) * (2 * FT_LDP) + c] = (ushort)(wv[i >> 1] >> (16 * (i & 1)));
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* the row's new max, its probabilities as F16 (P) and their fp32 sum, the rescale */
        const float Mold = lM[rr];
        const float Mnew = fmax(Mold, fmax(fmax(lmax[4 * rr], lmax[4 * rr + 1]), fmax(lmax[4 * rr + 2], lmax[4 * rr + 3])));
        float psum = 0.0f, pv[8];
        for (int i = 0; i < 8; i++) {
            const float x = ls[rr * FT_LDS + 8 * quarter + i];
            pv[i] = Mnew == -INFINITY || x == -INFINITY ? 0.0f : exp(x - Mnew);
            psum += pv[i];
        }
        __local uint *pp = lp + rr * FT_LDP + 4 * quarter;
        for (int i = 0; i < 4; i++) pp[i] = tc_pack2(pv[2 * i], pv[2 * i + 1], 0);
        lsum[tid] = psum;
        if (quarter == 0) lms[rr] = Mnew == -INFINITY ? 1.0f : exp(Mold - Mnew);
        barrier(CLK_LOCAL_MEM_FENCE);

        /* the row's M and S; O = O * rescale + P V: rows 16 mt + [0, 16), Dv columns c0 + [0, Dv / 2) */
        if (quarter == 0) {
            lS[rr] = lS[rr] * lms[rr] + ((lsum[4 * rr] + lsum[4 * rr + 1]) + (lsum[4 * rr + 2] + lsum[4 * rr + 3]));
            lM[rr] = Mnew;
        }
        if (tid < FT_BK) lcol[tid] = 0;
        const float ms0 = lms[16 * mt + g], ms1 = lms[16 * mt + g + 8];
TC_UNROLL
        for (int n = 0; n < FT_MAX_NT; n++) {
            if (n < ntw) {
                o[n][0] *= ms0, o[n][1] *= ms0, o[n][2] *= ms1, o[n][3] *= ms1;
            }
        }
TC_UNROLL
        for (int ks = 0; ks < FT_BK / 16; ks++) {
            const __local uint *pa = lp + (16 * mt + g) * FT_LDP + 8 * ks + q4;
            const uint af[4] = {pa[0], pa[8 * FT_LDP], pa[4], pa[8 * FT_LDP + 4]};
TC_UNROLL
            for (int n = 0; n < FT_MAX_NT; n++) {
                if (n < ntw) {
                    const __local uint *pb = lkv + (c0 + 8 * n + g) * FT_LDP + 8 * ks + q4;
                    const uint bfr[2] = {pb[0], pb[4]};
                    tc_mma(o[n], af, bfr, xch, 0);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (a.n_split > 1) {
        /* partial row (i3, h, i1 + r) of this split: [M, S, acc[dv]], as flash_attn.cl's */
        const ulong row0 = ((ulong)(i3 * a.n_head + h) * a.n_q + (ulong)i1) * a.n_split + split;
        if (tid < nr) {
            __global float *p = part + offp / 4 + (row0 + (ulong)tid * a.n_split) * (ulong)(2 + dv);
            p[0] = lM[tid];
            p[1] = lS[tid];
        }
TC_UNROLL
        for (int n = 0; n < FT_MAX_NT; n++) {
            if (n < ntw) {
TC_UNROLL
                for (int e = 0; e < 4; e++) {
                    const int r = 16 * mt + g + 8 * (e >> 1);
                    if (r < nr)
                        part[offp / 4 + (row0 + (ulong)r * a.n_split) * (ulong)(2 + dv) + 2 + c0 + 8 * n + 2 * q4 +
                             (e & 1)] = o[n][e];
                }
            }
        }
        return;
    }
    /* lms now holds each row's output factor (the rescales are done) */
    if (tid < nr) lms[tid] = fa_out_factor(&a, sinks, offs, h, lM[tid], lS[tid]);
    barrier(CLK_LOCAL_MEM_FENCE);
TC_UNROLL
    for (int e = 0; e < 4; e++) {
        const int r = 16 * mt + g + 8 * (e >> 1);
        if (r < nr) {
            __global float *out = (__global float *)(dst + offd + (ulong)h * a.nb1 + (ulong)(i1 + r) * a.nb2 +
                                                     (ulong)i3 * a.nb3);
            const float f = lms[r];
TC_UNROLL
            for (int n = 0; n < FT_MAX_NT; n++)
                if (n < ntw) out[c0 + 8 * n + 2 * q4 + (e & 1)] = o[n][e] * f;
        }
    }
}

#endif /* CT_HAS_NV_MMA || CT_MMA_EMULATE */
