/* ROPE (NORMAL, NEOX, MROPE, IMROPE, VISION) on F32 and F16, as ggml-cpu computes it:
 * rows (ne1·ne2·ne3, heads fastest) split into one contiguous range per thread; each
 * thread fills its cos/sin table in the work memory when the token (i2) changes, with
 * theta multiplied by theta_scale pair by pair and YaRN's ramp; then rotates each
 * row's pairs. Dims outside the rotated window are copied as bytes. Any strides. */
#include "cpu/cpu_ops.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <math.h>
#include <string.h>

bool ct_cpu_rope_supported(const ct_tensor *op) { return ct_rope_node_valid(op); }

/* Pairs with an angle: n_dims/2, or n_dims (ne0/2) for VISION. */
static int64_t rope_pairs(const ct_tensor *dst) {
    const int n_dims = dst->op_params[1];
    return dst->op_params[2] == CT_ROPE_TYPE_VISION ? n_dims : n_dims / 2;
}

/* per thread: cos and sin of every pair, padded to a cache line */
static size_t table_floats(const ct_tensor *dst) { return (size_t)(2 * rope_pairs(dst) + 15) / 16 * 16; }

size_t ct_cpu_rope_work_size(const ct_tensor *dst, int n_threads) {
    return table_floats(dst) * sizeof(float) * (size_t)n_threads;
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

static float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 * logf(base));
}

typedef struct rope_consts {
    int n_dims, mode, n_offs;
    int sections[4];
    float theta_scale, freq_scale, ext_factor, mscale;
    float corr[2];
    const char *ff;   /* freq factors, or NULL */
    size_t ff_stride;
} rope_consts;

static void yarn(const rope_consts *k, float theta_extrap, int64_t pair, float *cos_t, float *sin_t) {
    const float theta_interp = k->freq_scale * theta_extrap;
    float theta = theta_interp;
    if (k->ext_factor != 0.0f) {
        const float y = ((float)pair - k->corr[0]) / fmaxf(0.001f, k->corr[1] - k->corr[0]);
        const float ramp_mix = (1 - fminf(1, fmaxf(0, y))) * k->ext_factor;
        theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
    }
    *cos_t = cosf(theta) * k->mscale;
    *sin_t = sinf(theta) * k->mscale;
}

static float freq_factor(const rope_consts *k, int64_t pair) {
    if (!k->ff) return 1.0f;
    float v;
    memcpy(&v, k->ff + (size_t)pair * k->ff_stride, sizeof v);
    return v;
}

/* cache[2k], cache[2k+1]: cos and sin of pair k for positions p (p[1..3] for the
 * multi-section modes only). */
static void fill_table(const rope_consts *k, const int32_t p[4], int64_t npairs, float *cache) {
    if (!(k->mode & CT_ROPE_TYPE_MROPE)) {
        float theta = (float)p[0];
        for (int64_t i = 0; i < npairs; i++) {
            yarn(k, theta / freq_factor(k, i), i, &cache[2 * i], &cache[2 * i + 1]);
            theta *= k->theta_scale;
        }
        return;
    }
    const int *s = k->sections;
    const int sect_dims = s[0] + s[1] + s[2] + s[3], sec_w = s[0] + s[1], sec_e = sec_w + s[2];
    const bool vision = k->mode == CT_ROPE_TYPE_VISION, imrope = k->mode == CT_ROPE_TYPE_IMROPE;
    const float base[4] = {(float)p[0], (float)p[1], (float)p[2], (float)p[3]};
    float th[4] = {base[0], base[1], base[2], base[3]};
    for (int64_t i = 0; i < npairs; i++) {
        const int sector = (int)(i % sect_dims);
        if (vision) {
            if (sector == 0) th[0] = base[0];
            else if (sector == s[0]) th[1] = base[1];
            else if (sector == sec_w) th[2] = base[2];
            else if (sector == sec_e) th[3] = base[3];
        }
        int w = 0;
        if (imrope) {
            if (sector % 3 == 1 && sector < 3 * s[1]) w = 1;
            else if (sector % 3 == 2 && sector < 3 * s[2]) w = 2;
            else if (sector % 3 == 0 && sector < 3 * s[0]) w = 0;
            else w = 3;
        } else if (sector >= s[0] && sector < sec_w) w = 1;
        else if (sector >= sec_w && sector < sec_w + s[2]) w = 2;
        else if (sector >= sec_w + s[2]) w = 3;
        yarn(k, th[w] / freq_factor(k, i), i, &cache[2 * i], &cache[2 * i + 1]);
        for (int j = 0; j < 4; j++) th[j] *= k->theta_scale;
    }
}


