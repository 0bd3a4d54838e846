/* ADD, SUB, MUL, DIV, ADD1: dst = src0 op src1 with src1 repeated, computed in float and
 * rounded to dst's type, threaded over dst's rows. All-F32 rows of unit stride take one
 * pass of vectorized loops over the src1 row (the broadcast rows of transformer graphs,
 * [n, rows] op [n, 1]), with non-temporal stores for outputs past the caches (stream.h);
 * anything else goes through float chunks. */
#include "cpu/cpu_ops.h"
#include "cpu/stream.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <string.h>

bool ct_cpu_binary_supported(const ct_tensor *op) { return ct_binary_node_valid(op); }

/* z = x op y over n packed floats, and z = x op s with a scalar s. z may be x. The same
 * loops are compiled a second time for AVX2 (8 floats a step instead of SSE's 4), picked
 * where the CPU has it: one IEEE operation per element either way, so the bytes agree. */
#define CT_BIN_LOOPS_AS(name, OP, ATTR)                                                              \
    ATTR static void name##_vv(float *z, const float *x, const float *y, int64_t n) {             \
        for (int64_t i = 0; i < n; i++) z[i] = x[i] OP y[i];                                        \
    }                                                                                             \
    ATTR static void name##_vs(float *z, const float *x, float s, int64_t n) {                    \
        for (int64_t i = 0; i < n; i++) z[i] = x[i] OP s;                                           \
    }                                                                                             \
    ATTR static void name##_ii(float *z, const float *y, int64_t n) { /* in place: z = z op y */ \
        for (int64_t i = 0; i < n; i++) z[i] = z[i] OP y[i];                                        \
    }
