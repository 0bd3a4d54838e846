/* ct-ops tensor contents: random inputs in every format, and reading results back as floats. */
#include "ct_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put_f16(uint8_t *p, float x) {
    ct_fp16 h = ct_fp32_to_fp16(x);
    p[0] = (uint8_t)(h & 0xFF);
    p[1] = (uint8_t)(h >> 8);
}

/* Formats without a quantizer get random bytes with their scale fields made
 * small and finite (offsets from docs/QUANTIZATION.md, Block layouts), so dequantized values are sane. */
static void fix_block_scales(ct_type type, uint8_t *blk, cto_rng *rng) {
    float d = cto_rng_float(rng, -0.01f, 0.01f), dm = cto_rng_float(rng, 0.0f, 0.01f);
    switch (type) {
    case CT_TYPE_Q2_K: put_f16(blk + 80, d); put_f16(blk + 82, dm); break;
    case CT_TYPE_Q3_K: put_f16(blk + 108, d); break;
    case CT_TYPE_Q4_K: case CT_TYPE_Q5_K: put_f16(blk, d); put_f16(blk + 2, dm); break;
    case CT_TYPE_Q6_K: put_f16(blk + 208, d); break;
    case CT_TYPE_Q8_K: memcpy(blk, &d, sizeof d); break;
    case CT_TYPE_Q8_1: put_f16(blk, d); put_f16(blk + 2, d); break;
    case CT_TYPE_IQ1_M: break; /* its scale hides in the scale nibbles: random bits are finite */
    case CT_TYPE_TQ1_0: put_f16(blk + 52, d); break;
    case CT_TYPE_TQ2_0: put_f16(blk + 64, d); break;
    default: put_f16(blk, d); break; /* the other IQ formats start with d */
    }
}

void cto_fill_uniform(ct_type type, int64_t n, float lo, float hi, cto_rng *rng, uint8_t *dst) {
    if (n <= 0) return;
    switch (type) {
    case CT_TYPE_F32: {
        for (int64_t i = 0; i < n; i++) {
            float x = cto_rng_float(rng, lo, hi);
            memcpy(dst + 4 * i, &x, 4);
        }
        return;
    }
    case CT_TYPE_F64:
        for (int64_t i = 0; i < n; i++) {
            double x = cto_rng_float(rng, lo, hi);
            memcpy(dst + 8 * i, &x, 8);
        }
        return;
    case CT_TYPE_I8: case CT_TYPE_I16: case CT_TYPE_I32: case CT_TYPE_I64: {
        size_t sz = ct_type_size(type);
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = cto_rng_u64(rng);
            memcpy(dst + (size_t)i * sz, &v, sz);
        }
        return;
    }
    default:
        break;
    }
    int64_t blck = ct_type_block_size(type);
    size_t bsz = ct_type_size(type);
    /* The 256-element formats keep random bytes with sane scales, as before they had
     * quantizers: their scale searches are slow for large weights, and random levels
     * exercise every code of a dequantizer. */
    if (ct_type_can_quantize(type) && ct_type_block_size(type) <= 32) {
        enum { CHUNK = 1 << 16 };
        float *tmp = cto_xmalloc(sizeof(float) * CHUNK);
        for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
            int64_t cnt = n - i0 < CHUNK ? n - i0 : CHUNK;
            for (int64_t i = 0; i < cnt; i++) tmp[i] = cto_rng_float(rng, lo, hi);
            if (ct_quantize_row(type, tmp, dst + (size_t)(i0 / blck) * bsz, cnt) != CT_OK) {
                fprintf(stderr, "ct-ops: ct_quantize_row(%s) failed: %s\n", ct_type_name(type), ct_last_error());
                memset(dst + (size_t)(i0 / blck) * bsz, 0, (size_t)(cnt / blck) * bsz);
            }
        }
        free(tmp);
        return;
    }
    int64_t nblk = n / blck;
    for (int64_t i = 0; i < nblk; i++) {
        uint8_t *blk = dst + (size_t)i * bsz;
        for (size_t j = 0; j < bsz; j += 8) {
            uint64_t v = cto_rng_u64(rng);
            memcpy(blk + j, &v, bsz - j < 8 ? bsz - j : 8);
        }
        fix_block_scales(type, blk, rng);
    }
}

static void fill_index(const ct_tensor *t, const cto_leaf *leaf, cto_rng *rng, uint8_t *dst) {
    int64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    int64_t m = leaf->m > 0 ? leaf->m : 1;
    int64_t *vals = cto_xmalloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (leaf->init == CTO_INIT_INDEX_PERM) {
        /* each row: a random permutation of 0..m-1 cut to ne0, so targets are unique */
        int64_t *perm = cto_xmalloc(sizeof(int64_t) * (size_t)m);
        int64_t rows = n / (t->ne[0] > 0 ? t->ne[0] : 1);
        for (int64_t r = 0; t->ne[0] > 0 && r < rows; r++) {
            for (int64_t i = 0; i < m; i++) perm[i] = i;
            for (int64_t i = m - 1; i > 0; i--) {
                int64_t j = (int64_t)cto_rng_below(rng, (uint64_t)i + 1);
                int64_t tmp = perm[i];
                perm[i] = perm[j];
                perm[j] = tmp;
            }
            for (int64_t i = 0; i < t->ne[0]; i++) vals[r * t->ne[0] + i] = i < m ? perm[i] : perm[i % m];
        }
        free(perm);
    } else {
        for (int64_t i = 0; i < n; i++) vals[i] = (int64_t)cto_rng_below(rng, (uint64_t)m);
    }
    for (int64_t i = 0; i < n; i++) {
        if (t->type == CT_TYPE_I64) {
            memcpy(dst + 8 * i, &vals[i], 8);
        } else {
            int32_t v = (int32_t)vals[i];
            memcpy(dst + 4 * i, &v, 4);
        }
    }
    free(vals);
}