/* The packed F32 rotations (the decode case): the same arithmetic in loops of fixed
 * strides, which the compiler vectorizes; y may be x. Compiled a second time for AVX2,
 * picked where the CPU has it: the same operations per element, so the same bytes. */
#define CT_ROPE_LOOPS_AS(name, ATTR)                                                                  \
    ATTR static void name##_adjacent(const float *cache, int64_t npairs, const float *xf, float *yf) {  \
        for (int64_t i = 0; i < npairs; i++) {                                                       \
            const float c = cache[2 * i], s = cache[2 * i + 1], x0 = xf[2 * i], x1 = xf[2 * i + 1];  \
            yf[2 * i] = x0 * c - x1 * s;                                                             \
            yf[2 * i + 1] = x0 * s + x1 * c;                                                         \
        }                                                                                            \
    }                                                                                                \
    ATTR static void name##_apart(const float *cache, int64_t npairs, int64_t dist, const float *xf, \
                                  float *yf) {                                                       \
        for (int64_t i = 0; i < npairs; i++) {                                                       \
            const float c = cache[2 * i], s = cache[2 * i + 1], x0 = xf[i], x1 = xf[i + dist];       \
            yf[i] = x0 * c - x1 * s;                                                                 \
            yf[i + dist] = x0 * s + x1 * c;                                                          \
        }                                                                                            \
    }
CT_ROPE_LOOPS_AS(rot, )
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define CT_ROPE_AVX2 1
CT_ROPE_LOOPS_AS(rot_avx2, __attribute__((target("avx2"))))
#endif

/* Rotates the pairs of one row: pair i is elements (j0, j1) of the mode. */
static void rotate_row(const rope_consts *k, const float *cache, int64_t npairs, const char *x, size_t sx, char *y,
                       size_t sy, bool f16) {
    int64_t step0, first, dist; /* pair i: j0 = first + i·step0, j1 = j0 + dist */
    if (k->mode == CT_ROPE_TYPE_NORMAL) first = k->n_offs, step0 = 2, dist = 1;
    else if (k->mode == CT_ROPE_TYPE_VISION) first = 0, step0 = 1, dist = k->n_dims;
    else first = k->n_offs, step0 = 1, dist = k->n_dims / 2;
    if (!f16 && sx == sizeof(float) && sy == sizeof(float) && (((uintptr_t)x | (uintptr_t)y) % sizeof(float)) == 0) {
        const float *xf = (const float *)(const void *)x + first;
        float *yf = (float *)(void *)y + first;
#ifdef CT_ROPE_AVX2
        if (ct_types_use_avx2()) {
            if (step0 == 2) rot_avx2_adjacent(cache, npairs, xf, yf);
            else rot_avx2_apart(cache, npairs, dist, xf, yf);
            return;
        }
#endif
        if (step0 == 2) rot_adjacent(cache, npairs, xf, yf);
        else rot_apart(cache, npairs, dist, xf, yf);
        return;
    }
    const ct_type xt = f16 ? CT_TYPE_F16 : CT_TYPE_F32;
    for (int64_t i = 0; i < npairs; i++) {
        const int64_t j0 = first + i * step0, j1 = j0 + dist;
        const float c = cache[2 * i], s = cache[2 * i + 1];
        const float x0 = ct_load_f32_or_f16(xt, x + (size_t)j0 * sx), x1 = ct_load_f32_or_f16(xt, x + (size_t)j1 * sx);
        ct_store_f32_or_f16(xt, y + (size_t)j0 * sy, x0 * c - x1 * s);
        ct_store_f32_or_f16(xt, y + (size_t)j1 * sy, x0 * s + x1 * c);
    }
}