#define CT_BIN_PLAIN
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define CT_BIN_AVX2 1
#define CT_BIN_LOOPS(name, OP)                     \
    CT_BIN_LOOPS_AS(name, OP, CT_BIN_PLAIN)        \
    CT_BIN_LOOPS_AS(name##_avx2, OP, __attribute__((target("avx2"))))
#else
#define CT_BIN_LOOPS(name, OP) CT_BIN_LOOPS_AS(name, OP, CT_BIN_PLAIN)
#endif
CT_BIN_LOOPS(add, +)
CT_BIN_LOOPS(sub, -)
CT_BIN_LOOPS(mul, *)
CT_BIN_LOOPS(div, /)

typedef struct bin_fns {
    void (*vv)(float *, const float *, const float *, int64_t);
    void (*vs)(float *, const float *, float, int64_t);
    void (*ii)(float *, const float *, int64_t);
} bin_fns;

static bin_fns fns_for(ct_op op) {
#ifdef CT_BIN_AVX2
    if (ct_types_use_avx2()) {
        switch (op) {
        case CT_OP_SUB: return (bin_fns){sub_avx2_vv, sub_avx2_vs, sub_avx2_ii};
        case CT_OP_MUL: return (bin_fns){mul_avx2_vv, mul_avx2_vs, mul_avx2_ii};
        case CT_OP_DIV: return (bin_fns){div_avx2_vv, div_avx2_vs, div_avx2_ii};
        default: return (bin_fns){add_avx2_vv, add_avx2_vs, add_avx2_ii};
        }
    }
#endif
    switch (op) {
    case CT_OP_SUB: return (bin_fns){sub_vv, sub_vs, sub_ii};
    case CT_OP_MUL: return (bin_fns){mul_vv, mul_vs, mul_ii};
    case CT_OP_DIV: return (bin_fns){div_vv, div_vs, div_ii};
    default: return (bin_fns){add_vv, add_vs, add_ii};
    }
}

enum { CHUNK = 256 };

/* n elements of t from p (elements nb bytes apart) as floats: packed rows through the row
 * converters (AVX2/F16C where the CPU has them), anything else one element at a time. */
static void to_floats(ct_type t, const char *p, size_t nb, float *out, int64_t n) {
    if (nb == ct_type_size(t) && (uintptr_t)p % nb == 0) {
        if (t == CT_TYPE_F16) ct_fp16_to_fp32_row((const ct_fp16 *)(const void *)p, out, n);
        else memcpy(out, p, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t k = 0; k < n; k++) out[k] = ct_load_f32_or_f16(t, p + (size_t)k * nb);
}

static void from_floats(ct_type t, char *p, size_t nb, const float *in, int64_t n) {
    if (nb == ct_type_size(t) && (uintptr_t)p % nb == 0) {
        if (t == CT_TYPE_F16) ct_fp32_to_fp16_row(in, (ct_fp16 *)(void *)p, n);
        else memcpy(p, in, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t k = 0; k < n; k++) ct_store_f32_or_f16(t, p + (size_t)k * nb, in[k]);
}

/* One row of any types and strides, CHUNK elements at a time through float buffers. */
static void row_general(const bin_fns *f, const ct_tensor *a, const ct_tensor *b, const ct_tensor *d,
                        const char *x, const char *y, char *z) {
    float xb[CHUNK], yb[CHUNK];
    const int64_t ne0 = a->ne[0], ne10 = b->ne[0];
    const size_t nb00 = a->nb[0], nb10 = b->nb[0], nb0 = d->nb[0];
    int64_t i10 = 0;
    for (int64_t i0 = 0; i0 < ne0; i0 += CHUNK) {
        const int64_t n = ne0 - i0 < CHUNK ? ne0 - i0 : CHUNK;
        to_floats(a->type, x + (size_t)i0 * nb00, nb00, xb, n);
        for (int64_t k = 0; k < n;) { /* src1's row from i10 on, wrapping at ne10 */
            const int64_t m = n - k < ne10 - i10 ? n - k : ne10 - i10;
            to_floats(b->type, y + (size_t)i10 * nb10, nb10, yb + k, m);
            k += m;
            i10 += m;
            if (i10 == ne10) i10 = 0;
        }
        f->vv(xb, xb, yb, n);
        from_floats(d->type, z + (size_t)i0 * nb0, nb0, xb, n);
    }
}

/* One all-F32 row of unit strides: src1's row (ne10 floats) applied ne0/ne10 times. */
static void row_f32(const bin_fns *f, int64_t ne0, int64_t ne10, const float *x, const float *y, float *z) {
    if (ne10 == 1) {
        f->vs(z, x, y[0], ne0);
        return;
    }
    for (int64_t r = 0; r < ne0; r += ne10) {
        if (z == x) f->ii(z + r, y, ne10);
        else f->vv(z + r, x + r, y, ne10);
    }
}

/* row_f32 for outputs past the caches (stream.h): CT_CPU_STREAM_FLOATS results at a time
 * into an L1 buffer, streamed out with non-temporal stores. z is 16-byte aligned. */
static void row_f32_stream(const bin_fns *f, int64_t ne0, int64_t ne10, const float *x, const float *y, float *z) {
    float buf[CT_CPU_STREAM_FLOATS], yb[CT_CPU_STREAM_FLOATS];
    int64_t i10 = 0;
    for (int64_t i0 = 0; i0 < ne0; i0 += CT_CPU_STREAM_FLOATS) {
        const int64_t n = ne0 - i0 < CT_CPU_STREAM_FLOATS ? ne0 - i0 : CT_CPU_STREAM_FLOATS;
        if (ne10 == 1) {
            f->vs(buf, x + i0, y[0], n);
        } else if (ne10 == ne0) {
            f->vv(buf, x + i0, y + i0, n);
        } else {
            for (int64_t k = 0; k < n;) {
                const int64_t m = n - k < ne10 - i10 ? n - k : ne10 - i10;
                memcpy(yb + k, y + i10, (size_t)m * sizeof(float));
                k += m;
                i10 += m;
                if (i10 == ne10) i10 = 0;
            }
            f->vv(buf, x + i0, yb, n);
        }
        const size_t bytes = (size_t)n * sizeof(float), whole = bytes & ~(size_t)15;
        ct_cpu_stream_copy(z + i0, buf, whole);
        if (whole < bytes) memcpy((char *)(z + i0) + whole, (const char *)buf + whole, bytes - whole);
    }
}

static bool unit_f32(const ct_tensor *t) {
    return t->type == CT_TYPE_F32 && t->nb[0] == sizeof(float) &&
           ((uintptr_t)t->data | t->nb[1] | t->nb[2] | t->nb[3]) % _Alignof(float) == 0;
}

void ct_cpu_binary(const ct_cpu_params *params, ct_tensor *dst) {
    CT_ASSERT(ct_cpu_binary_supported(dst));
    if (ct_is_empty(dst)) return;
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const bin_fns f = fns_for(dst->op);
    const int64_t ne0 = a->ne[0], ne1 = a->ne[1], ne2 = a->ne[2];
    const int64_t ne10 = b->ne[0], ne11 = b->ne[1], ne12 = b->ne[2], ne13 = b->ne[3];
    const bool fast = unit_f32(a) && unit_f32(b) && unit_f32(dst);
    /* every row of a large output starts 16-byte aligned and never is src0 itself */
    const bool stream = fast && ct_nbytes(dst) >= CT_CPU_STREAM_MIN_BYTES && dst->data != a->data &&
                        ((uintptr_t)dst->data | dst->nb[1] | dst->nb[2] | dst->nb[3]) % 16 == 0 &&
                        ct_cpu_stream_ok(dst->data);

    int64_t r0, r1;
    ct_cpu_split(ct_nrows(a), params, &r0, &r1);
    /* dst's row i and src1's (j1, j2, j3), stepped without divisions (src1's dims divide dst's,
     * so j wraps whenever i does) */
    ct_cpu_row i = ct_cpu_row_at(r0, ne1, ne2);
    int64_t j1 = ne11 == 1 ? 0 : i.i1 % ne11, j2 = ne12 == 1 ? 0 : i.i2 % ne12, j3 = ne13 == 1 ? 0 : i.i3 % ne13;
    for (int64_t r = r0; r < r1; r++) {
        const char *x = (const char *)a->data + (size_t)i.i1 * a->nb[1] + (size_t)i.i2 * a->nb[2] + (size_t)i.i3 * a->nb[3];
        const char *y = (const char *)b->data + (size_t)j1 * b->nb[1] + (size_t)j2 * b->nb[2] + (size_t)j3 * b->nb[3];
        char *z = (char *)dst->data + (size_t)i.i1 * dst->nb[1] + (size_t)i.i2 * dst->nb[2] + (size_t)i.i3 * dst->nb[3];
        const float *xf = (const float *)(const void *)x, *yf = (const float *)(const void *)y;
        if (stream) row_f32_stream(&f, ne0, ne10, xf, yf, (float *)(void *)z);
        else if (fast) row_f32(&f, ne0, ne10, xf, yf, (float *)(void *)z);
        else row_general(&f, a, b, dst, x, y, z);
        switch (ct_cpu_row_next(&i, ne1, ne2)) {
        case CT_CPU_ROW_I1:
            if (++j1 == ne11) j1 = 0;
            break;
        case CT_CPU_ROW_I2:
            j1 = 0;
            if (++j2 == ne12) j2 = 0;
            break;
        default:
            j1 = j2 = 0;
            if (++j3 == ne13) j3 = 0;
            break;
        }
    }
    if (stream) ct_cpu_stream_fence();
}