void cto_fill_tensor(const ct_tensor *t, const cto_leaf *leaf, cto_rng *rng, uint8_t *dst, bool fast) {
    size_t nbytes = ct_nbytes(t);
    int64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    if (!leaf) {
        memset(dst, 0xFF, nbytes);
        return;
    }
    if (leaf->init == CTO_INIT_INDEX_MOD || leaf->init == CTO_INIT_INDEX_PERM) {
        fill_index(t, leaf, rng, dst);
        return;
    }
    if (leaf->init == CTO_INIT_EDGE && (t->type == CT_TYPE_F32 || t->type == CT_TYPE_F16)) {
        /* one NaN pattern only: an op on two NaNs gives the same bits whichever comes first */
        static const uint32_t edge[] = {
            0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x00000001u, 0x806D4E1Fu,
            0x477FE000u /* 65504 */, 0x47A00000u /* 81920 */, 0x7E967699u /* 1e38 */, 0x33800000u /* 2^-24 */,
        };
        cto_fill_uniform(t->type, n, leaf->lo, leaf->hi, rng, dst);
        const size_t sz = ct_type_size(t->type);
        for (int64_t i = 0; i < n; i++) {
            if (cto_rng_below(rng, 8) != 0) continue;
            const uint32_t u = edge[cto_rng_below(rng, sizeof edge / sizeof edge[0])];
            float v;
            memcpy(&v, &u, sizeof v);
            if (t->type == CT_TYPE_F16) put_f16(dst + (size_t)i * sz, v);
            else memcpy(dst + (size_t)i * sz, &v, sizeof v);
        }
        return;
    }
    if (leaf->init == CTO_INIT_MASK) {
        /* F32 or F16, contiguous (a new tensor) */
        cto_fill_uniform(t->type, n, leaf->lo, leaf->hi, rng, dst);
        const int64_t ne0 = t->ne[0], rows = ne0 > 0 ? n / ne0 : 0;
        const size_t es = ct_type_size(t->type);
        const float ninf = -INFINITY;
        const uint16_t hinf = 0xFC00u;
        for (int64_t r = 0; r < rows; r++) {
            const int64_t i1 = r % t->ne[1];
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                if (!(i0 > i1 + ne0 / 2 || (leaf->m == 2 && i1 % 3 == 2))) continue;
                uint8_t *p = dst + (size_t)(r * ne0 + i0) * es;
                if (t->type == CT_TYPE_F16) memcpy(p, &hinf, sizeof hinf);
                else memcpy(p, &ninf, sizeof ninf);
            }
        }
        return;
    }
    if (!fast || n <= (1 << 16)) {
        cto_fill_uniform(t->type, n, leaf->lo, leaf->hi, rng, dst);
        return;
    }
    /* perf: a random block of 64K elements repeated (block boundaries stay aligned) */
    int64_t chunk = 1 << 16;
    size_t chunk_bytes = (size_t)(chunk / ct_type_block_size(t->type)) * ct_type_size(t->type);
    cto_fill_uniform(t->type, chunk, leaf->lo, leaf->hi, rng, dst);
    for (size_t off = chunk_bytes; off < nbytes; off += chunk_bytes)
        memcpy(dst + off, dst, nbytes - off < chunk_bytes ? nbytes - off : chunk_bytes);
}

bool cto_tensor_to_float(const ct_tensor *t, const uint8_t *bytes, float *out) {
    int64_t blck = ct_type_block_size(t->type);
    ct_type type = t->type;
    if (blck > 1 && !ct_type_can_dequantize(type)) return false;
    size_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                const uint8_t *row = bytes + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
                if (blck > 1) {
                    for (int64_t i0 = 0; i0 < t->ne[0]; i0 += blck) {
                        if (ct_dequantize_row(type, row + (i0 / blck) * t->nb[0], out + k, blck) != CT_OK) return false;
                        k += (size_t)blck;
                    }
                    continue;
                }
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                    const uint8_t *p = row + i0 * t->nb[0];
                    float v;
                    switch (type) {
                    case CT_TYPE_F32: memcpy(&v, p, 4); break;
                    case CT_TYPE_F16: { ct_fp16 h; memcpy(&h, p, 2); v = ct_fp16_to_fp32(h); break; }
                    case CT_TYPE_BF16: { ct_bf16 h; memcpy(&h, p, 2); v = ct_bf16_to_fp32(h); break; }
                    case CT_TYPE_F64: { double d; memcpy(&d, p, 8); v = (float)d; break; }
                    case CT_TYPE_I8: v = (float)(int8_t)p[0]; break;
                    case CT_TYPE_I16: { int16_t x; memcpy(&x, p, 2); v = (float)x; break; }
                    case CT_TYPE_I32: { int32_t x; memcpy(&x, p, 4); v = (float)x; break; }
                    case CT_TYPE_I64: { int64_t x; memcpy(&x, p, 8); v = (float)x; break; }
                    default: return false;
                    }
                    out[k++] = v;
                }
            }
    return true;
}