void ct_cpu_rope(const ct_cpu_params *params, ct_tensor *dst) {
    CT_ASSERT(ct_cpu_rope_supported(dst));
    const ct_tensor *a = dst->src[0], *b = dst->src[1], *c = dst->src[2];
    const int64_t ne0 = a->ne[0], ne1 = a->ne[1], ne2 = a->ne[2], ne3 = a->ne[3];
    const bool f16 = a->type == CT_TYPE_F16;
    const size_t ts = f16 ? 2 : 4;
    rope_consts k = {
        .n_dims = dst->op_params[1], .mode = dst->op_params[2], .n_offs = dst->op_params[15],
        .freq_scale = param_f32(dst, 6), .ext_factor = param_f32(dst, 7), .mscale = param_f32(dst, 8),
        .ff = c ? (const char *)c->data : NULL, .ff_stride = c ? c->nb[0] : 0,
    };
    memcpy(k.sections, &dst->op_params[11], sizeof k.sections);
    const int n_ctx_orig = dst->op_params[4];
    const float freq_base = param_f32(dst, 5), beta_fast = param_f32(dst, 9), beta_slow = param_f32(dst, 10);
    k.theta_scale = powf(freq_base, -2.0f / k.n_dims);
    k.corr[0] = fmaxf(0.0f, floorf(corr_dim(k.n_dims, n_ctx_orig, beta_fast, freq_base)));
    k.corr[1] = fminf((float)(k.n_dims - 1), ceilf(corr_dim(k.n_dims, n_ctx_orig, beta_slow, freq_base)));
    if (k.ext_factor != 0.0f) k.mscale *= 1.0f + 0.1f * logf(1.0f / k.freq_scale);

    const bool multi = (k.mode & CT_ROPE_TYPE_MROPE) != 0, vision = k.mode == CT_ROPE_TYPE_VISION;
    const int64_t npairs = rope_pairs(dst);
    /* the copied dims: [0, n_offs) and [n_offs + n_dims, ne0); VISION rotates all */
    const int64_t win0 = vision ? 0 : k.n_offs, win1 = vision ? ne0 : k.n_offs + k.n_dims;

    const int64_t nr = ne1 * ne2 * ne3;
    const int64_t dr = (nr + params->nth - 1) / params->nth;
    const int64_t ir0 = dr * params->ith, ir1 = ir0 + dr < nr ? ir0 + dr : nr;
    float *cache = (float *)params->wdata + table_floats(dst) * (size_t)params->ith;
    int64_t last = -1;
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);
        if (i2 != last) {
            int32_t p[4] = {0, 0, 0, 0};
            for (int j = 0; j < (multi ? 4 : 1); j++)
                memcpy(&p[j], (const char *)b->data + (size_t)(i2 + j * ne2) * b->nb[0], sizeof p[j]);
            fill_table(&k, p, npairs, cache);
            last = i2;
        }
        const char *x = (const char *)a->data + i1 * a->nb[1] + i2 * a->nb[2] + i3 * a->nb[3];
        char *y = (char *)dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        rotate_row(&k, cache, npairs, x, a->nb[0], y, dst->nb[0], f16);
        if (x != y || a->nb[0] != dst->nb[0]) {
            for (int64_t i0 = 0; i0 < win0; i0++) memcpy(y + (size_t)i0 * dst->nb[0], x + (size_t)i0 * a->nb[0], ts);
            for (int64_t i0 = win1; i0 < ne0; i0++) memcpy(y + (size_t)i0 * dst->nb[0], x + (size_t)i0 * a->nb[0], ts);
        }
    }
}
