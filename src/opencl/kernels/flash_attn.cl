/* FLASH_ATTN_EXT (ct_flash_attn_args, kernel_args.h) with ggml-cpu's online softmax.
 * Work-group (query block, head, i3 * n_split + split) of FA_NX work-items takes qb <= FA_QB
 * query rows of one head (Q rounded as ggml-cpu rounds it, in local memory) over its keys in
 * tiles of FA_NX: work-item j scores key j of the tile against every row (K dequantized once,
 * skipped where every row's mask is -inf); work-items r < qb update row r's max M and sum S
 * and turn the scores into exp(s - M); then each work-item accumulates its own output dims
 * (d = lid + FA_NX * i, i < FA_DPI) over the tile's keys. n_split == 1 writes dst (the sink
 * added, divided by S); otherwise each split writes (M, S, acc) to the work memory and
 * ct_flash_attn_reduce_f32 merges them (the one-token decode: the keys spread over more
 * work-groups). */

#define FA_NX 64
#define FA_QB 8
#define FA_DPI 8 /* output dims per work-item: Dv <= FA_NX * FA_DPI */

/* 16 elements of a block type's block at 16*il */
void fa_deq16(int t, const __global uchar *b, int il, float *y) {
    switch (t) {
    case CT_T_Q4_0: ct_deq16_q4_0(b, il, y); break;
    case CT_T_Q4_1: ct_deq16_q4_1(b, il, y); break;
    case CT_T_Q5_0: ct_deq16_q5_0(b, il, y); break;
    case CT_T_Q5_1: ct_deq16_q5_1(b, il, y); break;
    case CT_T_Q8_0: ct_deq16_q8_0(b, il, y); break;
    default: ct_deq16_iq4_nl(b, il, y); break;
    }
}

int fa_is_block(int t) { return t != CT_T_F32 && t != CT_T_F16 && t != CT_T_BF16; }

/* The block bytes of the 32-blocks FLASH_ATTN_EXT takes. */
int fa_block_bytes(int t) {
    switch (t) {
    case CT_T_Q4_0: return 18;
    case CT_T_Q4_1: return 20;
    case CT_T_Q5_0: return 22;
    case CT_T_Q5_1: return 24;
    case CT_T_Q8_0: return 34;
    default: return 18; /* IQ4_NL */
    }
}

/* Element d of a row of type t. */
float fa_elem(int t, const __global uchar *row, int d) {
    if (!fa_is_block(t)) return ct_deq(t, row, d);
    return ct_deq(t, row + (d >> 5) * fa_block_bytes(t), d & 31);
}

/* 32 values of a Q row as ggml-cpu's Q8_0 rounding leaves them (the K types whose dot
 * product takes Q8_0 blocks). */
void fa_round_q8_0(const __global float *x, float *y) {
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float av = fabs(x[j]);
        amax = amax > av ? amax : av;
    }
    const float d = ct_xdiv(amax, 127.0f);
    const float id = d != 0.0f ? ct_div(1.0f, d) : 0.0f;
    const float dh = ct_half_to_float(ct_float_to_half(d));
    for (int j = 0; j < 32; j++) y[j] = ct_xmul((float)as_char((uchar)ct_round_low_byte(x[j] * id)), dh);
}

float fa_slope(const ct_flash_attn_args *a, int h) {
    if (!(a->max_bias > 0.0f)) return 1.0f;
    const int nl2 = a->n_head_log2;
    return h < nl2 ? pow(a->m0, (float)(h + 1)) : pow(a->m1, (float)(2 * (h - nl2) + 1));
}

/* What a row's accumulator is multiplied by at the end, from its max M and sum S: head h's
 * sink (where there are sinks) joins the sum as one more score, then 1/S (0 for a row that
 * took no key). */
float fa_out_factor(const ct_flash_attn_args *a, const __global uchar *sinks, ulong offs, int h, float M, float S) {
    float ms = 1.0f;
    if (a->has_sinks) {
        const float sk = *(const __global float *)(sinks + offs + (ulong)h * a->nbs0);
        float vs = 1.0f;
        if (sk > M) ms = exp(M - sk);
        else vs = exp(sk - M);
        S = S * ms + vs;
    }
    return ms * (S == 0.0f ? 0.0f : 1.0f / S);
}

