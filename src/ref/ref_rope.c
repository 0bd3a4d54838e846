/* ROPE (NORMAL, NEOX, MROPE, IMROPE, VISION) on F32 and F16, written out plainly from
 * ggml's definition: per token the angles of its pairs (theta multiplied by
 * theta_scale pair by pair, YaRN's ramp), then each row's pairs rotated; the
 * dims outside the rotated window copied. Rows go through float. */
#include "ref/ref_ops.h"
#include "tensor/tensor_internal.h"

#include <math.h>
#include <string.h>

bool ct_ref_rope_supported(const ct_tensor *op) { return ct_rope_node_valid(op); }

static float pf(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

static float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 * logf(base));
}

/* Angle of pair k of a token, before YaRN (the multi-section modes pick one of four
 * positions per pair, each with its own running theta). */
static void thetas(const ct_tensor *dst, const int32_t p[4], int64_t npairs, float *theta) {
    const int n_dims = dst->op_params[1], mode = dst->op_params[2];
    const float ts = powf(pf(dst, 5), -2.0f / n_dims);
    if (!(mode & CT_ROPE_TYPE_MROPE)) {
        float th = (float)p[0];
        for (int64_t k = 0; k < npairs; k++, th *= ts) theta[k] = th;
        return;
    }
    const int32_t *s = &dst->op_params[11];
    const int sect_dims = s[0] + s[1] + s[2] + s[3], sec_w = s[0] + s[1], sec_e = sec_w + s[2];
    const bool vision = mode == CT_ROPE_TYPE_VISION, imrope = mode == CT_ROPE_TYPE_IMROPE;
    const float base[4] = {(float)p[0], (float)p[1], (float)p[2], (float)p[3]};
    float th[4] = {base[0], base[1], base[2], base[3]}; /* t, h, w, e */
    for (int64_t k = 0; k < npairs; k++) {
        const int sector = (int)(k % sect_dims);
        if (vision) { /* each section starts its own count */
            if (sector == 0) th[0] = base[0];
            else if (sector == s[0]) th[1] = base[1];
            else if (sector == sec_w) th[2] = base[2];
            else if (sector == sec_e) th[3] = base[3];
        }
        int w;
        if (imrope) {
            if (sector % 3 == 1 && sector < 3 * s[1]) w = 1;
            else if (sector % 3 == 2 && sector < 3 * s[2]) w = 2;
            else if (sector % 3 == 0 && sector < 3 * s[0]) w = 0;
            else w = 3;
        } else {
            if (sector >= s[0] && sector < sec_w) w = 1;
            else if (sector >= sec_w && sector < sec_w + s[2]) w = 2;
            else if (sector >= sec_w + s[2]) w = 3;
            else w = 0;
        }
        theta[k] = th[w];
        for (int j = 0; j < 4; j++) th[j] *= ts;
    }
}

ct_status ct_ref_rope(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1], *c = dst->src[2];
    const int64_t ne0 = a->ne[0];
    const int n_dims = dst->op_params[1], mode = dst->op_params[2], n_ctx_orig = dst->op_params[4];
    const int n_offs = dst->op_params[15];
    const float freq_base = pf(dst, 5), freq_scale = pf(dst, 6), ext_factor = pf(dst, 7);
    const float attn_factor = pf(dst, 8), beta_fast = pf(dst, 9), beta_slow = pf(dst, 10);
    const bool vision = mode == CT_ROPE_TYPE_VISION, multi = (mode & CT_ROPE_TYPE_MROPE) != 0;
    const int64_t npairs = vision ? n_dims : n_dims / 2;

    float corr[2];
    corr[0] = fmaxf(0.0f, floorf(corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base)));
    corr[1] = fminf((float)(n_dims - 1), ceilf(corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base)));
    float mscale = attn_factor;
    if (ext_factor != 0.0f) mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);

    float *x = ct_ref_alloc_floats(ne0 > 0 ? ne0 : 1, dst);
    float *theta = x ? ct_ref_alloc_floats(npairs, dst) : NULL;
    if (!theta) {
        ct_free(x);
        return ct_last_status();
    }
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++) {
            int32_t p[4] = {0, 0, 0, 0};
            for (int j = 0; j < (multi ? 4 : 1); j++)
                memcpy(&p[j], (const char *)b->data + (size_t)(i2 + j * a->ne[2]) * b->nb[0], sizeof p[j]);
            thetas(dst, p, npairs, theta);
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                if ((st = ct_ref_read_row(a, i1, i2, i3, x)) != CT_OK) break;
                for (int64_t k = 0; k < npairs; k++) {
                    float ff = 1.0f;
                    if (c) memcpy(&ff, (const char *)c->data + (size_t)k * c->nb[0], sizeof ff);
                    const float th_extrap = theta[k] / ff;
                    const float th_interp = freq_scale * th_extrap;
                    float th = th_interp;
                    if (ext_factor != 0.0f) {
                        const float y = ((float)k - corr[0]) / fmaxf(0.001f, corr[1] - corr[0]);
                        const float ramp = (1 - fminf(1, fmaxf(0, y))) * ext_factor;
                        th = th_interp * (1 - ramp) + th_extrap * ramp;
                    }
                    const float cos_t = cosf(th) * mscale, sin_t = sinf(th) * mscale;
                    int64_t j0, j1;
                    if (mode == CT_ROPE_TYPE_NORMAL) j0 = n_offs + 2 * k, j1 = j0 + 1;
                    else if (vision) j0 = k, j1 = k + n_dims;
                    else j0 = n_offs + k, j1 = j0 + n_dims / 2;
                    const float x0 = x[j0], x1 = x[j1];
                    x[j0] = x0 * cos_t - x1 * sin_t;
                    x[j1] = x0 * sin_t + x1 * cos_t;
                }
                st = ct_ref_write_row(dst, i1, i2, i3, x);
            }
        }
    ct_free(x);
    ct_free(theta);
    return st;
}