__kernel void ct_flash_attn_ext_f32(__global const uchar *q, ulong offq, __global const uchar *k, ulong offk,
                                    __global const uchar *v, ulong offv, __global const uchar *mask, ulong offm,
                                    __global const uchar *sinks, ulong offs, __global uchar *dst, ulong offd,
                                    __global float *part, ulong offp, const ct_flash_attn_args a,
                                    __local float *lq, __local float *ls) {
    const int lid = get_local_id(0);
    const int i1 = get_group_id(0) * a.qb, h = get_group_id(1);
    const int i3 = get_group_id(2) / a.n_split, split = get_group_id(2) % a.n_split;
    const int nr = min(a.qb, a.n_q - i1);
    const int dk = a.dk, dv = a.dv;
    __local float *lM = ls + FA_QB * FA_NX, *lS = lM + FA_QB, *lms = lS + FA_QB;
    __local int *lvalid = (__local int *)(lms + FA_QB);

    /* Q rows, rounded */
    const __global uchar *qb = q + offq + (ulong)h * a.nbq2 + (ulong)i3 * a.nbq3;
    if (a.q_round == 3) {
        const int nblk = dk / 32;
        for (int idx = lid; idx < nr * nblk; idx += FA_NX) {
            const int r = idx / nblk, b = idx % nblk;
            float y[32];
            fa_round_q8_0((const __global float *)(qb + (ulong)(i1 + r) * a.nbq1) + 32 * b, y);
            for (int j = 0; j < 32; j++) lq[r * dk + 32 * b + j] = y[j];
        }
    } else {
        for (int idx = lid; idx < nr * dk; idx += FA_NX) {
            const int r = idx / dk, e = idx % dk;
            float x = ((const __global float *)(qb + (ulong)(i1 + r) * a.nbq1))[e];
            if (a.q_round == 1) x = ct_half_to_float(ct_float_to_half(x));
            else if (a.q_round == 2) x = ct_bf16_to_float(ct_float_to_bf16(x));
            lq[r * dk + e] = x;
        }
    }
    if (lid < FA_QB) {
        lM[lid] = -INFINITY;
        lS[lid] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const float slope = fa_slope(&a, h);
    const __global uchar *kb = k + offk + (ulong)(h / a.rk2) * a.nbk2 + (ulong)i3 * a.nbk3;
    const __global uchar *vb = v + offv + (ulong)(h / a.rv2) * a.nbv2 + (ulong)i3 * a.nbv3;
    const __global uchar *mb = mask + offm + (ulong)(h % a.nem2) * a.nbm2 + (ulong)(i3 % a.nem3) * a.nbm3;
    const int kt = a.k_type, vt = a.v_type;

    float acc[FA_QB][FA_DPI];
    for (int r = 0; r < FA_QB; r++)
        for (int i = 0; i < FA_DPI; i++) acc[r][i] = 0.0f;

    const int j_begin = split * a.chunk, j_end = min(a.n_kv, j_begin + a.chunk);
    for (int j0 = j_begin; j0 < j_end; j0 += FA_NX) {
        const int cnt = min(FA_NX, j_end - j0);
        const int j = j0 + lid;
        float mv[FA_QB];
        int any = 0;
        for (int r = 0; r < FA_QB; r++) {
            mv[r] = -INFINITY;
            if (r < nr && lid < cnt) {
                mv[r] = a.has_mask ? slope * ct_ld_f16(mb + (ulong)(i1 + r) * a.nbm1 + 2 * (ulong)j) : 0.0f;
                any |= mv[r] != -INFINITY;
            }
        }
        float s[FA_QB];
        for (int r = 0; r < FA_QB; r++) s[r] = 0.0f;
        if (any) {
            const __global uchar *kr = kb + (ulong)j * a.nbk1;
            if (fa_is_block(kt)) {
                const int bb = fa_block_bytes(kt);
                for (int e = 0; e < dk; e += 16) {
                    float y[16];
                    fa_deq16(kt, kr + (e >> 5) * bb, (e >> 4) & 1, y);
                    for (int r = 0; r < FA_QB; r++) {
                        if (r >= nr) break;
                        const __local float *qr = lq + r * dk + e;
                        float t = s[r];
                        for (int l = 0; l < 16; l++) t = fma(qr[l], y[l], t);
                        s[r] = t;
                    }
                }
            } else {
                for (int e = 0; e < dk; e++) {
                    const float y = ct_deq(kt, kr, e);
                    for (int r = 0; r < FA_QB; r++) {
                        if (r >= nr) break;
                        s[r] = fma(lq[r * dk + e], y, s[r]);
                    }
                }
            }
        }
        for (int r = 0; r < FA_QB; r++) {
            if (r >= nr) break;
            float x = -INFINITY;
            if (mv[r] != -INFINITY) {
                x = s[r] * a.scale;
                if (a.softcap != 0.0f) x = a.softcap * tanh(x);
                x += mv[r];
            }
            ls[r * FA_NX + lid] = x;
        }
        lvalid[lid] = any;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < nr) {
            __local float *row = ls + lid * FA_NX;
            float tmax = -INFINITY;
            for (int i = 0; i < cnt; i++) tmax = fmax(tmax, row[i]);
            const float Mold = lM[lid], Mnew = fmax(Mold, tmax);
            float ms = 1.0f, sum = 0.0f;
            if (Mnew != -INFINITY) {
                ms = exp(Mold - Mnew);
                for (int i = 0; i < cnt; i++) {
                    const float p = row[i] == -INFINITY ? 0.0f : exp(row[i] - Mnew);
                    row[i] = p;
                    sum += p;
                }
            } else {
                for (int i = 0; i < cnt; i++) row[i] = 0.0f;
            }
            lM[lid] = Mnew;
            lS[lid] = lS[lid] * ms + sum;
            lms[lid] = ms;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = 0; i < FA_DPI; i++) {
            const int d = lid + FA_NX * i;
            if (d >= dv) break;
            for (int r = 0; r < FA_QB; r++) {
                if (r >= nr) break;
                acc[r][i] *= lms[r];
            }
            for (int jj = 0; jj < cnt; jj++) {
                if (!lvalid[jj]) continue;
                const float y = fa_elem(vt, vb + (ulong)(j0 + jj) * a.nbv1, d);
                for (int r = 0; r < FA_QB; r++) {
                    if (r >= nr) break;
                    acc[r][i] = fma(ls[r * FA_NX + jj], y, acc[r][i]);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (a.n_split > 1) {
        /* partial row (i3, h, i1 + r) of this split: [M, S, acc[dv]] */
        for (int r = 0; r < nr; r++) {
            const ulong row = ((ulong)(i3 * a.n_head + h) * a.n_q + (ulong)(i1 + r)) * a.n_split + split;
            __global float *p = part + offp / 4 + row * (ulong)(2 + dv);
            if (lid == 0) {
                p[0] = lM[r];
                p[1] = lS[r];
            }
            for (int i = 0; i < FA_DPI; i++) {
                const int d = lid + FA_NX * i;
                if (d < dv) p[2 + d] = acc[r][i];
            }
        }
        return;
    }
    if (lid < nr) lms[lid] = fa_out_factor(&a, sinks, offs, h, lM[lid], lS[lid]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < nr; r++) {
        __global float *out = (__global float *)(dst + offd + (ulong)h * a.nb1 + (ulong)(i1 + r) * a.nb2 +
                                                 (ulong)i3 * a.nb3);
        const float f = lms[r];
        for (int i = 0; i < FA_DPI; i++) {
            const int d = lid + FA_NX * i;
            if (d < dv) out[d] = acc[r][i] * f;
        }
    }
}

/* Work-group (i1, h, i3) of FA_NX work-items merges that row's n_split partials as ggml-cpu's
 * split-kv reduction, adds the sink and writes dst. */
__kernel void ct_flash_attn_reduce_f32(__global const float *part, ulong offp, __global const uchar *sinks,
                                       ulong offs, __global uchar *dst, ulong offd, const ct_flash_attn_args a) {
    const int lid = get_local_id(0), i1 = get_group_id(0), h = get_group_id(1), i3 = get_group_id(2);
    const int dv = a.dv;
    const ulong row0 = ((ulong)(i3 * a.n_head + h) * a.n_q + (ulong)i1) * a.n_split;
    const __global float *p0 = part + offp / 4 + row0 * (ulong)(2 + dv);
    float M = -INFINITY, S = 0.0f;
    float acc[FA_DPI];
    for (int i = 0; i < FA_DPI; i++) acc[i] = 0.0f;
    for (int c = 0; c < a.n_split; c++) {
        const __global float *p = p0 + (ulong)c * (ulong)(2 + dv);
        const float Mc = p[0], Sc = p[1];
        if (Sc == 0.0f) continue;
        const float Mn = fmax(M, Mc), so = exp(M - Mn), sn = exp(Mc - Mn);
        for (int i = 0; i < FA_DPI; i++) {
            const int d = lid + FA_NX * i;
            if (d < dv) acc[i] = acc[i] * so + p[2 + d] * sn;
        }
        S = S * so + Sc * sn;
        M = Mn;
    }
    const float f = fa_out_factor(&a, sinks, offs, h, M, S);
    __global float *out = (__global float *)(dst + offd + (ulong)h * a.nb1 + (ulong)i1 * a.nb2 + (ulong)i3 * a.nb3);
    for (int i = 0; i < FA_DPI; i++) {
        const int d = lid + FA_NX * i;
        if (d < dv) out[d] = acc[i] * f;
    }
}
